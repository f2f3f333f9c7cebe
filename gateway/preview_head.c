/* preview_head.c — the preview listener's request head, read and rewritten (preview_head.h). */
#include "preview_head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int
fail(err_t *err, int code, const char *msg)
{
    err_set(err, code, "%s", msg);
    return -1;
}

static bool
token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* A credential as it came (n bytes at p); one that cannot be a token is not kept, and says so
 * by the refusal the listener gives for "no credential". */
static void
add_token(preview_head_t *h, const char *p, size_t n, preview_from_t from)
{
    if (h->ntokens >= PREVIEW_TOKENS_MAX || n == 0 || n >= PREVIEW_TOKEN_MAX)
        return;
    for (size_t i = 0; i < n; i++)
        if (!token_char(p[i]))
            return;
    memcpy(h->tokens[h->ntokens].tok, p, n);
    h->tokens[h->ntokens].tok[n] = '\0';
    h->tokens[h->ntokens].from = from;
    h->ntokens++;
}

/* X-SP-Preview: "path|host SESSION PORT". */
static int
read_preview(preview_head_t *h, const char *v, size_t n, err_t *err)
{
    char tmp[200], mode[8], sid[sizeof h->sid];
    unsigned port;
    char extra;
    if (n >= sizeof tmp)
        return fail(err, ERR_BAD_REQ, "X-SP-Preview is too long");
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    if (sscanf(tmp, "%7s %128s %5u %c", mode, sid, &port, &extra) != 3 || port == 0 ||
        port > 65535 || strpbrk(sid, "/?#%"))
        return fail(err, ERR_BAD_REQ, "X-SP-Preview must be \"path|host SESSION PORT\"");
    if (!strcmp(mode, "path"))
        h->mode = PREVIEW_PATH;
    else if (!strcmp(mode, "host"))
        h->mode = PREVIEW_HOST;
    else
        return fail(err, ERR_BAD_REQ, "X-SP-Preview's mode is path or host");
    snprintf(h->sid, sizeof h->sid, "%s", sid);
    h->port = port;
    return 0;
}

/* The query q[0..n) without sp_token (taken as a credential) into out ("" or "?…"). */
static void
strip_query(preview_head_t *h, const char *q, size_t n, buf_t *out)
{
    static const char arg[] = PREVIEW_QUERY_ARG "=";
    bool first = true;
    while (n > 0) {
        const char *amp = memchr(q, '&', n);
        size_t len = amp ? (size_t)(amp - q) : n;
        if (len >= sizeof arg - 1 && !memcmp(q, arg, sizeof arg - 1)) {
            add_token(h, q + sizeof arg - 1, len - (sizeof arg - 1), PREVIEW_FROM_QUERY);
        } else if (len > 0) {
            buf_append(out, first ? "?" : "&", 1);
            buf_append(out, q, len);
            first = false;
        }
        q += len + (amp ? 1 : 0);
        n -= len + (amp ? 1 : 0);
    }
}

/* The request target t[0..n): the preview prefix and credential off, into h->target. */
static int
read_target(preview_head_t *h, const char *t, size_t n, err_t *err)
{
    if (n == 0 || t[0] != '/')
        return fail(err, ERR_BAD_REQ, "the request target must be a path");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t[i] <= ' ' || t[i] == 0x7f || t[i] == '#')
            return fail(err, ERR_BAD_REQ, "the request target holds a control character");
    const char *p = t, *end = t + n;
    if (h->mode == PREVIEW_PATH) {
        int pl = snprintf(h->prefix, sizeof h->prefix, "/preview/%s/%u", h->sid, h->port);
        if (pl < 0 || (size_t)pl >= sizeof h->prefix || n < (size_t)pl ||
            memcmp(t, h->prefix, (size_t)pl) != 0 || (n > (size_t)pl && !strchr("/?", t[pl])))
            return fail(err, ERR_BAD_REQ, "the target is not under the preview's prefix");
        p += pl;
        if (p + 2 <= end && p[0] == '/' && p[1] == '~') {
            const char *s = p + 2, *e = s;
            while (e < end && *e != '/' && *e != '?')
                e++;
            add_token(h, s, (size_t)(e - s), PREVIEW_FROM_PATH);
            if (h->ntokens == 0 || h->tokens[h->ntokens - 1].from != PREVIEW_FROM_PATH)
                return fail(err, ERR_BAD_REQ, "the path's preview credential is malformed");
            p = e;
        }
        h->needs_slash = p == end || *p == '?';
    }
    const char *q = memchr(p, '?', (size_t)(end - p));
    size_t plen = q ? (size_t)(q - p) : (size_t)(end - p);
    buf_t out = {0};
    if (plen == 0)
        buf_append(&out, "/", 1);
    else
        buf_append(&out, p, plen);
    if (q)
        strip_query(h, q + 1, (size_t)(end - q - 1), &out);
    if (out.len >= sizeof h->target) {
        buf_free(&out);
        return fail(err, ERR_TOO_BIG, "the request target is too long");
    }
    memcpy(h->target, out.data, out.len);
    h->target[out.len] = '\0';
    buf_free(&out);
    return 0;
}

/* Cookie: v[0..n) without sp_pv (taken as credentials) appended to app, or nothing when no
 * other cookie is left. */
