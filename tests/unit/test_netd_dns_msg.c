/* test_netd_dns_msg.c — netd/dns_msg on messages assembled byte by byte here: queries (case,
 * EDNS, the root, every refusal: a response, another opcode, two questions, a pointer, bad label
 * bytes, too long, cut short), netd's own replies (flags, the question as sent, in place, too
 * small a buffer), and upstream answers: plain A records, a CNAME chain written with compression
 * pointers, AAAA and other records skipped, authority and EDNS additional left unread, and the
 * refusals: a forward pointer, pointer loops, the hop limit, a pointer into the header, cut-short
 * messages, a wrong id, a question that is not the query's, a bad A or CNAME rdata. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
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

static void
put8(msg_t *m, unsigned v)
{
    assert_true(m->n < sizeof m->b);
    m->b[m->n++] = (uint8_t)v;
}

static void
put16(msg_t *m, unsigned v)
{
    put8(m, v >> 8 & 0xFF);
    put8(m, v & 0xFF);
}

static void
put32(msg_t *m, uint32_t v)
{
    put16(m, v >> 16);
    put16(m, v & 0xFFFF);
}

static void
put_raw(msg_t *m, const void *p, size_t n)
{
    assert_true(n <= sizeof m->b - m->n);
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void
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
static size_t
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
static size_t
put_name(msg_t *m, const char *dotted)
{
    size_t start = put_labels(m, dotted);
    put8(m, 0);
    return start;
}

static void
put_ptr(msg_t *m, size_t to)
{
    put16(m, 0xC000 | (unsigned)to);
}

/* A record's type, class, ttl and a length to patch with end_rdata: returns where rdata starts. */
static size_t
begin_rr(msg_t *m, unsigned type, unsigned class, uint32_t ttl)
{
    put16(m, type);
    put16(m, class);
    put32(m, ttl);
    put16(m, 0);
    return m->n;
}

static void
end_rdata(msg_t *m, size_t rdata)
{
    size_t len = m->n - rdata;
    m->b[rdata - 2] = (uint8_t)(len >> 8);
    m->b[rdata - 1] = (uint8_t)len;
}

static void
put_a(msg_t *m, unsigned class, uint32_t ttl, const char *addr)
{
    struct in_addr a;
    assert_int_equal(inet_pton(AF_INET, addr, &a), 1);
    size_t rd = begin_rr(m, DNS_TYPE_A, class, ttl);
    put_raw(m, &a, 4);
    end_rdata(m, rd);
}

static void
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
static void
build_query(msg_t *m, unsigned id, const char *name, unsigned type, int edns)
{
    put_header(m, id, FLAG_RD, 1, 0, 0, edns ? 1 : 0);
    put_name(m, name);
    put16(m, type);
    put16(m, DNS_CLASS_IN);
    if (edns)
        put_opt(m);
}

static dns_query_t
parsed(const msg_t *m)
{
    dns_query_t q;
    memset(&q, 0xAA, sizeof q);
    assert_int_equal(dns_parse_query(m->b, m->n, &q), 0);
    return q;
}

static const char *
ntoa(struct in_addr a)
{
    static char text[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &a, text, sizeof text);
}

/* ---- queries ---- */

static void
test_query_name_is_lower_cased_and_the_question_end_found(void **state)
{
    (void)state;
    msg_t m;
    build_query(&m, 0xBEEF, "WWW.Example.COM", DNS_TYPE_A, 0);
    dns_query_t q = parsed(&m);
    assert_int_equal(q.id, 0xBEEF);
    assert_int_equal(q.flags, FLAG_RD);
    assert_string_equal(q.name, "www.example.com");
    assert_int_equal(q.qtype, DNS_TYPE_A);
    assert_int_equal(q.qclass, DNS_CLASS_IN);
    assert_int_equal(q.question_end, m.n);
    assert_int_equal(q.question_end, 12 + 17 + 4);
}

