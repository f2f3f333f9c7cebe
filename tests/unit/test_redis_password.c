/* test_redis_password.c — common/redis_password: the Redis password files (one line; the
 * newline stripped; empty, too long, control characters, not a regular file, open to group or
 * others refused with why), the start-up check of --redis-user / --redis-password-file, the AUTH
 * command's arguments and what counts as a refusal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "redis_password.h"
#include "xalloc.h"

static char dir[64];

static int
setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_redis_password.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int
teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", dir);
    int r = system(cmd);
    free(cmd);
    return r == 0 ? 0 : -1;
}

/* A file under dir holding content[0..n) with mode; the caller frees the path. */
static char *
write_file(const char *name, const char *content, size_t n, mode_t mode)
{
    char *path = xasprintf("%s/%s", dir, name);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, n), (ssize_t)n);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
    return path;
}

/* Loads content as a password file: the length, pw filled; err when it fails. */
static int
load(const char *content, size_t n, mode_t mode, char *pw, err_t *err)
{
    char *path = write_file("pw", content, n, mode);
    int r = redis_password_load(path, pw, REDIS_PASSWORD_MAX + 1, err);
    free(path);
    return r;
}

static void
test_trailing_newline_is_stripped_and_the_rest_kept(void **state)
{
    (void)state;
    char pw[REDIS_PASSWORD_MAX + 1];
    err_t err = {0};
    assert_int_equal(load("s3cret\n", 7, 0600, pw, &err), 6);
    assert_string_equal(pw, "s3cret");
    assert_int_equal(load("s3cret\r\n", 8, 0600, pw, &err), 6);
    assert_string_equal(pw, "s3cret");
    assert_int_equal(load("no newline", 10, 0400, pw, &err), 10);
    assert_string_equal(pw, "no newline"); /* spaces are a password's business */
}

static void
test_empty_file_is_refused_with_why(void **state)
{
    (void)state;
    char pw[REDIS_PASSWORD_MAX + 1];
    err_t err = {0};
    assert_true(load("", 0, 0600, pw, &err) < 0);
    assert_non_null(strstr(err.msg, "empty"));
    assert_true(load("\n", 1, 0600, pw, &err) < 0);
    assert_non_null(strstr(err.msg, "empty"));
}

static void
test_too_long_is_refused_and_the_longest_loads(void **state)
{
    (void)state;
    char pw[REDIS_PASSWORD_MAX + 1];
    char text[REDIS_PASSWORD_MAX + 64];
    memset(text, 'a', sizeof text);
    err_t err = {0};
    text[REDIS_PASSWORD_MAX] = '\n';
    assert_int_equal(load(text, REDIS_PASSWORD_MAX + 1, 0600, pw, &err), REDIS_PASSWORD_MAX);
    assert_int_equal(strlen(pw), REDIS_PASSWORD_MAX);
    text[REDIS_PASSWORD_MAX] = 'a';
    assert_int_equal(load(text, REDIS_PASSWORD_MAX + 1, 0600, pw, &err), -ERR_TOO_BIG);
    assert_non_null(strstr(err.msg, "longer than 256 bytes"));
    assert_int_equal(load(text, sizeof text, 0600, pw, &err), -ERR_TOO_BIG);
    assert_string_equal(pw, ""); /* nothing of it left in the output */
}

static void
test_control_characters_and_second_lines_are_refused(void **state)
{
    (void)state;
    char pw[REDIS_PASSWORD_MAX + 1];
    err_t err = {0};
    assert_int_equal(load("one\ntwo\n", 8, 0600, pw, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "control character 0x0a at byte 3"));
    assert_int_equal(load("a\0b", 3, 0600, pw, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "0x00 at byte 1"));
    assert_int_equal(load("tab\there", 8, 0600, pw, &err), -ERR_BAD_REQ);
    assert_int_equal(load("pw\n\n", 4, 0600, pw, &err), -ERR_BAD_REQ); /* one newline only */
    assert_int_equal(load("del\x7f", 4, 0600, pw, &err), -ERR_BAD_REQ);
}

static void
test_group_or_other_access_is_refused_with_the_mode(void **state)
{
    (void)state;
    char pw[REDIS_PASSWORD_MAX + 1];
    err_t err = {0};
    static const mode_t refused[] = {0640, 0604, 0660, 0644, 0610, 0601, 0620};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(load("secret\n", 7, refused[i], pw, &err), -EACCES);
        char mode[16];
        snprintf(mode, sizeof mode, "(mode %04o)", (unsigned)refused[i]);
        assert_non_null(strstr(err.msg, mode));
        assert_non_null(strstr(err.msg, "chmod 600"));
        assert_string_equal(pw, "");
    }
    assert_int_equal(load("secret\n", 7, 0600, pw, &err), 6);
    assert_int_equal(load("secret\n", 7, 0400, pw, &err), 6);
}

