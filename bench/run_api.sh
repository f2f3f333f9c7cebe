# bench/run_api.sh — the REST API section of `make bench`, sourced by bench/run.sh after the
# gateway started (it uses $B, $work, $pids, $GW_PORT, $REDIS_PID, the Redis socket, its users'
# password files and the secret there).
#
# Starts sandpipe-api (BENCH_API_WORKERS FastCGI workers, default 16) and nginx rendered by
# nginx/render.sh (keeping BENCH_API_KEEPALIVE FastCGI connections per nginx worker, default a
# quarter of the API workers, as make run does), then measures through nginx, each next to the
# gateway's WebSocket (no nginx, no API) in the same run:
#   - `echo hi` execute_action latency on one keep-alive connection (BENCH_API_ROUNDS, 2000):
#     nginx asks a gateway where the session lives (auth_request), then sends it to that gateway;
#   - throughput: BENCH_API_SESSIONS sessions (16), one connection each, BENCH_API_ACTIONS
#     actions in all (20000);
#   - GET events?since=0&limit=10000 of a session holding >= 10,000 events, next to XRANGE;
#   - the OpenHands Remote Runtime API: /start until ready and /alive, warm next to cold, and
#     /pause, /resume (bench/bench_oh.py, BENCH_OH_ROUNDS rounds, default 10);
#   - a short CLI command's wall and CPU time next to curl's (bench/bench_cli.py).
# Rate limit: the benchmark nginx is rendered with `render.sh --rate BENCH_API_RATE --burst
# BENCH_API_BURST` (default 100000 r/s, burst 100000) because every request comes from
# 127.0.0.1; a second nginx rendered with the production defaults (200 r/s, burst 400 per client
# address) is driven the same way to show what the limit does.
API_WORKERS=${BENCH_API_WORKERS:-16}
API_ROUNDS=${BENCH_API_ROUNDS:-2000}
API_SESSIONS=${BENCH_API_SESSIONS:-16}
API_ACTIONS=${BENCH_API_ACTIONS:-20000}
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }

"$B/sandpipe-api" --socket "unix:$work/api.sock" --redis "unix:$work/redis.sock" \
    --redis-user api --redis-password-file "$work/redis-api.password" --secret-file "$work/secret" --workers "$API_WORKERS" >"$work/api.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do [ -S "$work/api.sock" ] && break; sleep 0.02; done
start_nginx() { # prefix port unix|tcp [render.sh options]: nginx reaching the gateways over
    local prefix=$1 port=$2 link=$3 # their unix sockets (as make run does) or over TCP
    shift 3
    local gws=(--gateway "127.0.0.1:$GW_PORT=unix:$work/gw.sock" --gateway "127.0.0.1:$GW2_PORT=unix:$work/gw2.sock")
    [ "$link" = unix ] || gws=(--gateway "127.0.0.1:$GW_PORT" --gateway "127.0.0.1:$GW2_PORT")
    nginx/render.sh --prefix "$prefix" --api-socket "$work/api.sock" --secret-file "$work/secret" \
        --sandpipe "$B/sandpipe" --port "$port" "${gws[@]}" "$@" >/dev/null
    nginx -p "$prefix" -c "$prefix/nginx.conf" 2>"$prefix/stderr" &
    pids+=($!)
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.02
    done
    echo "nginx did not start: $(cat "$prefix/stderr")" >&2
    exit 1
}
# A second gateway (bench/run_routing.sh), started once the sessions above are created: they all
# land on the first, which the WebSocket peers below talk to directly.
GW2_PORT=$(free_port)
HTTP_PORT=$(free_port)
start_nginx "$work/nginx" "$HTTP_PORT" unix --rate "${BENCH_API_RATE:-100000}" --burst "${BENCH_API_BURST:-100000}" \
    --api-keepalive "${BENCH_API_KEEPALIVE:-$((API_WORKERS / 4))}"
TCP_PORT=$(free_port)
start_nginx "$work/nginx-tcp" "$TCP_PORT" tcp --rate "${BENCH_API_RATE:-100000}" --burst "${BENCH_API_BURST:-100000}" \
    --api-keepalive "${BENCH_API_KEEPALIVE:-$((API_WORKERS / 4))}"
PROD_PORT=$(free_port)
start_nginx "$work/nginx-prod" "$PROD_PORT" unix --api-keepalive "${BENCH_API_KEEPALIVE:-$((API_WORKERS / 4))}" # --rate 200 --burst 400

