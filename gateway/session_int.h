/* session_int.h — what the session modules share (session.c: lifecycle and status,
 * session_actions.c: actions, output events, executor link callbacks, session_term.c:
 * terminals, session_restore.c: re-attachment after a restart). Not for other modules. */
#ifndef SP_SESSION_INT_H
#define SP_SESSION_INT_H

#include <uv.h>

#include "buf.h"
#include "exec_link.h"
#include "session.h"
#include "term_typed.h"

typedef enum { CH_ACTION = 1, CH_TERM, CH_ONESHOT, CH_PLUGINS } chan_kind_t;

/* An output event waiting for Redis: once stored, its action's output up to `end` is. */
typedef struct {
    uint64_t seq, act, end;
} out_event_t;

/* An observation event waiting for Redis: then watchers are told and the executor releases
 * the action's kept result. */
typedef struct {
    uint64_t obs_seq, act;
} release_t;

typedef struct queued {
    struct queued *next;
    json_object *action;
    uint64_t seq;
    double t0; /* when it was queued: latency is measured from here */
} queued_t;

/* A one-shot executor op (file.read, bash.signal, ...) waiting for its CLOSE, or a streamed
 * one (file.upload, file.download: scbs set). It is the session_stream_t of session.h. */
struct oneshot {
    chan_kind_t kind; /* CH_ONESHOT: first, so the channel's data pointer tells the kind */
    struct oneshot *next;
    gw_session_t *s;
    uint32_t ch;
    session_op_cb cb;
    void *ud;
    const session_stream_cbs_t *scbs;
    bool passive; /* a watch (session_probe_stream_open): not use of the session */
};
typedef struct oneshot oneshot_t;

struct gw_session {
    gw_session_t *next;
    char id[64], owner[128], profile[64];
    session_status_t status;
    sandbox_t sb;
    const provider_t *prov;
    exec_link_t *link;
    event_log_t *log;
    gw_sub_t *subs;
    gw_term_t *terms;
    queued_t *qhead, *qtail;
    int queued;
    /* The running action. Its channel is durable on the executor (id = act_seq): credit is
     * granted only for output stored in Redis, so a lost link or gateway resumes from there. */
    uint32_t act_ch; /* executor channel of the running action, 0 if none */
    uint64_t act_seq;
    json_object *act_action; /* the action itself (to run it if the executor never saw it) */
    bool act_attach;         /* the channel is an action.attach, not the action's OPEN */
    double act_t0;
    uint64_t act_recv;    /* output offset of the end of what the executor sent us */
    uint64_t act_granted; /* output offset up to which the executor has credit back */
    uint64_t act_stored;  /* output offset up to which output events are stored */
    buf_t out;            /* output not yet turned into an event (ends at act_recv) */
    buf_t out_events;     /* out_event_t: output events not yet stored, oldest first */
    buf_t releases;       /* release_t: observations to confirm, then release on the executor */
    /* An action to take over once the link is up (after a lost link or a gateway restart):
     * reattach_seq 0 if none; from the output offset reattach_off (what is stored in Redis: the
     * executor forgets what is below it). reattach_have: where this gateway's events reach,
     * stored or not (a lost link); the bytes up to it the executor sends again are already in
     * events and are dropped (act_skip counts them down). */
    uint64_t reattach_seq, reattach_off, reattach_have, act_skip;
    json_object *reattach_action;
    uv_timer_t timer; /* output flush */
    bool timer_armed;
    double created, last_activity;
    /* OpenHands' last execution time (gw_wall()), not yet written to Redis while dirty */
    double last_execute;
    bool last_execute_dirty;
    int idle_timeout, max_lifetime;
    session_ready_cb ready_cb;
    void *ready_ud;
    bool resuming; /* ready_cb is a resume's (session_pause.c), not a create's */
    json_object *params;
    int reconnects;
    unsigned term_counter; /* terminal ids t1, t2, ... */
    bool deleting;
    bool taking;         /* a claim or start of its sandbox is under way (session_sandbox.c) */
    bool net_attached;   /* netd gave its sandbox a link (session_network.c) */
    bool idle_pause;     /* idle_action "pause": an idle session is frozen, not deleted */
    bool lifetime_pause; /* lifetime_action "pause": so is one past its max_lifetime */
    int auto_resume;     /* seconds a request-resumed session lives; 0: no such resume */
    struct woken_waiter *woken; /* requests waiting for an auto-resume's link (lifecycle.c) */
    int n_woken;
    bool connect_on_resume;   /* restored while paused: the executor link waits for the thaw */
    bool env_applying;        /* bash.env of a warm sandbox in flight: actions wait */
    json_object *pending_env; /* env for a warm sandbox, exported once its executor is up */
    bool env_pending_saved;   /* the record says so ("env_pending"): a peer taking the session
                               * over before it is applied cannot apply it (it is not stored) */
    char create_key[CREATE_KEY_MAX + 1]; /* the API's key for this create, "" if none */
    oneshot_t *oneshots;
    uint32_t plugins_ch;  /* the executor's `plugins` channel, 0 if none (session_plugins.c) */
    bool plugins_pending; /* link up, its first answer awaited (session_when_plugins_known) */
    struct plugins_wait *plugins_waits;
    json_object *plugin_status; /* its last word: each plugin's state */
    struct action_watch *watches;
    struct action_watch *store_waits; /* session_when_stored */
    /* session_ports.c: ports its owner made public, the executor's port.watch and what it
     * last said (an array, NULL before its first word) */
    uint16_t public_ports[16];
    int npublic;
    session_stream_t *ports_watch;
    json_object *ports;
    struct envd_proc *envd_procs;       /* E2B's processes (envd_proc.c) */
    struct envd_watcher *envd_watchers; /* E2B's polling watchers (envd_watch.c) */
    struct file_watch *file_watches;    /* session_file_watch.c */
    double stats_cpu_s, stats_at; /* the last session.stats sample's CPU time (session_stats.c) */
};

