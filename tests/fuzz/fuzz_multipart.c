/* fuzz_multipart.c — the multipart/form-data parser over arbitrary bodies. Input: the first
 * line is the Content-Type header value (its boundary), the rest is the body. The body is
 * parsed twice, whole and in chunks whose sizes the input's bytes choose; the two parses must
 * agree event for event (chunk boundaries never change the result) and never crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "common/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
on_part(void *ud, const multipart_part_t *p)
{
    if (!p->name || !p->content_type)
        __builtin_trap();
    buf_printf(ud, "[%s|%s|%s]", p->name, p->filename ? p->filename : "-", p->content_type);
    return 0;
}

static int
on_data(void *ud, const char *p, size_t n)
{
    if (n == 0)
        __builtin_trap();
    buf_append(ud, p, n);
    return 0;
}

static int
on_part_end(void *ud)
{
    buf_puts(ud, "<end>");
    return 0;
}

static const multipart_cb_t cbs = {on_part, on_data, on_part_end};

/* Parses body in chunks; step 0 = whole. Returns the feed/finish result; log gets events. */
static int
parse(const char *boundary, const uint8_t *body, size_t n, const uint8_t *steps, size_t nsteps,
      buf_t *log)
{
    multipart_t *m = multipart_new(boundary, &cbs, log);
    err_t err = {0};
    int rc = 0;
    for (size_t off = 0, s = 0; off < n && rc == 0; s++) {
        size_t k = nsteps ? 1 + (size_t)(steps[s % nsteps] % 64) : n;
        if (k > n - off)
            k = n - off;
        rc = multipart_feed(m, (const char *)body + off, k, &err);
        off += k;
    }
    if (rc == 0)
        rc = multipart_finish(m, &err);
    if (rc < 0 && !err.msg[0])
        __builtin_trap();
    multipart_free(m);
    return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl)
        return 0;
    size_t hlen = (size_t)(nl - data);
    char *ct = malloc(hlen + 1);
    memcpy(ct, data, hlen);
    ct[hlen] = '\0';
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (multipart_boundary(ct, boundary, sizeof boundary) < 0 || memchr(ct, '\0', hlen)) {
        free(ct);
        return 0;
    }
    if (!boundary[0] || strlen(boundary) > MULTIPART_BOUNDARY_MAX)
        __builtin_trap();
    const uint8_t *body = nl + 1;
    size_t n = size - hlen - 1;
    buf_t whole = BUF_INIT, chunked = BUF_INIT;
    int a = parse(boundary, body, n, NULL, 0, &whole);
    int b = parse(boundary, body, n, data, hlen ? hlen : 1, &chunked);
    /* Errors may be found at different points, but success and its events must match. */
    if ((a == 0) != (b == 0) ||
        (a == 0 && (whole.len != chunked.len || memcmp(whole.data, chunked.data, whole.len))))
        __builtin_trap();
    buf_free(&whole);
    buf_free(&chunked);
    free(ct);
    return 0;
}