# Sessions created through the API by one user; its token is their X-Session-API-Key.
USER_TOKEN=$(python3 -c "import sys; sys.path.insert(0,'tests/integration'); from wsclient import jwt; print(jwt(open('$work/secret').read().strip(), sub='bench', role='user'))")
SIDS=$(python3 - "$HTTP_PORT" "$USER_TOKEN" "$API_SESSIONS" <<'EOF'
import http.client, json, sys
port, tok, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ids = []
for _ in range(n):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=90)
    c.request("POST", "/api/v1/sessions", "{}", {"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
    r = c.getresponse()
    body = json.loads(r.read())
    if r.status != 201:
        sys.exit(f"session create: {r.status} {body}")
    ids.append(body["id"])
print(" ".join(ids))
EOF
)
read -r -a SID_LIST <<<"$SIDS"
# The second gateway (bench/run_routing.sh's figures) and a session on it.
"$B/sandpipe-gateway" --listen "127.0.0.1:$GW2_PORT" --listen-unix "$work/gw2.sock" --redis "unix:$work/redis.sock" \
    --redis-user gateway --redis-password-file "$work/redis-gateway.password" --provider bwrap \
    --state-dir "$work/sandboxes" --secret-file "$work/secret" --pool 1 --id gw-bench-2 >"$work/gw2.log" 2>&1 &
GW2=$!
pids+=($GW2)
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$GW2_PORT") 2>/dev/null && break; sleep 0.05; done
S2=$(python3 - "$GW2_PORT" "$USER_TOKEN" <<'PY'
import sys
sys.path.insert(0, "tests/integration")
from wsclient import WS
c = WS("127.0.0.1", int(sys.argv[1]), "/ws/control?token=" + sys.argv[2])
c.send_json({"id": 1, "method": "session.create", "params": {}})
print(c.recv_json(90)["result"]["id"])
PY
)

S0=${SID_LIST[0]}
pct() { sed -n "s/.*$1=\([0-9]*\)us.*/\1/p" | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo
echo "### REST API through nginx (execute_action and actions served by the session's gateway; sandpipe-api: $API_WORKERS workers; nginx: 2 workers; same gateway and Redis)"
echo '```'
ws_out=$("$B/bench/bench_ws" latency 127.0.0.1 "$GW_PORT" "$S0" "$USER_TOKEN" "$API_ROUNDS")
rest_out=$("$B/bench/bench_api" latency 127.0.0.1 "$HTTP_PORT" "$S0" "$USER_TOKEN" "$API_ROUNDS")
echo "$ws_out"
echo "$rest_out"
echo "overhead of nginx (+ its route lookup): p50 $(ratio "$(pct p50 <<<"$rest_out")" "$(pct p50 <<<"$ws_out")")x," \
    "p99 $(ratio "$(pct p99 <<<"$rest_out")" "$(pct p99 <<<"$ws_out")")x the WebSocket's" \
    "(+$(($(pct p50 <<<"$rest_out") - $(pct p50 <<<"$ws_out"))) us at p50)"
"$B/bench/bench_api" latency 127.0.0.1 "$TCP_PORT" "$S0" "$USER_TOKEN" "$API_ROUNDS" |
    sed 's/via nginx/via nginx, nginx to the gateway over TCP/'
# Floors for the breakdown: nginx alone (a static file), nginx + a FastCGI worker + one Redis
# command (an unknown /api/ route: its 404 and the metrics counter).
"$B/bench/bench_api" get 127.0.0.1 "$HTTP_PORT" / "$API_ROUNDS"
"$B/bench/bench_api" get 127.0.0.1 "$HTTP_PORT" /api/v1/no-such-route "$API_ROUNDS"
SID_CSV=$(tr ' ' ',' <<<"$SIDS")
# Throughput: BENCH_API_TP_ROUNDS (5) rounds, each the WebSocket run and two REST runs, through
# nginx reaching the gateway over its unix socket (as make run) and over TCP (a gateway on another
# host), their order rotating, so that a noisy neighbour hits all alike; the figures are the
# median ratios. Each run also reports the CPU time per action of nginx, the gateway, Redis and
# everything else (the sandboxes' bash and executors, the benchmark client), from /proc.
# BENCH_PERF_DIR=DIR also records a perf profile of nginx, the gateway and Redis per run there.
ticks_of() { # (a worker gone meanwhile, e.g. the cache loader, counts nothing)
    local t=0 p f
    for p in "$@"; do read -r -a f 2>/dev/null <"/proc/$p/stat" && t=$((t + f[13] + f[14])); done
    echo "$t"
}
all_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
workers_of() { pgrep -P "$(cat "$1/nginx.pid")" | tr '\n' ' '; }
tp_run() { # ws|unix|tcp -> prints the run's line and its "CPU per action" line
    local a0 n0 g0 r0 out a1 n1 g1 r1 hz nw= perf=
    hz=$(getconf CLK_TCK)
    case "$1" in unix) nw=$(workers_of "$work/nginx") ;; tcp) nw=$(workers_of "$work/nginx-tcp") ;; esac
    a0=$(all_ticks) n0=$(ticks_of $nw) g0=$(ticks_of "$GW") r0=$(ticks_of "$REDIS_PID")
    if [ -n "${BENCH_PERF_DIR:-}" ]; then
        perf record -q -g -F 1999 -o "$BENCH_PERF_DIR/$1.$(date +%s%N).data" \
            -p "$(echo $nw "$GW" "$REDIS_PID" | tr ' ' ',')" 2>/dev/null &
        perf=$!
        sleep 0.5
    fi
    case "$1" in
    ws) out=$("$B/bench/bench_ws" throughput 127.0.0.1 "$GW_PORT" "$SID_CSV" "$USER_TOKEN" "$API_ACTIONS") ;;
    unix) out=$("$B/bench/bench_api" throughput 127.0.0.1 "$HTTP_PORT" "$USER_TOKEN" "$API_ACTIONS" $SIDS) || true ;;
    tcp) out=$("$B/bench/bench_api" throughput 127.0.0.1 "$TCP_PORT" "$USER_TOKEN" "$API_ACTIONS" $SIDS | sed 's/^REST/REST (nginx to the gateway over TCP)/') || true ;;
    esac
    a1=$(all_ticks) n1=$(ticks_of $nw) g1=$(ticks_of "$GW") r1=$(ticks_of "$REDIS_PID")
    if [ -n "$perf" ]; then kill -INT "$perf" && wait "$perf" || true; fi
    echo "$out"
    awk -v a=$((a1 - a0)) -v n=$((n1 - n0)) -v g=$((g1 - g0)) -v r=$((r1 - r0)) -v k="$API_ACTIONS" -v hz="$hz" 'BEGIN {
        u = 1e6 / hz / k
        printf "  CPU per action: %.0f us in all = nginx %.0f + gateway %.0f + Redis %.0f + the rest (sandboxes, client) %.0f\n",
            a * u, n * u, g * u, r * u, (a - n - g - r) * u }'
}
aps() { sed -n 's/.* = \([0-9]*\) actions\/s.*/\1/p' | head -1; }
median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
unix_ratios=() tcp_ratios=() unix_aps=()
orders=("ws unix tcp" "unix tcp ws" "tcp ws unix")
for round in $(seq "${BENCH_API_TP_ROUNDS:-5}"); do
    declare -A got=()
    for run in ${orders[$((round % 3))]}; do got[$run]=$(tp_run "$run"); done
    unix_ratios+=("$(ratio "$(aps <<<"${got[unix]}")" "$(aps <<<"${got[ws]}")")")
    tcp_ratios+=("$(ratio "$(aps <<<"${got[tcp]}")" "$(aps <<<"${got[ws]}")")")
    unix_aps+=("$(aps <<<"${got[unix]}")")
    echo "round $round:"
    printf '%s\n' "${got[ws]}" "${got[unix]}" "${got[tcp]}"
    unset got
