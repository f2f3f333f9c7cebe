/* file_actions.c — OpenHands' read, write and edit actions (action_execution_server.py of
 * OpenHands 0.62.0) turned into the observation JSON the server sends, and fa_write_atomic(),
 * the replacement both they and the editor write files with.
 *
 * Observations are serialised as event_to_dict() does: top-level message, observation, content,
 * extras, with extras holding exactly the dataclass fields (FileReadObservation: path,
 * impl_source; FileWriteObservation: path; FileEditObservation: path, prev_exist, old_content,
 * new_content, impl_source, diff, _diff_cache; ErrorObservation: error_id).
 *
 * Paths: every path goes through path_resolve() against ctx->roots. In a sandbox the root is "/"
 * (upstream acts on any path the sandbox user may access: the sandbox is the boundary), so a
 * missing or forbidden path gets upstream's own texts (File not found: ..., [Errno 13] ...). Only
 * an executor confined to its workspace (the local provider) refuses a path that leaves its roots,
 * with an ErrorObservation worded as OpenHands' own workspace check in runtime/utils/files.py:
 *   "You're not allowed to access this path: {path}. You can only access paths inside the
 *    workspace."
 * Texts show the path as upstream does (pathlib's str of cwd/path); I/O uses the resolved path.
 * Strings put into JSON are made valid UTF-8 (a stray byte becomes the latin-1 character). */
#include "file_actions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64.h"
#include "buf.h"
#include "files.h"
#include "json_util.h"
#include "utf8.h"
#include "xalloc.h"

int
fa_write_atomic(const char *abs_path, const void *p, size_t n, int new_mode)
{
    struct stat before, now;
    int exists = stat(abs_path, &before) == 0;
    if (exists && S_ISDIR(before.st_mode))
        return -EISDIR;
    /* Upstream opens the file for writing: a read-only file is refused, though a rename could
     * replace it. */
    if (exists && access(abs_path, W_OK) < 0)
        return -errno;
    mode_t mode;
    if (new_mode >= 0) {
        mode = (mode_t)new_mode;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    atomic_file_t af;
    err_t err;
    if (atomic_file_open(&af, abs_path, mode, &err) < 0)
        return -err.code;
    /* atomic_file_open keeps the owner where it may; tell the caller when it could not. */
    int owner_lost = exists && fstat(af.fd, &now) == 0 &&
                     (now.st_uid != before.st_uid || now.st_gid != before.st_gid);
    if (atomic_file_write(&af, p, n, &err) < 0 || atomic_file_commit(&af, &err) < 0) {
        atomic_file_abort(&af);
        return -err.code;
    }
    return owner_lost;
}

/* ---- observation JSON ---- */

/* Valid UTF-8 for JSON: invalid bytes become the latin-1 character of the same value. */
static json_object *
json_text_new(const char *s, size_t n)
{
    buf_t b = BUF_INIT;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len(u + i, n - i);
        if (len) {
            buf_append(&b, s + i, len);
            i += len;
        } else {
            uint8_t latin1[4];
            buf_append(&b, latin1, utf8_encode(u[i], latin1));
            i++;
        }
    }
    json_object *o = json_object_new_string_len(b.data ? b.data : "", (int)b.len);
    buf_free(&b);
    return o;
}

static json_object *
json_str_new(const char *s)
{
    return s ? json_text_new(s, strlen(s)) : NULL;
}

/* {"message", "observation", "content", "extras": {}} in event_to_dict()'s order. */
static json_object *
obs_new(const char *type, const char *content, size_t len, char *message /* freed */)
{
    json_object *o = json_object_new_object();
    json_set(o, "message", json_text_new(message, strlen(message)));
    json_set_str(o, "observation", type);
    json_set(o, "content", json_text_new(content, len));
    json_set(o, "extras", json_object_new_object());
    free(message);
    return o;
}

/* TODO(lead): use obs_error_new (bash_obs.h) once executor/bash_obs.c exists. Check first that
 * it keeps what this one does: members in event_to_dict()'s order (message first) and content
 * and message made valid UTF-8 (json_text_new), which the header's description does not say. */
static json_object *
obs_error(const char *content)
{
    json_object *o = obs_new("error", content, strlen(content), xstrdup(content));
    json_set_str(json_get(o, "extras"), "error_id", "");
    return o;
}

static json_object *obs_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_object *
obs_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        abort();
    va_end(ap);
    json_object *o = obs_error(msg);
    free(msg);
    return o;
}

