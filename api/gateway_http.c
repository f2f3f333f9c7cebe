/* gateway_http.c — requests from an API worker to a gateway over HTTP (docs/protocol.md,
 * "Control requests"): POST http://<its advertised addr>/_sp/op?to=<id> with a control token
 * (common/ctl_token.h) and a ctl_msg.h body; the answer is the response body. One libcurl
 * handle per worker process, so its connections to the gateways are kept between requests.
 * See gateway_client.h for the calls and their errors. */
#include "gateway_client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "buf.h"
#include "ctl_msg.h"
#include "ctl_token.h"
#include "json_util.h"
#include "redis.h"

#define GW_CONNECT_MS 1000                /* a live gateway accepts at once */
#define GW_ANSWER_MAX (64u * 1024 * 1024) /* the largest answer read */
#define GW_ADDR_MAX   192
#define TOKEN_RENEW_S 10 /* a control token is renewed this long before it ends */
#define GW_KEPT_MAX   64 /* connections a worker keeps (one per gateway it talks to) */

int
api_gateway_alive(api_req_t *r, const char *gw)
{
    redisReply *x = api_redis_cmdf(r, "EXISTS sp:gateway:%s", gw);
    if (!x)
        return -1;
    int alive = x->type == REDIS_REPLY_INTEGER && x->integer > 0;
    freeReplyObject(x);
    return alive;
}

static CURL *curl;        /* the worker's: its connection cache is the keep-alive */
static char *token;       /* the worker's control token ... */
static int64_t token_exp; /* ... and its end */
static char auth_header[JWT_BUF_LEN + 32];

/* The control token's header line, minted again when it is about to end. NULL when the
 * secret cannot sign. */
static const char *
control_auth(void)
{
    int64_t now = (int64_t)time(NULL);
    if (!token || now >= token_exp - TOKEN_RENEW_S) {
        free(token);
        token = ctl_token_mint(g_api.secret, g_api.secret_len, now, &token_exp);
        if (!token)
            return NULL;
        snprintf(auth_header, sizeof auth_header, "Authorization: Bearer %s", token);
    }
    return auth_header;
}

static CURL *
handle(void)
{
    if (!curl) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        curl = curl_easy_init();
    }
    return curl;
}

/* A Redis-written address is used only when it looks like host:port. */
static bool
addr_ok(const char *a)
{
    size_t n = strlen(a);
    return n > 2 && n < GW_ADDR_MAX && strchr(a, ':') &&
           strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") == n;
}

/* Gateway gw's advertised address into addr, checking its heartbeat in the same round trip:
 * 0, or -code with e (ERR_GATEWAY_DOWN: not running; ERR_UNAVAILABLE: Redis). */
static int
resolve(api_req_t *r, const char *gw, char addr[GW_ADDR_MAX], api_err_t *e)
{
    redisContext *c = api_redis_get(r, false);
    if (!c)
        return api_err_redis(e);
    redisAppendCommand(c, "EXISTS sp:gateway:%s", gw);
    redisAppendCommand(c, "HGET sp:gateway:%s:info addr", gw);
    redisReply *alive = NULL, *a = NULL;
    if (redisGetReply(c, (void **)&alive) != REDIS_OK ||
        redisGetReply(c, (void **)&a) != REDIS_OK) {
        if (alive)
            freeReplyObject(alive);
        api_redis_drop(r);
        return api_err_redis(e);
    }
    int rc = 0;
    if (alive->type != REDIS_REPLY_INTEGER || a->type == REDIS_REPLY_ERROR)
        rc = api_err_redis(e);
    else if (alive->integer == 0)
        rc = api_err_set(e, ERR_GATEWAY_DOWN, "the gateway %.100s is not running", gw);
    else if (a->type != REDIS_REPLY_STRING || !addr_ok(a->str))
        rc = api_err_set(e, ERR_GATEWAY_DOWN, "the gateway %.100s advertises no address", gw);
    else
        snprintf(addr, GW_ADDR_MAX, "%s", a->str);
    freeReplyObject(alive);
    freeReplyObject(a);
    return rc;
}

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
    buf_t *b = ud;
    size_t bytes = size * n;
    if (b->len + bytes > GW_ANSWER_MAX)
        return 0; /* ends the transfer: CURLE_WRITE_ERROR */
    buf_append(b, p, bytes);
    return bytes;
}

/* What went wrong on the way, as the REST API says it (c->unsent when nothing reached the
 * gateway). */
