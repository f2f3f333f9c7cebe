/* cmd_parse.c — the grammar of the bashlex 0.18 mirror (see cmd_parse.h), over cmd_lex.c's
 * tokens: a small recursive-descent parser that keeps source offsets.
 *
 * It mirrors bashlex.parse(): one node per "inputunit" (a list ended by an unquoted newline or
 * the end), the next parse starting one character after max(node end, heredoc end) on a fresh
 * parser. Any parse failure fails the whole text, and so do the constructs bashlex 0.18 does not
 * implement (case, select, coproc, time, [[ ]], $(( )), $[ ], for (( )), a=( )), because upstream
 * catches those exceptions and runs the text as given. */
#include "cmd_parse.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_lex.h"
#include "xalloc.h"

#define CMD_MAX_DEPTH 64

static bool parse_compound_list(cmd_parser_t *p);
static bool parse_pipeline_cmd(cmd_parser_t *p);

size_t
cmd_parse_nested(cmd_parser_t *p, size_t from, size_t to, bool until_paren)
{
    cmd_parser_t sub = {.s = p->s, .lim = to, .pos = from, .depth = p->depth + 1};
    cmd_tok_t t;
    if (sub.depth > CMD_MAX_DEPTH)
        return 0;
    if (until_paren && (!cmd_lex_skip_newlines(&sub) || !cmd_lex_peek(&sub, &t)))
        return 0;
    if (until_paren && cmd_op_is(&sub, &t, ")"))
        return t.end; /* $( ) */
    if (!parse_compound_list(&sub) || !cmd_lex_peek(&sub, &t))
        return 0;
    if (!until_paren)
        return t.type == CMD_T_EOF ? to : 0;
    return cmd_op_is(&sub, &t, ")") ? t.end : 0;
}

/* Redirection operator, possibly after an fd number: < > >> <& >& <> >| << <<- <<< &> &>> */
static bool
is_redir(const cmd_parser_t *p, const cmd_tok_t *t)
{
    size_t i = t->start;
    if (t->type != CMD_T_OP)
        return false;
    while (p->s[i] >= '0' && p->s[i] <= '9')
        i++;
    return p->s[i] == '<' || p->s[i] == '>' ||
           (p->s[i] == '&' && i + 1 < t->end && p->s[i + 1] == '>');
}

static bool
is_heredoc_op(const cmd_parser_t *p, const cmd_tok_t *t)
{
    size_t i = t->start;
    while (p->s[i] >= '0' && p->s[i] <= '9')
        i++;
    return (t->end - i == 2 && memcmp(p->s + i, "<<", 2) == 0) ||
           (t->end - i == 3 && memcmp(p->s + i, "<<-", 3) == 0);
}

static bool
parse_redirect(cmd_parser_t *p, const cmd_tok_t *op)
{
    cmd_tok_t w;
    if (!cmd_lex_consume(p, op))
        return false;
    p->redir_target = true;
    bool ok = cmd_lex_peek(p, &w);
    p->redir_target = false;
    if (!ok || w.type != CMD_T_WORD)
        return cmd_lex_fail(p);
    if (is_heredoc_op(p, op)) {
        if (p->nhd == CMD_MAX_HEREDOCS)
            return cmd_lex_fail(p);
        cmd_heredoc_t *h = &p->hd[p->nhd++];
        h->dstart = w.start;
        h->dlen = w.end - w.start;
        h->strip_tabs = p->s[op->end - 1] == '-';
        h->event = -1;
        if (p->events && p->hidden == 0) {
            cmd_lex_record(p, CMD_EV_HEREDOC, op->start, w.end);
            h->event = (int)p->events->n - 1;
        }
    }
    return cmd_lex_consume(p, &w);
}

static bool
parse_redirects(cmd_parser_t *p)
{
    cmd_tok_t t;
    while (cmd_lex_peek(p, &t) && is_redir(p, &t))
        if (!parse_redirect(p, &t))
            return false;
    return !p->failed;
}

