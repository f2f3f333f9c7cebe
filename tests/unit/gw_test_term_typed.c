/* gw_test_term_typed.c — gateway/term_typed: keystrokes are held until Enter and go out as one
 * line, a paste as one piece, another typist's keys never join the held line, nothing waits
 * past TERM_TYPED_MAX without a line end, and every byte comes out once, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gateway/term_typed.h"

#define PIECES_MAX 64

typedef struct {
    int n;
    char origin[PIECES_MAX][32];
    size_t len[PIECES_MAX];
    char text[PIECES_MAX][TERM_TYPED_MAX + 1];
} pieces_t;

static void
collect(void *ud, const char *origin, const uint8_t *p, size_t n)
{
    pieces_t *ps = ud;
    assert_true(ps->n < PIECES_MAX);
    assert_true(n > 0 && n <= TERM_TYPED_MAX);
    snprintf(ps->origin[ps->n], sizeof ps->origin[0], "%s", origin);
    memcpy(ps->text[ps->n], p, n);
    ps->text[ps->n][n] = '\0';
    ps->len[ps->n] = n;
    ps->n++;
}

static void
type(term_typed_t *t, pieces_t *ps, const char *who, const char *s)
{
    term_typed_feed(t, who, (const uint8_t *)s, strlen(s), collect, ps);
}

static void
test_keystrokes_are_one_line_at_enter(void **state)
{
    (void)state;
    term_typed_t t = {0};
    pieces_t ps = {0};
    for (const char *k = "ls -la"; *k; k++) {
        char one[2] = {*k, 0};
        type(&t, &ps, "alice", one);
    }
    assert_int_equal(ps.n, 0);
    type(&t, &ps, "alice", "\r");
    assert_int_equal(ps.n, 1);
    assert_string_equal(ps.text[0], "ls -la\r");
    assert_string_equal(ps.origin[0], "alice");
    assert_int_equal(t.held.len, 0);
    term_typed_free(&t);
}

static void
test_a_paste_is_one_piece_and_its_unfinished_line_waits(void **state)
{
    (void)state;
    term_typed_t t = {0};
    pieces_t ps = {0};
    type(&t, &ps, "alice", "ec");
    type(&t, &ps, "alice", "ho 1\necho 2\necho 3");
    assert_int_equal(ps.n, 1);
    assert_string_equal(ps.text[0], "echo 1\necho 2\n");
    type(&t, &ps, "alice", "\r");
    assert_int_equal(ps.n, 2);
    assert_string_equal(ps.text[1], "echo 3\r");
    term_typed_free(&t);
}

static void
test_another_typist_gets_a_piece_of_its_own(void **state)
{
    (void)state;
    term_typed_t t = {0};
    pieces_t ps = {0};
    type(&t, &ps, "alice", "git st");
    type(&t, &ps, "bob", "atus\r");
    assert_int_equal(ps.n, 2);
    assert_string_equal(ps.origin[0], "alice");
    assert_string_equal(ps.text[0], "git st");
    assert_string_equal(ps.origin[1], "bob");
    assert_string_equal(ps.text[1], "atus\r");
    term_typed_free(&t);
}

static void
test_nothing_waits_past_the_bound_and_pieces_stay_within_it(void **state)
{
    (void)state;
    term_typed_t t = {0};
    pieces_t ps = {0};
    /* typing with no Enter (a full-screen editor): out once TERM_TYPED_MAX bytes wait */
    char key[2] = {'i', 0};
    for (int i = 0; i < TERM_TYPED_MAX - 1; i++)
        type(&t, &ps, "alice", key);
    assert_int_equal(ps.n, 0);
    type(&t, &ps, "alice", key);
    assert_int_equal(ps.n, 1);
    assert_int_equal(ps.len[0], TERM_TYPED_MAX);
    /* a paste of 2.5 times the bound with lines in it: cut in pieces, every byte once, in order */
    static uint8_t paste[TERM_TYPED_MAX * 5 / 2];
    for (size_t i = 0; i < sizeof paste; i++)
        paste[i] = i % 80 == 79 ? '\n' : (uint8_t)('a' + i % 26);
    term_typed_feed(&t, "alice", paste, sizeof paste, collect, &ps);
    term_typed_flush(&t, collect, &ps);
    size_t off = 0;
    for (int i = 1; i < ps.n; i++) {
        assert_memory_equal(ps.text[i], paste + off, ps.len[i]);
        off += ps.len[i];
    }
    assert_int_equal(off, sizeof paste);
    assert_int_equal(t.held.len, 0);
    term_typed_free(&t);
}

static void
test_flush_hands_out_the_held_line_once(void **state)
{
    (void)state;
    term_typed_t t = {0};
    pieces_t ps = {0};
    type(&t, &ps, "alice", "exit");
    term_typed_flush(&t, collect, &ps);
    term_typed_flush(&t, collect, &ps);
    assert_int_equal(ps.n, 1);
    assert_string_equal(ps.text[0], "exit");
    term_typed_free(&t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keystrokes_are_one_line_at_enter),
        cmocka_unit_test(test_a_paste_is_one_piece_and_its_unfinished_line_waits),
        cmocka_unit_test(test_another_typist_gets_a_piece_of_its_own),
        cmocka_unit_test(test_nothing_waits_past_the_bound_and_pieces_stay_within_it),
        cmocka_unit_test(test_flush_hands_out_the_held_line_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
