/* editor_io.c — how the OHEditor reads, validates, writes and shows files: Python text-mode
 * reads (universal newlines), ed_validate_file(), atomic writes that keep an existing file's mode,
 * the `cat -n` output with its truncation notice, and the line arithmetic behind them.
 * Texts follow openhands_aci/editor/{editor,exceptions}.py (openhands-aci 0.3.2).
 * No state; returned texts and buffers belong to the caller. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "editor_int.h"
#include "py_compat.h"
#include "utf8.h"
#include "xalloc.h"

#define ED_MAX_FILE_SIZE (10LL * 1024 * 1024)

static const char TEXT_TRUNCATED_NOTICE[] =
    "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to "
    "you. You should retry this tool after you have searched inside the file with `grep -n` in "
    "order to find the line numbers of what you are looking for.</NOTE>";

/* ---- results ---- */

int
ed_set_error(ed_result_t *res, char *msg)
{
    res->error = msg;
    res->error_len = strlen(msg);
    return 0;
}

int
ed_set_output(ed_result_t *res, buf_t *out)
{
    res->output_len = out->len;
    res->output = buf_steal(out);
    return 0;
}

/* ---- line arithmetic ---- */

size_t
ed_count_char(const char *s, size_t n, char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == c;
    return k;
}

/* Lines as Python iterates a text file: each ends at "\n" (the last may not). */
long
ed_count_lines(const char *s, size_t n)
{
    return (long)ed_count_char(s, n, '\n') + (n && s[n - 1] != '\n');
}

/* Byte offset where 1-based line `line` starts (n if past the end). */
size_t
ed_line_offset(const char *s, size_t n, long line)
{
    size_t off = 0;
    for (long l = 1; l < line && off < n; l++) {
        const char *nl = memchr(s + off, '\n', n - off);
        off = nl ? (size_t)(nl - s) + 1 : n;
    }
    return off;
}

/* read_file(path, start_line, end_line): lines start..end inclusive, with their newlines. */
void
ed_line_span(const char *s, size_t n, long start, long end, size_t *off, size_t *len)
{
    if (start < 1)
        start = 1;
    if (end < start) {
        *off = 0;
        *len = 0;
        return;
    }
    *off = ed_line_offset(s, n, start);
    *len = ed_line_offset(s, n, end + 1) - *off;
}

/* ---- file I/O ---- */

/* Python text-mode read: universal newlines. Returns NULL or a ToolError text. */
char *
ed_read_text(const char *real, const char *display, buf_t *out)
{
    /* O_NONBLOCK: a FIFO the sandbox put there reads as empty instead of holding the executor */
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t r = 0;
    if (fd >= 0) {
        while ((r = read(fd, buf_reserve(out, 65536), 65536)) > 0)
            buf_advance(out, (size_t)r);
        int e = errno;
        close(fd);
        errno = e;
    }
    if (fd < 0 || r < 0) {
        buf_t m = BUF_INIT;
        buf_puts(&m, "Ran into ");
        py_oserror(&m, errno, display);
        buf_printf(&m, " while trying to read %s", display);
        return buf_steal(&m);
    }
    size_t w = 0;
    for (size_t i = 0; i < out->len; i++) {
        if (out->data[i] == '\r') {
            out->data[w++] = '\n';
            if (i + 1 < out->len && out->data[i + 1] == '\n')
                i++;
        } else {
            out->data[w++] = out->data[i];
        }
    }
    if (out->data) {
        out->len = w;
        out->data[w] = '\0';
    }
    return NULL;
}

/* validate_file(): NULL when fine, else a FileValidationError text. */
char *
ed_validate_file(const char *real, const char *display)
{
    struct stat st;
    if (stat(real, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (st.st_size > ED_MAX_FILE_SIZE)
        return xasprintf("File validation failed for %s: File is too large (%.1fMB). Maximum "
                         "allowed size is %dMB.",
                         display, (double)st.st_size / 1024 / 1024, (int)(ED_MAX_FILE_SIZE >> 20));
    if (fa_is_supported_binary(display))
        return NULL;
    if (fa_is_binary(real))
        return xasprintf("File validation failed for %s: File appears to be binary and this file "
                         "type cannot be read or edited by this tool.",
                         display);
    return NULL;
}

char *
ed_write_file(const char *real, const char *display, const char *text, size_t len)
{
    char *verr = ed_validate_file(real, display);
    if (verr)
        return verr;
    int rc = fa_write_atomic(real, text, len, -1);
    if (rc >= 0)
        return NULL;
    buf_t m = BUF_INIT;
    buf_puts(&m, "Ran into ");
    py_oserror(&m, -rc, display);
    buf_printf(&m, " while trying to write to %s", display);
    return buf_steal(&m);
}

/* _make_output(): "Here's the result of running `cat -n` on {desc}:\n" + numbered lines. */
void
ed_make_output(buf_t *out, const char *s, size_t n, const char *desc, long start)
{
    buf_printf(out, "Here's the result of running `cat -n` on %s:\n", desc);
    size_t cut = utf8_char_offset(s, n, ED_MAX_RESPONSE_CHARS);
    buf_t body = BUF_INIT;
    buf_append(&body, s, cut);
    if (cut < n)
        buf_puts(&body, TEXT_TRUNCATED_NOTICE);
    size_t off = 0;
    for (long line = start;; line++) {
        const char *nl = body.len > off ? memchr(body.data + off, '\n', body.len - off) : NULL;
        size_t end = nl ? (size_t)(nl - body.data) : body.len;
        buf_printf(out, "%6ld\t", line);
        buf_append(out, body.data + off, end - off);
        if (!nl)
            break;
        buf_puts(out, "\n");
        off = end + 1;
    }
    buf_puts(out, "\n");
    buf_free(&body);
}
