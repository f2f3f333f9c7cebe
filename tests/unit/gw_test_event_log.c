/* gw_test_event_log.c — gateway/event_log against a real redis-server (started here on a unix
 * socket in a temporary directory, as tests/integration/stack.py does) through the gateway's
 * own Redis client on a uv loop: numbering, store then publish (event_log_get sees an event
 * only once Redis confirmed it, event_log_peek at once), the acknowledged sequence number, the
 * unconfirmed bound (full), the ring's bound, reading back from Redis with gaps reported as
 * "truncated" events, events Redis already had, and everything unconfirmed sent again once a
 * restarted Redis answers. The loop runs until a condition holds (bounded): nothing is timed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gateway/event_log.h"
#include "gateway/gw.h"
#include "gateway/redis_client.h"
#include "json_util.h"

static char dir[64], sock[128];
static pid_t redis_pid;
static uv_timer_t tick; /* wakes the loop so a wait re-checks its condition */

/* ---- the Redis server ---- */

static redisContext *
connect_sync(void)
{
    redisContext *c = redisConnectUnix(sock);
    if (c && c->err) {
        redisFree(c);
        c = NULL;
    }
    return c;
}

static bool
redis_answers(void)
{
    redisContext *c = connect_sync();
    if (!c)
        return false;
    redisReply *r = redisCommand(c, "PING");
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    redisFree(c);
    return ok;
}

static void
start_redis(void)
{
    redis_pid = fork();
    assert_true(redis_pid >= 0);
    if (redis_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* gone with the test, however it ends */
        /* its log (stdout) in its directory: the test's output stays the test's */
        char log[160];
        snprintf(log, sizeof log, "%s/redis.log", dir);
        if (!freopen(log, "a", stdout))
            _exit(127);
        execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", sock, "--dir", dir,
               "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 1000 && !redis_answers(); i++)
        usleep(10000);
    if (!redis_answers())
        fail_msg("redis-server did not start on %s (scripts/install-deps.sh installs it)", sock);
}

static void
stop_redis(void)
{
    if (redis_pid <= 0)
        return;
    kill(redis_pid, SIGTERM);
    waitpid(redis_pid, NULL, 0);
    redis_pid = 0;
    unlink(sock);
    char log[160];
    snprintf(log, sizeof log, "%s/redis.log", dir);
    unlink(log);
}

/* A command on a connection of the test's own. */
static redisReply *
cmd(const char *fmt, ...)
{
    redisContext *c = connect_sync();
    assert_non_null(c);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    redisFree(c);
    assert_non_null(r);
    return r;
}

/* ---- the loop ---- */

static void
on_tick(uv_timer_t *t)
{
    (void)t;
}

/* Runs the loop until cond(arg) holds; at most a few thousand turns (each at most one tick). */
static bool
run_until(bool (*cond)(const void *), const void *arg)
{
    for (int i = 0; i < 5000 && !cond(arg); i++)
        uv_run(g_gw.loop, UV_RUN_ONCE);
    return cond(arg);
}

static bool
connected(const void *arg)
{
    (void)arg;
    return redis_client_connected();
}

static bool
disconnected(const void *arg)
{
    (void)arg;
    return !redis_client_connected();
}

static bool
all_acked(const void *arg)
{
    const event_log_t *l = arg;
    return event_log_acked_seq(l) + 1 == event_log_next_seq(l);
}

static int
setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sp-evlog-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(sock, sizeof sock, "%s/redis.sock", dir);
    start_redis();
    memset(&g_gw, 0, sizeof g_gw);
    g_gw.loop = uv_default_loop();
    uv_timer_init(g_gw.loop, &tick);
    uv_timer_start(&tick, on_tick, 10, 10);
    char addr[160];
    snprintf(addr, sizeof addr, "unix:%s", sock);
    redis_client_start(addr, NULL);
    return run_until(connected, NULL) ? 0 : -1;
}

static int
teardown(void **state)
{
    (void)state;
    g_gw.stopping = true;
    redis_client_stop();
    uv_close((uv_handle_t *)&tick, NULL);
    uv_run(g_gw.loop, UV_RUN_DEFAULT);
    stop_redis();
    rmdir(dir);
    return 0;
}

/* ---- helpers ---- */

typedef struct {
    uint64_t last;
    int calls;
} stored_t;

