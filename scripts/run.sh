#!/usr/bin/env bash
# make run: install what is missing, build, start redis + the gateway (bubblewrap sandboxes,
# a small warm pool) + sandpipe-api (FastCGI) + nginx on one loopback origin, print the URL and a
# development token. Ctrl-C stops it all, sandboxes included (the secret, Redis' passwords and
# its AOF stay in ./run for the next start). Redis listens on its unix socket only and wants a
# password: the gateway and the API are its ACL users gateway and api (redis/users.acl).
#
# Stopping always finishes, also under `make run | tee log` (the same Ctrl-C kills tee, so the
# pipe is closed): each daemon runs in its own session, so the terminal's Ctrl-C reaches only
# this script, which stops them in order, by pid; the stop handler ignores SIGPIPE and further
# signals, writes only to stderr and ignores write errors, and every wait in it is bounded.
#
# Knobs (make run needs none; tests use them): SANDPIPE_GATEWAYS (how many gateways, default 1:
# ports SANDPIPE_GATEWAY_PORT, +1, ...; ids gw-<host>-1, -2, ... when more than one; nginx sends
# each session's traffic to its own), SANDPIPE_PORT, SANDPIPE_GATEWAY_PORT,
# SANDPIPE_REDIS_PORT (default 0: unix socket only; a port: TCP on loopback too, with the same
# users), SANDPIPE_PROVIDER, SANDPIPE_POOL, SANDPIPE_IMAGE (sandboxes' image: "default", built
# once by `sandpipe image build` and cached; "host": the host's /usr, no image, for machines
# where debootstrap is impossible), SANDPIPE_IMAGE_DIR,
# SANDPIPE_API_WORKERS, SANDPIPE_RUN_DIR (state, default ./run), SANDPIPE_BUILD_DIR (binaries,
# default build/release), SANDPIPE_NO_SETUP=1 (do not install or build), SANDPIPE_NETD=0 (no
# sandpipe-netd: sandboxes get loopback only), SANDPIPE_NETWORK_DEFAULT (a session's network when
# it asks nothing: none, the default, or egress), SANDPIPE_NETD_TABLE, SANDPIPE_NETD_IFPREFIX,
# SANDPIPE_NETD_POOL (netd's nftables table, interface prefix and address pool: sandpipe, spn,
# 10.88.0.0/16; two runs on one host need their own).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SANDPIPE_NO_SETUP:-}" ]; then
    scripts/install-deps.sh
    make -j"$(nproc)" >/dev/null
    make --no-print-directory web # the browser IDE, when missing or stale
fi
B=${SANDPIPE_BUILD_DIR:-build/release}
RUN=$(realpath -m "${SANDPIPE_RUN_DIR:-run}")
GW_PORT=${SANDPIPE_GATEWAY_PORT:-8081}
REDIS_PORT=${SANDPIPE_REDIS_PORT:-0}
HTTP_PORT=${SANDPIPE_PORT:-8080}
API_WORKERS=${SANDPIPE_API_WORKERS:-8}
mkdir -p "$RUN/redis" "$RUN/sandboxes"
[ -f "$RUN/secret" ] || "$B/sandpipe" token --secret-file "$RUN/secret" --generate
# Redis' users: passwords made once ($RUN/redis-gateway.password, redis-api.password), the ACL
# file rendered from redis/users.acl at every start (a password changed in its file is in force
# from the next start).
"$B/sandpipe" redis-acl --generate --dir "$RUN" --template redis/users.acl --out "$RUN/redis/users.acl"
pids=() # redis, the gateways, api, nginx: each the leader of its own session and process group
netd_pid= # sandpipe-netd, stopped after the sandboxes

# Starts a daemon in a session of its own (setsid execs in place: $! is the daemon's pid, and
# its process group, workers included, is that pid).
start() {
    local log=$1
    shift
    setsid "$@" >"$log" 2>&1 </dev/null &
    pids+=($!)
}

say() { printf '%s\n' "$*" >&2 || true; }
# redis-cli as the gateway's user: what the stop below does (SCAN, SMEMBERS, HSET, DEL) is what a
# gateway may do; nothing here needs more.
rcli() {
    REDISCLI_AUTH=$(cat "$RUN/redis-gateway.password") timeout 5 redis-cli -s "$RUN/redis.sock" \
        --user gateway "$@" 2>/dev/null
}

# True while a process (not a zombie) of one of these process groups lives.
groups_alive() {
    ps -e -o pgid=,stat= | awk -v g=" $* " '$2 !~ /^Z/ && index(g, " " $1 " ") { f = 1 } END { exit !f }'
}

