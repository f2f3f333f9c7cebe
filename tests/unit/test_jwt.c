/* test_jwt.c — jwt_sign/jwt_verify: round trips, known-answer vectors from Python's standard
 * library (not from this code), and every hostile token that must be refused. Secret files and
 * where tokens come from: test_jwt_secret.c. */
#include "jwt_fixture.h"

/* ---- sign / verify ------------------------------------------------------------------------ */

static void
test_sign_then_verify_round_trips_every_claim(void **state)
{
    (void)state;
    jwt_claims_t in = claims("dash", "viewer", "s-42", NOW + 60);
    in.iat = NOW - 5;
    in.nbf = NOW - 1;
    snprintf(in.jti, sizeof in.jti, "token-7");
    char *tok = jwt_sign(secret, secret_len, &in);
    assert_non_null(tok);
    assert_true(strncmp(tok, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.", 37) == 0);
    jwt_claims_t out;
    err_t err = {0};
    assert_int_equal(verify(tok, &out, &err), 0);
    assert_memory_equal(&in, &out, sizeof in);
    free(tok);

    for (size_t i = 0; i < 3; i++) {
        static const char *const roles[] = {"admin", "user", "viewer"};
        in = claims("u", roles[i], "s", NOW + 1);
        tok = jwt_sign(secret, secret_len, &in);
        assert_int_equal(verify(tok, &out, &err), 0);
        assert_string_equal(out.role, roles[i]);
        assert_int_equal(out.iat, 0);
        assert_string_equal(out.jti, "");
        free(tok);
    }
}

/* Produced with Python 3's standard library only:
 *   import hmac, hashlib, base64, json
 *   b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
 *   key = b"sandpipe-known-answer-secret-32b"
 *   h = json.dumps({"alg":"HS256","typ":"JWT"}, separators=(",",":"))
 *   p = json.dumps({"sub":"alice","role":"user","iat":1700000000,"exp":1700003600,"jti":"k1"},
 *                  separators=(",",":"))
 *   si = b64(h.encode()) + "." + b64(p.encode())
 *   print(si + "." + b64(hmac.new(key, si.encode(), hashlib.sha256).digest()))
 * KAT_VIEWER: same, payload {"sub":"dash","role":"viewer","session":"s-42","iat":1700000000,
 *   "nbf":1700000100,"exp":1700003600}.
 * KAT_SPACED: h = '{ "typ": "JWT", "kid": "k", "alg": "HS256" }',
 *   p = '{"exp": 1700003600, "role": "admin", "sub": "root", "aud": ["x"]}' (used verbatim). */
#define KAT_VIEWER                                                                                 \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                        \
    "eyJzdWIiOiJkYXNoIiwicm9sZSI6InZpZXdlciIsInNlc3Npb24iOiJzLTQyIiwiaWF0IjoxNzAwMDAwMDAwLCJuYmYi" \
    "OjE3MDAwMDAxMDAsImV4cCI6MTcwMDAwMzYwMH0.4zrJENGAKlMx8XStWRXGoCY8QZbX56S2ItGyiUqShOg"
#define KAT_SPACED                                                                                 \
    "eyAidHlwIjogIkpXVCIsICJraWQiOiAiayIsICJhbGciOiAiSFMyNTYiIH0."                                 \
    "eyJleHAiOiAxNzAwMDAzNjAwLCAicm9sZSI6ICJhZG1pbiIsICJzdWIiOiAicm9vdCIsICJhdWQiOiBbIngiXX0."     \
    "2HVlSZm50QRas_4MjeTmPCiTddZBNDzR-C_HbahvB00"

static void
test_sign_matches_known_answer_vector(void **state)
{
    (void)state;
    jwt_claims_t c = claims("alice", "user", "", 1700003600);
    c.iat = 1700000000;
    snprintf(c.jti, sizeof c.jti, "k1");
    char *tok = jwt_sign(secret, secret_len, &c);
    assert_string_equal(tok, KAT_ALICE);
    free(tok);

    c = claims("dash", "viewer", "s-42", 1700003600);
    c.iat = 1700000000;
    c.nbf = 1700000100;
    tok = jwt_sign(secret, secret_len, &c);
    assert_string_equal(tok, KAT_VIEWER);
    free(tok);
}

static void
test_verify_accepts_known_answer_vectors(void **state)
{
    (void)state;
    jwt_claims_t c;
    err_t err = {0};
    assert_int_equal(verify(KAT_ALICE, &c, &err), 0);
    assert_string_equal(c.sub, "alice");
    assert_string_equal(c.role, "user");
    assert_string_equal(c.session, "");
    assert_string_equal(c.jti, "k1");
    assert_int_equal(c.iat, 1700000000);
    assert_int_equal(c.exp, 1700003600);

    assert_int_equal(jwt_verify(secret, secret_len, KAT_VIEWER, 1700000100, &c, &err), 0);
    assert_string_equal(c.role, "viewer");
    assert_string_equal(c.session, "s-42");
    assert_int_equal(c.nbf, 1700000100);

    /* Whitespace, member order, a kid and unknown claims are all fine. */
    assert_int_equal(verify(KAT_SPACED, &c, &err), 0);
    assert_string_equal(c.sub, "root");
    assert_string_equal(c.role, "admin");
}

static void
test_verify_refuses_expired_token_without_leeway(void **state)
{
    (void)state;
    err_t err = {0};
    assert_int_equal(jwt_verify(secret, secret_len, KAT_ALICE, 1700003599, NULL, &err), 0);
    assert_int_equal(jwt_verify(secret, secret_len, KAT_ALICE, 1700003600, NULL, &err),
                     -ERR_AUTH_EXPIRED);
    assert_non_null(strstr(err.msg, "expired"));
    assert_string_equal(err_name(err.code), "token_expired");
    assert_int_equal(jwt_verify(secret, secret_len, KAT_ALICE, INT64_MAX, NULL, &err),
                     -ERR_AUTH_EXPIRED);
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"role\":\"user\",\"exp\":-5}", ERR_AUTH_EXPIRED,
                           "expired");
}

static void
test_verify_refuses_nbf_in_future(void **state)
{
    (void)state;
    err_t err = {0};
    assert_int_equal(jwt_verify(secret, secret_len, KAT_VIEWER, 1700000099, NULL, &err), -ERR_AUTH);
    assert_non_null(strstr(err.msg, "not valid before"));
    assert_string_equal(err_name(err.code), "unauthorized");
    assert_crafted_refused(HDR,
                           "{\"sub\":\"a\",\"role\":\"user\",\"exp\":1800000000,\"nbf\":\"0\"}",
                           ERR_AUTH, "nbf claim is not an integer");
}

static void
test_verify_refuses_tampered_payload(void **state)
{
    (void)state;
    /* Same signature, payload re-encoded with role admin. */
    char *good = craft(HDR, PAYLOAD);
    const char *forged = "{\"sub\":\"alice\",\"role\":\"admin\",\"exp\":1700003600}";
    char *p64 = b64url(forged, strlen(forged));
    const char *dot1 = strchr(good, '.'), *dot2 = strrchr(good, '.');
    char *tok = xasprintf("%.*s.%s%s", (int)(dot1 - good), good, p64, dot2);
    assert_refused_with(tok, ERR_AUTH, "signature does not match");
    free(tok);
    free(p64);

    /* One flipped character anywhere in the payload. */
    tok = xstrdup(good);
    tok[dot1 - good + 5] = tok[dot1 - good + 5] == 'A' ? 'B' : 'A';
    assert_refused_with(tok, ERR_AUTH, "signature does not match");
    free(tok);
    free(good);
}

static void
test_verify_refuses_tampered_signature(void **state)
{
    (void)state;
    char *tok = xstrdup(KAT_ALICE);
    char *sig = strrchr(tok, '.') + 1;
    sig[10] = sig[10] == 'A' ? 'B' : 'A';
    assert_refused_with(tok, ERR_AUTH, "signature does not match");
    free(tok);

    /* Signature too short, too long, empty. */
    tok = xstrndup(KAT_ALICE, strlen(KAT_ALICE) - 1);
    assert_refused_with(tok, ERR_AUTH, "signature");
    free(tok);
    tok = xasprintf("%sAAAA", KAT_ALICE);
    assert_refused_with(tok, ERR_AUTH, "signature must be 32 bytes, not 35");
    free(tok);
    tok = xstrndup(KAT_ALICE, strlen(KAT_ALICE) - 3);
    assert_refused_with(tok, ERR_AUTH, "signature must be 32 bytes, not 30");
    free(tok);
    tok = xstrndup(KAT_ALICE, (size_t)(strrchr(KAT_ALICE, '.') - KAT_ALICE + 1));
    assert_refused_with(tok, ERR_AUTH, "signature must be 32 bytes, not 0");
    free(tok);

    /* The same 32 bytes with the unused low bits of the last character set: same MAC bytes
     * once decoded, refused as a second spelling of the signature. ('E' = 4 = 000100.) */
    tok = xstrdup(KAT_ALICE);
    assert_int_equal(tok[strlen(tok) - 1], 'E');
    tok[strlen(tok) - 1] = 'F';
    assert_refused_with(tok, ERR_AUTH, "non-canonical");
    free(tok);
}

static void
test_verify_refuses_wrong_secret(void **state)
{
    (void)state;
    err_t err = {0};
    assert_int_equal(jwt_verify(other_secret, 32, KAT_ALICE, NOW, NULL, &err), -ERR_AUTH);
    assert_non_null(strstr(err.msg, "signature does not match"));
    /* A secret that is a prefix of the right one is still wrong. */
    uint8_t longer[33];
    memcpy(longer, secret, 32);
    longer[32] = 'x';
    assert_int_equal(jwt_verify(longer, sizeof longer, KAT_ALICE, NOW, NULL, &err), -ERR_AUTH);
    /* Too short to be an HS256 key at all. */
    assert_int_equal(jwt_verify(secret, 31, KAT_ALICE, NOW, NULL, &err), -ERR_AUTH);
    assert_non_null(strstr(err.msg, "secret shorter"));
    assert_int_equal(jwt_verify(NULL, 0, KAT_ALICE, NOW, NULL, &err), -ERR_AUTH);
}

static void
test_verify_refuses_alg_none(void **state)
{
    (void)state;
    static const char *const nones[] = {
        "{\"alg\":\"none\",\"typ\":\"JWT\"}",
        "{\"alg\":\"none\"}",
        "{\"alg\":\"None\"}",
        "{\"alg\":\"NONE\"}",
        "{\"alg\":\"\"}",
    };
    for (size_t i = 0; i < sizeof nones / sizeof nones[0]; i++) {
        /* Unsecured JWS: empty signature part. */
        char *h64 = b64url(nones[i], strlen(nones[i]));
        char *p64 = b64url(PAYLOAD, strlen(PAYLOAD));
        char *tok = xasprintf("%s.%s.", h64, p64);
        assert_refused_with(tok, ERR_AUTH, "alg refused");
        free(tok);
        /* Two parts only. */
        tok = xasprintf("%s.%s", h64, p64);
        assert_refused_with(tok, ERR_AUTH, "three");
        free(tok);
        free(h64);
        free(p64);
        /* With a valid HS256 signature over it: still refused, alg decides nothing. */
        assert_crafted_refused(nones[i], PAYLOAD, ERR_AUTH, "alg refused");
    }
}

static void
test_verify_refuses_every_alg_but_hs256(void **state)
{
    (void)state;
    static const char *const headers[] = {
        "{\"alg\":\"HS512\",\"typ\":\"JWT\"}",
        "{\"alg\":\"HS384\"}",
        "{\"alg\":\"RS256\"}",
        "{\"alg\":\"ES256\"}",
        "{\"alg\":\"hs256\"}",
        "{\"alg\":\"Hs256\"}",
        "{\"alg\":\"HS256 \"}",
        "{\"alg\":\" HS256\"}",
        "{\"alg\":\"HS2560\"}",
        "{\"alg\":\"HS25\"}",
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        assert_crafted_refused(headers[i], PAYLOAD, ERR_AUTH, "alg");
    assert_crafted_refused("{\"typ\":\"JWT\"}", PAYLOAD, ERR_AUTH, "no alg");
    assert_crafted_refused("{}", PAYLOAD, ERR_AUTH, "no alg");
    assert_crafted_refused("{\"ALG\":\"HS256\"}", PAYLOAD, ERR_AUTH, "no alg");
    assert_crafted_refused("{\"alg\":null}", PAYLOAD, ERR_AUTH, "alg is not a string");
    assert_crafted_refused("{\"alg\":256}", PAYLOAD, ERR_AUTH, "alg is not a string");
    assert_crafted_refused("{\"alg\":[\"HS256\"]}", PAYLOAD, ERR_AUTH, "alg is not a string");
    assert_crafted_refused("{\"alg\":{\"HS256\":1}}", PAYLOAD, ERR_AUTH, "alg is not a string");
    assert_crafted_ok("{\"alg\":\"HS256\"}", PAYLOAD); /* typ is optional */
}

static void
test_verify_refuses_duplicate_or_hidden_alg(void **state)
{
    (void)state;
    assert_crafted_refused("{\"alg\":\"none\",\"alg\":\"HS256\"}", PAYLOAD, ERR_AUTH, "duplicate");
    assert_crafted_refused("{\"alg\":\"HS256\",\"alg\":\"none\"}", PAYLOAD, ERR_AUTH, "duplicate");
    assert_crafted_refused("{\"alg\":\"HS256\",\"alg\":\"HS256\"}", PAYLOAD, ERR_AUTH, "duplicate");
    /* "al\u0067" is "alg": a duplicate spelled differently. */
    assert_crafted_refused("{\"alg\":\"HS256\",\"al\\u0067\":\"none\"}", PAYLOAD, ERR_AUTH,
                           "duplicate");
    /* json-c cuts member names at \u0000: "alg\u0000x" would read as "alg". */
    assert_crafted_refused("{\"alg\\u0000x\":\"HS256\"}", PAYLOAD, ERR_AUTH, "\\u0000");
    assert_crafted_refused("{\"alg\":\"HS256\\u0000\"}", PAYLOAD, ERR_AUTH, "\\u0000");
    /* json-c takes single-quoted names even in strict mode; we do not. */
    assert_crafted_refused("{'alg':\"HS256\"}", PAYLOAD, ERR_AUTH, "single quotes");
    assert_crafted_refused("{\"alg\":\"HS256\",'alg':\"none\"}", PAYLOAD, ERR_AUTH, "header:");
    assert_crafted_refused("{'alg':'HS256'}", PAYLOAD, ERR_AUTH, "header:");
    /* Duplicates in the (signed) payload too. */
    assert_crafted_refused(
        HDR, "{\"sub\":\"a\",\"role\":\"user\",\"role\":\"admin\",\"exp\":1800000000}", ERR_AUTH,
        "duplicate");
    /* A comma inside a nested value or a string is not a member separator. */
    assert_crafted_ok("{\"alg\":\"HS256\",\"kid\":\"a,b\\\",c\",\"x\":[1,2,{\"y\":3,\"z\":4}]}",
                      PAYLOAD);
}

static void
test_verify_checks_typ_and_crit(void **state)
{
    (void)state;
    assert_crafted_refused("{\"alg\":\"HS256\",\"typ\":\"jwt\"}", PAYLOAD, ERR_AUTH, "typ");
    assert_crafted_refused("{\"alg\":\"HS256\",\"typ\":\"JWS\"}", PAYLOAD, ERR_AUTH, "typ");
    assert_crafted_refused("{\"alg\":\"HS256\",\"typ\":1}", PAYLOAD, ERR_AUTH, "typ");
    assert_crafted_refused("{\"alg\":\"HS256\",\"typ\":null}", PAYLOAD, ERR_AUTH, "typ");
    assert_crafted_refused("{\"alg\":\"HS256\",\"crit\":[\"exp\"]}", PAYLOAD, ERR_AUTH, "crit");
}

static void
test_verify_requires_exp_role_and_sub(void **state)
{
    (void)state;
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"role\":\"user\"}", ERR_AUTH, "no exp");
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"exp\":1800000000}", ERR_AUTH, "no role");
    assert_crafted_refused(HDR, "{\"role\":\"user\",\"exp\":1800000000}", ERR_AUTH, "no sub");
    assert_crafted_refused(HDR, "{}", ERR_AUTH, "no sub");
    assert_crafted_refused(HDR, "{\"sub\":\"\",\"role\":\"user\",\"exp\":1800000000}", ERR_AUTH,
                           "sub claim is empty");
    assert_crafted_refused(HDR, "{\"sub\":7,\"role\":\"user\",\"exp\":1800000000}", ERR_AUTH,
                           "sub claim is not a string");
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"role\":null,\"exp\":1800000000}", ERR_AUTH,
                           "role claim is not a string");
    static const char *const bad_exps[] = {
        "\"1800000000\"", "1.8e9", "1800000000.0", "NaN",
        "Infinity",       "true",  "null",         "[1800000000]"};
    for (size_t i = 0; i < sizeof bad_exps / sizeof bad_exps[0]; i++) {
        char *p = xasprintf("{\"sub\":\"a\",\"role\":\"user\",\"exp\":%s}", bad_exps[i]);
        assert_crafted_refused(HDR, p, ERR_AUTH, "exp claim is not an integer");
        free(p);
    }
    assert_crafted_refused(HDR,
                           "{\"sub\":\"a\",\"role\":\"user\",\"exp\":1800000000,\"iat\":\"x\"}",
                           ERR_AUTH, "iat claim is not an integer");
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"role\":\"user\",\"exp\":1800000000,\"jti\":1}",
                           ERR_AUTH, "jti claim is not a string");
}

