#!/usr/bin/env bash
# make run: install what is missing, build, start redis + the gateway (bubblewrap sandboxes,
# a small warm pool) + sandpipe-api (FastCGI) + nginx on one loopback origin, print the URL and a
# development token. Ctrl-C stops it all, sandboxes included (the secret and Redis' AOF stay in
# ./run for the next start).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -j"$(nproc)" >/dev/null
B=build/release
RUN=$PWD/run
GW_PORT=${SANDPIPE_GATEWAY_PORT:-8081}
REDIS_PORT=${SANDPIPE_REDIS_PORT:-6390}
HTTP_PORT=${SANDPIPE_PORT:-8080}
mkdir -p "$RUN/redis" "$RUN/sandboxes"
[ -f "$RUN/secret" ] || "$B/sandpipe-token" --secret-file "$RUN/secret" --generate
pids=()
rcli() { redis-cli -s "$RUN/redis.sock" "$@" 2>/dev/null; }
stop() {
    trap - INT TERM EXIT
    set +e # best effort from here: every step runs even if one fails
    echo; echo "stopping..."
    # nginx, the API and the gateway first (reverse order), Redis last: the gateway's last
    # writes reach it.
    for ((i = ${#pids[@]} - 1; i >= 1; i--)); do kill "${pids[$i]}" 2>/dev/null; done
    for ((i = ${#pids[@]} - 1; i >= 1; i--)); do wait "${pids[$i]}" 2>/dev/null; done
    # Sandboxes outlive a gateway restart by design; Ctrl-C here means everything stops.
    for sid in $(rcli --scan --pattern 'sp:gateway:*:sessions' | xargs -r -n1 redis-cli -s "$RUN/redis.sock" SMEMBERS); do
        rcli HSET "sp:session:{$sid}" status STOPPED >/dev/null
    done
    rcli --scan --pattern 'sp:gateway:*:sessions' | xargs -r redis-cli -s "$RUN/redis.sock" DEL >/dev/null 2>&1
    rcli --scan --pattern 'sp:pool:*' | xargs -r redis-cli -s "$RUN/redis.sock" DEL >/dev/null 2>&1
    # A paused sandbox is frozen: its processes take the SIGKILL only once thawed.
    for d in "$RUN"/sandboxes/sb-*; do
        id=${d##*/}
        echo THAWED >"/sys/fs/cgroup/freezer/sandpipe/$id/freezer.state" 2>/dev/null
        echo 0 >"/sys/fs/cgroup/sandpipe/$id/cgroup.freeze" 2>/dev/null
    done
    # No sandbox process names its host directory (bwrap takes its options from an fd): each
    # sandbox's top process has it as its cwd; killing that and its child (the sandbox's
    # pid-namespace init) ends the whole sandbox.
    sbroot=$(realpath "$RUN/sandboxes")
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in
        "$sbroot"/*) pkill -KILL -P "${p#/proc/}" 2>/dev/null; kill -KILL "${p#/proc/}" 2>/dev/null ;;
        esac
    done
    sleep 0.3
    for c in memory pids cpu cpuacct freezer; do rmdir /sys/fs/cgroup/$c/sandpipe/sb-*/ 2>/dev/null; done
    rmdir /sys/fs/cgroup/sandpipe/sb-*/ 2>/dev/null
    rm -rf "$RUN/sandboxes"/sb-*
    kill "${pids[0]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop INT TERM EXIT

redis-server redis/redis.conf --port "$REDIS_PORT" --dir "$RUN/redis" \
    --unixsocket "$RUN/redis.sock" --unixsocketperm 700 --daemonize no >"$RUN/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do redis-cli -s "$RUN/redis.sock" ping >/dev/null 2>&1 && break; sleep 0.05; done

"$B/sandpipe-gateway" --listen "127.0.0.1:$GW_PORT" --redis "unix:$RUN/redis.sock" \
    --provider "${SANDPIPE_PROVIDER:-bwrap}" --state-dir "$RUN/sandboxes" \
    --secret-file "$RUN/secret" --pool "${SANDPIPE_POOL:-2}" >"$RUN/gateway.log" 2>&1 &
pids+=($!)
sleep 0.5
kill -0 "${pids[1]}" 2>/dev/null || { cat "$RUN/gateway.log"; exit 1; }

"$B/sandpipe-api" --socket "unix:$RUN/api.sock" --redis "unix:$RUN/redis.sock" \
    --secret-file "$RUN/secret" --workers "${SANDPIPE_API_WORKERS:-8}" >"$RUN/api.log" 2>&1 &
pids+=($!)
# nginx keeps FastCGI connections open to the API, at most half of its workers over nginx's two
# workers, so kept (idle) connections never hold them all (nginx/render.sh --api-keepalive).
nginx/render.sh --prefix "$RUN/nginx" --api-socket "$RUN/api.sock" --port "$HTTP_PORT" \
    --gateway "127.0.0.1:$GW_PORT" --api-keepalive $((${SANDPIPE_API_WORKERS:-8} / 4)) >/dev/null
nginx -p "$RUN/nginx" -c "$RUN/nginx/nginx.conf" >"$RUN/nginx.log" 2>&1 &
pids+=($!)
sleep 0.5
kill -0 "${pids[2]}" 2>/dev/null || { cat "$RUN/api.log"; exit 1; }
kill -0 "${pids[3]}" 2>/dev/null || { cat "$RUN/nginx.log" "$RUN/nginx/logs/error.log"; exit 1; }
TOKEN=$("$B/sandpipe-token" --secret-file "$RUN/secret" --sub dev --role admin --ttl 604800)
cat <<EOM

sandpipe is running on http://127.0.0.1:$HTTP_PORT  (logs in $RUN/*.log, $RUN/nginx/logs)
  REST API:      http://127.0.0.1:$HTTP_PORT/api/v1/   (docs/api.md)
  WebSocket API: ws://127.0.0.1:$HTTP_PORT/ws/control
  OpenHands:     http://127.0.0.1:$HTTP_PORT/runtime/{session}/
  OpenHands remote runtime API (SANDBOX_REMOTE_RUNTIME_API_URL): http://127.0.0.1:$HTTP_PORT/openhands
  token:         $TOKEN

  try:  scripts/ws-run.py $TOKEN 'uname -a; id; ls /workspace' --url ws://127.0.0.1:$HTTP_PORT
        curl -s -H "Authorization: Bearer $TOKEN" -X POST http://127.0.0.1:$HTTP_PORT/api/v1/sessions
Ctrl-C stops everything.
EOM
wait "${pids[1]}"
