/* fuzz_sniff.c — netd/sniff on arbitrary first bytes, whole and by prefixes: the answer is one
 * of the four kinds, the name always terminated, "" unless TLS or HTTP, and else a lower-case
 * host name; never SNIFF_MORE at SNIFF_PEEK_MAX bytes; too small a name buffer is OTHER. Prefixes:
 * SNIFF_MORE up to some length, the whole input's answer from there on (more bytes never change
 * an answer). Every prefix of a short input is tried; of a longer one, the length where the
 * answer comes (found by bisection, which that rule allows), its neighbours and a sample. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EVERY_PREFIX_MAX 64 /* past this, prefixes are sampled */
#define PREFIX_SAMPLES   32

static sniff_kind_t
sniff_checked(const uint8_t *data, size_t n, char name[SNIFF_NAME_MAX + 1])
{
    memset(name, 'X', SNIFF_NAME_MAX + 1);
    sniff_kind_t kind = sniff_name(data, n, name, SNIFF_NAME_MAX + 1);
    size_t len = strnlen(name, SNIFF_NAME_MAX + 1);
    if (len > SNIFF_NAME_MAX)
        __builtin_trap();
    switch (kind) {
    case SNIFF_MORE:
        if (n >= SNIFF_PEEK_MAX)
            __builtin_trap();
        /* fall through */
    case SNIFF_OTHER:
        if (len != 0)
            __builtin_trap();
        break;
    case SNIFF_TLS:
    case SNIFF_HTTP:
        for (size_t i = 0; i < len; i++) {
            char c = name[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                  (c == '.' && i > 0 && i + 1 < len && name[i + 1] != '.')))
                __builtin_trap();
        }
        break;
    default: __builtin_trap();
    }
    return kind;
}

/* The prefix of n bytes has the answer the rule says: SNIFF_MORE below decided, else whole's. */
static void
check_prefix(const uint8_t *data, size_t n, size_t decided, sniff_kind_t whole,
             const char *whole_name)
{
    char name[SNIFF_NAME_MAX + 1];
    sniff_kind_t kind = sniff_checked(data, n, name);
    if (n < decided ? kind != SNIFF_MORE : kind != whole || strcmp(name, whole_name) != 0)
        __builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char whole_name[SNIFF_NAME_MAX + 1], name[SNIFF_NAME_MAX + 1];
    sniff_kind_t whole = sniff_checked(data, size, whole_name);

    /* the shortest decided prefix: size + 1 when even the whole input is not */
    size_t lo = 0, hi = size + 1;
    if (whole != SNIFF_MORE) {
        hi = size;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (sniff_checked(data, mid, name) == SNIFF_MORE)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    size_t decided = hi;
    if (size <= EVERY_PREFIX_MAX) {
        for (size_t n = 0; n < size; n++)
            check_prefix(data, n, decided, whole, whole_name);
    } else {
        for (size_t n = decided > 2 ? decided - 2 : 0; n <= decided + 2 && n < size; n++)
            check_prefix(data, n, decided, whole, whole_name);
        for (size_t i = 0; i < PREFIX_SAMPLES; i++)
            check_prefix(data, i * size / PREFIX_SAMPLES, decided, whole, whole_name);
    }

    char small[SNIFF_NAME_MAX];
    if (sniff_name(data, size, small, sizeof small) != SNIFF_OTHER || small[0] != '\0')
        __builtin_trap();
    return 0;
}
