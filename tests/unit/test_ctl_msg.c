/* test_ctl_msg.c — the API's control requests to a gateway: their bodies both ways
 * (common/ctl_msg.c) and their credential (common/ctl_token.c): what a gateway accepts, and
 * every client token or forged one it must refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctl_msg.h"
#include "ctl_token.h"
#include "jwt.h"

#define NOW 1700000000

static const uint8_t secret[] = "0123456789abcdef0123456789abcdef-test";
#define SECRET_LEN (sizeof secret - 1)

static json_object *
decode(const char *body, ctl_request_t *q, err_t *err)
{
    return ctl_request_decode(body, strlen(body), q, err);
}

static void
test_request_decode_takes_op_and_who(void **state)
{
    (void)state;
    ctl_request_t q;
    err_t err = {0};
    json_object *o = decode("{\"op\":\"session.pause\",\"owner\":\"alice\",\"role\":\"user\","
                            "\"viewer_session\":\"\",\"session\":\"s-1\"}",
                            &q, &err);
    assert_non_null(o);
    assert_string_equal(q.op, "session.pause");
    assert_string_equal(q.owner, "alice");
    assert_string_equal(q.role, "user");
    assert_string_equal(q.viewer_session, "");
    json_object_put(o);
    /* owner and viewer_session absent: empty (ops_dispatch then refuses what needs them) */
    o = decode("{\"op\":\"pool\",\"role\":\"admin\"}", &q, &err);
    assert_non_null(o);
    assert_string_equal(q.owner, "");
    assert_string_equal(q.viewer_session, "");
    json_object_put(o);
}

static void
test_request_decode_refuses_what_is_not_a_request(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "[]",
        "\"op\"",
        "{}",
        "{\"op\":\"pool\"}", /* no role */
        "{\"op\":7}",
        "{\"op\":\"\"}",
        "{\"op\":\"a\\u0000b\"}",
        "{\"op\":\"x\",\"owner\":1}",
        "{\"op\":\"x\",\"viewer_session\":null}",
        "{\"op\":\"x\",\"role\":\"root\"}",
        "{\"op\":\"x\",\"role\":\"internal\"}",
        "{\"op\":\"x\"",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ctl_request_t q;
        err_t err = {0};
        assert_null(decode(bad[i], &q, &err));
        assert_int_equal(err.code, ERR_BAD_REQ);
        assert_true(err.msg[0] != '\0');
    }
    char op[CTL_OP_MAX + 32];
    memset(op, 'a', CTL_OP_MAX + 1);
    op[CTL_OP_MAX + 1] = '\0';
    char body[256];
    snprintf(body, sizeof body, "{\"op\":\"%s\",\"role\":\"user\"}", op);
    ctl_request_t q;
    err_t err = {0};
    assert_null(decode(body, &q, &err));
    op[CTL_OP_MAX] = '\0';
    snprintf(body, sizeof body, "{\"op\":\"%s\",\"role\":\"user\"}", op);
    json_object *o = decode(body, &q, &err);
    assert_non_null(o);
    json_object_put(o);
}

static void
test_answers_round_trip(void **state)
{
    (void)state;
    json_object *r = json_object_new_object();
    json_object_object_add(r, "id", json_object_new_string("s-1"));
    size_t len;
    char *t = ctl_answer_ok(r, &len);
    assert_string_equal(t, "{\"ok\":true,\"result\":{\"id\":\"s-1\"}}");
    json_object *res, *e;
    err_t err = {0};
    assert_int_equal(ctl_answer_decode(t, len, &res, &e, &err), 1);
    assert_null(e);
    assert_string_equal(json_object_get_string(json_object_object_get(res, "id")), "s-1");
    json_object_put(res);
    free(t);

    e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_string("not_found"));
    json_object_object_add(e, "message", json_object_new_string("no such session"));
    t = ctl_answer_fail(e, &len);
    assert_int_equal(ctl_answer_decode(t, len, &res, &e, &err), 0);
    assert_null(res);
    assert_string_equal(json_object_get_string(json_object_object_get(e, "code")), "not_found");
    json_object_put(e);
    free(t);

    assert_int_equal(ctl_answer_decode("{\"ok\":true}", 11, &res, &e, &err), 1);
    assert_true(json_object_is_type(res, json_type_object));
    json_object_put(res);
}

