/* test_netd_dns_answer.c — netd/dns_msg on upstream answers assembled byte by byte
 * (dns_build.h): plain A records, a CNAME chain written with compression pointers, AAAA and other
 * records skipped, authority and EDNS additional left unread, and the refusals: a forward
 * pointer, pointer loops, the hop limit, a pointer into the header, cut-short messages, a wrong
 * id, a question that is not the query's, a bad A or CNAME rdata. Queries: test_netd_dns_query.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dns_build.h"

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
