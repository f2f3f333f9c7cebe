# bench/run_routing.sh — several gateways behind one nginx (issue 21), sourced by bench/run_api.sh
# after its REST figures. run_api.sh started a second gateway (GW2_PORT, which nginx was rendered
# with) once its sessions existed (all on the first, GW_PORT) and made session S2 there. Measures,
# in the same run:
#   - `echo hi` over a WebSocket to that session through nginx (routed by the lookup) next to the
#     same straight to its gateway, and the same for a session of the first gateway;
#   - execute_action straight to the second gateway's HTTP side (no nginx), next to its WebSocket;
#   - the route lookup alone (GET /_sp/route on a gateway, kept connection), next to the API's
#     cheapest authenticated Redis read (GET /api/v1/sessions/{id} through nginx): where the lookup
#     runs;
#   - websocketd (Debian's) serving `cat` as the peer of the session's terminal: keystroke echo
#     (BENCH_ECHO_ROUNDS, 2000) and streaming throughput of the same generated text
#     (BENCH_PEER_MB, 256 MiB) through a PTY and the gateway, next to websocketd's pipe and to
#     websocketd serving the same command on a PTY of its own (script(1): the same kernel line
#     discipline and \n → \r\n, the ceiling a terminal shares with any PTY server).
ROUNDS=${BENCH_API_ROUNDS:-2000}
echo
echo "### several gateways behind one nginx (issue 21)"
echo '```'
p50() { sed -n 's/.*p50=\([0-9]*\)us.*/\1/p' | head -1; }
via2=$("$B/bench/bench_ws" latency 127.0.0.1 "$HTTP_PORT" "$S2" "$USER_TOKEN" "$ROUNDS")
dir2=$("$B/bench/bench_ws" latency 127.0.0.1 "$GW2_PORT" "$S2" "$USER_TOKEN" "$ROUNDS")
via1=$("$B/bench/bench_ws" latency 127.0.0.1 "$HTTP_PORT" "$S0" "$USER_TOKEN" "$ROUNDS")
dir1=$("$B/bench/bench_ws" latency 127.0.0.1 "$GW_PORT" "$S0" "$USER_TOKEN" "$ROUNDS")
echo "session on the second gateway, through nginx: $via2"
echo "session on the second gateway, straight to it: $dir2"
echo "  → routed WebSocket +$(($(p50 <<<"$via2") - $(p50 <<<"$dir2"))) us at p50"
echo "session on the first gateway, through nginx:  $via1"
echo "session on the first gateway, straight to it: $dir1"
echo "  → +$(($(p50 <<<"$via1") - $(p50 <<<"$dir1"))) us at p50"
rest2=$("$B/bench/bench_api" latency 127.0.0.1 "$GW2_PORT" "$S2" "$USER_TOKEN" "$ROUNDS")
echo "execute_action straight to the second gateway (its HTTP side, no nginx): ${rest2#REST execute_action via nginx }"
echo "  → the gateway's HTTP side +$(($(p50 <<<"$rest2") - $(p50 <<<"$dir2"))) us at p50 over its WebSocket"
"$B/bench/bench_api" lookup 127.0.0.1 "$GW_PORT" "/runtime/$S0/execute_action" "$USER_TOKEN" "$ROUNDS"
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
websocketd --port "$WSD_ECHO" --address 127.0.0.1 --loglevel error cat >/dev/null 2>&1 &
pids+=($!)
websocketd --port "$WSD_STREAM" --address 127.0.0.1 --loglevel error --binary sh -c "$GEN" >/dev/null 2>&1 &
pids+=($!)
websocketd --port "$WSD_PTY" --address 127.0.0.1 --loglevel error --binary script -qfec "$GEN" /dev/null >/dev/null 2>&1 &
pids+=($!)
for p in "$WSD_ECHO" "$WSD_STREAM" "$WSD_PTY"; do
    for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.05; done
done
ER=${BENCH_ECHO_ROUNDS:-2000}
TERM_PATH="/ws/sessions/$S2/terminal?token=$USER_TOKEN"
e_ours=$("$B/bench/bench_ws" echo 127.0.0.1 "$HTTP_PORT" "$TERM_PATH" "$ER" binary)
e_ours_direct=$("$B/bench/bench_ws" echo 127.0.0.1 "$GW2_PORT" "$TERM_PATH" "$ER" binary)
e_wsd=$("$B/bench/bench_ws" echo 127.0.0.1 "$WSD_ECHO" / "$ER" text)
echo "terminal through nginx:   ${e_ours#keystroke echo * }"
echo "terminal straight:        ${e_ours_direct#keystroke echo * }"
echo "websocketd cat:           ${e_wsd#keystroke echo * }"
s_ours=$("$B/bench/bench_ws" drain 127.0.0.1 "$HTTP_PORT" "$TERM_PATH" "stty -echo; $GEN; exit
")
s_wsd=$("$B/bench/bench_ws" drain 127.0.0.1 "$WSD_STREAM" /)
s_wsd_pty=$("$B/bench/bench_ws" drain 127.0.0.1 "$WSD_PTY" /)
echo "streaming $PEER_MB MiB, terminal through nginx (PTY, \\n → \\r\\n): $s_ours"
echo "streaming $PEER_MB MiB, websocketd (pipe):                     $s_wsd"
echo "streaming $PEER_MB MiB, websocketd + script (PTY, \\n → \\r\\n):  $s_wsd_pty"
mbs() { sed -n 's/.*= \([0-9.]*\) MB\/s.*/\1/p'; }
echo "  → $(ratio "$(mbs <<<"$s_ours")" "$(mbs <<<"$s_wsd")")x websocketd's throughput (pipe)," \
    "$(ratio "$(mbs <<<"$s_ours")" "$(mbs <<<"$s_wsd_pty")")x websocketd's on a PTY;" \
    "keystroke echo p50 $(ratio "$(p50 <<<"$e_ours")" "$(p50 <<<"$e_wsd")")x websocketd's"
echo '```'
