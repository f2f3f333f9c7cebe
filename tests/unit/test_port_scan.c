/* test_port_scan.c — the executor's listening sockets as port_scan reads them from the kernel
 * (sock_diag), against this process's own sockets and against /proc/net/tcp{,6} parsed as before
 * (port_table_parse): the same sockets, addresses, ports and inodes, listeners only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "executor/port_scan.h"
#include "executor/port_table.h"
#include "executor/executor.h"

executor_t g_exec; /* port_scan.c's port.list op links the executor's connections */

/* A socket of family listening (or not) on loopback, port chosen by the kernel: its fd. */
static int
loopback_socket(int family, bool listening, uint16_t *port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) < 0) { /* no IPv6 here */
        close(fd);
        return -1;
    }
    if (listening)
        assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

static uint64_t
inode_of(int fd)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    return st.st_ino;
}

static const port_sock_t *
find(const port_table_t *t, int family, uint16_t port)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].family == family && t->v[i].port == port)
            return &t->v[i];
    return NULL;
}

static void
test_scan_finds_this_process_listeners_and_only_them(void **state)
{
    (void)state;
    uint16_t p4, p6, idle;
    int l4 = loopback_socket(AF_INET, true, &p4), l6 = loopback_socket(AF_INET6, true, &p6);
    int bound = loopback_socket(AF_INET, false, &idle);
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_scan(&t), 0);
    const port_sock_t *s = find(&t, AF_INET, p4);
    assert_non_null(s);
    assert_int_equal(s->inode, inode_of(l4));
    char text[INET6_ADDRSTRLEN];
    port_sock_address(s, text);
    assert_string_equal(text, "127.0.0.1");
    if (l6 >= 0) {
        s = find(&t, AF_INET6, p6);
        assert_non_null(s);
        assert_int_equal(s->inode, inode_of(l6));
        port_sock_address(s, text);
        assert_string_equal(text, "::1");
    }
    assert_null(find(&t, AF_INET, idle)); /* bound, not listening */
    for (size_t i = 1; i < t.n; i++)      /* sorted, one entry each */
        assert_true(port_sock_cmp(&t.v[i - 1], &t.v[i]) < 0);
    port_table_free(&t);
    close(l4);
    if (l6 >= 0)
        close(l6);
    close(bound);
}

static void
read_file(const char *path, buf_t *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n;
    while ((n = read(fd, buf_reserve(b, 65536), 65536)) > 0)
        buf_advance(b, (size_t)n);
    close(fd);
}

/* What the kernel's sock_diag lists of a listener is what /proc/net/tcp{,6} shows of it (only
 * this test's: others come and go on a shared host between the two reads). */
static void
test_scan_matches_proc_net_tcp(void **state)
{
    (void)state;
    uint16_t p4, p6;
    int l4 = loopback_socket(AF_INET, true, &p4), l6 = loopback_socket(AF_INET6, true, &p6);
    port_table_t diag = PORT_TABLE_INIT, proc = PORT_TABLE_INIT;
    assert_int_equal(port_scan(&diag), 0);
    buf_t b4 = BUF_INIT, b6 = BUF_INIT;
    read_file("/proc/net/tcp", &b4);
    read_file("/proc/net/tcp6", &b6);
    assert_int_equal(port_table_parse(&proc, b4.data, b4.len, AF_INET), 0);
    port_table_parse(&proc, b6.data, b6.len, AF_INET6);
    port_table_sort(&proc);
    const struct {
        int family;
        uint16_t port;
    } ours[] = {{AF_INET, p4}, {AF_INET6, p6}};
    for (size_t i = 0; i < (l6 >= 0 ? 2u : 1u); i++) {
        const port_sock_t *d = find(&diag, ours[i].family, ours[i].port);
        const port_sock_t *p = find(&proc, ours[i].family, ours[i].port);
        assert_non_null(d);
        assert_non_null(p);
        assert_int_equal(port_sock_cmp(d, p), 0);
        assert_int_equal(d->inode, p->inode);
    }
    port_table_free(&diag);
    port_table_free(&proc);
    buf_free(&b4);
    buf_free(&b6);
    close(l4);
    if (l6 >= 0)
        close(l6);
}

/* The scan does not read /proc/net/tcp (each read walks the host's whole connection hash): with
 * an empty tmpfs over /proc (in a mount namespace of a child's own) it still finds the
 * listener. Needs root, as make test does. */
static void
test_scan_does_not_read_proc_net_tcp(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", "/proc", "tmpfs", 0, "size=4k") < 0)
            _exit(2);
        uint16_t port;
        int fd = loopback_socket(AF_INET, true, &port);
        port_table_t t = PORT_TABLE_INIT;
        int found = port_scan(&t) == 0 && find(&t, AF_INET, port) != NULL;
        port_table_free(&t);
        close(fd);
        _exit(found ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* 2: no mount namespace (not root) */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_finds_this_process_listeners_and_only_them),
        cmocka_unit_test(test_scan_matches_proc_net_tcp),
        cmocka_unit_test(test_scan_does_not_read_proc_net_tcp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
