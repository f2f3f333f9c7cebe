/* cmd_lex.c — the lexer of the bashlex 0.18 mirror (see cmd_lex.h): words with their quotes,
 * escapes and substitutions, operators (an fd number glued to a redirection belongs to it),
 * comments, line continuations and heredoc bodies. Nested command texts go back to the grammar
 * (cmd_parse_nested), so a word is refused exactly when bashlex would refuse its inside. */
#include "cmd_lex.h"

#include <stdbool.h>
#include <string.h>

#include "xalloc.h"

void
cmd_lex_record(cmd_parser_t *p, cmd_event_kind_t kind, size_t start, size_t end)
{
    cmd_events_t *e = p->events;
    if (!e || p->hidden > 0)
        return;
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        e->v = xrealloc(e->v, e->cap * sizeof(*e->v));
    }
    e->v[e->n++] = (cmd_event_t){kind, start, end, end, end};
}

static bool
is_meta(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
           c == '>' || c == '(' || c == ')';
}

/* Scans a $ expansion (i at '$'): $$, $(...), ${...}, $'...', $"..." or a plain $;
 * returns the position after it, or 0 on failure. */
static size_t scan_dollar(cmd_parser_t *p, size_t i, bool in_dq);

static size_t
scan_dquote(cmd_parser_t *p, size_t i) /* i after the opening quote */
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
            if (j >= p->lim || !cmd_parse_nested(p, i + 1, j, false))
                return 0;
            i = j + 1;
        } else {
            i++;
        }
    }
    return 0;
}

static size_t
scan_dollar(cmd_parser_t *p, size_t i, bool in_dq)
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
        return cmd_parse_nested(p, i + 2, n, true);
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
lex_word(cmd_parser_t *p, size_t i)
{
    const char *s = p->s;
    size_t n = p->lim;
    while (i < n) {
        char c = s[i];
        if ((c == '<' || c == '>') && i + 1 < n && s[i + 1] == '(') {
            i = cmd_parse_nested(p, i + 2, n, true); /* process substitution */
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
            i = (j < n && cmd_parse_nested(p, i + 1, j, false)) ? j + 1 : 0;
        } else {
            i++;
        }
        if (!i)
            return 0;
    }
    return i;
}

static const char *const OPS[] = {"&&",  "||",  ";;&", ";;", ";&", "|&", "&>>", "&>",
                                  "<<<", "<<-", "<<",  "<&", "<>", ">>", ">&",  ">|",
                                  ";",   "&",   "|",   "<",  ">",  "(",  ")",   NULL};

bool
cmd_lex_peek(cmd_parser_t *p, cmd_tok_t *t)
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
                return cmd_lex_fail(p); /* line continuation into the end of the text */
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
        t->type = CMD_T_EOF;
        t->end = i;
        return true;
    }
    if (s[i] == '\n') {
        t->type = CMD_T_NEWLINE;
        t->end = i + 1;
        return true;
    }
    /* fd number glued to a redirection (2>&1) belongs to the operator */
    size_t d = i;
    while (d < n && s[d] >= '0' && s[d] <= '9')
        d++;
    size_t o = (d > i && d < n && !p->redir_target && (s[d] == '<' || s[d] == '>') &&
                !(d + 1 < n && s[d + 1] == '('))
                   ? d
                   : i;
    if (!((s[o] == '<' || s[o] == '>') && o + 1 < n && s[o + 1] == '(')) {
        for (int k = 0; OPS[k]; k++) {
            size_t l = strlen(OPS[k]);
            if (o + l <= n && memcmp(s + o, OPS[k], l) == 0) {
                if (o != i && !(OPS[k][0] == '<' || OPS[k][0] == '>'))
                    break;
                t->type = CMD_T_OP;
                t->end = o + l;
                return true;
            }
        }
    }
    size_t e = lex_word(p, i);
    if (!e || e == i)
        return cmd_lex_fail(p);
    t->type = CMD_T_WORD;
    t->end = e;
    p->cached = true;
    p->cache_pos = p->pos;
    p->cache = *t;
    return true;
}

/* bashlex 0.18 compares body lines with the delimiter word as written, quotes included:
 * <<'EOF' ... EOF is "delimited by end-of-file" there, so such a text is one command upstream. */
static bool
delim_matches(const cmd_parser_t *p, const cmd_heredoc_t *h, const char *line, size_t len)
{
    return len == h->dlen && memcmp(line, p->s + h->dstart, len) == 0;
}

/* Reads the pending heredoc bodies starting at p->pos (just after a newline). */
static bool
read_heredocs(cmd_parser_t *p)
{
    for (int h = 0; h < p->nhd; h++) {
        size_t i = p->pos;
        for (;;) {
            if (i >= p->lim)
                return cmd_lex_fail(p); /* delimited by end-of-file: bashlex refuses it */
            const char *nl = memchr(p->s + i, '\n', p->lim - i);
            size_t eol = nl ? (size_t)(nl - p->s) : p->lim;
            size_t b = i;
            if (p->hd[h].strip_tabs)
                while (b < eol && p->s[b] == '\t')
                    b++;
            if (delim_matches(p, &p->hd[h], p->s + b, eol - b)) {
                if (p->hd[h].event >= 0) {
                    cmd_event_t *e = &p->events->v[p->hd[h].event];
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

bool
cmd_lex_consume(cmd_parser_t *p, const cmd_tok_t *t)
{
    p->pos = t->end;
    p->last_end = t->end;
    if (t->type == CMD_T_NEWLINE && p->nhd > 0)
        return read_heredocs(p);
    return true;
}

bool
cmd_lex_skip_newlines(cmd_parser_t *p)
{
    cmd_tok_t t;
    while (cmd_lex_peek(p, &t) && t.type == CMD_T_NEWLINE)
        if (!cmd_lex_consume(p, &t))
            return false;
    return !p->failed;
}