static void
on_stored(void *ud, uint64_t seq)
{
    stored_t *st = ud;
    assert_true(seq > st->last);
    st->last = seq;
    st->calls++;
}

static uint64_t
append_n(event_log_t *l, int n)
{
    uint64_t seq = 0;
    for (int i = 0; i < n; i++) {
        json_object *e = json_object_new_object();
        json_set_str(e, "type", "test");
        json_set_int(e, "i", i);
        seq = event_log_append(l, e);
    }
    return seq;
}

/* ---- tests ---- */

static void
test_events_are_numbered_and_visible_once_stored(void **state)
{
    (void)state;
    stored_t st = {0};
    event_log_t *l = event_log_new("t-order", 1, 0, 0, on_stored, &st);
    assert_int_equal(append_n(l, 3), 3);
    assert_int_equal(event_log_next_seq(l), 4);
    /* written, not yet confirmed: peek sees it, get does not */
    assert_int_equal(event_log_acked_seq(l), 0);
    assert_null(event_log_get(l, 1));
    const event_log_entry_t *e = event_log_peek(l, 1);
    assert_non_null(e);
    assert_false(e->stored);
    assert_int_equal(strncmp(e->text, "{\"seq\":1,\"ts\":", 14), 0);
    assert_non_null(strstr(e->text, "\"type\":\"test\",\"i\":0}"));
    assert_true(run_until(all_acked, l));
    assert_int_equal(event_log_acked_seq(l), 3);
    assert_int_equal(st.last, 3);
    for (uint64_t s = 1; s <= 3; s++) {
        const event_log_entry_t *g = event_log_get(l, s);
        assert_non_null(g);
        assert_true(g->stored);
        assert_int_equal(g->seq, s);
        assert_ptr_equal(g, event_log_peek(l, s));
    }
    assert_null(event_log_get(l, 4));
    assert_null(event_log_peek(l, 4));
    assert_null(event_log_get(l, 0));
    /* Redis holds each under the id 0-<seq>, as text "e" */
    redisReply *r = cmd("XRANGE sp:session:{t-order}:events - +");
    assert_int_equal(r->elements, 3);
    for (size_t i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "0-%zu", i + 1);
        assert_string_equal(r->element[i]->element[0]->str, id);
        assert_string_equal(r->element[i]->element[1]->element[0]->str, "e");
        assert_string_equal(r->element[i]->element[1]->element[1]->str,
                            event_log_get(l, i + 1)->text);
    }
    freeReplyObject(r);
    event_log_free(l);
}

static void
test_a_restored_log_continues_its_numbers(void **state)
{
    (void)state;
    event_log_t *l = event_log_new("t-restored", 41, 0, 0, NULL, NULL);
    assert_int_equal(event_log_next_seq(l), 41);
    assert_int_equal(event_log_acked_seq(l), 40);
    assert_int_equal(event_log_first_in_memory(l), 41);
    assert_int_equal(append_n(l, 2), 42);
    assert_true(run_until(all_acked, l));
    assert_non_null(event_log_get(l, 41));
    event_log_free(l);
}

static void
test_an_event_redis_already_has_counts_as_stored(void **state)
{
    (void)state;
    /* a gateway died after Redis stored 1 and 2, before it heard so */
    freeReplyObject(cmd("XADD sp:session:{t-again}:events 0-1 e {}"));
    freeReplyObject(cmd("XADD sp:session:{t-again}:events 0-2 e {}"));
    event_log_t *l = event_log_new("t-again", 1, 0, 0, NULL, NULL);
    append_n(l, 3);
    assert_true(run_until(all_acked, l));
    assert_non_null(event_log_get(l, 2));
    redisReply *r = cmd("XLEN sp:session:{t-again}:events");
    assert_int_equal(r->integer, 3);
    freeReplyObject(r);
    event_log_free(l);
}

static void
test_full_at_the_unconfirmed_bound_until_redis_confirms(void **state)
{
    (void)state;
    event_log_t *l = event_log_new("t-full", 1, 0, 0, NULL, NULL);
    /* the loop does not run: nothing is confirmed */
    append_n(l, EVENT_LOG_UNCONFIRMED_MAX - 1);
    assert_false(event_log_full(l));
    append_n(l, 1);
    assert_true(event_log_full(l));
    assert_null(event_log_get(l, 1));
    assert_true(run_until(all_acked, l));
    assert_false(event_log_full(l));
    assert_non_null(event_log_get(l, EVENT_LOG_UNCONFIRMED_MAX));
    event_log_free(l);
}

