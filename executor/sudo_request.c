/* sudo_request.c — a sudo request's bytes to its fields. See sudo_request.h. */
#include "sudo_request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sudo/sudo_wire.h"
#include "xalloc.h"

/* The next string of [*p, end) or NULL where none is terminated. */
static const char *
next_str(const char **p, const char *end)
{
    const char *s = *p, *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!nul)
        return NULL;
    *p = nul + 1;
    return s;
}

/* A count then that many strings, as a NULL-terminated array (NULL if malformed). A count past
 * the bytes left cannot be true: each string takes one at least. */
static char **
str_list(const char **p, const char *end)
{
    const char *n = next_str(p, end);
    char *stop;
    unsigned long count = n ? strtoul(n, &stop, 10) : 0;
    if (!n || n[0] < '0' || n[0] > '9' || *stop || count > (unsigned long)(end - *p))
        return NULL;
    char **v = xcalloc(count + 1, sizeof *v);
    for (unsigned long i = 0; i < count; i++)
        if (!(v[i] = (char *)next_str(p, end))) {
            free(v);
            return NULL;
        }
    return v;
}

int
sudo_request_parse(const char *buf, size_t len, sudo_request_t *r)
{
    memset(r, 0, sizeof *r);
    const char *p = buf, *end = buf + len;
    const char *magic = next_str(&p, end);
    if (len > SUDO_REQUEST_MAX || !magic || strcmp(magic, SUDO_WIRE_MAGIC) != 0 ||
        !(r->user = next_str(&p, end)) || !(r->group = next_str(&p, end)) ||
        !(r->flags = next_str(&p, end)) || !(r->dir = next_str(&p, end)) ||
        !(r->argv = str_list(&p, end)) || !(r->env = str_list(&p, end)) ||
        !(r->set = str_list(&p, end)) || p != end) {
        sudo_request_free(r);
        return -1;
    }
    return 0;
}

void
sudo_request_free(sudo_request_t *r)
{
    free(r->argv);
    free(r->env);
    free(r->set);
    r->argv = r->env = r->set = NULL;
}
