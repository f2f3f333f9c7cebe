/* session.h — sessions this gateway owns: a sandbox (from the warm pool or a provider), the
 * link to its executor, its event log, its runtime status (OpenHands values) and its clients.
 *
 * Actions are serialised per session: each becomes an "action" event, its output "output"
 * events (coalesced: at most GW_OUTPUT_CHUNK bytes each, flushed within GW_OUTPUT_FLUSH_MS),
 * and its result an "observation" event, all in the session's event log. Clients subscribe as
 * cursors over that log (gw_sub_t) and are woken on every new event. */
#ifndef SP_SESSION_H
#define SP_SESSION_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "event_log.h"
#include "sandbox/provider.h"
#include "session_status.h"
#include "term_ring.h"

#define GW_OUTPUT_CHUNK     (16 * 1024)
#define GW_OUTPUT_FLUSH_MS  5
#define GW_ACTION_QUEUE_MAX 64

typedef struct gw_session gw_session_t;

/* A subscriber to a session's events (a WebSocket client cursor). */
typedef struct gw_sub gw_sub_t;
struct gw_sub {
    gw_sub_t *next;
    void (*wake)(gw_sub_t *sub); /* a new event exists */
    void (*gone)(gw_sub_t *sub); /* the session ended: drop your pointer */
};

/* A raw terminal of a session (the terminal WebSocket endpoint). It outlives its connection:
 * its output is numbered by byte offset and kept in a ring (GW_TERM_RING bytes), so a client
 * that lost its connection takes it back by id from the offset it has (docs/api.md,
 * "Re-attaching"); a detached terminal is hung up after the gateway's --term-grace.
 * session_term.c. */
typedef struct gw_term gw_term_t;
typedef struct gw_term_client gw_term_client_t;
struct gw_term_client {
    void (*wake)(gw_term_client_t *c); /* new output in the ring, or the terminal ended */
    /* The terminal lets go of this client (taken: another connection took it over; else the
     * session ended). The terminal must not be touched afterwards. */
    void (*gone)(gw_term_client_t *c, bool taken);
    /* The terminal refuses this client (code, message), let in while the terminal was being
     * taken back (session_term_reattaching), once the executor's answer shows what it asked
     * for is not there: offset since was never made (the terminal waits for another client),
     * or the executor no longer has the terminal (not_found: it is gone). The terminal must not
     * be touched afterwards. */
    void (*refused)(gw_term_client_t *c, const char *code, const char *message);
    /* Stop (true) or go on (false) reading the client's input: what it typed waits for the
     * executor's input credit (a paste past its window), nothing is dropped. */
    void (*pause)(gw_term_client_t *c, bool paused);
    uint64_t since; /* the offset the client asked for */
};
/* At most the executor's TERMINAL_KEEP (executor/terminal.h): the credit lets the PTY run this
 * far past what the client consumed, and the executor must still hold all of that for the
 * gateway that takes the terminal over. */
#define GW_TERM_RING (1024 * 1024)
/* What a client asking for a terminal the session no longer has is told (code not_found). */
#define GW_TERM_NOT_FOUND                                                                          \
    "no such terminal in this session (it ended, or nobody took it back within the gateway's "     \
    "--term-grace)"

/* Terminals a session may hold at once (connected or waiting for their client): each is a
 * shell in the sandbox and up to GW_TERM_RING of the gateway's memory. */
#define GW_TERM_MAX 32

typedef void (*session_ready_cb)(void *ud, gw_session_t *s, int code, const char *msg);

/* The API's key for one create (16-64 of [0-9a-f]): sp:create:<key> names the session made for
 * it, so an API whose gateway died before answering finds out what became of it. */
#define CREATE_KEY_MAX 64
bool session_create_key_ok(const char *key);

/* Creates a session from params {"profile","env","memory","cpu","pids","idle_timeout",
 * "idle_action","max_lifetime","lifetime_action","auto_resume" (session_lifecycle_check),
 * "plugins"} for owner; cb runs once it is READY
 * (or failed: s NULL), maybe before this returns. id (cap bytes; may be NULL) gets the new
 * session's id, "" when params were refused before one was made. create_key: the API's (NULL or
 * "": none). No sandbox is taken before Redis holds the session's record. */
