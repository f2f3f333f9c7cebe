/* gw_test_session_status.c — gateway/session_status: the status texts (the same on the wire and
 * in Redis), parsing what Redis holds, which changes of status are allowed, and what a real
 * session does with them: status events with the text, refused changes leaving no trace, the
 * pause and resume guards with their messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gateway/session_status.h"
#include "gw_session_fixture.h"

static const struct {
    session_status_t st;
    const char *text;
} texts[] = {
    {SESSION_NEW, ""},
    {SESSION_STARTING, "STARTING_RUNTIME"},
    {SESSION_STARTED, "RUNTIME_STARTED"},
    {SESSION_READY, "READY"},
    {SESSION_PAUSED, "PAUSED"},
    {SESSION_ERROR, "ERROR"},
    {SESSION_DISCONNECTED, "ERROR_RUNTIME_DISCONNECTED"},
    {SESSION_STOPPED, "STOPPED"},
};

static void
test_each_status_has_its_openhands_text(void **state)
{
    (void)state;
    assert_int_equal(sizeof texts / sizeof texts[0], SESSION_STATUS_COUNT);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        assert_string_equal(session_status_text(texts[i].st), texts[i].text);
    assert_string_equal(session_status_text((session_status_t)SESSION_STATUS_COUNT), "");
    assert_string_equal(session_status_text((session_status_t)-1), "");
}

static void
test_parse_reads_back_every_text_and_nothing_else(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        assert_int_equal(session_status_parse(texts[i].text), texts[i].st);
    /* never written by this gateway: read as a session not started */
    assert_int_equal(session_status_parse("BUILDING_RUNTIME"), SESSION_NEW);
    assert_int_equal(session_status_parse("ready"), SESSION_NEW);
    assert_int_equal(session_status_parse("READY "), SESSION_NEW);
    assert_int_equal(session_status_parse(NULL), SESSION_NEW);
}

/* Every change the gateway makes, and only those (session_status.h draws them). */
static const struct {
    session_status_t from, to;
} allowed[] = {
    {SESSION_NEW, SESSION_STARTING},
    {SESSION_STARTING, SESSION_STARTED},
    {SESSION_STARTED, SESSION_READY},
    {SESSION_READY, SESSION_PAUSED},
    {SESSION_PAUSED, SESSION_READY},
    {SESSION_PAUSED, SESSION_STARTED},
    {SESSION_STARTING, SESSION_ERROR},
    {SESSION_STARTED, SESSION_ERROR},
    {SESSION_NEW, SESSION_READY},
    {SESSION_ERROR, SESSION_READY},
    {SESSION_DISCONNECTED, SESSION_READY},
    {SESSION_NEW, SESSION_DISCONNECTED},
    {SESSION_STARTING, SESSION_DISCONNECTED},
    {SESSION_STARTED, SESSION_DISCONNECTED},
    {SESSION_READY, SESSION_DISCONNECTED},
    {SESSION_PAUSED, SESSION_DISCONNECTED},
    {SESSION_ERROR, SESSION_DISCONNECTED},
    {SESSION_NEW, SESSION_STOPPED},
    {SESSION_STARTING, SESSION_STOPPED},
    {SESSION_STARTED, SESSION_STOPPED},
    {SESSION_READY, SESSION_STOPPED},
    {SESSION_PAUSED, SESSION_STOPPED},
    {SESSION_ERROR, SESSION_STOPPED},
    {SESSION_DISCONNECTED, SESSION_STOPPED},
};

static void
test_only_the_drawn_transitions_are_allowed(void **state)
{
    (void)state;
    for (int from = 0; from < SESSION_STATUS_COUNT; from++)
        for (int to = 0; to < SESSION_STATUS_COUNT; to++) {
            bool want = false;
            for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
                want = want || (allowed[i].from == (session_status_t)from &&
                                allowed[i].to == (session_status_t)to);
            if (session_status_may_become((session_status_t)from, (session_status_t)to) != want)
                fail_msg("%s -> %s: %s expected", session_status_text((session_status_t)from),
                         session_status_text((session_status_t)to), want ? "allowed" : "refused");
        }
    assert_false(session_status_may_become((session_status_t)SESSION_STATUS_COUNT, SESSION_READY));
}

static void
test_stopped_is_final_and_new_is_never_entered_again(void **state)
{
    (void)state;
    for (int st = 0; st < SESSION_STATUS_COUNT; st++) {
        assert_false(session_status_may_become(SESSION_STOPPED, (session_status_t)st));
        assert_false(session_status_may_become((session_status_t)st, SESSION_NEW));
    }
}

static void
test_actions_are_taken_while_starting_and_ready_only(void **state)
{
    (void)state;
    for (int st = 0; st < SESSION_STATUS_COUNT; st++) {
        bool want = st == SESSION_STARTING || st == SESSION_STARTED || st == SESSION_READY;
        assert_int_equal(session_status_takes_actions((session_status_t)st), want);
    }
}

