/* multipart.c — streaming multipart/form-data parser (see multipart.h).
 *
 * The delimiter "\r\n--boundary" is found with Knuth-Morris-Pratt, so a partial match that
 * fails is resumed from the longest prefix that still fits and no byte is examined twice. The
 * bytes of a partial match are held back, not copied: they are always delim[0..match), so when
 * a match fails the released bytes are either re-read from delim (when they arrived in an
 * earlier chunk) or simply left in the current chunk's run of data. */
#include "multipart.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "xalloc.h"

#define DELIM_MAX   (4 + MULTIPART_BOUNDARY_MAX)
#define PADDING_MAX 64 /* spaces allowed after a delimiter (RFC 2046 transport padding) */

enum { S_PREAMBLE, S_TAIL, S_DASH2, S_LF, S_HEADERS, S_BODY, S_EPILOGUE, S_ERROR };

struct multipart {
    multipart_cb_t cb;
    void *ud;
    char delim[DELIM_MAX + 1]; /* "\r\n--" boundary */
    size_t dlen;
    size_t fail[DELIM_MAX + 1]; /* KMP: longest proper prefix of delim[0..k) that ends it */
    size_t match;               /* delim[0..match) seen and held back */
    int state;
    size_t padding;
    buf_t hdr;
};

/* Copies the value of parameter key from a "; k=v; k2="v2"" list (s is after the first ';')
 * into out[0..cap). Returns the value's length, -1 when absent, -2 when malformed or too long. */
static int
param_get(const char *s, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == ';')
            s++;
        const char *k = s;
        while (*s && *s != '=' && *s != ';')
            s++;
        const char *kend = s;
        while (kend > k && (kend[-1] == ' ' || kend[-1] == '\t'))
            kend--;
        bool want = (size_t)(kend - k) == klen && !strncasecmp(k, key, klen);
        if (*s != '=')
            continue;
        s++;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t o = 0;
        bool too_long = false;
        if (*s == '"') {
            for (s++; *s && *s != '"'; s++) {
                if (*s == '\\' && s[1])
                    s++;
                if (o + 1 < cap)
                    out[o++] = *s;
                else
                    too_long = true;
            }
            if (*s != '"')
                return -2;
            s++;
        } else {
            for (; *s && *s != ';'; s++) {
                if (o + 1 < cap)
                    out[o++] = *s;
                else
                    too_long = true;
            }
            while (o && (out[o - 1] == ' ' || out[o - 1] == '\t'))
                o--;
        }
        if (want) {
            if (too_long || !cap)
                return -2;
            out[o] = '\0';
            return (int)o;
        }
        while (*s && *s != ';')
            s++;
    }
    return -1;
}

int
multipart_boundary(const char *content_type, char *out, size_t cap)
{
    static const char type[] = "multipart/form-data";
    if (!content_type)
        return -1;
    while (*content_type == ' ')
        content_type++;
    size_t tlen = sizeof type - 1;
    if (strncasecmp(content_type, type, tlen))
        return -1;
    const char *rest = content_type + tlen;
    while (*rest == ' ' || *rest == '\t')
        rest++;
    if (*rest != ';')
        return -1;
    int k = param_get(rest + 1, "boundary", out, cap);
    return k > 0 && (size_t)k <= MULTIPART_BOUNDARY_MAX ? 0 : -1;
}

multipart_t *
multipart_new(const char *boundary, const multipart_cb_t *cb, void *ud)
{
    multipart_t *m = xcalloc(1, sizeof *m);
    if (cb)
        m->cb = *cb;
    m->ud = ud;
    size_t blen = strnlen(boundary, MULTIPART_BOUNDARY_MAX);
    memcpy(m->delim, "\r\n--", 4);
    memcpy(m->delim + 4, boundary, blen);
    m->dlen = 4 + blen;
    for (size_t k = 2, f = 0; k <= m->dlen; k++) {
        while (f && m->delim[k - 1] != m->delim[f])
            f = m->fail[f];
        if (m->delim[k - 1] == m->delim[f])
            f++;
        m->fail[k] = f;
    }
    /* The first delimiter may open the body without a CRLF before it: pretend one came. */
    m->match = 2;
    m->state = S_PREAMBLE;
    return m;
}

void
multipart_free(multipart_t *m)
{
    if (!m)
        return;
    buf_free(&m->hdr);
    free(m);
}

bool
multipart_done(const multipart_t *m)
{
    return m->state == S_EPILOGUE;
}

int
multipart_finish(multipart_t *m, err_t *err)
{
    if (m->state == S_EPILOGUE)
        return 0;
    return err_set(err, EINVAL, "multipart body ends before its closing boundary");
}

static int
emit(multipart_t *m, bool body, const char *p, size_t n)
{
    if (!body || !n || !m->cb.on_data)
        return 0;
    return m->cb.on_data(m->ud, p, n) < 0 ? -ECANCELED : 0;
}

/* Scans p[*pos..n) for the delimiter, handing data bytes to on_data when body is true. Sets
 * *found and *pos past the delimiter, or consumes everything. hc counts the held-back bytes
 * that lie in this chunk (the last hc before i); the others came in earlier chunks. */