void session_create(json_object *params, const char *owner, const char *create_key,
                    session_ready_cb cb, void *ud, char *id, size_t cap);
gw_session_t *session_find(const char *id);
/* Whether a session of this gateway runs in sandbox sandbox_id (session_restore.c). */
bool sessions_own_sandbox(const char *sandbox_id);
/* Whether any gateway's session that is not stopped, or any warm pool, holds sandbox_id, as Redis
 * says now (a blocking scan of every gateway's session set and pool: for the start-up clean-up's
 * few candidates only; a peer may have taken this gateway's sessions over). True when Redis
 * cannot answer. */
bool sessions_sandbox_held(const char *sandbox_id);
gw_session_t *session_next(const gw_session_t *s); /* iteration from g_gw.sessions */
const char *session_id(const gw_session_t *s);
const char *session_owner(const gw_session_t *s);
session_status_t session_status(const gw_session_t *s);
/* The sandbox user's home as its executor said it (exec_link_home; "" not known). */
const char *session_home(const gw_session_t *s);
event_log_t *session_log(gw_session_t *s);
bool session_stopped(const gw_session_t *s); /* status STOPPED (deleted), not just let go */
json_object *session_describe(const gw_session_t *s);
/* A plugin's state as its executor last told it ("running", "unavailable", ...; "" not yet
 * known). session_plugins.c. */
const char *session_plugin_state(const gw_session_t *s, const char *plugin);
/* Calls cb(ud) once the executor's first word on the session's plugins is in (at once when it
 * is, or no link asks): the session is READY before it, so a request that answers from a
 * plugin's state waits for it. Also called when the link goes down or the session ends (then
 * before anything of it is freed): cb reads the state then, "" if still unknown. */
typedef void (*session_plugins_cb)(void *ud);
void session_when_plugins_known(gw_session_t *s, session_plugins_cb cb, void *ud);
bool session_plugins_awaited(const gw_session_t *s);
/* Sets s's max_lifetime (seconds from its creation, 0: none; sessions_tick ends it past that)
 * and its record's, which a gateway taking s over reads. */
void session_set_max_lifetime(gw_session_t *s, int seconds);

/* Queues an OpenHands action (borrowed); returns its event seq, or 0 with err. The action event
 * records who (origin: the token's subject) and the route it came by (via: "ws", "rest",
 * "runtime"), both set by the submitter, never taken from the action. */
uint64_t session_submit(gw_session_t *s, json_object *action, const char *origin, const char *via,
                        err_t *err);
int session_signal(gw_session_t *s, const char *sig, err_t *err);
/* Runs a one-shot executor op (req borrowed: {"op":"file.read",...}); cb gets its CLOSE result
 * (borrowed; {"error":...} on failure or when the runtime goes away). cb may be NULL. */
typedef void (*session_op_cb)(void *ud, json_object *result);
int session_exec_op(gw_session_t *s, json_object *req, session_op_cb cb, void *ud, err_t *err);
/* session_exec_op for a read that is not use of the session (health, file.list, ...): its idle
 * clock keeps running, so a dashboard or a file tree polling it does not keep it alive. */
int session_probe_op(gw_session_t *s, json_object *req, session_op_cb cb, void *ud, err_t *err);

/* A streamed executor op (file.upload, file.download): session_exec_op plus the channel's JSON
 * events, its DATA and its credit. The handle is valid until on_close (the op's cb) has run;
 * on_close always comes, also after a cancel or when the runtime goes away. session_stream.c. */
typedef struct oneshot session_stream_t;
typedef struct {
    void (*on_json)(void *ud, json_object *msg);           /* borrowed */
    void (*on_data)(void *ud, const uint8_t *p, size_t n); /* borrowed */
    /* DATA flagged stderr (a proc.spawn's); NULL: on_data takes it too */
    void (*on_stderr)(void *ud, const uint8_t *p, size_t n);
    void (*on_writable)(void *ud); /* more send credit */
    void (*on_eof)(void *ud);      /* the executor sends no more DATA (CLOSE still follows) */
} session_stream_cbs_t;
/* auto_grant false: the caller grants receive credit itself (session_stream_grant). */
session_stream_t *session_stream_open(gw_session_t *s, json_object *req,
                                      const session_stream_cbs_t *cbs, session_op_cb on_close,
                                      void *ud, bool auto_grant, err_t *err);
