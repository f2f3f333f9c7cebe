/* test_redis_acl.c — common/redis_acl: the users template rendered into Redis' ACL file
 * (comments dropped, indented lines joined to their user, @password@ replaced by the SHA-256 of
 * the user's password), malformed templates refused with the line, cleartext passwords refused;
 * and redis/users.acl itself: it renders, the default user is off with no password, and
 * neither program's user may run a dangerous command or reach keys outside sp:*. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_acl.h"
#include "xalloc.h"

/* Every user's password is "pw-<user>"; a user named "nopw" has none (the callback fails). */
static int
fake_password(const char *user, char *pw, size_t cap, void *ud, err_t *err)
{
    int *calls = ud;
    if (calls)
        (*calls)++;
    if (!strcmp(user, "nopw"))
        return err_set(err, ENOENT, "run/redis-%s.password: No such file or directory", user);
    return snprintf(pw, cap, "pw-%s", user);
}

/* Renders t; returns the ACL (caller frees) or NULL with err set. */
static char *
render(const char *t, int *users, err_t *err)
{
    buf_t out = BUF_INIT;
    int n = redis_acl_render(t, strlen(t), fake_password, NULL, &out, err);
    if (users)
        *users = n;
    if (n < 0) {
        assert_true(out.len == 0);
        buf_free(&out);
        return NULL;
    }
    return buf_steal(&out);
}

static void
test_comments_dropped_lines_joined_password_hashed(void **state)
{
    (void)state;
    err_t err = {0};
    int users = 0;
    char *acl = render("# a comment\n"
                       "\n"
                       "user default off -@all\n"
                       "user gateway on @password@\n"
                       "  # a comment between a user's lines\n"
                       "  ~sp:* &sp:status\n"
                       "\t-@all +ping\r\n",
                       &users, &err);
    assert_non_null(acl);
    assert_int_equal(users, 2);
    assert_string_equal(acl, "user default off -@all\n"
                             "user gateway on "
                             /* printf pw-gateway | sha256sum */
                             "#1a17b3796b742547b7f617dd4c517d4b34776cefd0e279cb1e117fc2b9ed984d"
                             " ~sp:* &sp:status -@all +ping\n");
    free(acl);
}

static void
test_password_comes_from_the_callback_once_per_user(void **state)
{
    (void)state;
    err_t err = {0};
    int calls = 0;
    buf_t out = BUF_INIT;
    const char *t = "user a on @password@ +ping\nuser b on @password@ +ping\nuser c off\n";
    assert_int_equal(redis_acl_render(t, strlen(t), fake_password, &calls, &out, &err), 3);
    assert_int_equal(calls, 2);           /* c has no @password@: its file is never read */
    assert_null(strstr(out.data, "pw-")); /* no cleartext in the output */
    buf_free(&out);
}

