/* route_key.h — nginx's credential for a gateway's route lookup (GET /_sp/route: where a
 * session's request goes, docs/api.md "nginx"): a fixed key derived from the shared JWT secret,
 * HMAC-SHA256(secret, ROUTE_KEY_LABEL) as 64 lower-case hex digits. nginx/render.sh writes it
 * into nginx's lookup requests (header X-SP-Route-Key, from `sandpipe token --route-key`); a
 * gateway answers a lookup without it 401 and nothing else. The label keeps it apart from the
 * secret and from the control tokens' key (ctl_token.h): it signs nothing, and nginx's
 * configuration holding it tells nothing of the secret. Pure. */
#ifndef SP_ROUTE_KEY_H
#define SP_ROUTE_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROUTE_KEY_LABEL   "sandpipe route v1"
#define ROUTE_KEY_HEADER  "X-SP-Route-Key"
#define ROUTE_KEY_HEX_LEN 64

/* The key of secret into out (NUL-terminated). 0, or -1 when the secret is shorter than
 * JWT_SECRET_MIN (out then ""). */
int route_key_derive(const uint8_t *secret, size_t secret_len, char out[ROUTE_KEY_HEX_LEN + 1]);
/* Whether given (a header's value, NULL or "" when absent) is the key want, compared in time
 * that does not depend on where they differ. An empty want matches nothing. */
bool route_key_matches(const char *want, const char *given);

#endif