static json_object *
obs_read(const char *path, const char *content, size_t len, const char *impl_source)
{
    json_object *o = obs_new("read", content, len, xasprintf("I read the file %s.", path));
    json_object *ex = json_get(o, "extras");
    json_set(ex, "path", json_str_new(path));
    json_set_str(ex, "impl_source", impl_source);
    return o;
}

/* The observation text of an editor call, as _execute_file_editor() builds it. */
static void
editor_content(const ed_result_t *res, buf_t *out)
{
    if (res->error) {
        buf_puts(out, "ERROR:\n");
        buf_append(out, res->error, res->error_len);
    } else if (res->output) {
        buf_append(out, res->output, res->output_len);
    }
}

/* Resolves a read/write path: *display is str(Path(cwd) / path), real the confined path. */
static json_object *
resolve(const fa_ctx_t *ctx, const char *path, char **display, char real[PATH_MAX])
{
    const char *cwd = ctx->cwd ? ctx->cwd : "/";
    char *joined = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
    *display = fa_py_path(joined);
    free(joined);
    err_t err;
    if (path_resolve(ctx->roots, cwd, path, PATH_FOLLOW, real, &err) < 0) {
        json_object *o =
            err.code == ERR_ESCAPE
                ? obs_errorf("You're not allowed to access this path: %s. You can only "
                             "access paths inside the workspace.",
                             path)
                : obs_errorf("%s: %s", path, err.msg);
        free(*display);
        *display = NULL;
        return o;
    }
    return NULL;
}

/* Python's list slice bound: negative counts from the end, then clamped to [0, n]. */
static long
py_index(long i, long n)
{
    if (i < 0)
        i += n;
    return i < 0 ? 0 : i > n ? n : i;
}

/* Splits text into lines that keep their "\n" (file.readlines()); offsets in starts[0..n]. */
static long
line_starts(const char *s, size_t n, size_t **starts)
{
    long cnt = 0;
    for (size_t i = 0; i < n; i++)
        cnt += s[i] == '\n';
    cnt += n && s[n - 1] != '\n';
    size_t *v = xmalloc(((size_t)cnt + 1) * sizeof *v);
    long k = 0;
    v[0] = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n')
            v[++k] = i + 1;
    v[cnt] = n;
    *starts = v;
    return cnt;
}

/* Reads a whole file as Python's text mode would (universal newlines). -errno on failure. */
static int
slurp(const char *real, buf_t *out, int newlines)
{
    /* O_NONBLOCK: a FIFO the sandbox put there reads as empty instead of holding the executor */
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return -EISDIR;
    }
    ssize_t r;
    while ((r = read(fd, buf_reserve(out, 65536), 65536)) > 0)
        buf_advance(out, (size_t)r);
    int e = r < 0 ? errno : 0;
    close(fd);
    if (e)
        return -e;
    if (newlines && out->len) {
        size_t w = 0;
        /* Python's universal newlines: \r\n and a lone \r both read as \n. Read the byte
         * before writing: w may equal i. */
        for (size_t i = 0; i < out->len; i++) {
            char c = out->data[i];
            out->data[w++] = c == '\r' ? '\n' : c;
            if (c == '\r' && i + 1 < out->len && out->data[i + 1] == '\n')
                i++;
        }
        out->len = w;
        out->data[w] = '\0';
    }
    return 0;
}

/* The ErrorObservation of a failed read (rc from slurp()). */
static json_object *
read_failed(const fa_ctx_t *ctx, const char *display, int rc)
{
    if (rc == -ENOENT)
        return obs_errorf("File not found: %s. Your current working directory is %s.", display,
                          ctx->cwd ? ctx->cwd : "/");
    if (rc == -EISDIR)
        return obs_errorf("Path is a directory: %s. You can only read files", display);
    return obs_errorf("[Errno %d] %s: '%s'", -rc, strerror(-rc), display);
}

