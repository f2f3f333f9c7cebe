/* port_scan.c — listening sockets from sock_diag (port_diag.h) or /proc, and the processes
 * holding them. See port_scan.h. */
#include "port_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "json_util.h"
#include "port_diag.h"
#include "utf8.h"
#include "xalloc.h"

/* A /proc/net/tcp line is 150 bytes: this is some 400000 sockets. Past it the rest is not read
 * (its last line, cut, is skipped as malformed). */
#define PROC_NET_MAX  (64u << 20)
#define CMDLINE_READ  4096
#define SOCKET_PREFIX "socket:["

/* Reads path whole (up to PROC_NET_MAX) into b. 0 or -errno. */
static int
read_proc_file(const char *path, buf_t *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    while (b->len < PROC_NET_MAX) {
        ssize_t n = read(fd, buf_reserve(b, 65536), 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : 0;
            break;
        }
        buf_advance(b, (size_t)n);
    }
    close(fd);
    return rc;
}

int
port_scan(port_table_t *t)
{
    static const struct {
        const char *path;
        int family;
    } files[] = {{"/proc/net/tcp", AF_INET}, {"/proc/net/tcp6", AF_INET6}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (port_diag_scan(t, files[i].family) == 0) /* port_diag.h: why it comes first */
            continue;
        buf_t text = BUF_INIT;
        int rc = read_proc_file(files[i].path, &text);
        if (rc < 0 && !(rc == -ENOENT && files[i].family == AF_INET6)) {
            buf_free(&text);
            port_table_free(t);
            return rc;
        }
        port_table_parse(t, text.data, text.len, files[i].family);
        buf_free(&text);
    }
    port_table_sort(t);
    return 0;
}

/* A process's command line as it is shown: arguments joined by spaces, at most
 * PORT_COMMAND_MAX bytes of UTF-8 (bytes that are not UTF-8 as U+FFFD, as every text the
 * executor sends); "[comm]" for a process without one (a zombie, a kernel thread). NULL when
 * the process is gone. */
static char *
read_command(int pid)
{
    char path[48], raw[CMDLINE_READ];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, raw, sizeof raw) : -1;
    if (fd >= 0)
        close(fd);
    while (n > 0 && raw[n - 1] == '\0')
        n--;
    if (n <= 0) {
        snprintf(path, sizeof path, "/proc/%d/comm", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        raw[0] = '[';
        n = fd >= 0 ? read(fd, raw + 1, 64) : -1;
        if (fd >= 0)
            close(fd);
        if (n <= 0)
            return NULL;
        n = 1 + n - (raw[n] == '\n');
        raw[n++] = ']';
    }
    for (ssize_t i = 0; i < n; i++)
        if (raw[i] == '\0')
            raw[i] = ' ';
    /* Cut between characters before repairing (a character cut in two would show as U+FFFD),
     * then again after (a U+FFFD takes three bytes). */
    size_t len = (size_t)n;
    if (len > PORT_COMMAND_MAX)
        len = utf8_complete_prefix(raw, PORT_COMMAND_MAX);
    char fixed[UTF8_REPAIRED_MAX(PORT_COMMAND_MAX)];
    len = utf8_repair(raw, len, fixed);
    if (len > PORT_COMMAND_MAX)
        len = utf8_complete_prefix(fixed, PORT_COMMAND_MAX);
    return xstrndup(fixed, len);
}

typedef struct {
    uint64_t inode;
    port_sock_t *s;
} wanted_t;

static int
cmp_wanted(const void *a, const void *b)
{
    uint64_t x = ((const wanted_t *)a)->inode, y = ((const wanted_t *)b)->inode;
    return x < y ? -1 : x > y;
}

/* Gives the sockets of inode in w[0..n) (sorted) to pid; returns how many it gave. */
static size_t
claim(wanted_t *w, size_t n, uint64_t inode, int pid)
{
    wanted_t key = {.inode = inode};
    wanted_t *hit = bsearch(&key, w, n, sizeof *w, cmp_wanted);
    if (!hit)
        return 0;
    while (hit > w && hit[-1].inode == inode)
        hit--;
    size_t given = 0;
    for (; hit < w + n && hit->inode == inode; hit++)
        if (!hit->s->pid) {
            hit->s->pid = pid;
            given++;
        }
    return given;
}

