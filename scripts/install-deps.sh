#!/usr/bin/env bash
# Installs what building, running and testing sandpipe need (Debian 12). Idempotent: installs
# only what is missing. Needs root (or sudo).
set -euo pipefail
PKGS=(build-essential pkg-config git clang libclang-rt-14-dev clang-format cppcheck
      libjson-c-dev libcmocka-dev libuv1-dev libwebsockets-dev libwebsockets-evlib-uv
      libhiredis-dev libfcgi-dev libssl-dev zlib1g-dev libseccomp-dev libmnl-dev libnftables-dev nftables iproute2
      bash procps bc python3 strace curl bubblewrap e2fsprogs mount redis-server nginx openssl
      debootstrap docker.io docker-compose libcurl4-openssl-dev # images; Docker provider
      nodejs npm chromium) # the web UI's build (npm) and its browser tests (chromium)
PKGS+=(libzmq3-dev python3-ipykernel python3-matplotlib) # the IPython plugin (plugins/jupyter/)
PKGS+=(websocketd) # make bench: the peer of the gateway's terminals (bench/run_routing.sh)
PKGS+=(python3-yaml) # test_k8s_manifests: reads deploy/kubernetes/ (its schemas: npm, tests/k8s/)
# A Node.js that bundles its own npm (e.g. one whose nodejs package conflicts with Debian's npm)
# serves as well: then npm is not asked for, here nor in the list .ci/run installs.
if command -v npm >/dev/null; then
    for i in "${!PKGS[@]}"; do [ "${PKGS[$i]}" = npm ] && unset "PKGS[$i]"; done
fi
if [ "${1:-}" = "--list" ]; then # the package list, for .ci/run
    echo "${PKGS[@]}"
    exit 0
fi
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
