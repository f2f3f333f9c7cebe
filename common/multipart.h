/* multipart.h — a streaming multipart/form-data parser (RFC 7578 over RFC 2046's framing).
 *
 * The body is fed in chunks of any size, as it arrives; a delimiter may straddle chunks. Part
 * data is handed to a callback as it is recognised, never collected, so memory stays bounded
 * (the part headers, at most MULTIPART_HEADERS_MAX bytes, and the delimiter) however large the
 * parts are. Pure: no I/O. */
#ifndef SP_MULTIPART_H
#define SP_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define MULTIPART_BOUNDARY_MAX 200         /* RFC 2046 allows 70; be generous */
#define MULTIPART_HEADERS_MAX  (16 * 1024) /* one part's header block */

/* What a part's headers said (borrowed for the duration of the on_part callback). */
typedef struct {
    const char *name;         /* Content-Disposition name, "" when none */
    const char *filename;     /* Content-Disposition filename, NULL when absent */
    const char *content_type; /* Content-Type, "" when none */
} multipart_part_t;

/* Callbacks; any may be NULL. A negative return stops the parser: multipart_feed returns it. */
typedef struct {
    int (*on_part)(void *ud, const multipart_part_t *part); /* headers complete */
    int (*on_data)(void *ud, const char *p, size_t n);      /* the part's bytes, in order */
    int (*on_part_end)(void *ud);                           /* the part's delimiter seen */
} multipart_cb_t;

typedef struct multipart multipart_t;

/* The boundary parameter of a Content-Type header value ("multipart/form-data;
 * boundary=...", quoted or not) into out[0..cap). Returns 0, or -1 when the type is not
 * multipart/form-data or the boundary is missing, empty or too long. */
int multipart_boundary(const char *content_type, char *out, size_t cap);

/* A parser for a body framed by boundary (copied). cb is copied; ud is passed to it. */
multipart_t *multipart_new(const char *boundary, const multipart_cb_t *cb, void *ud);
void multipart_free(multipart_t *m);

/* Feeds the next n bytes of the body. Returns 0, -ECANCELED when a callback stopped it, or -EINVAL
 * with err set for a malformed body (bad delimiter line, headers too long or unparseable). After an
 * error the parser takes no more input. */
int multipart_feed(multipart_t *m, const char *p, size_t n, err_t *err);
/* True once the closing delimiter ("--boundary--") was seen; later bytes are ignored. */
bool multipart_done(const multipart_t *m);
/* The end of the body: -EINVAL with err set unless the closing delimiter was seen. */
int multipart_finish(multipart_t *m, err_t *err);

#endif
