#!/usr/bin/env bash
# Renders the nginx configuration for sandpipe into a prefix directory (pid, logs, temp paths
# all under it, so nginx needs no system configuration), then prints how to start it.
#   nginx/render.sh --prefix DIR --api-socket PATH --secret-file FILE [--sandpipe PATH]
#                   [--port 8080] [--host 127.0.0.1 (listen address;
#                   compose.yaml: 0.0.0.0 in its container)] [--gateway 127.0.0.1:8081 (repeat it
#                   for several gateways: each one's address as it advertises it, sandpipe-gateway
#                   --advertise; ADDR=unix:PATH: a gateway on this host, reached over its
#                   sandpipe-gateway --listen-unix PATH instead of TCP)]
#                   [--web-root DIR (default web/dist)] [--body-max 16m] [--upload-max 1g] [--rate 200]
#                   [--burst 400] [--addr-rate 5000] [--addr-burst 10000] [--workers 2]
#                   [--api-keepalive 0]
#                   [--tls [--tls-cert PEM --tls-key PEM]] [--frame-ancestors 'ORIGIN ...']
#                   [--preview-domain DOMAIN] [--preview-rate 400] [--preview-burst 1000]
# --secret-file: the gateways' JWT secret (their --secret-file). nginx's route lookups carry a key
# derived from it (X-SP-Route-Key, `sandpipe token --route-key`: a gateway answers a lookup
# without it 401), written into PREFIX/route_lookup.conf, mode 0600; the secret itself stays out
# of nginx's configuration. --sandpipe: the program that derives it (default build/release/sandpipe
# of this tree, else sandpipe on PATH).
# --rate N --burst M: requests/s and burst of each caller (a session named in the path, else the
# credential the route reads) and of each address for requests with no credential; 429 beyond.
# --addr-rate N --addr-burst M: every address's ceiling, whatever it sends (0: none, e.g. behind
# a proxy where every client has the proxy's address).
# --upload-max bounds streamed file uploads (match sandpipe-api --max-upload); --body-max every
# other request body.
# --api-keepalive N: FastCGI connections each nginx worker keeps open to sandpipe-api (0: one
# connection per request). A kept connection holds one API worker while idle, so N x --workers
# must stay well below sandpipe-api --workers (render.sh cannot check it): at most half.
# Saves a connect/accept per request: ~40 % off execute_action's p50 on a 2-core machine.
# --preview-domain DOMAIN: previews also at P-S.DOMAIN (port P of session S, each its own
# origin; "localhost" works on loopback without DNS: browsers and curl resolve *.localhost
# there). Without it, previews are served at /preview/S/P/ only. --preview-rate/--preview-burst:
# each session's previews (requests/s), apart from its API budget.
# --frame-ancestors 'https://wall.example.com https://*.intranet.example': the origins (CSP
# host sources, separated by spaces or commas; '*' for any) that may embed /watch/{id}, the
# read-only dashboard, in a frame: its Content-Security-Policy says frame-ancestors 'self' and
# them, and it has no X-Frame-Options. Default: none, /watch/ as every page (this origin only:
# frame-ancestors 'self', X-Frame-Options SAMEORIGIN); the other pages stay so with the option.
# --tls serves HTTPS on the port (plain HTTP sent to it is redirected, HSTS on every response)
# with the certificate chain and key given, or without them a self-signed certificate made here
# with openssl (DIR/tls/cert.pem, kept across renders).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PREFIX= API_SOCKET= SECRET_FILE= SANDPIPE= HOST=127.0.0.1 PORT=8080 GATEWAYS=() WEB_ROOT= BODY_MAX=16m
UPLOAD_MAX=1g
PREVIEW_DOMAIN= PREVIEW_RATE=400 PREVIEW_BURST=1000
RATE=200 BURST=400 ADDR_RATE=5000 ADDR_BURST=10000 WORKERS=2 API_KEEPALIVE=0 TLS=0 TLS_CERT= TLS_KEY=
FRAME_ANCESTORS=
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX=$2; shift ;;
    --api-socket) API_SOCKET=$2; shift ;;
    --secret-file) SECRET_FILE=$2; shift ;;
    --sandpipe) SANDPIPE=$2; shift ;;
    --port) PORT=$2; shift ;;
    --host) HOST=$2; shift ;;
    --gateway) GATEWAYS+=("$2"); shift ;;
    --web-root) WEB_ROOT=$2; shift ;;
    --body-max) BODY_MAX=$2; shift ;;
    --upload-max) UPLOAD_MAX=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --burst) BURST=$2; shift ;;
    --addr-rate) ADDR_RATE=$2; shift ;;
    --addr-burst) ADDR_BURST=$2; shift ;;
    --workers) WORKERS=$2; shift ;;
    --api-keepalive) API_KEEPALIVE=$2; shift ;;
    --tls) TLS=1 ;;
    --preview-domain) PREVIEW_DOMAIN=$2; shift ;;
    --preview-rate) PREVIEW_RATE=$2; shift ;;
    --preview-burst) PREVIEW_BURST=$2; shift ;;
    --tls-cert) TLS_CERT=$2; shift ;;
    --tls-key) TLS_KEY=$2; shift ;;
    --frame-ancestors) FRAME_ANCESTORS=$2; shift ;;
    *) echo "render.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
