/* cmd_split.c — split an action's command text into top-level commands the way OpenHands 0.62.0
 * does (split_bash_commands over bashlex 0.18), plus its refusal text and its escaping.
 *
 * A small recursive-descent bash parser that keeps source offsets. It mirrors bashlex.parse():
 * one node per "inputunit" (a list ended by an unquoted newline or the end), the next parse
 * starting one character after max(node end, heredoc end) on a fresh parser. Any parse failure
 * makes the whole text one command, and so do the constructs bashlex 0.18 does not implement
 * (case, select, coproc, time, [[ ]], $(( )), $[ ], for (( )), a=( )), because upstream catches
 * those exceptions and runs the text as given. Pure: no I/O, no globals. */
#include "cmd_split.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xalloc.h"

#define SPLIT_MAX_DEPTH 64
#define SPLIT_MAX_HEREDOCS 32

enum { T_EOF, T_NEWLINE, T_WORD, T_OP };

typedef struct {
    int type;
    size_t start, end;
} tok_t;

typedef struct {
    size_t dstart, dlen; /* delimiter word in the source (quotes removed when compared) */
    bool strip_tabs;
    int event;           /* index of its escape event, -1 if none */
} heredoc_t;

typedef enum { EV_WORD, EV_HEREDOC } ev_kind_t;
typedef struct {
    ev_kind_t kind;
    size_t start, end;           /* the word, or the heredoc redirection as bashlex spans it */
    size_t body_start, body_end; /* heredoc body, its last line being the delimiter */
} esc_event_t;

typedef struct {
    esc_event_t *v;
    size_t n, cap;
} esc_events_t;

typedef struct {
    const char *s;
    size_t lim;       /* end of the region being parsed (EOF) */
    size_t pos;
    size_t last_end;  /* end of the last consumed token */
    size_t heredoc_end;
    bool failed;
    int depth;
    int hidden;       /* > 0 inside compound commands: upstream's escaper does not visit them */
    heredoc_t hd[SPLIT_MAX_HEREDOCS];
    int nhd;
    esc_events_t *events; /* NULL when not recording */
    bool redir_target;    /* lexing a redirection's target: digits are a word, not an fd */
    bool cached;          /* the token at cache_pos, so nested substitutions are lexed once */
    size_t cache_pos;
    tok_t cache;
} parser_t;

static bool parse_compound_list(parser_t *p);
static bool parse_pipeline_cmd(parser_t *p);
static bool peek(parser_t *p, tok_t *t);
static bool skip_newlines(parser_t *p);
static bool op_is(const parser_t *p, const tok_t *t, const char *text);

static bool
fail(parser_t *p)
{
    p->failed = true;
    return false;
}

static void
record(parser_t *p, ev_kind_t kind, size_t start, size_t end)
{
    esc_events_t *e = p->events;
    if (!e || p->hidden > 0)
        return;
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
    }
    e->v[e->n++] = (esc_event_t){kind, start, end, end, end};
}

static bool
is_meta(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
           c == '>' || c == '(' || c == ')';
}

/* Parses a nested command text [from, to) (backticks) or from `from` up to a ')' token
 * ($(...), <(...)); returns the position after it, or 0 on failure. */
static size_t
parse_nested(parser_t *p, size_t from, size_t to, bool until_paren)
{
    parser_t sub = {.s = p->s, .lim = to, .pos = from, .depth = p->depth + 1};
    tok_t t;
    if (sub.depth > SPLIT_MAX_DEPTH)
        return 0;
    if (until_paren && (!skip_newlines(&sub) || !peek(&sub, &t)))
        return 0;
    if (until_paren && op_is(&sub, &t, ")"))
        return t.end; /* $( ) */
    if (!parse_compound_list(&sub) || !peek(&sub, &t))
        return 0;
    if (!until_paren)
        return t.type == T_EOF ? to : 0;
    return op_is(&sub, &t, ")") ? t.end : 0;
}

/* Scans a ${...} (i at '{'); returns position after '}' or 0. */
static size_t scan_dollar(parser_t *p, size_t i, bool in_dq);