static int
scan(multipart_t *m, bool body, const char *p, size_t n, size_t *pos, bool *found)
{
    size_t i = *pos, run = i, hc = 0;
    int rc;
    *found = false;
    while (i < n) {
        if (m->match == 0) {
            const char *cr = memchr(p + i, m->delim[0], n - i);
            if (!cr) {
                i = n;
                break;
            }
            i = (size_t)(cr - p) + 1;
            m->match = hc = 1;
            continue;
        }
        if (p[i] == m->delim[m->match]) {
            m->match++;
            hc++;
            i++;
            if (m->match == m->dlen) {
                m->match = 0;
                *found = true;
                *pos = i;
                return emit(m, body, p + run, i - hc - run);
            }
            continue;
        }
        /* Mismatch: release the first r held bytes and go on matching from f. */
        size_t f = m->fail[m->match], r = m->match - f, outside = m->match - hc;
        if (outside) {
            /* Then every byte of this chunk so far is held, and the run is empty. */
            if ((rc = emit(m, body, m->delim, r < outside ? r : outside)) < 0)
                return rc;
        }
        if (r > outside)
            hc -= r - outside; /* those join the run */
        m->match = f;
    }
    *pos = n;
    return emit(m, body, p + run, i - hc - run);
}

static bool
hdr_name_is(const char *line, size_t len, const char *name)
{
    size_t k = strlen(name);
    return len > k && !strncasecmp(line, name, k) && line[k] == ':';
}

/* Parses the header block in m->hdr and reports the part. */
static int
part_begin(multipart_t *m, err_t *err)
{
    char name[1024] = "", filename[1024] = "", ctype[256] = "";
    bool has_filename = false;
    char *s = m->hdr.data;
    for (char *line = s; *line;) {
        char *eol = strstr(line, "\r\n");
        if (!eol)
            break;
        *eol = '\0';
        size_t len = (size_t)(eol - line);
        if (len && !memchr(line, ':', len))
            return err_set(err, EINVAL, "malformed multipart header line");
        char *v = memchr(line, ':', len);
        if (v) {
            for (v++; *v == ' ' || *v == '\t'; v++)
                ;
        }
        if (hdr_name_is(line, len, "Content-Disposition")) {
            const char *semi = strchr(v, ';');
            if (semi) {
                if (param_get(semi + 1, "name", name, sizeof name) == -2)
                    return err_set(err, EINVAL, "malformed multipart part name");
                int k = param_get(semi + 1, "filename", filename, sizeof filename);
                if (k == -2)
                    return err_set(err, EINVAL, "malformed or too long multipart filename");
                has_filename = k >= 0;
            }
        } else if (hdr_name_is(line, len, "Content-Type")) {
            snprintf(ctype, sizeof ctype, "%s", v);
        }
        line = eol + 2;
    }
    if (!m->cb.on_part)
        return 0;
    multipart_part_t part = {name, has_filename ? filename : NULL, ctype};
    return m->cb.on_part(m->ud, &part) < 0 ? -ECANCELED : 0;
}

/* Collects header bytes; returns 1 when the block is complete. */
static int
take_headers(multipart_t *m, const char *p, size_t n, size_t *pos, err_t *err)
{
    while (*pos < n) {
        const char *nl = memchr(p + *pos, '\n', n - *pos);
        size_t k = nl ? (size_t)(nl - (p + *pos)) + 1 : n - *pos;
        if (m->hdr.len + k > MULTIPART_HEADERS_MAX)
            return err_set(err, EINVAL, "multipart part headers over %d bytes",
                           MULTIPART_HEADERS_MAX);
        buf_append(&m->hdr, p + *pos, k);
        *pos += k;
        const char *h = m->hdr.data;
        size_t len = m->hdr.len;
        if (len && h[len - 1] == '\n' && (len < 2 || h[len - 2] != '\r'))
            return err_set(err, EINVAL, "multipart header line not ended by CRLF");
        if ((len == 2 && !memcmp(h, "\r\n", 2)) ||
            (len >= 4 && !memcmp(h + len - 4, "\r\n\r\n", 4)))
            return 1;
    }
    return 0;
}

static int
step(multipart_t *m, const char *p, size_t n, size_t *pos, err_t *err)
{
    bool found;
    int rc;
    char c;
    switch (m->state) {
    case S_PREAMBLE:
    case S_BODY:
        if ((rc = scan(m, m->state == S_BODY, p, n, pos, &found)) < 0)
            return err_set(err, -rc, "multipart: stopped by its consumer");
        if (found) {
            if (m->state == S_BODY && m->cb.on_part_end && m->cb.on_part_end(m->ud) < 0)
                return err_set(err, ECANCELED, "multipart: stopped by its consumer");
            m->state = S_TAIL;
            m->padding = 0;
        }
        return 0;
    case S_TAIL:
        c = p[(*pos)++];
        if (c == '-')
            m->state = S_DASH2;
        else if (c == '\r')
            m->state = S_LF;
        else if (c == '\n')
            m->state = S_HEADERS;
        else if ((c == ' ' || c == '\t') && ++m->padding <= PADDING_MAX)
            return 0;
        else
            return err_set(err, EINVAL, "malformed multipart delimiter line");
        buf_clear(&m->hdr);
        return 0;
    case S_DASH2:
    case S_LF:
        c = p[(*pos)++];
        if (c != (m->state == S_DASH2 ? '-' : '\n'))
            return err_set(err, EINVAL, "malformed multipart delimiter line");
        m->state = m->state == S_DASH2 ? S_EPILOGUE : S_HEADERS;
        return 0;
    case S_HEADERS:
        if ((rc = take_headers(m, p, n, pos, err)) <= 0)
            return rc;
        if ((rc = part_begin(m, err)) < 0)
            return rc;
        m->state = S_BODY;
        m->match = 0;
        return 0;
    case S_EPILOGUE: *pos = n; return 0;
    default: return err_set(err, EINVAL, "multipart parser already failed");
    }
}

int
multipart_feed(multipart_t *m, const char *p, size_t n, err_t *err)
{
    size_t pos = 0;
    if (m->state == S_ERROR)
        return err_set(err, EINVAL, "multipart parser already failed");
    while (pos < n) {
        int rc = step(m, p, n, &pos, err);
        if (rc < 0) {
            m->state = S_ERROR;
            return rc;
        }
    }
    return 0;
}
