/* gw_test_sandbox_record.c — what a sandbox is as data and where that comes from: its JSON
 * record (round trip, bad input, uid_range), the environment a provider gives it, the refusals
 * before anything is made, and the host's own record against a hostile one in Redis. Needs
 * root for the last (a real bwrap sandbox, provider_fixture.h). The sandboxes' behaviour:
 * gw_test_provider.c. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "need.h"

#include "gateway/sandbox/provider.h"
#include "gateway/sandbox/sandbox_host.h"
#include "json_util.h"
#include "xalloc.h"

#include "provider_fixture.h"

static void
test_sandbox_json_round_trip_and_bad_input(void **state)
{
    (void)state;
    sandbox_t a = {.pid = 42,
                   .start_time = 123456,
                   .cgroup_version = 1,
                   .memory_bytes = 2LL << 30,
                   .cpu_millicores = 1500};
    snprintf(a.id, sizeof a.id, "abc");
    snprintf(a.provider, sizeof a.provider, "bwrap");
    snprintf(a.dir, sizeof a.dir, "/s/abc");
    /* A record of the old layout: its socket sat where the sandbox could replace it. */
    snprintf(a.socket_path, sizeof a.socket_path, "/s/abc/run/executor.sock");
    snprintf(a.cgroup, sizeof a.cgroup, "sandpipe/abc");
    json_object *o = sandbox_to_json(&a);
    sandbox_t b;
    err_t err = {0};
    assert_int_equal(sandbox_from_json(o, &b, &err), 0);
    assert_int_equal(b.pid, 42);
    assert_int_equal(b.start_time, 123456);
    /* The socket path is derived from dir, never taken from the record. */
    assert_string_equal(b.socket_path, "/s/abc/ctl/executor.sock");
    assert_string_equal(b.cgroup, "sandpipe/abc");
    assert_int_equal(b.uid_range, 1); /* one uid unless a block was mapped */
    /* the limits it runs under, for showing (E2B's cpuCount, memoryMB) */
    assert_int_equal(b.memory_bytes, 2LL << 30);
    assert_int_equal(b.cpu_millicores, 1500);
    json_object_put(o);
    a.uid_range = SANDBOX_UID_WIDTH;
    o = sandbox_to_json(&a);
    assert_int_equal(sandbox_from_json(o, &b, &err), 0);
    assert_int_equal(b.uid_range, SANDBOX_UID_WIDTH);
    json_set_int(o, "uid_range", 7); /* a range it never had: not believed */
    assert_int_equal(sandbox_from_json(o, &b, &err), -ERR_BAD_REQ);
    json_set_int(o, "uid_range", 1);
    json_set_str(o, "pid", "42");
    assert_int_equal(sandbox_from_json(o, &b, &err), -ERR_BAD_REQ);
    json_object_put(o);
    assert_int_equal(sandbox_from_json(NULL, &b, &err), -ERR_BAD_REQ);
    assert_ptr_equal(provider_find("bwrap"), &provider_bwrap);
    assert_ptr_equal(provider_find("local"), &provider_local);
    assert_null(provider_find("docker-ish"));
}

static void
test_create_refuses_bad_id_and_env(void **state)
{
    (void)state;
    sandbox_t sb;
    err_t err = {0};
    sandbox_spec_t s = {.id = "../../etc", .state_dir = g_state, .executor_path = g_executor};
    assert_true(provider_bwrap.create(&s, &sb, &err) < 0);
    json_object *env = json_tokener_parse("{\"A\": 1}");
    char id[64];
    s = spec_for("badenv", id, sizeof id);
    s.env = env;
    assert_true(provider_local.create(&s, &sb, &err) < 0);
    json_object_put(env);
    /* Refused before anything was made. */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", g_state, id);
    assert_int_equal(access(p, F_OK), -1);
}