static void
test_verify_refuses_unknown_role_and_viewer_without_session(void **state)
{
    (void)state;
    static const char *const roles[] = {"Admin", "root", "", "user ", "viewers", "adm"};
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++) {
        char *p = xasprintf("{\"sub\":\"a\",\"role\":\"%s\",\"exp\":1800000000}", roles[i]);
        assert_crafted_refused(HDR, p, ERR_AUTH, "role");
        free(p);
    }
    assert_crafted_refused(HDR,
                           "{\"sub\":\"a\",\"role\":\"administrator-of-all\",\"exp\":1800000000}",
                           ERR_AUTH, "role claim is longer");
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"role\":\"viewer\",\"exp\":1800000000}", ERR_AUTH,
                           "viewer token has no session");
    assert_crafted_refused(
        HDR, "{\"sub\":\"a\",\"role\":\"viewer\",\"session\":\"\",\"exp\":1800000000}", ERR_AUTH,
        "viewer token has no session");
    assert_crafted_ok(HDR,
                      "{\"sub\":\"a\",\"role\":\"viewer\",\"session\":\"s1\",\"exp\":1800000000}");
}

static void
test_verify_refuses_claims_that_do_not_fit_or_carry_control_characters(void **state)
{
    (void)state;
    char sub[129];
    memset(sub, 'x', sizeof sub - 1);
    sub[128] = '\0';
    char *p = xasprintf("{\"sub\":\"%s\",\"role\":\"user\",\"exp\":1800000000}", sub);
    assert_crafted_refused(HDR, p, ERR_AUTH, "sub claim is longer than 127");
    free(p);
    sub[127] = '\0'; /* 127 bytes fit */
    p = xasprintf("{\"sub\":\"%s\",\"role\":\"user\",\"exp\":1800000000}", sub);
    assert_crafted_ok(HDR, p);
    free(p);
    assert_crafted_refused(HDR, "{\"sub\":\"a\\nb\",\"role\":\"user\",\"exp\":1800000000}",
                           ERR_AUTH, "control characters");
}

