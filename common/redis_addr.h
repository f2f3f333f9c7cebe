/* redis_addr.h — where Redis is, as the daemons' --redis option says it (docs/operations.md
 * "Redis"): "unix:/path", "host:port" (or "host": port 6379), or
 * "sentinel://HOST:PORT[,HOST:PORT...]/NAME": the sentinels to ask for the primary named NAME
 * (a HOST:PORT without its port is 26379; HOST a name, an IPv4 address or [an IPv6 one]).
 *
 * Pure parsing, no I/O (redis_sentinel.h asks and connects); fuzzed (tests/fuzz/fuzz_redis_addr).
 * The primary's address a sentinel answers is outside input too: redis_endpoint_from_reply
 * checks it the same way. */
#ifndef SP_REDIS_ADDR_H
#define SP_REDIS_ADDR_H

#include <stddef.h>

#include "err.h"

#define REDIS_HOST_MAX      255 /* a DNS name's length */
#define REDIS_SENTINELS_MAX 16
#define REDIS_MASTER_MAX    64 /* a primary's name: 1 to 64 of A-Z a-z 0-9 . _ - */
#define REDIS_PORT_DEFAULT  6379
#define REDIS_SENTINEL_PORT 26379

typedef struct {
    char host[REDIS_HOST_MAX + 1]; /* brackets of an IPv6 address removed */
    int port;                      /* 1..65535 */
} redis_endpoint_t;

typedef enum { REDIS_ADDR_UNIX, REDIS_ADDR_TCP, REDIS_ADDR_SENTINEL } redis_addr_kind_t;

typedef struct {
    redis_addr_kind_t kind;
    char path[108];       /* REDIS_ADDR_UNIX: the socket (sun_path's size) */
    redis_endpoint_t tcp; /* REDIS_ADDR_TCP */
    redis_endpoint_t sentinels[REDIS_SENTINELS_MAX]; /* REDIS_ADDR_SENTINEL, in the order given */
    int nsentinels;
    char master[REDIS_MASTER_MAX + 1];
} redis_addr_t;

/* Parses s into out. 0, or < 0 (-ERR_BAD_REQ) with why in err (s quoted). */
int redis_addr_parse(const char *s, redis_addr_t *out, err_t *err);

/* The primary's address as a sentinel answered it (get-master-addr-by-name: host and port as
 * strings of hlen and plen bytes), checked: a host of 1 to REDIS_HOST_MAX bytes of letters,
 * digits and . - _ : (an IPv6 address comes bare), a port of digits in 1..65535. 0, or < 0
 * with why in err. */
int redis_endpoint_from_reply(const char *host, size_t hlen, const char *port, size_t plen,
                              redis_endpoint_t *out, err_t *err);

/* "host:port" ("[v6]:port" for an IPv6 address) into buf, for logs. Returns buf. */
const char *redis_endpoint_str(const redis_endpoint_t *e, char *buf, size_t cap);

#endif
