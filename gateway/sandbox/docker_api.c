/* docker_api.c — the Docker Engine API client. See docker_api.h. */
#include "docker_api.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xalloc.h"

#define DOCKER_SOCKET_DEFAULT "/var/run/docker.sock"

typedef struct {
    CURL *easy;
    struct curl_slist *headers;
    buf_t reply;
    char *body; /* request body (owned) */
    char error[CURL_ERROR_SIZE];
    docker_cb cb;
    void *ud;
} req_t;

typedef struct { /* one socket curl watches */
    uv_poll_t poll;
    curl_socket_t fd;
} watch_t;

static CURLM *multi;
static uv_loop_t *mloop;
static uv_timer_t mtimer;

const char *
docker_api_socket(void)
{
    const char *h = getenv("DOCKER_HOST");
    return h && !strncmp(h, "unix://", 7) ? h + 7 : DOCKER_SOCKET_DEFAULT;
}

static size_t
on_write(char *p, size_t size, size_t n, void *ud)
{
    buf_append(&((req_t *)ud)->reply, p, size * n);
    return size * n;
}

static req_t *
req_new(const char *method, const char *path, json_object *body, long timeout_ms)
{
    req_t *r = xcalloc(1, sizeof *r);
    r->easy = curl_easy_init();
    char url[1024];
    snprintf(url, sizeof url, "http://docker" DOCKER_API_VERSION "%s", path);
    curl_easy_setopt(r->easy, CURLOPT_UNIX_SOCKET_PATH, docker_api_socket());
    curl_easy_setopt(r->easy, CURLOPT_URL, url);
    curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->error);
    curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
    r->headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
    if (body) {
        r->body = xstrdup(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
        curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
    } else if (!strcmp(method, "POST")) {
        curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, "");
    }
    return r;
}

/* Status and parsed reply of a finished request; the reply is NULL unless it is JSON. */
static long
req_result(req_t *r, CURLcode rc, json_object **out)
{
    long status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    else if (!r->error[0])
        snprintf(r->error, sizeof r->error, "%s", curl_easy_strerror(rc));
    *out = r->reply.len ? json_tokener_parse(r->reply.data) : NULL;
    if (status >= 400 && !r->error[0]) {
        json_object *m = *out ? json_object_object_get(*out, "message") : NULL;
        snprintf(r->error, sizeof r->error, "docker: %ld %s", status,
                 m ? json_object_get_string(m) : "");
    }
    return status;
}

static void
req_free(req_t *r)
{
    curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->headers);
    buf_free(&r->reply);
    free(r->body);
    free(r);
}

long
docker_api_sync(const char *method, const char *path, json_object *body, long timeout_ms,
                json_object **out, char *error, size_t cap)
{
    req_t *r = req_new(method, path, body, timeout_ms);
    json_object *reply = NULL;
    long status = req_result(r, curl_easy_perform(r->easy), &reply);
    if (error && cap)
        snprintf(error, cap, "%s", r->error);
    if (out)
        *out = reply;
    else
        json_object_put(reply);
    req_free(r);
    return status;
}

/* ---- the multi handle on the uv loop ---- */

static void
check_done(void)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        req_t *r;
        CURL *easy = m->easy_handle;
        CURLcode rc = m->data.result;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
        curl_multi_remove_handle(multi, easy);
        json_object *reply = NULL;
        long status = req_result(r, rc, &reply);
        r->cb(r->ud, status, reply, r->error[0] ? r->error : NULL);
        json_object_put(reply);
        req_free(r);
    }
}

static void
on_poll(uv_poll_t *p, int status, int events)
{
    watch_t *w = p->data;
    int flags = status < 0 ? CURL_CSELECT_ERR : 0;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    int running;
    curl_multi_socket_action(multi, w->fd, flags, &running);
    check_done();
}

static void
on_timer(uv_timer_t *t)
{
    (void)t;
    int running;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done();
}

static void
on_watch_closed(uv_handle_t *h)
{
    free(h->data);
}

static int
on_socket(CURL *easy, curl_socket_t fd, int what, void *ud, void *sockp)
{
    (void)easy;
    (void)ud;
    watch_t *w = sockp;
    if (what == CURL_POLL_REMOVE) {
        if (w) {
            uv_poll_stop(&w->poll);
            uv_close((uv_handle_t *)&w->poll, on_watch_closed);
            curl_multi_assign(multi, fd, NULL);
        }
        return 0;
    }
    if (!w) {
        w = xcalloc(1, sizeof *w);
        w->fd = fd;
        uv_poll_init_socket(mloop, &w->poll, fd);
        w->poll.data = w;
        curl_multi_assign(multi, fd, w);
    }
    int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    uv_poll_start(&w->poll, ev, on_poll);
    return 0;
}

static int
on_timeout(CURLM *m, long ms, void *ud)
{
    (void)m;
    (void)ud;
    if (ms < 0)
        uv_timer_stop(&mtimer);
    else
        uv_timer_start(&mtimer, on_timer, (uint64_t)ms, 0);
    return 0;
}

int
docker_api_request(uv_loop_t *loop, const char *method, const char *path, json_object *body,
                   long timeout_ms, docker_cb cb, void *ud)
{
    if (!multi) {
        mloop = loop;
        multi = curl_multi_init();
        curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timeout);
        uv_timer_init(loop, &mtimer);
        uv_unref((uv_handle_t *)&mtimer); /* the loop may end with it idle */
    }
    req_t *r = req_new(method, path, body, timeout_ms);
    r->cb = cb;
    r->ud = ud;
    if (curl_multi_add_handle(multi, r->easy) != CURLM_OK) {
        req_free(r);
        return -1;
    }
    return 0;
}

char *
docker_api_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0), *out = xstrdup(e ? e : "");
    curl_free(e);
    return out;
}
