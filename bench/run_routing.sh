# bench/run_routing.sh — several gateways behind one nginx (issue 21), sourced by bench/run_api.sh
# after its REST figures. run_api.sh started a second gateway (GW2_PORT, which nginx was rendered
# with) once its sessions existed (all on the first, GW_PORT) and made session S2 there. Measures,
# in the same run:
#   - `echo hi` over a WebSocket to that session through nginx (routed by the lookup) next to the
#     same straight to its gateway, and the same for a session of the first gateway (interleaved
#     rounds, medians of their differences);
#   - execute_action straight to the second gateway's HTTP side (no nginx), next to its WebSocket;
#   - the route lookup alone (GET /_sp/route on a gateway, kept connection), next to the API's
#     cheapest authenticated Redis read (GET /api/v1/sessions/{id} through nginx): where the lookup
#     runs;
#   - websocketd (Debian's) serving `cat` as the peer of the session's terminal: keystroke echo
#     next to websocketd serving an interactive bash (readline on) on a PTY of its own (script(1)
#     relays it as the executor relays ours: the fair peer, paying for the PTY and the shell),
#     (BENCH_ECHO_ROUNDS, 2000) and streaming throughput of the same generated text
#     (BENCH_PEER_MB, 256 MiB) through a PTY and the gateway, next to websocketd's pipe and to
#     websocketd serving the same command on a PTY of its own (script(1): the same kernel line
#     discipline and \n → \r\n, the ceiling a terminal shares with any PTY server);
#   - the same text from a pipe-mode command (stdout, no PTY: what E2B's commands.run starts),
#     envd's Start over Connect through nginx, its stream read by curl (not decoded, as
#     bench_ws drain does not decode websocketd's), next to websocketd's pipe (issue 35); the
#     streams in BENCH_PEER_ROUNDS rounds, their order rotating, medians of the ratios; the
#     pipe-mode command's CPU per MiB in the gateways, Redis and nginx;
#   - the same text read from a bare PTY (bench/bench_pty.c): the floor of both terminals.
ROUNDS=${BENCH_API_ROUNDS:-2000}
echo
echo "### several gateways behind one nginx (issue 21)"
echo '```'
p50() { sed -n 's/.*p50=\([0-9]*\)us.*/\1/p' | head -1; }
median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# BENCH_ROUTE_ROUNDS (5) rounds of ROUNDS/5 echos each way, their order rotating, so that the
# machine's drift between runs hits all four alike; the figures are the medians of the rounds'
# p50 differences.
RR=${BENCH_ROUTE_ROUNDS:-5}
d2=() d1=() dd=()
for round in $(seq "$RR"); do
    declare -A at=()
    runs=(via2 dir2 via1 dir1)
    for k in $(seq 0 3); do
        case ${runs[$(((k + round) % 4))]} in
        via2) at[via2]=$("$B/bench/bench_ws" latency 127.0.0.1 "$HTTP_PORT" "$S2" "$USER_TOKEN" $((ROUNDS / RR))) ;;
        dir2) at[dir2]=$("$B/bench/bench_ws" latency 127.0.0.1 "$GW2_PORT" "$S2" "$USER_TOKEN" $((ROUNDS / RR))) ;;
        via1) at[via1]=$("$B/bench/bench_ws" latency 127.0.0.1 "$HTTP_PORT" "$S0" "$USER_TOKEN" $((ROUNDS / RR))) ;;
        dir1) at[dir1]=$("$B/bench/bench_ws" latency 127.0.0.1 "$GW_PORT" "$S0" "$USER_TOKEN" $((ROUNDS / RR))) ;;
        esac
    done
    d2+=($(($(p50 <<<"${at[via2]}") - $(p50 <<<"${at[dir2]}"))))
    d1+=($(($(p50 <<<"${at[via1]}") - $(p50 <<<"${at[dir1]}"))))
    dd+=($(($(p50 <<<"${at[via2]}") - $(p50 <<<"${at[via1]}"))))
    via2=${at[via2]} dir2=${at[dir2]} via1=${at[via1]} dir1=${at[dir1]}
    unset at
done
echo "last round of $RR ($((ROUNDS / RR)) echos each):"
echo "session on the second gateway, through nginx: $via2"
echo "session on the second gateway, straight to it: $dir2"
echo "session on the first gateway, through nginx:  $via1"
echo "session on the first gateway, straight to it: $dir1"
echo "  → routed WebSocket to the second gateway, p50 over straight to it: ${d2[*]} us; median $(median <<<"${d2[*]}") us"
echo "  → the same for the first gateway: ${d1[*]} us; median $(median <<<"${d1[*]}") us"
echo "  → through nginx, second gateway's session over the first's: ${dd[*]} us; median $(median <<<"${dd[*]}") us"
rest2=$("$B/bench/bench_api" latency 127.0.0.1 "$GW2_PORT" "$S2" "$USER_TOKEN" "$ROUNDS")
echo "execute_action straight to the second gateway (its HTTP side, no nginx): ${rest2#REST execute_action via nginx }"
printf "  → the gateway's HTTP side %+d us at p50 over its WebSocket (the last round's)\n" \
    $(($(p50 <<<"$rest2") - $(p50 <<<"$dir2")))
