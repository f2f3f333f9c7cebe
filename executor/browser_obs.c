/* browser_obs.c — the browser observation (browser_obs.h). */
#include <string.h>

#include "browser_obs.h"
#include "buf.h"
#include "json_util.h"

#define AXTREE_NOTE                                                                                \
    "Accessibility tree of the COMPLETE webpage:\nNote: [bid] is the unique alpha-numeric "        \
    "identifier at the beginning of lines for each element in the AXTree. Always use bid to "      \
    "refer to elements in your actions.\n"

static json_object *
obs_new(const char *trigger, const char *url, const char *content, const char *screenshot,
        const char *screenshot_path, json_object *pages, const char *action_str, const char *error,
        const char *focused)
{
    json_object *o = json_object_new_object();
    buf_t m = BUF_INIT;
    buf_printf(&m, "Visited %s", url);
    json_set_str(o, "message", m.data);
    buf_free(&m);
    json_set_str(o, "observation", "browse");
    json_set_str(o, "content", content);
    json_object *x = json_object_new_object();
    json_set_str(x, "url", url);
    json_set_str(x, "trigger_by_action", trigger);
    json_set_str(x, "screenshot", screenshot);
    json_set_str(x, "screenshot_path", screenshot_path); /* null when none */
    json_set(x, "set_of_marks", NULL);
    json_set_bool(x, "error", error && *error);
    json_set(x, "goal_image_urls", json_object_new_array());
    json_set(x, "open_pages_urls", pages ? pages : json_object_new_array());
    json_set_int(x, "active_page_index", pages ? 0 : -1);
    json_set(x, "dom_object", json_object_new_object());
    json_set(x, "axtree_object", json_object_new_object());
    json_set(x, "extra_element_properties", json_object_new_object());
    json_set_str(x, "last_browser_action", action_str);
    json_set_str(x, "last_browser_action_error", error ? error : "");
    json_set_str(x, "focused_element_bid", focused);
    json_set_bool(x, "filter_visible_only", false);
    json_set(o, "extras", x);
    return o;
}

static void
error_block(buf_t *b, const char *when, const char *error)
{
    buf_printf(b,
               "================ BEGIN error message ===============\n"
               "The following error occurred when %s:\n%s\n"
               "================ END error message ===============\n",
               when, error);
}

json_object *
browser_obs_build(const char *trigger, json_object *step, const char *action_str)
{
    const char *url = json_get_str(step, "url", "");
    const char *err = json_get_str(step, "last_action_error", "");
    const char *path = json_get_str(step, "screenshot_path", NULL);
    const char *focused = json_get_str(step, "focused", "");
    buf_t c = BUF_INIT;
    buf_printf(&c, "[Current URL: %s]\n", url);
    if (strcmp(trigger, "browse_interactive") == 0) {
        buf_printf(&c, "[Focused element bid: %s]\n", focused);
        if (path)
            buf_printf(&c, "[Screenshot saved to: %s]\n", path);
        buf_puts(&c, "\n");
        if (*err)
            error_block(&c, "executing the last action", err);
        else
            buf_puts(&c, "[Action executed successfully.]\n");
        buf_puts(&c, AXTREE_NOTE "============== BEGIN accessibility tree ==============\n");
        buf_puts(&c, json_get_str(step, "axtree", ""));
        buf_puts(&c, "\n============== END accessibility tree ==============\n");
    } else {
        if (*err)
            error_block(&c, "trying to visit the URL", err);
        buf_puts(&c, "============== BEGIN webpage content ==============\n");
        buf_puts(&c, json_get_str(step, "text", ""));
        buf_puts(&c, "\n============== END webpage content ==============\n");
    }
    json_object *pages = json_get(step, "open_pages_urls");
    json_object *o = obs_new(trigger, url, c.data, json_get_str(step, "screenshot", ""), path,
                             pages ? json_object_get(pages) : NULL, action_str, err, focused);
    buf_free(&c);
    return o;
}

json_object *
browser_obs_error(const char *trigger, const char *url, const char *action_str, const char *error)
{
    json_object *step = json_object_new_object();
    json_set_str(step, "url", url);
    json_set_str(step, "last_action_error", error);
    json_object *o = browser_obs_build(trigger, step, action_str);
    json_object_put(step);
    /* upstream's exception path: no pages, no screenshot */
    json_object *x = json_get(o, "extras");
    json_set(x, "open_pages_urls", json_object_new_array());
    json_set_int(x, "active_page_index", -1);
    return o;
}
