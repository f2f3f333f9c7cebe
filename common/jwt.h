/* jwt.h — sandpipe's bearer tokens: JWT (RFC 7519) signed with HS256 only, via OpenSSL.
 *
 * Tokens are compact JWS "header.payload.signature", each part base64url without padding.
 * The header is always {"alg":"HS256","typ":"JWT"} when we sign; when we verify, any alg other
 * than exactly "HS256" is refused before the signature is looked at, and the payload is parsed
 * only after the HMAC has been checked (constant-time compare).
 *
 * Claims sandpipe uses (payload members; others such as iss or aud are ignored):
 *   sub      string, required: who the token is for (user id)
 *   role     string, required: "admin", "user" (own sessions only) or "viewer" (read-only)
 *   session  string: the one session a viewer may watch (required for viewers, optional else)
 *   exp      integer, required: expiry, seconds since the epoch; valid while now < exp
 *   nbf      integer, optional: not valid while now < nbf
 *   iat      integer, optional: issue time (informational)
 *   jti      string, optional: token id (for revocation lists)
 * No clock leeway: exp and nbf are compared to the caller's `now` exactly. Issuers and
 * verifiers share a host clock (or NTP), so a leeway would only widen the validity window.
 *
 * Pure apart from jwt_secret_*: no globals, thread-compatible. All strings are NUL-terminated;
 * nothing returned here borrows from the token except where a function says so. */
#ifndef SP_JWT_H
#define SP_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define JWT_MAX_LEN          8192 /* longest token accepted, in bytes (without the NUL) */
#define JWT_BUF_LEN          (JWT_MAX_LEN + 1)
#define JWT_SECRET_MIN       32            /* RFC 7518 3.2: an HS256 key is at least 256 bits */
#define JWT_SECRET_MAX       256           /* largest secret jwt_secret_load accepts */
#define JWT_SECRET_GEN_LEN   32            /* bytes of randomness jwt_secret_generate writes */
#define JWT_WS_PROTOCOL      "sandpipe.v1" /* the subprotocol a server selects (never the token) */
#define JWT_WS_BEARER_PREFIX "bearer." /* offered subprotocol "bearer.<token>" carries a token */

typedef struct {
    char sub[128];     /* required, non-empty */
    char role[16];     /* "admin" | "user" | "viewer" */
    char session[128]; /* viewer: the session it may watch; "" when absent */
    int64_t exp;       /* required */
    int64_t iat;       /* 0 when absent */
    char jti[64];      /* "" when absent */
    int64_t nbf;       /* 0 when absent */
} jwt_claims_t;

/* Signs c into a new token "header.payload.sig" (caller frees with free()). The payload holds
 * sub, role, exp and, when set (non-empty / non-zero), session, iat, nbf and jti, in the order
 * sub, role, session, iat, nbf, exp, jti. Returns NULL, without signing, when secret_len is
 * below JWT_SECRET_MIN or when c would not verify for a reason of its own (missing sub, role
 * not one of the three, viewer without session, a string not terminated inside its array or
 * with control characters, exp <= 0): a programming error, not an input error. */
char *jwt_sign(const uint8_t *secret, size_t secret_len, const jwt_claims_t *c);

/* Verifies token (NUL-terminated) against secret at time now (seconds since the epoch) and,
 * when out is not NULL, fills *out with its claims. On failure *out is zeroed.
 * Returns 0, or < 0 with err set:
 *   -ERR_AUTH          anything malformed, a wrong alg or typ, a bad signature, a missing or
 *                      ill-typed claim, a role not known, nbf not yet reached, a token longer
 *                      than JWT_MAX_LEN, a secret shorter than JWT_SECRET_MIN
 *   -ERR_AUTH_EXPIRED  well-formed and correctly signed, but now >= exp
 * Strict by design: exactly three parts; base64url alphabet only, no padding, canonical
 * trailing bits; header and payload JSON objects without duplicate members or NUL bytes;
 * header alg a string exactly "HS256", typ (if present) exactly "JWT", no "crit". */
int jwt_verify(const uint8_t *secret, size_t secret_len, const char *token, int64_t now,
               jwt_claims_t *out, err_t *err);