static void
test_query_with_edns_opt_in_additional_is_accepted(void **state)
{
    (void)state;
    msg_t m;
    build_query(&m, 7, "a.example", DNS_TYPE_AAAA, 1);
    dns_query_t q = parsed(&m);
    assert_string_equal(q.name, "a.example");
    assert_int_equal(q.qtype, DNS_TYPE_AAAA);
    assert_int_equal(q.question_end, 12 + 11 + 4); /* the OPT record is not part of it */
    assert_true(q.question_end < m.n);
}

static void
test_query_for_the_root_has_an_empty_name(void **state)
{
    (void)state;
    msg_t m;
    build_query(&m, 1, "", TYPE_NS, 0);
    dns_query_t q = parsed(&m);
    assert_string_equal(q.name, "");
    assert_int_equal(q.question_end, 12 + 1 + 4);
}

static void
test_query_refuses_responses_other_opcodes_and_question_counts(void **state)
{
    (void)state;
    dns_query_t q;
    msg_t m;
    build_query(&m, 1, "example.com", DNS_TYPE_A, 0);
    m.b[2] |= FLAG_QR >> 8;
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);

    for (unsigned opcode = 1; opcode < 16; opcode++) {
        build_query(&m, 1, "example.com", DNS_TYPE_A, 0);
        m.b[2] |= (uint8_t)(OPCODE(opcode) >> 8);
        assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);
    }

    build_query(&m, 1, "example.com", DNS_TYPE_A, 0);
    m.b[5] = 0; /* no question */
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);
    m.b[5] = 2; /* two: the second is there too */
    put_name(&m, "example.org");
    put16(&m, DNS_TYPE_A);
    put16(&m, DNS_CLASS_IN);
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);
}

static void
test_query_cut_short_anywhere_is_refused(void **state)
{
    (void)state;
    dns_query_t q;
    msg_t m;
    build_query(&m, 1, "www.example.com", DNS_TYPE_A, 0);
    for (size_t n = 0; n < m.n; n++)
        if (dns_parse_query(m.b, n, &q) != -1)
            fail_msg("a query cut at %zu was accepted", n);
    assert_int_equal(dns_parse_query(m.b, m.n, &q), 0);
}

static void
test_query_refuses_a_compression_pointer(void **state)
{
    (void)state;
    dns_query_t q;
    msg_t m;
    put_header(&m, 1, 0, 1, 0, 0, 0);
    put_labels(&m, "www");
    put_ptr(&m, 12); /* even one that would lead somewhere sane */
    put16(&m, DNS_TYPE_A);
    put16(&m, DNS_CLASS_IN);
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);
}

/* Label bytes are taken as bytes, and only printable ones that cannot change a name's meaning
 * when it is written as text. */
static void
test_query_refuses_labels_with_dots_nul_spaces_or_unprintable_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *label;
        size_t len;
    } bad[] = {
        {"a.b", 3},  {"a\0b", 3}, {"a b", 3},      {"a\tb", 3},
        {"\x7F", 1}, {"\x80", 1}, {"\xC3\xA9", 2}, {"a\nb", 3},
    };
    dns_query_t q;
    msg_t m;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_header(&m, 1, 0, 1, 0, 0, 0);
        put8(&m, (unsigned)bad[i].len);
        put_raw(&m, bad[i].label, bad[i].len);
        put_name(&m, "example");
        put16(&m, DNS_TYPE_A);
        put16(&m, DNS_CLASS_IN);
        if (dns_parse_query(m.b, m.n, &q) != -1)
            fail_msg("label %zu accepted", i);
    }
    /* printable punctuation is a byte like any other */
    build_query(&m, 1, "_sip._tcp.*.x-y", TYPE_TXT, 0);
    assert_string_equal(parsed(&m).name, "_sip._tcp.*.x-y");
}

