/* test_port_table.c — the /proc/net/tcp{,6} parser (executor/port_table.c): listening sockets of
 * both families, the other states passed over, malformed lines skipped and counted, one entry
 * per (port, address) in port order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "buf.h"
#include "executor/port_table.h"

#define ST_ESTABLISHED 0x01
#define ST_LISTEN      0x0A

static const char HEADER4[] = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
                              "retrnsmt   uid  timeout inode\n";
static const char HEADER6[] = "  sl  local_address                         remote_address        "
                              "                st tx_queue rx_queue tr tm->when retrnsmt   uid  "
                              "timeout inode\n";

/* An address as the kernel prints it: each 32-bit word "%08X" in the host's byte order. */
static void
put_address(buf_t *b, int family, const char *text)
{
    uint8_t a[16];
    assert_int_equal(inet_pton(family, text, a), 1);
    for (int i = 0; i < (family == AF_INET ? 1 : 4); i++) {
        uint32_t w;
        memcpy(&w, a + 4 * i, 4);
        buf_printf(b, "%08X", w);
    }
}

/* One socket line as the kernel writes it (seq_printf of tcp4_seq_show / tcp6_seq_show). */
static void
put_line(buf_t *b, int slot, int family, const char *local, unsigned port, const char *remote,
         unsigned remote_port, unsigned state, unsigned long long inode)
{
    buf_printf(b, "%4d: ", slot);
    put_address(b, family, local);
    buf_printf(b, ":%04X ", port);
    put_address(b, family, remote);
    buf_printf(b,
               ":%04X %02X 00000000:00000000 00:00000000 00000000  1000        0 %llu 1 "
               "0000000000000000 100 0 0 10 0\n",
               remote_port, state, inode);
}

static void
assert_entry(const port_sock_t *s, int family, const char *address, unsigned port,
             unsigned long long inode)
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
test_ipv4_listeners_are_read_and_other_states_passed_over(void **state)
{
    (void)state;
    buf_t b = BUF_INIT;
    buf_puts(&b, HEADER4);
    put_line(&b, 0, AF_INET, "0.0.0.0", 8000, "0.0.0.0", 0, ST_LISTEN, 4242);
    put_line(&b, 1, AF_INET, "127.0.0.1", 5432, "0.0.0.0", 0, ST_LISTEN, 17);
    put_line(&b, 2, AF_INET, "127.0.0.1", 8000, "127.0.0.1", 51234, ST_ESTABLISHED, 99);
    put_line(&b, 3, AF_INET, "10.0.2.15", 65535, "0.0.0.0", 0, ST_LISTEN, 18446744073709551615ull);
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_table_parse(&t, b.data, b.len, AF_INET), 0);
    assert_int_equal(t.n, 3);
    assert_entry(&t.v[0], AF_INET, "0.0.0.0", 8000, 4242);
    assert_entry(&t.v[1], AF_INET, "127.0.0.1", 5432, 17);
    assert_entry(&t.v[2], AF_INET, "10.0.2.15", 65535, 18446744073709551615ull);
    assert_false(port_sock_is_wildcard(&t.v[1]));
    assert_true(port_sock_is_wildcard(&t.v[0]));
    port_table_free(&t);
    assert_null(t.v);
    buf_free(&b);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Lines as an x86 kernel wrote them, not made by put_line. */
static void
test_lines_of_a_real_x86_kernel(void **state)
{
    (void)state;
    static const char tcp[] =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
        "timeout inode                                                     \n"
        "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        "
        "0 637 1 00000000b0766b88 100 0 0 10 0                       \n";
    static const char tcp6[] = "   0: 00000000000000000000000001000000:0BB8 "
                               "00000000000000000000000000000000:0000 0A 00000000:00000000 "
                               "00:00000000 00000000  1000        0 91 1 0000000000000000 100 0 0 "
                               "10 0\n";
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_table_parse(&t, tcp, sizeof tcp - 1, AF_INET), 0);
    assert_int_equal(port_table_parse(&t, tcp6, sizeof tcp6 - 1, AF_INET6), 0);
    assert_int_equal(t.n, 2);
    assert_entry(&t.v[0], AF_INET, "127.0.0.1", 8080, 637);
    assert_entry(&t.v[1], AF_INET6, "::1", 3000, 91);
    port_table_free(&t);
}
#endif

static void
test_ipv6_wildcard_loopback_and_v4_mapped(void **state)
{
    (void)state;
    buf_t b = BUF_INIT;
    buf_puts(&b, HEADER6);
    put_line(&b, 0, AF_INET6, "::", 8080, "::", 0, ST_LISTEN, 100);
    put_line(&b, 1, AF_INET6, "::1", 3000, "::", 0, ST_LISTEN, 101);
    put_line(&b, 2, AF_INET6, "::ffff:127.0.0.1", 9000, "::", 0, ST_LISTEN, 102);
    put_line(&b, 3, AF_INET6, "fd00::1:2", 443, "::", 0, ST_LISTEN, 103);
    put_line(&b, 4, AF_INET6, "::1", 3000, "::1", 40000, ST_ESTABLISHED, 104);
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_table_parse(&t, b.data, b.len, AF_INET6), 0);
    assert_int_equal(t.n, 4);
    assert_entry(&t.v[0], AF_INET6, "::", 8080, 100);
    assert_entry(&t.v[1], AF_INET6, "::1", 3000, 101);
    assert_entry(&t.v[2], AF_INET6, "::ffff:127.0.0.1", 9000, 102);
    assert_entry(&t.v[3], AF_INET6, "fd00::1:2", 443, 103);
    assert_true(port_sock_is_wildcard(&t.v[0]));
    assert_false(port_sock_is_wildcard(&t.v[2]));
    port_table_free(&t);
    buf_free(&b);
}

