/* gw_test_session_stats.c — gateway/session_stats.c's sample (session.stats, E2B's getMetrics)
 * from what a sandbox's cgroup and its executor say: which reading wins where both exist, the
 * page cache kept out of the memory used, the limits (else the host's figures) as totals, and
 * the CPU percentage over the window since the session's previous sample (too short a window
 * keeps the older start; less CPU time than before falls back to the sandbox's life). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gateway/session_stats.h"
#include "json_util.h"

#define MiB (1LL << 20)

static json_object *
parse(const char *json)
{
    json_object *o = json_tokener_parse(json);
    assert_non_null(o);
    return o;
}

static void
test_the_cgroup_wins_and_the_page_cache_is_not_used_memory(void **state)
{
    (void)state;
    json_object *usage = parse("{\"memory_bytes\":104857600,\"memory_cache_bytes\":31457280,"
                               "\"cpu_usage_usec\":2000000,\"disk_used_bytes\":4096,"
                               "\"disk_size_bytes\":1073741824}");
    json_object *health =
        parse("{\"uptime\":100,\"cpu\":{\"seconds\":0.5},\"memory\":{\"rss_bytes\":"
              "5242880,\"total_bytes\":8589934592},\"disk\":{\"used_bytes\":1,"
              "\"total_bytes\":2}}");
    stats_in_t in = {.usage = usage,
                     .health = health,
                     .memory_limit = 512 * MiB,
                     .cpu_millicores = 1500,
                     .host_cpus = 8,
                     .host_memory = 16384 * MiB,
                     .now = 1000.0,
                     .started = 900.0,
                     .prev_cpu_s = 1.0,
                     .prev_at = 999.0};
    double cpu_s;
    bool keep;
    json_object *o = session_stats_compose(&in, &cpu_s, &keep);
    assert_int_equal(json_get_int(o, "memory_used_bytes", -1), 70 * MiB);
    assert_int_equal(json_get_int(o, "memory_cache_bytes", -1), 30 * MiB);
    assert_int_equal(json_get_int(o, "memory_total_bytes", -1), 512 * MiB); /* the limit */
    assert_int_equal(json_get_int(o, "cpu_count", -1), 2); /* 1.5 cores: 2 to run on */
    /* 1 CPU second in the last wall second, of 2 cores */
    assert_true(json_get_double(o, "cpu_used_pct", -1) == 50.0);
    assert_true(cpu_s == 2.0 && keep);
    assert_int_equal(json_get_int(o, "disk_used_bytes", -1), 4096); /* its own disk */
    assert_int_equal(json_get_int(o, "disk_total_bytes", -1), 1024 * MiB);
    assert_true(json_get_double(o, "at", 0) == 1000.0);
    json_object_put(o);
    json_object_put(usage);
    json_object_put(health);
}

static void
test_without_a_cgroup_the_executor_says_and_the_host_is_the_total(void **state)
{
    (void)state;
    json_object *health = parse("{\"uptime\":10,\"cpu\":{\"seconds\":4},\"memory\":{\"rss_bytes\":"
                                "5242880,\"total_bytes\":1073741824},\"disk\":{\"used_bytes\":100,"
                                "\"total_bytes\":1000}}");
    stats_in_t in = {
        .health = health, .host_cpus = 4, .host_memory = 16384 * MiB, .now = 50.0, .started = 40.0};
    double cpu_s;
    bool keep;
    json_object *o = session_stats_compose(&in, &cpu_s, &keep);
    assert_int_equal(json_get_int(o, "memory_used_bytes", -1), 5 * MiB);
    assert_int_equal(json_get_int(o, "memory_cache_bytes", -1), 0);
    assert_int_equal(json_get_int(o, "memory_total_bytes", -1), 1024 * MiB);
    assert_int_equal(json_get_int(o, "cpu_count", -1), 4);
    assert_true(json_get_double(o, "cpu_used_pct", -1) == 10.0); /* 4 s over 10 s of 4 cores */
    assert_int_equal(json_get_int(o, "disk_used_bytes", -1), 100);
    assert_int_equal(json_get_int(o, "disk_total_bytes", -1), 1000);
    json_object_put(o);
    /* nothing at all (a paused sandbox without a cgroup): zeros, the host's memory */
    in.health = NULL;
    o = session_stats_compose(&in, &cpu_s, &keep);
    assert_int_equal(json_get_int(o, "memory_used_bytes", -1), 0);
    assert_int_equal(json_get_int(o, "memory_total_bytes", -1), 16384 * MiB);
    assert_true(json_get_double(o, "cpu_used_pct", -1) == 0.0);
    json_object_put(o);
    json_object_put(health);
}

static void
test_the_cpu_window(void **state)
{
    (void)state;
    json_object *usage = parse("{\"cpu_usage_usec\":6000000}");
    stats_in_t in = {.usage = usage,
                     .host_cpus = 2,
                     .now = 100.0,
                     .started = 70.0,
                     .prev_cpu_s = 5.9,
                     .prev_at = 99.95};
    double cpu_s;
    bool keep;
    /* 50 ms since the last sample: too short to say; over the sandbox's life, the older kept */
    json_object *o = session_stats_compose(&in, &cpu_s, &keep);
    assert_false(keep);
    assert_true(json_get_double(o, "cpu_used_pct", -1) == 10.0); /* 6 s / 30 s / 2 cores */
    json_object_put(o);
    /* less CPU time than the last sample (no cgroup: processes ended): over its life */
    in.prev_cpu_s = 7.0;
    in.prev_at = 90.0;
    o = session_stats_compose(&in, &cpu_s, &keep);
    assert_true(keep);
    assert_true(json_get_double(o, "cpu_used_pct", -1) == 10.0);
    json_object_put(o);
    /* more than the cores can give (clocks apart): at most 100 */
    in.prev_cpu_s = 0.0;
    in.prev_at = 99.0;
    o = session_stats_compose(&in, &cpu_s, &keep);
    assert_true(json_get_double(o, "cpu_used_pct", -1) == 100.0);
    json_object_put(o);
    json_object_put(usage);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_cgroup_wins_and_the_page_cache_is_not_used_memory),
        cmocka_unit_test(test_without_a_cgroup_the_executor_says_and_the_host_is_the_total),
        cmocka_unit_test(test_the_cpu_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
