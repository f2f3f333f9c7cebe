/* test_netd_sniff_tls.c — netd/sniff on TLS first bytes: two ClientHellos captured from OpenSSL
 * 3.0's s_client on loopback (with and without -servername) and ClientHellos built here (split
 * over records, too long for the peek, without extensions, with a bad or doubled server name,
 * with lengths that lie). Every input is fed by every prefix (sniff_feed.h). HTTP and garbage:
 * test_netd_sniff_http.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sniff_feed.h"

/* Captured once on 127.0.0.1 (a Python listener recording what arrived): `openssl s_client
 * -connect 127.0.0.1:PORT -servername some.example` and the same with -noservername. */
static const unsigned char captured_sni[318] = {
    0x16, 0x03, 0x01, 0x01, 0x39, 0x01, 0x00, 0x01, 0x35, 0x03, 0x03, 0x7b, 0x21, 0xbd, 0x70, 0x34,
    0xc7, 0x83, 0xdd, 0x87, 0x03, 0x9a, 0x86, 0x0e, 0xe5, 0x1f, 0x94, 0xe1, 0x2b, 0xbe, 0xfd, 0x2f,
    0x88, 0xf9, 0x79, 0xcc, 0x22, 0x98, 0xe7, 0xcd, 0x83, 0xac, 0xf1, 0x20, 0xf1, 0xc8, 0xde, 0x84,
    0xc5, 0xbd, 0xc7, 0x82, 0x0e, 0xa9, 0xef, 0x2b, 0x54, 0xb3, 0xdb, 0x66, 0xc6, 0x26, 0xf6, 0xbe,
    0x8e, 0x77, 0x92, 0xf6, 0xfc, 0x7d, 0x9e, 0x1d, 0x25, 0x4e, 0xb6, 0x1f, 0x00, 0x3e, 0x13, 0x02,
    0x13, 0x03, 0x13, 0x01, 0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
    0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b, 0xc0, 0x23, 0xc0, 0x27,
    0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d,
    0x00, 0x9c, 0x00, 0x3d, 0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0xae,
    0x00, 0x00, 0x00, 0x11, 0x00, 0x0f, 0x00, 0x00, 0x0c, 0x73, 0x6f, 0x6d, 0x65, 0x2e, 0x65, 0x78,
    0x61, 0x6d, 0x70, 0x6c, 0x65, 0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00,
    0x16, 0x00, 0x14, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18, 0x01, 0x00, 0x01,
    0x01, 0x01, 0x02, 0x01, 0x03, 0x01, 0x04, 0x00, 0x23, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00,
    0x17, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08,
    0x07, 0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05, 0x08, 0x06, 0x04,
    0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03, 0x01, 0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06,
    0x02, 0x00, 0x2b, 0x00, 0x09, 0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00, 0x2d,
    0x00, 0x02, 0x01, 0x01, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00, 0x20, 0xaa, 0x5e,
    0x1a, 0xcc, 0x71, 0x8a, 0xdf, 0x70, 0x7e, 0x49, 0x98, 0x2b, 0x3d, 0xd9, 0xb6, 0xb8, 0x73, 0xf7,
    0x6f, 0x28, 0x69, 0x3a, 0x29, 0x16, 0xc9, 0x51, 0x28, 0x5f, 0x47, 0x96, 0x83, 0x6a,
};
static const unsigned char captured_no_sni[297] = {
    0x16, 0x03, 0x01, 0x01, 0x24, 0x01, 0x00, 0x01, 0x20, 0x03, 0x03, 0x98, 0x3e, 0x89, 0xeb, 0x95,
    0x24, 0xa7, 0x06, 0x29, 0x46, 0x9d, 0x9a, 0xad, 0x00, 0x47, 0x12, 0x21, 0x2b, 0x7b, 0x39, 0x32,
    0x7a, 0x1a, 0xf1, 0x6b, 0xc7, 0x58, 0x05, 0xfd, 0x4c, 0x47, 0xa3, 0x20, 0x56, 0x52, 0xae, 0x85,
    0x43, 0x52, 0x3d, 0x20, 0x63, 0xa7, 0xbe, 0x7b, 0xe2, 0x4e, 0x4f, 0xde, 0x59, 0xdb, 0x50, 0xe4,
    0x43, 0x9d, 0x8c, 0xf7, 0xaf, 0x1c, 0x6c, 0x0d, 0xc6, 0xee, 0xa8, 0x05, 0x00, 0x3e, 0x13, 0x02,
    0x13, 0x03, 0x13, 0x01, 0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
    0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b, 0xc0, 0x23, 0xc0, 0x27,
    0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d,
    0x00, 0x9c, 0x00, 0x3d, 0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x00, 0x99,
    0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x16, 0x00, 0x14, 0x00, 0x1d,
    0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18, 0x01, 0x00, 0x01, 0x01, 0x01, 0x02, 0x01, 0x03,
    0x01, 0x04, 0x00, 0x23, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00, 0x00, 0x0d,
    0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03, 0x08, 0x07, 0x08, 0x08, 0x08, 0x09,
    0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05, 0x08, 0x06, 0x04, 0x01, 0x05, 0x01, 0x06, 0x01,
    0x03, 0x03, 0x03, 0x01, 0x03, 0x02, 0x04, 0x02, 0x05, 0x02, 0x06, 0x02, 0x00, 0x2b, 0x00, 0x09,
    0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00, 0x2d, 0x00, 0x02, 0x01, 0x01, 0x00,
    0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00, 0x20, 0x2a, 0xfb, 0x15, 0x6a, 0xb0, 0x14, 0xf4,
    0xd0, 0x41, 0x65, 0x60, 0xb8, 0xa7, 0x0a, 0xea, 0x92, 0x75, 0x7a, 0x88, 0xd3, 0xda, 0x20, 0x92,
    0x4d, 0xb1, 0x81, 0x75, 0x7d, 0x18, 0x46, 0xa5, 0x08,
};