/* session_stream_open for a watch a session may hold for long (port.watch, file.watch): neither
 * its opening nor its being open is use of the session, so it does not keep it from idling. */
session_stream_t *session_probe_stream_open(gw_session_t *s, json_object *req,
                                            const session_stream_cbs_t *cbs, session_op_cb on_close,
                                            void *ud, err_t *err);
/* Queues up to n bytes within the executor's credit; returns how many (0: wait for
 * on_writable), or < 0 when the channel no longer takes data. */
ssize_t session_stream_send(session_stream_t *st, const void *p, size_t n);
int session_stream_eof(session_stream_t *st);
/* A JSON message to the op (a proc's {"signal"}, a terminal's {"resize"}). 0 or -1. */
int session_stream_json(session_stream_t *st, json_object *msg);
void session_stream_grant(session_stream_t *st, size_t n);
/* Credit the executor still has to send to us. */
size_t session_stream_recv_window(const session_stream_t *st);
/* Asks the executor to end the op (an upload's temp file is removed); on_close follows. */
void session_stream_cancel(session_stream_t *st);
/* Freezes the sandbox (status PAUSED; processes keep their state, output produced before the
 * pause stays in the stream); actions and file ops are refused until session_resume thaws it.
 * Both return 0 (also when already in the wanted state) or -1 with err (ENOTSUP: the provider
 * has no freezer; ERR_BUSY: the session is not READY / not PAUSED). session_pause.c. */
int session_pause(gw_session_t *s, const char *reason, err_t *err);
/* Also 1 for a session restored while paused (a restart, a takeover): its executor link is
 * only made now, and cb(ud, ...) runs once it is READY, or with why it is not. */
int session_resume(gw_session_t *s, session_ready_cb cb, void *ud, err_t *err);
/* A session's lifecycle (session_lifecycle.c): params' "idle_action" and "lifetime_action"
 * ("stop" or "pause": what its idle timeout and its max_lifetime do) and "auto_resume" (seconds:
 * a paused session resumed by a request that needs its sandbox lives that long more; 0 never).
 * check: 0 or -1 with err (ERR_BAD_REQ naming the field). */
int session_lifecycle_check(json_object *params, err_t *err);
int session_set_lifetime_action(gw_session_t *s, const char *action, err_t *err);
/* A request that needs s's sandbox is about to be served: a PAUSED session with auto_resume is
 * resumed (its end auto_resume seconds from now). Its status after that; STOPPED for NULL. */
session_status_t session_wake(gw_session_t *s);
bool session_auto_resumes(const gw_session_t *s); /* PAUSED, and session_wake would resume it */
/* A session that session_wake resumed but whose executor link is still being made (one
 * restored while paused connects once thawed): cb(id) runs once it is READY, failed or gone,
 * for the caller to serve its request then. 0, or -1 (not such a session, or 256 wait already:
 * answer now). */
typedef void (*session_woken_cb)(uint64_t id);
int session_when_woken(gw_session_t *s, session_woken_cb cb, uint64_t id);
/* Calls cb once action seq has its observation, with the event's stored JSON text (borrowed),
 * or with NULL when the session ends first. For callers that wait for an action's result (the
 * API's execute_action) without reading the stream. session_watch.c. */
typedef void (*session_obs_cb)(void *ud, const char *event, size_t len);
void session_watch_action(gw_session_t *s, uint64_t seq, session_obs_cb cb, void *ud);
/* Calls cb once event seq is stored in Redis (and so may be shown to a client: its number is
 * never used again), or with seq 0 when the session ends first. Submitters acknowledge an
 * action with it. session_watch.c. */
