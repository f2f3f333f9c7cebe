#!/usr/bin/env bash
# Puts the stack's images on every node, without a registry: builds the stack's image here
# (images/stack.Dockerfile, FROM the runtime image: `make`, `make web` and `sandpipe image build
# --docker` first), then streams it and the sessions' runtime image into each other node's Docker
# (docker save | docker -H NODE load: one pass per node, only layers it lacks are written).
#   deploy/swarm/images.sh [ssh://root@node2 ssh://root@node3 ...]
# NODE is anything `docker -H` takes (ssh://user@host needs that user in the node's docker group
# or root). Each node also gets /var/lib/sandpipe, the gateway's bind source.
# Environment: SANDPIPE_STACK_IMAGE (sandpipe/stack:local), SANDPIPE_RUNTIME_IMAGE
# (sandpipe/runtime:default).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
stack=${SANDPIPE_STACK_IMAGE:-sandpipe/stack:local}
runtime=${SANDPIPE_RUNTIME_IMAGE:-sandpipe/runtime:default}
docker build -q -t "$stack" -f "$ROOT/images/stack.Dockerfile" "$ROOT" >/dev/null
for node in "$@"; do
    echo "images.sh: $stack and $runtime to $node" >&2
    docker save "$stack" "$runtime" | docker -H "$node" load -q
    docker -H "$node" run --rm -v /var/lib:/host "$stack" mkdir -p /host/sandpipe
done
