/* bash_session.c — persistent bash sessions with OpenHands `run` semantics: the action
 * lifecycle (timeouts, delivery of output within the channel's credit, the observation) and the
 * public API. The shell itself (PTY, marker, typing) is bash_shell.c; see bash_session.h. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bash_obs.h"
#include "bash_session_int.h"
#include "cmd_split.h"
#include "env.h"
#include "executor.h"
#include "json_util.h"
#include "net_hint.h"
#include "xalloc.h"

static bool
valid_name(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 64)
        return false;
    for (const char *p = n; *p; p++)
        if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') || ('0' <= *p && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return false;
    return true;
}

/* ---- the action lifecycle ---- */

static size_t
count_newlines(const char *p, size_t n)
{
    size_t count = 0;
    for (const char *end = p + n; (p = memchr(p, '\n', (size_t)(end - p))); p++)
        count++;
    return count;
}

/* Appends output to the action's observation text, keeping a bounded tail (bash_session_int.h):
 * whole lines are dropped from the front, and obs_dropped tells the observation. */
static void
obs_append(action_t *a, const char *p, size_t n)
{
    buf_append(&a->obs, p, n);
    a->obs_lines += count_newlines(p, n);
    size_t cut = 0;
    if (a->obs_lines > 2 * BASH_OBS_MAX_LINES) {
        /* Just past the newline that leaves BASH_OBS_MAX_LINES of them after it. */
        size_t skip = a->obs_lines - BASH_OBS_MAX_LINES;
        const char *q = a->obs.data;
        for (size_t k = 0; k < skip; k++)
            q = (const char *)memchr(q, '\n', a->obs.len - (size_t)(q - a->obs.data)) + 1;
        cut = (size_t)(q - a->obs.data);
    } else if (a->obs.len > OBS_MAX) {
        cut = a->obs.len - OBS_KEEP;
        const char *nl = memchr(a->obs.data + cut, '\n', a->obs.len - cut);
        cut = nl ? (size_t)(nl - a->obs.data) + 1 : cut;
    }
    if (cut) {
        a->obs_lines -= count_newlines(a->obs.data, cut);
        buf_consume(&a->obs, cut);
        a->obs_dropped = true;
    }
}

static void
act_reset(bash_session_t *s)
{
    action_t *a = &s->act;
    loop_timer_stop(g_exec.loop, &a->hard);
    loop_timer_stop(g_exec.loop, &a->nochange);
    free(a->command);
    free(a->to_type);
    buf_free(&a->obs);
    memset(a, 0, sizeof *a);
}

static void
finish_action(bash_session_t *s, bash_end_t end)
{
    action_t *a = &s->act;
    channel_t *ch = a->ch;
    if (ch)
        ch->owner = NULL;
    if (a->kind == ACT_ENV) {
        if (ch)
            chan_close(ch, NULL);
        act_reset(s);
        return;
    }
    char *py = shell_find_python(s->prompt.path);
    bash_obs_in_t in = {
        .command = a->command,
        .output = a->obs.data ? a->obs.data : "",
        .output_len = a->obs.len,
        .output_cut = a->obs_dropped,
        .is_continuation = a->continuation,
        .end = end,
        .exit_code = s->prompt.exit_code,
        .timeout = a->timeout,
        .no_change_timeout = a->no_change ? a->no_change : g_exec.no_change_timeout,
        .pid = s->prompt.bg_pid,
        .username = s->prompt.user ? s->prompt.user : "",
        .hostname = s->prompt.host ? s->prompt.host : "",
        .working_dir = s->prompt.cwd ? s->prompt.cwd : g_exec.workspace,
        .py_interpreter_path = py,
        .hidden = a->hidden,
        .is_input = a->is_input,
        .key = a->key,
    };
    /* /proc is read only when the output already shows a failure: rare, and cheap then. */
    in.no_network = net_hint_failure_shown(in.output, in.output_len) && net_hint_offline();
    json_object *obs = bash_obs_build(&in);
    free(py);
    act_reset(s);
    if (ch)
        chan_close(ch, obs);
    else
        json_object_put(obs);
}

static void
on_hard_timeout(ltimer_t *t)
{
    bash_session_t *s = t->data;
    finish_action(s, BASH_END_HARD_TIMEOUT);
    shell_update_io(s);
}

static void
on_nochange_timeout(ltimer_t *t)
{
    bash_session_t *s = t->data;
    finish_action(s, BASH_END_NO_CHANGE_TIMEOUT);
    shell_update_io(s);
}

