/* test_jwt_secret.c — the JWT secret files (generate, load, refuse weak or unsafe ones) and
 * where tokens come from (Authorization header, WebSocket protocol header, query string). */
#include "jwt_fixture.h"

/* ---- secret files ------------------------------------------------------------------------- */

static char dir[64];

static int
secret_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_jwt.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int
secret_teardown(void **state)
{
    (void)state;
    char *cmd = xasprintf("rm -rf '%s'", dir);
    int r = system(cmd);
    free(cmd);
    return r == 0 ? 0 : -1;
}

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

static void
test_secret_generate_creates_0600_hex_file_that_loads(void **state)
{
    (void)state;
    char *path = xasprintf("%s/secret", dir);
    err_t err = {0};
    mode_t old = umask(0);
    assert_int_equal(jwt_secret_generate(path, &err), 0);
    umask(old);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_size, 65);

    char text[80] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fread(text, 1, sizeof text - 1, f), 65);
    fclose(f);
    assert_int_equal(strspn(text, "0123456789abcdef"), 64);
    assert_int_equal(text[64], '\n');

    uint8_t key[JWT_SECRET_MAX];
    size_t len = 0;
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), 0);
    assert_int_equal(len, 32);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        assert_int_equal(sscanf(text + 2 * i, "%2x", &v), 1);
        assert_int_equal(key[i], v);
    }
    /* A token signed with it verifies with it. */
    jwt_claims_t c = claims("a", "admin", "", NOW + 60);
    char *tok = jwt_sign(key, len, &c);
    assert_int_equal(jwt_verify(key, len, tok, NOW, NULL, &err), 0);
    free(tok);

    /* Never clobbers: the second call fails and the first secret stays. */
    assert_int_equal(jwt_secret_generate(path, &err), -EEXIST);
    assert_non_null(strstr(err.msg, "already exists"));
    uint8_t again[JWT_SECRET_MAX];
    size_t again_len = 0;
    assert_int_equal(jwt_secret_load(path, again, sizeof again, &again_len, &err), 0);
    assert_memory_equal(key, again, 32);

    /* Two generated secrets differ, and no temporary files are left behind. */
    char *path2 = xasprintf("%s/secret2", dir);
    assert_int_equal(jwt_secret_generate(path2, &err), 0);
    assert_int_equal(jwt_secret_load(path2, again, sizeof again, &again_len, &err), 0);
    assert_memory_not_equal(key, again, 32);
    char *cmd = xasprintf("test $(ls -A '%s' | wc -l) -eq 2", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(path2);
    free(path);

    path = xasprintf("%s/no/such/dir/secret", dir);
    assert_int_equal(jwt_secret_generate(path, &err), -ENOENT);
    free(path);
}

static void
test_secret_load_reads_hex_or_raw(void **state)
{
    (void)state;
    uint8_t key[JWT_SECRET_MAX];
    size_t len = 0;
    err_t err = {0};
    const char hex[] = "000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f\r\n";
    char *path = write_file("hex", hex, sizeof hex - 1, 0600);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), 0);
    assert_int_equal(len, 32);
    for (size_t i = 0; i < 32; i++)
        assert_int_equal(key[i], i);
    free(path);

    /* Not hex: the bytes themselves, less one trailing newline. */
    const char raw[] = "correct horse battery staple, 34 b\n";
    path = write_file("raw", raw, sizeof raw - 1, 0640);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), 0);
    assert_int_equal(len, sizeof raw - 2);
    assert_memory_equal(key, raw, len);
    free(path);

    /* Raw bytes may be anything, NULs included. */
    uint8_t bin[40];
    for (size_t i = 0; i < sizeof bin; i++)
        bin[i] = (uint8_t)(i * 37);
    path = write_file("bin", (const char *)bin, sizeof bin, 0400);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), 0);
    assert_int_equal(len, sizeof bin);
    assert_memory_equal(key, bin, sizeof bin);
    free(path);
}

