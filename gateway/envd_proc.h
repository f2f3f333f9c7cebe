/* envd_proc.h — the processes E2B's SDK starts in a sandbox (commands and PTYs), kept as envd
 * keeps them (docs/e2b-wire.md 3.5, 3.6): by pid (and an optional tag), followed by any number
 * of streams (the Start that made one, Connects from other clients), fed input, signalled and
 * resized from other requests, and outliving every stream: a client going away, or its
 * Connect-Timeout-Ms passing, ends only its stream, never the process (E2B kills it then: its
 * users' most-reported complaint, e2b #1074).
 *
 * A command is the executor's proc.spawn (pipes: stdout and stderr apart, stdin on request), a
 * PTY its terminal op; the gateway holds the op's channel for the process's life. Output is
 * given to whoever follows when it comes (envd's rule: a process nobody follows is not held
 * back, its output goes by), and recorded in the session's event log as "process" and
 * "process_output" events, so the web IDE, /watch and a replay see what an SDK ran. A follower
 * whose client reads slowly holds the executor's credit (the process waits on its pipe) up to
 * ENVD_FOLLOW_QUEUE bytes of its own. An ended process stays findable ENVD_ENDED_KEEP seconds
 * (a Connect then gets its end at once), as envd does. */
#ifndef SP_ENVD_PROC_H
#define SP_ENVD_PROC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

typedef struct gw_session gw_session_t;
typedef struct envd_proc envd_proc_t;
typedef struct envd_follower envd_follower_t;

#define ENVD_FOLLOW_QUEUE (1u << 20) /* a follower's unsent bytes before the process waits */
#define ENVD_ENDED_KEEP   30         /* seconds an ended process stays findable */
#define ENVD_PROCS_MAX    256        /* processes a sandbox may have started and not ended */
#define ENVD_INPUT_MAX    (1u << 20) /* input waiting for the process to take it */
#define ENVD_PROC_WINDOW  (1u << 20) /* output the executor may send ahead of the gateway */

struct envd_follower {
    envd_follower_t *next;
    envd_proc_t *proc; /* NULL once let go */
    /* A message for the stream: the JSON text of {"event":{"start"|"data"|"end"}} (borrowed;
     * built once for every follower). */
    void (*on_event)(envd_follower_t *f, const char *msg, size_t len);
    /* The process let f go: it ended (its end event came first: code NULL), or it could not
     * start or its runtime went away (code and message). f may be freed from here. */
    void (*on_gone)(envd_follower_t *f, const char *code, const char *message);
    /* Bytes f's client has not taken yet. */
    size_t (*queued)(envd_follower_t *f);
};

/* Starts what StartRequest start (borrowed; docs/e2b-wire.md 3.3) asks, as user ("" the
 * sandbox's default one), followed by f, which hears its start event ({"event":{"start":
 * {"pid":N}}}) once it runs. NULL with err when the request is refused. */
envd_proc_t *envd_proc_start(gw_session_t *s, json_object *start, const char *user,
                             envd_follower_t *f, err_t *err);
/* The process a ProcessSelector ({"pid":N} or {"tag":"…"}) names, ended ones still kept
 * included, to cb (now, or once known): p, or NULL with err (not_found in envd's words, a
 * malformed selector, the runtime not connected). One this gateway does not know (started
 * before it restarted or took the sandbox over, or before its link to the executor dropped) is
 * taken up from the executor (proc.attach by pid or tag, from its next output): commands
 * outlive their gateway too. A PTY is not taken up: it ends with its gateway's link. */
typedef void (*envd_found_cb)(void *ud, envd_proc_t *p, const err_t *err);
void envd_proc_lookup(gw_session_t *s, json_object *selector, envd_found_cb cb, void *ud);
/* f follows p from now: its start event first, then new output and the end (at once if p has
 * ended). */
void envd_proc_follow(envd_proc_t *p, envd_follower_t *f);
/* f stops following (its stream ended); the process goes on. */
void envd_proc_unfollow(envd_follower_t *f);
/* f's client took bytes: the process may go on if it waited for f. */
void envd_proc_drained(envd_proc_t *p);
uint32_t envd_proc_pid(const envd_proc_t *p);
/* Input (ProcessInput: stdin, or pty for a PTY), the end of stdin, a signal, a PTY's size.
 * 0, or -1 with err. */
int envd_proc_input(envd_proc_t *p, bool pty, const void *data, size_t n, err_t *err);
int envd_proc_close_stdin(envd_proc_t *p, err_t *err);
int envd_proc_signal(envd_proc_t *p, int signo, err_t *err);
int envd_proc_resize(envd_proc_t *p, unsigned cols, unsigned rows, err_t *err);
/* ListResponse's processes: those running (new ref): this gateway's, and of execs (the
 * executor's proc.list, borrowed; NULL none) those running that it does not hold. */
json_object *envd_proc_list(gw_session_t *s, json_object *execs);
/* The session ends: its processes are forgotten (their channels have closed already). */
void envd_procs_free(gw_session_t *s);

#endif
