#!/bin/bash
# The Swarm stack's front (deploy/swarm/stack.yml): nginx and the REST API together in one task,
# replicated on any node. sandpipe-api speaks FastCGI on a unix socket only, so each nginx has
# its own API beside it, and both scale together; the task ends (and Swarm starts another) when
# either process ends. Arguments: the API's Redis options (--redis ... as the gateway's).
#
# nginx reaches a session's owner at the address the owner advertises (its task's address, from
# the route lookup), and does the lookup itself at any gateway of its upstream, whose addresses
# nginx resolves once, at start: so the gateways' task addresses (`tasks.gateway`) are watched
# every second and nginx re-rendered and reloaded when they change (a gateway task started
# again, a node joined or lost).
set -euo pipefail
mkdir -p /run/sandpipe/api /tmp/nginx
sandpipe-api --socket unix:/run/sandpipe/api/api.sock "$@" \
    --redis-user api --redis-password-file /run/secrets/redis-api.password \
    --secret-file /run/secrets/secret --workers "${SANDPIPE_API_WORKERS:-4}" &
api=$!

gateways() { getent ahostsv4 tasks.gateway | awk '{print $1}' | sort -u | tr '\n' ' '; }
render() {
    local args=() g
    for g in $1; do args+=(--gateway "$g:8081"); done
    [ ${#args[@]} -gt 0 ] || args=(--gateway 127.0.0.1:8081) # none yet: every lookup fails
    /opt/sandpipe/nginx/render.sh --prefix /tmp/nginx --api-socket /run/sandpipe/api/api.sock \
        --secret-file /run/secrets/secret --host 0.0.0.0 --port 8080 "${args[@]}" \
        --web-root /opt/sandpipe/web >/dev/null
}
seen=$(gateways || true)
render "$seen"
nginx -p /tmp/nginx -c /tmp/nginx/nginx.conf &
nginx=$!
while kill -0 "$api" 2>/dev/null && kill -0 "$nginx" 2>/dev/null; do
    sleep 1
    now=$(gateways || true)
    [ "$now" = "$seen" ] && continue
    # what failed (a full disk, a bad render) is tried again the next second
    render "$now" && nginx -p /tmp/nginx -c /tmp/nginx/nginx.conf -s reload || continue
    echo "front.sh: gateways now at ${now:-nothing}: nginx reloaded" >&2
    seen=$now
done
echo "front.sh: nginx or sandpipe-api ended: the task ends" >&2
kill "$api" "$nginx" 2>/dev/null || true
exit 1
