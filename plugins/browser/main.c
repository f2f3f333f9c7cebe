/* main.c — sandpipe-browser: runs BrowserGym action strings in one headless Chromium for the
 * executor (executor/browser.c), over the DevTools pipe. Requests are JSON lines on stdin
 * ({"op":"step","action":"click(\"12\")","workspace":"/workspace"}); each answer is one JSON line
 * with what the observation needs (url, text, axtree, focused bid, screenshot, open pages, the
 * action's error). Chromium starts with the first step and again after it died. A separate
 * program, like sandpipe-jupyter: blocking CDP sequencing stays out of the executor's loop. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "action.h"
#include "axtree.h"
#include "base64.h"
#include "cdp.h"
#include "clock.h"
#include "json_util.h"
#include "page_js.h"
#include "viewer.h"

#define LOAD_MS   15000 /* a page gets this long to fire its load event */
#define SETTLE_MS 300   /* after an action, how long a navigation it caused has to start */
#define CALL_MS   10000 /* any other DevTools command */

static struct {
    cdp_t cdp;
    char dir[PATH_MAX];
    const char *chromium;
} g;

static void
emit(json_object *ev)
{
    int rc = json_write_line(1, ev);
    json_object_put(ev);
    if (rc < 0)
        exit(0);
}

/* The browser's state for the executor's plugins table. */
static void
emit_state(const char *state, long started, const char *why)
{
    json_object *ev = json_object_new_object();
    json_set_str(ev, "ev", "browser");
    json_set_str(ev, "state", state);
    if (g.cdp.pid > 0)
        json_set_int(ev, "pid", g.cdp.pid);
    if (started)
        json_set_int(ev, "start_ms", (long)clock_mono_ms() - started);
    if (why)
        json_set_str(ev, "message", why);
    emit(ev);
}

static json_object *
eval(const char *expr, bool by_value, err_t *err)
{
    json_object *p = json_object_new_object();
    json_set_str(p, "expression", expr);
    json_set_bool(p, "returnByValue", by_value);
    json_set_bool(p, "awaitPromise", true);
    json_object *r = cdp_call(&g.cdp, "Runtime.evaluate", p, true, CALL_MS, err);
    if (!r)
        return NULL;
    json_object *ex = json_get(r, "exceptionDetails");
    if (ex) {
        json_object *e = json_get(ex, "exception");
        err_set(err, ERR_BAD_REQ, "%s",
                json_get_str(e, "description", json_get_str(ex, "text", "script error")));
        json_object_put(r);
        return NULL;
    }
    json_object *v = json_object_get(json_get(r, "result"));
    json_object_put(r);
    return v;
}

/* Waits for a navigation the last action may have caused: if a frame started loading within
 * SETTLE_MS, until its load event. */
static void
settle(unsigned starts, unsigned stops)
{
    cdp_wait(&g.cdp, SETTLE_MS, &g.cdp.starts, starts);
    if (g.cdp.starts != starts)
        cdp_wait(&g.cdp, LOAD_MS, &g.cdp.stops, stops);
}

static bool
is_local(const char *url)
{
    return strncmp(url, "file:", 5) == 0 || strncmp(url, "about:", 6) == 0 ||
           strncmp(url, "data:", 5) == 0 || strstr(url, "://127.") || strstr(url, "://localhost") ||
           strstr(url, "://[::1]");
}

static int
do_goto(const char *url, err_t *err)
{
    unsigned loads = g.cdp.loads;
    json_object *p = json_object_new_object();
    json_set_str(p, "url", url);
    json_object *r = cdp_call(&g.cdp, "Page.navigate", p, true, LOAD_MS, err);
    if (!r)
        return -1;
    const char *et = json_get_str(r, "errorText", NULL);
    if (et && *et) {
        err_set(err, ERR_BAD_REQ, "%s at %s%s", et, url,
                is_local(url) ? ""
                              : ". The browser sees what the sandbox sees: servers on its "
                                "loopback and file:// paths (this sandbox may have no network)");
        json_object_put(r);
        return -1;
    }
    json_object_put(r);
    cdp_wait(&g.cdp, LOAD_MS, &g.cdp.loads, loads);
    return 0;
}

