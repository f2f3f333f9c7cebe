/* fuzz_dns_msg.c — netd/dns_msg on arbitrary bytes, as a query and as an answer. A query that
 * parses has a printable, lower-case name no longer than DNS_NAME_MAX and a question inside the
 * input; the reply built for it is exactly header + question, answers it with no address and,
 * QR cleared, parses back to the same query; a buffer one byte short gets nothing. As an answer
 * the input is read against a fixed query (www.example.com A, the input's own id) and against
 * the query its own question makes; storing one address agrees with storing eight. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ADDRS_MAX 8

static uint8_t scratch[DNS_MSG_MAX];

static void
check_name(const char *name)
{
    size_t n = strnlen(name, DNS_NAME_MAX + 1);
    if (n > DNS_NAME_MAX)
        __builtin_trap();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 0x7F || (c >= 'A' && c <= 'Z'))
            __builtin_trap();
        if (c == '.' && (i == 0 || i == n - 1 || name[i + 1] == '.'))
            __builtin_trap(); /* an empty label */
    }
}

/* The input as a response to q: the result is -1 or 0..ADDRS_MAX, TTLs as RFC 2181 has them,
 * and storing at most one address gives the first of the same answer. */
static void
check_answer(const uint8_t *data, size_t size, const dns_query_t *q)
{
    struct in_addr addrs[ADDRS_MAX], one;
    uint32_t ttls[ADDRS_MAX], one_ttl;
    int rcode = -1, rcode_one = -1;
    int got = dns_answer_addrs(data, size, q, addrs, ttls, ADDRS_MAX, &rcode);
    if (got < -1 || got > ADDRS_MAX)
        __builtin_trap();
    if (got < 0)
        return;
    if (rcode < 0 || rcode > 15)
        __builtin_trap();
    for (int i = 0; i < got; i++)
        if (ttls[i] > INT32_MAX)
            __builtin_trap();
    int got_one = dns_answer_addrs(data, size, q, &one, &one_ttl, 1, &rcode_one);
    if (got_one != (got > 0) || rcode_one != rcode ||
        (got > 0 && (one.s_addr != addrs[0].s_addr || one_ttl != ttls[0])))
        __builtin_trap();
}

static void
check_query(const uint8_t *data, size_t size)
{
    dns_query_t q, again;
    if (dns_parse_query(data, size, &q) < 0)
        return;
    check_name(q.name);
    if (q.question_end < 12 + 5 || q.question_end > size)
        __builtin_trap();

    size_t n = dns_build_reply(data, &q, DNS_RCODE_REFUSED, scratch, sizeof scratch);
    if (n != q.question_end || memcmp(scratch + 12, data + 12, n - 12) != 0)
        __builtin_trap();
    struct in_addr addr;
    uint32_t ttl;
    int rcode = -1;
    if (dns_answer_addrs(scratch, n, &q, &addr, &ttl, 1, &rcode) != 0 || rcode != DNS_RCODE_REFUSED)
        __builtin_trap();
    scratch[2] &= 0x7F; /* QR cleared: the reply's question read as a query */
    if (dns_parse_query(scratch, n, &again) < 0 || again.id != q.id ||
        strcmp(again.name, q.name) != 0 || again.qtype != q.qtype || again.qclass != q.qclass ||
        again.question_end != n)
        __builtin_trap();
    if (dns_build_reply(data, &q, DNS_RCODE_NOERROR, scratch, n - 1) != 0)
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_query(data, size);

    dns_query_t fixed = {.qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
    strcpy(fixed.name, "www.example.com");
    fixed.id = size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0;
    check_answer(data, size, &fixed);

    /* the query the input's own question makes, when it is written without pointers */
    if (size >= 12 && size <= sizeof scratch) {
        dns_query_t own;
        memcpy(scratch, data, size);
        scratch[2] &= 0x7F;
        if (dns_parse_query(scratch, size, &own) == 0)
            check_answer(data, size, &own);
    }
    return 0;
}
