/* envd_proc_adopt.c — finding E2B's processes by pid or tag, and taking up from the executor
 * those this gateway does not hold (started before it restarted or took the sandbox over, or
 * before its link to the executor dropped): the executor ran them on (envd_proc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd_proc.h"
#include "envd_proc_int.h"
#include "json_util.h"
#include "session_int.h"
#include "xalloc.h"

/* Tells who waited for p to be taken up: p, or why not. */
void
envd_proc_adopted(envd_proc_t *p, const err_t *err)
{
    p->adopting = false;
    while (p->waiters) {
        struct waiter *w = p->waiters;
        p->waiters = w->next;
        w->cb(w->ud, err ? NULL : p, err);
        free(w);
    }
}

/* The executor's status of a process taken up: its config as it was started. */
void
envd_proc_take_status(envd_proc_t *p, json_object *st)
{
    /* the executor's words, not trusted: strings where strings belong, else nothing */
    json_object *argv = json_get(st, "argv"), *args = json_object_new_array();
    size_t n =
        argv && json_object_is_type(argv, json_type_array) ? json_object_array_length(argv) : 0;
    json_object *cmd = n ? json_object_array_get_idx(argv, 0) : NULL;
    for (size_t i = 1; i < n; i++) {
        json_object *a = json_object_array_get_idx(argv, i);
        if (json_object_is_type(a, json_type_string))
            json_object_array_add(args, json_object_get(a));
    }
    json_set(p->config, "cmd",
             json_object_is_type(cmd, json_type_string) ? json_object_get(cmd)
                                                        : json_object_new_string(""));
    json_set(p->config, "args", args);
    json_object *env = json_get(st, "env"), *cwd = json_get(st, "cwd"),
                *envs = json_object_new_object();
    if (json_object_is_type(env, json_type_object)) {
        json_object_object_foreach(env, k, v)
        {
            if (json_object_is_type(v, json_type_string))
                json_set(envs, k, json_object_get(v));
        }
    }
    json_set(p->config, "envs", envs);
    if (json_object_is_type(cwd, json_type_string))
        json_set(p->config, "cwd", json_object_get(cwd));
    snprintf(p->tag, sizeof p->tag, "%s", json_get_str(st, "tag", ""));
    p->pid = (uint32_t)json_get_int(st, "pid", 0);
    json_object_object_del(p->config, "want");
}

void
envd_proc_forget(envd_proc_t *p)
{
    for (envd_proc_t **pp = &p->s->envd_procs; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    envd_proc_free(p);
}

void
envd_proc_lookup(gw_session_t *s, json_object *sel, envd_found_cb cb, void *ud)
{
    json_object *pid = json_get(sel, "pid"), *tag = json_get(sel, "tag");
    err_t err = {0};
    if (!sel || (!pid && !tag) || (pid && !json_object_is_type(pid, json_type_int)) ||
        (tag && !json_object_is_type(tag, json_type_string))) {
        err_set(&err, ERR_BAD_REQ, "process: a selector with pid (a number) or tag is required");
        cb(ud, NULL, &err);
        return;
    }
    envd_proc_prune(s);
    int64_t want = pid ? json_object_get_int64(pid) : 0;
    const char *t = tag ? json_object_get_string(tag) : NULL;
    for (envd_proc_t *p = s->envd_procs; p; p = p->next) {
        if (!(pid ? p->pid == want : !strcmp(p->tag, t)) || (!p->pid && !p->adopting))
            continue;
        if (p->adopting) { /* another lookup takes it up already: wait with it */
            struct waiter *w = xcalloc(1, sizeof *w);
            w->cb = cb;
            w->ud = ud;
            w->next = p->waiters;
            p->waiters = w;
        } else {
            cb(ud, p, NULL);
        }
        return;
    }
    if (want < 0 || want > UINT32_MAX) {
        err_set(&err, ERR_NOT_FOUND, "process with pid %lld not found", (long long)want);
        cb(ud, NULL, &err);
        return;
    }
    /* not one of ours: the executor may have it */
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "proc.attach");
    if (pid)
        json_set_int(req, "pid", want);
    else
        json_set_str(req, "tag", t);
    json_set_bool(req, "live", true);
    envd_proc_t *p = xcalloc(1, sizeof *p);
    p->s = s;
    p->adopting = true;
    p->stdin_open = true; /* as far as we know: the executor says no if it was not */
    p->pid = (uint32_t)want;
    if (tag)
        snprintf(p->tag, sizeof p->tag, "%s", t);
    p->config = json_object_new_object();
    char ws[24];
    snprintf(ws, sizeof ws, "%lld", (long long)want);
    json_set_str(p->config, "want", ws);
    int rc = envd_proc_open(p, req, &err);
    json_object_put(req);
    if (rc < 0) {
        cb(ud, NULL, &err);
        return;
    }
    struct waiter *wt = xcalloc(1, sizeof *wt);
    wt->cb = cb;
    wt->ud = ud;
    p->waiters = wt;
}

bool
envd_proc_adopt_terminal(envd_proc_t *p, json_object *error)
{
    const char *code = json_get_str(error, "code", "not_found");
    if (p->adopt_tried_pty || !p->pid || strcmp(code, "not_found") != 0)
        return false;
    p->adopt_tried_pty = true;
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "terminal.attach");
    json_set_int(req, "pid", p->pid);
    json_set_bool(req, "live", true);
    err_t err = {0};
    int rc = envd_proc_reopen(p, req, &err);
    json_object_put(req);
    if (rc < 0)
        return false;
    p->pty = true; /* input goes to its PTY, its output is "pty" */
    p->stdin_open = true;
    return true;
}

static json_object *
process_info(json_object *config, uint32_t pid, const char *tag)
{
    json_object *o = json_object_new_object();
    json_set(o, "config", config);
    json_set_int(o, "pid", pid);
    if (tag && tag[0])
        json_set_str(o, "tag", tag);
    return o;
}

json_object *
envd_proc_list(gw_session_t *s, json_object *execs)
{
    envd_proc_prune(s);
    json_object *a = json_object_new_array();
    for (envd_proc_t *p = s->envd_procs; p; p = p->next)
        if (!p->ended && p->pid && !p->adopting)
            json_object_array_add(a, process_info(json_object_get(p->config), p->pid, p->tag));
    size_t n =
        execs && json_object_is_type(execs, json_type_array) ? json_object_array_length(execs) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *st = json_object_array_get_idx(execs, i);
        uint32_t pid = (uint32_t)json_get_int(st, "pid", 0);
        if (!json_get_bool(st, "running", false) || !pid)
            continue;
        bool held = false;
        for (envd_proc_t *p = s->envd_procs; p && !held; p = p->next)
            held = p->pid == pid && !p->ended;
        if (held)
            continue;
        envd_proc_t tmp = {.config = json_object_new_object()};
        envd_proc_take_status(&tmp, st);
        json_object_array_add(a, process_info(tmp.config, pid, tmp.tag));
    }
    return a;
}