/* A terminal (session_term.c). It is the channel's data pointer: kind first. */
struct gw_term {
    chan_kind_t kind; /* CH_TERM */
    gw_term_t *next;
    gw_session_t *s;
    char id[16];
    uint32_t ch; /* executor channel; 0 once the program ended or while the link is down */
    /* Being taken back from the executor (after a restart, a takeover or a link drop,
     * session_term_keep.c): until its "attached", input waits in typein (bounded). */
    bool reattach;
    buf_t typein;
    /* Input past the executor's input window (a big paste): sent as its credit comes back,
     * the client's connection not read meanwhile (gw_term_client_t.pause). */
    buf_t inq;
    term_ring_t ring;
    uint64_t consumed; /* the client has consumed output up to here */
    uint64_t limit;    /* the executor may send up to this offset */
    gw_term_client_t *client;
    bool acking;
    double detached_at; /* when its last client left (with client NULL) */
    bool ended;
    int exit_code;
    /* What people type, line by line, for the event log (session_term_typed.c), and the bytes
     * typed but not recorded since the last event (the log was full). */
    term_typed_t typed;
    uint64_t typed_unrecorded;
    /* The terminal reads input it does not show (a password prompt: the executor's
     * hidden_input); what is typed meanwhile is counted, never recorded. */
    bool hidden;
    uint64_t typed_hidden;
    char typed_hidden_origin[128];
};

extern chan_kind_t session_kind_action;
extern const exec_link_cbs_t session_link_cbs;

/* session_last_execute.c: writes the last execution time if it changed since (sessions_tick). */
void session_flush_last_execute(gw_session_t *s);

/* session.c */
json_object *session_event_new(const char *type);
/* session_lifecycle.c: params' lifecycle fields into s (checked before), s's into o, and what
 * the end of s's max_lifetime does (deleted, or paused with no end). */
void session_lifecycle_set(gw_session_t *s, json_object *params);
void session_lifecycle_describe(const gw_session_t *s, json_object *o);
void session_lifetime_end(gw_session_t *s);
/* s's status left STARTED, or s ends: the requests waiting for its auto-resume are called back
 * (on the next loop round, never inside the caller's state change). */
void session_woken_release(gw_session_t *s);
/* Unlists s and frees it with what it holds (its subscribers, terminals, queued actions and
 * oneshots told it ended); its sandbox is not touched. */
void session_free(gw_session_t *s);
void session_save_field(gw_session_t *s, const char *field, const char *value);
/* Moves s to status st (a change session_status_may_become allows; others are logged and
 * ignored): saved in Redis, a status event, a note on sp:status. */
void session_set_status(gw_session_t *s, session_status_t st, const char *msg);
gw_session_t *session_alloc(const char *id, const char *owner, const char *profile,
                            uint64_t next_seq);
/* session_actions.c */
/* The link is up and the executor has the session's plugins: its env, then READY. */
void session_link_ready(gw_session_t *s);
void session_start_next_action(gw_session_t *s);
void session_enqueue(gw_session_t *s, json_object *action, uint64_t seq);
json_object *session_error_observation(const char *text);
/* session_watch.c: the observation event (seq event_seq) of action seq was appended; with
 * event_seq 0, every watcher is told the session ended. */
void session_observed(gw_session_t *s, uint64_t seq, uint64_t event_seq);
/* session_watch.c: events up to stored are in Redis (0: the session ended). */
void session_stored_up_to(gw_session_t *s, uint64_t stored);

/* session_term.c: the executor link's events for terminals (false: ch is not a terminal),
 * the runtime gone (every terminal ends), the session freed, the grace of detached ones. */
