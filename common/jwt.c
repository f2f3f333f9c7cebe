/* jwt.c — HS256 JWTs for sandpipe's bearer tokens (see jwt.h for the contract).
 * OpenSSL does the cryptography and base64 (EVP_EncodeBlock/EVP_DecodeBlock plus the url-safe
 * translation), json-c the JSON; this file only adds the strictness a verifier needs.
 * Pure functions over bytes; the secret files (jwt_secret_load/jwt_secret_generate) are in
 * jwt_secret.c. Fuzzed by tests/fuzz/fuzz_jwt.c. */
#include "jwt.h"

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_util.h"
#include "xalloc.h"

#define JWT_SIG_LEN    32 /* HMAC-SHA256 */
#define JWT_JSON_DEPTH 16 /* header and payload are flat; nested claims we ignore stay shallow */

static const char jwt_header_json[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
static const char *const jwt_roles[] = {"admin", "user", "viewer"};

/* ---- base64url ---------------------------------------------------------------------------- */

/* Returns a new NUL-terminated unpadded base64url string (caller frees). n is small here
 * (header, payload of bounded claims, a 32-byte MAC). */
static char *
b64url_encode(const uint8_t *in, size_t n)
{
    char *out = xmalloc(4 * ((n + 2) / 3) + 1);
    int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (int i = 0; i < len; i++) {
        if (out[i] == '+')
            out[i] = '-';
        else if (out[i] == '/')
            out[i] = '_';
    }
    return out;
}

static int
b64url_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/* Decodes in[0..n) into *out (new, NUL-terminated past *out_len, caller frees). Strict: the
 * url-safe alphabet only (no padding, no whitespace, no '+' or '/'), no length of 1 mod 4,
 * and the unused low bits of the last character zero, so each byte string has one encoding.
 * EVP_DecodeBlock would skip whitespace and accept padding; the checks run before it. */
static int
b64url_decode(const char *what, const char *in, size_t n, uint8_t **out, size_t *out_len,
              err_t *err)
{
    *out = NULL;
    *out_len = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '=')
            return err_set(err, ERR_AUTH, "token %s: base64url padding is not allowed", what);
        if (b64url_value(in[i]) < 0)
            return err_set(err, ERR_AUTH, "token %s: invalid base64url character at offset %zu",
                           what, i);
    }
    size_t rem = n % 4;
    if (rem == 1)
        return err_set(err, ERR_AUTH, "token %s: impossible base64url length %zu", what, n);
    if (rem != 0 && (b64url_value(in[n - 1]) & (rem == 2 ? 0x0f : 0x03)) != 0)
        return err_set(err, ERR_AUTH, "token %s: non-canonical base64url (trailing bits set)",
                       what);
    size_t pad = rem ? 4 - rem : 0;
    size_t blen = n + pad;
    char *b64 = xmalloc(blen + 1);
    for (size_t i = 0; i < n; i++)
        b64[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
    memset(b64 + n, '=', pad);
    b64[blen] = '\0';
    uint8_t *bytes = xmalloc(blen / 4 * 3 + 1);
    int r = blen ? EVP_DecodeBlock(bytes, (const unsigned char *)b64, (int)blen) : 0;
    free(b64);
    if (r < 0 || (size_t)r < pad) {
        free(bytes);
        return err_set(err, ERR_AUTH, "token %s: base64url decoding failed", what);
    }
    /* EVP_DecodeBlock counts the bytes the padding stands for; they are not data. */
    *out_len = (size_t)r - pad;
    bytes[*out_len] = '\0';
    *out = bytes;
    return 0;
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* Counts the members of the top-level object in p[0..n), text json-c has already accepted.
 * json-c keeps the last of duplicate member names, and truncates names at a \u0000, so
 * {"alg":"none","alg":"HS256"} would read as one thing here and another elsewhere: comparing
 * this count with the parsed object's length catches both. Returns -1 for JSON json-c accepts
 * even in strict mode but we do not: single-quoted strings and \u0000 escapes. */
static long
raw_member_count(const char *p, size_t n)
{
    int depth = 0;
    long commas = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case '"':
            if (depth == 1)
                any = true;
            for (i++; i < n && p[i] != '"'; i++) {
                if (p[i] != '\\')
                    continue;
                if (n - i > 5 && memcmp(p + i + 1, "u0000", 5) == 0)
                    return -1;
                i++;
            }
            break;
        case '\'': return -1;
        case '{':
        case '[': depth++; break;
        case '}':
        case ']': depth--; break;
        case ',':
            if (depth == 1)
                commas++;
            break;
        default: break;
        }
    }
    return any ? commas + 1 : 0;
}

/* Parses p[0..n) as one JSON object (json-c strict mode, no NUL bytes, no duplicate members).
 * Returns a new object (caller puts) or NULL with err set. */