/* Reads the secret in path into out[0..cap), *len set to its length. File format: one line;
 * a single trailing "\n" or "\r\n" is ignored; if what remains is an even number of hex
 * digits (either case), it is hex-decoded, else its bytes are the secret as they are.
 * (jwt_secret_generate writes 64 hex digits and a newline.) Refused: a file that is not regular,
 * larger than 2 * JWT_SECRET_MAX + 2 bytes, writable by group or others (anyone who can
 * write it can mint tokens), or whose secret is shorter than JWT_SECRET_MIN or longer than cap.
 * Returns 0, or < 0 with err set: -errno from open/read, -EINVAL (not a regular file), -EACCES
 * (writable by group or others), -ERR_TOO_BIG (file or secret too large), -ERR_BAD_REQ (secret
 * shorter than JWT_SECRET_MIN). On failure out holds nothing of the secret. */
int jwt_secret_load(const char *path, uint8_t *out, size_t cap, size_t *len, err_t *err);

/* A key for another use, derived from secret: HMAC-SHA256(secret, label), 32 bytes into key. The
 * label keeps each use apart (ctl_token.h, route_key.h): a derived key signs no client token
 * and tells nothing of the secret. 0, or -1 when the secret is shorter than JWT_SECRET_MIN (or
 * HMAC fails). */
int jwt_secret_derive(const uint8_t *secret, size_t secret_len, const char *label, uint8_t key[32]);

/* Creates path holding JWT_SECRET_GEN_LEN bytes from RAND_bytes as 64 lower-case hex digits
 * and "\n", mode 0600. Atomic and never clobbering: the content is written and fsynced to a
 * temporary file in the same directory, which is then link()ed to path, so path either does
 * not exist or holds a complete secret. Returns 0, -EEXIST if path already exists (its secret
 * is left alone), or another < 0 with err set. */
int jwt_secret_generate(const char *path, err_t *err);

/* Mints a token with the secret in secret_file: claims sub, role, session ("" for none),
 * iat now, exp now + ttl. Returns a new token (caller frees), or NULL with err set (secret
 * unreadable, or claims jwt_sign refuses: bad role, viewer without session, control chars).
 * The secret is wiped from memory before returning. */
char *jwt_mint_file(const char *secret_file, const char *sub, const char *role, const char *session,
                    int64_t ttl, err_t *err);

/* Token from an Authorization header value "Bearer <token>" (scheme case-insensitive, one or
 * more spaces after it). *token points into authorization (borrowed) and runs to its end; no
 * trailing whitespace is trimmed (HTTP servers hand header values over trimmed; a stray space
 * makes jwt_verify refuse the token). Returns 0, -ERR_NOT_FOUND when authorization is NULL or
 * empty, -ERR_AUTH when the scheme is not Bearer or the token is empty. */
int jwt_bearer_from_header(const char *authorization, const char **token);

/* Token from a Sec-WebSocket-Protocol header value. Convention (browsers cannot set
 * Authorization on a WebSocket): the client offers the subprotocols
 *     new WebSocket(url, ["sandpipe.v1", "bearer." + token])
 * i.e. the header "sandpipe.v1, bearer.<token>"; base64url and '.' are all HTTP token
 * characters, so a JWT is a valid subprotocol name. The prefix is case-sensitive, like
 * subprotocol names. The server must answer with JWT_WS_PROTOCOL ("sandpipe.v1"), never echo
 * the bearer entry (that would leak the token into responses and logs).
 * Copies the token into out[0..cap) NUL-terminated. Returns 0, -ERR_NOT_FOUND when value is
 * NULL or has no bearer.* entry, -ERR_AUTH when the entry is empty, appears twice, or does not
 * fit in cap. */
int jwt_token_from_ws_protocol(const char *value, char *out, size_t cap);

/* Token from a URL query string ("a=1&token=<jwt>&b=2"; a leading '?' is skipped, a '#'
 * ends it). The value is taken as it is: a JWT needs no percent-encoding, so none is decoded
 * (an encoded token fails jwt_verify). Copies into out[0..cap) NUL-terminated. Returns 0,
 * -ERR_NOT_FOUND when query is NULL or has no token parameter, -ERR_AUTH when the value is
 * empty, given twice, or does not fit in cap. Prefer the WebSocket protocol header: query
 * strings end up in access logs. */
int jwt_token_from_query(const char *query, char *out, size_t cap);

#endif
