/* cmd_lex.h — private to cmd_lex.c and cmd_parse.c: the parser state and the lexer of the
 * bashlex 0.18 mirror. The lexer turns the text at p->pos into tokens (operators, newlines and
 * words, a word spanning its quotes, escapes, ${...}, $(...), `...` and <(...)), and reads
 * pending heredoc bodies after a newline. Nested command texts inside a word are handed back
 * to the grammar through cmd_parse_nested(). Offsets are into the original text. */
#ifndef SP_CMD_LEX_H
#define SP_CMD_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "cmd_parse.h"

#define CMD_MAX_HEREDOCS 32

enum { CMD_T_EOF, CMD_T_NEWLINE, CMD_T_WORD, CMD_T_OP };

typedef struct {
    int type;
    size_t start, end;
} cmd_tok_t;

typedef struct {
    size_t dstart, dlen; /* delimiter word in the source (quotes removed when compared) */
    bool strip_tabs;
    int event; /* index of its escape event, -1 if none */
} cmd_heredoc_t;

typedef struct {
    const char *s;
    size_t lim; /* end of the region being parsed (EOF) */
    size_t pos;
    size_t last_end; /* end of the last consumed token */
    size_t heredoc_end;
    bool failed;
    int depth;
    int hidden; /* > 0 inside compound commands: upstream's escaper does not visit them */
    cmd_heredoc_t hd[CMD_MAX_HEREDOCS];
    int nhd;
    cmd_events_t *events; /* NULL when not recording */
    bool redir_target;    /* lexing a redirection's target: digits are a word, not an fd */
    bool cached;          /* the token at cache_pos, so nested substitutions are lexed once */
    size_t cache_pos;
    cmd_tok_t cache;
} cmd_parser_t;

/* Reads the next token at p->pos without consuming it; false (p->failed set) when the text
 * cannot be lexed. */
bool cmd_lex_peek(cmd_parser_t *p, cmd_tok_t *t);
/* Consumes t; after a newline, reads the pending heredoc bodies. */
bool cmd_lex_consume(cmd_parser_t *p, const cmd_tok_t *t);
bool cmd_lex_skip_newlines(cmd_parser_t *p);
/* Appends an escaper event unless not recording or inside a compound command. */
void cmd_lex_record(cmd_parser_t *p, cmd_event_kind_t kind, size_t start, size_t end);

/* Provided by cmd_parse.c: parses a nested command text [from, to) (backticks) or from `from`
 * up to a ')' token ($(...), <(...)); returns the position after it, or 0 on failure. */
size_t cmd_parse_nested(cmd_parser_t *p, size_t from, size_t to, bool until_paren);

static inline bool
cmd_lex_fail(cmd_parser_t *p)
{
    p->failed = true;
    return false;
}

static inline bool
cmd_tok_is(const cmd_parser_t *p, const cmd_tok_t *t, const char *text)
{
    size_t l = strlen(text);
    return t->end - t->start == l && memcmp(p->s + t->start, text, l) == 0;
}

static inline bool
cmd_word_is(const cmd_parser_t *p, const cmd_tok_t *t, const char *text)
{
    return t->type == CMD_T_WORD && cmd_tok_is(p, t, text);
}

static inline bool
cmd_op_is(const cmd_parser_t *p, const cmd_tok_t *t, const char *text)
{
    return t->type == CMD_T_OP && cmd_tok_is(p, t, text);
}

#endif
