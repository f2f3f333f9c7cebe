/* sniff_feed.h — feeding netd/sniff an input by every prefix (test_netd_sniff_tls.c,
 * test_netd_sniff_http.c): SNIFF_MORE until the answer, then the same answer for ever, and the
 * expectations built on it. Header-only; include after <cmocka.h>. */
#ifndef SP_TEST_SNIFF_FEED_H
#define SP_TEST_SNIFF_FEED_H

#include <stdio.h>
#include <string.h>

#include "sniff.h"

static const char *const kind_names[] = {"MORE", "TLS", "HTTP", "OTHER"};

/* The answer for buf[0..n), every prefix checked on the way: SNIFF_MORE up to some length, then
 * one answer (kind and name) that more bytes never change. *decided gets that length. */
static inline sniff_kind_t
sniff_prefixes(const void *buf, size_t n, char *name, size_t *decided)
{
    char first_name[SNIFF_NAME_MAX + 1] = "", got[SNIFF_NAME_MAX + 1];
    sniff_kind_t first = SNIFF_MORE;
    size_t at = n;
    for (size_t k = 0; k <= n; k++) {
        memset(got, 'X', sizeof got);
        sniff_kind_t kind = sniff_name(buf, k, got, sizeof got);
        if (strnlen(got, sizeof got) == sizeof got)
            fail_msg("prefix %zu: name not terminated", k);
        if (first == SNIFF_MORE) {
            if (kind != SNIFF_MORE) {
                first = kind;
                at = k;
                strcpy(first_name, got);
            }
        } else if (kind != first || strcmp(got, first_name) != 0) {
            fail_msg("prefix %zu: %s \"%s\" after %s \"%s\" at %zu", k, kind_names[kind], got,
                     kind_names[first], first_name, at);
        }
        if (kind == SNIFF_MORE && got[0] != '\0')
            fail_msg("prefix %zu: MORE with a name", k);
        if (kind == SNIFF_OTHER && got[0] != '\0')
            fail_msg("prefix %zu: OTHER with a name", k);
    }
    if (decided)
        *decided = at;
    strcpy(name, first_name);
    return first;
}

/* The answer must come with the last byte, not before. */
static inline void
expect_at_end(const void *buf, size_t n, sniff_kind_t kind, const char *name)
{
    char got[SNIFF_NAME_MAX + 1];
    size_t decided;
    sniff_kind_t k = sniff_prefixes(buf, n, got, &decided);
    if (k != kind || strcmp(got, name) != 0)
        fail_msg("%s \"%s\", expected %s \"%s\"", kind_names[k], got, kind_names[kind], name);
    if (decided != n)
        fail_msg("decided at %zu of %zu", decided, n);
}

static inline void
expect_kind(const char *text, sniff_kind_t kind, const char *name)
{
    char got[SNIFF_NAME_MAX + 1];
    sniff_kind_t k = sniff_prefixes(text, strlen(text), got, NULL);
    if (k != kind || strcmp(got, name) != 0)
        fail_msg("%s \"%s\", expected %s \"%s\" for \"%s\"", kind_names[k], got, kind_names[kind],
                 name, text);
}

#endif
