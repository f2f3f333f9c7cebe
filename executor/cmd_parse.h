/* cmd_parse.h — private to cmd_split.c and cmd_escape.c: a mirror of bashlex 0.18's parse()
 * loop that reports where each top-level node lies in the text and, on request, the words and
 * heredocs upstream's escaper visits. Not part of the executor's API (see cmd_split.h). */
#ifndef SP_CMD_PARSE_H
#define SP_CMD_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* One top-level node (a bashlex "inputunit"): [start, end) in the text. */
typedef struct {
    size_t start, end;
} cmd_span_t;

/* What upstream's escaper visits, in source order, outside compound commands. */
typedef enum { CMD_EV_WORD, CMD_EV_HEREDOC } cmd_event_kind_t;
typedef struct {
    cmd_event_kind_t kind;
    size_t start, end;           /* the word, or the heredoc redirection as bashlex spans it */
    size_t body_start, body_end; /* heredoc body, its last line being the delimiter */
} cmd_event_t;

typedef struct {
    cmd_event_t *v; /* owned by the caller: free(v) */
    size_t n, cap;
} cmd_events_t;

/* Runs bashlex.parse()'s loop over text: each node is parsed on a fresh parser starting one
 * character after max(previous node end, its heredocs' end). Returns the number of nodes, their
 * spans in *spans (caller frees); 0 when the text holds no command (only blanks and comments),
 * -1 on a parse failure or a construct bashlex 0.18 does not implement, *spans being NULL in
 * both cases. events, if not NULL, collects the escaper's events. Pure: no I/O, no globals. */
long cmd_parse_all(const char *text, cmd_span_t **spans, cmd_events_t *events);

/* Length of s[0, n) without trailing " \t\n\r\v\f", as upstream's str.rstrip(). */
static inline size_t
cmd_rstrip_len(const char *s, size_t n)
{
    while (n > 0 && strchr(" \t\n\r\v\f", s[n - 1]))
        n--;
    return n;
}

/* upstream's `not text.strip()` */
static inline bool
cmd_all_blank(const char *s, size_t n)
{
    return cmd_rstrip_len(s, n) == 0;
}

#endif
