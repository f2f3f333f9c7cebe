/* http_rt_upload_int.h — what upload_file's two files share (http_rt_upload.c: the form, the
 * channel, the part's way; http_rt_unzip.c: a zip part, unpacked entry by entry). */
#ifndef SP_HTTP_RT_UPLOAD_INT_H
#define SP_HTTP_RT_UPLOAD_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

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
#define UL_SPOOL_MAX    (1u << 20)    /* part bytes held while the worker writes the spool */
#define UL_ZCHUNK       (256u * 1024) /* inflated per job (the executor's window) */

/* SPOOL: the zip part goes to the spool; CHECK: spooled whole, its directory checked;
 * UNPACK: entry by entry. */
enum { ROUTING, PARSING, PREP, STREAM, SPOOL, CHECK, UNPACK, DONE };
enum { JOB_SPOOL, JOB_CHECK, JOB_INFLATE };

/* One piece of work on libuv's threadpool (http_rt_unzip_work.c). While busy, the worker owns
 * this struct's other fields, the upload's zip reader (u->z) and its spool fd (u->spool); the
 * loop reads neither until the after-work callback (uv_queue_work orders the two). cancel is
 * the one field both sides touch, atomically. */
typedef struct {
    uv_work_t req;
    int kind;
    bool busy;
    atomic_bool cancel; /* the loop gave up: the worker stops at its next step */
    buf_t data;         /* SPOOL: the bytes to write; INFLATE: the bytes inflated */
    zip_limits_t lim;   /* CHECK */
    zip_reader_t *z;    /* CHECK: the reader made, handed to the upload on the loop */
    size_t entry;       /* INFLATE: the entry (opened first when open_entry) */
    bool open_entry, eof;
    int rc;
    err_t err;
} ul_job_t;

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
    size_t entry;    /* the next entry to unpack */
    size_t cur;      /* the entry being unpacked */
    bool entry_open; /* its bytes are being read (the first job opens it) */
    bool entry_eof;
    ul_job_t job;
    bool gone; /* freed once the job in flight is back */
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

/* Frees u, or once the job in flight is back (it is told to stop). */
void ul_release(ul_t *u);

/* http_rt_unzip.c: the spooled part checked whole, then unpacked; the next entry; an entry's
 * bytes into the channel; a job's result. */
void ul_unpack(ul_t *u);
void ul_next_entry(ul_t *u);
void ul_pump_entry(ul_t *u);
void ul_checked(ul_t *u);
void ul_inflated(ul_t *u);

/* http_rt_unzip_work.c: the jobs. Each returns at once; its result comes back on the loop
 * (ul_spooled, ul_checked, ul_inflated) unless the upload ended meanwhile. */
void ul_job_spool(ul_t *u);   /* u->out (all of it) appended to the spool */
void ul_job_check(ul_t *u);   /* the spool's zip opened and checked whole: job.z */
void ul_job_inflate(ul_t *u); /* entry u->cur's next bytes (opened first) */
void ul_job_stop(ul_t *u);    /* asks the job in flight to stop */
void ul_job_free(ul_t *u);    /* its buffers and reader (no job in flight) */
/* http_rt_upload.c: the spool write's result. */
void ul_spooled(ul_t *u);

#endif