static void
test_secret_load_refuses_weak_or_unsafe_files(void **state)
{
    (void)state;
    uint8_t key[JWT_SECRET_MAX];
    size_t len = 99;
    err_t err = {0};
    /* 31 bytes of hex-decoded secret, and 31 raw bytes: too short. */
    const char short_hex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e\n";
    char *path = write_file("short_hex", short_hex, sizeof short_hex - 1, 0600);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -ERR_BAD_REQ);
    assert_non_null(strstr(err.msg, "shorter than 32"));
    assert_int_equal(len, 0);
    free(path);
    path = write_file("short_raw", "thirty-one bytes of passphrase!", 31, 0600);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -ERR_BAD_REQ);
    free(path);
    path = write_file("empty", "", 0, 0600);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -ERR_BAD_REQ);
    free(path);

    /* Anyone who can write the file can mint tokens. */
    const char hex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
    path = write_file("group_writable", hex, sizeof hex - 1, 0620);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -EACCES);
    assert_non_null(strstr(err.msg, "writable"));
    free(path);
    path = write_file("world_writable", hex, sizeof hex - 1, 0602);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -EACCES);
    free(path);

    /* Bigger than the caller's buffer, bigger than any secret file. */
    path = write_file("fits_not", hex, sizeof hex - 1, 0600);
    assert_int_equal(jwt_secret_load(path, key, 31, &len, &err), -ERR_TOO_BIG);
    free(path);
    char big[2 * JWT_SECRET_MAX + 3];
    memset(big, 'z', sizeof big);
    path = write_file("big", big, sizeof big, 0600);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -ERR_TOO_BIG);
    free(path);

    assert_int_equal(jwt_secret_load(dir, key, sizeof key, &len, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));
    path = xasprintf("%s/missing", dir);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -ENOENT);
    free(path);
    path = xasprintf("%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(jwt_secret_load(path, key, sizeof key, &len, &err), -EINVAL);
    free(path);
}

/* ---- where tokens come from --------------------------------------------------------------- */

static void
test_bearer_from_authorization_header(void **state)
{
    (void)state;
    const char *tok = "x";
    assert_int_equal(jwt_bearer_from_header("Bearer abc.def.ghi", &tok), 0);
    assert_string_equal(tok, "abc.def.ghi");
    assert_int_equal(jwt_bearer_from_header("bearer abc", &tok), 0);
    assert_string_equal(tok, "abc");
    assert_int_equal(jwt_bearer_from_header("BEARER   abc", &tok), 0);
    assert_string_equal(tok, "abc");
    assert_int_equal(jwt_bearer_from_header(NULL, &tok), -ERR_NOT_FOUND);
    assert_null(tok);
    assert_int_equal(jwt_bearer_from_header("", &tok), -ERR_NOT_FOUND);
    assert_int_equal(jwt_bearer_from_header("Basic dXNlcjpwYXNz", &tok), -ERR_AUTH);
    assert_null(tok);
    assert_int_equal(jwt_bearer_from_header("Bearer", &tok), -ERR_AUTH);
    assert_int_equal(jwt_bearer_from_header("Bearer ", &tok), -ERR_AUTH);
    assert_int_equal(jwt_bearer_from_header("Bearerabc", &tok), -ERR_AUTH);
    assert_int_equal(jwt_bearer_from_header("Bear abc", &tok), -ERR_AUTH);

    char *header = xasprintf("Bearer %s", KAT_ALICE);
    assert_int_equal(jwt_bearer_from_header(header, &tok), 0);
    err_t err = {0};
    assert_int_equal(verify(tok, NULL, &err), 0);
    free(header);
}

