/* test_browser_obs.c — the browser observation (executor/browser_obs.c) against upstream's
 * get_agent_obs_text texts and BrowserOutputObservation's 16 extras. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "executor/browser_obs.h"
#include "json_util.h"

static const char *const extras[] = {"url",
                                     "trigger_by_action",
                                     "screenshot",
                                     "screenshot_path",
                                     "set_of_marks",
                                     "error",
                                     "goal_image_urls",
                                     "open_pages_urls",
                                     "active_page_index",
                                     "dom_object",
                                     "axtree_object",
                                     "extra_element_properties",
                                     "last_browser_action",
                                     "last_browser_action_error",
                                     "focused_element_bid",
                                     "filter_visible_only"};

static json_object *
step(const char *error)
{
    json_object *s = json_object_new_object();
    json_set_str(s, "url", "http://127.0.0.1:8000/");
    json_set_str(s, "text", "# Title\n");
    json_set_str(s, "axtree", "RootWebArea 'T'\n\t[1] link 'a', clickable");
    json_set_str(s, "focused", "1");
    json_set_str(s, "screenshot", "data:image/png;base64,AA==");
    json_set_str(s, "screenshot_path", "/w/.browser_screenshots/s.png");
    json_object *pages = json_object_new_array();
    json_object_array_add(pages, json_object_new_string("http://127.0.0.1:8000/"));
    json_set(s, "open_pages_urls", pages);
    if (error)
        json_set_str(s, "last_action_error", error);
    return s;
}

static void
test_browse_text_and_extras(void **state)
{
    (void)state;
    json_object *s = step(NULL);
    json_object *o = browser_obs_build("browse", s, "goto(\"http://127.0.0.1:8000/\")");
    assert_string_equal(json_get_str(o, "message", ""), "Visited http://127.0.0.1:8000/");
    assert_string_equal(json_get_str(o, "observation", ""), "browse");
    assert_string_equal(json_get_str(o, "content", ""),
                        "[Current URL: http://127.0.0.1:8000/]\n"
                        "============== BEGIN webpage content ==============\n# Title\n\n"
                        "============== END webpage content ==============\n");
    json_object *x = json_get(o, "extras");
    assert_int_equal(json_object_object_length(x), 16);
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++)
        assert_true(json_object_object_get_ex(x, extras[i], NULL));
    assert_false(json_get_bool(x, "error", true));
    assert_int_equal(json_get_int(x, "active_page_index", -5), 0);
    assert_null(json_get(x, "set_of_marks"));
    assert_false(json_object_object_get_ex(o, "success", NULL));
    json_object_put(o);
    json_object_put(s);
}

static void
test_interactive_error(void **state)
{
    (void)state;
    json_object *s = step("Could not find element with bid \"9\"");
    json_object *o = browser_obs_build("browse_interactive", s, "click(\"9\")");
    const char *c = json_get_str(o, "content", "");
    assert_non_null(strstr(c, "[Current URL: http://127.0.0.1:8000/]\n[Focused element bid: 1]\n"
                              "[Screenshot saved to: /w/.browser_screenshots/s.png]\n\n"
                              "================ BEGIN error message ===============\n"
                              "The following error occurred when executing the last action:\n"
                              "Could not find element with bid \"9\"\n"));
    assert_non_null(strstr(c, "============== BEGIN accessibility tree ==============\n"
                              "RootWebArea 'T'\n\t[1] link 'a', clickable\n"
                              "============== END accessibility tree ==============\n"));
    assert_true(json_get_bool(json_get(o, "extras"), "error", false));
    json_object_put(o);
    json_object_put(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_browse_text_and_extras),
        cmocka_unit_test(test_interactive_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