static void
cookies(preview_head_t *h, const char *v, size_t n, buf_t *app)
{
    static const char name[] = PREVIEW_COOKIE "=";
    buf_t kept = {0};
    while (n > 0) {
        const char *semi = memchr(v, ';', n);
        size_t len = semi ? (size_t)(semi - v) : n;
        const char *c = v;
        size_t cl = len;
        while (cl > 0 && (*c == ' ' || *c == '\t'))
            c++, cl--;
        while (cl > 0 && (c[cl - 1] == ' ' || c[cl - 1] == '\t'))
            cl--;
        if (cl >= sizeof name - 1 && !memcmp(c, name, sizeof name - 1)) {
            add_token(h, c + sizeof name - 1, cl - (sizeof name - 1), PREVIEW_FROM_COOKIE);
        } else if (cl > 0) {
            if (kept.len)
                buf_append(&kept, "; ", 2);
            buf_append(&kept, c, cl);
        }
        v += len + (semi ? 1 : 0);
        n -= len + (semi ? 1 : 0);
    }
    if (kept.len) {
        buf_puts(app, "Cookie: ");
        buf_append(app, kept.data, kept.len);
        buf_puts(app, "\r\n");
    }
    buf_free(&kept);
}

static bool
is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && !strncasecmp(name, want, n);
}

static bool
tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

int
preview_head_parse(const char *in, size_t len, preview_head_t *h, buf_t *app, err_t *err)
{
    memset(h, 0, sizeof *h);
    if (len > PREVIEW_HEAD_MAX)
        return fail(err, ERR_TOO_BIG, "the request head is over 32 KiB");
    if (len < 4 || memcmp(in + len - 4, "\r\n\r\n", 4) != 0)
        return fail(err, ERR_BAD_REQ, "the request head does not end with a blank line");
    const char *eol = memmem(in, len, "\r\n", 2);
    const char *sp1 = memchr(in, ' ', (size_t)(eol - in));
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (!sp2 || sp1 == in || (size_t)(sp1 - in) >= sizeof h->method ||
        (size_t)(eol - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        (sp2[8] != '0' && sp2[8] != '1'))
        return fail(err, ERR_BAD_REQ, "the request line must be METHOD TARGET HTTP/1.x");
    for (const char *m = in; m < sp1; m++)
        if (!tchar(*m))
            return fail(err, ERR_BAD_REQ, "the method is not a token");
    memcpy(h->method, in, (size_t)(sp1 - in));
    /* the headers first: X-SP-Preview says how to read the target */
    const char *line = eol + 2, *headers = line;
    bool seen_preview = false;
    while (line < in + len - 2) {
        const char *le = memmem(line, (size_t)(in + len - line), "\r\n", 2);
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon || colon == line)
            return fail(err, ERR_BAD_REQ, "a header line has no name");
        for (const char *c = line; c < colon; c++)
            if (!tchar(*c))
                return fail(err, ERR_BAD_REQ, "a header name is not a token");
        const char *v = colon + 1, *ve = le;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        for (const char *c = v; c < ve; c++)
            if (((unsigned char)*c < ' ' && *c != '\t') || *c == 0x7f)
                return fail(err, ERR_BAD_REQ, "a header value holds a control character");
        size_t nl = (size_t)(colon - line), vl = (size_t)(ve - v);
        if (is(line, nl, "X-SP-Preview")) {
            if (seen_preview)
                return fail(err, ERR_BAD_REQ, "X-SP-Preview is there twice");
            seen_preview = true;
            if (read_preview(h, v, vl, err) < 0)
                return -1;
        } else if (is(line, nl, ROUTE_KEY_HEADER)) {
            if (vl < sizeof h->route_key) {
                memcpy(h->route_key, v, vl);
                h->route_key[vl] = '\0';
            }
        } else if (is(line, nl, "X-Forwarded-Proto")) {
            h->https = vl == 5 && !strncasecmp(v, "https", 5);
        } else if (is(line, nl, "Upgrade")) {
            h->upgrade = vl > 0;
        }
        line = le + 2;
    }
    if (!seen_preview)
        return fail(err, ERR_BAD_REQ, "no X-SP-Preview: only nginx sends requests here");
    if (read_target(h, sp1 + 1, (size_t)(sp2 - sp1 - 1), err) < 0)
        return -1;
    buf_printf(app, "%s %s HTTP/1.%c\r\n", h->method, h->target, sp2[8]);
    for (line = headers; line < in + len - 2;) {
        const char *le = memmem(line, (size_t)(in + len - line), "\r\n", 2);
        const char *colon = memchr(line, ':', (size_t)(le - line));
        size_t nl = (size_t)(colon - line);
        const char *v = colon + 1, *ve = le;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        if (is(line, nl, "Cookie")) {
            cookies(h, v, (size_t)(ve - v), app);
        } else if (is(line, nl, PREVIEW_TOKEN_HDR) || is(line, nl, PREVIEW_E2B_HDR)) {
            add_token(h, v, (size_t)(ve - v), PREVIEW_FROM_HEADER);
        } else if ((nl >= 5 && !strncasecmp(line, "X-SP-", 5)) ||
                   is(line, nl, "X-Forwarded-Prefix")) {
            /* sandpipe's own, and a prefix only this listener may state */
        } else {
            buf_append(app, line, (size_t)(le - line) + 2);
        }
        line = le + 2;
    }
    if (h->mode == PREVIEW_PATH) {
        buf_printf(app, "X-Forwarded-Prefix: %s", h->prefix);
        for (int i = 0; i < h->ntokens; i++)
            if (h->tokens[i].from == PREVIEW_FROM_PATH)
                buf_printf(app, "/~%s", h->tokens[i].tok);
        buf_puts(app, "\r\n");
    }
    buf_puts(app, "\r\n");
    return 0;
}
