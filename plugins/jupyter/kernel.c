/* kernel.c — starting and stopping the IPython kernel and its ZeroMQ sockets (kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "clock.h"
#include "json_util.h"
#include "kernel.h"

#define FRAMES_MAX   64 /* frames of one message we look at (more are read and dropped) */
#define PORT_SHELL   1  /* ipc "ports": the endpoint is <prefix>-<port> */
#define PORT_IOPUB   2
#define PORT_STDIN   3
#define PORT_CONTROL 4
#define PORT_HB      5

static void
random_hex(char *out, size_t bytes)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char r[64];
    if (bytes > sizeof r)
        bytes = sizeof r;
    if (RAND_bytes(r, (int)bytes) != 1) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(r, 1, bytes, f) != bytes)
            memset(r, 0x5a, bytes);
        if (f)
            fclose(f);
    }
    for (size_t i = 0; i < bytes; i++) {
        out[2 * i] = digits[r[i] >> 4];
        out[2 * i + 1] = digits[r[i] & 15];
    }
    out[2 * bytes] = '\0';
}

static int
write_connection_file(const kernel_t *k, const char *path, err_t *err)
{
    json_object *c = json_object_new_object();
    json_set_str(c, "transport", "ipc");
    json_set_str(c, "ip", k->prefix);
    json_set_int(c, "shell_port", PORT_SHELL);
    json_set_int(c, "iopub_port", PORT_IOPUB);
    json_set_int(c, "stdin_port", PORT_STDIN);
    json_set_int(c, "control_port", PORT_CONTROL);
    json_set_int(c, "hb_port", PORT_HB);
    json_set_str(c, "key", k->key);
    json_set_str(c, "signature_scheme", "hmac-sha256");
    json_set_str(c, "kernel_name", "python3");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = 0;
    if (fd < 0) {
        rc = err_set(err, errno, "cannot write %s: %s", path, strerror(errno));
    } else {
        const char *t = json_object_to_json_string_ext(c, JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t n = strlen(t);
        if (write(fd, t, n) != (ssize_t)n)
            rc = err_set(err, EIO, "cannot write %s", path);
        close(fd);
    }
    json_object_put(c);
    return rc;
}

static void *
connect_socket(kernel_t *k, int type, int port)
{
    void *s = zmq_socket(k->zctx, type);
    int linger = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (type == ZMQ_SUB)
        zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    char ep[PATH_MAX + 32];
    snprintf(ep, sizeof ep, "ipc://%s-%d", k->prefix, port);
    zmq_connect(s, ep);
    return s;
}

int
kernel_start(kernel_t *k, const char *dir, const char *python, err_t *err)
{
    kernel_stop(k);
    k->generation++;
    snprintf(k->dir, sizeof k->dir, "%s", dir);
    snprintf(k->prefix, sizeof k->prefix, "%s/k%u", dir, k->generation);
    if (strlen(k->prefix) > 90) /* sun_path holds 108 bytes with the "-N" suffix */
        return err_set(err, ENAMETOOLONG, "kernel directory path too long: %s", dir);
    random_hex(k->key, 32);
    random_hex(k->session, JW_ID_LEN / 2);
    char conn[PATH_MAX + 16];
    snprintf(conn, sizeof conn, "%s.json", k->prefix);
    snprintf(k->log, sizeof k->log, "%s/kernel.log", dir);
    if (write_connection_file(k, conn, err) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        int log = open(k->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0)
            dup2(null, 0);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        execlp(python, python, "-m", "ipykernel_launcher", "-f", conn, (char *)NULL);
        dprintf(2, "cannot run %s: %s\n", python, strerror(errno));
        _exit(127);
    }
    k->pid = pid;
    if (!k->zctx)
        k->zctx = zmq_ctx_new();
    k->shell = connect_socket(k, ZMQ_DEALER, PORT_SHELL);
    k->control = connect_socket(k, ZMQ_DEALER, PORT_CONTROL);
    k->iopub = connect_socket(k, ZMQ_SUB, PORT_IOPUB);
    return 0;
}

int
kernel_handshake(kernel_t *k, int timeout_ms, err_t *err)
{
    long deadline = (long)clock_mono_ms() + timeout_ms;
    bool replied = false, published = false;
    char id[JW_ID_LEN + 1] = "";
    long resend = 0;
    /* Bounded by the deadline: one poll of at most 100 ms per turn. */
    while (!(replied && published)) {
        if (!kernel_alive(k)) {
            char tail[200], how[128];
            kernel_log_tail(k, tail, sizeof tail);
            kernel_exit_text(k, how, sizeof how);
            return err_set(err, ECHILD, "the IPython kernel exited while starting (%s)%s%s", how,
                           tail[0] ? ": " : "", tail);
        }
        long now = (long)clock_mono_ms();
        if (now >= deadline)
            return err_set(err, ETIMEDOUT, "the IPython kernel did not answer in %d ms",
                           timeout_ms);
        /* iopub is a PUB socket: until our subscription reaches the kernel it drops what it
         * publishes, so ask again until a status message for our request comes through. */
        if (!published && now >= resend) {
            json_object *c = json_object_new_object();
            kernel_send(k, k->shell, "kernel_info_request", c, id);
            json_object_put(c);
            resend = now + 200;
        }
        zmq_pollitem_t items[2] = {{k->shell, 0, ZMQ_POLLIN, 0}, {k->iopub, 0, ZMQ_POLLIN, 0}};
        zmq_poll(items, 2, 100);
        jw_msg_t m;
        err_t e = {0};
        while (kernel_recv(k, k->shell, &m, &e) > 0) {
            if (strcmp(m.msg_type, "kernel_info_reply") == 0)
                replied = true;
            jw_msg_free(&m);
        }
        while (kernel_recv(k, k->iopub, &m, &e) > 0) {
            if (strcmp(m.msg_type, "status") == 0 && strcmp(m.parent_id, id) == 0)
                published = true;
            jw_msg_free(&m);
        }
    }
    return 0;
}

void
kernel_stop(kernel_t *k)
{
    if (k->pid > 0) {
        kill(k->pid, SIGKILL);
        waitpid(k->pid, NULL, 0);
    }
    k->pid = 0;
    void **socks[] = {&k->shell, &k->iopub, &k->control};
    for (size_t i = 0; i < 3; i++)
        if (*socks[i]) {
            zmq_close(*socks[i]);
            *socks[i] = NULL;
        }
    if (k->prefix[0]) {
        char p[PATH_MAX + 16];
        for (int port = PORT_SHELL; port <= PORT_HB; port++) {
            snprintf(p, sizeof p, "%s-%d", k->prefix, port);
            unlink(p);
        }
        snprintf(p, sizeof p, "%s.json", k->prefix);
        unlink(p);
    }
}

bool
kernel_alive(kernel_t *k)
{
    if (k->pid <= 0)
        return false;
    if (waitpid(k->pid, &k->exit_status, WNOHANG) == k->pid) {
        k->pid = 0;
        return false;
    }
    return true;
}

void
kernel_exit_text(const kernel_t *k, char *out, size_t cap)
{
    int st = k->exit_status;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
        /* the OOM killer's signal: the sandbox's memory limit counts the kernel */
        snprintf(out, cap,
                 "killed by SIGKILL: the sandbox's memory limit (the kernel counts in "
                 "it) or a kill -9");
    else if (WIFSIGNALED(st))
        snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(out, cap, "exit status %d", WEXITSTATUS(st));
}

void
kernel_interrupt(kernel_t *k)
{
    if (k->pid > 0)
        kill(k->pid, SIGINT);
}

int
kernel_send(kernel_t *k, void *sock, const char *msg_type, json_object *content,
            char id_out[JW_ID_LEN + 1])
{
    buf_t f[6] = {BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT, BUF_INIT};
    jw_build(k->key, k->session, msg_type, content, f, id_out);
    int rc = 0;
    for (int i = 0; i < 6 && rc >= 0; i++)
        rc = zmq_send(sock, f[i].data, f[i].len, i < 5 ? ZMQ_SNDMORE : 0);
    for (int i = 0; i < 6; i++)
        buf_free(&f[i]);
    return rc < 0 ? -errno : 0;
}

int
kernel_recv(kernel_t *k, void *sock, jw_msg_t *m, err_t *err)
{
    zmq_msg_t parts[FRAMES_MAX];
    jw_frame_t frames[FRAMES_MAX];
    size_t n = 0;
    int more = 1;
    while (more) {
        zmq_msg_t tmp;
        zmq_msg_t *z = n < FRAMES_MAX ? &parts[n] : &tmp;
        zmq_msg_init(z);
        if (zmq_msg_recv(z, sock, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(z);
            break;
        }
        more = zmq_msg_more(z);
        if (z == &tmp) {
            zmq_msg_close(z);
            continue;
        }
        frames[n] = (jw_frame_t){zmq_msg_data(z), zmq_msg_size(z)};
        n++;
    }
    int rc = 0;
    if (n > 0)
        rc = jw_parse(k->key, frames, n, m, err) < 0 ? -1 : 1;
    for (size_t i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
    return rc;
}

void
kernel_log_tail(const kernel_t *k, char *out, size_t cap)
{
    out[0] = '\0';
    int fd = open(k->log, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)cap - 1 ? end - (off_t)cap + 1 : 0;
    ssize_t r = pread(fd, out, cap - 1, from);
    close(fd);
    out[r > 0 ? r : 0] = '\0';
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
}