/* ---- ClientHellos assembled here ---- */

typedef struct {
    unsigned char b[2 * SNIFF_PEEK_MAX];
    size_t n;
} bytes_t;

static void
add8(bytes_t *o, unsigned v)
{
    assert_true(o->n < sizeof o->b);
    o->b[o->n++] = (unsigned char)v;
}

static void
add16(bytes_t *o, size_t v)
{
    add8(o, (unsigned)(v >> 8 & 0xFF));
    add8(o, (unsigned)(v & 0xFF));
}

static void
add_raw(bytes_t *o, const void *p, size_t n)
{
    assert_true(n <= sizeof o->b - o->n);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

/* A server_name extension whose list holds the names given (type, name), each len bytes. */
static void
add_sni(bytes_t *exts, int count, const unsigned types[], const char *const names[])
{
    size_t list = 0;
    for (int i = 0; i < count; i++)
        list += 3 + strlen(names[i]);
    add16(exts, 0);
    add16(exts, list + 2);
    add16(exts, list);
    for (int i = 0; i < count; i++) {
        add8(exts, types[i]);
        add16(exts, strlen(names[i]));
        add_raw(exts, names[i], strlen(names[i]));
    }
}

static void
add_host(bytes_t *exts, const char *host)
{
    const unsigned type = 0;
    add_sni(exts, 1, &type, &host);
}

/* An extension of another type (supported_versions: TLS 1.3, 1.2) */
static void
add_other_ext(bytes_t *exts)
{
    add_raw(exts, "\x00\x2b\x00\x05\x04\x03\x04\x03\x03", 9);
}

/* A padding extension (RFC 7685) of len bytes of data. */
static void
add_padding(bytes_t *exts, size_t len)
{
    add16(exts, 21);
    add16(exts, len);
    for (size_t i = 0; i < len; i++)
        add8(exts, 0);
}

/* A record holding a ClientHello with these extensions (none at all: exts NULL). */
static void
build_hello(bytes_t *out, const bytes_t *exts)
{
    bytes_t body = {.n = 0};
    add16(&body, 0x0303);
    for (int i = 0; i < 32; i++) /* random */
        add8(&body, (unsigned)(i * 37 + 11));
    add8(&body, 32); /* session id */
    for (int i = 0; i < 32; i++)
        add8(&body, (unsigned)i);
    add16(&body, 4); /* cipher suites */
    add_raw(&body, "\x13\x01\x13\x02", 4);
    add8(&body, 1); /* compression methods: null */
    add8(&body, 0);
    if (exts) {
        add16(&body, exts->n);
        add_raw(&body, exts->b, exts->n);
    }
    out->n = 0;
    add8(out, 22);
    add16(out, 0x0301);
    add16(out, 4 + body.n);
    add8(out, 1);
    add8(out, (unsigned)(body.n >> 16));
    add16(out, body.n & 0xFFFF);
    add_raw(out, body.b, body.n);
}

/* The handshake bytes of a one-record hello sent again in records of at most piece bytes. */
static void
split_records(const bytes_t *hello, size_t piece, bytes_t *out)
{
    out->n = 0;
    for (size_t at = 5; at < hello->n; at += piece) {
        size_t n = hello->n - at < piece ? hello->n - at : piece;
        add8(out, 22);
        add16(out, 0x0303);
        add16(out, n);
        add_raw(out, hello->b + at, n);
    }
}

static sniff_kind_t
sniff_bytes(const bytes_t *b, char *name)
{
    return sniff_name(b->b, b->n, name, SNIFF_NAME_MAX + 1);
}

/* ---- TLS ---- */

static void
test_captured_client_hello_gives_its_server_name(void **state)
{
    (void)state;
    expect_at_end(captured_sni, sizeof captured_sni, SNIFF_TLS, "some.example");
}

static void
test_captured_client_hello_without_sni_gives_an_empty_name(void **state)
{
    (void)state;
    expect_at_end(captured_no_sni, sizeof captured_no_sni, SNIFF_TLS, "");
}

static void
test_bytes_after_the_client_hello_change_nothing(void **state)
{
    (void)state;
    bytes_t b = {.n = 0};
    char name[SNIFF_NAME_MAX + 1];
    add_raw(&b, captured_sni, sizeof captured_sni);
    add_raw(&b, "\x14\x03\x03\x00\x01\x01\x17\x03\x03\x00\x10garbage", 18);
    assert_int_equal(sniff_bytes(&b, name), SNIFF_TLS);
    assert_string_equal(name, "some.example");
}

static void
test_server_name_is_lower_cased_without_its_trailing_dot(void **state)
{
    (void)state;
    bytes_t exts = {.n = 0}, hello;
    add_other_ext(&exts);
    add_host(&exts, "Mixed.Case_1-2.Example.");
    build_hello(&hello, &exts);
    expect_at_end(hello.b, hello.n, SNIFF_TLS, "mixed.case_1-2.example");
}

static void
test_client_hello_without_extensions_or_host_name_gives_an_empty_name(void **state)
{
    (void)state;
    bytes_t exts = {.n = 0}, hello;
    build_hello(&hello, NULL);
    expect_at_end(hello.b, hello.n, SNIFF_TLS, "");
    build_hello(&hello, &exts); /* an empty extensions field */
    expect_at_end(hello.b, hello.n, SNIFF_TLS, "");
    /* a server_name list of another name type only */
    const unsigned type = 7;
    const char *const other = "opaque";
    add_sni(&exts, 1, &type, &other);
    build_hello(&hello, &exts);
    expect_at_end(hello.b, hello.n, SNIFF_TLS, "");
}

static void
test_client_hello_split_over_records_is_joined(void **state)
{
    (void)state;
    bytes_t exts = {.n = 0}, hello, split;
    add_other_ext(&exts);
    add_host(&exts, "split.example");
    build_hello(&hello, &exts);
    static const size_t pieces[] = {1, 2, 3, 4, 5, 7, 50, 100};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        split_records(&hello, pieces[i], &split);
        expect_at_end(split.b, split.n, SNIFF_TLS, "split.example");
    }
    /* the captured one, in two records cut inside the server name */
    bytes_t cap = {.n = 0};
    add_raw(&cap, captured_sni, sizeof captured_sni);
    split_records(&cap, 150, &split);
    expect_at_end(split.b, split.n, SNIFF_TLS, "some.example");
    /* a record of another content type between the fragments ends it */
    split_records(&cap, 150, &split);
    split.b[5 + 150] = 23;
    char name[SNIFF_NAME_MAX + 1];
    assert_int_equal(sniff_bytes(&split, name), SNIFF_OTHER);
}

