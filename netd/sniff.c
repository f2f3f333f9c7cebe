/* sniff.c — the server name in a TCP connection's first bytes: a TLS ClientHello's SNI or an
 * HTTP/1.x request's Host. The first byte picks the parser (22, a TLS handshake record; an upper
 * case letter, an HTTP method); each parser reads as far as the bytes go and says SNIFF_MORE
 * only while every byte so far fits its format, so garbage is SNIFF_OTHER at once. Nothing
 * past SNIFF_PEEK_MAX is read.
 *
 * HTTP is read strictly, because the server behind the proxy reads the same bytes and must not
 * find another host in them than the one reported here: CRLF line ends only, no folded lines,
 * no space before a header's colon, one Host header at most, and a request target in origin
 * form ("/...") or "*" (a server takes the host of an absolute-form target instead of Host). */
#include "sniff.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#define TLS_RECORD_HEADER   5
#define TLS_RECORD_MAX      16384 /* RFC 8446, 5.1: a plaintext record's length limit */
#define TLS_HANDSHAKE       22
#define TLS_CLIENT_HELLO    1
#define TLS_HS_HEADER       4
#define TLS_EXT_SERVER_NAME 0
#define TLS_SNI_HOST_NAME   0
#define TLS_RANDOM_LEN      32
#define TLS_SESSION_ID_MAX  32
#define SNIFF_LABEL_MAX     63

