/* bash_obs.c — the OpenHands `run` observation (CmdOutputObservation) and ErrorObservation,
 * texts and shaping as OpenHands 0.62.0 produces them (openhands/runtime/utils/bash.py,
 * events/observation/commands.py, events/serialization). Pure: no I/O.
 *
 * Upstream reads a rendered tmux screen; we have the raw bytes. To give the agent the same
 * text, the output is "rendered" the simple way a screen would show it: escape sequences
 * dropped, carriage returns overwrite the line, invalid UTF-8 replaced by U+FFFD, lines
 * right-trimmed, the whole stripped. The event stream keeps the raw bytes. */
#include "bash_obs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd_split.h"
#include "json_util.h"
#include "net_hint.h"
#include "py_compat.h"
#include "utf8.h"
#include "xalloc.h"

#define OBS_MAX_CHARS 30000

static const char TIMEOUT_HELP[] =
    "You may wait longer to see additional output by sending empty command '', send other "
    "commands to interact with the current process, send keys (\"C-c\", \"C-z\", \"C-d\") to "
    "interrupt/kill the previous command before sending your new command, or use the timeout "
    "parameter in execute_bash for future commands.";
static const char CONTINUATION_PREFIX[] = "[Below is the output of the previous command.]\n";
static const char TRUNCATION_NOTE[] = "\n[... Observation truncated due to length ...]\n";

char *
obs_truncate(const char *s, size_t len, size_t max_chars)
{
    size_t chars = utf8_char_count(s, len);
    if (chars <= max_chars)
        return xstrndup(s, len);
    size_t half = max_chars / 2;
    size_t head = utf8_char_offset(s, len, half);
    size_t tail = utf8_char_offset(s, len, chars - half);
    buf_t b = BUF_INIT;
    buf_append(&b, s, head);
    buf_puts(&b, TRUNCATION_NOTE);
    buf_append(&b, s + tail, len - tail);
    return buf_steal(&b);
}

/* ---- rendering the terminal output as text ---- */

/* Skips an escape sequence starting at p[i] == ESC; returns the index after it. */
static size_t
skip_escape(const unsigned char *p, size_t n, size_t i)
{
    if (i + 1 >= n)
        return n;
    unsigned char t = p[i + 1];
    if (t == '[') { /* CSI: parameters, then a final byte 0x40-0x7E */
        size_t j = i + 2;
        while (j < n && !(p[j] >= 0x40 && p[j] <= 0x7E))
            j++;
        return j < n ? j + 1 : n;
    }
    if (t == ']' || t == 'P' || t == '_' || t == '^') { /* OSC/DCS/...: up to BEL or ST */
        size_t j = i + 2;
        while (j < n && p[j] != 0x07 && !(p[j] == 0x1b && j + 1 < n && p[j + 1] == '\\'))
            j++;
        if (j >= n)
            return n;
        return p[j] == 0x07 ? j + 1 : j + 2;
    }
    return i + 2; /* two-byte sequence (ESC =, ESC (, ...) */
}

/* One output line as a screen shows it: escapes gone, \r returns to the line start (later text
 * overwrites earlier), backspace moves back, invalid bytes become U+FFFD, right-trimmed. */
static void
render_line(buf_t *out, const unsigned char *p, size_t n)
{
    buf_t line = BUF_INIT;
    size_t col = 0; /* byte position of the cursor in line */
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == 0x1b) {
            i = skip_escape(p, n, i);
            continue;
        }
        if (c == '\r') {
            col = 0;
            i++;
            continue;
        }
        if (c == '\b') {
            while (col > 0 && utf8_is_continuation((uint8_t)line.data[col - 1]))
                col--;
            if (col > 0)
                col--;
            i++;
            continue;
        }
        const char *bytes;
        size_t k = utf8_seq_len(p + i, n - i), blen;
        if (c < 0x20 && c != '\t') {
            i++;
            continue; /* other control characters do not show */
        }
        if (k == 0) {
            bytes = "\xEF\xBF\xBD";
            blen = 3;
            k = 1;
        } else {
            bytes = (const char *)p + i;
            blen = k;
        }
        if (col < line.len) {
            /* overwrite one character at the cursor */
            size_t end = col + 1;
            while (end < line.len && utf8_is_continuation((uint8_t)line.data[end]))
                end++;
            buf_t rest = BUF_INIT;
            buf_append(&rest, line.data + end, line.len - end);
            line.len = col;
            buf_append(&line, bytes, blen);
            buf_append(&line, rest.data, rest.len);
            buf_free(&rest);
        } else {
            buf_append(&line, bytes, blen);
        }
        col += blen;
        i += k;
    }
    size_t len = line.len;
    while (len > 0 && (line.data[len - 1] == ' ' || line.data[len - 1] == '\t'))
        len--;
    buf_append(out, line.data, len);
    buf_free(&line);
}

