/* port_table.c — /proc/net/tcp{,6} text to listening sockets. See port_table.h. */
#include "port_table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hex.h"
#include "xalloc.h"

#define TCP_LISTEN   0x0A /* the kernel's TCP_LISTEN, printed as "0A" */
#define LINE_FIELDS  10   /* sl local remote st tx:rx tr:when retrnsmt uid timeout inode */
#define INODE_DIGITS 20   /* 2^64 - 1 has 20 */

typedef struct {
    const char *p;
    size_t n;
} field_t;

/* The value of exactly n hex digits at p (n <= 8). -1 when one is not a hex digit. */
static int64_t
hex_value(const char *p, size_t n)
{
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = hex_digit((unsigned char)p[i]);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/* "WORDS:PORT": words of 8 hex digits (1 for IPv4, 4 for IPv6), a port of 4. */
static int
parse_endpoint(field_t f, int family, uint8_t addr[16], uint16_t *port)
{
    size_t words = family == AF_INET ? 1 : 4;
    if (f.n != words * 8 + 1 + 4 || f.p[words * 8] != ':')
        return -1;
    for (size_t i = 0; i < words; i++) {
        int64_t w = hex_value(f.p + i * 8, 8);
        if (w < 0)
            return -1;
        uint32_t word = (uint32_t)w; /* host order, as the kernel printed it */
        memcpy(addr + i * 4, &word, 4);
    }
    int64_t pt = hex_value(f.p + words * 8 + 1, 4);
    if (pt < 0)
        return -1;
    *port = (uint16_t)pt;
    return 0;
}

static int
parse_inode(field_t f, uint64_t *inode)
{
    if (f.n == 0 || f.n > INODE_DIGITS)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (f.p[i] < '0' || f.p[i] > '9')
            return -1;
        unsigned d = (unsigned)(f.p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *inode = v;
    return 0;
}

/* Splits p[0..n) at spaces and tabs into at most max fields; returns how many there were (more
 * than max counts as max + 1). */
static size_t
split_fields(const char *p, size_t n, field_t *f, size_t max)
{
    size_t count = 0, i = 0;
    while (i < n) {
        while (i < n && (p[i] == ' ' || p[i] == '\t'))
            i++;
        if (i == n)
            break;
        size_t start = i;
        while (i < n && p[i] != ' ' && p[i] != '\t')
            i++;
        if (count == max)
            return max + 1;
        f[count++] = (field_t){p + start, i - start};
    }
    return count;
}

/* 1: a listening socket in *s; 0: a line to pass over (header, blank, another state); -1: a line
 * that is none of these. */
static int
parse_line(const char *p, size_t n, int family, port_sock_t *s)
{
    /* the kernel adds fields after the inode (refcount, address, timers): only the first ten
     * are read */
    field_t f[LINE_FIELDS + 8];
    size_t nf = split_fields(p, n, f, sizeof f / sizeof f[0]);
    if (nf == 0 || (f[0].n == 2 && !memcmp(f[0].p, "sl", 2)))
        return 0;
    if (nf < LINE_FIELDS || f[0].n < 2 || f[0].p[f[0].n - 1] != ':')
        return -1;
    for (size_t i = 0; i + 1 < f[0].n; i++)
        if (hex_digit((unsigned char)f[0].p[i]) < 0) /* the slot number ("sl") */
            return -1;
    uint8_t remote[16];
    uint16_t remote_port;
    int64_t st = f[3].n == 2 ? hex_value(f[3].p, 2) : -1;
    memset(s, 0, sizeof *s);
    s->family = family;
    if (parse_endpoint(f[1], family, s->addr, &s->port) < 0 ||
        parse_endpoint(f[2], family, remote, &remote_port) < 0 || st < 0 ||
        parse_inode(f[9], &s->inode) < 0)
        return -1;
    return st == TCP_LISTEN;
}

void
port_table_add(port_table_t *t, const port_sock_t *s)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n++] = *s;
}

size_t
port_table_parse(port_table_t *t, const char *text, size_t len, int family)
{
    size_t skipped = 0;
    if (family != AF_INET && family != AF_INET6)
        return 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        port_sock_t s;
        int r = parse_line(p, n, family, &s);
        if (r < 0) {
            skipped++;
        } else if (r > 0) {
            port_table_add(t, &s);
        }
        p += n + (nl != NULL);
    }
    return skipped;
}

int
port_sock_cmp(const port_sock_t *a, const port_sock_t *b)
{
    if (a->port != b->port)
        return a->port < b->port ? -1 : 1;
    if (a->family != b->family)
        return a->family == AF_INET ? -1 : 1;
    return memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* port_sock_cmp, then the inode: of sockets sharing a listener, the same one is kept at every
 * scan. */
static int
cmp_qsort(const void *a, const void *b)
{
    const port_sock_t *x = a, *y = b;
    int c = port_sock_cmp(x, y);
    return c ? c : (x->inode > y->inode) - (x->inode < y->inode);
}

void
port_table_sort(port_table_t *t)
{
    if (!t->n)
        return;
    qsort(t->v, t->n, sizeof *t->v, cmp_qsort);
    size_t kept = 1;
    for (size_t i = 1; i < t->n; i++) {
        if (port_sock_cmp(&t->v[kept - 1], &t->v[i]) == 0) {
            free(t->v[i].command);
            continue;
        }
        t->v[kept++] = t->v[i];
    }
    t->n = kept;
}

void
port_sock_address(const port_sock_t *s, char out[INET6_ADDRSTRLEN])
{
    if (!inet_ntop(s->family, s->addr, out, INET6_ADDRSTRLEN))
        out[0] = '\0';
}

bool
port_sock_is_wildcard(const port_sock_t *s)
{
    static const uint8_t zero[16];
    return !memcmp(s->addr, zero, s->family == AF_INET ? 4 : 16);
}

void
port_table_free(port_table_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].command);
    free(t->v);
    *t = (port_table_t)PORT_TABLE_INIT;
}