static void
test_query_refuses_extended_label_types_and_long_names(void **state)
{
    (void)state;
    dns_query_t q;
    msg_t m;
    char label[64], name[300];

    /* a 63-byte label is the longest; 64 (0x40) is the obsolete extended label type */
    memset(label, 'a', 63);
    label[63] = '\0';
    build_query(&m, 1, label, DNS_TYPE_A, 0);
    assert_string_equal(parsed(&m).name, label);
    put_header(&m, 1, 0, 1, 0, 0, 0);
    put8(&m, 64);
    for (int i = 0; i < 64; i++)
        put8(&m, 'a');
    put8(&m, 0);
    put16(&m, DNS_TYPE_A);
    put16(&m, DNS_CLASS_IN);
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);
    m.b[12] = 0x80;
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);

    /* 253 characters of text (255 bytes on the wire) is the longest name */
    memset(name, 0, sizeof name);
    for (size_t i = 0; i < 253; i++)
        name[i] = i % 4 == 3 ? '.' : 'x';
    build_query(&m, 1, name, DNS_TYPE_A, 0);
    assert_int_equal(strlen(parsed(&m).name), 253);
    name[253] = 'y';
    build_query(&m, 1, name, DNS_TYPE_A, 0);
    assert_int_equal(dns_parse_query(m.b, m.n, &q), -1);
}

/* ---- netd's replies ---- */

static void
test_reply_copies_the_question_as_sent_and_sets_the_flags(void **state)
{
    (void)state;
    msg_t m;
    uint8_t out[512];
    build_query(&m, 0x1234, "WwW.ExAmPlE.cOm", DNS_TYPE_A, 1);
    dns_query_t q = parsed(&m);
    size_t n = dns_build_reply(m.b, &q, DNS_RCODE_REFUSED, out, sizeof out);
    assert_int_equal(n, q.question_end);
    static const uint8_t header[12] = {0x12, 0x34, 0x81, 0x85, 0, 1, 0, 0, 0, 0, 0, 0};
    assert_memory_equal(out, header, 12);
    assert_memory_equal(out + 12, m.b + 12, n - 12); /* the case as sent (0x20 encoding) */

    /* it answers the query, with no address */
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode = -1;
    assert_int_equal(dns_answer_addrs(out, n, &q, a, ttl, 4, &rcode), 0);
    assert_int_equal(rcode, DNS_RCODE_REFUSED);

    /* no RD asked, none in the reply */
    m.b[2] &= (uint8_t) ~(FLAG_RD >> 8);
    q = parsed(&m);
    n = dns_build_reply(m.b, &q, DNS_RCODE_NOERROR, out, sizeof out);
    assert_int_equal(out[2], 0x80);
    assert_int_equal(out[3], 0x80);
}

static void
test_reply_is_refused_when_cap_is_too_small_or_rcode_out_of_range(void **state)
{
    (void)state;
    msg_t m;
    uint8_t out[512];
    build_query(&m, 9, "example.com", DNS_TYPE_A, 0);
    dns_query_t q = parsed(&m);
    memset(out, 0x5A, sizeof out);
    assert_int_equal(dns_build_reply(m.b, &q, DNS_RCODE_SERVFAIL, out, q.question_end - 1), 0);
    assert_int_equal(out[0], 0x5A); /* nothing written */
    assert_int_equal(dns_build_reply(m.b, &q, DNS_RCODE_SERVFAIL, out, q.question_end),
                     q.question_end);
    assert_int_equal(dns_build_reply(m.b, &q, 16, out, sizeof out), 0);
    assert_int_equal(dns_build_reply(m.b, &q, -1, out, sizeof out), 0);
}