typedef void (*session_stored_cb)(void *ud, uint64_t seq);
void session_when_stored(gw_session_t *s, uint64_t seq, session_stored_cb cb, void *ud);
/* Stops the session (status STOPPED, at once) and destroys its sandbox (off the loop:
 * sandbox_destroy.h); s is freed on return. session_delete_then calls done on the loop once the
 * sandbox is gone (a delete's answer: after it no process of the sandbox runs). In
 * session_delete.c. */
void session_delete(gw_session_t *s, const char *reason);
/* code 0: the sandbox is gone; else the destroy failed (msg), the session is STOPPED all the
 * same and stays in its gateway's set, so that the gateway's restart destroys it again. */
typedef void (*session_deleted_cb)(void *ud, int code, const char *msg);
void session_delete_then(gw_session_t *s, const char *reason, session_deleted_cb done, void *ud);

void session_subscribe(gw_session_t *s, gw_sub_t *sub);
void session_unsubscribe(gw_session_t *s, gw_sub_t *sub);

/* Opens a terminal on the session's executor, attached to nobody yet. */
gw_term_t *session_term_open(gw_session_t *s, int cols, int rows, err_t *err);
gw_term_t *session_term_find(gw_session_t *s, const char *id);
const char *session_term_id(const gw_term_t *t);
/* The output kept so far: [start, end) of every byte the terminal produced. */
const term_ring_t *session_term_ring(const gw_term_t *t);
/* True once the program ended (exit_code -1: the runtime went away); the ring keeps its last
 * output for a client to read. */
bool session_term_ended(const gw_term_t *t, int *exit_code);
/* Being taken back from the executor (after a gateway restart or takeover): its offsets are
 * known once the executor answers, so a client may ask for any. */
bool session_term_reattaching(const gw_term_t *t);
/* Attaches c (a client already attached is told gone, taken). acking: the client says what it
 * consumed (session_term_consumed); otherwise what is written to it counts as consumed. */
void session_term_attach(gw_term_t *t, gw_term_client_t *c, bool acking);
/* c's connection ended without closing the terminal: it waits --term-grace for a client. */
void session_term_detach(gw_term_t *t, gw_term_client_t *c);
void session_term_input(gw_term_t *t, const void *p, size_t n);
/* Records n bytes origin (the token's subject) typed into t as "terminal_input" events of the
 * session's log, line by line (session_term_typed.c); the input itself is session_term_input. */
void session_term_typed(gw_term_t *t, const char *origin, const void *p, size_t n);
/* The executor took input on the terminal's channel ch back (credit): queued input goes on. */
void session_term_writable(gw_session_t *s, uint32_t ch);
void session_term_resize(gw_term_t *t, int cols, int rows);
/* The client consumed output up to offset off: the executor may produce up to GW_TERM_RING
 * past it (the PTY is not read beyond that, so nothing the client may still ask for is lost). */
void session_term_consumed(gw_term_t *t, uint64_t off);
/* Hangs the terminal up and forgets it (its client, if any, is not told). */
void session_term_close(gw_term_t *t);

/* Re-attaches the sessions Redis says this gateway owns (after a restart). Run once Redis
 * answers (its writes must land). */
void sessions_restore(void);
/* Re-attaches session id, which this gateway has just claimed from the dead gateway `from`
 * (takeover.c), as sessions_restore does, and adds a status event naming the new gateway.
 * rc: a blocking connection. Returns 0, or -1 when there was nothing to re-attach. */
struct redisContext;
int session_take_over(struct redisContext *rc, const char *id, const char *from);
/* Forgets every session without a word to Redis or to the sandboxes (a peer owns them now). */
void sessions_drop(void);
/* After every (re)connection to Redis: status fields again, unconfirmed events re-sent. */
void sessions_redis_ready(void);
/* Periodic: idle and lifetime reaping. */
/* An execute_action started or ended now (OpenHands' last_execution_time, which server_info's
 * idle time reads): kept on the session and written to sp:session:{ID}:runtime by sessions_tick,
 * at most once a second, instead of twice per action. */
void session_mark_executed(gw_session_t *s);
/* Its last such time here (gw_wall()), 0 if none since this gateway took the session. */
double session_last_executed(const gw_session_t *s);
void sessions_tick(void);
void sessions_shutdown(void);
int sessions_count(void);

#endif
