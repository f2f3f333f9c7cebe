/* session_status.h — a session's status: an enum inside the gateway, a text only at its edges
 * (the `status` field of sp:session:{ID}, status events, sp:status notes, the JSON clients get;
 * the OpenHands runtime statuses plus PAUSED and STOPPED, redis/README.md). Which changes of
 * status may happen is decided here, in one place; pure functions, no I/O.
 *
 *   NEW → STARTING_RUNTIME → RUNTIME_STARTED → READY ⇄ PAUSED
 *   STARTING_RUNTIME, RUNTIME_STARTED → ERROR            (the session could not start)
 *   PAUSED → RUNTIME_STARTED     (resumed by a gateway that re-attached it frozen: its executor
 *                                 link comes up only after the thaw)
 *   NEW, ERROR, ERROR_RUNTIME_DISCONNECTED → READY      (a session re-attached after a restart
 *                                                        whose executor answers again)
 *   any but STOPPED → ERROR_RUNTIME_DISCONNECTED, STOPPED (final) */
#ifndef SP_SESSION_STATUS_H
#define SP_SESSION_STATUS_H

#include <stdbool.h>

typedef enum {
    SESSION_NEW,          /* "": not started yet, or a status text this gateway does not know */
    SESSION_STARTING,     /* STARTING_RUNTIME: getting a sandbox, waiting for its executor */
    SESSION_STARTED,      /* RUNTIME_STARTED: the executor answers; the session's env goes in */
    SESSION_READY,        /* READY */
    SESSION_PAUSED,       /* PAUSED: the sandbox's cgroup is frozen */
    SESSION_ERROR,        /* ERROR: the session could not start */
    SESSION_DISCONNECTED, /* ERROR_RUNTIME_DISCONNECTED: the executor is gone */
    SESSION_STOPPED,      /* STOPPED: deleted; final */
} session_status_t;

#define SESSION_STATUS_COUNT (SESSION_STOPPED + 1)

/* The status's text (static; "" for SESSION_NEW). */
const char *session_status_text(session_status_t st);
/* The status a text names (as Redis holds it); SESSION_NEW for "" or a text it does not know. */
session_status_t session_status_parse(const char *text);
/* Whether a session may go from one status to the other (to == from is no change, and false). */
bool session_status_may_become(session_status_t from, session_status_t to);
/* Whether actions are accepted (queued until READY while the session starts). */
bool session_status_takes_actions(session_status_t st);

#endif