static bool
expect_word(cmd_parser_t *p, const char *w)
{
    cmd_tok_t t;
    if (!cmd_lex_peek(p, &t) || !cmd_word_is(p, &t, w))
        return cmd_lex_fail(p);
    return cmd_lex_consume(p, &t);
}

static bool
is_list_end(const cmd_parser_t *p, const cmd_tok_t *t)
{
    static const char *const ends[] = {"then", "else", "elif", "fi", "do",
                                       "done", "esac", "}",    NULL};
    if (t->type == CMD_T_EOF || cmd_op_is(p, t, ")"))
        return true;
    for (int k = 0; ends[k]; k++)
        if (cmd_word_is(p, t, ends[k]))
            return true;
    return false;
}

static bool
parse_and_or(cmd_parser_t *p)
{
    cmd_tok_t t;
    if (!parse_pipeline_cmd(p))
        return false;
    while (cmd_lex_peek(p, &t) && (cmd_op_is(p, &t, "&&") || cmd_op_is(p, &t, "||"))) {
        if (!cmd_lex_consume(p, &t) || !cmd_lex_skip_newlines(p) || !parse_pipeline_cmd(p))
            return false;
    }
    return !p->failed;
}

/* newline_list list newline_list, ended by a reserved word, ')' or EOF; at least one command. */
static bool
parse_compound_list(cmd_parser_t *p)
{
    cmd_tok_t t;
    int count = 0;
    if (!cmd_lex_skip_newlines(p))
        return false;
    while (cmd_lex_peek(p, &t) && !is_list_end(p, &t)) {
        if (!parse_and_or(p))
            return false;
        count++;
        if (!cmd_lex_peek(p, &t))
            return false;
        if (cmd_op_is(p, &t, ";") || cmd_op_is(p, &t, "&") || t.type == CMD_T_NEWLINE) {
            if (!cmd_lex_consume(p, &t) || !cmd_lex_skip_newlines(p))
                return false;
        } else if (!is_list_end(p, &t)) {
            return cmd_lex_fail(p);
        }
    }
    return !p->failed && count > 0 ? true : cmd_lex_fail(p);
}

static bool
parse_compound(cmd_parser_t *p, const cmd_tok_t *t)
{
    cmd_tok_t n;
    bool ok = true;
    p->hidden++;
    if (!cmd_lex_consume(p, t))
        ok = false;
    else if (cmd_word_is(p, t, "if")) {
        ok = parse_compound_list(p) && expect_word(p, "then") && parse_compound_list(p);
        while (ok && cmd_lex_peek(p, &n) && cmd_word_is(p, &n, "elif"))
            ok = cmd_lex_consume(p, &n) && parse_compound_list(p) && expect_word(p, "then") &&
                 parse_compound_list(p);
        if (ok && cmd_lex_peek(p, &n) && cmd_word_is(p, &n, "else"))
            ok = cmd_lex_consume(p, &n) && parse_compound_list(p);
        ok = ok && expect_word(p, "fi");
    } else if (cmd_word_is(p, t, "while") || cmd_word_is(p, t, "until")) {
        ok = parse_compound_list(p) && expect_word(p, "do") && parse_compound_list(p) &&
             expect_word(p, "done");
    } else if (cmd_word_is(p, t, "for")) {
        ok = cmd_lex_peek(p, &n) && n.type == CMD_T_WORD && cmd_lex_consume(p, &n) &&
             cmd_lex_skip_newlines(p) && cmd_lex_peek(p, &n);
        if (ok && cmd_word_is(p, &n, "in")) {
            ok = cmd_lex_consume(p, &n);
            while (ok && cmd_lex_peek(p, &n) && n.type == CMD_T_WORD)
                ok = cmd_lex_consume(p, &n);
            ok = ok && (cmd_op_is(p, &n, ";") || n.type == CMD_T_NEWLINE) && cmd_lex_consume(p, &n);
        } else if (ok && cmd_op_is(p, &n, ";")) {
            ok = cmd_lex_consume(p, &n);
        }
        ok = ok && cmd_lex_skip_newlines(p) && expect_word(p, "do") && parse_compound_list(p) &&
             expect_word(p, "done");
    } else if (cmd_word_is(p, t, "{")) {
        ok = parse_compound_list(p) && expect_word(p, "}");
    } else if (cmd_op_is(p, t, "(")) {
        ok = parse_compound_list(p) && cmd_lex_peek(p, &n) && cmd_op_is(p, &n, ")") &&
             cmd_lex_consume(p, &n);
    } else if (cmd_word_is(p, t, "function")) {
        ok = cmd_lex_peek(p, &n) && n.type == CMD_T_WORD && cmd_lex_consume(p, &n) &&
             cmd_lex_peek(p, &n);
        if (ok && cmd_op_is(p, &n, "("))
            ok = cmd_lex_consume(p, &n) && cmd_lex_peek(p, &n) && cmd_op_is(p, &n, ")") &&
                 cmd_lex_consume(p, &n);
        ok = ok && cmd_lex_skip_newlines(p) && cmd_lex_peek(p, &n) && parse_compound(p, &n);
    } else {
        ok = false;
    }
    p->hidden--;
    if (!ok)
        return cmd_lex_fail(p);
    return parse_redirects(p);
}