static void
test_verify_refuses_padding_and_invalid_base64url(void **state)
{
    (void)state;
    /* Header {"alg":"HS256" } is 16 bytes: its base64 has "==" of padding. */
    char *tok = craft("{\"alg\":\"HS256\" }", PAYLOAD);
    char *dot = strchr(tok, '.');
    char *padded = xasprintf("%.*s==%s", (int)(dot - tok), tok, dot);
    assert_refused_with(padded, ERR_AUTH, "padding");
    free(padded);
    padded = xasprintf("%s=", KAT_ALICE);
    assert_refused_with(padded, ERR_AUTH, "padding");
    free(padded);
    free(tok);

    static const char bad[] = {'+', '/', ' ', '\t', '\n', '*', '!', '~', '\x80', '\xff', '%'};
    for (size_t i = 0; i < sizeof bad; i++) {
        tok = xstrdup(KAT_ALICE);
        tok[5] = bad[i]; /* in the header */
        assert_refused_with(tok, ERR_AUTH, "invalid base64url character");
        free(tok);
        tok = xstrdup(KAT_ALICE);
        tok[strlen(tok) - 3] = bad[i]; /* in the signature */
        assert_refused_with(tok, ERR_AUTH, "invalid base64url character");
        free(tok);
    }
    /* A header part of 4k+1 characters cannot be base64url. */
    tok = xasprintf("eyJhb%s", strchr(KAT_ALICE, '.'));
    assert_refused_with(tok, ERR_AUTH, "impossible base64url length");
    free(tok);
    /* Whitespace around the token is not trimmed. */
    tok = xasprintf(" %s", KAT_ALICE);
    assert_refused_with(tok, ERR_AUTH, "invalid base64url character");
    free(tok);
    tok = xasprintf("%s\n", KAT_ALICE);
    assert_refused_with(tok, ERR_AUTH, "invalid base64url character");
    free(tok);
}

