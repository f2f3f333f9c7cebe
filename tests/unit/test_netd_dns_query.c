/* test_netd_dns_query.c — netd/dns_msg on queries assembled byte by byte (dns_build.h): case,
 * EDNS, the root, every refusal (a response, another opcode, two questions, a pointer, bad label
 * bytes, too long, cut short), and netd's own replies (flags, the question as sent, in place, too
 * small a buffer). Upstream answers: test_netd_dns_answer.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dns_build.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
