/* py_compat.h — the bits of Python semantics that OpenHands' texts depend on, so the editor, the
 * file actions and the action server's decode errors print what upstream prints: pathlib's str()
 * and suffix, str.strip(), repr()/str() of a JSON value, truthiness, and OSError's message. Pure:
 * no I/O, no state. */
#ifndef SP_PY_COMPAT_H
#define SP_PY_COMPAT_H

#include <json-c/json.h>
#include <stddef.h>

#include "buf.h"

/* pathlib's str(Path(p)): "//" and "." segments dropped, no trailing "/", "" -> ".".
 * Caller frees. */
char *fa_py_path(const char *p);

/* str.strip(): the span of s[0..n) without Python whitespace at either end. */
void fa_py_strip(const char *s, size_t n, size_t *off, size_t *len);

/* PurePath.suffix: the last ".ext" of the final component ("" if none). Borrows from path. */
const char *py_suffix(const char *path);

/* Appends Python's OSError text: "[Errno 2] No such file or directory: '/x'". */
void py_oserror(buf_t *b, int e, const char *path);

/* Appends repr(v) (for view_range in messages: "[1, 2]"), or str(v) as an f-string prints it
 * (a string bare, anything else as repr()). */
void py_repr(buf_t *b, json_object *v);
/* Appends repr() of the UTF-8 string s[0..n). */
void py_repr_str(buf_t *b, const char *s, size_t n);
void py_str(buf_t *b, json_object *v);

/* repr(float) (what an f-string prints for a float: 1.0, 0.5, 1e-05) into out. */
void py_float_repr(double v, char *out, size_t cap);

/* Python truthiness of a JSON value (None, [], "", 0, {} and false are false). */
int py_truthy(json_object *v);

#endif