static void
test_verify_refuses_wrong_number_of_parts(void **state)
{
    (void)state;
    assert_refused_with(NULL, ERR_AUTH, "no token");
    assert_refused_with("", ERR_AUTH, "no token");
    assert_refused_with("abc", ERR_AUTH, "three");
    assert_refused_with("a.b", ERR_AUTH, "three");
    assert_refused_with("..", ERR_AUTH, "header: invalid JSON");
    assert_refused_with("...", ERR_AUTH, "three");
    char *tok = xasprintf("%s.", KAT_ALICE);
    assert_refused_with(tok, ERR_AUTH, "three");
    free(tok);
    tok = xasprintf("%s.e30", KAT_ALICE);
    assert_refused_with(tok, ERR_AUTH, "three");
    free(tok);
    tok = xasprintf("e30.%s", KAT_ALICE);
    assert_refused_with(tok, ERR_AUTH, "three");
    free(tok);
}

static void
test_verify_caps_token_length_at_8k(void **state)
{
    (void)state;
    /* A valid token of exactly JWT_MAX_LEN bytes passes; one byte more is refused unread. */
    size_t pad_len = 0;
    char *tok = NULL;
    for (size_t target = JWT_MAX_LEN; target <= JWT_MAX_LEN + 1; target++) {
        for (pad_len = 5900; pad_len < 6200; pad_len++) {
            char *pad = xmalloc(pad_len + 1);
            memset(pad, 'p', pad_len);
            pad[pad_len] = '\0';
            char *p = xasprintf(
                "{\"sub\":\"a\",\"role\":\"user\",\"exp\":1800000000,\"pad\":\"%s\"}", pad);
            free(pad);
            tok = craft(HDR, p);
            free(p);
            if (strlen(tok) == target)
                break;
            free(tok);
            tok = NULL;
        }
        assert_non_null(tok);
        err_t err = {0};
        if (target == JWT_MAX_LEN) {
            assert_int_equal(verify(tok, NULL, &err), 0);
        } else {
            assert_refused_with(tok, ERR_AUTH, "longer than 8192");
        }
        free(tok);
    }
    char *huge = xmalloc(1 << 20);
    memset(huge, 'A', (1 << 20) - 1);
    huge[(1 << 20) - 1] = '\0';
    assert_refused_with(huge, ERR_AUTH, "longer than 8192");
    free(huge);
}

