#!/usr/bin/env bash
# setup.sh — what a runtime image adds to its base: the packages an agent expects, the user
# `openhands` (uid 1000, home /home/openhands, passwordless sudo), /workspace, /opt/sandpipe, and
# the agent's own Python environment (PYTHON_ENV, below).
# Its text is part of the image's lock hash (images/sandpipe-image): change it, and the next
# build makes a new base.
#
#   setup.sh --packages [build-essential]    the package list, comma-separated (debootstrap)
#   setup.sh --chroot ROOTFS [build-essential]   sets ROOTFS up (as root)
set -euo pipefail

# libjson-c5: the executor's one library; libasan8/libubsan1: an ASan build of it.
PACKAGES=(bash coreutils git curl ca-certificates python3 python-is-python3 python3-pip
          python3-venv procps sudo less vim-tiny ripgrep tmux locales-all libjson-c5
          libasan8 libubsan1)
# The plugins' (plugins/, scripts/install-deps.sh): the IPython kernel and matplotlib, the
# browser's Chromium (/usr/lib/chromium/chromium, run headless by sandpipe-browser) and a font
# for its pages and screenshots. Installed with apt in the chroot: debootstrap's own resolver
# does not configure them.
PLUGIN_PACKAGES=(libzmq5 python3-ipykernel python3-matplotlib chromium fonts-dejavu-core)
AGENT_USER=openhands
AGENT_UID=1000
# The agent's Python: a venv of Debian's python3 that sees Debian's packages (ipykernel,
# matplotlib) and is the agent's own, so `pip install` works where Debian's python answers
# "externally-managed-environment" (PEP 668). Providers put its bin/ first on PATH and set
# VIRTUAL_ENV (gateway/sandbox/provider_env.c); the IPython kernel runs its python.
PYTHON_ENV=/opt/sandpipe/venv

case ${1:-} in
--packages)
    extra=${2:-}
    list=("${PACKAGES[@]}")
    [ -n "$extra" ] && list+=("$extra")
    (IFS=,; echo "${list[*]}")
    ;;
--chroot)
    root=${2:?rootfs}
    extra=${3:-}
    inroot() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
    # A base that is not debootstrap's: install what is missing where it has apt.
    missing=()
    for p in "${PACKAGES[@]}" "${PLUGIN_PACKAGES[@]}" $extra; do
        inroot dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ -x "$root/usr/bin/apt-get" ]; then
            cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
            inroot apt-get update -qq
            echo "apt-get install ${missing[*]}"
            inroot apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        else
            echo "warning: no apt-get in this base; not installed: ${missing[*]}"
        fi
    fi
    if ! inroot getent passwd "$AGENT_USER" >/dev/null; then
        # uid 1000 may be taken by the base's own user: that user is renamed to ours.
        old=$(inroot getent passwd "$AGENT_UID" | cut -d: -f1 || true)
        if [ -n "$old" ]; then inroot userdel -r "$old" 2>/dev/null || inroot userdel "$old"; fi
        inroot useradd -m -u "$AGENT_UID" -U -s /bin/bash -d "/home/$AGENT_USER" "$AGENT_USER"
    fi
    mkdir -p "$root/etc/sudoers.d"
    echo "$AGENT_USER ALL=(ALL) NOPASSWD:ALL" >"$root/etc/sudoers.d/$AGENT_USER"
    chmod 0440 "$root/etc/sudoers.d/$AGENT_USER"
    mkdir -p "$root/workspace" "$root/opt/sandpipe/bin" "$root/opt/sandpipe/plugins"
    chown "$AGENT_UID:$AGENT_UID" "$root/workspace"
    # The sudo of a sandbox whose user namespace maps one uid (bwrap): see the file's header.
    install -m 0755 "$(dirname "$0")/sudo-shim" "$root/opt/sandpipe/bin/sudo" 2>/dev/null ||
        install -m 0755 "$(dirname "$0")/sandpipe-image-sudo-shim" "$root/opt/sandpipe/bin/sudo"
    : >"$root/opt/sandpipe/sandpipe-executor" # the executor's mount point
    if [ ! -x "$root$PYTHON_ENV/bin/python" ]; then
        # pip from Debian's own wheel (ensurepip): no index is needed
        inroot python3 -m venv --system-site-packages "$PYTHON_ENV"
    fi
    # -h: bin/python is a link to /usr/bin/python3, which is the host's outside the chroot
    chown -hR "$AGENT_UID:$AGENT_UID" "$root$PYTHON_ENV"
    printf 'sandbox\n' >"$root/etc/hostname"
    printf '127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
    rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/archives/"*.deb
    inroot python --version
    inroot "$PYTHON_ENV/bin/python" -c 'import ipykernel' # Debian's, through the venv: the kernel's
    inroot "$PYTHON_ENV/bin/pip" --version
    ;;
*)
    echo "usage: setup.sh --packages [EXTRA] | --chroot ROOTFS [EXTRA]" >&2
    exit 2
    ;;
esac
