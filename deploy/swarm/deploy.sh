#!/usr/bin/env bash
# Deploys (or updates) sandpipe's Swarm stack from a manager node:
#   deploy/swarm/deploy.sh [STACK]            (default name: sandpipe)
# First makes the secrets that are missing in $SANDPIPE_SWARM_DIR (default run/swarm; never
# overwritten): the JWT secret, Redis' passwords (users gateway, api, replica, sentinel) and the
# sentinels' own. Swarm configs cannot change in place, so the scripts' configs are named after
# their content: an edited script deploys as a new config, and every task that mounts it starts
# again (ha.sh: the Redis nodes and the sentinels together). The stack's image must be on every
# node already (images.sh). Environment: SANDPIPE_PORT (8088), SANDPIPE_FRONTS (1),
# SANDPIPE_POOL (2), SANDPIPE_STACK_IMAGE, SANDPIPE_GATEWAY_PREFIX (gw), SANDPIPE_STATE_DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
stack=${1:-sandpipe}
export SANDPIPE_SWARM_DIR=${SANDPIPE_SWARM_DIR:-$ROOT/run/swarm}
SANDPIPE=${SANDPIPE:-$ROOT/build/release/sandpipe}
[ -x "$SANDPIPE" ] || SANDPIPE=sandpipe
mkdir -p "$SANDPIPE_SWARM_DIR"
chmod 700 "$SANDPIPE_SWARM_DIR"
d=$SANDPIPE_SWARM_DIR
[ -f "$d/secret" ] || "$SANDPIPE" token --secret-file "$d/secret" --generate >/dev/null
"$SANDPIPE" redis-acl --generate --dir "$d" --template "$ROOT/redis/users.acl"
[ -f "$d/sentinel.password" ] || (umask 077 && openssl rand -hex 32 >"$d/sentinel.password")
# The gateway's bind of /var/lib/sandpipe needs it on this node (every other node: images.sh).
mkdir -p /var/lib/sandpipe
# The three Redis servers go to three nodes (stack.yml's constraints): each sandpipe.redis-N
# label is put on the node that holds the fewest so far, once (a later deploy keeps it, and the
# server's volume on that node). One node: all three there.
redis_labels() { docker node inspect -f '{{range $k, $v := .Spec.Labels}}{{$k}} {{end}}' "$1"; }
mapfile -t nodes < <(docker node ls --format '{{.ID}} {{.Status}} {{.Availability}}' |
    awk '$2 == "Ready" && $3 == "Active" {print $1}')
for i in 1 2 3; do
    best= fewest=4
    for n in "${nodes[@]}"; do
        labels=$(redis_labels "$n")
        case " $labels" in *" sandpipe.redis-$i "*) best= && break ;; esac
        held=$( (grep -o 'sandpipe\.redis-[0-9]' <<<"$labels" || true) | wc -l)
        if [ "$held" -lt "$fewest" ]; then best=$n fewest=$held; fi
    done
    if [ -n "$best" ]; then
        docker node update --label-add "sandpipe.redis-$i=true" "$best" >/dev/null
    fi
done
export SANDPIPE_CONFIG_VERSION SANDPIPE_STACK=$stack
SANDPIPE_CONFIG_VERSION=$(cat "$HERE"/{front,gateway,ha}.sh "$ROOT/redis/users.acl" |
    sha256sum | cut -c1-12)
exec docker stack deploy --resolve-image never -c "$HERE/stack.yml" "$stack"