# The built web UI (make web), else a page saying how to build it.
if [ -z "$WEB_ROOT" ]; then
    WEB_ROOT=$ROOT/web/dist
    [ -f "$WEB_ROOT/index.html" ] || WEB_ROOT=$ROOT/web/fallback
fi
[ -n "$PREFIX" ] && [ -n "$API_SOCKET" ] && [ -n "$SECRET_FILE" ] ||
    { echo "usage: render.sh --prefix DIR --api-socket PATH --secret-file FILE [...]" >&2; exit 2; }
if [ -z "$SANDPIPE" ]; then
    SANDPIPE=$ROOT/build/release/sandpipe
    [ -x "$SANDPIPE" ] || SANDPIPE=sandpipe
fi
ROUTE_KEY=$("$SANDPIPE" token --secret-file "$SECRET_FILE" --route-key) ||
    { echo "render.sh: no route key from $SECRET_FILE (with $SANDPIPE)" >&2; exit 2; }
case "$ROUTE_KEY" in *[!0-9a-f]* | '') echo "render.sh: $SANDPIPE gave no route key" >&2; exit 2 ;; esac
if [ -n "$TLS_CERT$TLS_KEY" ] && { [ -z "$TLS_CERT" ] || [ -z "$TLS_KEY" ] || [ "$TLS" != 1 ]; }; then
    echo "render.sh: --tls-cert and --tls-key go together, with --tls" >&2
    exit 2
fi
if [ -n "$TLS_CERT" ]; then
    for f in "$TLS_CERT" "$TLS_KEY"; do
        [ -r "$f" ] || { echo "render.sh: cannot read $f" >&2; exit 2; }
    done
    TLS_CERT=$(cd "$(dirname "$TLS_CERT")" && pwd)/$(basename "$TLS_CERT")
    TLS_KEY=$(cd "$(dirname "$TLS_KEY")" && pwd)/$(basename "$TLS_KEY")
fi
mkdir -p "$PREFIX/logs" "$PREFIX/tmp"
PREFIX=$(cd "$PREFIX" && pwd)
USER_LINE=
[ "$(id -u)" -eq 0 ] && USER_LINE="user root root;"
LISTEN="$HOST:$PORT"
if [ "$TLS" = 1 ]; then
    LISTEN="$HOST:$PORT ssl"
    mkdir -p "$PREFIX/tls"
    if [ -z "$TLS_CERT" ] && [ ! -f "$PREFIX/tls/cert.pem" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=localhost" \
            -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
            -keyout "$PREFIX/tls/key.pem" -out "$PREFIX/tls/cert.pem" 2>/dev/null
        chmod 600 "$PREFIX/tls/key.pem"
    fi
fi
case "$API_KEEPALIVE" in '' | *[!0-9]*) echo "render.sh: --api-keepalive takes a number" >&2; exit 2 ;; esac
case "$PREVIEW_DOMAIN" in
*[!a-z0-9.-]* | .* | *. | *..*) echo "render.sh: --preview-domain takes a DNS name (lower case)" >&2; exit 2 ;;
esac
for n in "$RATE" "$BURST" "$ADDR_RATE" "$ADDR_BURST" "$PREVIEW_RATE" "$PREVIEW_BURST"; do
    case "$n" in '' | *[!0-9]*) echo "render.sh: --rate, --burst, --addr-rate, --addr-burst take numbers" >&2; exit 2 ;; esac
done
[ "$RATE" -gt 0 ] || { echo "render.sh: --rate must be above 0" >&2; exit 2; }
ADDR_ZONE_LINE= ADDR_LIMIT_LINE="# no ceiling per address (render.sh --addr-rate 0)"
if [ "$ADDR_RATE" -gt 0 ]; then
    ADDR_ZONE_LINE="limit_req_zone \$binary_remote_addr zone=sp_address:10m rate=${ADDR_RATE}r/s;"
    ADDR_LIMIT_LINE="limit_req zone=sp_address burst=$ADDR_BURST nodelay;"
fi
KEEPALIVE_LINE= KEEP_CONN=off
if [ "$API_KEEPALIVE" -gt 0 ]; then
    KEEPALIVE_LINE="keepalive $API_KEEPALIVE;"
    KEEP_CONN=on
