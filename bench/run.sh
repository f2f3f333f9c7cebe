#!/usr/bin/env bash
# make bench: executor figures, each next to its reference measured in the same run on this
# machine. Results are printed as markdown; docs/benchmarks.md records a run and how to repeat it.
set -euo pipefail
MODE=${1:-release}
B=build/$MODE
work=$(mktemp -d /tmp/sp-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/ws" "$work/home"
start_executor() { # socket
    HOME="$work/home" "$B/sandpipe-executor" --listen "unix:$1" --workspace "$work/ws" \
        --root "$work" --user root >/dev/null 2>&1 &
    pids+=($!)
    for _ in $(seq 200); do [ -S "$1" ] && return 0; sleep 0.01; done
    echo "executor did not start" >&2; exit 1
}
start_executor "$work/e.sock"
echo "## executor benchmarks ($(date -u +%F), $(nproc) cores, $(uname -r))"
echo
echo '### `echo hi` round trip (run action → observation), 2000 rounds'
echo '```'
"$B/bench/bench_latency" "$work/e.sock" 2000
echo '```'

SIZE_MB=${BENCH_STREAM_MB:-1024}
head -c $((SIZE_MB << 20)) /dev/urandom > "$work/big.bin"
secs() { local t0 t1; t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
echo
echo "### streaming a ${SIZE_MB} MiB file"
echo '```'
ref_pipe=$(secs bash -c "cat '$work/big.bin' | cat > /dev/null")
ours_pipe=$("$B/bench/bench_stream" "$work/e.sock" "$work/big.bin" pipe | awk '{print $(NF-5)}')
ref_pty=$(secs bash -c "script -qc 'cat $work/big.bin' /dev/null > /dev/null")
ours_pty=$("$B/bench/bench_stream" "$work/e.sock" "$work/big.bin" pty | awk '{print $(NF-5)}')
awk -v s="$SIZE_MB" -v rp="$ref_pipe" -v op="$ours_pipe" -v rt="$ref_pty" -v ot="$ours_pty" 'BEGIN {
  printf "pipe: executor %.0f MB/s, reference cat|cat %.0f MB/s: %.0f%%\n", s*1.048576/op, s*1.048576/rp, 100*rp/op;
  printf "pty:  executor %.0f MB/s, reference script -qc cat %.0f MB/s: %.0f%%\n", s*1.048576/ot, s*1.048576/rt, 100*rt/ot }'
echo '```'
rm -f "$work/big.bin"

echo
echo "### memory"
echo '```'
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
pss() { awk '/^Pss:/ {s+=$2} END {print s}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
sleep 0.2
echo "idle executor (with its default bash session started): executor RSS $(rss "${pids[0]}") KiB, PSS $(pss "${pids[0]}") KiB"
n=${BENCH_IDLE_EXECUTORS:-100}
first=${#pids[@]}
for i in $(seq "$n"); do start_executor "$work/idle$i.sock"; done
sleep 1
tot_rss=0; tot_pss=0; bash_rss=0
for p in "${pids[@]:$first}"; do
    tot_rss=$((tot_rss + $(rss "$p"))); tot_pss=$((tot_pss + $(pss "$p")))
    for c in $(pgrep -P "$p"); do bash_rss=$((bash_rss + $(pss "$c"))); done
done
echo "$n idle executors: RSS sum $((tot_rss / 1024)) MiB, PSS sum $((tot_pss / 1024)) MiB (their bash shells: PSS $((bash_rss / 1024)) MiB more)"
echo '```'
