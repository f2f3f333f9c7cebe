/* cmd_split.h — bash-aware split of an action's command text into top-level commands, as
 * OpenHands does with bashlex before refusing "multiple commands at once".
 * Pure: no I/O. Heredocs stay whole, comments stick to the previous command, quotes/escapes/
 * $(...)/`...`/(...)/{...}/if..fi/for..done/case..esac are not split, `&&`, `||`, `|`, `;` and
 * `&` inside one line keep it one command (as bashlex sees one "list" node per line).
 * Unparseable input comes back as one command. */
#ifndef SP_CMD_SPLIT_H
#define SP_CMD_SPLIT_H

#include <stddef.h>

typedef struct {
    size_t n;
    char **cmds; /* owned; each NUL-terminated, trimmed as upstream */
} cmd_list_t;

/* Splits text into top-level commands. Always succeeds (n >= 1 for non-empty text). */
void cmd_split(const char *text, cmd_list_t *out);
void cmd_list_free(cmd_list_t *l);

/* Builds upstream's refusal text:
 * "ERROR: Cannot execute multiple commands at once.\nPlease run each command separately OR chain
 * them into a single command via && or ;\nProvided commands:\n(1) ...\n(2) ..." (exact upstream
 * wording). Caller frees. */
char *cmd_split_refusal(const cmd_list_t *l);

/* Upstream's escape_bash_special_chars(): doubles the backslash of an unquoted \; \& \| \> \<
 * in the words bashlex visits (heredoc bodies, quoted words and $(...)/`...` words untouched;
 * unparseable text returned as is; blank text gives ""). Upstream applies it before typing a
 * non-input command into tmux, only to undo tmux's own handling of a trailing "\;" in send-keys,
 * and then reports the escaped text as the observation's `command`. Sandpipe's bash reads the
 * command verbatim (eval of a file), so it must NOT run the escaped text; use this only to
 * reproduce the observation's `command`/message exactly. Caller frees. */
char *cmd_escape_special_chars(const char *text);

#endif