fi
# Who may frame /watch/: each source a scheme://host[:port] (host may start with *.), a host,
# or '*'; nothing that could end the header's quoted string or the nginx directive.
WATCH_FRAME="# /watch/ is framed by this origin only, as every page (render.sh --frame-ancestors)"
if [ -n "$FRAME_ANCESTORS" ]; then
    sources=
    read -ra srcs <<<"${FRAME_ANCESTORS//,/ }" # (no glob: '*' stays '*')
    for src in "${srcs[@]}"; do
        [[ "$src" =~ ^(\*|(https?://)?(\*\.)?[A-Za-z0-9.-]+(:([0-9]+|\*))?)$ ]] ||
            { echo "render.sh: --frame-ancestors: not an origin: $src" >&2; exit 2; }
        sources="$sources $src"
    done
    [ -n "$sources" ] || { echo "render.sh: --frame-ancestors names no origin" >&2; exit 2; }
    WATCH_FRAME="# rendered by render.sh --frame-ancestors: who may embed /watch/ (no X-Frame-Options: it takes no list)
set \$sp_frame_ancestors \"'self'$sources\";
set \$sp_frame_options \"\";"
fi
[ ${#GATEWAYS[@]} -gt 0 ] || GATEWAYS=(127.0.0.1:8081)
for g in "${GATEWAYS[@]}"; do
    case "$g" in
    *=unix:*[!A-Za-z0-9._/-]* | *=unix: | =*) echo "render.sh: bad --gateway $g" >&2; exit 2 ;;
    *=unix:*) case "${g%%=*}" in *[!A-Za-z0-9.:_\[\]-]*) echo "render.sh: bad --gateway $g" >&2; exit 2 ;; esac ;;
    *[!A-Za-z0-9.:_\[\]-]* | '') echo "render.sh: bad --gateway $g" >&2; exit 2 ;;
    esac
done
# The gateways (nginx/sandpipe.conf.template says what each name is for). A lookup answers the
# owner's address: the maps turn a known one into its upstream (kept connections, over the unix
# socket where one was given); an address not listed here (a gateway started since) is proxied
# to as it is.
addr_of() { echo "${1%%=unix:*}"; }
server_of() { case "$1" in *=unix:*) echo "unix:${1#*=unix:}" ;; *) echo "$1" ;; esac; }
gateways_conf() {
    local g i=0
    echo "# rendered by nginx/render.sh from its --gateway options"
    echo "upstream sp_gateway {"
    for g in "${GATEWAYS[@]}"; do echo "    server $(server_of "$g");"; done
    echo "    keepalive 16;"
    echo "}"
    echo "upstream sp_gateway_ws {"
    for g in "${GATEWAYS[@]}"; do echo "    server $(server_of "$g");"; done
    echo "}"
    for g in "${GATEWAYS[@]}"; do
        printf 'upstream sp_gw_%d {\n    server %s;\n    keepalive 16;\n}\n' "$i" "$(server_of "$g")"
        printf 'upstream sp_gw_%d_ws {\n    server %s;\n}\n' "$i" "$(server_of "$g")"
        i=$((i + 1))
    done
    echo 'map $sp_gw_addr $sp_gw {'
    echo '    default $sp_gw_addr;'
    i=0
    for g in "${GATEWAYS[@]}"; do echo "    \"$(addr_of "$g")\" sp_gw_$i;"; i=$((i + 1)); done
    echo "}"
    echo 'map $sp_gw_addr $sp_gw_ws {'
    echo '    default $sp_gw_addr;'
    i=0
    for g in "${GATEWAYS[@]}"; do echo "    \"$(addr_of "$g")\" sp_gw_${i}_ws;"; i=$((i + 1)); done
    echo "}"
}
# upload_file's body is a form around the file: its limit leaves the form's framing room, so a
# file of exactly --upload-max goes through (the gateway bounds the file itself).
bytes_of() {
    local v=${1,,}
    case $v in
    *k) echo $((${v%k} * 1024)) ;;
    *m) echo $((${v%m} * 1048576)) ;;
    *g) echo $((${v%g} * 1073741824)) ;;
    *) echo $((v)) ;;
    esac
}
UPLOAD_FORM_MAX=$(($(bytes_of "$UPLOAD_MAX") + 1048576))
# Previews on their own origins (--preview-domain): the server block, the origin the gateways
# write into a port's URLs ({port} and {session} filled in), and the web IDE's frame-src.
PREVIEW_SERVER="# no --preview-domain: previews at /preview/S/P/ only"
PREVIEW_ORIGIN= PREVIEW_FRAME_SRC=
if [ -n "$PREVIEW_DOMAIN" ]; then
    PREVIEW_SERVER="include $PREFIX/envd_server.conf; include $PREFIX/preview_server.conf;"
    SCHEME=http DEF_PORT=80
    [ "$TLS" = 1 ] && SCHEME=https DEF_PORT=443
    PORT_SUFFIX=":$PORT"
    [ "$PORT" = "$DEF_PORT" ] && PORT_SUFFIX=
    PREVIEW_ORIGIN="$SCHEME://{port}-{session}.$PREVIEW_DOMAIN$PORT_SUFFIX"
    PREVIEW_FRAME_SRC="$SCHEME://*.$PREVIEW_DOMAIN$PORT_SUFFIX"