static json_object *
parse_object(const char *what, const uint8_t *p, size_t n, err_t *err)
{
    const char *text = (const char *)p;
    if (memchr(text, '\0', n)) {
        err_set(err, ERR_AUTH, "token %s: JSON contains a NUL byte", what);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(JWT_JSON_DEPTH);
    if (!tok)
        abort(); /* json-c's only failure here is OOM */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *obj = json_tokener_parse_ex(tok, text, (int)n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_continue) {
        json_object_put(obj);
        obj = json_tokener_parse_ex(tok, "", 1); /* end of input */
        jerr = json_tokener_get_error(tok);
    }
    json_tokener_free(tok);
    if (jerr != json_tokener_success) {
        err_set(err, ERR_AUTH, "token %s: invalid JSON: %s", what, json_tokener_error_desc(jerr));
        json_object_put(obj);
        return NULL;
    }
    if (!json_object_is_type(obj, json_type_object)) { /* NULL is JSON null */
        err_set(err, ERR_AUTH, "token %s: not a JSON object", what);
        json_object_put(obj);
        return NULL;
    }
    long members = raw_member_count(text, n);
    if (members < 0) {
        err_set(err, ERR_AUTH, "token %s: unsupported JSON (single quotes or \\u0000)", what);
        json_object_put(obj);
        return NULL;
    }
    if (members != json_object_object_length(obj)) {
        err_set(err, ERR_AUTH, "token %s: duplicate member names", what);
        json_object_put(obj);
        return NULL;
    }
    return obj;
}

/* ---- claims ------------------------------------------------------------------------------- */

/* s is terminated inside cap bytes and holds no control characters. */
static bool
str_ok(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

static bool
role_ok(const char *role)
{
    for (size_t i = 0; i < sizeof jwt_roles / sizeof jwt_roles[0]; i++)
        if (strcmp(role, jwt_roles[i]) == 0)
            return true;
    return false;
}

/* The rules both signing and verification apply to a claims struct (times aside). */
static int
claims_check(const jwt_claims_t *c, err_t *err)
{
    if (!str_ok(c->sub, sizeof c->sub) || !str_ok(c->role, sizeof c->role) ||
        !str_ok(c->session, sizeof c->session) || !str_ok(c->jti, sizeof c->jti))
        return err_set(err, ERR_AUTH, "token claim too long or with control characters");
    if (!c->sub[0])
        return err_set(err, ERR_AUTH, "token sub claim is empty");
    if (!role_ok(c->role))
        return err_set(err, ERR_AUTH, "token role claim is not admin, user or viewer");
    if (strcmp(c->role, "viewer") == 0 && !c->session[0])
        return err_set(err, ERR_AUTH, "viewer token has no session claim");
    return 0;
}

/* Copies string claim key into dst[0..cap). Absent: "" (or an error when required). */
static int
claim_str(json_object *payload, const char *key, bool required, char *dst, size_t cap, err_t *err)
{
    json_object *v;
    dst[0] = '\0';
    if (!json_object_object_get_ex(payload, key, &v)) {
        if (required)
            return err_set(err, ERR_AUTH, "token has no %s claim", key);
        return 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return err_set(err, ERR_AUTH, "token %s claim is not a string", key);
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (n >= cap)
        return err_set(err, ERR_AUTH, "token %s claim is longer than %zu bytes", key, cap - 1);
    if (strlen(s) != n)
        return err_set(err, ERR_AUTH, "token %s claim contains a NUL", key);
    memcpy(dst, s, n + 1);
    return 0;
}

/* Integer claim key (a JSON integer: no fraction, exponent, NaN). Absent: 0, *present false. */
static int
claim_int(json_object *payload, const char *key, bool required, int64_t *dst, bool *present,
          err_t *err)
{
    json_object *v;
    *dst = 0;
    *present = false;
    if (!json_object_object_get_ex(payload, key, &v)) {
        if (required)
            return err_set(err, ERR_AUTH, "token has no %s claim", key);
        return 0;
    }
    if (!json_object_is_type(v, json_type_int))
        return err_set(err, ERR_AUTH, "token %s claim is not an integer", key);
    *dst = json_object_get_int64(v); /* saturates beyond int64 */
    *present = true;
    return 0;
}

static int
claims_from_json(json_object *payload, int64_t now, jwt_claims_t *c, err_t *err)
{
    bool has_exp, has_nbf, has_iat;
    int r;
    if ((r = claim_str(payload, "sub", true, c->sub, sizeof c->sub, err)) < 0 ||
        (r = claim_str(payload, "role", true, c->role, sizeof c->role, err)) < 0 ||
        (r = claim_str(payload, "session", false, c->session, sizeof c->session, err)) < 0 ||
        (r = claim_str(payload, "jti", false, c->jti, sizeof c->jti, err)) < 0 ||
        (r = claim_int(payload, "exp", true, &c->exp, &has_exp, err)) < 0 ||
        (r = claim_int(payload, "nbf", false, &c->nbf, &has_nbf, err)) < 0 ||
        (r = claim_int(payload, "iat", false, &c->iat, &has_iat, err)) < 0)
        return r;
    if ((r = claims_check(c, err)) < 0)
        return r;
    if (has_nbf && now < c->nbf)
        return err_set(err, ERR_AUTH, "token not valid before %lld (now %lld)", (long long)c->nbf,
                       (long long)now);
    if (now >= c->exp)
        return err_set(err, ERR_AUTH_EXPIRED, "token expired at %lld (now %lld)", (long long)c->exp,
                       (long long)now);
    return 0;
}

/* ---- sign and verify ---------------------------------------------------------------------- */

static int
hmac_sha256(const uint8_t *key, size_t key_len, const char *data, size_t n,
            uint8_t mac[JWT_SIG_LEN])
{
    unsigned int mac_len = 0;
    if (key_len > INT32_MAX ||
        !HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)data, n, mac, &mac_len) ||
        mac_len != JWT_SIG_LEN)
        return -1;
    return 0;
}

char *
jwt_sign(const uint8_t *secret, size_t secret_len, const jwt_claims_t *c)
{
    if (!secret || secret_len < JWT_SECRET_MIN || !c || claims_check(c, NULL) < 0 || c->exp <= 0)
        return NULL;
    json_object *p = json_object_new_object();
    json_set_str(p, "sub", c->sub);
    json_set_str(p, "role", c->role);
    if (c->session[0])
        json_set_str(p, "session", c->session);
    if (c->iat)
        json_set_int(p, "iat", c->iat);
    if (c->nbf)
        json_set_int(p, "nbf", c->nbf);
    json_set_int(p, "exp", c->exp);
    if (c->jti[0])
        json_set_str(p, "jti", c->jti);
    size_t plen;
    const char *ptext = json_text(p, &plen);
    char *h64 = b64url_encode((const uint8_t *)jwt_header_json, strlen(jwt_header_json));
    char *p64 = b64url_encode((const uint8_t *)ptext, plen);
    json_object_put(p);
    char *input = xasprintf("%s.%s", h64, p64);
    free(h64);
    free(p64);
    uint8_t mac[JWT_SIG_LEN];
    char *token = NULL;
    if (hmac_sha256(secret, secret_len, input, strlen(input), mac) == 0) {
        char *s64 = b64url_encode(mac, sizeof mac);
        token = xasprintf("%s.%s", input, s64);
        free(s64);
    }
    free(input);
    return token;
}

static int
check_header(json_object *h, err_t *err)
{
    json_object *v;
    if (!json_object_object_get_ex(h, "alg", &v))
        return err_set(err, ERR_AUTH, "token header has no alg");
    if (!json_object_is_type(v, json_type_string))
        return err_set(err, ERR_AUTH, "token header alg is not a string");
    /* Exactly "HS256": not "none", not another HMAC, not an asymmetric alg whose public key
     * could be fed to us as an HMAC secret, not a case variant. */
    if (json_object_get_string_len(v) != 5 || strcmp(json_object_get_string(v), "HS256") != 0)
        return err_set(err, ERR_AUTH, "token alg refused: only HS256 is accepted");
    if (json_object_object_get_ex(h, "typ", &v) &&
        (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) != 3 ||
         strcmp(json_object_get_string(v), "JWT") != 0))
        return err_set(err, ERR_AUTH, "token header typ is not \"JWT\"");
    /* RFC 7515 4.1.11: extensions listed in crit must be understood; we understand none. */
    if (json_object_object_get_ex(h, "crit", &v))
        return err_set(err, ERR_AUTH, "token header has crit extensions, none supported");
    return 0;
}