void
session_arm_nochange(bash_session_t *s)
{
    if (s->act.active && s->act.no_change > 0 && s->act.kind == ACT_RUN)
        loop_timer_start(g_exec.loop, &s->act.nochange, (uint64_t)s->act.no_change * 1000,
                         on_nochange_timeout, s);
}

void
session_start_queued(bash_session_t *s)
{
    if (s->queued && s->state == BS_IDLE && !s->act.active) {
        char *t = s->queued;
        s->queued = NULL;
        shell_start_command(s, t);
        free(t);
    }
}

/* Delivers pending output to the waiting action and moves the state machine on. */
void
session_drain(bash_session_t *s)
{
    for (;;) {
        action_t *a = &s->act;
        if (!a->active)
            break;
        size_t limit = s->done_at != NONE ? s->done_at : s->pending.len;
        if (limit > 0) {
            size_t n = limit;
            if (a->ch) {
                int64_t cr = chan_credit(a->ch);
                if (cr <= 0) {
                    /* Output waits for the reader (the gateway grants credit once Redis has
                     * stored it): the command is not quiet, we are slow. The no-change clock
                     * stops until credit comes back. */
                    if (!a->nochange_held)
                        loop_timer_stop(g_exec.loop, &a->nochange);
                    a->nochange_held = true;
                    break;
                }
                if (a->nochange_held) {
                    a->nochange_held = false;
                    session_arm_nochange(s);
                }
                if ((int64_t)n > cr)
                    n = (size_t)cr;
                if (a->kind == ACT_RUN)
                    chan_send_data(a->ch, 0, s->pending.data, n);
            }
            if (a->kind == ACT_RUN)
                obs_append(a, s->pending.data, n);
            buf_consume(&s->pending, n);
            if (s->done_at != NONE)
                s->done_at -= n;
            session_arm_nochange(s);
            continue;
        }
        if (s->done_at == 0) {
            /* The prompt came back: the command in the shell is finished. */
            s->done_at = NONE;
            prompt_move(&s->prompt, &s->marked);
            free(s->running);
            s->running = NULL;
            s->state = BS_IDLE;
            if (a->to_type) {
                char *t = a->to_type;
                a->to_type = NULL;
                shell_start_command(s, t);
                free(t);
                shell_scan(s);
                continue;
            }
            finish_action(s, a->interrupted ? BASH_END_INTERRUPTED : BASH_END_COMPLETED);
            shell_scan(s); /* bytes after the marker may hold more */
            continue;
        }
        if (s->dead_pending && s->pending.len == 0) {
            s->prompt.exit_code = s->exit_status;
            finish_action(s, BASH_END_COMPLETED);
        }
        break;
    }
    if (s->state == BS_DEAD && !s->act.active) {
        buf_clear(&s->pending);
        buf_clear(&s->scan);
    }
    shell_update_io(s);
}

/* ---- channel callbacks ---- */

static void
act_resume(channel_t *ch)
{
    bash_session_t *s = ch->owner;
    if (s)
        session_drain(s);
}

static void
act_detach(channel_t *ch)
{
    bash_session_t *s = ch->owner;
    if (!s || s->act.ch != ch)
        return;
    /* The client left: the command still runs (or starts once the shell is ready); its output
     * waits for the next action. */
    if (s->act.to_type) {
        free(s->queued);
        s->queued = s->act.to_type;
        s->act.to_type = NULL;
    }
    act_reset(s);
    session_start_queued(s);
    shell_update_io(s);
}

static const channel_ops_t act_ops = {
    .resume = act_resume,
    .detach = act_detach,
};

/* ---- public API ---- */

static void
session_free(bash_session_t *s)
{
    act_reset(s);
    prompt_clear(&s->prompt);
    prompt_clear(&s->marked);
    buf_free(&s->scan);
    buf_free(&s->pending);
    buf_free(&s->typein);
    free(s->echo);
    free(s->running);
    free(s->queued);
    free(s->name);
    free(s);
}

bash_session_t *
bash_get(const char *name, bool create, json_object *env, const char *cwd, err_t *err)
{
    if (!name)
        name = BASH_DEFAULT_SESSION;
    bash_session_t *s;
    for (s = g_exec.sessions; s; s = s->next)
        if (strcmp(s->name, name) == 0)
            break;
    if (s && s->state == BS_DEAD && !s->act.active) {
        /* The shell exited (`exit`): start a new one where the old one was. */
        char *where = s->prompt.cwd ? xstrdup(s->prompt.cwd) : NULL;
        buf_clear(&s->pending);
        buf_clear(&s->scan);
        buf_clear(&s->typein);
        int rc = shell_spawn(s, env, where, err);
        free(where);
        return rc < 0 ? NULL : s;
    }
    if (s || !create) {
        if (!s)
            err_set(err, ERR_NOT_FOUND, "no bash session named \"%s\"", name);
        return s;
    }
    if (!valid_name(name)) {
        err_set(err, ERR_BAD_REQ, "session names are 1-64 characters of [A-Za-z0-9_.-]");
        return NULL;
    }
    s = xcalloc(1, sizeof *s);
    s->name = xstrdup(name);
    s->w.fd = -1;
    s->master = -1;
    if (shell_spawn(s, env, cwd, err) < 0) {
        session_free(s);
        return NULL;
    }
    s->next = g_exec.sessions;
    g_exec.sessions = s;
    return s;
}