done
echo "REST throughput / the WebSocket's, ${#unix_ratios[@]} rounds: ${unix_ratios[*]}; median $(median <<<"${unix_ratios[*]}")x" \
    "(REST actions/s median $(median <<<"${unix_aps[*]}"))"
echo "the same with nginx reaching the gateway over TCP: ${tcp_ratios[*]}; median $(median <<<"${tcp_ratios[*]}")x"
"$B/bench/bench_api" throughput 127.0.0.1 "$PROD_PORT" "$USER_TOKEN" 2000 $SIDS |
    sed 's/^/with the production rate limit (200 r\/s, burst 400, one client address): /' || true

# The events benchmark reads the first 10,000 events of S0 (the runs above left ~3 per action).
have=$(REDISCLI_AUTH=$(cat "$work/redis-api.password") redis-cli -s "$work/redis.sock" --user api XLEN "sp:session:{$S0}:events")
if [ "$have" -lt 10000 ]; then
    "$B/bench/bench_ws" latency 127.0.0.1 "$GW_PORT" "$S0" "$USER_TOKEN" $(((10000 - have) / 3 + 100)) >/dev/null
fi
"$B/bench/bench_api" events 127.0.0.1 "$HTTP_PORT" "$S0" "$USER_TOKEN" 10000 "${BENCH_API_EVENT_ROUNDS:-20}" "$work/redis.sock" \
    api "$work/redis-api.password"
echo '```'

. bench/run_routing.sh

echo
echo "### OpenHands Remote Runtime API through nginx (issue 11)"
echo '```'
python3 bench/bench_oh.py "$HTTP_PORT" "$USER_TOKEN" "${BENCH_OH_ROUNDS:-10}"
echo '```'

echo
echo "### the CLI through nginx (ws://, no TLS)"
echo '```'
python3 bench/bench_cli.py "$B/sandpipe" "$HTTP_PORT" "$USER_TOKEN" "$S0" "${BENCH_CLI_ROUNDS:-30}"
echo '```'
