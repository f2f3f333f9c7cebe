/* axtree.h — the page's accessibility tree as BrowserGym and OpenHands show it to agents, from
 * Chromium's own tree: Accessibility.getFullAXTree's nodes, each element's bid (its
 * browsergym_id attribute, the one click(bid)/fill(bid) look up) and whether Chromium deems it
 * clickable, both from DOMSnapshot.captureSnapshot by backend node id. The text is what
 * OpenHands' get_axtree_str gives (BrowserGym's flatten_axtree_to_str with with_clickable=True,
 * skip_generic=False): "[bid] role 'name'" lines, a tab per depth, nameless and ignored nodes
 * left out with their children one level up, StaticText repeating its parent's name dropped,
 * properties as ", name=value" in Python's repr. Pure: no I/O, fuzzed (fuzz_axtree). */
#ifndef SP_BROWSER_AXTREE_H
#define SP_BROWSER_AXTREE_H

#include <json-c/json.h>

#include "buf.h"

#define AXTREE_MAX_DEPTH 256        /* deeper nodes are not shown (a hostile page's nesting) */
#define AXTREE_MAX_BYTES (4u << 20) /* past this the listing ends with a marker line */

/* Appends the listing of ax (getFullAXTree's result, {"nodes":[...]}) to out, bids and
 * clickability from snap (captureSnapshot's result; may be NULL: no bids). Both borrowed. */
void axtree_format(json_object *ax, json_object *snap, buf_t *out);

/* Python's repr() of a UTF-8 string (quotes chosen and escapes as Python 3 does for the
 * characters pages hold). */
void axtree_py_repr(buf_t *out, const char *s, size_t n);

#endif
