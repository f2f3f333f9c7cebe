/* dns_msg.c — a sandbox's DNS query, the upstream's answer to it and netd's own replies
 * (RFC 1035, section 4). Every byte comes from a sandbox or an upstream: each read is checked
 * against the message's length first. Names are read by one function, name_read(): labels of
 * printable bytes only, lower-cased, at most DNS_NAME_MAX characters as text, and compression
 * pointers (in responses only) that must lead before the labels they end, so that a name is
 * never read twice and no loop is possible; the hop limit bounds the work besides. */
#include "dns_msg.h"

#include <string.h>

#define DNS_HEADER_LEN 12
#define DNS_MAX_HOPS   32 /* compression pointers followed per name */
#define DNS_LABEL_MAX  63

#define DNS_FLAG_QR      0x8000u
#define DNS_FLAG_RD      0x0100u
#define DNS_FLAG_RA      0x0080u
#define DNS_OPCODE(f)    (((f) >> 11) & 0xFu)
#define DNS_RCODE(f)     ((f)&0xFu)
#define DNS_RR_FIXED     10 /* type, class, ttl, rdlength after a record's owner name */
#define DNS_QUESTION_MIN 5  /* the root name's zero byte, type and class */

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Reads the name at *off into text (lower case, dotted, no trailing dot, "" for the root) and
 * moves *off just past it where it lies: after its zero byte, or after its first pointer.
 * A pointer must lead to an offset past the header and before the start of the run of labels
 * it ends (so each hop goes strictly backwards). A label byte must be printable and not a space
 * or '.': the text is then safe to log and has one meaning. 0, or -1 when malformed. */
static int
name_read(const uint8_t *msg, size_t len, size_t *off, int follow_pointers,
          char text[DNS_NAME_MAX + 1])
{
    size_t at = *off, end = 0, n = 0;
    size_t run_start = at; /* where the labels being read began: a pointer must go before it */
    int hops = 0;
    for (;;) {
        if (at >= len)
            return -1;
        uint8_t c = msg[at];
        if ((c & 0xC0) == 0xC0) {
            if (!follow_pointers || at + 1 >= len || ++hops > DNS_MAX_HOPS)
                return -1;
            size_t to = (size_t)(c & 0x3F) << 8 | msg[at + 1];
            if (to < DNS_HEADER_LEN || to >= run_start)
                return -1;
            if (!end)
                end = at + 2;
            at = run_start = to;
            continue;
        }
        if (c > DNS_LABEL_MAX) /* 01 and 10: the extended label types, obsolete */
            return -1;
        at++;
        if (c == 0)
            break;
        if (c > len - at || n + (n > 0) + c > DNS_NAME_MAX)
            return -1;
        if (n > 0)
            text[n++] = '.';
        for (size_t i = 0; i < c; i++) {
            uint8_t b = msg[at + i];
            if (b <= ' ' || b >= 0x7F || b == '.')
                return -1;
            text[n++] = (char)(b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b);
        }
        at += c;
    }
    text[n] = '\0';
    *off = end ? end : at;
    return 0;
}

int
dns_parse_query(const uint8_t *msg, size_t len, dns_query_t *q)
{
    if (len < DNS_HEADER_LEN)
        return -1;
    uint16_t flags = get16(msg + 2);
    if ((flags & DNS_FLAG_QR) || DNS_OPCODE(flags) != 0 || get16(msg + 4) != 1)
        return -1;
    size_t off = DNS_HEADER_LEN;
    if (name_read(msg, len, &off, 0, q->name) < 0 || len - off < 4)
        return -1;
    q->id = get16(msg);
    q->flags = flags;
    q->qtype = get16(msg + off);
    q->qclass = get16(msg + off + 2);
    q->question_end = off + 4;
    return 0;
}

size_t
dns_build_reply(const uint8_t *query, const dns_query_t *q, int rcode, uint8_t *out, size_t cap)
{
    size_t n = q->question_end;
    if (n < DNS_HEADER_LEN + DNS_QUESTION_MIN || n > DNS_MSG_MAX || n > cap || rcode < 0 ||
        rcode > 15)
        return 0;
    /* the question first: query and out may be the same buffer */
    memmove(out + DNS_HEADER_LEN, query + DNS_HEADER_LEN, n - DNS_HEADER_LEN);
    put16(out, q->id);
    put16(out + 2, (uint16_t)(DNS_FLAG_QR | (q->flags & DNS_FLAG_RD) | DNS_FLAG_RA | rcode));
    put16(out + 4, 1);
    put16(out + 6, 0);
    put16(out + 8, 0);
    put16(out + 10, 0);
    return n;
}

void
dns_set_id(uint8_t *msg, size_t len, uint16_t id)
{
    if (len >= 2)
        put16(msg, id);
}

int
dns_answer_addrs(const uint8_t *msg, size_t len, const dns_query_t *q, struct in_addr *addrs,
                 uint32_t *ttls, int max, int *rcode)
{
    char name[DNS_NAME_MAX + 1];
    if (len < DNS_HEADER_LEN)
        return -1;
    uint16_t flags = get16(msg + 2);
    if (get16(msg) != q->id || !(flags & DNS_FLAG_QR) || DNS_OPCODE(flags) != 0 ||
        get16(msg + 4) != 1)
        return -1;
    unsigned answers = get16(msg + 6);

    size_t off = DNS_HEADER_LEN;
    if (name_read(msg, len, &off, 1, name) < 0 || len - off < 4 || strcmp(name, q->name) != 0 ||
        get16(msg + off) != q->qtype || get16(msg + off + 2) != q->qclass)
        return -1;
    off += 4;

    int stored = 0;
    for (unsigned i = 0; i < answers; i++) {
        if (name_read(msg, len, &off, 1, name) < 0 || len - off < DNS_RR_FIXED)
            return -1;
        uint16_t type = get16(msg + off), class = get16(msg + off + 2);
        uint32_t ttl = get32(msg + off + 4);
        size_t rdlen = get16(msg + off + 8);
        off += DNS_RR_FIXED;
        if (rdlen > len - off)
            return -1;
        if (class == DNS_CLASS_IN && type == DNS_TYPE_A) {
            if (rdlen != 4)
                return -1;
            if (stored < max) {
                memcpy(&addrs[stored].s_addr, msg + off, 4); /* already in network order */
                ttls[stored] = ttl > INT32_MAX ? 0 : ttl;    /* RFC 2181, 8: MSB set means 0 */
                stored++;
            }
        } else if (class == DNS_CLASS_IN && type == DNS_TYPE_CNAME) {
            size_t target = off;
            if (name_read(msg, off + rdlen, &target, 1, name) < 0 || target != off + rdlen)
                return -1;
        }
        off += rdlen;
    }
    *rcode = (int)DNS_RCODE(flags);
    return stored;
}
