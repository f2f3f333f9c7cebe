/* test_pty.c — executor/pty: a real child on a real PTY. The terminal gets the size and modes
 * asked for, the child the environment and the first directory it can enter, PATH is searched
 * only when asked, and a child that cannot start exits 127. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "executor/pty.h"

static char *const ENV[] = {"X=hello", "PATH=/usr/bin:/bin", NULL};

/* Runs o's child to its end: everything it wrote to the terminal into out, its wait status
 * returned. Reads until the PTY reports the child's side closed (EIO) or EOF. */
static int
run(const pty_spawn_opts_t *o, buf_t *out)
{
    pid_t pid = -1;
    err_t err = {0};
    int master = pty_spawn(o, &pid, &err);
    assert_true(master >= 0);
    assert_true(pid > 0);
    assert_true(fcntl(master, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(master, F_GETFD) & FD_CLOEXEC);
    for (int rounds = 0; rounds < 10000; rounds++) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        char tmp[4096];
        ssize_t n = read(master, tmp, sizeof tmp);
        if (n > 0)
            buf_append(out, tmp, (size_t)n);
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            break;
    }
    close(master);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void
expect_output(const buf_t *out, const char *want)
{
    if (out->len != strlen(want) || memcmp(out->data, want, out->len))
        fail_msg("output \"%.*s\", want \"%s\"", (int)out->len, out->data ? out->data : "", want);
}

static void
test_child_gets_size_env_and_first_enterable_dir(void **state)
{
    (void)state;
    char *argv[] = {"/bin/sh", "-c", "stty size; pwd; echo \"$X\"", NULL};
    const char *dirs[] = {"/nonexistent-dir", "/", NULL};
    pty_spawn_opts_t o = {
        .argv = argv, .envp = ENV, .dirs = dirs, .size = {.ws_row = 33, .ws_col = 77}};
    buf_t out = BUF_INIT;
    int status = run(&o, &out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    expect_output(&out, "33 77\r\n/\r\nhello\r\n"); /* default modes: \n goes out as \r\n */
    buf_free(&out);
}

static void
test_modes_asked_for_apply(void **state)
{
    (void)state;
    struct termios tio;
    memset(&tio, 0, sizeof tio);
    cfmakeraw(&tio);
    tio.c_oflag = 0; /* no output processing: \n stays \n */
    char *argv[] = {"/bin/sh", "-c", "printf 'a\\nb\\n'", NULL};
    const char *dirs[] = {"/", NULL};
    pty_spawn_opts_t o = {.argv = argv,
                          .envp = ENV,
                          .dirs = dirs,
                          .termios = &tio,
                          .size = {.ws_row = 24, .ws_col = 80}};
    buf_t out = BUF_INIT;
    int status = run(&o, &out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    expect_output(&out, "a\nb\n");
    buf_free(&out);
}

static void
test_path_is_searched_only_when_asked(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "exit 3", NULL};
    const char *dirs[] = {"/", NULL};
    pty_spawn_opts_t o = {.argv = argv,
                          .envp = ENV,
                          .search_path = true,
                          .dirs = dirs,
                          .size = {.ws_row = 24, .ws_col = 80}};
    buf_t out = BUF_INIT;
    int status = run(&o, &out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    o.search_path = false; /* "sh" in "/" does not exist */
    status = run(&o, &out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
    buf_free(&out);
}

static void
test_child_that_cannot_start_exits_127(void **state)
{
    (void)state;
    char *argv[] = {"/bin/sh", "-c", "exit 0", NULL};
    const char *none[] = {"/nonexistent-dir", NULL};
    pty_spawn_opts_t o = {
        .argv = argv, .envp = ENV, .dirs = none, .size = {.ws_row = 24, .ws_col = 80}};
    buf_t out = BUF_INIT;
    int status = run(&o, &out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
    char *missing[] = {"/nonexistent-dir/program", NULL};
    const char *dirs[] = {"/", NULL};
    o.argv = missing;
    o.dirs = dirs;
    status = run(&o, &out);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
    buf_free(&out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_gets_size_env_and_first_enterable_dir),
        cmocka_unit_test(test_modes_asked_for_apply),
        cmocka_unit_test(test_path_is_searched_only_when_asked),
        cmocka_unit_test(test_child_that_cannot_start_exits_127),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