/* The element's centre, scrolled into view, as "x,y", or an error naming the bid. */
static int
element_point(const char *bid, double *x, double *y, err_t *err)
{
    json_object *s = json_object_new_string(bid);
    buf_t e = BUF_INIT;
    buf_printf(&e,
               "(() => { const el = document.querySelector('[browsergym_id=' + JSON.stringify(%s) "
               "+ ']'); if (!el) return null; el.scrollIntoView({block: 'center'}); const r = "
               "el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()",
               json_object_to_json_string(s));
    json_object_put(s);
    json_object *v = eval(e.data, true, err);
    buf_free(&e);
    json_object *val = v ? json_get(v, "value") : NULL;
    if (!val || !json_object_is_type(val, json_type_array)) {
        json_object_put(v);
        if (!err->msg[0] || val == NULL)
            err_set(err, ERR_NOT_FOUND, "Could not find element with bid \"%s\"", bid);
        return -1;
    }
    *x = json_object_get_double(json_object_array_get_idx(val, 0));
    *y = json_object_get_double(json_object_array_get_idx(val, 1));
    json_object_put(v);
    return 0;
}

static int
mouse(const char *type, double x, double y, int clicks, err_t *err)
{
    json_object *p = json_object_new_object();
    json_set_str(p, "type", type);
    json_set(p, "x", json_object_new_double(x));
    json_set(p, "y", json_object_new_double(y));
    json_set_str(p, "button", "left");
    json_set_int(p, "clickCount", clicks);
    json_object *r = cdp_call(&g.cdp, "Input.dispatchMouseEvent", p, true, CALL_MS, err);
    json_object_put(r);
    return r ? 0 : -1;
}

static int
do_click(const char *bid, int clicks, err_t *err)
{
    double x, y;
    if (element_point(bid, &x, &y, err) < 0)
        return -1;
    for (int i = 1; i <= clicks; i++)
        if (mouse("mousePressed", x, y, i, err) < 0 || mouse("mouseReleased", x, y, i, err) < 0)
            return -1;
    return 0;
}

/* Runs a script on the element with that bid: `el` is in scope. */
static int
on_element(const char *bid, const char *body, json_object *arg, err_t *err)
{
    json_object *s = json_object_new_string(bid);
    buf_t e = BUF_INIT;
    buf_printf(&e,
               "(() => { const el = document.querySelector('[browsergym_id=' + JSON.stringify(%s) "
               "+ ']'); if (!el) return 'missing'; const arg = %s; %s; return 'ok'; })()",
               json_object_to_json_string(s),
               arg ? json_object_to_json_string_ext(arg, JSON_C_TO_STRING_NOSLASHESCAPE) : "null",
               body);
    json_object_put(s);
    json_object *v = eval(e.data, true, err);
    buf_free(&e);
    if (!v)
        return -1;
    bool missing = strcmp(json_get_str(v, "value", ""), "missing") == 0;
    json_object_put(v);
    if (missing)
        return err_set(err, ERR_NOT_FOUND, "Could not find element with bid \"%s\"", bid);
    return 0;
}

static int
press_key(const char *key, err_t *err)
{
    /* Enter needs its text for a form to submit; single characters type themselves. */
    const char *text = strcmp(key, "Enter") == 0 ? "\r" : strlen(key) == 1 ? key : "";
    int code = strcmp(key, "Enter") == 0       ? 13
               : strcmp(key, "Tab") == 0       ? 9
               : strcmp(key, "Escape") == 0    ? 27
               : strcmp(key, "Backspace") == 0 ? 8
                                               : 0;
    const char *types[] = {text[0] ? "keyDown" : "rawKeyDown", "keyUp"};
    for (int i = 0; i < 2; i++) {
        json_object *p = json_object_new_object();
        json_set_str(p, "type", types[i]);
        json_set_str(p, "key", key);
        if (code)
            json_set_int(p, "windowsVirtualKeyCode", code);
        if (i == 0 && text[0])
            json_set_str(p, "text", text);
        json_object *r = cdp_call(&g.cdp, "Input.dispatchKeyEvent", p, true, CALL_MS, err);
        if (!r)
            return -1;
        json_object_put(r);
    }
    return 0;
}

