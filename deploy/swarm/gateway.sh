#!/bin/sh
# The Swarm stack's gateway (deploy/swarm/stack.yml, mode global: one per node), on the node's
# Docker socket. Its id and host id come from the node (SANDPIPE_GATEWAY_ID, SANDPIPE_HOST_ID:
# Swarm's {{.Node.Hostname}} and {{.Node.ID}} templates), so the task Swarm starts again on that
# node, after a kill or when the node is back, is the same gateway: it re-attaches the sessions
# of its set whose sandboxes still run (gateway/session_restore.c). The state directory is the
# node's, at the same path as on the node (Docker resolves a sandbox's binds there). It
# advertises its task's address on the stack's network, where nginx and the API reach it.
# Arguments: the gateway's Redis options (--redis ...).
set -eu
addr=$(hostname -i | cut -d' ' -f1)
state=${SANDPIPE_STATE_DIR:-/var/lib/sandpipe/swarm}
mkdir -p "$state"
exec sandpipe-gateway --listen 0.0.0.0:8081 --advertise "$addr:8081" "$@" \
    --id "$SANDPIPE_GATEWAY_ID" --host-id "$SANDPIPE_HOST_ID" \
    --redis-user gateway --redis-password-file /run/secrets/redis-gateway.password \
    --provider docker --image default --images /var/lib/sandpipe/images \
    --state-dir "$state" --secret-file /run/secrets/secret \
    --pool "${SANDPIPE_POOL:-2}" --disk 0