static void
test_verify_refuses_header_or_payload_that_is_not_an_object(void **state)
{
    (void)state;
    static const char *const not_objects[] = {"[]", "[\"HS256\"]", "\"HS256\"",
                                              "1",  "null",        "true"};
    for (size_t i = 0; i < sizeof not_objects / sizeof not_objects[0]; i++) {
        assert_crafted_refused(not_objects[i], PAYLOAD, ERR_AUTH, "header: not a JSON object");
        assert_crafted_refused(HDR, not_objects[i], ERR_AUTH, "payload: not a JSON object");
    }
    static const char *const not_json[] = {"",
                                           "{",
                                           "{\"alg\":\"HS256\"",
                                           "{\"alg\":\"HS256\"}x",
                                           "{\"alg\":\"HS256\"}{}",
                                           "{\"alg\":\"HS256\",}",
                                           "{\"alg\":\"HS256\" /* c */}",
                                           "\xef\xbb\xbf{}"};
    for (size_t i = 0; i < sizeof not_json / sizeof not_json[0]; i++)
        assert_crafted_refused(not_json[i], PAYLOAD, ERR_AUTH, "header: invalid JSON");
    assert_crafted_refused(HDR, "{\"sub\":\"a\"", ERR_AUTH, "payload: invalid JSON");
    /* Nesting beyond the depth limit. */
    char deep[80];
    memset(deep, '[', 40);
    memset(deep + 40, ']', 39);
    deep[79] = '\0';
    char *p = xasprintf("{\"sub\":\"a\",\"role\":\"user\",\"exp\":1800000000,\"x\":%s]}", deep);
    assert_crafted_refused(HDR, p, ERR_AUTH, "payload: invalid JSON");
    free(p);
}

