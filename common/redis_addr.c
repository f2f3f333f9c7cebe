/* redis_addr.c — the --redis address and a sentinel's answer, checked (redis_addr.h). */
#include "redis_addr.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SENTINEL_SCHEME "sentinel://"

static bool
host_char_ok(char c, bool v6)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_' || (v6 && c == ':');
}

static bool
host_ok(const char *h, size_t n, bool v6)
{
    if (n == 0 || n > REDIS_HOST_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!host_char_ok(h[i], v6))
            return false;
    return true;
}

/* Digits only, 1..65535; -1 otherwise. */
static int
port_parse(const char *p, size_t n)
{
    if (n == 0 || n > 5)
        return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v >= 1 && v <= 65535 ? v : -1;
}

/* "host[:port]" or "[v6][:port]" (n bytes at s) into e; a missing port is def. */
static int
endpoint_parse(const char *s, size_t n, int def, redis_endpoint_t *e)
{
    const char *host = s, *port = NULL;
    size_t hlen, plen = 0;
    bool v6 = n > 0 && s[0] == '[';
    if (v6) {
        const char *close = memchr(s, ']', n);
        if (!close)
            return -1;
        host = s + 1;
        hlen = (size_t)(close - host);
        size_t rest = n - (size_t)(close + 1 - s);
        if (rest > 0) {
            if (close[1] != ':')
                return -1;
            port = close + 2;
            plen = rest - 1;
        }
    } else {
        const char *colon = memchr(s, ':', n);
        hlen = colon ? (size_t)(colon - s) : n;
        if (colon) {
            port = colon + 1;
            plen = n - hlen - 1;
        }
    }
    if (!host_ok(host, hlen, v6))
        return -1;
    e->port = port ? port_parse(port, plen) : def;
    if (e->port < 0)
        return -1;
    memcpy(e->host, host, hlen);
    e->host[hlen] = '\0';
    return 0;
}

static int
sentinel_parse(const char *s, redis_addr_t *out, err_t *err, const char *whole)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return err_set(err, ERR_BAD_REQ, "--redis %.80s: no /NAME after the sentinels", whole);
    size_t mlen = strlen(slash + 1);
    if (mlen == 0 || mlen > REDIS_MASTER_MAX)
        return err_set(err, ERR_BAD_REQ, "--redis %.80s: the primary's name is 1 to %d characters",
                       whole, REDIS_MASTER_MAX);
    for (size_t i = 0; i < mlen; i++)
        if (!host_char_ok(slash[1 + i], false))
            return err_set(err, ERR_BAD_REQ,
                           "--redis %.80s: the primary's name is made of A-Z a-z 0-9 . _ -", whole);
    memcpy(out->master, slash + 1, mlen + 1);
    for (const char *p = s; p < slash;) {
        const char *comma = memchr(p, ',', (size_t)(slash - p));
        const char *end = comma ? comma : slash;
        if (out->nsentinels == REDIS_SENTINELS_MAX)
            return err_set(err, ERR_BAD_REQ, "--redis %.80s: at most %d sentinels", whole,
                           REDIS_SENTINELS_MAX);
        if (endpoint_parse(p, (size_t)(end - p), REDIS_SENTINEL_PORT,
                           &out->sentinels[out->nsentinels]) < 0)
            return err_set(err, ERR_BAD_REQ, "--redis %.80s: sentinel \"%.*s\" is not HOST:PORT",
                           whole, (int)((end - p) > 80 ? 80 : (end - p)), p);
        out->nsentinels++;
        p = comma ? comma + 1 : slash;
        if (comma && p == slash)
            return err_set(err, ERR_BAD_REQ, "--redis %.80s: an empty sentinel", whole);
    }
    if (out->nsentinels == 0)
        return err_set(err, ERR_BAD_REQ, "--redis %.80s: no sentinel", whole);
    return 0;
}

int
redis_addr_parse(const char *s, redis_addr_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!strncmp(s, "unix:", 5)) {
        size_t n = strlen(s + 5);
        if (n == 0 || n >= sizeof out->path)
            return err_set(err, ERR_BAD_REQ, "--redis %.80s: a socket path of 1 to %zu bytes", s,
                           sizeof out->path - 1);
        out->kind = REDIS_ADDR_UNIX;
        memcpy(out->path, s + 5, n + 1);
        return 0;
    }
    if (!strncmp(s, SENTINEL_SCHEME, strlen(SENTINEL_SCHEME))) {
        out->kind = REDIS_ADDR_SENTINEL;
        int rc = sentinel_parse(s + strlen(SENTINEL_SCHEME), out, err, s);
        if (rc < 0)
            memset(out, 0, sizeof *out);
        return rc;
    }
    out->kind = REDIS_ADDR_TCP;
    if (endpoint_parse(s, strlen(s), REDIS_PORT_DEFAULT, &out->tcp) < 0) {
        memset(out, 0, sizeof *out);
        return err_set(err, ERR_BAD_REQ,
                       "--redis %.80s: not unix:/path, host:port nor "
                       "sentinel://HOST:PORT[,HOST:PORT...]/NAME",
                       s);
    }
    return 0;
}

int
redis_endpoint_from_reply(const char *host, size_t hlen, const char *port, size_t plen,
                          redis_endpoint_t *out, err_t *err)
{
    if (!host_ok(host, hlen, true))
        return err_set(err, ERR_PROTO, "the sentinel named no valid host (%zu bytes)", hlen);
    int p = port_parse(port, plen);
    if (p < 0)
        return err_set(err, ERR_PROTO, "the sentinel named no valid port (%.*s)",
                       (int)(plen > 16 ? 16 : plen), port);
    memcpy(out->host, host, hlen);
    out->host[hlen] = '\0';
    out->port = p;
    return 0;
}

const char *
redis_endpoint_str(const redis_endpoint_t *e, char *buf, size_t cap)
{
    bool v6 = strchr(e->host, ':') != NULL;
    snprintf(buf, cap, "%s%s%s:%d", v6 ? "[" : "", e->host, v6 ? "]" : "", e->port);
    return buf;
}
