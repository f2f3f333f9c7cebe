/* sniff.h — the name a TCP connection's first bytes say it goes to: the server name (SNI) of a
 * TLS ClientHello or the Host header of an HTTP/1.x request. Pure: bytes in, a name out. The
 * bytes come from a hostile sandbox: every length is checked against what was received. */
#ifndef SP_SNIFF_H
#define SP_SNIFF_H

#include <stddef.h>

#define SNIFF_NAME_MAX 253
#define SNIFF_PEEK_MAX 16384 /* a ClientHello or request head past this is SNIFF_OTHER */

typedef enum {
    SNIFF_MORE, /* not decided yet: call again with more bytes (never past SNIFF_PEEK_MAX) */
    SNIFF_TLS, /* a TLS handshake record holding a ClientHello; name = its SNI host_name, "" if none
                */
    SNIFF_HTTP,  /* an HTTP/1.x request head; name = its Host without the port, "" if none */
    SNIFF_OTHER, /* neither (or malformed, or too long) */
} sniff_kind_t;

/* name (cap >= SNIFF_NAME_MAX + 1, else SNIFF_OTHER) is lower-cased, without a trailing dot; a
 * name that is not a valid host name (letters, digits, '-', '.', '_', at most SNIFF_NAME_MAX;
 * labels 1 to 63 long, so no empty one) makes the result SNIFF_OTHER. name is "" unless the
 * result is SNIFF_TLS or SNIFF_HTTP. Once an answer other than SNIFF_MORE is given, more bytes
 * after these never change it.
 * TLS: records of content type 22, version 3.x, length 1..16384; the ClientHello may span
 * several. Two server_name extensions, or two host_names in one, are SNIFF_OTHER.
 * HTTP: read as strictly as the server behind the proxy may read it, so that it cannot find
 * another host in the same bytes: CRLF line ends only, no folded lines, no space before a
 * field's colon, one Host field at most, and the request target in origin form ("/...") or "*"
 * (a server takes the host of an absolute-form or authority-form target, not Host's, so those
 * are SNIFF_OTHER). An empty Host gives "". A bracketed IP literal ("[::1]:8080") gives "" (an
 * address, no name), or its text when that is a host name. */
sniff_kind_t sniff_name(const unsigned char *buf, size_t len, char *name, size_t cap);

#endif
