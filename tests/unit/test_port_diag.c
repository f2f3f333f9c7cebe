/* test_port_diag.c — the executor's sock_diag reader (executor/port_diag.c): the dump's messages
 * decoded (listeners of the family asked for, other states and families passed over, the end,
 * a kernel error, a message cut short), and a real dump of this process's own namespace, which
 * agrees with /proc/net/tcp{,6} on a listener opened here on loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "executor/port_diag.h"
#include "executor/port_table.h"

#define ST_ESTABLISHED 1
#define ST_LISTEN      10

/* One SOCK_DIAG_BY_FAMILY message as the kernel writes it (inet_sk_diag_fill). */
static void
put_socket(buf_t *b, int family, const char *address, unsigned port, unsigned state, unsigned inode)
{
    struct {
        struct nlmsghdr h;
        struct inet_diag_msg m;
    } msg = {.h = {.nlmsg_len = sizeof msg,
                   .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                   .nlmsg_flags = NLM_F_MULTI},
             .m = {.idiag_family = (uint8_t)family,
                   .idiag_state = (uint8_t)state,
                   .idiag_inode = inode}};
    msg.m.id.idiag_sport = htons((uint16_t)port);
    assert_int_equal(inet_pton(family, address, msg.m.id.idiag_src), 1);
    buf_append(b, &msg, sizeof msg);
}

static void
put_done(buf_t *b)
{
    struct {
        struct nlmsghdr h;
        int32_t zero;
    } done = {
        .h = {.nlmsg_len = sizeof done, .nlmsg_type = NLMSG_DONE, .nlmsg_flags = NLM_F_MULTI}};
    buf_append(b, &done, sizeof done);
}

static void
assert_entry(const port_sock_t *s, int family, const char *address, unsigned port, uint64_t inode)
{
    char text[INET6_ADDRSTRLEN];
    port_sock_address(s, text);
    assert_int_equal(s->family, family);
    assert_string_equal(text, address);
    assert_int_equal(s->port, port);
    assert_int_equal(s->inode, inode);
    assert_int_equal(s->pid, 0);
    assert_null(s->command);
}

static void
test_listeners_of_the_family_are_read_until_the_end(void **state)
{
    (void)state;
    buf_t b = BUF_INIT;
    put_socket(&b, AF_INET, "127.0.0.1", 8080, ST_LISTEN, 41);
    put_socket(&b, AF_INET, "10.0.0.2", 443, ST_ESTABLISHED, 42); /* not a listener */
    put_socket(&b, AF_INET6, "::", 22, ST_LISTEN, 43);            /* another family */
    put_socket(&b, AF_INET, "0.0.0.0", 22, ST_LISTEN, 44);
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_diag_parse(&t, b.data, b.len, AF_INET), 0); /* more to come */
    assert_int_equal(t.n, 2);
    assert_entry(&t.v[0], AF_INET, "127.0.0.1", 8080, 41);
    assert_entry(&t.v[1], AF_INET, "0.0.0.0", 22, 44);
    buf_clear(&b);
    put_socket(&b, AF_INET6, "::ffff:10.0.0.2", 5000, ST_LISTEN, 45);
    put_done(&b);
    put_socket(&b, AF_INET6, "::1", 9, ST_LISTEN, 46); /* after the end: not read */
    port_table_t t6 = PORT_TABLE_INIT;
    assert_int_equal(port_diag_parse(&t6, b.data, b.len, AF_INET6), 1);
    assert_int_equal(t6.n, 1);
    assert_entry(&t6.v[0], AF_INET6, "::ffff:10.0.0.2", 5000, 45);
    port_table_free(&t);
    port_table_free(&t6);
    buf_free(&b);
}

static void
test_an_error_or_a_message_cut_short_is_an_error(void **state)
{
    (void)state;
    buf_t b = BUF_INIT;
    struct {
        struct nlmsghdr h;
        struct nlmsgerr e;
    } err = {.h = {.nlmsg_len = sizeof err, .nlmsg_type = NLMSG_ERROR}, .e = {.error = -EPERM}};
    buf_append(&b, &err, sizeof err);
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_diag_parse(&t, b.data, b.len, AF_INET), -EPERM);
    buf_clear(&b);
    put_socket(&b, AF_INET, "127.0.0.1", 80, ST_LISTEN, 7);
    assert_int_equal(port_diag_parse(&t, b.data, b.len - 1, AF_INET), -EBADMSG);
    struct nlmsghdr tiny = {.nlmsg_len = 4}; /* shorter than its own header */
    assert_int_equal(port_diag_parse(&t, &tiny, sizeof tiny, AF_INET), -EBADMSG);
    assert_int_equal(port_diag_parse(&t, b.data, 3, AF_INET), 0); /* not a header yet */
    assert_int_equal(t.n, 0);
    port_table_free(&t);
    buf_free(&b);
}

/* The listeners /proc/net/tcp{,6} shows, as port_scan read them before sock_diag. */
static void
proc_listeners(port_table_t *t, const char *path, int family)
{
    buf_t text = BUF_INIT;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) /* no IPv6 */
        return;
    ssize_t n;
    while ((n = read(fd, buf_reserve(&text, 65536), 65536)) > 0)
        buf_advance(&text, (size_t)n);
    close(fd);
    port_table_parse(t, text.data, text.len, family);
    buf_free(&text);
}

static bool
has(const port_table_t *t, const port_sock_t *s)
{
    for (size_t i = 0; i < t->n; i++)
        if (port_sock_cmp(&t->v[i], s) == 0 && t->v[i].inode == s->inode)
            return true;
    return false;
}

static void
test_a_real_dump_agrees_with_proc_on_a_listener_of_ours(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    port_sock_t ours = {.family = AF_INET, .port = ntohs(sa.sin_port), .inode = st.st_ino};
    memcpy(ours.addr, &sa.sin_addr, 4);

    port_table_t diag = PORT_TABLE_INIT, proc = PORT_TABLE_INIT;
    assert_int_equal(port_diag_scan(&diag, AF_INET), 0);
    assert_int_equal(port_diag_scan(&diag, AF_INET6), 0);
    assert_true(has(&diag, &ours));
    proc_listeners(&proc, "/proc/net/tcp", AF_INET);
    proc_listeners(&proc, "/proc/net/tcp6", AF_INET6);
    assert_true(has(&proc, &ours));
    for (size_t i = 0; i < diag.n; i++) /* listeners only: a connection is no port to show */
        assert_true(diag.v[i].family == AF_INET || diag.v[i].family == AF_INET6);
    close(fd);
    port_table_free(&diag);
    port_table_free(&proc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listeners_of_the_family_are_read_until_the_end),
        cmocka_unit_test(test_an_error_or_a_message_cut_short_is_an_error),
        cmocka_unit_test(test_a_real_dump_agrees_with_proc_on_a_listener_of_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