/* ---- a real session ---- */

static void
test_a_session_records_each_change_as_a_status_event(void **state)
{
    (void)state;
    fixture_gateway_init();
    gw_session_t *s = fixture_session("s-status1", "alice");
    assert_int_equal(s->status, SESSION_NEW);
    session_set_status(s, SESSION_STARTING, NULL);
    assert_non_null(
        strstr(fixture_last_event(s), "\"type\":\"status\",\"status\":\"STARTING_RUNTIME\""));
    session_set_status(s, SESSION_STARTED, NULL);
    session_set_status(s, SESSION_READY, "up");
    assert_non_null(strstr(fixture_last_event(s), "\"status\":\"READY\",\"message\":\"up\""));
    json_object *d = session_describe(s);
    assert_string_equal(json_object_get_string(json_object_object_get(d, "status")), "READY");
    json_object_put(d);
    assert_int_equal(event_log_next_seq(session_log(s)), 4);
    session_delete(s, "done");
    fixture_drain();
}

static void
test_a_refused_or_repeated_change_leaves_no_event(void **state)
{
    (void)state;
    fixture_gateway_init();
    gw_session_t *s = fixture_session("s-status2", "alice");
    session_set_status(s, SESSION_STARTING, NULL);
    uint64_t next = event_log_next_seq(session_log(s));
    session_set_status(s, SESSION_STARTING, NULL); /* no change */
    session_set_status(s, SESSION_READY, NULL);    /* READY comes after RUNTIME_STARTED */
    session_set_status(s, SESSION_PAUSED, NULL);   /* only a READY session pauses */
    assert_int_equal(s->status, SESSION_STARTING);
    assert_int_equal(event_log_next_seq(session_log(s)), next);
    session_delete(s, "done");
    fixture_drain();
}

static void
test_pause_and_resume_refuse_with_the_status_text(void **state)
{
    (void)state;
    fixture_gateway_init();
    gw_session_t *s = fixture_session("s-status3", "alice");
    session_set_status(s, SESSION_STARTING, NULL);
    err_t err = {0};
    assert_true(session_pause(s, "test", &err) < 0);
    assert_int_equal(err.code, ERR_BUSY);
    assert_string_equal(err.msg, "the session is STARTING_RUNTIME: only a READY session can pause");
    assert_true(session_resume(s, NULL, NULL, &err) < 0);
    assert_string_equal(err.msg, "the session is STARTING_RUNTIME, not PAUSED");
    session_set_status(s, SESSION_STARTED, NULL);
    session_set_status(s, SESSION_READY, NULL);
    assert_int_equal(session_resume(s, NULL, NULL, &err), 0); /* READY: nothing to do */
    assert_true(session_pause(s, "test", &err) < 0);          /* no provider to freeze it */
    assert_int_equal(err.code, ENOTSUP);
    assert_int_equal(s->status, SESSION_READY);
    session_delete(s, "done");
    fixture_drain();
}

static gw_session_t *watched;
static char last_words[512];

static void
sub_wake(gw_sub_t *sub)
{
    (void)sub;
}

/* The session is going away: its last event is still readable. */
static void
sub_gone(gw_sub_t *sub)
{
    (void)sub;
    snprintf(last_words, sizeof last_words, "%s", fixture_last_event(watched));
}

static void
test_a_deleted_session_says_stopped_last(void **state)
{
    (void)state;
    fixture_gateway_init();
    gw_session_t *s = fixture_session("s-status4", "alice");
    session_set_status(s, SESSION_STARTING, NULL);
    gw_sub_t sub = {.wake = sub_wake, .gone = sub_gone};
    session_subscribe(s, &sub);
    watched = s;
    last_words[0] = '\0';
    session_delete(s, "deleted by test");
    assert_null(session_find("s-status4"));
    assert_non_null(strstr(
        last_words, "\"type\":\"status\",\"status\":\"STOPPED\",\"message\":\"deleted by test\""));
    fixture_drain();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_status_has_its_openhands_text),
        cmocka_unit_test(test_parse_reads_back_every_text_and_nothing_else),
        cmocka_unit_test(test_only_the_drawn_transitions_are_allowed),
        cmocka_unit_test(test_stopped_is_final_and_new_is_never_entered_again),
        cmocka_unit_test(test_actions_are_taken_while_starting_and_ready_only),
        cmocka_unit_test(test_a_session_records_each_change_as_a_status_event),
        cmocka_unit_test(test_a_refused_or_repeated_change_leaves_no_event),
        cmocka_unit_test(test_pause_and_resume_refuse_with_the_status_text),
        cmocka_unit_test(test_a_deleted_session_says_stopped_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