static char
lower(unsigned char c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* Copies s[0..n) into name, lower-cased and without one trailing dot, if it is a host name:
 * labels of letters, digits, '-' and '_', 1 to 63 each, separated by single dots, at most
 * SNIFF_NAME_MAX in all. 0, or -1 (name is then ""). */
static int
host_name_copy(const unsigned char *s, size_t n, char *name)
{
    name[0] = '\0';
    if (n > 0 && s[n - 1] == '.')
        n--;
    if (n == 0 || n > SNIFF_NAME_MAX)
        return -1;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '.') {
            if (label == 0)
                return -1;
            label = 0;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return -1;
        if (++label > SNIFF_LABEL_MAX)
            return -1;
    }
    if (label == 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        name[i] = lower(s[i]);
    name[n] = '\0';
    return 0;
}

/* ---- TLS ---- */

/* A cursor over the ClientHello's body: every take checks what is left. */
typedef struct {
    const unsigned char *p;
    size_t left;
} cursor_t;

static int
take(cursor_t *c, size_t n, const unsigned char **out)
{
    if (n > c->left)
        return -1;
    if (out)
        *out = c->p;
    c->p += n;
    c->left -= n;
    return 0;
}

static int
take16(cursor_t *c, size_t *v)
{
    const unsigned char *p;
    if (take(c, 2, &p) < 0)
        return -1;
    *v = (size_t)p[0] << 8 | p[1];
    return 0;
}

static int
take8(cursor_t *c, size_t *v)
{
    const unsigned char *p;
    if (take(c, 1, &p) < 0)
        return -1;
    *v = p[0];
    return 0;
}

/* A vector with a 1- or 2-byte length (width) as a cursor of its own, taken from c. */
static int
take_vector(cursor_t *c, int width, size_t min, size_t max, cursor_t *v)
{
    size_t n;
    if ((width == 1 ? take8(c, &n) : take16(c, &n)) < 0 || n < min || n > max ||
        take(c, n, &v->p) < 0)
        return -1;
    v->left = n;
    return 0;
}

/* The server_name extension's data (RFC 6066, 3): a list of (name_type, name) holding at most
 * one host_name. 1 with the name stored, 0 when it has no host_name, -1 when malformed. */
static int
tls_server_name(cursor_t ext, char *name)
{
    cursor_t list, host;
    int found = 0;
    if (take_vector(&ext, 2, 1, SIZE_MAX, &list) < 0 || ext.left != 0)
        return -1;
    while (list.left > 0) {
        size_t type;
        if (take8(&list, &type) < 0 || take_vector(&list, 2, 0, SIZE_MAX, &host) < 0)
            return -1;
        if (type != TLS_SNI_HOST_NAME)
            continue;
        if (found || host_name_copy(host.p, host.left, name) < 0)
            return -1;
        found = 1;
    }
    return found;
}

/* A whole ClientHello body (after the handshake header). */
static sniff_kind_t
tls_client_hello(const unsigned char *body, size_t n, char *name)
{
    cursor_t c = {body, n}, skip, exts, ext;
    const unsigned char *version;
    int seen_server_name = 0;
    if (take(&c, 2, &version) < 0 || version[0] != 3 || take(&c, TLS_RANDOM_LEN, NULL) < 0 ||
        take_vector(&c, 1, 0, TLS_SESSION_ID_MAX, &skip) < 0 ||
        take_vector(&c, 2, 2, SIZE_MAX, &skip) < 0 || skip.left % 2 != 0 ||
        take_vector(&c, 1, 1, SIZE_MAX, &skip) < 0)
        return SNIFF_OTHER;
    if (c.left == 0) /* no extensions at all: TLS 1.2 and older allow that */
        return SNIFF_TLS;
    if (take_vector(&c, 2, 0, SIZE_MAX, &exts) < 0 || c.left != 0)
        return SNIFF_OTHER;
    while (exts.left > 0) {
        size_t type;
        if (take16(&exts, &type) < 0 || take_vector(&exts, 2, 0, SIZE_MAX, &ext) < 0)
            return SNIFF_OTHER;
        if (type != TLS_EXT_SERVER_NAME)
            continue;
        /* one extension of a type at most (RFC 8446, 4.2): two could name two hosts */
        if (seen_server_name++ || tls_server_name(ext, name) < 0) {
            name[0] = '\0';
            return SNIFF_OTHER;
        }
    }
    return SNIFF_TLS;
}

/* Handshake records from buf[0]: the ClientHello is read where it lies when the first record
 * holds it (the usual case), else its fragments are joined in a copy (it may span records). */
static sniff_kind_t
sniff_tls(const unsigned char *buf, size_t len, char *name)
{
    unsigned char joined[SNIFF_PEEK_MAX];
    const unsigned char *hello = NULL;  /* the handshake bytes so far */
    size_t have = 0, need = 0, off = 0; /* need: the whole handshake message, once known */
    for (;;) {
        /* the record header, checked byte by byte as far as it came */
        size_t got = len - off < TLS_RECORD_HEADER ? len - off : TLS_RECORD_HEADER;
        if ((got > 0 && buf[off] != TLS_HANDSHAKE) || (got > 1 && buf[off + 1] != 3))
            return SNIFF_OTHER;
        if (got < TLS_RECORD_HEADER)
            return SNIFF_MORE;
        size_t rec = (size_t)buf[off + 3] << 8 | buf[off + 4];
        if (rec == 0 || rec > TLS_RECORD_MAX)
            return SNIFF_OTHER;
        off += TLS_RECORD_HEADER;
        size_t frag = len - off < rec ? len - off : rec;
        if (!hello) {
            hello = buf + off;
        } else {
            if (hello != joined) {
                memcpy(joined, hello, have);
                hello = joined;
            }
            memcpy(joined + have, buf + off, frag); /* fits: have + frag < len */
        }
        have += frag;
        off += frag;
        if (have > 0 && hello[0] != TLS_CLIENT_HELLO)
            return SNIFF_OTHER;
        if (!need && have >= TLS_HS_HEADER) {
            need =
                TLS_HS_HEADER + ((size_t)hello[1] << 16 | (size_t)hello[2] << 8 | (size_t)hello[3]);
            /* it and a record header must fit in what is ever read */
            if (need + TLS_RECORD_HEADER > SNIFF_PEEK_MAX)
                return SNIFF_OTHER;
        }
        if (need && have >= need)
            return tls_client_hello(hello + TLS_HS_HEADER, need - TLS_HS_HEADER, name);
        if (frag < rec)
            return SNIFF_MORE;
    }
}

/* ---- HTTP/1.x ---- */

static int
is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A field value's byte: visible, space, tab, or obs-text (RFC 9110, 5.5). */
static int
is_field_byte(unsigned char c)
{
    return c == '\t' || (c >= ' ' && c != 0x7F);
}

/* Host's value (OWS trimmed) into name: a host name or a bracketed IP literal, then an
 * optional ":port". A literal gives "" unless its text is a host name. 0, or -1 malformed. */
static int
http_host(const unsigned char *v, size_t n, char *name)
{
    while (n > 0 && (v[0] == ' ' || v[0] == '\t'))
        v++, n--;
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n == 0)
        return 0;
    const unsigned char *host = v, *port;
    size_t host_len;
    if (v[0] == '[') {
        const unsigned char *close = memchr(v, ']', n);
        if (!close)
            return -1;
        host = v + 1;
        host_len = (size_t)(close - host);
        port = close + 1;
    } else {
        const unsigned char *colon = memchr(v, ':', n);
        host_len = colon ? (size_t)(colon - v) : n;
        port = v + host_len;
    }
    const unsigned char *end = v + n;
    if (port < end) {
        if (*port++ != ':')
            return -1;
        for (; port < end; port++)
            if (*port < '0' || *port > '9')
                return -1;
    }
    if (v[0] == '[') {
        host_name_copy(host, host_len, name); /* an address is no name: "" */
        return 0;
    }
    return host_name_copy(host, host_len, name);
}

