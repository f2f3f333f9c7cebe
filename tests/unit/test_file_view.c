/* test_file_view.c — common/file_view: which files the viewer shows, the page around the bytes
 * (its length known before the bytes come), upstream's error pages with every name escaped,
 * and the path= argument read from a URL as FastAPI reads a query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "base64.h"
#include "file_view.h"

static void
test_mime_by_extension_any_case(void **state)
{
    (void)state;
    assert_string_equal(file_view_mime("/w/a.png"), "image/png");
    assert_string_equal(file_view_mime("/w/a.JPG"), "image/jpeg");
    assert_string_equal(file_view_mime("/w/a.b.jpeg"), "image/jpeg");
    assert_string_equal(file_view_mime("/w/a.gif"), "image/gif");
    assert_string_equal(file_view_mime("/w/a.Pdf"), "application/pdf");
    assert_null(file_view_mime("/w/a.txt"));
    assert_null(file_view_mime("/w/.png")); /* a dot file has no extension (os.path.splitext) */
    assert_null(file_view_mime("/w.png/a"));
    assert_null(file_view_mime("/w/png"));
}

static void
test_page_wraps_the_bytes_and_its_length_is_known(void **state)
{
    (void)state;
    const char *path = "/workspace/\"x\" <y>.png";
    buf_t b = BUF_INIT;
    file_view_head(&b, path, "image/png");
    char enc[BASE64_ENCODED_LEN(5) + 1];
    buf_append(&b, enc, base64_encode("\x89PNG!", 5, enc));
    file_view_tail(&b, "image/png");
    assert_int_equal(b.len, file_view_page_len(path, "image/png", 5));
    assert_non_null(strstr(b.data, "<title>File Viewer - &quot;x&quot; &lt;y&gt;.png</title>"));
    assert_non_null(strstr(b.data, "<img alt=\"&quot;x&quot; &lt;y&gt;.png\" "
                                   "src=\"data:image/png;base64,iVBORyE=\"></div>"));
    assert_null(strstr(b.data, "<script"));
    buf_clear(&b);
    file_view_head(&b, "/d.pdf", "application/pdf");
    assert_non_null(strstr(b.data, "<embed type=\"application/pdf\" title=\"d.pdf\" "
                                   "src=\"data:application/pdf;base64,"));
    buf_free(&b);
}

static void
test_errors_as_upstream(void **state)
{
    (void)state;
    buf_t b = BUF_INIT;
    assert_int_equal(file_view_check(&b, "/abs.png"), 0);
    assert_int_equal(b.len, 0);
    assert_int_equal(file_view_check(&b, "rel/<a>.png"), 400);
    assert_string_equal(b.data, "<h1>Error: Path must be absolute</h1><p>rel/&lt;a&gt;.png</p>");
    buf_clear(&b);
    assert_int_equal(file_view_error(&b, "/n.png", ENOENT, "x"), 404);
    assert_string_equal(b.data, "<h1>Error: File not found</h1><p>/n.png</p>");
    buf_clear(&b);
    assert_int_equal(file_view_error(&b, "/d", EISDIR, "x"), 400);
    assert_string_equal(b.data, "<h1>Error: Path is a directory</h1><p>/d</p>");
    buf_clear(&b);
    assert_int_equal(file_view_error(&b, "/t.TXT", 0, NULL), 500);
    assert_string_equal(b.data, "<h1>Error viewing file</h1><p>/t.TXT</p><p>Unsupported file "
                                "extension: .txt. Supported extensions are: .pdf, .png, .jpg, "
                                ".jpeg, .gif</p>");
    buf_clear(&b);
    assert_int_equal(file_view_error(&b, "/p.png", EACCES, "Permission denied"), 500);
    assert_string_equal(b.data, "<h1>Error viewing file</h1><p>/p.png</p><p>Permission denied</p>");
    buf_free(&b);
}

static void
test_url_path_decoded_as_a_query(void **state)
{
    (void)state;
    char p[32];
    assert_true(
        file_view_url_path("http://localhost:1/view?path=/w/a+b%2Fc.png#frag", p, sizeof p));
    assert_string_equal(p, "/w/a b/c.png");
    assert_true(file_view_url_path("http://h/view?x=1&path=%2fa&path=/last", p, sizeof p));
    assert_string_equal(p, "/last"); /* the last one, as FastAPI */
    assert_true(file_view_url_path("http://h/view?path=", p, sizeof p));
    assert_string_equal(p, "");
    assert_true(file_view_url_path("http://h/view?path=%zz%4", p, sizeof p));
    assert_string_equal(p, "%zz%4"); /* not an escape: kept */
    assert_false(file_view_url_path("http://h/view?paths=/a", p, sizeof p));
    assert_false(file_view_url_path("http://h/view#?path=/a", p, sizeof p));
    assert_false(file_view_url_path("http://h/view?path=/a%00b", p, sizeof p)); /* no NUL */
    assert_false(
        file_view_url_path("http://h/view?path=/0123456789012345678901234567890123", p, sizeof p));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mime_by_extension_any_case),
        cmocka_unit_test(test_page_wraps_the_bytes_and_its_length_is_known),
        cmocka_unit_test(test_errors_as_upstream),
        cmocka_unit_test(test_url_path_decoded_as_a_query),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
