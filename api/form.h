/* form.h — a request body in multipart/form-data, read as it arrives (api_body_read): the
 * form is parsed up to the part a handler wants, whose bytes are then pulled in pieces by
 * api_form_read (an api_xfer_read_fn), so an upload of any size holds one body chunk here.
 * Other parts are skipped unread. */
#ifndef SP_API_FORM_H
#define SP_API_FORM_H

#include <stdbool.h>
#include <sys/types.h>

#include "http.h"

/* Why the form failed (api_form_open's result, api_form_error after a failed read). */
enum {
    API_FORM_OK = 0,
    API_FORM_MISSING = -1,   /* not multipart/form-data, or no part with that name */
    API_FORM_MALFORMED = -2, /* the multipart framing is broken */
    API_FORM_BROKEN = -3,    /* the body broke off (client gone, shorter than announced) */
    API_FORM_TOO_LARGE = -4, /* the part is over the limit */
};

typedef struct api_form api_form_t;

/* Reads r's body up to the headers of the first part named field; max bounds that part's
 * bytes. Returns API_FORM_OK with *out set, or an API_FORM_ error (*out NULL). */
int api_form_open(api_form_t **out, api_req_t *r, const char *field, unsigned long long max);
void api_form_free(api_form_t *f);

/* The part's filename parameter, NULL when it has none (a plain field). */
const char *api_form_filename(const api_form_t *f);

/* The part's next bytes into buf[0..cap) (ud is the form). Returns > 0, 0 at the part's end,
 * -1 on a failure (api_form_error says which). */
ssize_t api_form_read(void *ud, char *buf, size_t cap);
int api_form_error(const api_form_t *f);

#endif
