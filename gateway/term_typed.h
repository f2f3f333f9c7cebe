/* term_typed.h — what is typed into a terminal, cut into pieces for the session's event log
 * ("terminal_input" events, session_term_typed.c): pure, no I/O, no event log.
 *
 * Keystrokes come one WebSocket message at a time; an event per keystroke would flood the log
 * (and push the agent's actions out of its cap), so bytes are held until a line ends (Enter: CR
 * or LF), then handed out whole. What one message brings (a paste) goes as one piece, cut only at
 * TERM_TYPED_MAX. Held bytes go out early when another person types into the same terminal
 * (each piece has one typist) or when TERM_TYPED_MAX bytes wait without a line end (a full-screen
 * editor's typing, which has no Enter). The holder owns its buffer: term_typed_free. */
#ifndef SP_TERM_TYPED_H
#define SP_TERM_TYPED_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define TERM_TYPED_MAX 4096 /* the largest piece, and the most held without a line end */

typedef struct {
    buf_t held;       /* typed, not handed out yet (no line end in it) */
    char origin[128]; /* who typed what is held */
} term_typed_t;

/* One piece: the bytes (borrowed for the call) and who typed them. */
typedef void (*term_typed_emit_fn)(void *ud, const char *origin, const uint8_t *p, size_t n);

/* Takes n bytes typed by origin; emit is called for each piece ready: what was held for another
 * typist first, then everything up to the last line end (in pieces of at most TERM_TYPED_MAX),
 * and what waits without a line end once it reaches TERM_TYPED_MAX. */
void term_typed_feed(term_typed_t *t, const char *origin, const uint8_t *p, size_t n,
                     term_typed_emit_fn emit, void *ud);
/* Hands out what is held (the terminal ends). */
void term_typed_flush(term_typed_t *t, term_typed_emit_fn emit, void *ud);
void term_typed_free(term_typed_t *t);

#endif
