/* envd_proc_int.h — what envd_proc.c, envd_proc_adopt.c and envd_proc_record.c share: a
 * process's state, and the pieces each calls of the others. Not for other files. */
#ifndef SP_ENVD_PROC_INT_H
#define SP_ENVD_PROC_INT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "envd_proc.h"
#include "session.h"

#define TAG_MAX 128

struct envd_proc {
    envd_proc_t *next;
    gw_session_t *s;
    session_stream_t *st; /* NULL once the executor closed the op */
    uint32_t pid;         /* 0 until it runs */
    bool pty, stdin_open, stdin_eof_queued, ended;
    double ended_at;
    json_object *config; /* ProcessConfig as asked: {cmd, args, envs, cwd} */
    char tag[TAG_MAX];
    envd_follower_t *followers;
    size_t owed;         /* executor credit held back for a slow follower */
    buf_t input;         /* input waiting for the executor's credit */
    json_object *end;    /* its end message, once ended */
    uint64_t unrecorded; /* output bytes the event log had no room for */
    /* being taken up from the executor (envd_proc_lookup): who waits for it */
    bool adopting;
    bool adopt_tried_pty; /* the take-up asked the executor's terminals too */
    struct waiter *waiters;
};

struct waiter {
    struct waiter *next;
    envd_found_cb cb;
    void *ud;
};

/* envd_proc.c */
/* Opens req (proc.spawn, terminal or proc.attach) on p's session with p's callbacks, a wide
 * window, and lists p there. 0, or -1 with err: p is freed. */
int envd_proc_open(envd_proc_t *p, json_object *req, err_t *err);
void envd_proc_free(envd_proc_t *p); /* not listed, or just unlisted */
/* Opens req for p again (p listed already, its last op closed): 0, or -1 with err. */
int envd_proc_reopen(envd_proc_t *p, json_object *req, err_t *err);
/* Forgets ended processes kept past ENVD_ENDED_KEEP; counts those still running. */
int envd_proc_prune(gw_session_t *s);

/* envd_proc_adopt.c */
/* Tells who waited for p to be taken up: p, or why not (err). */
void envd_proc_adopted(envd_proc_t *p, const err_t *err);
/* The executor's status of a process (proc.list's, proc.attach's): its config as started. */
void envd_proc_take_status(envd_proc_t *p, json_object *st);
/* Unlists and frees p (a take-up that found nothing). */
void envd_proc_forget(envd_proc_t *p);
/* A take-up by pid whose proc.attach found no process (error: the executor's): tries the
 * executor's terminals (a PTY it kept when its gateway went) on p's session. True: p waits on
 * that now; false: nothing more to try. */
bool envd_proc_adopt_terminal(envd_proc_t *p, json_object *error);

/* envd_proc_record.c */
void envd_proc_record_start(envd_proc_t *p);
/* b64: d's base64 (b64_len characters), made already for the followers */
void envd_proc_record_output(envd_proc_t *p, const char *stream, const uint8_t *d, size_t n,
                             const char *b64, size_t b64_len);
void envd_proc_record_end(envd_proc_t *p, json_object *end);

#endif