static int
transport_error(CURLcode cc, const char *gw, const char *why, api_gw_call_t *c, api_err_t *e)
{
    curl_off_t connect_us = 0;
    curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_us);
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
        c->unsent = true;
        return api_err_set(e, ERR_GATEWAY_DOWN, "the gateway %.100s is not running", gw);
    case CURLE_OPERATION_TIMEDOUT:
        if (connect_us == 0) {
            c->unsent = true;
            return api_err_set(e, ERR_GATEWAY_DOWN, "the gateway %.100s does not accept", gw);
        }
        return api_gw_no_answer(e);
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return api_err_set(e, ERR_GATEWAY_DOWN, "the gateway %.100s went away before it answered",
                           gw);
    case CURLE_WRITE_ERROR:
        return api_err_set(e, ERR_TOO_BIG, "the gateway's answer is over %u bytes",
                           (unsigned)GW_ANSWER_MAX);
    default:
        return api_err_set(e, ERR_UNAVAILABLE, "the gateway %.100s could not be asked: %.150s", gw,
                           why[0] ? why : curl_easy_strerror(cc));
    }
}

/* The answer of an HTTP status: the result, or NULL with e. */
static json_object *
answer(long status, const buf_t *b, api_err_t *e)
{
    json_object *res = NULL, *error = NULL;
    err_t perr = {0};
    int rc = ctl_answer_decode(b->data ? b->data : "", b->len, &res, &error, &perr);
    if (rc == 1 && status == 200)
        return res;
    json_object_put(res);
    if (rc == 0 && status == 200)
        api_err_from_gateway(e, error);
    else if (status == 401)
        api_err_set(e, ERR_UNAVAILABLE,
                    "the gateway refused the API's control token (do they share the JWT secret?)");
    else if (status == 421)
        api_err_set(e, ERR_GATEWAY_DOWN, "%s", json_get_str(error, "message", "another gateway"));
    else
        api_err_set(e, ERR_UNAVAILABLE, "the gateway answered HTTP %ld: %.150s", status,
                    json_get_str(error, "message", perr.msg));
    json_object_put(error);
    return NULL;
}

json_object *
api_gw_call(api_req_t *r, api_gw_call_t *c, api_err_t *e)
{
    api_err_t scratch;
    if (!e)
        e = &scratch;
    c->unsent = true;
    c->unanswered = false;
    char addr[GW_ADDR_MAX];
    if (resolve(r, c->gw, addr, e) < 0)
        return NULL;
    const char *auth = control_auth();
    if (!auth || !handle()) {
        api_err_set(e, ERR_INTERNAL, "no control token could be made");
        return NULL;
    }
    c->unsent = false;
    json_set_str(c->req, "owner", c->owner ? c->owner : r->claims.sub);
    json_set_str(c->req, "role", c->role ? c->role : r->claims.role);
    json_set_str(c->req, "viewer_session", c->owner ? "" : r->claims.session);
    size_t len;
    const char *body = json_text(c->req, &len);
    char url[GW_ADDR_MAX + 200], *gw_esc = curl_easy_escape(curl, c->gw, 0);
    snprintf(url, sizeof url, "http://%s/_sp/op?to=%.150s", addr, gw_esc ? gw_esc : "");
    curl_free(gw_esc);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Expect:"); /* the body goes at once (no 100-continue round) */
    buf_t got = BUF_INIT;
    char why[CURL_ERROR_SIZE] = "";
    curl_easy_reset(curl); /* options only: the connection cache stays */
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &got);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, why);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_PROXY, ""); /* never an environment's proxy */
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)GW_CONNECT_MS);
    curl_easy_setopt(curl, CURLOPT_MAXCONNECTS, (long)GW_KEPT_MAX);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)c->timeout_s * 1000L);
    CURLcode cc = curl_easy_perform(curl);
    curl_slist_free_all(h);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    json_object *res = NULL;
    if (cc != CURLE_OK) {
        transport_error(cc, c->gw, why, c, e);
        c->unanswered = !c->unsent && cc != CURLE_WRITE_ERROR;
    } else
        res = answer(status, &got, e);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL); /* why is about to go */
    buf_free(&got);
    return res;
}

json_object *
api_gw_ask(api_req_t *r, const char *gw, json_object *req, int timeout_s, api_err_t *e)
{
    api_gw_call_t c = {.gw = gw, .req = req, .timeout_s = timeout_s};
    return api_gw_call(r, &c, e);
}

int
api_gw_no_answer(api_err_t *e)
{
    return api_err_set(e, ERR_TIMEOUT, "the gateway did not answer in time");
}

bool
api_gw_refused(const api_err_t *e)
{
    return e->code != ERR_TIMEOUT && e->code != ERR_UNAVAILABLE && e->code != ERR_GATEWAY_DOWN;
}

void
api_gw_relay(api_req_t *r, const char *gw, json_object *req)
{
    api_err_t e;
    json_object *res = api_gw_ask(r, gw, req, g_api.gw_timeout, &e);
    if (res)
        api_reply_json(r, 200, res);
    else
        api_fail(r, &e);
}