const char *
bash_cwd(const bash_session_t *s)
{
    return s && s->prompt.cwd && *s->prompt.cwd ? s->prompt.cwd : g_exec.workspace;
}

/* Python's str.strip(): ASCII whitespace is what matters for commands. */
static char *
strip_copy(const char *t)
{
    while (*t && strchr(" \t\n\r\v\f", *t))
        t++;
    size_t n = strlen(t);
    while (n > 0 && strchr(" \t\n\r\v\f", t[n - 1]))
        n--;
    return xstrndup(t, n);
}

static void
reply_now(channel_t *ch, json_object *obs)
{
    chan_close(ch, obs);
}

void
bash_run_action(bash_session_t *s, channel_t *ch, json_object *action)
{
    json_object *args = json_get(action, "args");
    char *command = strip_copy(json_get_str(args, "command", ""));
    bool is_input = json_get_bool(args, "is_input", false);
    bool blocking = json_get_bool(args, "blocking", false);
    bool hidden = json_get_bool(args, "hidden", false);
    json_object *to = json_get(action, "timeout");
    double timeout = to ? json_object_get_double(to) : g_exec.default_timeout;

    if (s->act.active) {
        chan_close_error(ch, ERR_BUSY, "another action is in progress on this bash session");
        free(command);
        return;
    }
    bool prev_running = s->state == BS_RUNNING;
    bash_obs_in_t in = {.command = command,
                        .output = "",
                        .hidden = hidden,
                        .timeout = timeout,
                        .no_change_timeout = g_exec.no_change_timeout,
                        .pid = -1,
                        .exit_code = -1};
    if (!prev_running && !*command) {
        reply_now(ch, bash_obs_error(BASH_ERR_NO_PREVIOUS_FOR_LOGS, &in));
        free(command);
        return;
    }
    if (!prev_running && is_input) {
        reply_now(ch, bash_obs_error(BASH_ERR_NO_PREVIOUS_FOR_INPUT, &in));
        free(command);
        return;
    }
    cmd_list_t parts;
    cmd_split(command, &parts);
    if (parts.n > 1) {
        char *text = cmd_split_refusal(&parts);
        reply_now(ch, obs_error_new(text));
        free(text);
        cmd_list_free(&parts);
        free(command);
        return;
    }
    cmd_list_free(&parts);

    action_t *a = &s->act;
    bool special = strlen(command) == 3 && command[0] == 'C' && command[1] == '-';
    if (prev_running && s->done_at == NONE && !is_input && *command && !special) {
        /* Upstream refuses a new command while one runs, showing what it printed so far. */
        size_t n = s->pending.len;
        if ((int64_t)n > chan_credit(ch))
            n = (size_t)(chan_credit(ch) > 0 ? chan_credit(ch) : 0);
        chan_send_data(ch, 0, s->pending.data, n);
        in.output = s->pending.data ? s->pending.data : "";
        in.output_len = n;
        in.is_continuation = true;
        json_object *obs = bash_obs_error(BASH_ERR_PREVIOUS_STILL_RUNNING, &in);
        buf_consume(&s->pending, n);
        reply_now(ch, obs);
        shell_update_io(s);
        free(command);
        return;
    }

    memset(a, 0, sizeof *a);
    a->active = true;
    a->kind = ACT_RUN;
    a->ch = ch;
    a->command = command;
    a->timeout = timeout;
    a->no_change = blocking ? 0 : g_exec.no_change_timeout;
    a->hidden = hidden;
    a->continuation = prev_running && (is_input || !*command);
    ch->ops = &act_ops;
    ch->owner = s;

    a->is_input = is_input;
    if (special) {
        char key = (char)(command[2] & 0x1f);
        a->key = command[2];
        a->interrupted = command[2] == 'c' || command[2] == 'C';
        if (s->state == BS_IDLE) {
            free(s->running);
            s->running = xstrdup(command);
            s->state = BS_RUNNING;
        }
        shell_type(s, &key, 1);
    } else if (is_input) {
        shell_type(s, command, strlen(command));
        shell_type(s, "\n", 1);
    } else if (*command) {
        if (s->state == BS_IDLE)
            shell_start_command(s, command);
        else
            a->to_type = xstrdup(command); /* after startup / the previous prompt */
    }
    if (timeout > 0)
        loop_timer_start(g_exec.loop, &a->hard, (uint64_t)(timeout * 1000), on_hard_timeout, s);
    if (!a->to_type) /* else armed when the shell is ready and the command typed */
        session_arm_nochange(s);
    session_drain(s);
}