static void
test_answer_decode_refuses_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "null",
        "[]",
        "{}",
        "{\"ok\":1}",
        "{\"ok\":\"true\"}",
        "{\"ok\":false}",
        "{\"ok\":false,\"error\":\"x\"}",
        "{\"ok\":false,\"error\":{\"code\":\"x\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *res = (json_object *)1, *e = (json_object *)1;
        err_t err = {0};
        assert_int_equal(ctl_answer_decode(bad[i], strlen(bad[i]), &res, &e, &err), -ERR_PROTO);
        assert_null(res);
        assert_null(e);
    }
}

static void
test_control_token_verifies_only_as_control_token(void **state)
{
    (void)state;
    int64_t exp = 0;
    char *t = ctl_token_mint(secret, SECRET_LEN, NOW, &exp);
    assert_non_null(t);
    assert_int_equal(exp, NOW + CTL_TOKEN_TTL);
    err_t err = {0};
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, t, NOW, &err), 0);
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, t, NOW + CTL_TOKEN_TTL, &err),
                     -ERR_AUTH_EXPIRED);
    /* it is no client token: the secret itself does not verify it */
    jwt_claims_t c;
    assert_int_equal(jwt_verify(secret, SECRET_LEN, t, NOW, &c, &err), -ERR_AUTH);
    /* another deployment's secret */
    static const uint8_t other[] = "another-secret-another-secret-another";
    assert_int_equal(ctl_token_verify(other, sizeof other - 1, t, NOW, &err), -ERR_AUTH);
    free(t);
}

static void
test_control_token_refuses_client_tokens(void **state)
{
    (void)state;
    /* an admin token signed with the shared secret, even with the control token's sub */
    jwt_claims_t c = {.exp = NOW + 30};
    snprintf(c.sub, sizeof c.sub, "%s", CTL_TOKEN_SUB);
    snprintf(c.role, sizeof c.role, "admin");
    char *t = jwt_sign(secret, SECRET_LEN, &c);
    err_t err = {0};
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, t, NOW, &err), -ERR_AUTH);
    free(t);
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, "", NOW, &err), -ERR_AUTH);
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, "a.b.c", NOW, &err), -ERR_AUTH);
}

/* A token signed with the derived key but for someone else, or living too long, is refused:
 * made here with the key as ctl_token.c derives it (HMAC-SHA256(secret, label)). */
#include <openssl/evp.h>
#include <openssl/hmac.h>

static char *
signed_with_control_key(const char *sub, int64_t exp)
{
    uint8_t key[32];
    unsigned int n = 0;
    HMAC(EVP_sha256(), secret, (int)SECRET_LEN, (const unsigned char *)CTL_TOKEN_LABEL,
         strlen(CTL_TOKEN_LABEL), key, &n);
    jwt_claims_t c = {.exp = exp};
    snprintf(c.sub, sizeof c.sub, "%s", sub);
    snprintf(c.role, sizeof c.role, "admin");
    return jwt_sign(key, sizeof key, &c);
}

static void
test_control_token_refuses_other_sub_and_long_life(void **state)
{
    (void)state;
    err_t err = {0};
    char *t = signed_with_control_key(CTL_TOKEN_SUB, NOW + 30);
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, t, NOW, &err), 0);
    free(t);
    t = signed_with_control_key("alice", NOW + 30);
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, t, NOW, &err), -ERR_AUTH);
    free(t);
    t = signed_with_control_key(CTL_TOKEN_SUB, NOW + CTL_TOKEN_TTL_MAX + 1);
    assert_int_equal(ctl_token_verify(secret, SECRET_LEN, t, NOW, &err), -ERR_AUTH);
    free(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_decode_takes_op_and_who),
        cmocka_unit_test(test_request_decode_refuses_what_is_not_a_request),
        cmocka_unit_test(test_answers_round_trip),
        cmocka_unit_test(test_answer_decode_refuses_malformed),
        cmocka_unit_test(test_control_token_verifies_only_as_control_token),
        cmocka_unit_test(test_control_token_refuses_client_tokens),
        cmocka_unit_test(test_control_token_refuses_other_sub_and_long_life),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