/* The observation text of raw output: rendered lines, at most BASH_OBS_MAX_LINES (the last ones;
 * *dropped_lines tells how many went), leading and trailing whitespace stripped. */
static char *
render_output(const char *raw, size_t n, size_t *shown_lines, size_t *dropped_lines)
{
    const unsigned char *p = (const unsigned char *)raw;
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\n')
            lines++;
    size_t skip = lines > BASH_OBS_MAX_LINES ? lines - BASH_OBS_MAX_LINES : 0;
    size_t start = 0;
    for (size_t i = 0, seen = 0; i < n && seen < skip; i++)
        if (p[i] == '\n' && ++seen == skip)
            start = i + 1;
    *dropped_lines = skip;
    *shown_lines = lines - skip;
    buf_t out = BUF_INIT;
    for (size_t i = start; i <= n;) {
        const unsigned char *nl = i < n ? memchr(p + i, '\n', n - i) : NULL;
        size_t end = nl ? (size_t)(nl - p) : n;
        render_line(&out, p + i, end - i);
        if (!nl)
            break;
        buf_puts(&out, "\n");
        i = end + 1;
    }
    /* Python's strip(): whitespace at both ends of the whole text. */
    size_t a = 0, b = out.len;
    while (a < b && strchr(" \t\n\r\v\f", out.data[a]))
        a++;
    while (b > a && strchr(" \t\n\r\v\f", out.data[b - 1]))
        b--;
    char *res = xstrndup(out.data ? out.data + a : "", b - a);
    buf_free(&out);
    return res;
}

/* ---- building observations ---- */

static json_object *
metadata(const bash_obs_in_t *in, bool completed, int exit_code, const char *prefix,
         const char *suffix)
{
    json_object *m = json_object_new_object();
    json_set_int(m, "exit_code", completed ? exit_code : -1);
    json_set_int(m, "pid", completed ? in->pid : -1);
    json_set(m, "username",
             completed && in->username ? json_object_new_string(in->username) : NULL);
    json_set(m, "hostname",
             completed && in->hostname ? json_object_new_string(in->hostname) : NULL);
    json_set(m, "working_dir",
             completed && in->working_dir ? json_object_new_string(in->working_dir) : NULL);
    json_set(m, "py_interpreter_path",
             completed
                 ? json_object_new_string(in->py_interpreter_path ? in->py_interpreter_path : "")
                 : NULL);
    json_set_str(m, "prefix", prefix);
    json_set_str(m, "suffix", suffix);
    return m;
}

static json_object *
run_obs(const char *command, const char *content, json_object *meta, int exit_code, bool hidden)
{
    json_object *o = json_object_new_object();
    char *msg = xasprintf("Command `%s` executed with exit code %d.", command, exit_code);
    json_set_str(o, "message", msg);
    free(msg);
    json_set_str(o, "observation", "run");
    json_set_str(o, "content", content);
    json_object *x = json_object_new_object();
    json_set_str(x, "command", command);
    json_set(x, "metadata", meta);
    json_set_bool(x, "hidden", hidden);
    json_set(o, "extras", x);
    json_set_bool(o, "success", exit_code == 0);
    return o;
}

/* The command as upstream reports it: its tmux escaping of a trailing `\;` shows. */
static char *
reported_command(const bash_obs_in_t *in)
{
    if (in->is_input || in->key || !in->command || !*in->command)
        return xstrdup(in->command ? in->command : "");
    return cmd_escape_special_chars(in->command);
}

