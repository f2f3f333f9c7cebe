/* test_ipython_obs.c — the run_ipython observation (executor/ipython_obs.c) against upstream's
 * texts: strip_ansi's pattern (its doctests' vectors, and what the pattern leaves alone), the
 * no-output and timeout texts, right-trimming, include_extra, image_urls null or a list, the
 * no-network note. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "executor/ipython_obs.h"
#include "executor/net_hint.h"
#include "json_util.h"

static void
strip(const char *in, const char *want)
{
    char *got = ipython_strip_ansi(in, strlen(in));
    assert_string_equal(got, want);
    free(got);
}

static void
test_strip_ansi_as_upstream(void **state)
{
    (void)state;
    strip("\033[33mLorem ipsum\033[0m", "Lorem ipsum");
    strip("Lorem \033[38;25mIpsum\033[0m sit\namet.", "Lorem Ipsum sit\namet.");
    strip("", "");
    strip("\x1b[0m", "");
    strip("\x1b[38;5;32mLorem ipsum\x1b[0m", "Lorem ipsum");
    strip("\x1b[1m\x1b[46m\x1b[31mLorem dolor sit ipsum\x1b[0m", "Lorem dolor sit ipsum");
    /* \d+(;\d+){0,2}m only: four numbers, an empty number, other final bytes stay */
    strip("\x1b[1;2;3;4mX", "\x1b[1;2;3;4mX");
    strip("\x1b[mX\x1b[1;mY", "\x1b[mX\x1b[1;mY");
    strip("\x1b[2KZ\x1b[1", "\x1b[2KZ\x1b[1");
}

static json_object *
build(ipy_obs_in_t in)
{
    return ipython_obs_build(&in);
}

static void
test_texts(void **state)
{
    (void)state;
    json_object *o = build((ipy_obs_in_t){.code = "x = 1",
                                          .end = IPY_END_OK,
                                          .text = "",
                                          .include_extra = true,
                                          .cwd = "/w",
                                          .python = "/p"});
    assert_string_equal(json_get_str(o, "content", NULL),
                        "[Code executed successfully with no output]\n[Jupyter current working "
                        "directory: /w]\n[Jupyter Python interpreter: /p]");
    assert_string_equal(json_get_str(o, "observation", NULL), "run_ipython");
    assert_string_equal(json_get_str(o, "message", NULL), "Code executed in IPython cell.");
    assert_true(json_get_bool(o, "success", false));
    json_object *x = json_get(o, "extras");
    assert_int_equal(json_object_object_length(x), 2);
    assert_string_equal(json_get_str(x, "code", NULL), "x = 1");
    assert_true(json_object_object_get_ex(x, "image_urls", NULL));
    assert_null(json_get(x, "image_urls"));
    json_object_put(o);

    o = build((ipy_obs_in_t){.end = IPY_END_OK, .text = "a  \n\n", .text_len = 5});
    assert_string_equal(json_get_str(o, "content", NULL), "a");
    json_object_put(o);

    json_object *t = json_object_new_double(2.0), *ti = json_object_new_int(3);
    o = build(
        (ipy_obs_in_t){.end = IPY_END_TIMEOUT, .text = "partial", .text_len = 7, .timeout = t});
    assert_string_equal(json_get_str(o, "content", NULL), "[Execution timed out (2.0 seconds).]");
    json_object_put(o);
    o = build((ipy_obs_in_t){.end = IPY_END_TIMEOUT, .timeout = ti});
    assert_string_equal(json_get_str(o, "content", NULL), "[Execution timed out (3 seconds).]");
    json_object_put(o);
    json_object_put(t);
    json_object_put(ti);
}

static void
test_images(void **state)
{
    (void)state;
    json_object *imgs = json_object_new_array();
    json_object_array_add(imgs, json_object_new_string("data:image/png;base64,AA=="));
    json_object *o =
        build((ipy_obs_in_t){.end = IPY_END_OK, .text = "<Figure>", .text_len = 8, .images = imgs});
    json_object *urls = json_get(json_get(o, "extras"), "image_urls");
    assert_int_equal(json_object_array_length(urls), 1);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(urls, 0)),
                        "data:image/png;base64,AA==");
    json_object_put(o);
    json_object_put(imgs);
}

/* no_network: the note ends the trimmed output, before include_extra's lines, whatever the end. */
static void
test_no_network_note_ends_the_output(void **state)
{
    (void)state;
    static const char out[] = "URLError: <urlopen error [Errno -3] Temporary failure in name "
                              "resolution>\n\n";
    json_object *o = build((ipy_obs_in_t){.end = IPY_END_OK,
                                          .text = out,
                                          .text_len = sizeof out - 1,
                                          .include_extra = true,
                                          .cwd = "/w",
                                          .python = "/p",
                                          .no_network = true});
    assert_string_equal(json_get_str(o, "content", NULL),
                        "URLError: <urlopen error [Errno -3] Temporary failure in name "
                        "resolution>" NET_HINT_NOTE "\n[Jupyter current working directory: /w]"
                        "\n[Jupyter Python interpreter: /p]");
    json_object_put(o);
    o = build((ipy_obs_in_t){.end = IPY_END_TIMEOUT, .no_network = true});
    assert_string_equal(json_get_str(o, "content", NULL),
                        "[Execution timed out (0.0 seconds).]" NET_HINT_NOTE);
    json_object_put(o);
    o = build((ipy_obs_in_t){.end = IPY_END_OK, .text = out, .text_len = sizeof out - 1});
    assert_null(strstr(json_get_str(o, "content", NULL), "no network access"));
    json_object_put(o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_ansi_as_upstream),
        cmocka_unit_test(test_texts),
        cmocka_unit_test(test_images),
        cmocka_unit_test(test_no_network_note_ends_the_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
