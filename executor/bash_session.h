/* bash_session.h — persistent, named bash sessions on PTYs with OpenHands `run` semantics.
 *
 * Each session is one interactive bash (--noediting, our rcfile) on its own PTY. A command is
 * written to a private file and typed as a short fixed line that evals it, so any length and
 * any bytes (heredocs, `\;`) reach bash intact while cwd, env, functions and aliases persist.
 * Completion is detected by a prompt marker (an OSC sequence carrying a per-session nonce, $?,
 * $!, user, host, PATH and PWD). Output is pushed to the action's channel as it is produced,
 * within the channel's credit; without credit or without a reader the PTY is not read
 * (bounded memory, nothing lost). The observation JSON is built by bash_obs.c. */
#ifndef SP_BASH_SESSION_H
#define SP_BASH_SESSION_H

#include <json-c/json.h>
#include <stdbool.h>

#include "conn.h"
#include "err.h"
#include "executor.h"

#define BASH_DEFAULT_SESSION "default"

/* Finds a session by name; with create, starts it when missing (env: extra variables, may be
 * NULL; cwd: NULL for the workspace). Returns NULL with err set on failure. */
bash_session_t *bash_get(const char *name, bool create, json_object *env, const char *cwd,
                         err_t *err);

/* Runs an OpenHands `run` action (borrowed) on s; the observation closes ch. */
void bash_run_action(bash_session_t *s, channel_t *ch, json_object *action);

/* Exports variables in the session (OpenHands add_env_vars); closes ch when applied. */
void bash_add_env(bash_session_t *s, channel_t *ch, json_object *env);

/* The variable that sets the "no new output" timeout of every bash session, as in OpenHands'
 * runtime: a session's env (at start or through bash.env) carries it. */
#define BASH_NO_CHANGE_ENV "NO_CHANGE_TIMEOUT_SECONDS"
/* Applies a value of BASH_NO_CHANGE_ENV (whole seconds, 1 to 86400) as g_exec.no_change_timeout
 * for the actions that start from now on. false (nothing changed) for anything else. */
bool bash_set_no_change_timeout(const char *text);

/* Sends sig to the session's foreground process group. */
int bash_signal(bash_session_t *s, int sig, err_t *err);

/* Current directory as of the last prompt. */
const char *bash_cwd(const bash_session_t *s);

json_object *bash_list(void);
int bash_count(void);
int bash_close(const char *name, err_t *err);

#endif