static const char *
arg_str(json_object *args, size_t i)
{
    json_object *a = json_object_array_get_idx(args, i);
    return a && json_object_is_type(a, json_type_string) ? json_object_get_string(a) : NULL;
}

/* One BrowserGym call. */
static int
run_call(json_object *call, err_t *err)
{
    const char *name = json_get_str(call, "name", "");
    json_object *args = json_get(call, "args");
    size_t n = json_object_array_length(args);
    const char *s0 = arg_str(args, 0), *s1 = arg_str(args, 1);
    unsigned starts = g.cdp.starts, stops = g.cdp.stops;
    int rc = 0;
    if (strcmp(name, "goto") == 0 && s0) {
        return do_goto(s0, err);
    } else if ((strcmp(name, "click") == 0 || strcmp(name, "dblclick") == 0) && s0) {
        rc = do_click(s0, name[0] == 'd' ? 2 : 1, err);
    } else if (strcmp(name, "fill") == 0 && s0 && s1) {
        rc = on_element(s0,
                        "el.focus(); el.value = arg; el.dispatchEvent(new Event('input', {bubbles: "
                        "true})); el.dispatchEvent(new Event('change', {bubbles: true}))",
                        json_object_array_get_idx(args, 1), err);
    } else if (strcmp(name, "clear") == 0 && s0) {
        rc = on_element(s0,
                        "el.focus(); el.value = ''; el.dispatchEvent(new Event('input', "
                        "{bubbles: true}))",
                        NULL, err);
    } else if ((strcmp(name, "focus") == 0 || strcmp(name, "hover") == 0) && s0) {
        rc = on_element(s0, "el.focus(); el.scrollIntoView({block: 'center'})", NULL, err);
    } else if (strcmp(name, "select_option") == 0 && s0 && n >= 2) {
        rc =
            on_element(s0,
                       "const want = Array.isArray(arg) ? arg : [arg]; for (const o of el.options) "
                       "o.selected = want.includes(o.value) || want.includes(o.text.trim()); "
                       "el.dispatchEvent(new Event('input', {bubbles: true})); "
                       "el.dispatchEvent(new Event('change', {bubbles: true}))",
                       json_object_array_get_idx(args, 1), err);
    } else if ((strcmp(name, "press") == 0 || strcmp(name, "keyboard_press") == 0) && s0) {
        const char *key = strcmp(name, "press") == 0 ? s1 : s0;
        if (strcmp(name, "press") == 0 && on_element(s0, "el.focus()", NULL, err) < 0)
            return -1;
        rc = key ? press_key(key, err) : err_set(err, ERR_BAD_REQ, "press needs a key");
    } else if (strcmp(name, "scroll") == 0 && n == 2) {
        char e[128];
        snprintf(e, sizeof e, "window.scrollBy(%g, %g)",
                 json_object_get_double(json_object_array_get_idx(args, 0)),
                 json_object_get_double(json_object_array_get_idx(args, 1)));
        json_object *v = eval(e, true, err);
        rc = v ? 0 : -1;
        json_object_put(v);
    } else if (strcmp(name, "go_back") == 0 || strcmp(name, "go_forward") == 0) {
        json_object *v = eval(name[3] == 'b' ? "history.back()" : "history.forward()", true, err);
        rc = v ? 0 : -1;
        json_object_put(v);
    } else if (strcmp(name, "noop") == 0) {
        int ms = n ? (int)json_object_get_int(json_object_array_get_idx(args, 0)) : 1000;
        cdp_wait(&g.cdp, ms < 0 ? 0 : ms > 30000 ? 30000 : ms, NULL, 0);
        return 0;
    } else if (strcmp(name, "send_msg_to_user") == 0 || strcmp(name, "report_infeasible") == 0) {
        return 0;
    } else if (strcmp(name, "upload_file") == 0 && s0 && n >= 2) {
        json_object *files = json_object_array_get_idx(args, 1);
        json_object *list = json_object_new_array();
        if (json_object_is_type(files, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(files); i++)
                json_object_array_add(list, json_object_get(json_object_array_get_idx(files, i)));
        } else {
            json_object_array_add(list, json_object_get(files));
        }
        json_object *s = json_object_new_string(s0);
        buf_t e = BUF_INIT;
        buf_printf(&e, "document.querySelector('[browsergym_id=' + JSON.stringify(%s) + ']')",
                   json_object_to_json_string(s));
        json_object_put(s);
        json_object *v = eval(e.data, false, err);
        buf_free(&e);
        const char *oid = v ? json_get_str(v, "objectId", NULL) : NULL;
        if (!oid) {
            json_object_put(list);
            json_object_put(v);
            return err_set(err, ERR_NOT_FOUND, "Could not find element with bid \"%s\"", s0);
        }
        json_object *p = json_object_new_object();
        json_set(p, "files", list);
        json_set_str(p, "objectId", oid);
        json_object *r = cdp_call(&g.cdp, "DOM.setFileInputFiles", p, true, CALL_MS, err);
        json_object_put(v);
        rc = r ? 0 : -1;
        json_object_put(r);
    } else {
        return err_set(err, ERR_BAD_REQ, "Unsupported or malformed action: %s", name);
    }
    if (rc == 0)
        settle(starts, stops);
    return rc;
}