static json_object *
read_plain(const fa_ctx_t *ctx, const char *display, const char *real, long start, long end)
{
    const char *mime = fa_media_type(display);
    if (mime) {
        buf_t raw = BUF_INIT, url = BUF_INIT;
        int rc = slurp(real, &raw, 0);
        if (rc < 0) {
            buf_free(&raw);
            return read_failed(ctx, display, rc);
        }
        buf_printf(&url, "data:%s;base64,", mime);
        buf_advance(&url, base64_encode(raw.data ? raw.data : "", raw.len,
                                        buf_reserve(&url, BASE64_ENCODED_LEN(raw.len))));
        json_object *o = obs_read(display, url.data, url.len, "default");
        buf_free(&raw);
        buf_free(&url);
        return o;
    }
    buf_t text = BUF_INIT;
    int rc = slurp(real, &text, 1);
    if (rc < 0) {
        buf_free(&text);
        return read_failed(ctx, display, rc);
    }
    if (!utf8_valid(text.data, text.len)) {
        buf_free(&text);
        return obs_errorf("File could not be decoded as utf-8: %s.", display);
    }
    /* read_lines(all_lines, start, end) from openhands/runtime/utils/files.py */
    size_t *st;
    long n = line_starts(text.data, text.len, &st), from, to;
    start = start < 0 ? 0 : start > n ? n : start;
    if (end != -1)
        end = end < 0 ? 0 : end > n ? n : end;
    if (end == -1) {
        from = start;
        to = n;
    } else {
        long begin = start < n - 2 ? start : n - 2;
        from = begin < 0 ? 0 : begin;
        to = from + 1 > end ? from + 1 : end;
        to = to > n ? n : to;
    }
    json_object *o = obs_read(display, text.data ? text.data + st[from] : "",
                              from < to ? st[to] - st[from] : 0, "default");
    free(st);
    buf_free(&text);
    return o;
}

json_object *
fa_read(editor_t *ed, const fa_ctx_t *ctx, json_object *args)
{
    const char *path = json_get_str(args, "path", "");
    char *display, real[PATH_MAX];
    json_object *fail = resolve(ctx, path, &display, real);
    if (fail)
        return fail;
    json_object *o;
    if (fa_is_binary(real)) {
        o = obs_error("ERROR_BINARY_FILE");
    } else if (strcmp(json_get_str(args, "impl_source", "default"), "oh_aci") == 0) {
        ed_args_t a = {.command = "view", .path = path, .view_range = json_get(args, "view_range")};
        ed_result_t res;
        buf_t content = BUF_INIT;
        if (editor_run(ed, ctx, &a, &res) < 0) {
            o = obs_error(res.error);
        } else {
            editor_content(&res, &content);
            o = obs_read(path, content.data ? content.data : "", content.len, "oh_aci");
        }
        buf_free(&content);
        ed_result_clear(&res);
    } else {
        o = read_plain(ctx, display, real, (long)json_get_int(args, "start", 0),
                       (long)json_get_int(args, "end", -1));
    }
    free(display);
    return o;
}

/* mkdir -p for the parent of a confined path. */
static int
make_parents(const char *real)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0)
        return 0;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(dir, 0777);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -errno;
    }
    return mkdir(dir, 0777) < 0 && errno != EEXIST ? -errno : 0;
}

json_object *
fa_write(editor_t *ed, const fa_ctx_t *ctx, json_object *args)
{
    (void)ed;
    const char *path = json_get_str(args, "path", "");
    json_object *cv = json_get(args, "content");
    const char *content =
        cv && json_object_is_type(cv, json_type_string) ? json_object_get_string(cv) : "";
    size_t clen = cv && json_object_is_type(cv, json_type_string)
                      ? (size_t)json_object_get_string_len(cv)
                      : 0;
    long start = (long)json_get_int(args, "start", 0), end = (long)json_get_int(args, "end", -1);
    char *display, real[PATH_MAX];
    json_object *fail = resolve(ctx, path, &display, real);
    if (fail)
        return fail;
    json_object *o = NULL;
    buf_t old = BUF_INIT, out = BUF_INIT;
    size_t *st = NULL;
    int rc = make_parents(real);
    if (rc < 0) {
        o = obs_errorf("[Errno %d] %s: '%s'", -rc, strerror(-rc), display);
        goto done;
    }
    struct stat sb;
    int exists = stat(real, &sb) == 0;
    if (exists && S_ISDIR(sb.st_mode)) {
        o = obs_errorf("Path is a directory: %s. You can only write to files", display);
        goto done;
    }
    long n = 0, head = 0, tail = 0;
    if (exists) {
        /* insert_lines(content.split('\n'), file.readlines(), start, end) */
        if ((rc = slurp(real, &old, 1)) < 0) {
            o = obs_errorf("[Errno %d] %s: '%s'", -rc, strerror(-rc), display);
            goto done;
        }
        if (!utf8_valid(old.data, old.len)) {
            o = obs_errorf("File could not be decoded as utf-8: %s", display);
            goto done;
        }
        n = line_starts(old.data, old.len, &st);
        head = start == 0 ? 0 : py_index(start, n);
        tail = end == -1 ? n : py_index(end, n);
        buf_append(&out, old.data, st[head]);
    }
    for (size_t i = 0, s0 = 0; i <= clen; i++)
        if (i == clen || content[i] == '\n') {
            buf_append(&out, content + s0, i - s0);
            buf_puts(&out, "\n");
            s0 = i + 1;
        }
    if (exists)
        buf_append(&out, old.data + st[tail], st[n] - st[tail]);
    rc = fa_write_atomic(real, out.data, out.len, exists ? -1 : 0664);
    if (rc == 1)
        o = obs_errorf("File %s written, but failed to change ownership and permissions: [Errno 1] "
                       "Operation not permitted: '%s'",
                       display, display);
    else if (rc == -ENOENT)
        o = obs_errorf("File not found: %s", display);
    else if (rc == -EISDIR)
        o = obs_errorf("Path is a directory: %s. You can only write to files", display);
    else if (rc < 0)
        o = obs_errorf("[Errno %d] %s: '%s'", -rc, strerror(-rc), display);
    else {
        o = obs_new("write", "", 0, xasprintf("I wrote to the file %s.", display));
        json_set(json_get(o, "extras"), "path", json_str_new(display));
    }
done:
    free(st);
    buf_free(&old);
    buf_free(&out);
    free(display);
    return o;
}