static size_t
scan_dquote(parser_t *p, size_t i) /* i after the opening quote */
{
    const char *s = p->s;
    while (i < p->lim) {
        char c = s[i];
        if (c == '"')
            return i + 1;
        if (c == '\\') {
            i += 2;
        } else if (c == '$') {
            i = scan_dollar(p, i, true);
            if (!i)
                return 0;
        } else if (c == '`') {
            size_t j = i + 1;
            while (j < p->lim && s[j] != '`')
                j += s[j] == '\\' ? 2 : 1;
            if (j >= p->lim || !parse_nested(p, i + 1, j, false))
                return 0;
            i = j + 1;
        } else {
            i++;
        }
    }
    return 0;
}

static size_t
scan_dollar(parser_t *p, size_t i, bool in_dq)
{
    const char *s = p->s;
    size_t n = p->lim;
    if (i + 1 >= n)
        return i + 1;
    char c = s[i + 1];
    if (c == '$')
        return i + 2;
    if (c == '(') {
        if (i + 2 < n && s[i + 2] == '(')
            return 0; /* arithmetic expansion: NotImplementedError in bashlex 0.18 */
        return parse_nested(p, i + 2, n, true);
    }
    if (c == '[')
        return 0; /* $[ ] arithmetic substitution: NotImplementedError */
    if (c == '{') {
        int depth = 1;
        size_t j = i + 2;
        while (j < n && depth > 0) {
            if (s[j] == '\\') {
                j += 2;
                continue;
            }
            if (s[j] == '\'' && !in_dq) {
                const char *q = memchr(s + j + 1, '\'', n - j - 1);
                if (!q)
                    return 0;
                j = (size_t)(q - s) + 1;
                continue;
            }
            if (s[j] == '"') {
                j = scan_dquote(p, j + 1);
                if (!j)
                    return 0;
                continue;
            }
            if (s[j] == '$') {
                j = scan_dollar(p, j, in_dq);
                if (!j)
                    return 0;
                continue;
            }
            if (s[j] == '{')
                depth++;
            else if (s[j] == '}')
                depth--;
            j++;
        }
        return depth == 0 ? j : 0;
    }
    if (!in_dq && c == '\'') { /* $'...' with backslash escapes */
        size_t j = i + 2;
        while (j < n && s[j] != '\'')
            j += s[j] == '\\' ? 2 : 1;
        return j < n ? j + 1 : 0;
    }
    if (!in_dq && c == '"')
        return scan_dquote(p, i + 2);
    return i + 1;
}

/* Lexes the word starting at i; returns its end or 0 on failure. */
static size_t
lex_word(parser_t *p, size_t i)
{
    const char *s = p->s;
    size_t n = p->lim;
    while (i < n) {
        char c = s[i];
        if ((c == '<' || c == '>') && i + 1 < n && s[i + 1] == '(') {
            i = parse_nested(p, i + 2, n, true); /* process substitution */
        } else if (is_meta(c)) {
            break;
        } else if (c == '\\') {
            /* a backslash (or backslash-newline) ending the text: bashlex "unexpected EOF" */
            if (i + 1 >= n || (s[i + 1] == '\n' && i + 2 >= n))
                return 0;
            i += 2;
            continue;
        } else if (c == '\'') {
            const char *q = memchr(s + i + 1, '\'', n - i - 1);
            i = q ? (size_t)(q - s) + 1 : 0;
        } else if (c == '"') {
            i = scan_dquote(p, i + 1);
        } else if (c == '$') {
            i = scan_dollar(p, i, false);
        } else if (c == '`') {
            size_t j = i + 1;
            while (j < n && s[j] != '`')
                j += s[j] == '\\' ? 2 : 1;
            i = (j < n && parse_nested(p, i + 1, j, false)) ? j + 1 : 0;
        } else {
            i++;
        }
        if (!i)
            return 0;
    }
    return i;
}

static const char *const OPS[] = {"&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", "<<<", "<<-",
                                  "<<", "<&", "<>", ">>", ">&", ">|", ";", "&", "|", "<", ">",
                                  "(", ")", NULL};

