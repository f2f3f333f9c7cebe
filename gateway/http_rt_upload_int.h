/* http_rt_upload_int.h — what upload_file's two files share (http_rt_upload.c: the form, the
 * channel, the part's way; http_rt_unzip.c: a zip part, unpacked entry by entry). */
#ifndef SP_HTTP_RT_UPLOAD_INT_H
#define SP_HTTP_RT_UPLOAD_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"
#include "http_rt.h"
#include "http_server.h"
#include "multipart.h"
#include "session.h"
#include "zip_read.h"

#define UL_FEED         (64u * 1024)  /* body bytes parsed at a time */
#define UL_IN_MAX       (256u * 1024) /* body bytes held before the connection is paused */
#define ZIP_ENTRIES_MAX 10000         /* entries of an uploaded zip */
#define ZIP_EXPAND_MAX  (4ull << 30)  /* bytes an uploaded zip may unpack to */

enum { ROUTING, PARSING, PREP, STREAM, SPOOL, UNPACK, DONE };
enum { BEFORE, IN_PART, AFTER };
enum { FORM_OK, FORM_MALFORMED, FORM_TOO_LARGE };

typedef struct {
    uint64_t req; /* 0 once the request is gone */
    int phase;
    char sid[128];
    char dest[RT_PATH_MAX];
    bool recursive;
    /* the form */
    multipart_t *mp;
    int where, form_err;
    bool parse_failed; /* the framing broke (after the part: no concern of the upload) */
    char *filename;    /* NULL: the part has no filename (a plain field) */
    unsigned long long part_bytes;
    buf_t in;  /* body bytes not parsed yet */
    buf_t out; /* the part's bytes (or a zip entry's) not taken by the channel yet */
    /* the channel */
    session_stream_t *st;
    bool eof_sent;
    /* a zip */
    int spool;
    zip_reader_t *z;
    size_t entry;
    bool entry_eof;
    err_t zerr;
} ul_t;

/* The request, while it waits (NULL once it is gone). */
http_req_t *ul_request(ul_t *u);
/* Answers upstream's 500 {"detail": …} and ends the upload. */
void ul_fail(ul_t *u, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Answers the upload's success. */
void ul_succeed(ul_t *u);
/* Opens the executor's file.upload channel for path (at most max bytes, mode): 0, or -1 answered.
 */
int ul_open_upload(ul_t *u, const char *path, unsigned long long max, uint32_t mode);
/* Hands u->out to the channel as its credit allows: true when all of it went. */
bool ul_drain(ul_t *u);
/* Moves the upload on from where it is (its phase). */
void ul_pump(ul_t *u);

/* http_rt_unzip.c: the spooled part checked whole, then unpacked; the next entry; an entry's
 * bytes into the channel. */
void ul_unpack(ul_t *u);
void ul_next_entry(ul_t *u);
void ul_pump_entry(ul_t *u);

#endif