json_object *
bash_obs_build(const bash_obs_in_t *in)
{
    size_t shown = 0, dropped = 0;
    char *text = render_output(in->output ? in->output : "", in->output_len, &shown, &dropped);
    bool completed = in->end == BASH_END_COMPLETED || in->end == BASH_END_INTERRUPTED;
    char key = in->key ? in->key : (in->end == BASH_END_INTERRUPTED ? 'C' : 0);
    if (key >= 'a' && key <= 'z')
        key = (char)(key - 'a' + 'A');
    buf_t prefix = BUF_INIT, suffix = BUF_INIT;
    char num[64];
    switch (in->end) {
    case BASH_END_COMPLETED:
    case BASH_END_INTERRUPTED:
        /* Upstream resets the prefix of a completed continuation to '' (the truncation note
         * included). */
        if ((dropped || in->output_cut) && !in->is_continuation)
            buf_printf(&prefix,
                       "[Previous command outputs are truncated. Showing the last %zu lines of the "
                       "output below.]\n",
                       shown);
        if (key)
            buf_printf(&suffix, "\n[The command completed with exit code %d. CTRL+%c was sent.]",
                       in->exit_code, key);
        else
            buf_printf(&suffix, "\n[The command completed with exit code %d.]", in->exit_code);
        break;
    case BASH_END_NO_CHANGE_TIMEOUT:
        if (in->is_continuation)
            buf_puts(&prefix, CONTINUATION_PREFIX);
        buf_printf(&suffix, "\n[The command has no new output after %d seconds. %s]",
                   in->no_change_timeout, TIMEOUT_HELP);
        break;
    case BASH_END_HARD_TIMEOUT:
        if (in->is_continuation)
            buf_puts(&prefix, CONTINUATION_PREFIX);
        py_float_repr(in->timeout, num, sizeof num);
        buf_printf(&suffix, "\n[The command timed out after %s seconds. %s]", num, TIMEOUT_HELP);
        break;
    }
    if (in->no_network)
        buf_puts(&suffix, NET_HINT_NOTE);
    /* Upstream: hidden only on completed observations; truncation skipped when hidden. */
    bool hidden = completed && in->hidden;
    char *content = hidden ? xstrdup(text) : obs_truncate(text, strlen(text), OBS_MAX_CHARS);
    int exit_code = completed ? in->exit_code : -1;
    char *cmd = reported_command(in);
    json_object *o = run_obs(cmd, content,
                             metadata(in, completed, in->exit_code, prefix.data ? prefix.data : "",
                                      suffix.data ? suffix.data : ""),
                             exit_code, hidden);
    free(cmd);
    free(content);
    free(text);
    buf_free(&prefix);
    buf_free(&suffix);
    return o;
}

json_object *
bash_obs_error(bash_err_t kind, const bash_obs_in_t *in)
{
    if (kind == BASH_ERR_PREVIOUS_STILL_RUNNING) {
        size_t shown, dropped;
        char *text = render_output(in->output ? in->output : "", in->output_len, &shown, &dropped);
        char *content =
            in->hidden ? xstrdup(text) : obs_truncate(text, strlen(text), OBS_MAX_CHARS);
        char *suffix =
            xasprintf("\n[Your command \"%s\" is NOT executed. The previous command is still "
                      "running - You CANNOT send new commands until the previous command is "
                      "completed. By setting `is_input` to `true`, you can interact with the "
                      "current process: %s]",
                      in->command ? in->command : "", TIMEOUT_HELP);
        /* Upstream refuses before escaping: the raw (stripped) command is reported. */
        json_object *o =
            run_obs(in->command ? in->command : "", content,
                    metadata(in, false, -1, in->is_continuation ? CONTINUATION_PREFIX : "", suffix),
                    -1, in->hidden);
        free(suffix);
        free(content);
        free(text);
        return o;
    }
    const char *text = kind == BASH_ERR_NO_PREVIOUS_FOR_LOGS
                           ? "ERROR: No previous running command to retrieve logs from."
                           : "ERROR: No previous running command to interact with.";
    return run_obs("", text, metadata(in, false, -1, "", ""), -1, false);
}

json_object *
obs_error_new(const char *text)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "message", text);
    json_set_str(o, "observation", "error");
    json_set_str(o, "content", text);
    json_object *x = json_object_new_object();
    json_set_str(x, "error_id", "");
    json_set(o, "extras", x);
    return o;
}