/* Reads the next token at p->pos without consuming it. */
static bool
peek(parser_t *p, tok_t *t)
{
    const char *s = p->s;
    size_t i = p->pos, n = p->lim;
    if (p->cached && p->cache_pos == p->pos) {
        *t = p->cache;
        return true;
    }
    for (;;) {
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i + 1 < n && s[i] == '\\' && s[i + 1] == '\n') {
            if (i + 2 >= n)
                return fail(p); /* line continuation into the end of the text */
            i += 2;
            continue;
        }
        if (i < n && s[i] == '#') {
            while (i < n && s[i] != '\n')
                i++;
        }
        break;
    }
    t->start = i;
    if (i >= n) {
        t->type = T_EOF;
        t->end = i;
        return true;
    }
    if (s[i] == '\n') {
        t->type = T_NEWLINE;
        t->end = i + 1;
        return true;
    }
    /* fd number glued to a redirection (2>&1) belongs to the operator */
    size_t d = i;
    while (d < n && s[d] >= '0' && s[d] <= '9')
        d++;
    size_t o = (d > i && d < n && !p->redir_target && (s[d] == '<' || s[d] == '>') &&
                !(d + 1 < n && s[d + 1] == '(')) ? d : i;
    if (!((s[o] == '<' || s[o] == '>') && o + 1 < n && s[o + 1] == '(')) {
        for (int k = 0; OPS[k]; k++) {
            size_t l = strlen(OPS[k]);
            if (o + l <= n && memcmp(s + o, OPS[k], l) == 0) {
                if (o != i && !(OPS[k][0] == '<' || OPS[k][0] == '>'))
                    break;
                t->type = T_OP;
                t->end = o + l;
                return true;
            }
        }
    }
    size_t e = lex_word(p, i);
    if (!e || e == i)
        return fail(p);
    t->type = T_WORD;
    t->end = e;
    p->cached = true;
    p->cache_pos = p->pos;
    p->cache = *t;
    return true;
}

static bool
tok_is(const parser_t *p, const tok_t *t, const char *text)
{
    size_t l = strlen(text);
    return t->end - t->start == l && memcmp(p->s + t->start, text, l) == 0;
}

static bool
word_is(const parser_t *p, const tok_t *t, const char *text)
{
    return t->type == T_WORD && tok_is(p, t, text);
}

static bool
op_is(const parser_t *p, const tok_t *t, const char *text)
{
    return t->type == T_OP && tok_is(p, t, text);
}

/* bashlex 0.18 compares body lines with the delimiter word as written, quotes included:
 * <<'EOF' ... EOF is "delimited by end-of-file" there, so such a text is one command upstream. */
static bool
delim_matches(const parser_t *p, const heredoc_t *h, const char *line, size_t len)
{
    return len == h->dlen && memcmp(line, p->s + h->dstart, len) == 0;
}

/* Reads the pending heredoc bodies starting at p->pos (just after a newline). */
static bool
read_heredocs(parser_t *p)
{
    for (int h = 0; h < p->nhd; h++) {
        size_t i = p->pos;
        for (;;) {
            if (i >= p->lim)
                return fail(p); /* delimited by end-of-file: bashlex refuses it */
            const char *nl = memchr(p->s + i, '\n', p->lim - i);
            size_t eol = nl ? (size_t)(nl - p->s) : p->lim;
            size_t b = i;
            if (p->hd[h].strip_tabs)
                while (b < eol && p->s[b] == '\t')
                    b++;
            if (delim_matches(p, &p->hd[h], p->s + b, eol - b)) {
                if (p->hd[h].event >= 0) {
                    esc_event_t *e = &p->events->v[p->hd[h].event];
                    e->body_start = p->pos;
                    e->body_end = eol;
                    if (e->end + 1 == p->pos) /* bashlex stretches the redirection over it */
                        e->end = eol;
                }
                p->heredoc_end = eol;
                p->pos = eol < p->lim ? eol + 1 : eol;
                break;
            }
            i = eol + 1;
        }
    }
    p->nhd = 0;
    return true;
}

static bool
consume(parser_t *p, const tok_t *t)
{
    p->pos = t->end;
    p->last_end = t->end;
    if (t->type == T_NEWLINE && p->nhd > 0)
        return read_heredocs(p);
    return true;
}

