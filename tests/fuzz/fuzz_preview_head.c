/* fuzz_preview_head.c — gateway/preview_head on arbitrary heads (and the tokens they carry, by
 * common/preview_token): never reads past the input; a head it takes gives the app a head that
 * ends with its blank line, holds no sandpipe header and no sp_pv cookie, and a target that
 * starts with '/' and names no sp_token; every token kept is URL-safe. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "preview_head.h"
#include "preview_token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the Cookie line l (up to its CRLF) holds a cookie named sp_pv. */
static int
names_sp_pv(const char *l)
{
    const char *end = strstr(l, "\r\n");
    for (const char *p = l + 7; p && p < end; p = strchr(p, ';'), p = p ? p + 1 : NULL) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!strncmp(p, "sp_pv=", 6) && p < end)
            return 1;
    }
    return 0;
}

/* Whether the query of target has a parameter named sp_token. */
static int
names_sp_token(const char *target)
{
    const char *q = strchr(target, '?');
    while (q) {
        q++;
        if (!strncmp(q, "sp_token=", 9))
            return 1;
        q = strchr(q, '&');
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size ? size : 1);
    memcpy(in, data, size);
    preview_head_t h;
    buf_t app = {0};
    err_t err = {0};
    if (preview_head_parse(in, size, &h, &app, &err) == 0) {
        buf_append(&app, "", 1);
        const char *a = (const char *)app.data;
        size_t n = strlen(a);
        if (n < 4 || strcmp(a + n - 4, "\r\n\r\n") != 0 || h.target[0] != '/' || h.port == 0 ||
            h.port > 65535 || names_sp_token(h.target))
            __builtin_trap();
        for (const char *l = strstr(a, "\r\n") + 2; *l && strncmp(l, "\r\n", 2);
             l = strstr(l, "\r\n") + 2)
            if ((!strncasecmp(l, "X-SP-", 5)) || (!strncasecmp(l, "Cookie:", 7) && names_sp_pv(l)))
                __builtin_trap();
        for (int i = 0; i < h.ntokens; i++) {
            if (strspn(h.tokens[i].tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._-") != strlen(h.tokens[i].tok))
                __builtin_trap();
            uint8_t key[32] = {0};
            preview_claims_t c;
            (void)preview_token_check(key, h.sid, h.tokens[i].tok, &c);
        }
    }
    buf_free(&app);
    free(in);
    return 0;
}