"$B/bench/bench_api" lookup 127.0.0.1 "$GW_PORT" "/runtime/$S0/execute_action" "$USER_TOKEN" \
    "$("$B/sandpipe" token --secret-file "$work/secret" --route-key)" "$ROUNDS"
"$B/bench/bench_api" getauth 127.0.0.1 "$HTTP_PORT" "/api/v1/sessions/$S0" "$USER_TOKEN" "$ROUNDS"
echo '```'

echo
echo "### websocketd as the peer (the same \`cat\`, keystroke echo and streaming)"
echo '```'
PEER_MB=${BENCH_PEER_MB:-256}
GEN="yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz | head -c $((PEER_MB << 20))"
WSD_ECHO=$(free_port)
WSD_STREAM=$(free_port)
WSD_PTY=$(free_port)
WSD_BASH=$(free_port)
websocketd --port "$WSD_ECHO" --address 127.0.0.1 --loglevel error cat >/dev/null 2>&1 &
pids+=($!)
websocketd --port "$WSD_STREAM" --address 127.0.0.1 --loglevel error --binary sh -c "$GEN" >/dev/null 2>&1 &
pids+=($!)
websocketd --port "$WSD_PTY" --address 127.0.0.1 --loglevel error --binary script -qfec "$GEN" /dev/null >/dev/null 2>&1 &
pids+=($!)
websocketd --port "$WSD_BASH" --address 127.0.0.1 --loglevel error --binary env TERM=xterm-256color \
    script -qfc "bash --norc --noprofile -i" /dev/null >/dev/null 2>&1 &
pids+=($!)
for p in "$WSD_ECHO" "$WSD_STREAM" "$WSD_PTY" "$WSD_BASH"; do
    for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.05; done
done
ER=${BENCH_ECHO_ROUNDS:-2000}
TERM_PATH="/ws/sessions/$S2/terminal?token=$USER_TOKEN"
# the four alternate keystroke by keystroke, in a shuffled order (a busy moment of the machine
# falls on all alike)
e_all=$("$B/bench/bench_ws" echo 127.0.0.1 "$HTTP_PORT" "$TERM_PATH" "$ER" binary \
    "$GW2_PORT" "$TERM_PATH" binary "$WSD_ECHO" / text "$WSD_BASH" / binary)
e_ours=$(sed -n 1p <<<"$e_all")
e_ours_direct=$(sed -n 2p <<<"$e_all")
e_wsd=$(sed -n 3p <<<"$e_all")
e_wsd_bash=$(sed -n 4p <<<"$e_all")
echo "terminal through nginx:   ${e_ours#keystroke echo * }"
echo "terminal straight:        ${e_ours_direct#keystroke echo * }"
echo "websocketd cat:           ${e_wsd#keystroke echo * }"
echo "websocketd bash on a PTY: ${e_wsd_bash#keystroke echo * }"
# A sandbox made through E2B's control API, its Start RPC's envelope (Connect's 5-byte prefix).
read -r E2B_SID E2B_ACCESS < <(curl -sf -X POST -H "X-API-Key: $USER_TOKEN" -H 'Content-Type: application/json' \
    -d '{}' "http://127.0.0.1:$HTTP_PORT/e2b/v2/sandboxes" |
    python3 -c 'import json, sys; o = json.load(sys.stdin); print(o["sandboxID"], o["envdAccessToken"])')
