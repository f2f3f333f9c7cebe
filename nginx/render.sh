#!/usr/bin/env bash
# Renders the nginx configuration for sandpipe into a prefix directory (pid, logs, temp paths
# all under it, so nginx needs no system configuration), then prints how to start it.
#   nginx/render.sh --prefix DIR --api-socket PATH [--port 8080] [--gateway 127.0.0.1:8081]
#                   [--web-root DIR] [--body-max 16m] [--rate 200] [--burst 400]
#                   [--workers 2] [--tls]
# --tls serves HTTPS on the port with a self-signed certificate made here with openssl
# (DIR/tls/cert.pem, kept across renders).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PREFIX= API_SOCKET= PORT=8080 GATEWAY=127.0.0.1:8081 WEB_ROOT=$ROOT/web BODY_MAX=16m
RATE=200 BURST=400 WORKERS=2 TLS=0
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX=$2; shift ;;
    --api-socket) API_SOCKET=$2; shift ;;
    --port) PORT=$2; shift ;;
    --gateway) GATEWAY=$2; shift ;;
    --web-root) WEB_ROOT=$2; shift ;;
    --body-max) BODY_MAX=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --burst) BURST=$2; shift ;;
    --workers) WORKERS=$2; shift ;;
    --tls) TLS=1 ;;
    *) echo "render.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$PREFIX" ] && [ -n "$API_SOCKET" ] || { echo "usage: render.sh --prefix DIR --api-socket PATH [...]" >&2; exit 2; }
mkdir -p "$PREFIX/logs" "$PREFIX/tmp"
PREFIX=$(cd "$PREFIX" && pwd)
USER_LINE=
[ "$(id -u)" -eq 0 ] && USER_LINE="user root root;"
LISTEN="127.0.0.1:$PORT"
if [ "$TLS" = 1 ]; then
    LISTEN="127.0.0.1:$PORT ssl"
    mkdir -p "$PREFIX/tls"
    if [ ! -f "$PREFIX/tls/cert.pem" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=localhost" \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
            -keyout "$PREFIX/tls/key.pem" -out "$PREFIX/tls/cert.pem" 2>/dev/null
        chmod 600 "$PREFIX/tls/key.pem"
    fi
fi
render() {
    sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@API_SOCKET@|$API_SOCKET|g" -e "s|@LISTEN@|$LISTEN|g" \
        -e "s|@GATEWAY@|$GATEWAY|g" -e "s|@WEB_ROOT@|$WEB_ROOT|g" -e "s|@BODY_MAX@|$BODY_MAX|g" \
        -e "s|@RATE@|$RATE|g" -e "s|@BURST@|$BURST|g" -e "s|@WORKERS@|$WORKERS|g" \
        -e "s|@USER_LINE@|$USER_LINE|g" "$1"
}
render "$HERE/sandpipe.conf.template" >"$PREFIX/nginx.conf"
render "$HERE/fastcgi.conf.template" >"$PREFIX/fastcgi.conf"
if [ "$TLS" = 1 ]; then
    render "$HERE/sandpipe-tls.conf.template" >"$PREFIX/tls.conf"
else
    echo "# plain HTTP (render.sh --tls for HTTPS)" >"$PREFIX/tls.conf"
fi
echo "$PREFIX/nginx.conf"
