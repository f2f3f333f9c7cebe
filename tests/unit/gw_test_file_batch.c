/* gw_test_file_batch.c — gateway/file_batch: a client's pending file events kept in order, a
 * repeated one once, and past FILE_BATCH_MAX one "many" event naming the deepest directory
 * that holds every change; the directory two paths share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "json_util.h"
#include "gateway/file_batch.h"

static void
add(file_batch_t *b, const char *event, const char *path)
{
    json_object *ev = json_object_new_object();
    json_set_str(ev, "event", event);
    json_set_str(ev, "path", path);
    json_set_bool(ev, "is_dir", false);
    file_batch_add(b, ev);
    json_object_put(ev);
}

static size_t
common(const char *a, const char *b)
{
    return file_batch_common_dir(a, strlen(a), b, strlen(b));
}

static void
test_common_dir_stops_at_a_component(void **state)
{
    (void)state;
    assert_int_equal(common("/a/b", "/a/bc"), 2); /* "/a", not "/a/b" */
    assert_int_equal(common("/a/b", "/a/b"), 4);  /* the same */
    assert_int_equal(common("/a", "/a/b/c"), 2);  /* one holds the other */
    assert_int_equal(common("/a/b/c", "/a"), 2);
    assert_int_equal(common("/x", "/y"), 1);          /* "/" */
    assert_int_equal(common("/", "/workspace/a"), 1); /* the root holds everything */
    assert_int_equal(common("/workspace/a", "/"), 1);
    assert_int_equal(common("/w/src/a", "/w/src/b/c"), 6); /* "/w/src" */
}

static void
test_events_kept_in_order_a_repeat_once(void **state)
{
    (void)state;
    file_batch_t b = {0};
    assert_true(file_batch_empty(&b));
    assert_null(file_batch_take(&b));
    add(&b, "created", "/w/a");
    add(&b, "modified", "/w/a");
    add(&b, "modified", "/w/a"); /* a write in two pieces: one change to show */
    add(&b, "deleted", "/w/b");
    assert_false(file_batch_empty(&b));
    json_object *out = file_batch_take(&b);
    assert_non_null(out);
    assert_int_equal(json_object_array_length(out), 3);
    const char *want[][2] = {{"created", "/w/a"}, {"modified", "/w/a"}, {"deleted", "/w/b"}};
    for (size_t i = 0; i < 3; i++) {
        json_object *ev = json_object_array_get_idx(out, i);
        assert_string_equal(json_get_str(ev, "event", ""), want[i][0]);
        assert_string_equal(json_get_str(ev, "path", ""), want[i][1]);
    }
    json_object_put(out);
    assert_true(file_batch_empty(&b)); /* taken: empty again */
    assert_null(file_batch_take(&b));
}

static void
test_past_the_bound_one_many_event_for_the_common_directory(void **state)
{
    (void)state;
    file_batch_t b = {0};
    char path[64];
    add(&b, "created", "/w/proj/node_modules");
    for (int i = 0; i < FILE_BATCH_MAX; i++) {
        snprintf(path, sizeof path, "/w/proj/node_modules/p%d/index.js", i);
        add(&b, "created", path);
    }
    json_object *out = file_batch_take(&b);
    assert_int_equal(json_object_array_length(out), 1);
    json_object *ev = json_object_array_get_idx(out, 0);
    assert_string_equal(json_get_str(ev, "event", ""), "many");
    /* node_modules itself was made in /w/proj: that listing changed too */
    assert_string_equal(json_get_str(ev, "path", ""), "/w/proj");
    assert_int_equal(json_get_int(ev, "count", 0), FILE_BATCH_MAX + 1);
    json_object_put(out);
    assert_true(file_batch_empty(&b));
}

static void
test_at_the_bound_every_event_is_kept(void **state)
{
    (void)state;
    file_batch_t b = {0};
    char path[64];
    for (int i = 0; i < FILE_BATCH_MAX; i++) {
        snprintf(path, sizeof path, "/w/f%d", i);
        add(&b, "created", path);
    }
    json_object *out = file_batch_take(&b);
    assert_int_equal(json_object_array_length(out), FILE_BATCH_MAX);
    json_object_put(out);
}

static void
test_summed_up_batch_widens_to_each_later_change(void **state)
{
    (void)state;
    file_batch_t b = {0};
    char path[64];
    for (int i = 0; i <= FILE_BATCH_MAX; i++) {
        snprintf(path, sizeof path, "/w/a/b/f%d", i);
        add(&b, "created", path);
    }
    add(&b, "deleted", "/w/a/c/g"); /* after the summary: it widens to /w/a */
    add(&b, "resync", "/w/a");      /* a directory to list again names itself */
    json_object *out = file_batch_take(&b);
    json_object *ev = json_object_array_get_idx(out, 0);
    assert_string_equal(json_get_str(ev, "path", ""), "/w/a");
    assert_int_equal(json_get_int(ev, "count", 0), FILE_BATCH_MAX + 3);
    json_object_put(out);

    /* the next batch starts afresh */
    add(&b, "created", "/elsewhere/x");
    out = file_batch_take(&b);
    assert_int_equal(json_object_array_length(out), 1);
    assert_string_equal(json_get_str(json_object_array_get_idx(out, 0), "event", ""), "created");
    json_object_put(out);
}

static void
test_clear_drops_what_is_pending(void **state)
{
    (void)state;
    file_batch_t b = {0};
    add(&b, "created", "/w/a");
    file_batch_clear(&b);
    assert_true(file_batch_empty(&b));
    file_batch_clear(&b); /* twice is fine */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_dir_stops_at_a_component),
        cmocka_unit_test(test_events_kept_in_order_a_repeat_once),
        cmocka_unit_test(test_past_the_bound_one_many_event_for_the_common_directory),
        cmocka_unit_test(test_at_the_bound_every_event_is_kept),
        cmocka_unit_test(test_summed_up_batch_widens_to_each_later_change),
        cmocka_unit_test(test_clear_drops_what_is_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