static void
test_client_hello_up_to_the_peek_limit_is_read_and_longer_is_other(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1];
    bytes_t exts = {.n = 0}, hello;
    add_host(&exts, "big.example");
    build_hello(&hello, &exts);
    size_t pad = SNIFF_PEEK_MAX - hello.n - 4; /* a padding extension's header is 4 bytes */
    /* padded to SNIFF_PEEK_MAX bytes exactly, in one record */
    add_padding(&exts, pad);
    build_hello(&hello, &exts);
    assert_int_equal(hello.n, SNIFF_PEEK_MAX);
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_TLS);
    assert_string_equal(name, "big.example");
    hello.n--;
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_MORE);

    /* one byte more is refused as soon as the handshake header says so */
    exts.n = 0;
    add_host(&exts, "big.example");
    add_padding(&exts, pad + 1);
    build_hello(&hello, &exts);
    assert_int_equal(hello.n, SNIFF_PEEK_MAX + 1);
    size_t decided;
    assert_int_equal(sniff_prefixes(hello.b, hello.n, name, &decided), SNIFF_OTHER);
    assert_int_equal(decided, 9);
}

static void
test_hello_in_tiny_records_is_other_when_the_peek_limit_is_reached(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1];
    bytes_t exts = {.n = 0}, hello, split;
    add_host(&exts, "slow.example");
    add_padding(&exts, 3000);
    build_hello(&hello, &exts);
    split_records(&hello, 1, &split); /* six bytes a handshake byte */
    assert_true(split.n > SNIFF_PEEK_MAX);
    assert_int_equal(sniff_name(split.b, SNIFF_PEEK_MAX - 1, name, sizeof name), SNIFF_MORE);
    assert_int_equal(sniff_name(split.b, SNIFF_PEEK_MAX, name, sizeof name), SNIFF_OTHER);
    assert_int_equal(sniff_bytes(&split, name), SNIFF_OTHER);
}

