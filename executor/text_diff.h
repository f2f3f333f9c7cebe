/* text_diff.h — openhands_aci.utils.diff.get_diff() in C: the unified diff (no context lines)
 * that Python's difflib produces for two texts, line for line. Pure: no I/O. */
#ifndef SP_TEXT_DIFF_H
#define SP_TEXT_DIFF_H

#include <stddef.h>

/* difflib.unified_diff(n=0) of the two texts split on "\n", lines right-stripped and joined
 * with "\n", headed "--- path\n+++ path" ("" when the texts are equal). Caller frees. */
char *fa_unified_diff(const char *a, size_t an, const char *b, size_t bn, const char *path);

#endif
