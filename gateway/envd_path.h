/* envd_path.h — the paths E2B's envd takes, made absolute as envd makes them (docs/e2b-wire.md
 * 3.7: envd's permissions.ExpandAndResolve): "" is the user's home, "~" and "~/…" the home and
 * below it, a relative path is below the home; then cleaned lexically, as Go's filepath.Clean
 * (".", "..", "//" and a trailing "/" gone; nothing is looked up: the sandbox resolves links).
 * That cleaned path is the one envd answers with (EntryInfo.path, its error texts). Pure: no
 * I/O, for any bytes a client sends (tests/fuzz/fuzz_envd_path.c). */
#ifndef SP_ENVD_PATH_H
#define SP_ENVD_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define ENVD_PATH_MAX 4096 /* PATH_MAX: the longest path made */

/* path (len bytes: a JSON string may hold NUL) as an absolute clean path into out[0..cap);
 * home: the user's home, absolute ("" when not known: then only absolute paths are taken).
 * 0, or -1 with why (a NUL, "~user", too long, relative without a home). */
int envd_path_abs(const char *home, const char *path, size_t len, char *out, size_t cap, char *why,
                  size_t why_cap);
/* path, absolute, cleaned in place (Go's filepath.Clean). */
void envd_path_clean(char *path);
/* Go's filepath.Rel(base, path) for base and path clean and absolute, path base or below it:
 * "." for base itself, else the rest after base's "/" (a pointer into path). NULL when path is
 * not base nor below it. */
const char *envd_path_rel(const char *base, const char *path);
/* The last element of a clean absolute path ("/" for "/"; a pointer into path). */
const char *envd_path_base(const char *path);

#endif