static void
test_reply_can_be_built_in_place(void **state)
{
    (void)state;
    msg_t m;
    build_query(&m, 0xABCD, "in.place.example", DNS_TYPE_A, 1);
    msg_t copy = m;
    dns_query_t q = parsed(&m);
    size_t n = dns_build_reply(m.b, &q, DNS_RCODE_NXDOMAIN, m.b, sizeof m.b);
    assert_int_equal(n, q.question_end);
    assert_memory_equal(m.b + 12, copy.b + 12, n - 12);
    assert_int_equal(m.b[3], 0x80 | DNS_RCODE_NXDOMAIN);
    assert_int_equal(m.b[11], 0); /* the OPT record is not counted any more */
}

static void
test_set_id_rewrites_the_first_two_bytes(void **state)
{
    (void)state;
    uint8_t msg[3] = {1, 2, 3};
    dns_set_id(msg, sizeof msg, 0xA1B2);
    assert_int_equal(msg[0], 0xA1);
    assert_int_equal(msg[1], 0xB2);
    assert_int_equal(msg[2], 3);
    dns_set_id(msg, 1, 0); /* too short: untouched */
    assert_int_equal(msg[0], 0xA1);
}

/* ---- upstream answers ---- */

/* The response header and question for the query "www.example.com" A, id 0x4242: the name
 * starts at offset 12. */
static void
begin_response(msg_t *m, unsigned flags, unsigned an, unsigned ns, unsigned ar)
{
    put_header(m, 0x4242, FLAG_QR | FLAG_RD | FLAG_RA | flags, 1, an, ns, ar);
    put_name(m, "www.example.com");
    put16(m, DNS_TYPE_A);
    put16(m, DNS_CLASS_IN);
}

static dns_query_t
www_query(void)
{
    msg_t m;
    build_query(&m, 0x4242, "www.example.com", DNS_TYPE_A, 1);
    return parsed(&m);
}

static int
answer(const msg_t *m, struct in_addr *a, uint32_t *ttl, int max, int *rcode)
{
    dns_query_t q = www_query();
    return dns_answer_addrs(m->b, m->n, &q, a, ttl, max, rcode);
}

static void
test_answer_gives_the_a_records_with_their_ttls(void **state)
{
    (void)state;
    msg_t m;
    begin_response(&m, 0, 2, 0, 0);
    put_ptr(&m, 12);
    put_a(&m, DNS_CLASS_IN, 300, "192.0.2.1");
    put_ptr(&m, 12);
    put_a(&m, DNS_CLASS_IN, 0x80000000u, "192.0.2.2"); /* MSB set: RFC 2181 says 0 */
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode = -1;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), 2);
    assert_int_equal(rcode, DNS_RCODE_NOERROR);
    assert_string_equal(ntoa(a[0]), "192.0.2.1");
    assert_int_equal(ttl[0], 300);
    assert_string_equal(ntoa(a[1]), "192.0.2.2");
    assert_int_equal(ttl[1], 0);
}

/* www.example.com CNAME cdn.example.net, cdn.example.net CNAME edge.cdn.example.net, its A and
 * AAAA records, an NS in authority and EDNS OPT in additional; every owner name and the second
 * target are compression pointers, the second target a label and a pointer. */
static void
build_cname_chain(msg_t *m)
{
    begin_response(m, 0, 5, 1, 1);
    put_ptr(m, 12);
    size_t rd = begin_rr(m, DNS_TYPE_CNAME, DNS_CLASS_IN, 60);
    size_t cdn = put_name(m, "cdn.example.net");
    end_rdata(m, rd);

    put_ptr(m, cdn);
    rd = begin_rr(m, DNS_TYPE_CNAME, DNS_CLASS_IN, 60);
    size_t edge = put_labels(m, "edge");
    put_ptr(m, cdn);
    end_rdata(m, rd);

    put_ptr(m, edge);
    put_a(m, DNS_CLASS_IN, 20, "198.51.100.7");
    put_ptr(m, edge);
    rd = begin_rr(m, DNS_TYPE_AAAA, DNS_CLASS_IN, 20);
    put_raw(m, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
    end_rdata(m, rd);
    put_ptr(m, edge);
    put_a(m, DNS_CLASS_IN, 25, "198.51.100.8");

    put_ptr(m, cdn + 4); /* example.net */
    rd = begin_rr(m, TYPE_NS, DNS_CLASS_IN, 3600);
    put_labels(m, "ns1");
    put_ptr(m, cdn + 4);
    end_rdata(m, rd);
    put_opt(m);
}

static void
test_answer_follows_a_cname_chain_written_with_pointers(void **state)
{
    (void)state;
    msg_t m;
    build_cname_chain(&m);
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode = -1;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), 2); /* the AAAA is not an address here */
    assert_int_equal(rcode, DNS_RCODE_NOERROR);
    assert_string_equal(ntoa(a[0]), "198.51.100.7");
    assert_int_equal(ttl[0], 20);
    assert_string_equal(ntoa(a[1]), "198.51.100.8");
    assert_int_equal(ttl[1], 25);
}