static void
screenshot(json_object *done, const char *workspace)
{
    err_t err = {0};
    json_object *p = json_object_new_object();
    json_set_str(p, "format", "png");
    json_object *r = cdp_call(&g.cdp, "Page.captureScreenshot", p, true, CALL_MS, &err);
    const char *data = r ? json_get_str(r, "data", NULL) : NULL;
    if (data) {
        buf_t url = BUF_INIT;
        buf_puts(&url, "data:image/png;base64,");
        buf_puts(&url, data);
        json_set_strn(done, "screenshot", url.data, url.len);
        buf_free(&url);
        /* upstream keeps a copy under the workspace */
        char dir[PATH_MAX + 32], path[PATH_MAX + 96], stamp[32];
        snprintf(dir, sizeof dir, "%s/.browser_screenshots", workspace);
        mkdir(dir, 0755);
        struct timeval tv;
        gettimeofday(&tv, NULL);
        struct tm tm;
        localtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &tm);
        snprintf(path, sizeof path, "%s/screenshot_%s_%06ld.png", dir, stamp, (long)tv.tv_usec);
        size_t n = 0, dl = strlen(data);
        unsigned char *png = malloc(BASE64_DECODED_MAX(dl));
        if (png && base64_decode(data, dl, png, &n) < 0) {
            free(png);
            png = NULL;
        }
        FILE *f = png ? fopen(path, "wb") : NULL;
        if (f) {
            bool ok = fwrite(png, 1, n, f) == n;
            if (fclose(f) == 0 && ok)
                json_set_str(done, "screenshot_path", path);
        }
        free(png);
    }
    json_object_put(r);
}

/* The accessibility listing from Chromium's tree, the bids page.js set read back from a DOM
 * snapshot (axtree.h). A failure leaves the listing empty and says why in its place. */
static void
add_axtree(json_object *done)
{
    err_t err = {0};
    json_object *p = json_object_new_object();
    json_set(p, "computedStyles", json_object_new_array());
    json_object *snap = cdp_call(&g.cdp, "DOMSnapshot.captureSnapshot", p, true, CALL_MS, &err);
    json_object *ax =
        snap ? cdp_call(&g.cdp, "Accessibility.getFullAXTree", NULL, true, CALL_MS, &err) : NULL;
    buf_t t = BUF_INIT;
    if (ax)
        axtree_format(ax, snap, &t);
    else
        buf_printf(&t, "[the accessibility tree could not be read: %s]", err.msg);
    json_set_strn(done, "axtree", t.data ? t.data : "", t.len);
    buf_free(&t);
    json_object_put(ax);
    json_object_put(snap);
}