static void
test_malformed_lines_are_skipped_and_counted(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "   1: 0100007F:1F9 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   1: 0100007G:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   1: 0100007F-1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0",
        "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7x 1",
        "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 "
        "18446744073709551616 1",
        "   1: 0100007F:1F90 00000000:0000 A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   1: 0100007F:1F90 00000000:0000 0Z 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   1 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   x: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        "   1: 0100007F:1F90 00000000 0A 00000000:00000000 00:00000000 00000000 0 0 7 1",
        /* an IPv6 line given to the IPv4 parser */
        "   1: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A "
        "00000000:00000000 00:00000000 00000000 0 0 7 1",
        ":",
        "garbage",
    };
    buf_t b = BUF_INIT;
    buf_puts(&b, HEADER4);
    put_line(&b, 0, AF_INET, "0.0.0.0", 80, "0.0.0.0", 0, ST_LISTEN, 1);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        buf_printf(&b, "%s\n", bad[i]);
    buf_puts(&b, "\n   \t \n"); /* blank lines are no sockets, nor errors */
    put_line(&b, 1, AF_INET, "0.0.0.0", 81, "0.0.0.0", 0, ST_LISTEN, 2);
    b.len--; /* the last line without its newline still counts */
    port_table_t t = PORT_TABLE_INIT;
    assert_int_equal(port_table_parse(&t, b.data, b.len, AF_INET), sizeof bad / sizeof bad[0]);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.v[0].port, 80);
    assert_int_equal(t.v[1].port, 81);
    port_table_free(&t);

    /* a line cut anywhere is one bad line, never a read past the text */
    buf_t one = BUF_INIT;
    put_line(&one, 0, AF_INET, "127.0.0.1", 8000, "0.0.0.0", 0, ST_LISTEN, 12345);
    size_t inode_end = (size_t)(strstr(one.data, "12345") - one.data) + 5;
    for (size_t cut = strspn(one.data, " ") + 1; cut < inode_end; cut++) {
        size_t skipped = port_table_parse(&t, one.data, cut, AF_INET);
        assert_int_equal(skipped + t.n, 1);
        port_table_free(&t);
    }
    assert_int_equal(port_table_parse(&t, one.data, 0, AF_INET), 0);
    assert_int_equal(t.n, 0);
    assert_int_equal(port_table_parse(&t, one.data, one.len, AF_UNIX), 0); /* no such file */
    assert_int_equal(t.n, 0);
    buf_free(&one);
    buf_free(&b);
}

static void
test_sorted_by_port_with_one_entry_per_listener(void **state)
{
    (void)state;
    buf_t v4 = BUF_INIT, v6 = BUF_INIT;
    put_line(&v4, 0, AF_INET, "0.0.0.0", 9000, "0.0.0.0", 0, ST_LISTEN, 30);
    put_line(&v4, 1, AF_INET, "0.0.0.0", 9000, "0.0.0.0", 0, ST_LISTEN, 31); /* SO_REUSEPORT */
    put_line(&v4, 2, AF_INET, "127.0.0.1", 22, "0.0.0.0", 0, ST_LISTEN, 32);
    put_line(&v4, 3, AF_INET, "0.0.0.0", 22, "0.0.0.0", 0, ST_LISTEN, 33);
    put_line(&v6, 0, AF_INET6, "::", 22, "::", 0, ST_LISTEN, 34);
    put_line(&v6, 1, AF_INET6, "::", 9000, "::", 0, ST_LISTEN, 35);
    port_table_t t = PORT_TABLE_INIT;
    port_table_parse(&t, v6.data, v6.len, AF_INET6);
    port_table_parse(&t, v4.data, v4.len, AF_INET);
    port_table_sort(&t);
    assert_int_equal(t.n, 5);
    assert_entry(&t.v[0], AF_INET, "0.0.0.0", 22, 33);
    assert_entry(&t.v[1], AF_INET, "127.0.0.1", 22, 32);
    assert_entry(&t.v[2], AF_INET6, "::", 22, 34);
    assert_entry(&t.v[3], AF_INET, "0.0.0.0", 9000, 30); /* the lower inode, at every scan */
    assert_entry(&t.v[4], AF_INET6, "::", 9000, 35);
    assert_true(port_sock_cmp(&t.v[0], &t.v[1]) < 0);
    assert_int_equal(port_sock_cmp(&t.v[4], &t.v[4]), 0);
    port_table_free(&t);
    port_table_sort(&t); /* an empty table */
    assert_int_equal(t.n, 0);
    buf_free(&v4);
    buf_free(&v6);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipv4_listeners_are_read_and_other_states_passed_over),
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        cmocka_unit_test(test_lines_of_a_real_x86_kernel),
#endif
        cmocka_unit_test(test_ipv6_wildcard_loopback_and_v4_mapped),
        cmocka_unit_test(test_malformed_lines_are_skipped_and_counted),
        cmocka_unit_test(test_sorted_by_port_with_one_entry_per_listener),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