bool session_term_data(gw_session_t *s, uint32_t ch, const uint8_t *p, size_t n);
bool session_term_exited(gw_session_t *s, uint32_t ch, json_object *res);
void session_terms_lost(gw_session_t *s);
void session_terms_free(gw_session_t *s);
void session_terms_tick(gw_session_t *s, double now);
/* A terminal of s under id, not yet on a channel (open or re-attach sets ch). */
gw_term_t *session_term_new(gw_session_t *s, const char *id);
/* Lets the executor send up to consumed + GW_TERM_RING. */
void session_term_grant(gw_term_t *t);
/* The terminal ended (exit_code -1: lost with its runtime). */
void session_term_end(gw_term_t *t, int exit_code);

/* session_term_typed.c: what is held of a line typed goes out (the terminal ends). */
void session_term_typed_flush(gw_term_t *t);
/* session_term_typed.c: the executor says the terminal reads hidden input (or no longer). */
void session_term_hidden(gw_term_t *t, bool hidden);

/* session_term_keep.c: terminals across a restart or a takeover. The session's terminals in
 * its Redis record (field "terms"), written when one opens or ends; restored from it; taken
 * back from the executor once the link is up; the executor's "attached" on a terminal channel
 * (true if ch is one); the runtime gone for good (terminals waiting to be taken back end). */
void session_terms_save(gw_session_t *s);
void session_terms_restore(gw_session_t *s, const char *json);
void session_terms_reattach(gw_session_t *s);
bool session_term_json(gw_session_t *s, uint32_t ch, json_object *msg);
void session_terms_gone(gw_session_t *s);

/* session_plugins.c: the session's plugins list to the executor once the link is up, and the
 * plugin states it reports (msg borrowed). */
extern chan_kind_t session_kind_plugins;
json_object *session_plugins_default(void);
/* Opens the channel on a link just up (plugins_pending set); < 0 if it could not. */
int session_plugins_open(gw_session_t *s);
/* Its first answer is in, or will not come (the channel closed, the link went down, the
 * session ends): plugins_pending cleared and the waiters called. */
void session_plugins_known(gw_session_t *s);
void session_plugins_json(gw_session_t *s, json_object *msg);

/* session_file_watch.c: the link is READY (watches lost with it open again), the link is down
 * (every watch is lost until then), the session goes away (every watcher is let go). */
void session_file_watches_reopen(gw_session_t *s);
void session_file_watches_lost(gw_session_t *s);
void session_file_watches_free(gw_session_t *s);

/* session_stream.c: the executor link's events for one-shot and streamed ops. */
void session_fail_oneshots(gw_session_t *s, const char *why);
bool session_oneshot_closed(gw_session_t *s, uint32_t ch, json_object *res);
void session_oneshot_data(oneshot_t *o, bool is_stderr, const uint8_t *p, size_t n);
void session_oneshot_json(oneshot_t *o, json_object *msg);
void session_oneshot_writable(oneshot_t *o);
void session_oneshot_eof(oneshot_t *o);
/* session_output.c: events up to seq are stored (the event log's callback); buffered output
 * into events (final: the action ended, nothing is held back); the flush timer. */
void session_on_stored(gw_session_t *s, uint64_t seq);
void session_flush_output(gw_session_t *s, bool final);
void session_arm_flush(gw_session_t *s);

/* session_memory.c: a session idle for SESSION_SHRINK_AFTER_S (nothing running, queued or
 * open) lets go of what its last work grew (sessions_tick); a session was freed (counted); the
 * heap's free pages go back to the kernel if one was (sessions_tick, once a second). */
#define SESSION_SHRINK_AFTER_S   10.0
#define SESSION_IDLE_EVENTS_KEPT 16
void session_shrink(gw_session_t *s);
void session_memory_freed(void);
void sessions_trim_heap(void);

/* A start that failed: ERROR with msg in the record's "error" (who asked may read it there),
 * the ready callback told, the session deleted with its sandbox. session_sandbox.c. */
void session_start_failed(gw_session_t *s, int code, const char *msg);
/* Takes the sandbox of the new session s, whose record session_save has just sent: claimed
 * from the pool or started for it, never before Redis holds the record. session_sandbox.c. */
void session_take_sandbox(gw_session_t *s);
/* The sandbox (or NULL: none came) a claim or start brought for session id, deleted meanwhile:
 * destroyed, and the delete answered once it is gone (session_delete.c). */
void session_sandbox_orphaned(const char *id, const sandbox_t *sb);
/* Destroys sb, the sandbox of session id that ended while no gateway held it (a restore); the
 * session leaves its gateway's set once the sandbox is gone (session_delete.c). */
void session_sandbox_destroy(const char *id, const provider_t *p, const sandbox_t *sb);
/* Writes the session's record (sp:session:{id}) and its place in the listings. session.c. */
void session_save(gw_session_t *s);

#endif