static void
test_verify_refuses_json_with_nul(void **state)
{
    (void)state;
    static const char h[] = "{\"alg\":\"HS256\"}\0";
    char *tok = craft_n(h, sizeof h - 1, PAYLOAD, strlen(PAYLOAD), secret);
    assert_refused_with(tok, ERR_AUTH, "header: JSON contains a NUL byte");
    free(tok);
    static const char p[] = "{\"sub\":\"a\0b\",\"role\":\"user\",\"exp\":1800000000}";
    tok = craft_n(HDR, strlen(HDR), p, sizeof p - 1, secret);
    assert_refused_with(tok, ERR_AUTH, "payload: JSON contains a NUL byte");
    free(tok);
    /* Escaped NULs in values: "admin\u0000" must not read as "admin". */
    assert_crafted_refused(HDR, "{\"sub\":\"a\",\"role\":\"admin\\u0000\",\"exp\":1800000000}",
                           ERR_AUTH, "\\u0000");
    assert_crafted_refused(HDR, "{\"sub\":\"root\\u0000x\",\"role\":\"user\",\"exp\":1800000000}",
                           ERR_AUTH, "\\u0000");
}

static void
test_sign_refuses_claims_that_would_not_verify(void **state)
{
    (void)state;
    jwt_claims_t c = claims("a", "user", "", NOW + 60);
    assert_null(jwt_sign(secret, 31, &c));
    assert_null(jwt_sign(NULL, 32, &c));
    assert_null(jwt_sign(secret, secret_len, NULL));
    c = claims("", "user", "", NOW + 60);
    assert_null(jwt_sign(secret, secret_len, &c));
    c = claims("a", "root", "", NOW + 60);
    assert_null(jwt_sign(secret, secret_len, &c));
    c = claims("a", "viewer", "", NOW + 60);
    assert_null(jwt_sign(secret, secret_len, &c));
    c = claims("a", "user", "", 0);
    assert_null(jwt_sign(secret, secret_len, &c));
    c = claims("a\tb", "user", "", NOW + 60);
    assert_null(jwt_sign(secret, secret_len, &c));
    c = claims("a", "user", "", NOW + 60);
    memset(c.sub, 'x', sizeof c.sub); /* not terminated */
    assert_null(jwt_sign(secret, secret_len, &c));
    /* JSON-special characters are escaped and come back intact. */
    c = claims("o'brien \"q\" \\ / é", "user", "", NOW + 60);
    char *tok = jwt_sign(secret, secret_len, &c);
    jwt_claims_t out;
    err_t err = {0};
    assert_int_equal(verify(tok, &out, &err), 0);
    assert_string_equal(out.sub, c.sub);
    free(tok);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_then_verify_round_trips_every_claim),
        cmocka_unit_test(test_sign_matches_known_answer_vector),
        cmocka_unit_test(test_verify_accepts_known_answer_vectors),
        cmocka_unit_test(test_verify_refuses_expired_token_without_leeway),
        cmocka_unit_test(test_verify_refuses_nbf_in_future),
        cmocka_unit_test(test_verify_refuses_tampered_payload),
        cmocka_unit_test(test_verify_refuses_tampered_signature),
        cmocka_unit_test(test_verify_refuses_wrong_secret),
        cmocka_unit_test(test_verify_refuses_alg_none),
        cmocka_unit_test(test_verify_refuses_every_alg_but_hs256),
        cmocka_unit_test(test_verify_refuses_duplicate_or_hidden_alg),
        cmocka_unit_test(test_verify_checks_typ_and_crit),
        cmocka_unit_test(test_verify_requires_exp_role_and_sub),
        cmocka_unit_test(test_verify_refuses_unknown_role_and_viewer_without_session),
        cmocka_unit_test(test_verify_refuses_claims_that_do_not_fit_or_carry_control_characters),
        cmocka_unit_test(test_verify_refuses_padding_and_invalid_base64url),
        cmocka_unit_test(test_verify_refuses_wrong_number_of_parts),
        cmocka_unit_test(test_verify_caps_token_length_at_8k),
        cmocka_unit_test(test_verify_refuses_header_or_payload_that_is_not_an_object),
        cmocka_unit_test(test_verify_refuses_json_with_nul),
        cmocka_unit_test(test_sign_refuses_claims_that_would_not_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
