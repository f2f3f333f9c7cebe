/* gw_test_envd_fs.c — gateway/envd_path and gateway/envd_entry, the pure halves of envd's
 * filesystem service: paths made absolute and clean as envd's ExpandAndResolve makes them (Go's
 * filepath.Join and Clean), Go's FileMode.String(), protobuf's Timestamp JSON, an EntryInfo from
 * the executor's details (a symlink typed as its target, mode its permission bits), and the
 * executor's file.watch events as envd's FilesystemEvents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gateway/envd_entry.h"
#include "gateway/envd_path.h"
#include "json_util.h"

static const char *
abs_of(const char *home, const char *path)
{
    static char out[ENVD_PATH_MAX];
    char why[300];
    if (envd_path_abs(home, path, strlen(path), out, sizeof out, why, sizeof why) < 0)
        return NULL;
    return out;
}

static void
test_paths_are_made_absolute_and_clean_as_envd_does(void **state)
{
    (void)state;
    const char *home = "/home/user";
    const struct {
        const char *in, *want;
    } cases[] = {
        {"", "/home/user"},
        {"~", "/home/user"},
        {"~/", "/home/user"},
        {"~/a/b.txt", "/home/user/a/b.txt"},
        {"rel.txt", "/home/user/rel.txt"},
        {"./a/../b/", "/home/user/b"},
        {"../../../../x", "/x"},
        {"/tmp//a/./b/../c/", "/tmp/a/c"},
        {"/", "/"},
        {"/..", "/"},
        {"//", "/"},
        {"/a/b/..", "/a"},
        {"/a/..b/c", "/a/..b/c"},
        {"/a/.../c", "/a/.../c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = abs_of(home, cases[i].in);
        if (!got || strcmp(got, cases[i].want) != 0)
            fail_msg("%s: want %s, got %s", cases[i].in, cases[i].want, got ? got : "(refused)");
    }
}

static void
test_paths_envd_refuses(void **state)
{
    (void)state;
    char out[ENVD_PATH_MAX], why[300];
    assert_null(abs_of("/home/user", "~root/x"));
    assert_int_equal(envd_path_abs("/h", "a\0b", 3, out, sizeof out, why, sizeof why), -1);
    assert_non_null(strstr(why, "NUL"));
    /* no home known: only absolute paths name something */
    assert_null(abs_of("", "rel"));
    assert_null(abs_of("", "~/x"));
    assert_string_equal(abs_of("", "/abs/x"), "/abs/x");
    char longp[ENVD_PATH_MAX + 10];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    assert_null(abs_of("/h", longp));
}

static void
test_rel_and_base(void **state)
{
    (void)state;
    assert_string_equal(envd_path_rel("/tmp/w", "/tmp/w/a/b"), "a/b");
    assert_string_equal(envd_path_rel("/tmp/w", "/tmp/w"), ".");
    assert_null(envd_path_rel("/tmp/w", "/tmp/wx/a"));
    assert_null(envd_path_rel("/tmp/w", "/tmp"));
    assert_string_equal(envd_path_rel("/", "/etc/hosts"), "etc/hosts");
    assert_string_equal(envd_path_base("/tmp/w/a.txt"), "a.txt");
    assert_string_equal(envd_path_base("/"), "/");
}

