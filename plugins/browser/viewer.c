/* viewer.c — the in-sandbox file viewer, answered from inside Chromium (viewer.h). */
#include "viewer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64.h"
#include "buf.h"
#include "file_view.h"
#include "json_util.h"
#include "xalloc.h"

#define PORT_STR(p) #p
#define PORT_OF(p)  PORT_STR(p)

/* What follows the origin: "/view…" yields the path's answer. */
static const char *
route_of(const char *url)
{
    static const char *const origins[] = {
        "http://localhost:" PORT_OF(FILE_VIEW_PORT),
        "http://127.0.0.1:" PORT_OF(FILE_VIEW_PORT),
    };
    for (size_t i = 0; i < sizeof origins / sizeof origins[0]; i++) {
        size_t n = strlen(origins[i]);
        if (!strncmp(url, origins[i], n))
            return url + n;
    }
    return NULL;
}

/* The file's page into out; the HTTP status. */
static int
view(buf_t *out, const char *url)
{
    char path[PATH_MAX];
    if (!file_view_url_path(url, path, sizeof path)) {
        buf_puts(out, "{\"detail\":\"Invalid request parameters\",\"errors\":[{\"type\":"
                      "\"missing\",\"loc\":[\"query\",\"path\"],\"msg\":\"Field required\"}]}");
        return 422;
    }
    int status = file_view_check(out, path);
    if (status)
        return status;
    /* O_NONBLOCK: a FIFO's open would wait for a writer; fstat refuses it below */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return file_view_error(out, path, e, strerror(e));
    }
    const char *mime = file_view_mime(path);
    int refused = S_ISDIR(st.st_mode)            ? EISDIR
                  : !mime                        ? 0 /* upstream's "Unsupported file extension" */
                  : !S_ISREG(st.st_mode)         ? EINVAL
                  : st.st_size > VIEWER_FILE_MAX ? EFBIG
                                                 : -1;
    if (refused >= 0) {
        close(fd);
        char why[64];
        snprintf(why, sizeof why, "larger than %u MiB", VIEWER_FILE_MAX >> 20);
        return file_view_error(out, path, refused, refused == EFBIG ? why : "not a regular file");
    }
    file_view_head(out, path, mime);
    base64_stream_t b64 = {0};
    char in[48 * 1024];
    for (;;) {
        ssize_t r = read(fd, in, sizeof in);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            buf_clear(out);
            return file_view_error(out, path, e, strerror(e));
        }
        if (r == 0)
            break;
        char *w = buf_reserve(out, BASE64_STREAM_MAX((size_t)r));
        buf_advance(out, base64_stream_feed(&b64, in, (size_t)r, w));
    }
    close(fd);
    char *w = buf_reserve(out, 4);
    buf_advance(out, base64_stream_end(&b64, w));
    file_view_tail(out, mime);
    return 200;
}

static void
fulfill(cdp_t *c, const char *request_id, int status, const char *ctype, const buf_t *body)
{
    json_object *p = json_object_new_object();
    json_set_str(p, "requestId", request_id);
    json_set_int(p, "responseCode", status);
    json_object *hs = json_object_new_array(), *ct = json_object_new_object();
    json_set_str(ct, "name", "Content-Type");
    json_set_str(ct, "value", ctype);
    json_object_array_add(hs, ct);
    json_set(p, "responseHeaders", hs);
    char *b = xmalloc(BASE64_ENCODED_LEN(body->len) + 1);
    size_t n = base64_encode(body->data ? body->data : "", body->len, b);
    json_set(p, "body", json_object_new_string_len(b, (int)n));
    free(b);
    err_t err = {0};
    cdp_send(c, "Fetch.fulfillRequest", p, true, &err); /* a dead browser shows at the next call */
}

static void
on_event(cdp_t *c, json_object *m)
{
    if (strcmp(json_get_str(m, "method", ""), "Fetch.requestPaused") != 0)
        return;
    json_object *p = json_get(m, "params");
    const char *id = json_get_str(p, "requestId", "");
    const char *url = json_get_str(json_get(p, "request"), "url", "");
    const char *route = route_of(url);
    buf_t body = BUF_INIT;
    int status = 404;
    const char *ctype = "application/json";
    if (route && (!strncmp(route, "/view?", 6) || !strcmp(route, "/view"))) {
        status = view(&body, url);
        if (status != 422)
            ctype = "text/html; charset=utf-8";
    } else if (route && (!*route || (*route == '/' && (!route[1] || route[1] == '?')))) {
        status = 200;
        buf_puts(&body, "{\"status\":\"File viewer server is running\"}");
    } else {
        buf_puts(&body, "{\"detail\":\"Not Found\"}");
    }
    fulfill(c, id, status, ctype, &body);
    buf_free(&body);
}

int
viewer_enable(cdp_t *c, err_t *err)
{
    c->on_event = on_event;
    json_object *patterns = json_object_new_array();
    static const char *const urls[] = {
        "http://localhost:" PORT_OF(FILE_VIEW_PORT) "/*",
        "http://127.0.0.1:" PORT_OF(FILE_VIEW_PORT) "/*",
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        json_object *pat = json_object_new_object();
        json_set_str(pat, "urlPattern", urls[i]);
        json_set_str(pat, "requestStage", "Request");
        json_object_array_add(patterns, pat);
    }
    json_object *p = json_object_new_object();
    json_set(p, "patterns", patterns);
    json_object *r = cdp_call(c, "Fetch.enable", p, true, 10000, err);
    if (!r)
        return -1;
    json_object_put(r);
    return 0;
}
