/* bash_session_int.h — what bash_session.c (actions, API) and bash_shell.c (the shell on its
 * PTY: spawning, reading, the prompt marker, typing) share. Not for other modules. */
#ifndef SP_BASH_SESSION_INT_H
#define SP_BASH_SESSION_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "bash_obs.h"
#include "bash_session.h"
#include "buf.h"
#include "loop.h"

#define PENDING_MAX (1u << 20) /* output held for a reader before the PTY is paused */
/* Output kept for one observation: the tail wins. Past 2 x BASH_OBS_MAX_LINES lines it is cut
 * to the last BASH_OBS_MAX_LINES; past OBS_MAX bytes to the last OBS_KEEP, which holds what
 * upstream's tmux keeps (BASH_OBS_MAX_LINES rows of 1,000 columns). */
#define OBS_MAX    (16u << 20)
#define OBS_KEEP   (12u << 20)
#define MARKER_MAX 16384 /* a prompt marker longer than this is not ours */
#define READ_CHUNK 65536
#define NONE       ((size_t)-1)
#define PTY_COLS   1000 /* as upstream's tmux window: no wrapping of long lines */
#define PTY_ROWS   1000

typedef enum { BS_STARTING, BS_IDLE, BS_RUNNING, BS_DEAD } bash_state_t;
typedef enum { ACT_RUN, ACT_ENV } act_kind_t;

typedef struct {
    int exit_code;
    int bg_pid;
    char *user, *host, *path, *cwd;
} prompt_t;

typedef struct {
    bool active;
    act_kind_t kind;
    channel_t *ch; /* NULL when the client went away */
    char *command; /* the action's command text */
    char *to_type; /* command to start once the shell is idle (NULL: none) */
    double timeout;
    int no_change; /* seconds; 0 = off (blocking) */
    bool hidden, continuation, interrupted, is_input;
    char key; /* the C-<letter> key this action sent, 0 if none */
    buf_t obs;
    size_t obs_lines;   /* newlines in obs */
    bool obs_dropped;   /* older output was cut from obs */
    bool nochange_held; /* no-change timer stopped: the reader gave no credit (session_drain) */
    ltimer_t hard, nochange;
} action_t;

struct bash_session {
    bash_session_t *next;
    char *name;
    pid_t pid;
    int master;
    watch_t w;
    bash_state_t state;
    bool dead_pending; /* bash exited; finish once pending output is delivered */
    bool eio;          /* the terminal is closed on the far side: nothing more to read */
    int exit_status;
    char marker[48];
    size_t marker_len;
    buf_t scan, pending, typein;
    size_t done_at;  /* NONE, or bytes of pending before the last prompt marker */
    prompt_t prompt; /* as of the last delivered prompt */
    prompt_t marked; /* parsed from the marker at done_at */
    char *echo;      /* the line we typed, whose tty echo is stripped */
    size_t echo_len, echo_off;
    char *running; /* command running in the shell */
    char *queued;  /* command whose client left before the shell was ready for it */
    char cmdfile[PATH_MAX];
    action_t act;
};

/* bash_shell.c */
int shell_spawn(bash_session_t *s, json_object *env, const char *cwd, err_t *err);
void shell_start_command(bash_session_t *s, const char *text);
void shell_type(bash_session_t *s, const void *p, size_t n);
void shell_scan(bash_session_t *s);
void shell_update_io(bash_session_t *s);
void shell_read_all(bash_session_t *s);
void shell_quote(buf_t *b, const char *s);
/* bash.env's work before anything is typed (bash_env.c): for each variable in turn, checks its
 * name (a bad one: -ERR_BAD_REQ with err, the ones before it applied), appends an `export K='v'`
 * line to out and applies it to the executor's base environment and settings. */
int bash_env_script(json_object *env, buf_t *out, err_t *err);
char *shell_find_python(const char *path);
void prompt_clear(prompt_t *p);
void prompt_move(prompt_t *dst, prompt_t *src);

/* bash_session.c */
void session_drain(bash_session_t *s);
void session_arm_nochange(bash_session_t *s);
void session_start_queued(bash_session_t *s);

#endif
