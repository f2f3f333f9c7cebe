/* gw_test_seccomp_docker.c — the Docker form of the sandboxes' seccomp rules (seccomp.h): valid
 * JSON Docker reads, the same rules as the BPF bwrap gets (errnos, the CLONE_NEWUSER argument
 * test), built once. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_allows_by_default_and_denies_the_rules),
        cmocka_unit_test(test_unshare_and_clone_are_denied_only_with_clone_newuser),
        cmocka_unit_test(test_profile_is_built_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