static void
test_answer_stores_at_most_max_but_reads_every_record(void **state)
{
    (void)state;
    msg_t m;
    build_cname_chain(&m);
    struct in_addr a[1];
    uint32_t ttl[1];
    int rcode = -1;
    assert_int_equal(answer(&m, a, ttl, 1, &rcode), 1);
    assert_string_equal(ntoa(a[0]), "198.51.100.7");
    assert_int_equal(answer(&m, NULL, NULL, 0, &rcode), 0);
    /* a bad record past the ones stored still makes the message malformed */
    begin_response(&m, 0, 2, 0, 0);
    put_ptr(&m, 12);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    put_ptr(&m, 200);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.2");
    assert_int_equal(answer(&m, a, ttl, 1, &rcode), -1);
}

/* Cut anywhere in the header, the question or the answers, the message is refused; past the
 * answers (authority, additional) it is not read, so the answer stands. */
static void
test_answer_cut_short_is_refused_up_to_the_end_of_the_answers(void **state)
{
    (void)state;
    msg_t m;
    build_cname_chain(&m);
    size_t answers_end = 0;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;
    dns_query_t q = www_query();
    for (size_t n = 0; n <= m.n; n++) {
        int got = dns_answer_addrs(m.b, n, &q, a, ttl, 4, &rcode);
        if (got == -1) {
            if (answers_end)
                fail_msg("cut at %zu refused, but %zu was not", n, answers_end);
        } else {
            assert_int_equal(got, 2);
            if (!answers_end)
                answers_end = n;
        }
    }
    assert_true(answers_end > 12);
    assert_true(answers_end < m.n);
}

static void
test_answer_refuses_a_forward_pointer(void **state)
{
    (void)state;
    msg_t m;
    begin_response(&m, 0, 2, 0, 0);
    size_t first = m.n;
    put_ptr(&m, first + 16); /* the second record's owner name, further on */
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    assert_int_equal(m.n, first + 16);
    put_name(&m, "www.example.com");
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.2");
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    /* pointing backwards to the same name is fine */
    m.b[first + 1] = 12;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), 2);
}

static void
test_answer_refuses_pointer_loops(void **state)
{
    (void)state;
    msg_t m;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;

    /* a pointer to itself */
    begin_response(&m, 0, 1, 0, 0);
    size_t self = m.n;
    put_ptr(&m, self);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* a label then a pointer back to the label: backwards, yet a loop */
    begin_response(&m, 0, 1, 0, 0);
    size_t label = put_labels(&m, "loop");
    put_ptr(&m, label);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* two names pointing at each other */
    begin_response(&m, 0, 2, 0, 0);
    size_t one = m.n;
    put_ptr(&m, one + 16);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    put_ptr(&m, one);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.2");
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* a pointer into the header */
    begin_response(&m, 0, 1, 0, 0);
    put_ptr(&m, 4);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
}

/* A TXT record's opaque rdata holds "example" and then pointers, each to the one before; an
 * A record's owner name is a pointer to the last: hops + 1 pointers in all. */