static bool
skip_newlines(parser_t *p)
{
    tok_t t;
    while (peek(p, &t) && t.type == T_NEWLINE)
        if (!consume(p, &t))
            return false;
    return !p->failed;
}

/* Redirection operator, possibly after an fd number: < > >> <& >& <> >| << <<- <<< &> &>> */
static bool
is_redir(const parser_t *p, const tok_t *t)
{
    size_t i = t->start;
    if (t->type != T_OP)
        return false;
    while (p->s[i] >= '0' && p->s[i] <= '9')
        i++;
    return p->s[i] == '<' || p->s[i] == '>' || (p->s[i] == '&' && i + 1 < t->end && p->s[i + 1] == '>');
}

static bool
is_heredoc_op(const parser_t *p, const tok_t *t)
{
    size_t i = t->start;
    while (p->s[i] >= '0' && p->s[i] <= '9')
        i++;
    return (t->end - i == 2 && memcmp(p->s + i, "<<", 2) == 0) ||
           (t->end - i == 3 && memcmp(p->s + i, "<<-", 3) == 0);
}

static bool
parse_redirect(parser_t *p, const tok_t *op)
{
    tok_t w;
    if (!consume(p, op))
        return false;
    p->redir_target = true;
    bool ok = peek(p, &w);
    p->redir_target = false;
    if (!ok || w.type != T_WORD)
        return fail(p);
    if (is_heredoc_op(p, op)) {
        if (p->nhd == SPLIT_MAX_HEREDOCS)
            return fail(p);
        heredoc_t *h = &p->hd[p->nhd++];
        h->dstart = w.start;
        h->dlen = w.end - w.start;
        h->strip_tabs = p->s[op->end - 1] == '-';
        h->event = -1;
        if (p->events && p->hidden == 0) {
            record(p, EV_HEREDOC, op->start, w.end);
            h->event = (int)p->events->n - 1;
        }
    }
    return consume(p, &w);
}

static bool
parse_redirects(parser_t *p)
{
    tok_t t;
    while (peek(p, &t) && is_redir(p, &t))
        if (!parse_redirect(p, &t))
            return false;
    return !p->failed;
}

static bool
expect_word(parser_t *p, const char *w)
{
    tok_t t;
    if (!peek(p, &t) || !word_is(p, &t, w))
        return fail(p);
    return consume(p, &t);
}

static bool
is_list_end(const parser_t *p, const tok_t *t)
{
    static const char *const ends[] = {"then", "else", "elif", "fi", "do", "done", "esac", "}",
                                       NULL};
    if (t->type == T_EOF || op_is(p, t, ")"))
        return true;
    for (int k = 0; ends[k]; k++)
        if (word_is(p, t, ends[k]))
            return true;
    return false;
}

static bool
parse_and_or(parser_t *p)
{
    tok_t t;
    if (!parse_pipeline_cmd(p))
        return false;
    while (peek(p, &t) && (op_is(p, &t, "&&") || op_is(p, &t, "||"))) {
        if (!consume(p, &t) || !skip_newlines(p) || !parse_pipeline_cmd(p))
            return false;
    }
    return !p->failed;
}

/* newline_list list newline_list, ended by a reserved word, ')' or EOF; at least one command. */
static bool
parse_compound_list(parser_t *p)
{
    tok_t t;
    int count = 0;
    if (!skip_newlines(p))
        return false;
    while (peek(p, &t) && !is_list_end(p, &t)) {
        if (!parse_and_or(p))
            return false;
        count++;
        if (!peek(p, &t))
            return false;
        if (op_is(p, &t, ";") || op_is(p, &t, "&") || t.type == T_NEWLINE) {
            if (!consume(p, &t) || !skip_newlines(p))
                return false;
        } else if (!is_list_end(p, &t)) {
            return fail(p);
        }
    }
    return !p->failed && count > 0 ? true : fail(p);
}

