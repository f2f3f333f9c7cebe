/* sudo_request.h — the request sandpipe's sudo sends the broker (sudo/sudo_wire.h), parsed from
 * its bytes: pure (no I/O), so it is unit-tested and fuzzed. */
#ifndef SP_SUDO_REQUEST_H
#define SP_SUDO_REQUEST_H

#include <stddef.h>

typedef struct {
    const char *user, *group, *flags, *dir; /* into the request's bytes */
    char **argv, **env, **set;              /* NULL-terminated arrays into them (owned) */
} sudo_request_t;

/* Parses the len bytes at buf, which must outlive r (r points into them). 0, or -1 when they
 * are not one well-formed request (nothing left to free then). */
int sudo_request_parse(const char *buf, size_t len, sudo_request_t *r);

/* Frees r's arrays (not the bytes). */
void sudo_request_free(sudo_request_t *r);

#endif
