/* test_file_req.c — common/file_req: the files routes' ops from their queries and bodies, with
 * the REST API's texts (what the gateway's HTTP routes answer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "file_req.h"
#include "json_util.h"

/* A query as "name=value" strings, NULL-terminated. */
static const char *
get(const void *src, const char *name)
{
    size_t n = strlen(name);
    for (const char *const *a = src; *a; a++)
        if (!strncmp(*a, name, n) && (*a)[n] == '=')
            return *a + n + 1;
    return NULL;
}

static json_object *
body(const char *text)
{
    err_t err = {0};
    json_object *o = json_parse(text, strlen(text), &err);
    assert_non_null(o);
    return o;
}

static void
test_read_takes_ranges_within_the_apis_bounds(void **state)
{
    (void)state;
    const char *const ok[] = {"path=a.txt", "start_line=3", NULL};
    file_req_query_t q = {get, ok};
    err_t err = {0};
    json_object *op = file_req_read(&q, &err);
    assert_non_null(op);
    assert_string_equal(json_get_str(op, "op", ""), "file.read");
    assert_int_equal(json_get_int(op, "start_line", 0), 3);
    assert_int_equal(json_get_int(op, "end_line", 0), -1);
    assert_int_equal(json_get_int(op, "max_bytes", 0), FILE_REQ_READ_MAX);
    json_object_put(op);
    const char *const bad[] = {"path=a.txt", "max_bytes=0", NULL};
    q.src = bad;
    assert_null(file_req_read(&q, &err));
    assert_int_equal(err.code, ERR_BAD_REQ);
    assert_string_equal(err.msg, "query parameter max_bytes must be an integer in [1, 524288]");
    const char *const none[] = {"path=", NULL};
    q.src = none;
    assert_null(file_req_read(&q, &err));
    assert_string_equal(err.msg, "query parameter path is required (URL-encoded)");
}

static void
test_list_defaults_to_the_workspace_and_remove_is_not_recursive(void **state)
{
    (void)state;
    const char *const empty[] = {NULL};
    file_req_query_t q = {get, empty};
    err_t err = {0};
    json_object *op = file_req_list(&q, &err);
    assert_string_equal(json_get_str(op, "path", ""), ".");
    assert_true(json_get_bool(op, "hidden", false));
    json_object_put(op);
    assert_null(file_req_remove(&q, &err));
    const char *const rm[] = {"path=d", "recursive=yes", NULL};
    q.src = rm;
    op = file_req_remove(&q, &err);
    assert_true(json_get_bool(op, "recursive", false));
    json_object_put(op);
}

static void
test_bodies_are_checked_field_by_field(void **state)
{
    (void)state;
    err_t err = {0};
    json_object *b = body("{\"from\":\"a\"}");
    assert_null(file_req_move(b, &err));
    assert_string_equal(err.msg, "to must be a path (a non-empty string)");
    json_object_put(b);
    b = body("{\"path\":\"d\",\"parents\":1}");
    assert_null(file_req_mkdir(b, &err));
    assert_string_equal(err.msg, "parents must be a boolean");
    json_object_put(b);
    b = body("{\"path\":\"d\",\"mode\":493}");
    assert_null(file_req_mkdir(b, &err));
    assert_string_equal(err.msg, "mode must be an octal string (\"0755\")");
    json_object_put(b);
    b = body("{\"path\":\"x\",\"content\":\"aGk=\",\"encoding\":\"base64\"}");
    json_object *op = file_req_write(b, &err);
    assert_string_equal(json_get_str(op, "op", ""), "file.write");
    assert_string_equal(json_get_str(op, "encoding", ""), "base64");
    json_object_put(op);
    json_object_put(b);
    b = body("{\"path\":\"x\"}");
    assert_null(file_req_write(b, &err));
    assert_string_equal(err.msg, "path and content must be strings");
    json_object_put(b);
}