static void
test_record_length_beyond_what_arrived_asks_for_more(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1];
    /* the record says 300 bytes, 20 came */
    bytes_t b = {.n = 0};
    add_raw(&b, "\x16\x03\x01\x01\x2c\x01\x00\x01\x28\x03\x03", 11);
    for (int i = 0; i < 9; i++)
        add8(&b, 0);
    assert_int_equal(sniff_bytes(&b, name), SNIFF_MORE);
    /* a record longer than TLS allows is not TLS */
    assert_int_equal(
        sniff_name((const unsigned char *)"\x16\x03\x01\x40\x01", 5, name, sizeof name),
        SNIFF_OTHER);
    assert_int_equal(
        sniff_name((const unsigned char *)"\x16\x03\x01\x00\x00", 5, name, sizeof name),
        SNIFF_OTHER);
}

static void
test_bad_server_names_make_it_other(void **state)
{
    (void)state;
    char long_label[80], long_name[300];
    memset(long_label, 'a', 64);
    long_label[64] = '\0';
    memset(long_name, 0, sizeof long_name);
    for (size_t i = 0; i < 255; i++) /* 255 with no trailing dot to drop */
        long_name[i] = i % 2 ? '.' : 'b';
    const char *const bad[] = {
        "",       ".",          "a..b", ".a",       "a b.example", "a\tb",  "exa/mple",
        "ex:443", "ex\xc3\xa9", "\x7f", long_label, long_name,     "a.b..",
    };
    char name[SNIFF_NAME_MAX + 1];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bytes_t exts = {.n = 0}, hello;
        add_host(&exts, bad[i]);
        build_hello(&hello, &exts);
        if (sniff_bytes(&hello, name) != SNIFF_OTHER)
            fail_msg("\"%s\" accepted as \"%s\"", bad[i], name);
    }
    /* a NUL inside the name */
    bytes_t exts = {.n = 0}, hello;
    add_host(&exts, "evil.example@good.example");
    build_hello(&hello, &exts);
    char *at = memchr(hello.b, '@', hello.n);
    assert_non_null(at);
    *at = '\0';
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_OTHER);
    /* the longest that passes: 63-byte labels, 253 in all */
    memset(long_name, 0, sizeof long_name);
    for (size_t i = 0; i < 253; i++)
        long_name[i] = i % 64 == 63 ? '.' : 'c';
    exts.n = 0;
    add_host(&exts, long_name);
    build_hello(&hello, &exts);
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_TLS);
    assert_string_equal(name, long_name);
}

static void
test_two_server_names_make_it_other(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1];
    bytes_t exts = {.n = 0}, hello;
    const unsigned types[2] = {0, 0};
    const char *const names[2] = {"good.example", "evil.example"};
    add_sni(&exts, 2, types, names);
    build_hello(&hello, &exts);
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_OTHER);
    exts.n = 0;
    add_host(&exts, "good.example");
    add_other_ext(&exts);
    add_host(&exts, "good.example");
    build_hello(&hello, &exts);
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_OTHER);
    assert_string_equal(name, "");
}