/* Scans bytes of class ok from *i; stops at the first other byte. 1 when one was found (it is
 * at *i), 0 when the input ended first. */
static int
scan(const unsigned char *buf, size_t len, size_t *i, int (*ok)(unsigned char))
{
    while (*i < len && ok(buf[*i]))
        (*i)++;
    return *i < len;
}

static int
is_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

static int
is_target_byte(unsigned char c)
{
    return c > ' ' && c < 0x7F;
}

/* Expects the literal lit at *i, as far as the input goes: 1 matched whole, 0 input ended
 * while it matched, -1 mismatch. */
static int
expect(const unsigned char *buf, size_t len, size_t *i, const char *lit)
{
    for (; *lit; lit++, (*i)++) {
        if (*i >= len)
            return 0;
        if (buf[*i] != (unsigned char)*lit)
            return -1;
    }
    return 1;
}

#define EXPECT(lit)                                                                                \
    do {                                                                                           \
        int r_ = expect(buf, len, &i, lit);                                                        \
        if (r_ <= 0)                                                                               \
            return r_ < 0 ? SNIFF_OTHER : SNIFF_MORE;                                              \
    } while (0)

static sniff_kind_t
sniff_http(const unsigned char *buf, size_t len, char *name)
{
    size_t i = 0;
    /* request line: METHOD SP origin-form-or-* SP HTTP/1.x CRLF */
    if (!scan(buf, len, &i, is_upper))
        return SNIFF_MORE;
    EXPECT(" ");
    if (i < len && buf[i] != '/' && buf[i] != '*')
        return SNIFF_OTHER;
    size_t target = i;
    if (!scan(buf, len, &i, is_target_byte))
        return SNIFF_MORE;
    if (i == target || (buf[target] == '*' && i != target + 1))
        return SNIFF_OTHER;
    EXPECT(" HTTP/1.");
    if (i >= len)
        return SNIFF_MORE;
    if (buf[i] < '0' || buf[i] > '9')
        return SNIFF_OTHER;
    i++;
    EXPECT("\r\n");

    /* header fields up to the empty line */
    const unsigned char *host = NULL;
    size_t host_len = 0;
    for (;;) {
        if (i < len && buf[i] == '\r') {
            i++;
            EXPECT("\n");
            break;
        }
        size_t field = i;
        if (!scan(buf, len, &i, is_tchar))
            return SNIFF_MORE;
        if (i == field || buf[i] != ':') /* obs-fold, space before ':', a bad byte */
            return SNIFF_OTHER;
        size_t field_len = i - field;
        size_t value = ++i;
        if (!scan(buf, len, &i, is_field_byte))
            return SNIFF_MORE;
        size_t value_len = i - value;
        EXPECT("\r\n");
        if (field_len == 4 && strncasecmp((const char *)buf + field, "host", 4) == 0) {
            if (host)
                return SNIFF_OTHER;
            host = buf + value;
            host_len = value_len;
        }
    }
    if (host && http_host(host, host_len, name) < 0)
        return SNIFF_OTHER;
    return SNIFF_HTTP;
}

sniff_kind_t
sniff_name(const unsigned char *buf, size_t len, char *name, size_t cap)
{
    if (cap > 0)
        name[0] = '\0';
    if (cap < SNIFF_NAME_MAX + 1)
        return SNIFF_OTHER;
    size_t n = len < SNIFF_PEEK_MAX ? len : SNIFF_PEEK_MAX;
    sniff_kind_t kind;
    if (n == 0)
        kind = SNIFF_MORE;
    else if (buf[0] == TLS_HANDSHAKE)
        kind = sniff_tls(buf, n, name);
    else if (buf[0] >= 'A' && buf[0] <= 'Z')
        kind = sniff_http(buf, n, name);
    else
        kind = SNIFF_OTHER;
    if (kind == SNIFF_MORE && n == SNIFF_PEEK_MAX)
        kind = SNIFF_OTHER;
    if (kind == SNIFF_OTHER)
        name[0] = '\0';
    return kind;
}