static bool
parse_compound(parser_t *p, const tok_t *t)
{
    tok_t n;
    bool ok = true;
    p->hidden++;
    if (!consume(p, t))
        ok = false;
    else if (word_is(p, t, "if")) {
        ok = parse_compound_list(p) && expect_word(p, "then") && parse_compound_list(p);
        while (ok && peek(p, &n) && word_is(p, &n, "elif"))
            ok = consume(p, &n) && parse_compound_list(p) && expect_word(p, "then") &&
                 parse_compound_list(p);
        if (ok && peek(p, &n) && word_is(p, &n, "else"))
            ok = consume(p, &n) && parse_compound_list(p);
        ok = ok && expect_word(p, "fi");
    } else if (word_is(p, t, "while") || word_is(p, t, "until")) {
        ok = parse_compound_list(p) && expect_word(p, "do") && parse_compound_list(p) &&
             expect_word(p, "done");
    } else if (word_is(p, t, "for")) {
        ok = peek(p, &n) && n.type == T_WORD && consume(p, &n) && skip_newlines(p) && peek(p, &n);
        if (ok && word_is(p, &n, "in")) {
            ok = consume(p, &n);
            while (ok && peek(p, &n) && n.type == T_WORD)
                ok = consume(p, &n);
            ok = ok && (op_is(p, &n, ";") || n.type == T_NEWLINE) && consume(p, &n);
        } else if (ok && op_is(p, &n, ";")) {
            ok = consume(p, &n);
        }
        ok = ok && skip_newlines(p) && expect_word(p, "do") && parse_compound_list(p) &&
             expect_word(p, "done");
    } else if (word_is(p, t, "{")) {
        ok = parse_compound_list(p) && expect_word(p, "}");
    } else if (op_is(p, t, "(")) {
        ok = parse_compound_list(p) && peek(p, &n) && op_is(p, &n, ")") && consume(p, &n);
    } else if (word_is(p, t, "function")) {
        ok = peek(p, &n) && n.type == T_WORD && consume(p, &n) && peek(p, &n);
        if (ok && op_is(p, &n, "("))
            ok = consume(p, &n) && peek(p, &n) && op_is(p, &n, ")") && consume(p, &n);
        ok = ok && skip_newlines(p) && peek(p, &n) && parse_compound(p, &n);
    } else {
        ok = false;
    }
    p->hidden--;
    if (!ok)
        return fail(p);
    return parse_redirects(p);
}

/* (( ... )) arithmetic command: bashlex accepts it; scan to the matching "))". */
static bool
parse_arith_command(parser_t *p, const tok_t *t)
{
    int depth = 0;
    for (size_t i = t->start; i < p->lim; i++) {
        char c = p->s[i];
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0) {
            p->pos = p->last_end = i + 1;
            return p->s[i - 1] == ')' ? parse_redirects(p) : fail(p);
        }
    }
    return fail(p);
}

static bool
is_assignment(const parser_t *p, const tok_t *t)
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
parse_command(parser_t *p)
{
    tok_t t, n;
    static const char *const compound[] = {"if", "while", "until", "for", "{", "function", NULL};
    static const char *const unsupported[] = {"case", "select", "coproc", "time", "[[", "in",
                                              NULL};
    if (++p->depth > SPLIT_MAX_DEPTH || !peek(p, &t))
        return fail(p);
    bool ok;
    if (op_is(p, &t, "(")) {
        ok = (t.end < p->lim && p->s[t.end] == '(') ? parse_arith_command(p, &t)
                                                     : parse_compound(p, &t);
        p->depth--;
        return ok;
    }
    if (t.type != T_WORD && !is_redir(p, &t))
        return fail(p);
    for (int k = 0; t.type == T_WORD && unsupported[k]; k++)
        if (word_is(p, &t, unsupported[k]))
            return fail(p);
    for (int k = 0; t.type == T_WORD && compound[k]; k++)
        if (word_is(p, &t, compound[k])) {
            ok = parse_compound(p, &t);
            p->depth--;
            return ok;
        }
    if (t.type == T_WORD && is_list_end(p, &t))
        return fail(p);
    /* simple command, or a function definition name () compound */
    bool prefix = true;
    size_t elems = 0;
    for (;; elems++) {
        if (!peek(p, &t))
            return false;
        if (is_redir(p, &t)) {
            if (!parse_redirect(p, &t))
                return false;
        } else if (t.type == T_WORD) {
            if (prefix && !is_assignment(p, &t))
                prefix = false;
            if (!prefix) /* bashlex's assignment nodes are not visited by the escaper */
                record(p, EV_WORD, t.start, t.end);
            if (!consume(p, &t))
                return false;
        } else {
            break;
        }
    }
    if (op_is(p, &t, "(")) {
        if (elems != 1 || prefix)
            return fail(p); /* a=(1 2), echo ( ...: bashlex refuses */
        if (!consume(p, &t) || !peek(p, &n) || !op_is(p, &n, ")") || !consume(p, &n) ||
            !skip_newlines(p) || !peek(p, &n))
            return fail(p);
        p->hidden++;
        ok = parse_compound(p, &n);
        p->hidden--;
        p->depth--;
        return ok;
    }
    p->depth--;
    return elems > 0 ? true : fail(p);
}