static void
build_pointer_chain(msg_t *m, unsigned hops)
{
    begin_response(m, 0, 2, 0, 0);
    put_ptr(m, 12);
    size_t rd = begin_rr(m, TYPE_TXT, DNS_CLASS_IN, 1);
    size_t prev = put_name(m, "example");
    for (unsigned i = 1; i < hops; i++) {
        size_t here = m->n;
        put_ptr(m, prev);
        prev = here;
    }
    end_rdata(m, rd);
    put_ptr(m, prev);
    put_a(m, DNS_CLASS_IN, 1, "192.0.2.9");
}

static void
test_answer_follows_32_pointers_per_name_and_no_more(void **state)
{
    (void)state;
    msg_t m;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;
    build_pointer_chain(&m, 32);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), 1);
    assert_string_equal(ntoa(a[0]), "192.0.2.9");
    build_pointer_chain(&m, 33);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
}

static void
test_answer_refuses_a_wrong_id_or_a_query(void **state)
{
    (void)state;
    msg_t m;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;
    build_cname_chain(&m);
    m.b[1] ^= 1;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    m.b[1] ^= 1;
    m.b[2] &= 0x7F; /* QR clear: a query */
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    m.b[2] |= 0x80 | (OPCODE(2) >> 8); /* STATUS */
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
}

static void
test_answer_refuses_a_question_that_is_not_the_query(void **state)
{
    (void)state;
    msg_t m;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;
    dns_query_t q = www_query();

    /* another name, another type, another class, no question, two questions */
    static const char *names[] = {"www.example.org", "www.example.com.evil", "ww.example.com"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        put_header(&m, 0x4242, FLAG_QR, 1, 1, 0, 0);
        put_name(&m, names[i]);
        put16(&m, DNS_TYPE_A);
        put16(&m, DNS_CLASS_IN);
        put_ptr(&m, 12);
        put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
        assert_int_equal(dns_answer_addrs(m.b, m.n, &q, a, ttl, 4, &rcode), -1);
    }
    begin_response(&m, 0, 0, 0, 0);
    m.b[12 + 17 + 1] = DNS_TYPE_AAAA;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    begin_response(&m, 0, 0, 0, 0);
    m.b[12 + 17 + 3] = 3; /* CHAOS */
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    begin_response(&m, 0, 0, 0, 0);
    m.b[5] = 0;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    m.b[5] = 2;
    put_ptr(&m, 12);
    put16(&m, DNS_TYPE_A);
    put16(&m, DNS_CLASS_IN);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* the same name in other case is the same question (0x20 encoding) */
    put_header(&m, 0x4242, FLAG_QR, 1, 1, 0, 0);
    put_name(&m, "WWW.EXAMPLE.com");
    put16(&m, DNS_TYPE_A);
    put16(&m, DNS_CLASS_IN);
    put_ptr(&m, 12);
    put_a(&m, DNS_CLASS_IN, 1, "192.0.2.1");
    assert_int_equal(dns_answer_addrs(m.b, m.n, &q, a, ttl, 4, &rcode), 1);
}

