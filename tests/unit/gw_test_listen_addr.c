/* gw_test_listen_addr.c — the gateway's --listen (gateway/listen_addr.c): what it parses to, the
 * lws options that bind exactly that address, and the check of a real listening socket against
 * what was asked (an IPv4 address, an IPv6 one with and without IPV6_V6ONLY). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/listen_addr.h"

static void
parses(const char *arg, int family, const char *addr, int port)
{
    listen_addr_t a;
    err_t err = {0};
    assert_int_equal(listen_addr_parse(arg, &a, &err), 0);
    assert_int_equal(a.family, family);
    assert_string_equal(a.addr, addr);
    assert_int_equal(a.port, port);
}

static void
refused(const char *arg, const char *why)
{
    listen_addr_t a;
    err_t err = {0};
    assert_int_equal(listen_addr_parse(arg, &a, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, why));
}

static void
test_addresses_and_names_parse_to_one_numeric_address(void **state)
{
    (void)state;
    parses("127.0.0.1:8081", AF_INET, "127.0.0.1", 8081);
    parses("0.0.0.0:1", AF_INET, "0.0.0.0", 1);
    parses("[::1]:65535", AF_INET6, "::1", 65535);
    parses("[::]:8081", AF_INET6, "::", 8081);
    parses("::1:8081", AF_INET6, "::1", 8081); /* bare: the last ':' starts the port */
    parses("[2001:DB8::0:1]:80", AF_INET6, "2001:db8::1", 80);
    listen_addr_t a;
    err_t err = {0};
    assert_int_equal(listen_addr_parse("localhost:8081", &a, &err), 0); /* /etc/hosts */
    assert_true(!strcmp(a.addr, "127.0.0.1") || !strcmp(a.addr, "::1"));
}

static void
test_what_names_no_single_address_is_refused(void **state)
{
    (void)state;
    refused("127.0.0.1", "HOST:PORT");
    refused(":8081", "names no host");
    refused("127.0.0.1:", "port");
    refused("127.0.0.1:0", "port");
    refused("127.0.0.1:65536", "port");
    refused("127.0.0.1:80x", "port");
    refused("[::1:8081", "brackets");
    refused("[]:8081", "brackets");
    refused("[127.0.0.1]:8081", "does not resolve"); /* brackets hold an IPv6 address */
    refused("no-such-host.invalid:8081", "does not resolve");
}

static void
test_ipv4_turns_ipv6_off_and_ipv6_is_ipv6_only(void **state)
{
    (void)state;
    listen_addr_t v4 = {.family = AF_INET}, v6 = {.family = AF_INET6};
    uint64_t o4 = listen_addr_lws_options(&v4), o6 = listen_addr_lws_options(&v6);
    assert_true(o4 & LWS_SERVER_OPTION_DISABLE_IPV6);
    assert_true((o6 & LWS_SERVER_OPTION_IPV6_V6ONLY_MODIFY) ==
                LWS_SERVER_OPTION_IPV6_V6ONLY_MODIFY);
    assert_true((o6 & LWS_SERVER_OPTION_IPV6_V6ONLY_VALUE) == LWS_SERVER_OPTION_IPV6_V6ONLY_VALUE);
    assert_false(o6 & LWS_SERVER_OPTION_DISABLE_IPV6);
    assert_true((o4 & o6 & LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND) ==
                LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND);
}

/* A listening socket of family on addr (port 0: the kernel's choice), its port in *port. */
static int
listener(int family, const char *addr, int v6only, int *port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (family == AF_INET6) {
        assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only), 0);
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, addr, &s6->sin6_addr), 1);
        len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
        len = sizeof *s4;
    }
    assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
    assert_int_equal(listen(fd, 1), 0);
    len = sizeof ss;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    *port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                     : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

static int
verify(int family, const char *addr, int port, char *bound, err_t *err)
{
    listen_addr_t a = {.family = family, .port = port};
    snprintf(a.addr, sizeof a.addr, "%s", addr);
    return listen_addr_verify(&a, bound, 96, err);
}

static void
test_the_bound_socket_is_checked_against_what_was_asked(void **state)
{
    (void)state;
    char bound[96];
    err_t err = {0};
    int port, fd = listener(AF_INET, "127.0.0.1", 0, &port);
    assert_int_equal(verify(AF_INET, "127.0.0.1", port, bound, &err), 0);
    char want[32];
    snprintf(want, sizeof want, "127.0.0.1:%d", port);
    assert_string_equal(bound, want);
    assert_int_equal(verify(AF_INET, "0.0.0.0", port, bound, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "bound 127.0.0.1:"));
    assert_int_equal(verify(AF_INET6, "::1", port, bound, &err), -ERR_BAD_REQ);
    close(fd);
    assert_int_equal(verify(AF_INET, "127.0.0.1", port, bound, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "nothing listens"));

    /* what lws 4.1.6 made of 127.0.0.1: every address of both families */
    fd = listener(AF_INET6, "::", 0, &port);
    assert_int_equal(verify(AF_INET, "127.0.0.1", port, bound, &err), -ERR_BAD_REQ);
    assert_int_equal(verify(AF_INET6, "::", port, bound, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "(and IPv4)"));
    close(fd);
    fd = listener(AF_INET6, "::", 1, &port);
    assert_int_equal(verify(AF_INET6, "::", port, bound, &err), 0);
    close(fd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addresses_and_names_parse_to_one_numeric_address),
        cmocka_unit_test(test_what_names_no_single_address_is_refused),
        cmocka_unit_test(test_ipv4_turns_ipv6_off_and_ipv6_is_ipv6_only),
        cmocka_unit_test(test_the_bound_socket_is_checked_against_what_was_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