/* (( ... )) arithmetic command: bashlex accepts it; scan to the matching "))". */
static bool
parse_arith_command(cmd_parser_t *p, const cmd_tok_t *t)
{
    int depth = 0;
    for (size_t i = t->start; i < p->lim; i++) {
        char c = p->s[i];
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0) {
            p->pos = p->last_end = i + 1;
            return p->s[i - 1] == ')' ? parse_redirects(p) : cmd_lex_fail(p);
        }
    }
    return cmd_lex_fail(p);
}

static bool
is_assignment(const cmd_parser_t *p, const cmd_tok_t *t)
{
    size_t i = t->start;
    const char *s = p->s;
    if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
        return false;
    while (i < t->end && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
                          (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
        i++;
    if (i < t->end && s[i] == '[')
        while (i < t->end && s[i] != ']')
            i++, i += (i < t->end && s[i] == ']') ? 1 : 0;
    if (i < t->end && s[i] == '+')
        i++;
    return i < t->end && s[i] == '=';
}

static bool
parse_command(cmd_parser_t *p)
{
    cmd_tok_t t, n;
    static const char *const compound[] = {"if", "while", "until", "for", "{", "function", NULL};
    static const char *const unsupported[] = {"case", "select", "coproc", "time", "[[", "in", NULL};
    if (++p->depth > CMD_MAX_DEPTH || !cmd_lex_peek(p, &t))
        return cmd_lex_fail(p);
    bool ok;
    if (cmd_op_is(p, &t, "(")) {
        ok = (t.end < p->lim && p->s[t.end] == '(') ? parse_arith_command(p, &t)
                                                    : parse_compound(p, &t);
        p->depth--;
        return ok;
    }
    if (t.type != CMD_T_WORD && !is_redir(p, &t))
        return cmd_lex_fail(p);
    for (int k = 0; t.type == CMD_T_WORD && unsupported[k]; k++)
        if (cmd_word_is(p, &t, unsupported[k]))
            return cmd_lex_fail(p);
    for (int k = 0; t.type == CMD_T_WORD && compound[k]; k++)
        if (cmd_word_is(p, &t, compound[k])) {
            ok = parse_compound(p, &t);
            p->depth--;
            return ok;
        }
    if (t.type == CMD_T_WORD && is_list_end(p, &t))
        return cmd_lex_fail(p);
    /* simple command, or a function definition name () compound */
    bool prefix = true;
    size_t elems = 0;
    for (;; elems++) {
        if (!cmd_lex_peek(p, &t))
            return false;
        if (is_redir(p, &t)) {
            if (!parse_redirect(p, &t))
                return false;
        } else if (t.type == CMD_T_WORD) {
            if (prefix && !is_assignment(p, &t))
                prefix = false;
            if (!prefix) /* bashlex's assignment nodes are not visited by the escaper */
                cmd_lex_record(p, CMD_EV_WORD, t.start, t.end);
            if (!cmd_lex_consume(p, &t))
                return false;
        } else {
            break;
        }
    }
    if (cmd_op_is(p, &t, "(")) {
        if (elems != 1 || prefix)
            return cmd_lex_fail(p); /* a=(1 2), echo ( ...: bashlex refuses */
        if (!cmd_lex_consume(p, &t) || !cmd_lex_peek(p, &n) || !cmd_op_is(p, &n, ")") ||
            !cmd_lex_consume(p, &n) || !cmd_lex_skip_newlines(p) || !cmd_lex_peek(p, &n))
            return cmd_lex_fail(p);
        p->hidden++;
        ok = parse_compound(p, &n);
        p->hidden--;
        p->depth--;
        return ok;
    }
    p->depth--;
    return elems > 0 ? true : cmd_lex_fail(p);
}

static bool
parse_pipeline_cmd(cmd_parser_t *p)
{
    cmd_tok_t t;
    if (cmd_lex_peek(p, &t) && cmd_word_is(p, &t, "!") && !cmd_lex_consume(p, &t))
        return false;
    if (!parse_command(p))
        return false;
    while (cmd_lex_peek(p, &t) && (cmd_op_is(p, &t, "|") || cmd_op_is(p, &t, "|&"))) {
        if (!cmd_lex_consume(p, &t) || !cmd_lex_skip_newlines(p) || !parse_command(p))
            return false;
    }
    return !p->failed;
}

/* One bashlex inputunit from p->pos: 1 with [start,end) set, 0 when only blanks/comments
 * remain, -1 on a parse failure. p->heredoc_end is updated. */
static int
parse_unit(cmd_parser_t *p, size_t *start, size_t *end)
{
    cmd_tok_t t;
    if (!cmd_lex_skip_newlines(p) || !cmd_lex_peek(p, &t))
        return -1;
    if (t.type == CMD_T_EOF)
        return 0;
    *start = t.start;
    for (;;) {
        if (!parse_and_or(p) || !cmd_lex_peek(p, &t))
            return -1;
        if (cmd_op_is(p, &t, ";") || cmd_op_is(p, &t, "&")) {
            if (!cmd_lex_consume(p, &t) || !cmd_lex_peek(p, &t))
                return -1;
            if (t.type == CMD_T_NEWLINE || t.type == CMD_T_EOF)
                break;
            continue;
        }
        if (t.type == CMD_T_NEWLINE || t.type == CMD_T_EOF)
            break;
        return -1;
    }
    *end = p->last_end;
    if (t.type == CMD_T_NEWLINE && !cmd_lex_consume(p, &t))
        return -1;
    if (p->nhd > 0)
        return -1; /* heredoc operator on the last line: no body at all */
    return 1;
}

long
cmd_parse_all(const char *text, cmd_span_t **spans, cmd_events_t *events)
{
    size_t len = strlen(text), index = 0, cap = 0;
    long n = 0;
    *spans = NULL;
    while (index < len) {
        cmd_parser_t p = {.s = text, .lim = len, .pos = index, .events = events};
        size_t start = 0, end = 0;
        int r = parse_unit(&p, &start, &end);
        if (r < 0 || (r == 0 && n == 0)) {
            free(*spans);
            *spans = NULL;
            return r < 0 ? -1 : 0;
        }
        if (r == 0)
            break;
        if ((size_t)n == cap) {
            cap = cap ? cap * 2 : 8;
            *spans = xrealloc(*spans, cap * sizeof(**spans));
        }
        (*spans)[n++] = (cmd_span_t){start, end};
        index = (end > p.heredoc_end ? end : p.heredoc_end) + 1;
    }
    return n;
}
