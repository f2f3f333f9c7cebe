/* preview_page.h — what a preview answers itself (a refusal, a redirect, "nothing listens"):
 * a small HTML page a person in a browser reads, with Connection: close. Pure. */
#ifndef SP_PREVIEW_PAGE_H
#define SP_PREVIEW_PAGE_H

#include "buf.h"

/* status, a title and a sentence (escaped here) as a whole response into out; extra: more
 * header lines ("Name: value\r\n"…, or NULL). */
void preview_page(buf_t *out, int status, const char *title, const char *text, const char *extra);
/* A redirect to location (a path; written as it is: the caller built it from checked parts). */
void preview_redirect(buf_t *out, int status, const char *location, const char *extra);

#endif