static bool
parse_pipeline_cmd(parser_t *p)
{
    tok_t t;
    if (peek(p, &t) && word_is(p, &t, "!") && !consume(p, &t))
        return false;
    if (!parse_command(p))
        return false;
    while (peek(p, &t) && (op_is(p, &t, "|") || op_is(p, &t, "|&"))) {
        if (!consume(p, &t) || !skip_newlines(p) || !parse_command(p))
            return false;
    }
    return !p->failed;
}

/* One bashlex inputunit from p->pos: 1 with [start,end) set, 0 when only blanks/comments
 * remain, -1 on a parse failure. p->heredoc_end is updated. */
static int
parse_unit(parser_t *p, size_t *start, size_t *end)
{
    tok_t t;
    if (!skip_newlines(p) || !peek(p, &t))
        return -1;
    if (t.type == T_EOF)
        return 0;
    *start = t.start;
    for (;;) {
        if (!parse_and_or(p) || !peek(p, &t))
            return -1;
        if (op_is(p, &t, ";") || op_is(p, &t, "&")) {
            if (!consume(p, &t) || !peek(p, &t))
                return -1;
            if (t.type == T_NEWLINE || t.type == T_EOF)
                break;
            continue;
        }
        if (t.type == T_NEWLINE || t.type == T_EOF)
            break;
        return -1;
    }
    *end = p->last_end;
    if (t.type == T_NEWLINE && !consume(p, &t))
        return -1;
    if (p->nhd > 0)
        return -1; /* heredoc operator on the last line: no body at all */
    return 1;
}

typedef struct {
    size_t start, end;
} span_t;

/* Runs bashlex.parse's loop; returns the number of nodes (spans owned by caller) or -1. */
static long
parse_all(const char *text, span_t **spans, esc_events_t *events)
{
    size_t len = strlen(text), index = 0, cap = 0;
    long n = 0;
    *spans = NULL;
    while (index < len) {
        parser_t p = {.s = text, .lim = len, .pos = index, .events = events};
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
        (*spans)[n++] = (span_t){start, end};
        index = (end > p.heredoc_end ? end : p.heredoc_end) + 1;
    }
    return n;
}

static size_t
rstrip_len(const char *s, size_t n)
{
    while (n > 0 && strchr(" \t\n\r\v\f", s[n - 1]))
        n--;
    return n;
}

static bool
all_blank(const char *s, size_t n)
{
    return rstrip_len(s, n) == 0;
}

static void
list_push(cmd_list_t *out, size_t *cap, char *s)
{
    if (out->n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        out->cmds = xrealloc(out->cmds, *cap * sizeof(char *));
    }
    out->cmds[out->n++] = s;
}

static void
list_append(cmd_list_t *out, const char *s, size_t n)
{
    char **last = &out->cmds[out->n - 1];
    size_t l = strlen(*last);
    *last = xrealloc(*last, l + n + 1);
    memcpy(*last + l, s, n);
    (*last)[l + n] = '\0';
}

