/* http_files.c — file downloads over HTTP on the session's own gateway (http_files.h), streamed
 * under the gateway's credit (file_download.h). Texts and statuses are sandpipe-api's
 * (common/file_req.c). */
#include "http_files.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err_http.h"
#include "file_download.h"
#include "file_req.h"
#include "gw.h"
#include "http_rest.h"
#include "json_util.h"
#include "session.h"
#include "xalloc.h"

/* One download, with what its route lookup needs. */
typedef struct {
    file_download_t dl; /* first: file_download.c frees it as one */
    jwt_claims_t claims;
    json_object *op;  /* file.download's fields */
    char extra[1400]; /* its answer's headers: the file's name for a browser */
} download_t;

static void
download_free(file_download_t *dl)
{
    download_t *d = (download_t *)dl;
    json_object_put(d->op);
    free(d);
}

static void
download_fail(file_download_t *dl, http_req_t *h, json_object *res)
{
    (void)dl;
    if (res)
        http_rest_fail_with(h, json_get(res, "error"), "the download failed");
    else
        http_rest_fail(h, ERR_INTERNAL, "the executor sent no size");
}

static void
on_route(void *ud, const route_t *r)
{
    http_req_t *h = http_find((uint64_t)(uintptr_t)ud);
    if (!h)
        return;
    download_t *d = h->ud;
    gw_session_t *s = http_rest_session(h, r, &d->claims, r ? r->sid : "", false);
    if (!s)
        return;
    err_t err = {0};
    if (file_download_open(&d->dl, s, d->op, &err) < 0)
        http_rest_fail(h, err.code ? err.code : ERR_INTERNAL, "%s", err.msg);
}

void
http_files_download(http_req_t *h, const char *id)
{
    download_t *d = xcalloc(1, sizeof *d);
    d->dl.free = download_free;
    d->dl.fail = download_fail;
    file_download_attach(&d->dl, h);
    if (!http_rest_auth(h, &d->claims))
        return;
    err_t err = {0};
    file_req_query_t q = http_rest_query(h);
    d->op = file_req_download(&q, &err);
    if (!d->op) {
        http_rest_fail(h, err.code, "%s", err.msg);
        return;
    }
    snprintf(d->dl.path, sizeof d->dl.path, "%s", json_get_str(d->op, "path", ""));
    char disp[1200];
    file_req_disposition(disp, sizeof disp, d->dl.path);
    snprintf(d->extra, sizeof d->extra, "content-disposition: %s\r\ncache-control: no-store\r\n",
             disp);
    d->dl.extra = d->extra;
    route_resolve(id, on_route, (void *)(uintptr_t)h->id);
}
