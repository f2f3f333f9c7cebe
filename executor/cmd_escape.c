/* cmd_escape.c — OpenHands 0.62.0's escape_bash_special_chars() (see cmd_split.h): walks the
 * words and heredocs bashlex 0.18 reports (cmd_parse.c, events on) and doubles the backslash of
 * an unquoted \; \& \| \> \< outside heredoc bodies and quoted or substituted words. Pure. */
#include "cmd_split.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd_parse.h"
#include "xalloc.h"

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
    if (cmd_all_blank(text, len))
        return xstrdup("");
    cmd_events_t events = {0};
    cmd_span_t *spans;
    long n = cmd_parse_all(text, &spans, &events);
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
            const cmd_event_t *e = &events.v[ev];
            if (e->kind == CMD_EV_HEREDOC) {
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
