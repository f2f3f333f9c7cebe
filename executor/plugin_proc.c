/* plugin_proc.c — plugin helper processes (plugin_proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "executor.h"
#include "json_util.h"
#include "plugin_proc.h"
#include "proc_launch.h"

int
plugin_dir(char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return snprintf(out, cap, "%s/plugins", exe) < (int)cap ? 0 : -1;
}

static void
on_readable(watch_t *w, uint32_t events)
{
    (void)events;
    plugin_proc_t *p = w->data;
    /* Bounded: at most 16 reads per wakeup, then back to the loop. */
    for (int turn = 0; turn < 16 && p->running && (!p->can_read || p->can_read(p)); turn++) {
        char *dst = buf_reserve(&p->in, 65536);
        ssize_t r = read(p->from, dst, 65536);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (r <= 0 || p->in.len + (size_t)r > p->line_max) {
            plugin_proc_stop(p);
            if (p->on_gone)
                p->on_gone(p);
            return;
        }
        buf_advance(&p->in, (size_t)r);
        char *nl;
        while (p->running && p->in.len && (nl = memchr(p->in.data, '\n', p->in.len))) {
            size_t n = (size_t)(nl - p->in.data);
            err_t e = {0};
            json_object *ev = json_parse_lossy(p->in.data, n, &e);
            buf_consume(&p->in, n + 1);
            if (ev && p->on_event)
                p->on_event(p, ev);
            json_object_put(ev);
        }
    }
}

int
plugin_proc_start(plugin_proc_t *p, const char *name, char **av, char **env, err_t *err)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    if (plugin_dir(dir, sizeof dir) < 0)
        return err_set(err, ENOENT, "cannot find the executor's plugins folder");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, X_OK) < 0)
        return err_set(err, ENOENT, "%s is not installed (%s is missing)", name, path);
    av[0] = path;
    proc_launch_t l;
    int rc = proc_launch(av, env, g_exec.workspace, -1, -1, &l);
    if (rc != 0)
        return err_set(err, rc, "cannot start %s: %s", path, strerror(rc));
    close(l.err); /* helpers answer on stdout only */
    p->pid = p->pgid = l.pid;
    p->to = l.in;
    p->from = l.out;
    p->running = true;
    if (!p->line_max)
        p->line_max = 256u << 20;
    fcntl(l.out, F_SETFL, fcntl(l.out, F_GETFL) | O_NONBLOCK);
    loop_watch_add(g_exec.loop, &p->w, l.out, EPOLLIN, on_readable, p);
    return 0;
}

int
plugin_proc_send(plugin_proc_t *p, json_object *req)
{
    if (!p->running)
        return -EPIPE;
    size_t len;
    const char *t = json_object_to_json_string_length(
        req, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    buf_t b = BUF_INIT;
    buf_append(&b, t, len);
    buf_append(&b, "\n", 1);
    int rc = 0;
    /* A blocking pipe the helper reads between requests: a whole line goes at once. */
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(p->to, b.data + off, b.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = {p->to, POLLOUT, 0};
            poll(&pf, 1, 1000);
            continue;
        }
        if (w <= 0) {
            rc = -EPIPE;
            break;
        }
        off += (size_t)w;
    }
    buf_free(&b);
    return rc;
}

void
plugin_proc_update(plugin_proc_t *p)
{
    if (p->running)
        loop_watch_set(g_exec.loop, &p->w, !p->can_read || p->can_read(p) ? EPOLLIN : 0);
}

void
plugin_proc_stop(plugin_proc_t *p)
{
    if (p->pgid > 0)
        kill(-p->pgid, SIGKILL); /* its process group: the helper and what it started */
    p->pgid = 0;
    if (p->running) {
        loop_watch_del(g_exec.loop, &p->w);
        close(p->from);
        close(p->to);
    }
    p->running = false;
    p->pid = 0;
    buf_free(&p->in);
}

bool
plugin_proc_reaped(plugin_proc_t *p, pid_t pid)
{
    if (pid <= 0 || pid != p->pid)
        return false;
    p->pid = 0; /* the pipe's EOF tells the owner (on_gone) */
    return true;
}
