/* cdp.c — the DevTools pipe client (cdp.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cdp.h"
#include "json_util.h"

#define MSG_MAX (64u << 20) /* a screenshot of a large page is a few MiB */

int
cdp_start(cdp_t *c, const char *chromium, const char *dir, err_t *err)
{
    int tochrome[2], fromchrome[2];
    if (pipe2(tochrome, O_CLOEXEC) < 0 || pipe2(fromchrome, O_CLOEXEC) < 0)
        return err_set(err, errno, "pipe: %s", strerror(errno));
    snprintf(c->log, sizeof c->log, "%s/chromium.log", dir);
    char profile[4096 + 32];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", dir);
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* fd 3 and 4 are Chromium's pipe; everything else closes on exec. */
        int in = dup(tochrome[0]), out = dup(fromchrome[1]);
        dup2(in, 3);
        dup2(out, 4);
        int log = open(c->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(log >= 0 ? log : null, 1);
        dup2(log >= 0 ? log : null, 2);
        signal(SIGPIPE, SIG_DFL);
        execlp(chromium, chromium, "--headless=new", "--remote-debugging-pipe",
               /* the sandbox is the boundary: Chromium's own needs namespaces we are inside */
               "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--disable-background-networking", "--disable-sync",
               "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
               "--window-size=1280,720", profile, "about:blank", (char *)NULL);
        dprintf(2, "cannot run %s: %s\n", chromium, strerror(errno));
        _exit(127);
    }
    close(tochrome[0]);
    close(fromchrome[1]);
    *c =
        (cdp_t){.pid = pid, .to = tochrome[1], .from = fromchrome[0], .next_id = 1, .in = BUF_INIT};
    snprintf(c->log, sizeof c->log, "%s/chromium.log", dir);
    json_object *targets = cdp_call(c, "Target.getTargets", NULL, false, 30000, err);
    if (!targets)
        return -1;
    const char *tid = NULL;
    json_object *infos = json_get(targets, "targetInfos");
    for (size_t i = 0; infos && i < json_object_array_length(infos); i++) {
        json_object *t = json_object_array_get_idx(infos, i);
        if (strcmp(json_get_str(t, "type", ""), "page") == 0) {
            tid = json_get_str(t, "targetId", NULL);
            break;
        }
    }
    json_object *p = json_object_new_object();
    json_object *created = NULL;
    if (!tid) {
        json_set_str(p, "url", "about:blank");
        created = cdp_call(c, "Target.createTarget", p, false, 10000, err);
        if (!created) {
            json_object_put(targets);
            return -1;
        }
        tid = json_get_str(created, "targetId", "");
        p = json_object_new_object();
    }
    json_set_str(p, "targetId", tid);
    json_set_bool(p, "flatten", true);
    json_object *att = cdp_call(c, "Target.attachToTarget", p, false, 10000, err);
    json_object_put(targets);
    json_object_put(created);
    if (!att)
        return -1;
    snprintf(c->session, sizeof c->session, "%s", json_get_str(att, "sessionId", ""));
    json_object_put(att);
    json_object *r = cdp_call(c, "Page.enable", NULL, true, 10000, err);
    if (!r)
        return -1;
    json_object_put(r);
    /* A headless page never has the window's focus: emulate it, as Playwright (so BrowserGym)
     * does, so focus, :focus and the tree's "focused" behave as in a visible browser. */
    json_object *f = json_object_new_object();
    json_set_bool(f, "enabled", true);
    r = cdp_call(c, "Emulation.setFocusEmulationEnabled", f, true, 10000, err);
    if (!r)
        return -1;
    json_object_put(r);
    return 0;
}

void
cdp_stop(cdp_t *c)
{
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, NULL, 0);
    }
    if (c->to > 0)
        close(c->to);
    if (c->from > 0)
        close(c->from);
    buf_free(&c->in);
    c->pid = 0;
    c->to = c->from = -1;
}

bool
cdp_alive(cdp_t *c)
{
    if (c->pid <= 0)
        return false;
    if (waitpid(c->pid, NULL, WNOHANG) == c->pid) {
        c->pid = 0;
        return false;
    }
    return true;
}