/* The socket inodes among pid's fds, each claimed for pid. */
static size_t
scan_fds(wanted_t *w, size_t n, int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path); /* another user's process: EACCES, passed over */
    if (!d)
        return 0;
    size_t given = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char link[64];
        ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
        if (k <= (ssize_t)strlen(SOCKET_PREFIX) ||
            memcmp(link, SOCKET_PREFIX, strlen(SOCKET_PREFIX)) != 0)
            continue;
        link[k] = '\0';
        char *end;
        unsigned long long inode = strtoull(link + strlen(SOCKET_PREFIX), &end, 10);
        if (*end == ']' && inode)
            given += claim(w, n, inode, pid);
    }
    closedir(d);
    return given;
}

void
port_scan_owners(port_sock_t **socks, size_t n)
{
    wanted_t *w = xcalloc(n ? n : 1, sizeof *w);
    size_t left = 0;
    for (size_t i = 0; i < n; i++)
        if (socks[i]->inode && !socks[i]->pid)
            w[left++] = (wanted_t){socks[i]->inode, socks[i]};
    size_t nw = left;
    qsort(w, nw, sizeof *w, cmp_wanted);
    DIR *proc = left ? opendir("/proc") : NULL;
    struct dirent *e;
    /* /proc lists pids in increasing order: a socket shared with forked workers goes to the
     * oldest, usually the server that opened it */
    while (proc && left && (e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid > INT_MAX)
            continue;
        size_t given = scan_fds(w, nw, (int)pid);
        left -= given < left ? given : left;
    }
    if (proc)
        closedir(proc);
    for (size_t i = 0; i < nw; i++)
        if (w[i].s->pid && !w[i].s->command)
            w[i].s->command = read_command(w[i].s->pid);
    free(w);
}

json_object *
port_sock_json(const port_sock_t *s)
{
    char addr[INET6_ADDRSTRLEN];
    port_sock_address(s, addr);
    json_object *o = json_object_new_object();
    json_set_int(o, "port", s->port);
    json_set_str(o, "address", addr);
    json_set_str(o, "family", s->family == AF_INET ? "ipv4" : "ipv6");
    json_set(o, "pid", s->pid ? json_object_new_int(s->pid) : NULL);
    json_set(o, "command", s->command ? json_object_new_string(s->command) : NULL);
    return o;
}

void
port_table_to_json(const port_table_t *t, json_object *obj)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < t->n && i < PORT_LIST_MAX; i++)
        json_object_array_add(a, port_sock_json(&t->v[i]));
    json_set(obj, "ports", a);
    if (t->n > PORT_LIST_MAX) {
        json_set_bool(obj, "truncated", true);
        json_set_int(obj, "total", (int64_t)t->n);
    }
}

int
port_scan_listed(port_table_t *t, err_t *err)
{
    int rc = port_scan(t);
    if (rc < 0)
        return err_set(err, ERR_INTERNAL, "cannot read /proc/net/tcp: %s", strerror(-rc));
    size_t n = t->n < PORT_LIST_MAX ? t->n : PORT_LIST_MAX;
    port_sock_t **socks = xcalloc(n ? n : 1, sizeof *socks);
    for (size_t i = 0; i < n; i++)
        socks[i] = &t->v[i];
    port_scan_owners(socks, n);
    free(socks);
    return 0;
}

void
port_op_list(channel_t *ch, json_object *req)
{
    (void)req;
    port_table_t t = PORT_TABLE_INIT;
    err_t err = {0};
    if (port_scan_listed(&t, &err) < 0) {
        chan_close_error(ch, err.code, err.msg);
        return;
    }
    json_object *r = json_object_new_object();
    port_table_to_json(&t, r);
    port_table_free(&t);
    chan_close(ch, r);
}