static const char *
env_value(char **envp, const char *key)
{
    size_t n = strlen(key);
    for (size_t i = 0; envp[i]; i++)
        if (!strncmp(envp[i], key, n) && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* An image with images/setup.sh's Python environment: its bin/ first on PATH, VIRTUAL_ENV set
 * (python, pip and the IPython kernel are the agent's own); without one, or with no image, the
 * system PATH alone; a session's env still overrides PATH. */
static void
test_env_puts_the_image_python_env_first(void **state)
{
    (void)state;
    char root[] = "/tmp/sp-envroot-XXXXXX", p[PATH_MAX + 64];
    assert_non_null(mkdtemp(root));
    sandbox_spec_t s = {.rootfs = root};
    err_t err = {0};
    char **envp = provider_env_new(&s, IMAGE_HOME, &err);
    assert_string_equal(env_value(envp, "PATH"),
                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    assert_null(env_value(envp, "VIRTUAL_ENV"));
    provider_env_free(envp);

    snprintf(p, sizeof p,
             "mkdir -p %s" IMAGE_PYTHON_ENV " && touch %s" IMAGE_PYTHON_ENV "/pyvenv.cfg", root,
             root);
    assert_int_equal(system(p), 0);
    envp = provider_env_new(&s, IMAGE_HOME, &err);
    assert_string_equal(env_value(envp, "PATH"), IMAGE_PYTHON_ENV
                        "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    assert_string_equal(env_value(envp, "VIRTUAL_ENV"), IMAGE_PYTHON_ENV);
    provider_env_free(envp);

    s.env = json_tokener_parse("{\"PATH\": \"/mine\"}");
    envp = provider_env_new(&s, IMAGE_HOME, &err);
    assert_string_equal(env_value(envp, "PATH"), "/mine");
    provider_env_free(envp);
    json_object_put(s.env);

    s.env = NULL;
    s.rootfs = NULL; /* no image: the host's /usr */
    envp = provider_env_new(&s, "/workspace", &err);
    assert_null(env_value(envp, "VIRTUAL_ENV"));
    provider_env_free(envp);
    snprintf(p, sizeof p, "rm -rf %s", root);
    assert_int_equal(system(p), 0);
}

/* A record in Redis names a sandbox; what it is comes from the host's own file, for the session
 * it was bound to. */
static void
test_sandbox_from_record_trusts_only_the_host(void **state)
{
    (void)state;
    need_bwrap();
    char id[64];
    sandbox_spec_t s = spec_for("rec", id, sizeof id);
    sandbox_t *sb = make(&provider_bwrap, &s);
    err_t err = {0};
    assert_int_equal(sandbox_host_save(sb, "", &err), 0);
    /* A hostile record: another directory, pid, cgroup and uid. */
    json_object *ref = sandbox_to_json(sb);
    json_set_str(ref, "dir", "/etc");
    json_set_str(ref, "workspace", "/root");
    json_set_str(ref, "cgroup", "../../..");
    json_set_int(ref, "pid", 1);
    json_set_int(ref, "uid", 0);
    sandbox_t got;
    assert_int_equal(sandbox_from_record(ref, g_state, "s-1", &got, &err), 0);
    assert_string_equal(got.dir, sb->dir);
    assert_string_equal(got.workspace, sb->workspace);
    assert_string_equal(got.cgroup, sb->cgroup);
    assert_int_equal(got.pid, sb->pid);
    assert_int_equal(got.uid, sb->uid);
    /* now bound to s-1: another session, or the pool, is refused */
    assert_int_equal(sandbox_from_record(ref, g_state, "s-2", &got, &err), -EACCES);
    assert_int_equal(sandbox_from_record(ref, g_state, NULL, &got, &err), -EACCES);
    assert_int_equal(sandbox_from_record(ref, g_state, "s-1", &got, &err), 0);
    /* ids that are paths, and sandboxes this host does not have */
    const char *bad[] = {"..", "../x", "a/b", "", "nosuch"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_set_str(ref, "id", bad[i]);
        assert_true(sandbox_from_record(ref, g_state, "s-1", &got, &err) < 0);
    }
    /* a link in place of the ctl directory is not followed */
    char p[PATH_MAX + 64], q[PATH_MAX + 64];
    snprintf(p, sizeof p, "%.200s/fake", g_state);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(q, sizeof q, "%.200s/fake/ctl", g_state);
    snprintf(p, sizeof p, "%.300s/" PROVIDER_CTL_DIR, sb->dir);
    assert_int_equal(symlink(p, q), 0);
    json_set_str(ref, "id", "fake");
    assert_int_equal(sandbox_from_record(ref, g_state, "s-1", &got, &err), -ENOENT);
    unlink(q);
    snprintf(p, sizeof p, "%.200s/fake", g_state);
    rmdir(p);
    json_object_put(ref);
}

int
main(void)
{
    if (fixture_init() < 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sandbox_json_round_trip_and_bad_input),
        cmocka_unit_test(test_env_puts_the_image_python_env_first),
        cmocka_unit_test_setup_teardown(test_create_refuses_bad_id_and_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sandbox_from_record_trusts_only_the_host, setup,
                                        teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fixture_done();
    return rc;
}