int
jwt_verify(const uint8_t *secret, size_t secret_len, const char *token, int64_t now,
           jwt_claims_t *out, err_t *err)
{
    jwt_claims_t claims;
    memset(&claims, 0, sizeof claims);
    if (out)
        memset(out, 0, sizeof *out);
    if (!secret || secret_len < JWT_SECRET_MIN)
        return err_set(err, ERR_AUTH, "JWT secret shorter than %d bytes", JWT_SECRET_MIN);
    if (!token || !*token)
        return err_set(err, ERR_AUTH, "no token");
    size_t len = strnlen(token, JWT_MAX_LEN + 1);
    if (len > JWT_MAX_LEN)
        return err_set(err, ERR_AUTH, "token longer than %d bytes", JWT_MAX_LEN);

    const char *dot1 = memchr(token, '.', len);
    const char *dot2 = dot1 ? memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token)) : NULL;
    if (!dot2 || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)))
        return err_set(err, ERR_AUTH, "token must have exactly three dot-separated parts");
    size_t hlen = (size_t)(dot1 - token);
    size_t plen = (size_t)(dot2 - dot1 - 1);
    size_t slen = len - (size_t)(dot2 + 1 - token);

    uint8_t *bytes = NULL;
    size_t n;
    int r = b64url_decode("header", token, hlen, &bytes, &n, err);
    if (r < 0)
        return r;
    json_object *json = parse_object("header", bytes, n, err);
    free(bytes);
    if (!json)
        return -ERR_AUTH;
    r = check_header(json, err);
    json_object_put(json);
    if (r < 0)
        return r;

    if ((r = b64url_decode("signature", dot2 + 1, slen, &bytes, &n, err)) < 0)
        return r;
    if (n != JWT_SIG_LEN) {
        free(bytes);
        return err_set(err, ERR_AUTH, "token signature must be %d bytes, not %zu", JWT_SIG_LEN, n);
    }
    uint8_t mac[JWT_SIG_LEN];
    if (hmac_sha256(secret, secret_len, token, (size_t)(dot2 - token), mac) < 0) {
        free(bytes);
        return err_set(err, ERR_AUTH, "HMAC-SHA256 failed");
    }
    bool sig_ok = CRYPTO_memcmp(bytes, mac, JWT_SIG_LEN) == 0;
    free(bytes);
    if (!sig_ok)
        return err_set(err, ERR_AUTH, "token signature does not match");

    /* Authentic from here on: the payload was written by a holder of the secret. It is still
     * checked as strictly, so a buggy issuer cannot mint an ambiguous token. */
    if ((r = b64url_decode("payload", dot1 + 1, plen, &bytes, &n, err)) < 0)
        return r;
    json = parse_object("payload", bytes, n, err);
    free(bytes);
    if (!json)
        return -ERR_AUTH;
    r = claims_from_json(json, now, &claims, err);
    json_object_put(json);
    if (r < 0)
        return r;
    if (out)
        *out = claims;
    return 0;
}

