#!/usr/bin/env bash
# bench_sentinel.sh — what Sentinel mode's WAIT costs the event log (docs/benchmarks.md "Redis
# Sentinel failover"): bench_evlog against one primary with one replica, alternately straight to
# the primary (host:port: an event stored once the primary confirms it) and through a sentinel
# (sentinel://: stored once WAIT 1 says the replica has it too). Loopback only, no passwords;
# stops what it started, by pid.
# usage: bench/bench_sentinel.sh [MODE [EVENTS [ROUNDS]]]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-release}
n=${2:-200000}
rounds=${3:-3}
bin=build/$mode/bench/bench_evlog
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
primary=$(port) replica=$(port) sentinel=$(port)
redis-server --port "$primary" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec \
    --dir "$tmp" --appendfilename p.aof --logfile "$tmp/p.log" & pids+=($!)
redis-server --port "$replica" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec \
    --dir "$tmp" --appendfilename r.aof --replicaof 127.0.0.1 "$primary" --logfile "$tmp/r.log" & pids+=($!)
printf 'port %s\nbind 127.0.0.1\nsentinel monitor m 127.0.0.1 %s 1\n' "$sentinel" "$primary" >"$tmp/s.conf"
redis-server "$tmp/s.conf" --sentinel --logfile "$tmp/s.log" & pids+=($!)
for _ in $(seq 100); do
    redis-cli -p "$replica" INFO replication 2>/dev/null | grep -q master_link_status:up && break
    sleep 0.1
done
for r in $(seq "$rounds"); do
    for addr in "127.0.0.1:$primary" "sentinel://127.0.0.1:$sentinel/m"; do
        printf 'round %s %-34s ' "$r" "$addr"
        "$bin" "$addr" "$n" 2>/dev/null | grep -o '[0-9]* events/s'
    done
done