static void
test_the_ring_keeps_the_newest_events_and_redis_the_rest(void **state)
{
    (void)state;
    event_log_t *l = event_log_new("t-ring", 1, 0, 0, NULL, NULL);
    int total = EVENT_LOG_RING_EVENTS + 100;
    for (int done = 0; done < total; done += 100) {
        append_n(l, total - done < 100 ? total - done : 100);
        assert_true(run_until(all_acked, l));
    }
    uint64_t first = event_log_first_in_memory(l);
    assert_int_equal(first, (uint64_t)total - EVENT_LOG_RING_EVENTS + 1);
    assert_null(event_log_get(l, first - 1));
    assert_null(event_log_peek(l, first - 1));
    assert_non_null(event_log_get(l, first));
    assert_non_null(event_log_get(l, (uint64_t)total));
    redisReply *r = cmd("XLEN sp:session:{t-ring}:events");
    assert_int_equal(r->integer, total);
    freeReplyObject(r);
    event_log_free(l);
}

/* An idle session's log holds a few entries, not the ring's bound: the ring grows with the
 * events, and shrinks to the newest stored ones when asked; unconfirmed events always stay. */
static void
test_the_ring_grows_with_events_and_shrinks_when_idle(void **state)
{
    (void)state;
    event_log_t *l = event_log_new("t-grow", 1, 0, 0, NULL, NULL);
    assert_int_equal(event_log_ring_capacity(l), 0);
    append_n(l, 3);
    assert_int_equal(event_log_ring_capacity(l), EVENT_LOG_RING_MIN);
    append_n(l, 100); /* 103 held: the next power of two */
    assert_int_equal(event_log_ring_capacity(l), 128);
    assert_true(run_until(all_acked, l));
    for (uint64_t s = 1; s <= 103; s++) /* every event kept its place across the growths */
        assert_int_equal(event_log_get(l, s)->seq, s);
    assert_int_equal(event_log_first_in_memory(l), 1);

    event_log_shrink(l, 10);
    assert_int_equal(event_log_ring_capacity(l), EVENT_LOG_RING_MIN);
    assert_int_equal(event_log_first_in_memory(l), 94);
    assert_null(event_log_get(l, 93));
    for (uint64_t s = 94; s <= 103; s++)
        assert_int_equal(event_log_get(l, s)->seq, s);
    redisReply *r = cmd("XLEN sp:session:{t-grow}:events"); /* the rest is in Redis */
    assert_int_equal(r->integer, 103);
    freeReplyObject(r);

    /* not yet confirmed (the loop does not run): shrinking keeps them all */
    append_n(l, 40);
    event_log_shrink(l, 0);
    assert_int_equal(event_log_first_in_memory(l), 104);
    assert_int_equal(event_log_ring_capacity(l), 64);
    assert_non_null(event_log_peek(l, 104));
    assert_true(run_until(all_acked, l));
    assert_int_equal(event_log_get(l, 143)->seq, 143);
    event_log_shrink(l, 0);
    assert_int_equal(event_log_first_in_memory(l), 144);
    assert_int_equal(event_log_ring_capacity(l), EVENT_LOG_RING_MIN);
    assert_int_equal(append_n(l, 1), 144); /* numbering goes on */
    assert_true(run_until(all_acked, l));
    assert_non_null(event_log_get(l, 144));
    event_log_free(l);
}

typedef struct {
    int count;
    uint64_t seq[16];
    char text[16][200];
} fetched_t;

static void
on_fetched(void *ud, const event_log_entry_t *entries, int count)
{
    fetched_t *f = ud;
    f->count = count;
    for (int i = 0; i < count && i < 16; i++) {
        f->seq[i] = entries[i].seq;
        snprintf(f->text[i], sizeof f->text[i], "%.*s", (int)entries[i].len, entries[i].text);
    }
}

static bool
fetch_done(const void *arg)
{
    return ((const fetched_t *)arg)->count != -2;
}