/* Each length field of the captured hello, made to lie, gives SNIFF_OTHER or SNIFF_MORE, never
 * a name read from the wrong bytes; a length byte set to each value at all. */
static void
test_lying_lengths_never_give_a_wrong_name(void **state)
{
    (void)state;
    bytes_t b;
    char name[SNIFF_NAME_MAX + 1];
    static const struct {
        size_t at;
        const char *what;
    } fields[] = {
        {8, "handshake length"},          {43, "session id length"},  {77, "cipher suites length"},
        {140, "compression length"},      {143, "extensions length"}, {147, "server_name length"},
        {149, "server_name list length"}, {152, "host_name length"},
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        for (unsigned v = 0; v < 256; v++) {
            memcpy(b.b, captured_sni, sizeof captured_sni);
            b.n = sizeof captured_sni;
            if (b.b[fields[f].at] == v)
                continue;
            b.b[fields[f].at] = (unsigned char)v;
            sniff_kind_t k = sniff_bytes(&b, name);
            if (k == SNIFF_TLS && strcmp(name, "some.example") != 0 && name[0] != '\0')
                fail_msg("%s %u: name \"%s\"", fields[f].what, v, name);
            if (k == SNIFF_TLS && fields[f].at >= 143)
                fail_msg("%s %u: still TLS", fields[f].what, v);
        }
    }
    /* a session id past 32 bytes */
    memcpy(b.b, captured_sni, sizeof captured_sni);
    b.n = sizeof captured_sni;
    b.b[43] = 33;
    assert_int_equal(sniff_bytes(&b, name), SNIFF_OTHER);
}

static void
test_other_records_and_handshakes_are_other(void **state)
{
    (void)state;
    char name[SNIFF_NAME_MAX + 1];
    bytes_t b = {.n = 0};
    add_raw(&b, captured_sni, sizeof captured_sni);
    b.b[5] = 2; /* a ServerHello */
    assert_int_equal(sniff_bytes(&b, name), SNIFF_OTHER);
    assert_int_equal(sniff_name(b.b, 6, name, sizeof name), SNIFF_OTHER); /* at once */
    b.b[5] = 1;
    b.b[1] = 2; /* record version 2.x */
    assert_int_equal(sniff_name(b.b, 2, name, sizeof name), SNIFF_OTHER);
    b.b[1] = 3;
    b.b[9] = 2; /* a ClientHello of version 2.x */
    assert_int_equal(sniff_bytes(&b, name), SNIFF_OTHER);
    /* other content types: change_cipher_spec, alert, application_data; an SSLv2 hello */
    expect_kind("\x14\x03\x03\x00\x01\x01", SNIFF_OTHER, "");
    expect_kind("\x15\x03\x03\x00\x02\x02\x28", SNIFF_OTHER, "");
    expect_kind("\x17\x03\x03\x00\x05hello", SNIFF_OTHER, "");
    expect_kind("\x80\x2e\x01\x00\x02", SNIFF_OTHER, "");
    /* a trailing byte after the extensions */
    bytes_t exts = {.n = 0}, hello;
    add_host(&exts, "t.example");
    build_hello(&hello, &exts);
    hello.b[4]++;
    hello.b[8]++;
    add8(&hello, 0);
    assert_int_equal(sniff_bytes(&hello, name), SNIFF_OTHER);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captured_client_hello_gives_its_server_name),
        cmocka_unit_test(test_captured_client_hello_without_sni_gives_an_empty_name),
        cmocka_unit_test(test_bytes_after_the_client_hello_change_nothing),
        cmocka_unit_test(test_server_name_is_lower_cased_without_its_trailing_dot),
        cmocka_unit_test(test_client_hello_without_extensions_or_host_name_gives_an_empty_name),
        cmocka_unit_test(test_client_hello_split_over_records_is_joined),
        cmocka_unit_test(test_client_hello_up_to_the_peek_limit_is_read_and_longer_is_other),
        cmocka_unit_test(test_hello_in_tiny_records_is_other_when_the_peek_limit_is_reached),
        cmocka_unit_test(test_record_length_beyond_what_arrived_asks_for_more),
        cmocka_unit_test(test_bad_server_names_make_it_other),
        cmocka_unit_test(test_two_server_names_make_it_other),
        cmocka_unit_test(test_lying_lengths_never_give_a_wrong_name),
        cmocka_unit_test(test_other_records_and_handshakes_are_other),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