python3 - "$GEN" >"$work/start.connect" <<'PY'
import json, struct, sys
m = json.dumps({"process": {"cmd": "/bin/bash", "args": ["-c", sys.argv[1]]}}).encode()
sys.stdout.buffer.write(b"\0" + struct.pack(">I", len(m)) + m)
PY
# The pipe-mode command once: its line, as bench_ws drain's, the CPU time per MiB of each hop
# it crossed (the gateways, Redis, nginx's workers; from /proc), which a busy machine does not
# move as it moves MB/s (the same CPU per MiB in this stack as in a fresh one says a slow figure
# is the machine's, not the stack's), and how long the gateways waited for a CPU per MiB
# (/proc/PID/schedstat): on a quiet machine a fraction of their CPU time, several times it when
# other work holds the cores.
waited_ns() { # the run-queue wait of the given processes, ns
    local t=0 p f
    for p in "$@"; do read -r -a f 2>/dev/null <"/proc/$p/schedstat" && t=$((t + f[1])); done
    echo "$t"
}
pipe_run() {
    local nw g0 r0 n0 w0 g1 r1 n1 w1 out
    nw=$(workers_of "$work/nginx")
    g0=$(ticks_of "$GW" "$GW2") r0=$(ticks_of "$REDIS_PID") n0=$(ticks_of $nw) w0=$(waited_ns "$GW" "$GW2")
    out=$(curl -s -o /dev/null -w '%{size_download} %{time_total}' --data-binary @"$work/start.connect" \
        -H 'Content-Type: application/connect+json' -H "E2b-Sandbox-Id: $E2B_SID" -H "X-Access-Token: $E2B_ACCESS" \
        "http://127.0.0.1:$HTTP_PORT/process.Process/Start")
    g1=$(ticks_of "$GW" "$GW2") r1=$(ticks_of "$REDIS_PID") n1=$(ticks_of $nw) w1=$(waited_ns "$GW" "$GW2")
    awk -v n=$((PEER_MB << 20)) -v mb="$PEER_MB" -v ms=$((1000 / $(getconf CLK_TCK))) \
        -v g=$((g1 - g0)) -v r=$((r1 - r0)) -v x=$((n1 - n0)) -v w=$((w1 - w0)) '
        $1 >= n * 4 / 3 { printf "%d bytes of output (%d of its JSON) in %.3f s = %.1f MB/s; CPU per MiB: gateway %.1f ms, Redis %.1f, nginx %.1f; the gateway waited %.1f ms per MiB for a CPU\n",
            n, $1, $2, n / 1e6 / $2, g * ms / mb, r * ms / mb, x * ms / mb, w / 1e6 / mb; next }
        { print "short: " $1 " bytes of JSON" }' <<<"$out"
}
mbs() { sed -n 's/.*= \([0-9.]*\) MB\/s.*/\1/p'; }
# BENCH_PEER_ROUNDS (3) rounds, each the four streams in a rotating order, so that a noisy
# neighbour hits them alike: the figures are the median ratios of the rounds.
r_pipe=() r_term_pipe=() r_term_pty=() r_term_floor=() r_pty_floor=()
orders=("term wsd pty pipe floor" "wsd floor pty pipe term" "pty pipe floor term wsd")
for round in $(seq "${BENCH_PEER_ROUNDS:-3}"); do
    declare -A got=()
    for run in ${orders[$((round % 3))]}; do
        case $run in
        term) got[term]=$("$B/bench/bench_ws" drain 127.0.0.1 "$HTTP_PORT" "$TERM_PATH" "stty -echo; $GEN; exit
") ;;
        wsd) got[wsd]=$("$B/bench/bench_ws" drain 127.0.0.1 "$WSD_STREAM" /) ;;
        pty) got[pty]=$("$B/bench/bench_ws" drain 127.0.0.1 "$WSD_PTY" /) ;;
        pipe) got[pipe]=$(pipe_run) ;;
        floor) got[floor]=$("$B/bench/bench_pty" "$GEN") ;;
        esac
    done
    echo "round $round:"
    echo "  streaming $PEER_MB MiB, terminal through nginx (PTY, \\n → \\r\\n): ${got[term]}"
    echo "  streaming $PEER_MB MiB, websocketd (pipe):                     ${got[wsd]}"
    echo "  streaming $PEER_MB MiB, websocketd + script (PTY, \\n → \\r\\n):  ${got[pty]}"
    echo "  streaming $PEER_MB MiB, a pipe-mode command through nginx (E2B's Start, Connect JSON, read raw): ${got[pipe]}"
    echo "  streaming $PEER_MB MiB, a bare PTY reader (forkpty, 64 KiB reads: every terminal's floor): ${got[floor]}"
    r_pipe+=("$(ratio "$(mbs <<<"${got[pipe]}")" "$(mbs <<<"${got[wsd]}")")")
    r_term_pipe+=("$(ratio "$(mbs <<<"${got[term]}")" "$(mbs <<<"${got[wsd]}")")")
    r_term_pty+=("$(ratio "$(mbs <<<"${got[term]}")" "$(mbs <<<"${got[pty]}")")")
    r_term_floor+=("$(ratio "$(mbs <<<"${got[term]}")" "$(mbs <<<"${got[floor]}")")")
    r_pty_floor+=("$(ratio "$(mbs <<<"${got[pty]}")" "$(mbs <<<"${got[floor]}")")")
    unset got
done
echo "  → the terminal: ${r_term_pty[*]}x websocketd's on a PTY, median $(median <<<"${r_term_pty[*]}")x (goal ≥ 2x);" \
    "${r_term_pipe[*]}x websocketd's pipe, median $(median <<<"${r_term_pipe[*]}")x;" \
    "keystroke echo p50 $(ratio "$(p50 <<<"$e_ours")" "$(p50 <<<"$e_wsd")")x websocketd's through nginx," \
    "$(ratio "$(p50 <<<"$e_ours_direct")" "$(p50 <<<"$e_wsd")")x straight;" \
    "$(ratio "$(p50 <<<"$e_ours_direct")" "$(p50 <<<"$e_wsd_bash")")x websocketd's bash on a PTY straight"
echo "  → the PTY floor: the terminal ${r_term_floor[*]}x a bare PTY reader, median $(median <<<"${r_term_floor[*]}")x;" \
    "websocketd + script ${r_pty_floor[*]}x, median $(median <<<"${r_pty_floor[*]}")x (the terminal's goal of 2x" \
    "websocketd + script needs websocketd + script under half the floor)"
echo "  → the pipe-mode command: ${r_pipe[*]}x websocketd's pipe, median $(median <<<"${r_pipe[*]}")x (goal ≥ 0.5x)"
echo '```'