# True while one of these pids is a live process (not a zombie).
pids_alive() {
    [ $# -gt 0 ] || return 1
    ps -o stat= -p "$(IFS=,; echo "$*")" 2>/dev/null | awk '$1 !~ /^Z/ { f = 1 } END { exit !f }'
}

# Sends SIGTERM to the process groups given, waits up to 10 s, then SIGKILLs what is left.
stop_groups() {
    local g
    for g in "$@"; do kill -TERM -- "-$g" 2>/dev/null; done
    for _ in $(seq 100); do groups_alive "$@" || return 0; sleep 0.1; done
    say "still running after 10 s, killed: process groups $*"
    for g in "$@"; do kill -KILL -- "-$g" 2>/dev/null; done
    for _ in $(seq 50); do groups_alive "$@" || return 0; sleep 0.1; done
}

# Every process of this run's sandboxes: each sandbox's top process (bwrap), found by its working
# directory, which is the sandbox's directory under $RUN/sandboxes (no sandbox process names it:
# bwrap takes its options from an fd), and everything below it, in the sandbox's pid namespace
# or not. Warming sandboxes included: nothing else records them all.
sandbox_pids() {
    local sbroot p roots=()
    sbroot=$(realpath -m "$RUN/sandboxes")
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in
        "$sbroot"/sb-*) roots+=("${p#/proc/}") ;;
        esac
    done
    [ ${#roots[@]} -gt 0 ] || return 0
    ps -e -o pid=,ppid= | awk -v roots="${roots[*]}" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) s[r[i]] = 1 }
        { parent[$1] = $2 }
        END {
            do { more = 0; for (p in parent) if (!(p in s) && (parent[p] in s)) { s[p] = 1; more = 1 } } while (more)
            for (p in s) if (p in parent) print p
        }'
}

# The cgroup directories (freezer and v2) of the given pids that belong to a sandbox.
sandbox_cgroups() {
    local pid line
    for pid in "$@"; do
        while IFS= read -r line; do
            case "$line" in
            *:freezer:*/sandpipe/sb-*) echo "/sys/fs/cgroup/freezer${line#*:freezer:}" ;;
            0::*/sandpipe/sb-*) echo "/sys/fs/cgroup${line#0::}" ;;
            esac
        done <"/proc/$pid/cgroup" 2>/dev/null
    done | sort -u
}

