/* preview_listen.c — the preview listener (preview_listen.h). */
#include "preview_listen.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "gw.h"
#include "preview_conn.h"
#include "preview_token.h"

static union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
    uv_stream_t stream;
} server;
static bool is_unix, public_allowed;
static int first_byte_s = PREVIEW_FIRST_BYTE_S;
static char bind_host[128], unix_path[108], adv_host[128], addr[192];
static int bind_port;
static uint8_t key[32];

int
preview_listen_config(const char *arg, const char *listen_host, const char *advertise)
{
    /* the advertised name of the main listener, without its port */
    snprintf(adv_host, sizeof adv_host, "%s", advertise);
    char *colon = strrchr(adv_host, ':');
    if (colon)
        *colon = '\0';
    if (arg && !strncmp(arg, "unix:", 5)) {
        if (strlen(arg + 5) == 0 || strlen(arg + 5) >= sizeof unix_path) {
            fprintf(stderr, "sandpipe-gateway: --preview-listen unix:PATH: bad path\n");
            return -1;
        }
        is_unix = true;
        snprintf(unix_path, sizeof unix_path, "%s", arg + 5);
        return 0;
    }
    const char *spec = arg ? arg : NULL;
    char host[128];
    int port = 0;
    if (spec) {
        const char *c = strrchr(spec, ':');
        char *end;
        long p = c ? strtol(c + 1, &end, 10) : -1;
        if (!c || c == spec || *end || p < 0 || p > 65535 || (size_t)(c - spec) >= sizeof host) {
            fprintf(stderr, "sandpipe-gateway: --preview-listen takes HOST:PORT or unix:PATH\n");
            return -1;
        }
        snprintf(host, sizeof host, "%.*s", (int)(c - spec), spec);
        port = (int)p;
    } else {
        snprintf(host, sizeof host, "%s", listen_host);
    }
    /* [v6] as the main listener writes it; a name: its first address, as --listen's */
    size_t hl = strlen(host);
    if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
        fprintf(stderr, "sandpipe-gateway: --preview-listen: %s does not resolve\n", host);
        return -1;
    }
    const void *a = res->ai_family == AF_INET6
                        ? (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr;
    inet_ntop(res->ai_family, a, bind_host, sizeof bind_host);
    freeaddrinfo(res);
    bind_port = port;
    return 0;
}

static void
on_connection(uv_stream_t *s, int status)
{
    if (status < 0)
        return;
    preview_conn_accept(s, is_unix);
}

static void
die(const char *what, int rc)
{
    GW_LOG("preview listener: %s: %s", what, uv_strerror(rc));
    exit(1);
}

void
preview_listen_start(void)
{
    if (preview_key_derive(g_gw.secret, g_gw.secret_len, key) < 0) {
        GW_LOG("preview listener: the secret is too short for preview tokens");
        exit(1);
    }
    int rc;
    if (is_unix) {
        uv_pipe_init(g_gw.loop, &server.pipe, 0);
        unlink(unix_path);
        if ((rc = uv_pipe_bind(&server.pipe, unix_path)) < 0)
            die(unix_path, rc);
        chmod(unix_path, 0666); /* nginx's worker user; every request needs the route key */
        snprintf(addr, sizeof addr, "unix:%s", unix_path);
    } else {
        struct sockaddr_storage sa;
        uv_tcp_init(g_gw.loop, &server.tcp);
        if (uv_ip4_addr(bind_host, bind_port, (struct sockaddr_in *)&sa) < 0 &&
            uv_ip6_addr(bind_host, bind_port, (struct sockaddr_in6 *)&sa) < 0)
            die(bind_host, UV_EINVAL);
        if ((rc = uv_tcp_bind(&server.tcp, (struct sockaddr *)&sa, 0)) < 0)
            die(bind_host, rc);
        int len = sizeof sa;
        uv_tcp_getsockname(&server.tcp, (struct sockaddr *)&sa, &len);
        int port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                  : ((struct sockaddr_in *)&sa)->sin_port);
        bool any = !strcmp(bind_host, "0.0.0.0") || !strcmp(bind_host, "::");
        const char *h = any ? adv_host : bind_host;
        bool v6 = strchr(h, ':') && h[0] != '[';
        snprintf(addr, sizeof addr, "%s%s%s:%d", v6 ? "[" : "", h, v6 ? "]" : "", port);
    }
    if ((rc = uv_listen(&server.stream, 511, on_connection)) < 0)
        die(addr, rc);
    GW_LOG("%s previews on %s", g_gw.cfg.id, addr);
}

const char *
preview_listen_addr(void)
{
    return addr;
}

const uint8_t *
preview_key(void)
{
    return key;
}

void
preview_set_public_allowed(bool on)
{
    public_allowed = on;
}

bool
preview_public_allowed(void)
{
    return public_allowed;
}

void
preview_set_first_byte_timeout(int seconds)
{
    first_byte_s = seconds;
}

int
preview_first_byte_timeout(void)
{
    return first_byte_s;
}
