/* test_sudo_request.c — the sudo broker's request parser (executor/sudo_request.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "executor/sudo_request.h"

#define REQ(lit) lit, sizeof lit - 1

static void
test_a_request_parses_into_its_fields(void **state)
{
    (void)state;
    static const char req[] = "sudo1\0nobody\0\0Ei\0/tmp\0"
                              "2\0id\0-u\0"
                              "1\0PATH=/bin\0"
                              "1\0A=b";
    sudo_request_t r;
    assert_int_equal(sudo_request_parse(req, sizeof req, &r), 0); /* the last NUL included */
    assert_string_equal(r.user, "nobody");
    assert_string_equal(r.group, "");
    assert_string_equal(r.flags, "Ei");
    assert_string_equal(r.dir, "/tmp");
    assert_string_equal(r.argv[0], "id");
    assert_string_equal(r.argv[1], "-u");
    assert_null(r.argv[2]);
    assert_string_equal(r.env[0], "PATH=/bin");
    assert_null(r.env[1]);
    assert_string_equal(r.set[0], "A=b");
    assert_null(r.set[1]);
    sudo_request_free(&r);
}

static void
test_malformed_requests_are_refused_with_nothing_to_free(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
    } bad[] = {
        {REQ("sudo2\0\0\0\0\0"
             "0\0"
             "0\0"
             "0\0")}, /* another wire */
        {REQ("sudo1\0\0\0\0\0"
             "0\0"
             "0\0")}, /* a list missing */
        {REQ("sudo1\0\0\0\0\0"
             "0\0"
             "0\0"
             "0\0"
             "extra")}, /* bytes after it */
        {REQ("sudo1\0\0\0\0\0"
             "999999\0x\0"
             "0\0"
             "0\0")}, /* more strings than bytes */
        {REQ("sudo1\0\0\0\0\0"
             "-1\0"
             "0\0"
             "0\0")}, /* not a count */
        {REQ("sudo1\0\0\0\0\0"
             "1\0unterminated")}, /* a string without its NUL */
        {"", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sudo_request_t r;
        assert_int_equal(sudo_request_parse(bad[i].bytes, bad[i].len, &r), -1);
        assert_null(r.argv);
        assert_null(r.env);
        assert_null(r.set);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_request_parses_into_its_fields),
        cmocka_unit_test(test_malformed_requests_are_refused_with_nothing_to_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
