#!/usr/bin/env bash
# make bench: executor, gateway and REST API figures, each next to its reference measured in the
# same run on this machine. Results are printed as markdown; docs/benchmarks.md records a run and
# how to repeat it.
#   bench/run.sh [MODE]             MODE: the build to measure (build/MODE, default release)
#   BENCH_SECTIONS="executor plugins gateway api web images takeover" (default: all) runs only the
#   sections named (plugins: IPython and the browser, bench/bench_plugins.py; web: the browser IDE
#   in Chromium against its own stack, bench/bench_web.py; images: runtime images and the Docker
#   provider, bench/bench_images.py; takeover: a gateway killed with SIGKILL among three,
#   bench/bench_takeover.py; unzip: another session's round trips while upload_file unpacks a
#   zip, bench/bench_unzip.py; network: a sandbox's own network against the host's,
#   bench/bench_network.py; rootinside: cold and warm starts with root inside against one uid,
#   bench/bench_root_inside.py; preview: a sandbox app through the preview against the same
#   client inside the sandbox, bench/bench_preview.py; e2b: E2B's SDK against sandpipe's own
#   WebSocket and a raw reader, bench/bench_e2b.py; density: BENCH_DENSITY_N idle sandboxes,
#   default 5000, created over REST, each answering `echo hi`, then deleted, bench/bench_density.py).
set -euo pipefail
MODE=${1:-release}
B=build/$MODE
SECTIONS=" ${BENCH_SECTIONS:-executor plugins gateway api web images rootinside takeover unzip network preview e2b density} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sp-bench.XXXXXX")
chmod 711 "$work" # searchable: each sandbox runs as its own uid below it
pids=()
stop_started() { # the processes this script started, by pid: TERM, up to 10 s, then KILL
    local p alive
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for _ in $(seq 100); do
        alive=
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && return 0
        sleep 0.1
    done
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
}
# Sandboxes outlive their gateway by design (a restarted gateway re-attaches them): once the
# gateways are gone, what the sandboxes of $work/sandboxes left (processes, their disks' mounts
# and loop devices, cgroups) is destroyed, and the run fails naming anything of $work left.
cleanup() { # keeps the script's exit status unless something was left on the host
    local rc=$?
    set +e
    stop_started
    if python3 tests/integration/leftovers.py destroy "$work/sandboxes" &&
        python3 tests/integration/leftovers.py check "$work"; then
        rm -rf "$work"
    else
        echo "bench: left on the host (above); $work kept" >&2
        [ "$rc" -ne 0 ] || rc=1
    fi
    exit "$rc"
}
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
if want executor; then
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
ours_pipe=$("$B/bench/bench_stream" "$work/e.sock" "$work/big.bin" pipe | awk '{print $5}')
ref_pty=$(secs bash -c "script -qc 'cat $work/big.bin' /dev/null > /dev/null")
ours_pty=$("$B/bench/bench_stream" "$work/e.sock" "$work/big.bin" pty | awk '{print $5}')
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
start_executor "$work/fresh.sock"
sleep 0.5
fresh=${pids[${#pids[@]}-1]}
echo "idle executor (default bash session started, no work done yet): RSS $(rss "$fresh") KiB, PSS $(pss "$fresh") KiB"
echo "the executor above after the benchmarks (1 GiB streamed through it): RSS $(rss "${pids[0]}") KiB"
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

fi
if want plugins; then
echo
echo "## plugins: IPython (a real Jupyter kernel), the browser (headless Chromium)"
echo '```'
start_executor "$work/plugins.sock"
/usr/bin/python3 bench/bench_plugins.py "$work/plugins.sock" "${BENCH_PLUGIN_ROUNDS:-300}"
echo '```'
fi

# ---- gateway ----
# Redis and one gateway with a warm pool of 2, used by the gateway and api sections.
# the production config: AOF, fsync every second; the users of make run (redis/users.acl)
"$B/sandpipe" redis-acl --generate --dir "$work" --template redis/users.acl --out "$work/users.acl"
redis-server redis/redis.conf --port 0 --unixsocket "$work/redis.sock" --dir "$work" \
    --aclfile "$work/users.acl" --daemonize no >/dev/null 2>&1 &
REDIS_PID=$!
pids+=($!)
for _ in $(seq 100); do [ -S "$work/redis.sock" ] && break; sleep 0.02; done
python3 -c "import os; open('$work/secret','w').write(os.urandom(32).hex()+'\n')"; chmod 600 "$work/secret"
GW_PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
"$B/sandpipe-gateway" --listen "127.0.0.1:$GW_PORT" --listen-unix "$work/gw.sock" --redis "unix:$work/redis.sock" \
    --redis-user gateway --redis-password-file "$work/redis-gateway.password" --provider bwrap \
    --state-dir "$work/sandboxes" --secret-file "$work/secret" --pool 2 --id gw-bench >"$work/gw.log" 2>&1 &
GW=$!
pids+=($GW)
sleep 2
TOKEN=$(python3 -c "import sys; sys.path.insert(0,'tests/integration'); from wsclient import jwt; print(jwt(open('$work/secret').read().strip(), role='admin'))")
SID=$(python3 -c "
import sys; sys.path.insert(0,'tests/integration'); from wsclient import WS
ws=WS('127.0.0.1',$GW_PORT,'/ws/control?token=$TOKEN'); ws.send_json({'id':1,'method':'session.create'}); print(ws.recv_json(60)['result']['id'])")
if want plugins; then
echo
echo "### plugins through the gateway (a WebSocket client, a bwrap sandbox, events in Redis)"
echo '```'
python3 bench/bench_plugins_ws.py "$GW_PORT" "$SID" "$TOKEN" "${BENCH_PLUGIN_ROUNDS:-300}"
echo '```'
fi
if want gateway; then
echo
echo "### gateway (bubblewrap sandboxes, Redis on a unix socket)"
echo '```'
"$B/bench/bench_ws" latency 127.0.0.1 "$GW_PORT" "$SID" "$TOKEN" 2000
head -c $((256 << 20)) /dev/zero | tr '\0' 'x' | fold -w 100 > "$work/ws/text.txt"
mkdir -p "$work/sandboxes" # (text.txt is read through the executor benchmark below for the same-run peer)
# (a sandbox's workspace is on its own disk, <sandbox>/disk/workspace, or <sandbox>/workspace)
for d in "$work"/sandboxes/*/disk/workspace "$work"/sandboxes/*/workspace; do
    if [ -d "$d" ]; then cp "$work/ws/text.txt" "$d/"; fi
done
"$B/bench/bench_ws" stream 127.0.0.1 "$GW_PORT" "$SID" "$TOKEN" "cat text.txt"
"$B/bench/bench_stream" "$work/e.sock" "$work/ws/text.txt" pty | sed 's/^/executor alone, /'
"$B/bench/bench_ws" fanout 127.0.0.1 "$GW_PORT" "$SID" "$TOKEN" 100 'seq 1 300000' | sed 's/^/bulk output (2 MB, CPU-bound): /'
"$B/bench/bench_ws" fanout 127.0.0.1 "$GW_PORT" "$SID" "$TOKEN" 100 'for i in $(seq 1 100); do echo line $i of a build log; sleep 0.005; done' | sed 's/^/paced output (a build log): /'
python3 bench/bench_gateway.py "$GW_PORT" "$(cat "$work/secret")" "$work/redis.sock" "$B/sandpipe-executor"
"$B/bench/bench_disk" "$work" 20 || true # a sandbox's own disk (root and loop devices needed)
"$B/bench/bench_evlog" "unix:$work/redis.sock" 500000 gateway "$work/redis-gateway.password" 2>/dev/null
R0=$(awk '/VmRSS/{print $2}' /proc/$GW/status)
N=${BENCH_IDLE_CLIENTS:-10000}
(sleep 30) | "$B/bench/bench_ws" idle 127.0.0.1 "$GW_PORT" "$SID" "$TOKEN" "$N" &
sleep 25
R1=$(awk '/VmRSS/{print $2}' /proc/$GW/status)
echo "$N idle WebSocket clients: gateway RSS $R0 KiB → $R1 KiB = $(( (R1 - R0) * 1024 / N )) bytes per client"
wait %% 2>/dev/null || true
echo '```'
fi

want api && . bench/run_api.sh
if want web; then echo; python3 bench/bench_web.py; fi
if want images; then # runtime images, the Docker provider (its own stacks; dockerd started if need be)
    echo
    echo "## Runtime images and the Docker provider ($(date -u +%F))"
    echo
    scripts/dockerd-up.sh
    SANDPIPE_EXECUTOR="$B/sandpipe-executor" images/sandpipe-image build --docker >/dev/null
    MODE=$MODE python3 bench/bench_images.py
fi
if want rootinside; then # root inside against one uid (its own stacks; the default image)
    echo
    echo "## Root inside: cold and warm start against one uid ($(date -u +%F))"
    echo
    SANDPIPE_EXECUTOR="$B/sandpipe-executor" images/sandpipe-image build --no-docker >/dev/null
    MODE=$MODE python3 bench/bench_root_inside.py
fi
if want preview; then # a sandbox's app through the preview (its own stack; the default image)
    echo
    echo "## Previews: a sandbox's app through nginx, the gateway and the executor ($(date -u +%F))"
    echo
    SANDPIPE_EXECUTOR="$B/sandpipe-executor" images/sandpipe-image build --no-docker >/dev/null
    MODE=$MODE python3 bench/bench_preview.py
fi
if want e2b; then # E2B's SDK (tests/e2b, make e2b-sdk) against its peers (its own stack)
    echo
    echo "## E2B's SDK: commands through envd, create to first command, streaming ($(date -u +%F))"
    echo
    MODE=$MODE python3 bench/bench_e2b.py
fi
if want takeover; then # three gateways of its own (tests/integration/multigw.py)
    echo
    echo "## Gateway takeover after kill -9 ($(date -u +%F))"
    echo '```'
    MODE=$MODE python3 bench/bench_takeover.py
    echo '```'
fi
if want unzip; then # one gateway of its own (tests/integration/apistack.py)
    echo
    echo "## upload_file's zip unpacking and the other sessions ($(date -u +%F))"
    echo '```'
    MODE=$MODE python3 bench/bench_unzip.py
    echo '```'
fi
if want density; then # one gateway of its own (tests/integration/apistack.py); BENCH_DENSITY_N
    echo
    echo "## Density: idle sandboxes on one machine ($(date -u +%F), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo))"
    echo '```'
    MODE=$MODE python3 bench/bench_density.py
    echo '```'
fi
if want network; then # its own stack with a sandpipe-netd, and its own test world (networld.py)
    echo
    echo "## A sandbox's network ($(date -u +%F))"
    MODE=$MODE python3 bench/bench_network.py
fi
true
