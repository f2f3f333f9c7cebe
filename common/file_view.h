/* file_view.h — OpenHands' file viewer (openhands/runtime/file_viewer_server.py and
 * utils/file_viewer.py): `GET /view?path=<absolute path>` answers an HTML page titled
 * "File Viewer - <name>" that shows a PNG, JPEG, GIF or PDF with its bytes inline as base64, or
 * an HTML error page with upstream's status and words. Pure: the page is built here; reading the
 * file is the caller's (gateway/http_rt_view.c over the executor protocol, the browser plugin's
 * in-sandbox viewer, plugins/browser/viewer.c). Unlike upstream, every name is HTML-escaped and
 * the page runs no script (a PDF is an <embed>: pdf.js from a CDN is unreachable offline). */
#ifndef SP_FILE_VIEW_H
#define SP_FILE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* What /tmp/oh-server-url holds inside a sandbox: the browser plugin's Chromium answers
 * /view on this origin itself (and on http://127.0.0.1:FILE_VIEW_PORT). */
#define FILE_VIEW_PORT     30001
#define FILE_VIEW_URL      "http://localhost:30001"
#define FILE_VIEW_URL_FILE "/tmp/oh-server-url"
#define FILE_VIEW_CSP                                                                              \
    "default-src 'none'; img-src data:; object-src data:; style-src 'unsafe-inline'"

/* The MIME type of a path the viewer shows (by its extension, any case), or NULL. */
const char *file_view_mime(const char *path);

/* The page is head + base64(file bytes) + tail. */
void file_view_head(buf_t *out, const char *path, const char *mime);
void file_view_tail(buf_t *out, const char *mime);
/* Bytes of the whole page for a file of size bytes (head and tail as above). */
size_t file_view_page_len(const char *path, const char *mime, size_t size);

/* Why a view fails before its file is read: a path that is not absolute (400). The page goes
 * into out; returns the HTTP status, or 0 when the path may be viewed. */
int file_view_check(buf_t *out, const char *path);
/* The page for a file that cannot be shown, from the reading's errno-style code (ENOENT 404,
 * EISDIR 400, anything else 500 with detail) or, code 0, an extension the viewer does not
 * show (500, upstream's "Unsupported file extension" words). Returns the HTTP status. */
int file_view_error(buf_t *out, const char *path, int code, const char *detail);

/* The path= argument of url's query, percent-decoded ('+' a space, as FastAPI reads a query)
 * into out. false when url has none or it does not fit in cap (NUL included). */
bool file_view_url_path(const char *url, char *out, size_t cap);

#endif