/* ---- where tokens come from --------------------------------------------------------------- */

int
jwt_bearer_from_header(const char *authorization, const char **token)
{
    *token = NULL;
    if (!authorization || !*authorization)
        return -ERR_NOT_FOUND;
    if (strncasecmp(authorization, "Bearer", 6) != 0 || authorization[6] != ' ')
        return -ERR_AUTH;
    const char *p = authorization + 6;
    while (*p == ' ')
        p++;
    if (!*p)
        return -ERR_AUTH;
    *token = p;
    return 0;
}

/* Copies s[0..n) into out[0..cap) NUL-terminated, or -ERR_AUTH when it is empty or too long. */
static int
copy_token(const char *s, size_t n, char *out, size_t cap)
{
    if (n == 0 || n >= cap)
        return -ERR_AUTH;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}

int
jwt_token_from_ws_protocol(const char *value, char *out, size_t cap)
{
    static const char prefix[] = JWT_WS_BEARER_PREFIX;
    const size_t plen = sizeof prefix - 1;
    const char *found = NULL;
    size_t found_len = 0;
    if (cap)
        out[0] = '\0';
    if (!value)
        return -ERR_NOT_FOUND;
    for (const char *p = value;;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, " \t,");
        if (n == 0)
            break;
        if (n >= plen && memcmp(p, prefix, plen) == 0) {
            if (found)
                return -ERR_AUTH; /* two tokens: which one would the client mean? */
            found = p + plen;
            found_len = n - plen;
        }
        p += n;
    }
    if (!found)
        return -ERR_NOT_FOUND;
    return copy_token(found, found_len, out, cap);
}

int
jwt_token_from_query(const char *query, char *out, size_t cap)
{
    const char *found = NULL;
    size_t found_len = 0;
    if (cap)
        out[0] = '\0';
    if (!query)
        return -ERR_NOT_FOUND;
    if (*query == '?')
        query++;
    size_t end = strcspn(query, "#");
    for (size_t i = 0; i < end;) {
        size_t n = 0;
        while (i + n < end && query[i + n] != '&')
            n++;
        const char *param = query + i;
        if ((n == 5 && memcmp(param, "token", 5) == 0) ||
            (n >= 6 && memcmp(param, "token=", 6) == 0)) {
            if (found)
                return -ERR_AUTH;
            found = n > 5 ? param + 6 : param + 5;
            found_len = n > 5 ? n - 6 : 0;
        }
        i += n + 1;
    }
    if (!found)
        return -ERR_NOT_FOUND;
    return copy_token(found, found_len, out, cap);
}
