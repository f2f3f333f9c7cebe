/* test_axtree.c — BrowserGym's flattening of Chromium's accessibility tree (plugins/browser/
 * axtree.c) on trees shaped as Accessibility.getFullAXTree and DOMSnapshot.captureSnapshot give
 * them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/browser/axtree.h"

static char *
format(const char *ax, const char *snap)
{
    json_object *a = json_tokener_parse(ax), *s = snap ? json_tokener_parse(snap) : NULL;
    assert_non_null(a);
    buf_t out = BUF_INIT;
    axtree_format(a, s, &out);
    json_object_put(a);
    json_object_put(s);
    buf_puts(&out, "");
    return out.data;
}

/* A page: RootWebArea > [ignored html > body] > heading (with its redundant StaticText),
 * link (clickable, url), a textbox with a value, a LineBreak and an InlineTextBox. Bids come from
 * the snapshot's browsergym_id attributes by backend node id. */
#define AX                                                                                         \
    "{\"nodes\":["                                                                                 \
    "{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},\"name\":{\"value\":\"Home\"},"        \
    "\"properties\":[{\"name\":\"focusable\",\"value\":{\"value\":true}},{\"name\":\"focused\","   \
    "\"value\":{\"value\":true}}],\"childIds\":[\"2\"],\"backendDOMNodeId\":1},"                   \
    "{\"nodeId\":\"2\",\"ignored\":true,\"role\":{\"value\":\"none\"},\"childIds\":[\"3\",\"5\","  \
    "\"7\",\"8\"],\"backendDOMNodeId\":2},"                                                        \
    "{\"nodeId\":\"3\",\"role\":{\"value\":\"heading\"},\"name\":{\"value\":\"Hi there\"},"        \
    "\"properties\":[{\"name\":\"level\",\"value\":{\"value\":1}}],\"childIds\":[\"4\"],"          \
    "\"backendDOMNodeId\":10},"                                                                    \
    "{\"nodeId\":\"4\",\"role\":{\"value\":\"StaticText\"},\"name\":{\"value\":\"Hi\"},"           \
    "\"childIds\":[\"9\"],\"backendDOMNodeId\":11},"                                               \
    "{\"nodeId\":\"5\",\"role\":{\"value\":\"link\"},\"name\":{\"value\":\" it's \\u00a0\"},"      \
    "\"properties\":[{\"name\":\"url\",\"value\":{\"value\":\"http://x/\"}},{\"name\":"            \
    "\"expanded\",\"value\":{\"value\":false}},{\"name\":\"valuemin\",\"value\":{\"value\":0.5}}," \
    "{\"name\":\"describedby\",\"value\":{\"relatedNodes\":[]}}],\"childIds\":[\"6\"],"            \
    "\"backendDOMNodeId\":12},"                                                                    \
    "{\"nodeId\":\"6\",\"role\":{\"value\":\"LineBreak\"},\"name\":{\"value\":\"\\n\"},"           \
    "\"childIds\":[]},"                                                                            \
    "{\"nodeId\":\"7\",\"role\":{\"value\":\"textbox\"},\"name\":{\"value\":\"q\"},\"value\":"     \
    "{\"value\":\"a\\\\b\\tc\"},\"properties\":[{\"name\":\"required\",\"value\":{\"value\":"      \
    "true}},{\"name\":\"checked\",\"value\":{\"value\":\"false\"}}],\"childIds\":[],"              \
    "\"backendDOMNodeId\":13},"                                                                    \
    "{\"nodeId\":\"8\",\"role\":{\"value\":\"generic\"},\"name\":{\"value\":\"\"},"                \
    "\"childIds\":[\"1\"],\"backendDOMNodeId\":14},"                                               \
    "{\"nodeId\":\"9\",\"role\":{\"value\":\"InlineTextBox\"},\"name\":{\"value\":\"Hi\"},"        \
    "\"childIds\":[]}]}"

#define SNAP                                                                                       \
    "{\"strings\":[\"browsergym_id\",\"7\",\"8\",\"9\",\"class\",\"x\",\"12\"],\"documents\":[{"   \
    "\"nodes\":{\"backendNodeId\":[1,10,12,13,14],\"attributes\":[[],[0,1],[4,5,0,2],[0,3],"       \
    "[0,6]],\"isClickable\":{\"index\":[2,3]}}}]}"

static void
test_listing_as_browsergym_flattens_it(void **state)
{
    (void)state;
    char *t = format(AX, SNAP);
    assert_string_equal(t, "RootWebArea 'Home', focused\n"
                           "\t[7] heading 'Hi there'\n"
                           "\t[8] link \"it's\", clickable, url='http://x/', expanded=False, "
                           "valuemin=0.5\n"
                           "\t[9] textbox 'q' value='a\\\\b\\tc', clickable, required, "
                           "checked='false'\n"
                           "\t[12] generic");
    free(t);
}

static void
test_without_snapshot_no_bids(void **state)
{
    (void)state;
    char *t = format("{\"nodes\":[{\"nodeId\":\"1\",\"role\":{\"value\":\"RootWebArea\"},"
                     "\"name\":{\"value\":\"\"},\"childIds\":[\"2\"]},{\"nodeId\":\"2\",\"role\":"
                     "{\"value\":\"button\"},\"name\":{\"value\":\"Go\"},\"backendDOMNodeId\":5,"
                     "\"childIds\":[]}]}",
                     NULL);
    assert_string_equal(t, "RootWebArea ''\n\tbutton 'Go'");
    free(t);
}

static void
test_repr_quotes_and_escapes_as_python(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"plain", "'plain'"},
        {"it's", "\"it's\""},
        {"both ' and \"", "'both \\' and \"'"},
        {"nbsp\xc2\xa0x", "'nbsp\\xa0x'"},
        {"caf\xc3\xa9 \xe2\x80\x8b", "'caf\xc3\xa9 \\u200b'"},
        {"\x01\x7f", "'\\x01\\x7f'"},
        {"bad\xff", "'bad\xef\xbf\xbd'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf_t b = BUF_INIT;
        axtree_py_repr(&b, cases[i].in, strlen(cases[i].in));
        buf_puts(&b, "");
        assert_string_equal(b.data, cases[i].want);
        buf_free(&b);
    }
}

static void
test_deep_and_cyclic_trees_stay_bounded(void **state)
{
    (void)state;
    /* 3000 nested generics with names, and a child pointing back at the root */
    buf_t ax = BUF_INIT;
    buf_puts(&ax, "{\"nodes\":[");
    for (int i = 0; i < 3000; i++)
        buf_printf(&ax,
                   "%s{\"nodeId\":\"%d\",\"role\":{\"value\":\"group\"},\"name\":{\"value\":\"g\"},"
                   "\"childIds\":[\"%d\",\"0\"]}",
                   i ? "," : "", i, i + 1);
    buf_puts(&ax, "]}");
    char *t = format(ax.data, NULL);
    size_t lines = 1;
    for (char *p = t; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, AXTREE_MAX_DEPTH + 1);
    free(t);
    buf_free(&ax);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listing_as_browsergym_flattens_it),
        cmocka_unit_test(test_without_snapshot_no_bids),
        cmocka_unit_test(test_repr_quotes_and_escapes_as_python),
        cmocka_unit_test(test_deep_and_cyclic_trees_stay_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