static void
on_event(cdp_t *c, json_object *m)
{
    const char *method = json_get_str(m, "method", "");
    if (strcmp(method, "Page.loadEventFired") == 0)
        c->loads++;
    else if (strcmp(method, "Page.frameStartedLoading") == 0)
        c->starts++;
    else if (strcmp(method, "Page.frameStoppedLoading") == 0)
        c->stops++;
    if (c->on_event)
        c->on_event(c, m);
}

/* Reads one message (waiting up to deadline); NULL on timeout or a dead pipe (*dead set). */
static json_object *
read_message(cdp_t *c, long deadline, bool *dead)
{
    for (;;) {
        char *nul = c->in.len ? memchr(c->in.data, '\0', c->in.len) : NULL;
        if (nul) {
            size_t n = (size_t)(nul - c->in.data);
            err_t e = {0};
            json_object *m = n ? json_parse_lossy(c->in.data, n, &e) : NULL;
            buf_consume(&c->in, n + 1);
            if (m)
                return m;
            continue;
        }
        long left = deadline - (long)clock_mono_ms();
        if (left <= 0)
            return NULL;
        struct pollfd p = {c->from, POLLIN, 0};
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        char *w = buf_reserve(&c->in, 1 << 16);
        ssize_t r = read(c->from, w, 1 << 16);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || c->in.len + (size_t)r > MSG_MAX) {
            *dead = true;
            return NULL;
        }
        buf_advance(&c->in, (size_t)r);
    }
}

int
cdp_send(cdp_t *c, const char *method, json_object *params, bool page, err_t *err)
{
    int id = c->next_id++;
    json_object *m = json_object_new_object();
    json_set_int(m, "id", id);
    json_set_str(m, "method", method);
    json_set(m, "params", params ? params : json_object_new_object());
    if (page)
        json_set_str(m, "sessionId", c->session);
    size_t len;
    const char *t = json_object_to_json_string_length(
        m, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    buf_t b = BUF_INIT;
    buf_append(&b, t, len + 1); /* with the NUL that ends a message */
    json_object_put(m);
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(c->to, b.data + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            buf_free(&b);
            err_set(err, EPIPE, "the browser is gone");
            return -1;
        }
        off += (size_t)w;
    }
    buf_free(&b);
    return id;
}

json_object *
cdp_call(cdp_t *c, const char *method, json_object *params, bool page, int timeout_ms, err_t *err)
{
    int id = cdp_send(c, method, params, page, err);
    if (id < 0)
        return NULL;
    long deadline = (long)clock_mono_ms() + timeout_ms;
    bool dead = false;
    for (;;) {
        json_object *r = read_message(c, deadline, &dead);
        if (!r) {
            err_set(err, dead ? EPIPE : ETIMEDOUT,
                    dead ? "the browser is gone" : "the browser did not answer %s in %d ms", method,
                    timeout_ms);
            return NULL;
        }
        if (json_get_int(r, "id", 0) != id) {
            on_event(c, r);
            json_object_put(r);
            continue;
        }
        json_object *e = json_get(r, "error");
        json_object *res = e ? NULL : json_object_get(json_get(r, "result"));
        if (e)
            err_set(err, ERR_BAD_REQ, "%s", json_get_str(e, "message", "protocol error"));
        else if (!res)
            res = json_object_new_object();
        json_object_put(r);
        return res;
    }
}

int
cdp_pump(cdp_t *c)
{
    char *w = buf_reserve(&c->in, 1 << 16);
    ssize_t r = read(c->from, w, 1 << 16);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (r <= 0 || c->in.len + (size_t)r > MSG_MAX)
        return -1;
    buf_advance(&c->in, (size_t)r);
    char *nul;
    while (c->in.len && (nul = memchr(c->in.data, '\0', c->in.len))) {
        size_t n = (size_t)(nul - c->in.data);
        err_t e = {0};
        json_object *m = n ? json_parse_lossy(c->in.data, n, &e) : NULL;
        buf_consume(&c->in, n + 1);
        if (m)
            on_event(c, m);
        json_object_put(m);
    }
    return 0;
}

void
cdp_wait(cdp_t *c, int timeout_ms, const unsigned *counter, unsigned past)
{
    long deadline = (long)clock_mono_ms() + timeout_ms;
    bool dead = false;
    while (!(counter && *counter > past) && !dead) {
        json_object *r = read_message(c, deadline, &dead);
        if (!r)
            return;
        on_event(c, r);
        json_object_put(r);
    }
}
