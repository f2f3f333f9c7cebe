/* dns_msg.h — the few DNS messages (RFC 1035) the sandboxes' resolver reads and writes, as pure
 * functions over bytes (no I/O): a sandbox's query, the upstream's answer to it, and the answers
 * netd makes itself (a refusal, an empty answer). Everything here comes from a hostile sandbox or
 * an untrusted upstream: lengths, label pointers and counts are all checked. */
#ifndef SP_DNS_MSG_H
#define SP_DNS_MSG_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_MAX 253 /* dotted text, no trailing dot */
#define DNS_MSG_MAX  65535

enum { DNS_TYPE_A = 1, DNS_TYPE_CNAME = 5, DNS_TYPE_AAAA = 28, DNS_CLASS_IN = 1 };
enum {
    DNS_RCODE_NOERROR = 0,
    DNS_RCODE_FORMERR = 1,
    DNS_RCODE_SERVFAIL = 2,
    DNS_RCODE_NXDOMAIN = 3,
    DNS_RCODE_REFUSED = 5
};

typedef struct {
    uint16_t id;
    uint16_t flags; /* the header's second 16 bits, as sent */
    char name[DNS_NAME_MAX +
              1]; /* the question's name: lower case, dotted, no trailing dot ("" for the root) */
    uint16_t qtype, qclass;
    size_t question_end; /* offset just past the question (header + one question) */
} dns_query_t;

/* A query: QR 0, opcode 0 (QUERY), exactly one question, a name of valid labels (no compression
 * pointers in a query). A valid label is 1 to 63 bytes, each printable ASCII other than space and
 * '.' (0x21..0x7E but 0x2E), so the name is safe to log and has one meaning as text; the whole
 * name is at most DNS_NAME_MAX characters as text (255 bytes on the wire). Answer, authority and
 * additional counts may be non-zero (EDNS OPT in the additional section is common): they are not
 * read. 0, or -1 when msg is not such a query. */
int dns_parse_query(const uint8_t *msg, size_t len, dns_query_t *q);

/* A response to q with rcode and no records: the header (id, RD copied from the query, QR and RA
 * set), q's question as the query carried it (its case kept; the query's other records, EDNS
 * OPT included, are not copied). query and out may be the same buffer. Returns its length
 * (q->question_end), or 0 if cap is too small or rcode is not 0..15. */
size_t dns_build_reply(const uint8_t *query, const dns_query_t *q, int rcode, uint8_t *out,
                       size_t cap);

/* Rewrites a message's id in place (len >= 2). */
void dns_set_id(uint8_t *msg, size_t len, uint16_t id);

/* The IPv4 addresses of the A records in a response's answer section (whatever their owner
 * names: a CNAME chain's end is included), with their TTLs, after checking it answers q: QR set,
 * opcode 0, the same id, one question equal to q's (name compared case-insensitively, type and
 * class). Compression pointers are followed (only backwards: to an offset past the header and
 * before the labels the pointer ends, at most 32 hops per name). Every answer record is checked
 * (owner names and CNAME targets by dns_parse_query's label rules, an IN A record's rdata is 4
 * bytes) even past max; authority and additional are not read. A TTL with its top bit set counts
 * as 0 (RFC 2181, 8). Returns how many were stored (at most max; addrs and ttls may be NULL when
 * max is 0), or -1 when the message is malformed or does not answer q. *rcode gets the
 * response's rcode when the result is >= 0. */
int dns_answer_addrs(const uint8_t *msg, size_t len, const dns_query_t *q, struct in_addr *addrs,
                     uint32_t *ttls, int max, int *rcode);

#endif