/* Python int(str): optional whitespace and sign, digits with single "_" between them. */
static int
py_int(const char *s, long long *out)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!(*s >= '0' && *s <= '9'))
        return -1;
    long long v = 0;
    for (; (*s >= '0' && *s <= '9') || (*s == '_' && s[1] >= '0' && s[1] <= '9'); s++)
        if (*s != '_')
            v = v * 10 + (*s - '0');
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    if (*s)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

static const char *
arg_str(json_object *args, const char *key, size_t *len)
{
    json_object *v = json_get(args, key);
    if (!v || !json_object_is_type(v, json_type_string)) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
}

json_object *
fa_edit(editor_t *ed, const fa_ctx_t *ctx, json_object *args)
{
    const char *impl = json_get_str(args, "impl_source", "oh_aci");
    if (strcmp(impl, "oh_aci") != 0)
        /* Upstream asserts here (HTTP 500): LLM-based edits are applied by the client. */
        return obs_errorf("FileEditAction with impl_source '%s' is not supported by the "
                          "runtime; use impl_source 'oh_aci'.",
                          impl);
    ed_args_t a = {0};
    a.command = json_get_str(args, "command", "");
    a.path = json_get_str(args, "path", "");
    a.file_text = arg_str(args, "file_text", &a.file_text_len);
    a.old_str = arg_str(args, "old_str", &a.old_len);
    a.new_str = arg_str(args, "new_str", &a.new_len);
    /* FileEditAction has no view_range: upstream's edit() never passes one to the editor. */
    buf_t content = BUF_INIT;
    ed_result_t res = {0};
    int ran = 0;
    json_object *il = json_get(args, "insert_line");
    if (il && json_object_is_type(il, json_type_string)) {
        if (py_int(json_object_get_string(il), &a.insert_line) < 0)
            buf_printf(&content, "ERROR:\nInvalid insert_line value: '%s'. Expected an integer.",
                       json_object_get_string(il));
        else
            a.has_insert_line = 1;
    } else if (il && !json_object_is_type(il, json_type_null)) {
        a.has_insert_line = 1;
        a.insert_line = json_object_get_int64(il);
    }
    if (!content.len) {
        if (editor_run(ed, ctx, &a, &res) < 0) {
            json_object *o = obs_error(res.error);
            ed_result_clear(&res);
            return o;
        }
        editor_content(&res, &content);
        ran = !res.error;
    }
    char *diff = fa_unified_diff(
        ran && res.old_content ? res.old_content : "", ran ? res.old_len : 0,
        ran && res.new_content ? res.new_content : "", ran ? res.new_len : 0, a.path);
    json_object *o = obs_new("edit", content.data ? content.data : "", content.len,
                             xasprintf("I edited the file %s.", a.path));
    json_object *ex = json_get(o, "extras");
    json_set(ex, "path", json_str_new(a.path));
    json_set_bool(ex, "prev_exist", false);
    json_set(ex, "old_content", a.old_str ? json_text_new(a.old_str, a.old_len) : NULL);
    json_set(ex, "new_content", a.new_str ? json_text_new(a.new_str, a.new_len) : NULL);
    json_set_str(ex, "impl_source", "oh_aci");
    json_set(ex, "diff", json_str_new(diff));
    json_set(ex, "_diff_cache", NULL);
    free(diff);
    buf_free(&content);
    ed_result_clear(&res);
    return o;
}
