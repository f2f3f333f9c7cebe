/* test_redis_addr.c — common/redis_addr: the --redis address (unix:, host:port, sentinel://
 * with names, IPv4, [IPv6] and default ports) and the checks of a sentinel's answer (a hostile
 * sentinel: empty, huge, non-numeric or out-of-range ports, odd host bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "redis_addr.h"

static void
test_unix_and_tcp_addresses(void **state)
{
    (void)state;
    redis_addr_t a;
    err_t err = {0};
    assert_int_equal(redis_addr_parse("unix:/run/redis.sock", &a, &err), 0);
    assert_int_equal(a.kind, REDIS_ADDR_UNIX);
    assert_string_equal(a.path, "/run/redis.sock");
    assert_int_equal(redis_addr_parse("redis-1:6380", &a, &err), 0);
    assert_int_equal(a.kind, REDIS_ADDR_TCP);
    assert_string_equal(a.tcp.host, "redis-1");
    assert_int_equal(a.tcp.port, 6380);
    assert_int_equal(redis_addr_parse("127.0.0.1", &a, &err), 0);
    assert_int_equal(a.tcp.port, 6379);
    assert_int_equal(redis_addr_parse("[::1]:7000", &a, &err), 0);
    assert_string_equal(a.tcp.host, "::1");
    assert_int_equal(a.tcp.port, 7000);
}

static void
test_sentinel_address_with_names_and_default_port(void **state)
{
    (void)state;
    redis_addr_t a;
    err_t err = {0};
    assert_int_equal(redis_addr_parse("sentinel://redis-sentinel-1:26379,10.0.0.2:26380,"
                                      "[fd00::3],redis-sentinel-4/sandpipe",
                                      &a, &err),
                     0);
    assert_int_equal(a.kind, REDIS_ADDR_SENTINEL);
    assert_int_equal(a.nsentinels, 4);
    assert_string_equal(a.sentinels[0].host, "redis-sentinel-1");
    assert_int_equal(a.sentinels[0].port, 26379);
    assert_string_equal(a.sentinels[1].host, "10.0.0.2");
    assert_int_equal(a.sentinels[1].port, 26380);
    assert_string_equal(a.sentinels[2].host, "fd00::3");
    assert_int_equal(a.sentinels[2].port, REDIS_SENTINEL_PORT);
    assert_int_equal(a.sentinels[3].port, REDIS_SENTINEL_PORT);
    assert_string_equal(a.master, "sandpipe");
    char buf[300];
    assert_string_equal(redis_endpoint_str(&a.sentinels[2], buf, sizeof buf), "[fd00::3]:26379");
}

static void
test_bad_addresses_are_refused_with_why(void **state)
{
    (void)state;
    static const char *bad[] = {
        "unix:",
        "",
        "host:",
        "host:0",
        "host:65536",
        "host:12ab",
        "host:-1",
        ":6379",
        "a b:6379",
        "sentinel://",
        "sentinel://h:1",
        "sentinel://h:1/",
        "sentinel:///name",
        "sentinel://h:1,/name",
        "sentinel://h:1,,h:2/name",
        "sentinel://h:99999/name",
        "sentinel://h:1/na/me",
        "sentinel://h:1/na me",
        "sentinel://[::1/name",
        "sentinel://[::1]x/name",
        "sentinel://h:1,h:2,h:3,h:4,h:5,h:6,h:7,h:8,h:9,h:10,h:11,h:12,h:13,h:14,h:15,h:16,"
        "h:17/name",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        redis_addr_t a;
        err_t err = {0};
        if (redis_addr_parse(bad[i], &a, &err) == 0)
            fail_msg("accepted \"%s\"", bad[i]);
        assert_true(strstr(err.msg, "--redis") != NULL);
        assert_int_equal(a.nsentinels, 0);
    }
    char huge[400];
    memset(huge, 'a', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    redis_addr_t a;
    assert_true(redis_addr_parse(huge, &a, NULL) < 0);
}

static void
test_a_sentinels_answer_is_checked(void **state)
{
    (void)state;
    redis_endpoint_t e;
    err_t err = {0};
    assert_int_equal(redis_endpoint_from_reply("127.0.0.1", 9, "6380", 4, &e, &err), 0);
    assert_string_equal(e.host, "127.0.0.1");
    assert_int_equal(e.port, 6380);
    assert_int_equal(redis_endpoint_from_reply("::1", 3, "6380", 4, &e, &err), 0);
    assert_int_equal(redis_endpoint_from_reply("redis-2.swarm", 13, "1", 1, &e, &err), 0);
    /* hostile: empty, huge, bytes no host has, ports not numbers or out of range */
    assert_true(redis_endpoint_from_reply("", 0, "6379", 4, &e, &err) < 0);
    char huge[300];
    memset(huge, 'h', sizeof huge);
    assert_true(redis_endpoint_from_reply(huge, sizeof huge, "6379", 4, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("a\0b", 3, "6379", 4, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("a/b", 3, "6379", 4, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("h", 1, "", 0, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("h", 1, "0", 1, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("h", 1, "65536", 5, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("h", 1, "99999999999999999999", 20, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("h", 1, "63 79", 5, &e, &err) < 0);
    assert_true(redis_endpoint_from_reply("h", 1, "-1", 2, &e, &err) < 0);
    assert_true(strstr(err.msg, "port") != NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unix_and_tcp_addresses),
        cmocka_unit_test(test_sentinel_address_with_names_and_default_port),
        cmocka_unit_test(test_bad_addresses_are_refused_with_why),
        cmocka_unit_test(test_a_sentinels_answer_is_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
