/* ipython_obs.c — the run_ipython observation (ipython_obs.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "ipython_obs.h"
#include "json_util.h"
#include "net_hint.h"
#include "py_compat.h"
#include "xalloc.h"

#define NO_OUTPUT "[Code executed successfully with no output]"
#define DEAD_NOTE "\n[The IPython kernel died; a new one starts with the next cell.]"

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of an ESC [ digits (; digits){0,2} m sequence at s[i..n), or 0. Greedy equals the
 * regex's backtracking here: 'm' is neither a digit nor ';'. */
static size_t
ansi_at(const char *s, size_t n, size_t i)
{
    if (i + 2 >= n || s[i] != '\x1b' || s[i + 1] != '[' || !is_digit(s[i + 2]))
        return 0;
    size_t j = i + 2;
    while (j < n && is_digit(s[j]))
        j++;
    for (int g = 0; g < 2; g++) {
        if (j + 1 < n && s[j] == ';' && is_digit(s[j + 1])) {
            j++;
            while (j < n && is_digit(s[j]))
                j++;
        } else {
            break;
        }
    }
    return j < n && s[j] == 'm' ? j + 1 - i : 0;
}

char *
ipython_strip_ansi(const char *s, size_t n)
{
    buf_t b = BUF_INIT;
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = s[i] == '\x1b' ? ansi_at(s, n, i) : 0;
        if (k) {
            buf_append(&b, s + from, i - from);
            i += k - 1;
            from = i + 1;
        }
    }
    buf_append(&b, s + from, n - from);
    return buf_steal(&b);
}

/* str.rstrip() */
static void
rstrip(buf_t *b)
{
    size_t off, len;
    fa_py_strip(b->data ? b->data : "", b->len, &off, &len);
    b->len = len ? off + len : 0;
    if (b->data)
        b->data[b->len] = '\0';
}

static void
timeout_text(buf_t *b, json_object *t, double def)
{
    char num[64];
    if (t && json_object_is_type(t, json_type_int))
        snprintf(num, sizeof num, "%lld", (long long)json_object_get_int64(t));
    else
        py_float_repr(t ? json_object_get_double(t) : def, num, sizeof num);
    buf_printf(b, "[Execution timed out (%s seconds).]", num);
}

json_object *
ipython_obs_build(const ipy_obs_in_t *in)
{
    buf_t c = BUF_INIT;
    if (in->end == IPY_END_TIMEOUT) {
        timeout_text(&c, in->timeout, in->default_timeout);
    } else {
        if (in->text_len == 0 && in->end == IPY_END_OK) {
            buf_puts(&c, NO_OUTPUT);
        } else {
            char *t = ipython_strip_ansi(in->text ? in->text : "", in->text_len);
            buf_puts(&c, t);
            free(t);
        }
        if (in->end == IPY_END_DEAD)
            buf_puts(&c, DEAD_NOTE);
    }
    rstrip(&c);
    if (in->no_network)
        buf_puts(&c, NET_HINT_NOTE);
    if (in->include_extra) {
        buf_printf(&c, "\n[Jupyter current working directory: %s]", in->cwd ? in->cwd : "");
        buf_printf(&c, "\n[Jupyter Python interpreter: %s]", in->python ? in->python : "");
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "message", "Code executed in IPython cell.");
    json_set_str(o, "observation", "run_ipython");
    json_set_strn(o, "content", c.data ? c.data : "", c.len);
    json_object *x = json_object_new_object();
    json_set_str(x, "code", in->code ? in->code : "");
    bool images = in->images && json_object_array_length(in->images) > 0;
    json_set(x, "image_urls", images ? json_object_get(in->images) : NULL);
    json_set(o, "extras", x);
    json_set_bool(o, "success", true);
    buf_free(&c);
    return o;
}
