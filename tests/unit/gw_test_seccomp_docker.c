/* gw_test_seccomp_docker.c — the Docker form of the sandboxes' seccomp rules (seccomp.h): valid
 * JSON Docker reads, the same rules as the BPF bwrap gets (errnos, the CLONE_NEWUSER argument
 * test), built once; and the BPF bwrap reads, compiled once, each sandbox reading all of it. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway/sandbox/seccomp.h"
#include "json_util.h"

/* The rule naming call, or NULL. */
static json_object *
rule_for(json_object *calls, const char *call)
{
    for (size_t i = 0; i < json_object_array_length(calls); i++) {
        json_object *r = json_object_array_get_idx(calls, i);
        json_object *names = json_get(r, "names");
        for (size_t k = 0; k < json_object_array_length(names); k++)
            if (!strcmp(json_object_get_string(json_object_array_get_idx(names, k)), call))
                return r;
    }
    return NULL;
}

static void
test_profile_allows_by_default_and_denies_the_rules(void **state)
{
    (void)state;
    const char *text = seccomp_docker_profile();
    json_object *p = json_tokener_parse(text);
    assert_non_null(p);
    assert_string_equal(json_get_str(p, "defaultAction", ""), "SCMP_ACT_ALLOW");
    assert_true(json_object_array_length(json_get(p, "architectures")) >= 1);
    json_object *calls = json_get(p, "syscalls");
    static const struct {
        const char *call;
        int err;
    } want[] = {{"mount", EPERM},
                {"keyctl", EPERM},
                {"bpf", EPERM},
                {"setns", EPERM},
                {"io_uring_setup", ENOSYS},
                {"clone3", ENOSYS},
                {"open_by_handle_at", EPERM}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_object *r = rule_for(calls, want[i].call);
        assert_non_null(r);
        assert_string_equal(json_get_str(r, "action", ""), "SCMP_ACT_ERRNO");
        assert_int_equal(json_get_int(r, "errnoRet", 0), want[i].err);
        assert_null(json_get(r, "args"));
    }
    assert_null(rule_for(calls, "ptrace")); /* allowed, as for bwrap */
    assert_null(rule_for(calls, "read"));
    json_object_put(p);
}

static void
test_unshare_and_clone_are_denied_only_with_clone_newuser(void **state)
{
    (void)state;
    json_object *p = json_tokener_parse(seccomp_docker_profile());
    const char *calls[] = {"unshare", "clone"};
    for (size_t i = 0; i < 2; i++) {
        json_object *r = rule_for(json_get(p, "syscalls"), calls[i]);
        assert_non_null(r);
        json_object *args = json_get(r, "args");
        assert_int_equal(json_object_array_length(args), 1);
        json_object *a = json_object_array_get_idx(args, 0);
        assert_string_equal(json_get_str(a, "op", ""), "SCMP_CMP_MASKED_EQ");
        assert_int_equal(json_get_int(a, "value", 0), CLONE_NEWUSER);
        assert_int_equal(json_get_int(a, "valueTwo", 0), CLONE_NEWUSER);
        assert_int_equal(json_get_int(a, "index", -1), 0);
    }
    json_object_put(p);
}

static void
test_profile_is_built_once(void **state)
{
    (void)state;
    assert_ptr_equal(seccomp_docker_profile(), seccomp_docker_profile());
}

static void
test_bpf_is_compiled_once_and_each_caller_reads_it_whole(void **state)
{
    (void)state;
    err_t err = {0};
    int a = seccomp_filter_fd(&err), b = seccomp_filter_fd(&err);
    assert_true(a >= 0 && b >= 0);
    struct stat sa, sb;
    assert_int_equal(fstat(a, &sa), 0);
    assert_int_equal(fstat(b, &sb), 0);
    assert_int_equal(sa.st_ino, sb.st_ino); /* one program, compiled once */
    assert_true(sa.st_size > 0 && sa.st_size % 8 == 0 && sa.st_size <= 65536); /* sock_filters */
    static char x[65536], y[65536];
    assert_int_equal(read(a, x, sizeof x), sa.st_size); /* from offset 0, whatever b did */
    assert_int_equal(read(b, y, sizeof y), sb.st_size);
    assert_memory_equal(x, y, (size_t)sa.st_size);
    assert_int_equal(write(a, "x", 1), -1); /* read-only, and sealed */
    close(a);
    close(b);
    int c = seccomp_filter_fd(&err);
    assert_int_equal(read(c, y, sizeof y), sa.st_size);
    close(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_allows_by_default_and_denies_the_rules),
        cmocka_unit_test(test_unshare_and_clone_are_denied_only_with_clone_newuser),
        cmocka_unit_test(test_profile_is_built_once),
        cmocka_unit_test(test_bpf_is_compiled_once_and_each_caller_reads_it_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