static void
test_upload_bounds_max_bytes_and_append_writes_base64(void **state)
{
    (void)state;
    err_t err = {0};
    bool append = true;
    const char *const up[] = {"path=x.bin", "mode=0755", "parents=false", NULL};
    file_req_query_t q = {get, up};
    json_object *op = file_req_upload(&q, 1000, &append, &err);
    assert_false(append);
    assert_string_equal(json_get_str(op, "op", ""), "file.upload");
    assert_int_equal(json_get_int(op, "max_bytes", 0), 1000);
    assert_false(json_get_bool(op, "parents", true));
    assert_string_equal(json_get_str(op, "mode", ""), "0755");
    json_object_put(op);
    const char *const over[] = {"path=x.bin", "max_bytes=1001", NULL};
    q.src = over;
    assert_null(file_req_upload(&q, 1000, &append, &err));
    assert_string_equal(err.msg, "query parameter max_bytes must be an integer in [0, 1000]");
    const char *const mode[] = {"path=x.bin", "mode=012345678", NULL};
    q.src = mode;
    assert_null(file_req_upload(&q, 1000, &append, &err));
    assert_string_equal(err.msg, "malformed mode");
    const char *const app[] = {"path=log", "append=true", NULL};
    q.src = app;
    op = file_req_upload(&q, 1000, &append, &err);
    assert_true(append);
    op = file_req_append(op, "\0hi", 3);
    assert_string_equal(json_get_str(op, "op", ""), "file.write");
    assert_string_equal(json_get_str(op, "content", ""), "AGhp");
    assert_true(json_get_bool(op, "append", false));
    json_object_put(op);
}

static void
test_disposition_quotes_nothing_it_should_not(void **state)
{
    (void)state;
    char d[1200];
    file_req_disposition(d, sizeof d, "dir/a \"b\".txt");
    assert_string_equal(d, "attachment; filename=\"a _b_.txt\"; filename*=UTF-8''a%20%22b%22.txt");
    file_req_disposition(d, sizeof d, "caf\xc3\xa9");
    assert_string_equal(d, "attachment; filename=\"caf__\"; filename*=UTF-8''caf%C3%A9");
}

/* A name that is not UTF-8 goes to the executor as text and exact bytes (path_b64), from a
 * query's percent-decoded bytes or from a body's *_b64 field. */
static void
test_names_that_are_not_utf8_keep_their_bytes(void **state)
{
    (void)state;
    const char *const rm[] = {"path=d/a\xFF"
                              "b",
                              NULL};
    file_req_query_t q = {get, rm};
    err_t err = {0};
    json_object *op = file_req_remove(&q, &err);
    assert_string_equal(json_get_str(op, "path", ""), "d/a\xEF\xBF\xBD"
                                                      "b");
    assert_string_equal(json_get_str(op, "path_b64", ""), "ZC9h/2I=");
    json_object_put(op);

    json_object *b = body("{\"from_b64\":\"ZC9h/2I=\",\"to\":\"ok\"}");
    op = file_req_move(b, &err);
    assert_non_null(op);
    assert_string_equal(json_get_str(op, "from_b64", ""), "ZC9h/2I=");
    assert_string_equal(json_get_str(op, "to", ""), "ok");
    assert_null(json_get(op, "to_b64"));
    json_object_put(op);
    json_object_put(b);
    b = body("{\"path_b64\":\"ZC9h/2I=\",\"content\":\"hi\"}");
    op = file_req_write(b, &err);
    assert_string_equal(json_get_str(op, "path", ""), "d/a\xEF\xBF\xBD"
                                                      "b");
    assert_string_equal(json_get_str(op, "path_b64", ""), "ZC9h/2I=");
    assert_string_equal(json_get_str(op, "content", ""), "hi");
    json_object_put(op);
    json_object_put(b);
    b = body("{\"path_b64\":\"not base64!\"}");
    assert_null(file_req_mkdir(b, &err));
    assert_string_equal(err.msg, "\"path_b64\" is not base64");
    json_object_put(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_takes_ranges_within_the_apis_bounds),
        cmocka_unit_test(test_list_defaults_to_the_workspace_and_remove_is_not_recursive),
        cmocka_unit_test(test_bodies_are_checked_field_by_field),
        cmocka_unit_test(test_upload_bounds_max_bytes_and_append_writes_base64),
        cmocka_unit_test(test_disposition_quotes_nothing_it_should_not),
        cmocka_unit_test(test_names_that_are_not_utf8_keep_their_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
