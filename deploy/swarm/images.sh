#!/usr/bin/env bash
# Puts the stack's images on every node, without a registry: builds the stack's image here
# (images/stack.Dockerfile, FROM the runtime image: `make`, `make web` and `sandpipe image build
# --docker` first), then streams into each other node's Docker and image store
#   - the stack's image and the sessions' runtime image (docker save | docker -H NODE load: only
#     the layers the node lacks are written);
#   - the runtime image's rootfs form and its name (tar of the store's names/NAME and rootfs/TAG,
#     unpacked into the node's /var/lib/sandpipe/images by a container of the stack's image): a
#     gateway resolves an image by name in its node's store, and its sandboxes' homes start
#     from that rootfs's /etc/skel, also under the Docker provider.
#   deploy/swarm/images.sh [ssh://root@node2 ssh://root@node3 ...]
# NODE is anything `docker -H` takes (ssh://user@host: that user in the node's docker group, or
# root). Environment: SANDPIPE_STACK_IMAGE (sandpipe/stack:local), SANDPIPE_IMAGE_NAME (default:
# the sessions' image, sandpipe/runtime:NAME), SANDPIPE_IMAGE_DIR (/var/lib/sandpipe/images).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
stack=${SANDPIPE_STACK_IMAGE:-sandpipe/stack:local}
name=${SANDPIPE_IMAGE_NAME:-default}
store=${SANDPIPE_IMAGE_DIR:-/var/lib/sandpipe/images}
docker build -q -t "$stack" -f "$ROOT/images/stack.Dockerfile" "$ROOT" >/dev/null
rootfs=$(readlink -f "$store/names/$name") ||
    { echo "images.sh: no image $name in $store (sandpipe image build --docker)" >&2; exit 1; }
for node in "$@"; do
    echo "images.sh: $stack, sandpipe/runtime:$name and its rootfs to $node" >&2
    docker save "$stack" "sandpipe/runtime:$name" | docker -H "$node" load -q
    tar -C "$store" -cf - "names/$name" "rootfs/$(basename "$rootfs")" |
        docker -H "$node" run -i --rm -v /var/lib:/host "$stack" \
            sh -c 'mkdir -p /host/sandpipe/images && tar -C /host/sandpipe/images -xpf -'
done
