#!/usr/bin/env bash
# Makes sure a Docker daemon answers (the Docker provider's tests and `sandpipe image build
# --docker` need one): uses the running one, else starts dockerd (root, Debian's docker.io:
# overlay2, logs in /var/log/sandpipe-dockerd.log) and waits for it, at most 60 s. Exits non-zero
# with the reason when there is none: the Docker tests then fail, they are never skipped.
set -uo pipefail
timeout 10 docker version >/dev/null 2>&1 && exit 0
command -v dockerd >/dev/null || { echo "dockerd-up: no dockerd (apt-get install docker.io)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "dockerd-up: starting dockerd needs root" >&2; exit 1; }
echo "dockerd-up: starting dockerd (log: /var/log/sandpipe-dockerd.log)" >&2
setsid dockerd >>/var/log/sandpipe-dockerd.log 2>&1 </dev/null &
for _ in $(seq 120); do
    timeout 5 docker version >/dev/null 2>&1 && exit 0
    sleep 0.5
done
echo "dockerd-up: dockerd did not answer within 60 s: $(tail -5 /var/log/sandpipe-dockerd.log)" >&2
exit 1