static void
test_fetch_reads_redis_and_reports_what_is_missing(void **state)
{
    (void)state;
    event_log_t *l = event_log_new("t-fetch", 1, 0, 0, NULL, NULL);
    append_n(l, 5);
    assert_true(run_until(all_acked, l));
    /* 1 trimmed from the front, 3 lost in between */
    freeReplyObject(cmd("XDEL sp:session:{t-fetch}:events 0-1 0-3"));
    fetched_t f = {.count = -2};
    event_log_fetch("t-fetch", 1, 10, on_fetched, &f);
    assert_true(run_until(fetch_done, &f));
    assert_int_equal(f.count, 5);
    const uint64_t seqs[] = {1, 2, 3, 4, 5};
    for (int i = 0; i < 5; i++)
        assert_int_equal(f.seq[i], seqs[i]);
    assert_string_equal(f.text[0], "{\"seq\":1,\"type\":\"truncated\",\"from\":1,\"to\":1,"
                                   "\"reason\":\"stream cap reached\"}");
    assert_string_equal(f.text[1], event_log_get(l, 2)->text);
    assert_string_equal(f.text[2], "{\"seq\":3,\"type\":\"truncated\",\"from\":3,\"to\":3,"
                                   "\"reason\":\"events missing from the stream\"}");
    assert_string_equal(f.text[4], event_log_get(l, 5)->text);
    /* past the end: none */
    f.count = -2;
    event_log_fetch("t-fetch", 6, 10, on_fetched, &f);
    assert_true(run_until(fetch_done, &f));
    assert_int_equal(f.count, 0);
    event_log_free(l);
}

static void
test_a_log_freed_with_writes_in_flight_ignores_their_answers(void **state)
{
    (void)state;
    stored_t st = {0};
    event_log_t *l = event_log_new("t-freed", 1, 0, 0, on_stored, &st);
    append_n(l, 10);
    event_log_free(l);
    redisReply *r;
    for (int i = 0; i < 5000; i++) { /* until Redis has them all: the answers have come */
        uv_run(g_gw.loop, UV_RUN_ONCE);
        r = cmd("XLEN sp:session:{t-freed}:events");
        bool done = r->integer == 10;
        freeReplyObject(r);
        if (done)
            break;
    }
    uv_run(g_gw.loop, UV_RUN_NOWAIT);
    assert_int_equal(st.calls, 0);
}

/* Last: restarts Redis (empty: nothing is saved). */
static void
test_unconfirmed_events_go_again_once_redis_is_back(void **state)
{
    (void)state;
    stored_t st = {0};
    event_log_t *l = event_log_new("t-resync", 1, 0, 0, on_stored, &st);
    append_n(l, 2);
    assert_true(run_until(all_acked, l));
    stop_redis();
    assert_true(run_until(disconnected, NULL));
    append_n(l, 3); /* seq 3..5: nowhere to go */
    assert_int_equal(event_log_acked_seq(l), 2);
    assert_null(event_log_get(l, 3));
    assert_non_null(event_log_peek(l, 5));
    start_redis();
    assert_true(run_until(connected, NULL));
    event_log_resync(l); /* as sessions_redis_ready does after every reconnection */
    assert_true(run_until(all_acked, l));
    assert_int_equal(st.last, 5);
    assert_non_null(event_log_get(l, 5));
    /* the new Redis lost 1 and 2 with the old one; 3..5 are there */
    redisReply *r = cmd("XRANGE sp:session:{t-resync}:events - +");
    assert_int_equal(r->elements, 3);
    assert_string_equal(r->element[0]->element[0]->str, "0-3");
    assert_string_equal(r->element[2]->element[0]->str, "0-5");
    freeReplyObject(r);
    event_log_free(l);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_are_numbered_and_visible_once_stored),
        cmocka_unit_test(test_a_restored_log_continues_its_numbers),
        cmocka_unit_test(test_an_event_redis_already_has_counts_as_stored),
        cmocka_unit_test(test_full_at_the_unconfirmed_bound_until_redis_confirms),
        cmocka_unit_test(test_the_ring_keeps_the_newest_events_and_redis_the_rest),
        cmocka_unit_test(test_the_ring_grows_with_events_and_shrinks_when_idle),
        cmocka_unit_test(test_fetch_reads_redis_and_reports_what_is_missing),
        cmocka_unit_test(test_a_log_freed_with_writes_in_flight_ignores_their_answers),
        cmocka_unit_test(test_unconfirmed_events_go_again_once_redis_is_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