void
bash_add_env(bash_session_t *s, channel_t *ch, json_object *env)
{
    if (s->act.active || s->state == BS_RUNNING) {
        chan_close_error(ch, ERR_BUSY, "the bash session is running a command");
        return;
    }
    buf_t text = BUF_INIT;
    err_t err = {0};
    if (bash_env_script(env, &text, &err) < 0) {
        buf_free(&text);
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    if (!text.len) {
        chan_close(ch, NULL);
        return;
    }
    action_t *a = &s->act;
    memset(a, 0, sizeof *a);
    a->active = true;
    a->kind = ACT_ENV;
    a->ch = ch;
    a->command = buf_steal(&text);
    ch->ops = &act_ops;
    ch->owner = s;
    if (s->state == BS_IDLE)
        shell_start_command(s, a->command);
    else
        a->to_type = xstrdup(a->command);
    session_drain(s);
}

int
bash_signal(bash_session_t *s, int sig, err_t *err)
{
    if (s->state == BS_DEAD || s->master < 0)
        return err_set(err, ERR_NOT_FOUND, "the bash session has no running shell");
    pid_t pg = tcgetpgrp(s->master);
    if (pg <= 0)
        pg = s->pid;
    if (kill(-pg, sig) < 0)
        return err_set(err, errno, "kill: %s", strerror(errno));
    return 0;
}

static void
session_shell_gone(bash_session_t *s)
{
    if (s->w.fd >= 0)
        loop_watch_del(g_exec.loop, &s->w);
    if (s->master >= 0)
        close(s->master);
    s->master = -1;
    s->pid = 0;
}

void
bash_on_child_exit(pid_t pid, int status)
{
    bash_session_t *s;
    for (s = g_exec.sessions; s; s = s->next)
        if (s->pid == pid)
            break;
    if (!s)
        return;
    /* Collect what the shell wrote before it went. */
    for (int i = 0; i < 64; i++) {
        ssize_t n = read(s->master, buf_reserve(&s->scan, READ_CHUNK), READ_CHUNK);
        if (n <= 0)
            break;
        buf_advance(&s->scan, (size_t)n);
    }
    shell_scan(s);
    buf_append(&s->pending, s->scan.data, s->scan.len);
    buf_clear(&s->scan);
    s->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    session_shell_gone(s);
    s->state = BS_DEAD;
    s->dead_pending = true;
    if (s->act.active && s->act.to_type) {
        free(s->act.to_type);
        s->act.to_type = NULL;
    }
    session_drain(s);
}

json_object *
bash_list(void)
{
    json_object *arr = json_object_new_array();
    static const char *const names[] = {"starting", "idle", "running", "exited"};
    for (bash_session_t *s = g_exec.sessions; s; s = s->next) {
        json_object *o = json_object_new_object();
        json_set_str(o, "name", s->name);
        json_set_int(o, "pid", s->pid);
        json_set_str(o, "state", names[s->state]);
        json_set_str(o, "command", s->running);
        json_set_name(o, "cwd", bash_cwd(s));
        json_object_array_add(arr, o);
    }
    json_object *r = json_object_new_object();
    json_set(r, "sessions", arr);
    return r;
}

int
bash_close(const char *name, err_t *err)
{
    for (bash_session_t **pp = &g_exec.sessions; *pp; pp = &(*pp)->next) {
        bash_session_t *s = *pp;
        if (strcmp(s->name, name) != 0)
            continue;
        *pp = s->next;
        if (s->pid > 0)
            kill(-s->pid, SIGKILL);
        if (s->act.ch) {
            channel_t *ch = s->act.ch;
            ch->owner = NULL;
            chan_close_error(ch, ERR_NOT_FOUND, "the bash session was closed");
        }
        session_shell_gone(s);
        session_free(s);
        return 0;
    }
    return err_set(err, ERR_NOT_FOUND, "no bash session named \"%s\"", name);
}

int
bash_count(void)
{
    int n = 0;
    for (bash_session_t *s = g_exec.sessions; s; s = s->next)
        n++;
    return n;
}