static void
test_answer_refuses_bad_rdata(void **state)
{
    (void)state;
    msg_t m;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode;

    /* an A record of 5 bytes */
    begin_response(&m, 0, 1, 0, 0);
    put_ptr(&m, 12);
    size_t rd = begin_rr(&m, DNS_TYPE_A, DNS_CLASS_IN, 1);
    put_raw(&m, "\xC0\x00\x02\x01\x00", 5);
    end_rdata(&m, rd);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* an rdlength past the end */
    begin_response(&m, 0, 1, 0, 0);
    put_ptr(&m, 12);
    rd = begin_rr(&m, TYPE_TXT, DNS_CLASS_IN, 1);
    put_raw(&m,
            "\x03"
            "abc",
            4);
    end_rdata(&m, rd);
    m.b[rd - 1] = 5;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* a CNAME whose name ends before its rdata does, and one that runs past it */
    begin_response(&m, 0, 1, 0, 0);
    put_ptr(&m, 12);
    rd = begin_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 1);
    put_name(&m, "a.example");
    put8(&m, 0);
    end_rdata(&m, rd);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);
    m.b[rd - 1] -= 2;
    m.n -= 1;
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* a CNAME target with a space in a label */
    begin_response(&m, 0, 1, 0, 0);
    put_ptr(&m, 12);
    rd = begin_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 1);
    put_name(&m, "a b.example");
    end_rdata(&m, rd);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), -1);

    /* an A record of another class is not an address, and any length is its own business */
    begin_response(&m, 0, 1, 0, 0);
    put_ptr(&m, 12);
    rd = begin_rr(&m, DNS_TYPE_A, 3, 1);
    put_raw(&m, "\x01\x02\x03\x04\x05\x06", 6);
    end_rdata(&m, rd);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), 0);
}

static void
test_answer_reports_nxdomain_with_no_address(void **state)
{
    (void)state;
    msg_t m;
    struct in_addr a[4];
    uint32_t ttl[4];
    int rcode = -1;
    begin_response(&m, DNS_RCODE_NXDOMAIN, 0, 1, 1);
    put_ptr(&m, 16); /* example.com */
    size_t rd = begin_rr(&m, TYPE_SOA, DNS_CLASS_IN, 900);
    put_labels(&m, "ns");
    put_ptr(&m, 16);
    put_labels(&m, "hostmaster");
    put_ptr(&m, 16);
    for (int i = 0; i < 5; i++)
        put32(&m, 3600);
    end_rdata(&m, rd);
    put_opt(&m);
    assert_int_equal(answer(&m, a, ttl, 4, &rcode), 0);
    assert_int_equal(rcode, DNS_RCODE_NXDOMAIN);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_name_is_lower_cased_and_the_question_end_found),
        cmocka_unit_test(test_query_with_edns_opt_in_additional_is_accepted),
        cmocka_unit_test(test_query_for_the_root_has_an_empty_name),
        cmocka_unit_test(test_query_refuses_responses_other_opcodes_and_question_counts),
        cmocka_unit_test(test_query_cut_short_anywhere_is_refused),
        cmocka_unit_test(test_query_refuses_a_compression_pointer),
        cmocka_unit_test(test_query_refuses_labels_with_dots_nul_spaces_or_unprintable_bytes),
        cmocka_unit_test(test_query_refuses_extended_label_types_and_long_names),
        cmocka_unit_test(test_reply_copies_the_question_as_sent_and_sets_the_flags),
        cmocka_unit_test(test_reply_is_refused_when_cap_is_too_small_or_rcode_out_of_range),
        cmocka_unit_test(test_reply_can_be_built_in_place),
        cmocka_unit_test(test_set_id_rewrites_the_first_two_bytes),
        cmocka_unit_test(test_answer_gives_the_a_records_with_their_ttls),
        cmocka_unit_test(test_answer_follows_a_cname_chain_written_with_pointers),
        cmocka_unit_test(test_answer_stores_at_most_max_but_reads_every_record),
        cmocka_unit_test(test_answer_cut_short_is_refused_up_to_the_end_of_the_answers),
        cmocka_unit_test(test_answer_refuses_a_forward_pointer),
        cmocka_unit_test(test_answer_refuses_pointer_loops),
        cmocka_unit_test(test_answer_follows_32_pointers_per_name_and_no_more),
        cmocka_unit_test(test_answer_refuses_a_wrong_id_or_a_query),
        cmocka_unit_test(test_answer_refuses_a_question_that_is_not_the_query),
        cmocka_unit_test(test_answer_refuses_bad_rdata),
        cmocka_unit_test(test_answer_reports_nxdomain_with_no_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