static void
do_step(json_object *req)
{
    json_object *done = json_object_new_object();
    json_set_str(done, "ev", "done");
    err_t err = {0};
    const char *text = json_get_str(req, "action", "");
    json_set_str(done, "last_action", text);
    if (!cdp_alive(&g.cdp)) {
        cdp_stop(&g.cdp);
        long started = (long)clock_mono_ms();
        if (cdp_start(&g.cdp, g.chromium, g.dir, &err) < 0 || viewer_enable(&g.cdp, &err) < 0) {
            cdp_stop(&g.cdp);
            emit_state("exited", 0, err.msg);
            json_set_str(done, "fatal", err.msg);
            emit(done);
            return;
        }
        emit_state("running", started, NULL);
    }
    json_object *calls = ba_parse(text, strlen(text), &err);
    for (size_t i = 0; calls && i < json_object_array_length(calls); i++)
        if (run_call(json_object_array_get_idx(calls, i), &err) < 0)
            break;
    if (err.msg[0])
        json_set_str(done, "last_action_error", err.msg);
    json_object_put(calls);
    err_t e2 = {0};
    json_object *v = eval(PAGE_JS, true, &e2);
    json_object *page = v ? json_get(v, "value") : NULL;
    json_set_str(done, "url", json_get_str(page, "url", ""));
    json_set_str(done, "text", json_get_str(page, "text", ""));
    if (json_get_bool(req, "axtree", true))
        add_axtree(done);
    json_set_str(done, "focused", json_get_str(page, "focused", ""));
    json_object *pages = json_object_new_array();
    json_object_array_add(pages, json_object_new_string(json_get_str(page, "url", "")));
    json_set(done, "open_pages_urls", pages);
    json_object_put(v);
    screenshot(done, json_get_str(req, "workspace", "."));
    if (!cdp_alive(&g.cdp))
        emit_state("exited", 0, "Chromium exited during the action");
    emit(done);
}

int
main(int argc, char **argv)
{
    /* Debian's /usr/bin/chromium is a wrapper sourcing /etc/chromium.d, which a sandbox's /etc
     * need not have: the binary itself when it is there. */
    g.chromium =
        access("/usr/lib/chromium/chromium", X_OK) == 0 ? "/usr/lib/chromium/chromium" : "chromium";
    static const struct option opts[] = {
        {"dir", required_argument, 0, 'd'}, {"chromium", required_argument, 0, 'c'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'd')
            snprintf(g.dir, sizeof g.dir, "%s", optarg);
        else if (c == 'c')
            g.chromium = optarg;
        else
            return 2;
    }
    if (!g.dir[0]) {
        fprintf(stderr, "usage: sandpipe-browser --dir DIR [--chromium PATH]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    buf_t in = BUF_INIT;
    for (;;) {
        char *nl = in.len ? memchr(in.data, '\n', in.len) : NULL;
        if (!nl) {
            /* Between requests, Chromium's pipe too: its end is the browser's exit. */
            struct pollfd pf[2] = {{0, POLLIN, 0}, {g.cdp.pid > 0 ? g.cdp.from : -1, POLLIN, 0}};
            if (poll(pf, 2, -1) < 0)
                continue;
            if (pf[1].revents && cdp_pump(&g.cdp) < 0) {
                cdp_stop(&g.cdp);
                emit_state("exited", 0, "Chromium exited");
                continue;
            }
            if (!pf[0].revents)
                continue;
            char *w = buf_reserve(&in, 65536);
            ssize_t r = read(0, w, 65536);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0 || in.len > (16u << 20))
                break;
            buf_advance(&in, (size_t)r);
            continue;
        }
        err_t e = {0};
        json_object *req = json_parse_lossy(in.data, (size_t)(nl - in.data), &e);
        buf_consume(&in, (size_t)(nl - in.data) + 1);
        if (req && strcmp(json_get_str(req, "op", ""), "step") == 0)
            do_step(req);
        json_object_put(req);
    }
    cdp_stop(&g.cdp);
    return 0;
}
