/* editor_int.h — what the OHEditor's files share: editor.c (dispatch, create, str_replace,
 * insert, undo_edit, history), editor_view.c (view of files and directories) and editor_io.c
 * (reading, validating, writing and showing files, line arithmetic). Internal to the editor:
 * other code uses file_actions.h. */
#ifndef SP_EDITOR_INT_H
#define SP_EDITOR_INT_H

#include <json-c/json.h>
#include <stddef.h>

#include "buf.h"
#include "file_actions.h"

#define ED_MAX_RESPONSE_CHARS 16000 /* longest text shown, in code points */

/* Fill res with an error (takes ownership of msg) or an output (steals out's data). Return 0. */
int ed_set_error(ed_result_t *res, char *msg);
int ed_set_output(ed_result_t *res, buf_t *out);

/* ---- line arithmetic over UTF-8 text */

size_t ed_count_char(const char *s, size_t n, char c);
/* Lines as Python iterates a text file: each ends at "\n" (the last may not). */
long ed_count_lines(const char *s, size_t n);
/* Byte offset where 1-based line `line` starts (n if past the end). */
size_t ed_line_offset(const char *s, size_t n, long line);
/* read_file(path, start_line, end_line): lines start..end inclusive, with their newlines. */
void ed_line_span(const char *s, size_t n, long start, long end, size_t *off, size_t *len);

/* ---- file I/O: each returns NULL, or a new ToolError text (caller frees) */

/* Python text-mode read into out: universal newlines. */
char *ed_read_text(const char *real, const char *display, buf_t *out);
/* validate_file(): size limit and binary check (a FileValidationError text). */
char *ed_validate_file(const char *real, const char *display);
/* Validates, then replaces real atomically (fa_write_atomic). */
char *ed_write_file(const char *real, const char *display, const char *text, size_t len);

/* _make_output(): appends "Here's the result of running `cat -n` on {desc}:\n" and the
 * numbered lines of s[0..n) from line start, cut at ED_MAX_RESPONSE_CHARS. */
void ed_make_output(buf_t *out, const char *s, size_t n, const char *desc, long start);

/* ---- view (editor_view.c): fill res; return 0 */
int ed_view_directory(const char *real, const char *display, json_object *view_range,
                      ed_result_t *res);
int ed_view_file(const char *real, const char *display, json_object *vr, ed_result_t *res);

#endif
