/* dns_build.h — DNS messages assembled byte by byte for netd/dns_msg's tests
 * (test_netd_dns_query.c, test_netd_dns_answer.c): header, labels, names, compression
 * pointers, resource records, EDNS OPT, a whole query and its parse. Header-only; include after
 * <cmocka.h>. */
#ifndef SP_TEST_DNS_BUILD_H
#define SP_TEST_DNS_BUILD_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "dns_msg.h"

#define TYPE_NS   2
#define TYPE_SOA  6
#define TYPE_TXT  16
#define TYPE_OPT  41
#define FLAG_QR   0x8000
#define FLAG_RD   0x0100
#define FLAG_RA   0x0080
#define OPCODE(n) ((n) << 11)

/* A message being assembled. */
typedef struct {
    uint8_t b[2048];
    size_t n;
} msg_t;

static inline void
put8(msg_t *m, unsigned v)
{
    assert_true(m->n < sizeof m->b);
    m->b[m->n++] = (uint8_t)v;
}

static inline void
put16(msg_t *m, unsigned v)
{
    put8(m, v >> 8 & 0xFF);
    put8(m, v & 0xFF);
}

static inline void
put32(msg_t *m, uint32_t v)
{
    put16(m, v >> 16);
    put16(m, v & 0xFFFF);
}

static inline void
put_raw(msg_t *m, const void *p, size_t n)
{
    assert_true(n <= sizeof m->b - m->n);
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static inline void
put_header(msg_t *m, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
           unsigned ar)
{
    m->n = 0;
    put16(m, id);
    put16(m, flags);
    put16(m, qd);
    put16(m, an);
    put16(m, ns);
    put16(m, ar);
}

/* The labels of a dotted name, without the end: a zero byte or a pointer follows. Returns
 * where they begin. */
static inline size_t
put_labels(msg_t *m, const char *dotted)
{
    size_t start = m->n;
    while (*dotted) {
        size_t len = strcspn(dotted, ".");
        put8(m, (unsigned)len);
        put_raw(m, dotted, len);
        dotted += len;
        if (*dotted == '.')
            dotted++;
    }
    return start;
}

/* A whole name ending in its zero byte. Returns where it begins. */
static inline size_t
put_name(msg_t *m, const char *dotted)
{
    size_t start = put_labels(m, dotted);
    put8(m, 0);
    return start;
}

static inline void
put_ptr(msg_t *m, size_t to)
{
    put16(m, 0xC000 | (unsigned)to);
}

/* A record's type, class, ttl and a length to patch with end_rdata: returns where rdata starts. */
static inline size_t
begin_rr(msg_t *m, unsigned type, unsigned class, uint32_t ttl)
{
    put16(m, type);
    put16(m, class);
    put32(m, ttl);
    put16(m, 0);
    return m->n;
}

static inline void
end_rdata(msg_t *m, size_t rdata)
{
    size_t len = m->n - rdata;
    m->b[rdata - 2] = (uint8_t)(len >> 8);
    m->b[rdata - 1] = (uint8_t)len;
}

static inline void
put_a(msg_t *m, unsigned class, uint32_t ttl, const char *addr)
{
    struct in_addr a;
    assert_int_equal(inet_pton(AF_INET, addr, &a), 1);
    size_t rd = begin_rr(m, DNS_TYPE_A, class, ttl);
    put_raw(m, &a, 4);
    end_rdata(m, rd);
}

static inline void
put_opt(msg_t *m)
{
    put8(m, 0); /* the root */
    size_t rd = begin_rr(m, TYPE_OPT, 1232, 0);
    put16(m, 10); /* a COOKIE option, client cookie only */
    put16(m, 8);
    put_raw(m, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    end_rdata(m, rd);
}

/* A query: one question, RD set, an EDNS OPT record when edns. */
static inline void
build_query(msg_t *m, unsigned id, const char *name, unsigned type, int edns)
{
    put_header(m, id, FLAG_RD, 1, 0, 0, edns ? 1 : 0);
    put_name(m, name);
    put16(m, type);
    put16(m, DNS_CLASS_IN);
    if (edns)
        put_opt(m);
}

static inline dns_query_t
parsed(const msg_t *m)
{
    dns_query_t q;
    memset(&q, 0xAA, sizeof q);
    assert_int_equal(dns_parse_query(m->b, m->n, &q), 0);
    return q;
}

static inline const char *
ntoa(struct in_addr a)
{
    static char text[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &a, text, sizeof text);
}

#endif