static void
test_permissions_are_go_file_mode_strings(void **state)
{
    (void)state;
    char p[ENVD_PERMISSIONS_MAX];
    const struct {
        const char *kind;
        unsigned mode;
        const char *want;
    } cases[] = {
        {"file", 0644, "-rw-r--r--"},
        {"directory", 0755, "drwxr-xr-x"},
        {"symlink", 0777, "Lrwxrwxrwx"},
        {"directory", 01777, "dtrwxrwxrwx"},
        {"file", 04755, "urwxr-xr-x"},
        {"file", 06750, "ugrwxr-x---"},
        {"char_device", 0666, "Dcrw-rw-rw-"},
        {"block_device", 0660, "Drw-rw----"},
        {"fifo", 0600, "prw-------"},
        {"socket", 0755, "Srwxr-xr-x"},
        {"file", 0, "----------"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        envd_permissions(cases[i].kind, cases[i].mode, p);
        assert_string_equal(p, cases[i].want);
    }
}

static void
test_timestamps_are_protobuf_json(void **state)
{
    (void)state;
    char t[ENVD_TIMESTAMP_MAX];
    envd_timestamp(0, t);
    assert_string_equal(t, "1970-01-01T00:00:00Z");
    envd_timestamp(1767225600500000000LL, t);
    assert_string_equal(t, "2026-01-01T00:00:00.500Z");
    envd_timestamp(1767225600000001000LL, t);
    assert_string_equal(t, "2026-01-01T00:00:00.000001Z");
    envd_timestamp(1767225600123456789LL, t);
    assert_string_equal(t, "2026-01-01T00:00:00.123456789Z");
    envd_timestamp(-1, t);
    assert_string_equal(t, "1969-12-31T23:59:59.999999999Z");
    envd_timestamp(INT64_MAX, t); /* int64 nanoseconds end in 2262 */
    assert_string_equal(t, "2262-04-11T23:47:16.854775807Z");
    envd_timestamp(INT64_MIN, t);
    assert_string_equal(t, "1677-09-21T00:12:43.145224192Z");
}

static json_object *
parse(const char *text)
{
    err_t err = {0};
    json_object *o = json_parse(text, strlen(text), &err);
    assert_non_null(o);
    return o;
}

static void
test_entry_info_as_envd_fills_it(void **state)
{
    (void)state;
    json_object *st =
        parse("{\"path\":\"/real/f\",\"type\":\"file\",\"kind\":\"file\",\"size\":174,"
              "\"mode\":\"0640\",\"mtime_ns\":1767225600500000000,\"owner\":\"user\","
              "\"group\":\"staff\"}");
    json_object *e = envd_entry_info(st, "/etc/f");
    assert_string_equal(json_get_str(e, "name", ""), "f");
    assert_string_equal(json_get_str(e, "type", ""), "FILE_TYPE_FILE");
    assert_string_equal(json_get_str(e, "path", ""), "/etc/f"); /* as asked, not resolved */
    assert_string_equal(json_get_str(e, "size", ""), "174");    /* int64: a string */
    assert_int_equal(json_get_int(e, "mode", 0), 0640);
    assert_string_equal(json_get_str(e, "permissions", ""), "-rw-r-----");
    assert_string_equal(json_get_str(e, "owner", ""), "user");
    assert_string_equal(json_get_str(e, "group", ""), "staff");
    assert_string_equal(json_get_str(e, "modifiedTime", ""), "2026-01-01T00:00:00.500Z");
    assert_null(json_get(e, "symlinkTarget"));
    json_object_put(e);
    json_object_put(st);

    /* a symlink: its target's type and mode, its own permissions, where it resolves */
    st = parse(
        "{\"type\":\"symlink\",\"kind\":\"symlink\",\"size\":4,\"mode\":\"0777\","
        "\"resolved\":\"/tmp/d\",\"resolved_kind\":\"directory\",\"resolved_mode\":\"0750\"}");
    e = envd_entry_info(st, "/tmp/link");
    assert_string_equal(json_get_str(e, "type", ""), "FILE_TYPE_DIRECTORY");
    assert_int_equal(json_get_int(e, "mode", 0), 0750);
    assert_string_equal(json_get_str(e, "permissions", ""), "Lrwxrwxrwx");
    assert_string_equal(json_get_str(e, "symlinkTarget", ""), "/tmp/d");
    json_object_put(e);
    json_object_put(st);

    /* dangling: no type (the SDK drops it from a list), the link itself as its target */
    st = parse("{\"type\":\"symlink\",\"kind\":\"symlink\",\"mode\":\"0777\"}");
    e = envd_entry_info(st, "/tmp/gone");
    assert_null(json_get(e, "type"));
    assert_int_equal(json_get_int(e, "mode", -1), 0);
    assert_string_equal(json_get_str(e, "symlinkTarget", ""), "/tmp/gone");
    json_object_put(e);
    json_object_put(st);

    /* what a sandbox may send instead: wrong types read as zero values */
    st = parse("{\"kind\":7,\"size\":\"huge\",\"mode\":\"9z\",\"mtime_ns\":\"x\",\"owner\":[]}");
    e = envd_entry_info(st, "/x");
    assert_null(json_get(e, "type"));
    assert_string_equal(json_get_str(e, "size", ""), "0");
    assert_string_equal(json_get_str(e, "permissions", ""), "----------");
    assert_string_equal(json_get_str(e, "owner", "?"), "");
    json_object_put(e);
    json_object_put(st);
}

static void
test_watch_events_as_envd_reports_them(void **state)
{
    (void)state;
    const struct {
        const char *event, *path, *want_type, *want_name;
    } cases[] = {
        {"created", "/real/w/a.txt", "EVENT_TYPE_CREATE", "a.txt"},
        {"moved_to", "/real/w/sub/b", "EVENT_TYPE_CREATE", "sub/b"},
        {"modified", "/real/w/a.txt", "EVENT_TYPE_WRITE", "a.txt"},
        {"deleted", "/real/w/a.txt", "EVENT_TYPE_REMOVE", "a.txt"},
        {"moved_from", "/real/w/a.txt", "EVENT_TYPE_RENAME", "a.txt"},
        {"attrib", "/real/w/a.txt", "EVENT_TYPE_CHMOD", "a.txt"},
        {"deleted_self", "/real/w", "EVENT_TYPE_REMOVE", "."},
        {"closed_write", "/real/w/a.txt", NULL, NULL},             /* fsnotify does not watch it */
        {"deleted_self", "/real/w/sub", NULL, NULL},               /* its parent said "deleted" */
        {"created", "/real/w//x/./y", "EVENT_TYPE_CREATE", "x/y"}, /* cleaned first */
        {"created", "/real/w/../escape", NULL, NULL},
        {"created", "/elsewhere/x", NULL, NULL},
        {"created", "relative", NULL, NULL},
        {"overflow", "/real/w/a", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *ev = json_object_new_object();
        json_set_str(ev, "event", cases[i].event);
        json_set_str(ev, "path", cases[i].path);
        json_object *fe = envd_watch_event(ev, "/real/w", "/tmp/w", false);
        if (!cases[i].want_type) {
            if (fe)
                fail_msg("%s %s: reported, not expected", cases[i].event, cases[i].path);
        } else {
            assert_non_null(fe);
            assert_string_equal(json_get_str(fe, "type", ""), cases[i].want_type);
            assert_string_equal(json_get_str(fe, "name", ""), cases[i].want_name);
            assert_null(json_get(fe, "entry"));
        }
        json_object_put(fe);
        json_object_put(ev);
    }
    /* an entry for a create, write or chmod when asked, at the path the client named */
    json_object *ev = parse("{\"event\":\"created\",\"path\":\"/real/w/sub/n\",\"stat\":{"
                            "\"kind\":\"file\",\"size\":3,\"mode\":\"0644\"}}");
    json_object *fe = envd_watch_event(ev, "/real/w", "/tmp/w", true);
    json_object *entry = json_get(fe, "entry");
    assert_non_null(entry);
    assert_string_equal(json_get_str(entry, "path", ""), "/tmp/w/sub/n");
    assert_string_equal(json_get_str(entry, "name", ""), "n");
    json_object_put(fe);
    json_object_put(ev);
    ev = parse("{\"event\":\"deleted\",\"path\":\"/real/w/n\",\"stat\":{\"kind\":\"file\"}}");
    fe = envd_watch_event(ev, "/real/w", "/tmp/w", true);
    assert_null(json_get(fe, "entry"));
    json_object_put(fe);
    json_object_put(ev);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_are_made_absolute_and_clean_as_envd_does),
        cmocka_unit_test(test_paths_envd_refuses),
        cmocka_unit_test(test_rel_and_base),
        cmocka_unit_test(test_permissions_are_go_file_mode_strings),
        cmocka_unit_test(test_timestamps_are_protobuf_json),
        cmocka_unit_test(test_entry_info_as_envd_fills_it),
        cmocka_unit_test(test_watch_events_as_envd_reports_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