static void
test_missing_file_directory_and_fifo_are_refused(void **state)
{
    (void)state;
    char pw[REDIS_PASSWORD_MAX + 1];
    err_t err = {0};
    char *path = xasprintf("%s/none", dir);
    assert_int_equal(redis_password_load(path, pw, sizeof pw, &err), -ENOENT);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(redis_password_load(dir, pw, sizeof pw, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));
    free(path);
    path = xasprintf("%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(redis_password_load(path, pw, sizeof pw, &err), -EINVAL); /* no hang */
    free(path);
    assert_int_equal(redis_password_load(dir, pw, REDIS_PASSWORD_MAX, &err), -EINVAL);
}

static void
test_user_names(void **state)
{
    (void)state;
    assert_true(redis_user_name_ok("gateway"));
    assert_true(redis_user_name_ok("sp-test-admin"));
    assert_true(redis_user_name_ok("api_2.x"));
    assert_false(redis_user_name_ok(""));
    assert_false(redis_user_name_ok(NULL));
    assert_false(redis_user_name_ok("two words"));
    assert_false(redis_user_name_ok("a:b"));
    assert_false(redis_user_name_ok("~sp:*"));
    char longest[REDIS_USER_MAX + 2];
    memset(longest, 'u', sizeof longest);
    longest[REDIS_USER_MAX] = '\0';
    assert_true(redis_user_name_ok(longest));
    longest[REDIS_USER_MAX] = 'u';
    longest[REDIS_USER_MAX + 1] = '\0';
    assert_false(redis_user_name_ok(longest));
}

static void
test_auth_check_of_the_options(void **state)
{
    (void)state;
    err_t err = {0};
    redis_auth_t none = {0};
    assert_int_equal(redis_auth_check(&none, &err), 0); /* no flags: connect as before */
    redis_auth_t user_only = {.user = "gateway"};
    assert_true(redis_auth_check(&user_only, &err) < 0);
    assert_non_null(strstr(err.msg, "--redis-user needs --redis-password-file"));
    char *path = write_file("ok", "pw\n", 3, 0600);
    redis_auth_t bad_name = {.user = "gate way", .password_file = path};
    assert_true(redis_auth_check(&bad_name, &err) < 0);
    assert_non_null(strstr(err.msg, "--redis-user"));
    redis_auth_t ok = {.user = "gateway", .password_file = path};
    assert_int_equal(redis_auth_check(&ok, &err), 0);
    redis_auth_t password_only = {.password_file = path};
    assert_int_equal(redis_auth_check(&password_only, &err), 0);
    free(path);
    path = write_file("open", "pw\n", 3, 0644);
    redis_auth_t open_file = {.user = "gateway", .password_file = path};
    assert_int_equal(redis_auth_check(&open_file, &err), -EACCES);
    free(path);
}

static void
test_auth_command_with_and_without_a_user(void **state)
{
    (void)state;
    const char *argv[3];
    size_t lens[3];
    redis_auth_t a = {.user = "api", .password_file = "x"};
    assert_int_equal(redis_auth_command(&a, "p w", 3, argv, lens), 3);
    assert_string_equal(argv[0], "AUTH");
    assert_string_equal(argv[1], "api");
    assert_memory_equal(argv[2], "p w", 3);
    assert_int_equal(lens[2], 3);
    redis_auth_t d = {.password_file = "x"};
    assert_int_equal(redis_auth_command(&d, "pw", 2, argv, lens), 2);
    assert_string_equal(argv[1], "pw");
}

static void
test_refusals_are_told_from_other_errors(void **state)
{
    (void)state;
    assert_true(redis_auth_refusal("NOAUTH Authentication required."));
    assert_true(redis_auth_refusal("WRONGPASS invalid username-password pair"));
    assert_true(redis_auth_refusal("NOPERM this user has no permissions to run the 'keys'"));
    assert_false(redis_auth_refusal("LOADING Redis is loading the dataset in memory"));
    assert_false(redis_auth_refusal("ERR wrong number of arguments"));
    assert_false(redis_auth_refusal(NULL));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trailing_newline_is_stripped_and_the_rest_kept),
        cmocka_unit_test(test_empty_file_is_refused_with_why),
        cmocka_unit_test(test_too_long_is_refused_and_the_longest_loads),
        cmocka_unit_test(test_control_characters_and_second_lines_are_refused),
        cmocka_unit_test(test_group_or_other_access_is_refused_with_the_mode),
        cmocka_unit_test(test_missing_file_directory_and_fifo_are_refused),
        cmocka_unit_test(test_user_names),
        cmocka_unit_test(test_auth_check_of_the_options),
        cmocka_unit_test(test_auth_command_with_and_without_a_user),
        cmocka_unit_test(test_refusals_are_told_from_other_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