stopping=
stop() {
    [ -z "$stopping" ] || return 0
    stopping=1
    # Nothing may interrupt stopping: not a second Ctrl-C, not the pipe tee left closed.
    trap '' INT TERM HUP PIPE
    set +eu
    say ""
    say "stopping..."
    # nginx, the API and the gateway first (reverse order), Redis last: the gateway's last
    # writes reach it.
    local i
    for ((i = ${#pids[@]} - 1; i >= 1; i--)); do stop_groups "${pids[$i]}"; done
    # Sandboxes outlive a gateway restart by design; Ctrl-C here means everything stops.
    if [ ${#pids[@]} -gt 0 ]; then
        local sid now
        now=$(date +%s)
        for sid in $(rcli --scan --pattern 'sp:gateway:*:sessions' | while read -r k; do rcli SMEMBERS "$k"; done); do
            rcli HSET "sp:session:{$sid}" status STOPPED ended "$now" >/dev/null
        done
        rcli --scan --pattern 'sp:gateway:*:sessions' | while read -r k; do rcli DEL "$k" >/dev/null; done
        rcli --scan --pattern 'sp:pool:*' | while read -r k; do rcli DEL "$k" >/dev/null; done
    fi
    local sb cgs cg
    mapfile -t sb < <(sandbox_pids)
    if [ ${#sb[@]} -gt 0 ]; then
        mapfile -t cgs < <(sandbox_cgroups "${sb[@]}")
        # A paused sandbox is frozen: under cgroup v1 its processes die only once thawed.
        for cg in "${cgs[@]}"; do
            echo THAWED >"$cg/freezer.state" 2>/dev/null
            echo 0 >"$cg/cgroup.freeze" 2>/dev/null
        done
        kill -KILL "${sb[@]}" 2>/dev/null
        for _ in $(seq 100); do pids_alive "${sb[@]}" || break; sleep 0.1; done
        pids_alive "${sb[@]}" && say "sandbox processes still alive after 10 s: ${sb[*]}"
        for cg in "${cgs[@]}"; do rmdir "$cg" 2>/dev/null; done
    fi
    # The other controllers' groups of this run's sandboxes (v1: one directory per controller).
    local d id c
    for d in "$RUN"/sandboxes/sb-*; do
        [ -e "$d" ] || continue
        id=${d##*/}
        for c in memory pids cpu cpuacct freezer; do rmdir "/sys/fs/cgroup/$c/sandpipe/$id" 2>/dev/null; done
        rmdir "/sys/fs/cgroup/sandpipe/$id" 2>/dev/null
        # Its root (an image's overlay, docs/operations.md "Users") and its own disk (the
        # overlay's upper layer, "Limits") are mounted on the host: unmount first.
        if mountpoint -q "$d/root"; then umount -l "$d/root" 2>/dev/null; fi
        if mountpoint -q "$d/disk"; then umount -l "$d/disk" 2>/dev/null; fi
        rm -rf "$d"
    done
    # the host-profile sandboxes' /etc copies (gateway/sandbox/sandbox_etc.h): a tmpfs of their own
    if mountpoint -q "$RUN/sandboxes/.etc"; then umount -l "$RUN/sandboxes/.etc" 2>/dev/null; fi
    # netd once the sandboxes are gone (their links go with them; it then removes its rules)
    [ -n "$netd_pid" ] && stop_groups "$netd_pid"
    [ ${#pids[@]} -gt 0 ] && stop_groups "${pids[0]}"
    return 0
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap 'stop; exit 129' HUP

# The sandboxes' image: built once (a few minutes, progress shown), then reused as it is.
IMAGE=${SANDPIPE_IMAGE:-default}
[ "${SANDPIPE_PROVIDER:-bwrap}" = local ] && IMAGE=${SANDPIPE_IMAGE:-host} # no isolation, no image
if [ "$IMAGE" = default ] && ! "$B/sandpipe-image" resolve default >/dev/null; then
    say "building the sandboxes' image (once; SANDPIPE_IMAGE=host skips it)"
    SANDPIPE_EXECUTOR="$B/sandpipe-executor" "$B/sandpipe-image" build >/dev/null ||
        { say "image build failed: see above (SANDPIPE_IMAGE=host runs on the host's /usr)"; exit 1; }
fi
IMAGE_DIR=${SANDPIPE_IMAGE_DIR:-/var/lib/sandpipe/images}

start "$RUN/redis.log" redis-server redis/redis.conf --port "$REDIS_PORT" --dir "$RUN/redis" \
    --unixsocket "$RUN/redis.sock" --unixsocketperm 700 --aclfile "$RUN/redis/users.acl" --daemonize no
for _ in $(seq 100); do [ "$(rcli ping)" = PONG ] && break; sleep 0.05; done

# The sandboxes' network (docs/operations.md, "Network"): sandpipe-netd, root only. Without it
# every sandbox has loopback only, and a session asking for more is told why.
netd_args=()
if [ "$(id -u)" -eq 0 ] && [ "${SANDPIPE_NETD:-1}" != 0 ]; then
    setsid "$B/sandpipe-netd" --control "$RUN/netd.sock" --state-dir "$RUN/netd" \
        --table "${SANDPIPE_NETD_TABLE:-sandpipe}" --ifprefix "${SANDPIPE_NETD_IFPREFIX:-spn}" \
        --pool "${SANDPIPE_NETD_POOL:-10.88.0.0/16}" >"$RUN/netd.log" 2>&1 </dev/null &
    netd_pid=$!
    for _ in $(seq 100); do [ -S "$RUN/netd.sock" ] && break; sleep 0.05; done
    if [ -S "$RUN/netd.sock" ]; then
        netd_args=(--netd "$RUN/netd.sock" --network-default "${SANDPIPE_NETWORK_DEFAULT:-none}")
    else
        say "sandpipe-netd did not start (sandboxes get no network): $(tail -3 "$RUN/netd.log")"
    fi
else
    say "no network for sandboxes: sandpipe-netd needs root (SANDPIPE_NETD=0 also turns it off)"
fi

NGW=${SANDPIPE_GATEWAYS:-1}
case "$NGW" in '' | *[!0-9]* | 0) say "SANDPIPE_GATEWAYS must be a number from 1"; exit 2 ;; esac
gw_args=()
for i in $(seq "$NGW"); do
    port=$((GW_PORT + i - 1)) log=$RUN/gateway.log id=()
    if [ "$NGW" -gt 1 ]; then log=$RUN/gateway-$i.log id=(--id "gw-$(hostname)-$i"); fi
    # nginx reaches it over a unix socket (cheaper than loopback TCP) where the path can be one
    sock=$RUN/gateway-$i.sock unix=(--listen-unix "$sock") to="127.0.0.1:$port=unix:$sock"
    case "$sock" in *[!A-Za-z0-9._/-]*) unix=() to=127.0.0.1:$port ;; esac
    [ ${#sock} -lt 100 ] || unix=() to=127.0.0.1:$port
    start "$log" "$B/sandpipe-gateway" --listen "127.0.0.1:$port" "${unix[@]}" "${id[@]}" \
        --redis "unix:$RUN/redis.sock" --redis-user gateway --redis-password-file "$RUN/redis-gateway.password" \
        --provider "${SANDPIPE_PROVIDER:-bwrap}" \
        --state-dir "$RUN/sandboxes" --secret-file "$RUN/secret" --pool "${SANDPIPE_POOL:-2}" \
        --image "$IMAGE" --images "$IMAGE_DIR" "${netd_args[@]}"
    gw_args+=(--gateway "$to")
done
sleep 0.5
for i in $(seq "$NGW"); do
    kill -0 "${pids[$i]}" 2>/dev/null || { cat "$RUN"/gateway*.log; exit 1; }
done

start "$RUN/api.log" "$B/sandpipe-api" --socket "unix:$RUN/api.sock" --redis "unix:$RUN/redis.sock" \
    --redis-user api --redis-password-file "$RUN/redis-api.password" --secret-file "$RUN/secret" \
    --workers "$API_WORKERS" --images "$IMAGE_DIR"
# nginx keeps FastCGI connections open to the API, at most half of its workers over nginx's two
# workers, so kept (idle) connections never hold them all (nginx/render.sh --api-keepalive).
nginx/render.sh --prefix "$RUN/nginx" --api-socket "$RUN/api.sock" --secret-file "$RUN/secret" \
    --sandpipe "$B/sandpipe" --port "$HTTP_PORT" --preview-domain localhost \
    "${gw_args[@]}" --api-keepalive $((API_WORKERS / 4)) >/dev/null
start "$RUN/nginx.log" nginx -p "$RUN/nginx" -c "$RUN/nginx/nginx.conf"
sleep 0.5
kill -0 "${pids[NGW + 1]}" 2>/dev/null || { cat "$RUN/api.log"; exit 1; }
kill -0 "${pids[NGW + 2]}" 2>/dev/null || { cat "$RUN/nginx.log" "$RUN/nginx/logs/error.log"; exit 1; }
TOKEN=$("$B/sandpipe" token --secret-file "$RUN/secret" --sub dev --role admin --ttl 604800)
cat <<EOM

sandpipe is running on http://127.0.0.1:$HTTP_PORT  (logs in $RUN/*.log, $RUN/nginx/logs; $NGW gateway(s))
  Web IDE:       http://127.0.0.1:$HTTP_PORT/#token=$TOKEN
                 (the link signs this browser tab in; the token stays in the tab)
  REST API:      http://127.0.0.1:$HTTP_PORT/api/v1/   (docs/api.md)
  WebSocket API: ws://127.0.0.1:$HTTP_PORT/ws/control
  OpenHands:     http://127.0.0.1:$HTTP_PORT/runtime/{session}/
  Previews:      a port P of session S at http://P-S.localhost:$HTTP_PORT/ (its own origin) and
                 http://127.0.0.1:$HTTP_PORT/preview/S/P/ (docs/api.md, "Previews")
  OpenHands remote runtime API (SANDBOX_REMOTE_RUNTIME_API_URL): http://127.0.0.1:$HTTP_PORT/openhands
  E2B's SDKs:    export E2B_API_URL=http://127.0.0.1:$HTTP_PORT/e2b E2B_SANDBOX_URL=http://127.0.0.1:$HTTP_PORT E2B_API_KEY=$TOKEN
                 (docs/api.md, "E2B API"; each E2B sandbox is a session, shown live in the web IDE)
  Network:       ${netd_args:+sessions ask for it: {"network": true} (egress) or {"network": {"allow": ["pypi.org", "*.pythonhosted.org"]}}}${netd_args:-none for sandboxes (no sandpipe-netd)}
  token:         $TOKEN

  try:  scripts/ws-run.py $TOKEN 'uname -a; id; ls /workspace' --url ws://127.0.0.1:$HTTP_PORT
        curl -s -H "Authorization: Bearer $TOKEN" -X POST http://127.0.0.1:$HTTP_PORT/api/v1/sessions
Ctrl-C stops everything.
EOM
wait "${pids[1]}"