void
cmd_split(const char *text, cmd_list_t *out)
{
    size_t len = strlen(text), cap = 0, last_end = 0;
    span_t *spans;
    out->n = 0;
    out->cmds = NULL;
    if (all_blank(text, len)) {
        list_push(out, &cap, xstrdup(""));
        return;
    }
    long n = parse_all(text, &spans, NULL);
    if (n <= 0) {
        /* parse failure: upstream returns the text as given. A text of only comments also ends
         * here; bashlex's own outcome for it (an exception) is the same single command. */
        list_push(out, &cap, xstrdup(text));
        return;
    }
    for (long i = 0; i < n; i++) {
        size_t start = spans[i].start, end = spans[i].end;
        if (start > last_end) {
            size_t bl = rstrip_len(text + last_end, start - last_end);
            if (out->n > 0)
                list_append(out, text + last_end, bl);
            else if (bl > 0)
                list_push(out, &cap, xstrndup(text + last_end, bl)); /* a leading comment */
        }
        list_push(out, &cap, xstrndup(text + start, rstrip_len(text + start, end - start)));
        last_end = end;
    }
    if (last_end < len)
        list_append(out, text + last_end, rstrip_len(text + last_end, len - last_end));
    free(spans);
}

void
cmd_list_free(cmd_list_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->cmds[i]);
    free(l->cmds);
    l->cmds = NULL;
    l->n = 0;
}

char *
cmd_split_refusal(const cmd_list_t *l)
{
    buf_t b = BUF_INIT;
    buf_puts(&b, "ERROR: Cannot execute multiple commands at once.\n"
                 "Please run each command separately OR chain them into a single command via && "
                 "or ;\nProvided commands:\n");
    for (size_t i = 0; i < l->n; i++)
        buf_printf(&b, "%s(%zu) %s", i ? "\n" : "", i + 1, l->cmds[i]);
    return buf_steal(&b);
}

/* upstream's re.sub(r'\\([;&|><])', r'\\\\\1', text) */
static void
append_escaped(buf_t *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n && strchr(";&|><", s[i + 1]) && s[i + 1]) {
            buf_append(b, "\\\\", 2);
            buf_append(b, &s[++i], 1);
        } else {
            buf_append(b, &s[i], 1);
        }
    }
}

static bool
word_preserved(const char *w, size_t n)
{
    return (n >= 2 && w[0] == '"' && w[n - 1] == '"') ||
           (n >= 2 && w[0] == '\'' && w[n - 1] == '\'') ||
           (n >= 3 && w[0] == '$' && w[1] == '(' && w[n - 1] == ')') ||
           (n >= 2 && w[0] == '`' && w[n - 1] == '`');
}

char *
cmd_escape_special_chars(const char *text)
{
    size_t len = strlen(text), last = 0, ev = 0;
    if (all_blank(text, len))
        return xstrdup("");
    esc_events_t events = {0};
    span_t *spans;
    long n = parse_all(text, &spans, &events);
    if (n <= 0) {
        free(events.v);
        return xstrdup(text);
    }
    /* Offsets may go backwards (a word after a heredoc on its line): Python's slices of a
     * reversed range are empty, and upstream then repeats that word. Mirror it. */
#define SLICE_LEN(a, b) ((b) > (a) ? (b) - (a) : 0)
    buf_t b = BUF_INIT;
    for (long i = 0; i < n; i++) {
        append_escaped(&b, text + last, SLICE_LEN(last, spans[i].start));
        last = spans[i].start;
        for (; ev < events.n && events.v[ev].start < spans[i].end; ev++) {
            const esc_event_t *e = &events.v[ev];
            if (e->kind == EV_HEREDOC) {
                buf_append(&b, text + last, SLICE_LEN(last, e->start)); /* kept as-is */
                buf_append(&b, text + e->start, SLICE_LEN(e->start, e->body_start));
                buf_append(&b, text + e->body_start, SLICE_LEN(e->body_start, e->body_end));
            } else {
                append_escaped(&b, text + last, SLICE_LEN(last, e->start));
                if (word_preserved(text + e->start, e->end - e->start))
                    buf_append(&b, text + e->start, e->end - e->start);
                else
                    append_escaped(&b, text + e->start, e->end - e->start);
            }
            last = e->end;
        }
    }
#undef SLICE_LEN
    buf_append(&b, text + last, len - last);
    free(spans);
    free(events.v);
    return buf_steal(&b);
}