static void
test_token_from_websocket_protocol_header(void **state)
{
    (void)state;
    char out[JWT_BUF_LEN];
    assert_int_equal(jwt_token_from_ws_protocol("sandpipe.v1, bearer.abc.def.ghi", out, sizeof out),
                     0);
    assert_string_equal(out, "abc.def.ghi");
    assert_int_equal(jwt_token_from_ws_protocol("bearer.abc,sandpipe.v1", out, sizeof out), 0);
    assert_string_equal(out, "abc");
    assert_int_equal(jwt_token_from_ws_protocol("  bearer.abc  ", out, sizeof out), 0);
    assert_string_equal(out, "abc");
    assert_int_equal(jwt_token_from_ws_protocol("sandpipe.v1", out, sizeof out), -ERR_NOT_FOUND);
    assert_string_equal(out, "");
    assert_int_equal(jwt_token_from_ws_protocol(NULL, out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_ws_protocol("", out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_ws_protocol("Bearer.abc", out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_ws_protocol("xbearer.abc", out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_ws_protocol("sandpipe.v1, bearer.", out, sizeof out),
                     -ERR_AUTH);
    assert_int_equal(jwt_token_from_ws_protocol("bearer.a, bearer.b", out, sizeof out), -ERR_AUTH);
    assert_int_equal(jwt_token_from_ws_protocol("bearer.abcd", out, 4), -ERR_AUTH);
    assert_int_equal(jwt_token_from_ws_protocol("bearer.abc", out, 4), 0);

    char *header = xasprintf("%s, %s%s", JWT_WS_PROTOCOL, JWT_WS_BEARER_PREFIX, KAT_ALICE);
    assert_int_equal(jwt_token_from_ws_protocol(header, out, sizeof out), 0);
    err_t err = {0};
    assert_int_equal(verify(out, NULL, &err), 0);
    free(header);
}

static void
test_token_from_query_string(void **state)
{
    (void)state;
    char out[JWT_BUF_LEN];
    assert_int_equal(jwt_token_from_query("token=abc", out, sizeof out), 0);
    assert_string_equal(out, "abc");
    assert_int_equal(jwt_token_from_query("?a=1&token=a.b.c&b=2", out, sizeof out), 0);
    assert_string_equal(out, "a.b.c");
    assert_int_equal(jwt_token_from_query("a=1&token=abc#token=zzz", out, sizeof out), 0);
    assert_string_equal(out, "abc");
    assert_int_equal(jwt_token_from_query("xtoken=abc&tokens=1", out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_query("", out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_query(NULL, out, sizeof out), -ERR_NOT_FOUND);
    assert_int_equal(jwt_token_from_query("a=1&token=", out, sizeof out), -ERR_AUTH);
    assert_int_equal(jwt_token_from_query("token", out, sizeof out), -ERR_AUTH);
    assert_int_equal(jwt_token_from_query("token=a&token=b", out, sizeof out), -ERR_AUTH);
    assert_int_equal(jwt_token_from_query("token=abcd", out, 4), -ERR_AUTH);
    /* No percent-decoding: an encoded token is passed on as it is and fails verification. */
    assert_int_equal(jwt_token_from_query("token=a%2Eb", out, sizeof out), 0);
    assert_string_equal(out, "a%2Eb");

    char *q = xasprintf("session=s1&token=%s", KAT_ALICE);
    assert_int_equal(jwt_token_from_query(q, out, sizeof out), 0);
    err_t err = {0};
    assert_int_equal(verify(out, NULL, &err), 0);
    free(q);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_secret_generate_creates_0600_hex_file_that_loads,
                                        secret_setup, secret_teardown),
        cmocka_unit_test_setup_teardown(test_secret_load_reads_hex_or_raw, secret_setup,
                                        secret_teardown),
        cmocka_unit_test_setup_teardown(test_secret_load_refuses_weak_or_unsafe_files, secret_setup,
                                        secret_teardown),
        cmocka_unit_test(test_bearer_from_authorization_header),
        cmocka_unit_test(test_token_from_websocket_protocol_header),
        cmocka_unit_test(test_token_from_query_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