static void
test_malformed_templates_are_refused_with_the_line(void **state)
{
    (void)state;
    err_t err = {0};
    static const struct {
        const char *tmpl, *why;
    } bad[] = {
        {"  +ping\n", "line 1: indented, but no user above"},
        {"# x\nuser a on\nfoo bar\n", "line 3: expected \"user NAME rules...\""},
        {"users a on\n", "line 1: expected"},
        {"user\n", "line 1: expected"},
        {"user a:b on\n", "line 1: \"user NAME\""},
        {"user a on\n\nuser a off\n", "line 3: user a twice"},
        {"user a on @password@ @password@\n", "line 1: @password@ twice for user a"},
        {"user a on x@password@\n", "is a rule of its own"},
        {"user a on >cleartext\n", "passwords come from files"},
        {"user a on nopass\n", "passwords come from files"},
        {"user a on #0123\n", "passwords come from files"},
        {"user nopw on @password@\n", "run/redis-nopw.password: No such file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_null(render(bad[i].tmpl, NULL, &err));
        if (!strstr(err.msg, bad[i].why))
            fail_msg("%s: got \"%s\", wanted \"%s\"", bad[i].tmpl, err.msg, bad[i].why);
    }
    const char nul[] = "user a on\0 +@all\n";
    buf_t out = BUF_INIT;
    assert_true(redis_acl_render(nul, sizeof nul - 1, fake_password, NULL, &out, &err) < 0);
    assert_non_null(strstr(err.msg, "NUL"));
    buf_free(&out);
}

static void
test_empty_template_renders_no_user(void **state)
{
    (void)state;
    err_t err = {0};
    int users = -1;
    char *acl = render("# nothing\n\n", &users, &err);
    assert_int_equal(users, 0);
    assert_string_equal(acl, "");
    free(acl);
}

/* redis/users.acl, the template make run, compose and the tests use (tests run from the top). */
static char *
users_acl(void)
{
    FILE *f = fopen("redis/users.acl", "r");
    if (!f)
        fail_msg("redis/users.acl: run the unit tests from the project's top directory");
    char *text = xcalloc(1, 65536);
    size_t n = fread(text, 1, 65535, f);
    fclose(f);
    text[n] = '\0';
    err_t err = {0};
    int users = 0;
    char *acl = render(text, &users, &err);
    free(text);
    if (!acl)
        fail_msg("redis/users.acl: %s", err.msg);
    assert_int_equal(users, 5); /* default, gateway, api, replica, sentinel */
    return acl;
}

/* The rendered line of user name (a copy with spaces around each rule, caller frees). */
static char *
user_line(const char *acl, const char *name)
{
    char *head = xasprintf("user %s ", name);
    const char *p = strstr(acl, head);
    free(head);
    assert_non_null(p);
    size_t n = strcspn(p, "\n");
    return xasprintf(" %.*s ", (int)n, p);
}

static void
test_users_acl_default_user_is_off_with_no_password(void **state)
{
    (void)state;
    char *acl = users_acl();
    char *d = user_line(acl, "default");
    static const char *const want[] = {" off ", " resetpass "};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(d, want[i]))
            fail_msg("default user: no \"%s\" in%s", want[i], d);
    /* nobody can be it: never on, no password, no nopass (its rights are for the AOF replay) */
    static const char *const never[] = {" on ", " nopass ", " >", " #"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (strstr(d, never[i]))
            fail_msg("default user: \"%s\" in%s", never[i], d);
    free(d);
    free(acl);
}

static void
test_users_acl_programs_have_passwords_no_dangerous_commands_and_sp_keys_only(void **state)
{
    (void)state;
    char *acl = users_acl();
    static const char *const users[] = {"gateway", "api"};
    /* (EVAL_RO is EVAL that may only read, whose calls Redis checks against these same rules:
     * no wider than the EVAL both users have) */
    static const char *const never[] = {
        " +@all ",     " +@dangerous ",   " +@admin ",    " +keys ",
        " +flushall ", " +flushdb ",      " +config ",    " +debug ",
        " +acl ",      " +shutdown ",     " +module ",    " +monitor ",
        " +script ",   " +function ",     " +subscribe ", " +psubscribe ",
        " +client ",   " allkeys ",       " ~* ",         " allchannels ",
        " &* ",        " nopass ",        " +migrate ",   " +restore ",
        " +save ",     " +bgrewriteaof ", " +replicaof ", " +sync ",
    };
    for (size_t u = 0; u < 2; u++) {
        char *line = user_line(acl, users[u]);
        assert_non_null(strstr(line, " on #"));
        assert_non_null(strstr(line, " -@all "));
        for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
            if (strstr(line, never[i]))
                fail_msg("user %s may%s", users[u], never[i]);
        /* every key pattern is under sp: */
        for (const char *k = strchr(line, '~'); k; k = strchr(k + 1, '~'))
            if (strncmp(k + 1, "sp:", 3))
                fail_msg("user %s: key pattern %.20s outside sp:", users[u], k);
        free(line);
    }
    char *api = user_line(acl, "api");
    assert_null(strstr(api, "&")); /* publishes nothing */
    assert_null(strstr(api, " ~sp:* "));
    free(api);
    free(acl);
}

/* The Sentinel set's users touch no key; a replica may only replicate. */
static void
test_users_acl_replica_and_sentinel_have_no_keys_and_their_commands_only(void **state)
{
    (void)state;
    char *acl = users_acl();
    char *replica = user_line(acl, "replica");
    assert_non_null(strstr(replica, " on #"));
    assert_non_null(strstr(replica, " resetkeys resetchannels -@all +psync +replconf +ping "));
    assert_null(strchr(replica, '~'));
    assert_null(strchr(replica, '&'));
    char *sentinel = user_line(acl, "sentinel");
    assert_non_null(strstr(sentinel, " on #"));
    assert_non_null(strstr(sentinel, " -@all "));
    assert_null(strchr(sentinel, '~'));
    static const char *const never[] = {" +@all ",   " +acl ",   " +keys ",     " +flushall ",
                                        " +config ", " +debug ", " +shutdown ", " allkeys "};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (strstr(sentinel, never[i]))
            fail_msg("user sentinel may%s", never[i]);
    free(replica);
    free(sentinel);
    free(acl);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comments_dropped_lines_joined_password_hashed),
        cmocka_unit_test(test_password_comes_from_the_callback_once_per_user),
        cmocka_unit_test(test_malformed_templates_are_refused_with_the_line),
        cmocka_unit_test(test_empty_template_renders_no_user),
        cmocka_unit_test(test_users_acl_default_user_is_off_with_no_password),
        cmocka_unit_test(test_users_acl_replica_and_sentinel_have_no_keys_and_their_commands_only),
        cmocka_unit_test(
            test_users_acl_programs_have_passwords_no_dangerous_commands_and_sp_keys_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
