/* cmd_split.c — split an action's command text into top-level commands the way OpenHands 0.62.0
 * does (split_bash_commands over bashlex 0.18), and its refusal text. The parsing itself is
 * cmd_parse.c's; here the node spans become commands: text between nodes (comments, blanks)
 * sticks to the previous command, each command is right-stripped, and any parse failure makes
 * the whole text one command, as upstream catches bashlex's exceptions and runs the text as
 * given. Pure: no I/O, no globals. */
#include "cmd_split.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd_parse.h"
#include "xalloc.h"

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
    cmd_span_t *spans;
    out->n = 0;
    out->cmds = NULL;
    if (cmd_all_blank(text, len)) {
        list_push(out, &cap, xstrdup(""));
        return;
    }
    long n = cmd_parse_all(text, &spans, NULL);
    if (n <= 0) {
        /* parse failure: upstream returns the text as given. A text of only comments also ends
         * here; bashlex's own outcome for it (an exception) is the same single command. */
        list_push(out, &cap, xstrdup(text));
        return;
    }
    for (long i = 0; i < n; i++) {
        size_t start = spans[i].start, end = spans[i].end;
        if (start > last_end) {
            size_t bl = cmd_rstrip_len(text + last_end, start - last_end);
            if (out->n > 0)
                list_append(out, text + last_end, bl);
            else if (bl > 0)
                list_push(out, &cap, xstrndup(text + last_end, bl)); /* a leading comment */
        }
        list_push(out, &cap, xstrndup(text + start, cmd_rstrip_len(text + start, end - start)));
        last_end = end;
    }
    if (last_end < len)
        list_append(out, text + last_end, cmd_rstrip_len(text + last_end, len - last_end));
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