fi
# its dots escaped for the server_name regex, and again for render's sed
PREVIEW_DOMAIN_RE=$(printf '%s' "$PREVIEW_DOMAIN" | sed 's/\./\\\\./g')
render() {
    sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@API_SOCKET@|$API_SOCKET|g" -e "s|@LISTEN@|$LISTEN|g" \
        -e "s|@WEB_ROOT@|$WEB_ROOT|g" -e "s|@BODY_MAX@|$BODY_MAX|g" \
        -e "s|@UPLOAD_MAX@|$UPLOAD_MAX|g" -e "s|@UPLOAD_FORM_MAX@|$UPLOAD_FORM_MAX|g" \
        -e "s|@RATE@|$RATE|g" -e "s|@BURST@|$BURST|g" -e "s|@WORKERS@|$WORKERS|g" \
        -e "s|@TLS_CERT@|${TLS_CERT:-$PREFIX/tls/cert.pem}|g" \
        -e "s|@TLS_KEY@|${TLS_KEY:-$PREFIX/tls/key.pem}|g" \
        -e "s|@API_KEEPALIVE_LINE@|$KEEPALIVE_LINE|g" -e "s|@KEEP_CONN@|$KEEP_CONN|g" \
        -e "s|@ADDR_ZONE_LINE@|$ADDR_ZONE_LINE|g" -e "s|@ADDR_LIMIT_LINE@|$ADDR_LIMIT_LINE|g" \
        -e "s|@PREVIEW_SERVER@|$PREVIEW_SERVER|g" -e "s|@PREVIEW_ORIGIN@|$PREVIEW_ORIGIN|g" \
        -e "s|@PREVIEW_FRAME_SRC@|$PREVIEW_FRAME_SRC|g" -e "s|@PREVIEW_DOMAIN_RE@|$PREVIEW_DOMAIN_RE|g" \
        -e "s|@PREVIEW_DOMAIN@|$PREVIEW_DOMAIN|g" -e "s|@PREVIEW_RATE@|$PREVIEW_RATE|g" \
        -e "s|@PREVIEW_BURST@|$PREVIEW_BURST|g" -e "s|@USER_LINE@|$USER_LINE|g" "$1"
}
render "$HERE/sandpipe.conf.template" >"$PREFIX/nginx.conf"
render "$HERE/fastcgi.conf.template" >"$PREFIX/fastcgi.conf"
render "$HERE/web_headers.conf.template" >"$PREFIX/web_headers.conf"
for f in ws_proxy http_proxy routed_errors gateway_uri limits preview_lookup json_errors envd_locations; do render "$HERE/$f.conf.template" >"$PREFIX/$f.conf"; done
if [ -n "$PREVIEW_DOMAIN" ]; then
    render "$HERE/preview_server.conf.template" >"$PREFIX/preview_server.conf"
    render "$HERE/envd_server.conf.template" >"$PREFIX/envd_server.conf"
else
    rm -f "$PREFIX/preview_server.conf" "$PREFIX/envd_server.conf"
fi
# the route key: readable by whoever starts nginx (its master reads the configuration) alone
(umask 077 && rm -f "$PREFIX/route_lookup.conf" &&
    render "$HERE/route_lookup.conf.template" | sed "s|@ROUTE_KEY@|$ROUTE_KEY|g" >"$PREFIX/route_lookup.conf" &&
    rm -f "$PREFIX/preview_proxy.conf" &&
    render "$HERE/preview_proxy.conf.template" | sed "s|@ROUTE_KEY@|$ROUTE_KEY|g" >"$PREFIX/preview_proxy.conf")
gateways_conf >"$PREFIX/gateways.conf"
printf '%s\n' "$WATCH_FRAME" >"$PREFIX/watch_frame.conf"
if [ "$TLS" = 1 ]; then
    render "$HERE/sandpipe-tls.conf.template" >"$PREFIX/tls.conf"
else
    printf '%s\n' "# plain HTTP (render.sh --tls for HTTPS): no HSTS header" 'set $sp_hsts "";' \
        >"$PREFIX/tls.conf"
fi
echo "$PREFIX/nginx.conf"
