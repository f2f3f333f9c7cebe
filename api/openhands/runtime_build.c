/* runtime_build.c — the Runtime API's /build and /build_status (OpenHands' RemoteRuntimeBuilder:
 * a multipart form with "context", its build folder as a base64 tar.gz, "target_image" and any
 * number of "tags"; then /build_status?build_id= until SUCCESS or FAILURE).
 *
 * sandpipe cannot run OpenHands' Dockerfile (it installs OpenHands' own action server, which
 * sandpipe's executor replaces), but it honours its base: the context's Dockerfile names it in
 * its FROM line (images/sandpipe-image context-base), and
 * - an image of the store (or one of OpenHands' own published images, served with the default
 *   image): target_image and the tags become names of it, at once;
 * - a local Docker image: `sandpipe-image build --base IMAGE --tag TARGET...` runs detached
 *   (one build at a time), reusing the lock tag of that base when it exists (then it only adds
 *   the executor); /build_status says BUILDING until it ends, then SUCCESS or FAILURE with the
 *   builder's last error line;
 * - anything else: 404 (no registry is reachable, nothing is pulled), never a silent fallback.
 * Names are shared by every user's sessions: a viewer names nothing, a user only what does not
 * exist yet or what the same user named before, an admin anything (runtime_image_owner.c:
 * checked, and claimed, before anything is named or built).
 * A rootfs directory is a base for `sandpipe image build --base DIR` on the host only: over the
 * API it would let a user turn any host directory into a sandbox's root.
 *
 * State, in <store>/builds/<build id>.{context,pid,log,status}: the build id is "b-" + the hex of
 * target_image, so /build_status finds a build, or an alias that needs no state, by its name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "errors.h"
#include "image.h"
#include "json_util.h"
#include "multipart.h"
#include "runtime_api.h"
#include "xalloc.h"

#define BUILD_CONTEXT_MAX                                                                          \
    (512ULL << 20) /* OpenHands' build folder holds its source: tens of MB                         \
                    */
#define BUILD_TAGS_MAX 8
#define BUILD_CHUNK    (64u * 1024)
#define BUILD_ID_MAX   (2 * IMAGE_NAME_MAX + 8)

enum { F_OTHER, F_TARGET, F_TAG, F_CONTEXT };

typedef struct {
    int field;
    char names[1 + BUILD_TAGS_MAX][IMAGE_NAME_MAX + 2]; /* [0] target_image, then the tags */
    size_t len[1 + BUILD_TAGS_MAX];
    int ntags;
    bool too_many, too_long, has_context;
    int ctx_fd;
    unsigned long long ctx_bytes;
} build_form_t;

static int
on_part(void *ud, const multipart_part_t *p)
{
    build_form_t *f = ud;
    f->field = !strcmp(p->name, "target_image") ? F_TARGET
               : !strcmp(p->name, "tags")       ? F_TAG
               : !strcmp(p->name, "context")    ? F_CONTEXT
                                                : F_OTHER;
    if (f->field == F_TAG && f->ntags == BUILD_TAGS_MAX) {
        f->too_many = true;
        f->field = F_OTHER;
    }
    if (f->field == F_CONTEXT)
        f->has_context = true;
    return 0;
}

static int
on_data(void *ud, const char *p, size_t n)
{
    build_form_t *f = ud;
    if (f->field == F_CONTEXT) {
        f->ctx_bytes += n;
        if (f->ctx_bytes > BUILD_CONTEXT_MAX) {
            f->too_long = true;
            return -1;
        }
        while (n > 0) {
            ssize_t w = write(f->ctx_fd, p, n);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            p += w;
            n -= (size_t)w;
        }
        return 0;
    }
    if (f->field != F_TARGET && f->field != F_TAG)
        return 0;
    int i = f->field == F_TARGET ? 0 : 1 + f->ntags;
    if (f->len[i] + n > IMAGE_NAME_MAX) {
        f->too_long = true;
        return 0;
    }
    memcpy(f->names[i] + f->len[i], p, n);
    f->len[i] += n;
    f->names[i][f->len[i]] = '\0';
    return 0;
}

static int
on_part_end(void *ud)
{
    build_form_t *f = ud;
    if (f->field == F_TAG)
        f->ntags++;
    f->field = F_OTHER;
    return 0;
}

/* Reads the whole form, the context into ctx_fd. Returns 0 or -1 with why set. */
static int
read_form(api_req_t *r, build_form_t *f, char *why, size_t cap)
{
    char boundary[MULTIPART_BOUNDARY_MAX + 1];
    if (multipart_boundary(api_param(r, "CONTENT_TYPE"), boundary, sizeof boundary) < 0) {
        snprintf(why, cap, "the body must be multipart/form-data (context, target_image, tags)");
        return -1;
    }
    static const multipart_cb_t cb = {on_part, on_data, on_part_end};
    multipart_t *mp = multipart_new(boundary, &cb, f);
    char *chunk = xmalloc(BUILD_CHUNK);
    err_t err = {0};
    int rc = 0;
    long k;
    while (rc == 0 && (k = api_body_read(r, chunk, BUILD_CHUNK)) != 0)
        rc = k < 0 ? -1 : multipart_feed(mp, chunk, (size_t)k, &err);
    if (rc == 0)
        rc = multipart_finish(mp, &err);
    free(chunk);
    multipart_free(mp);
    if (f->too_long)
        snprintf(why, cap, "a name is at most %d bytes, the context %llu MiB", IMAGE_NAME_MAX,
                 BUILD_CONTEXT_MAX >> 20);
    else if (rc < 0)
        snprintf(why, cap, "malformed form: %s", err.msg[0] ? err.msg : "the body broke off");
    else if (f->too_many)
        snprintf(why, cap, "at most %d tags", BUILD_TAGS_MAX);
    return f->too_long || rc < 0 || f->too_many ? -1 : 0;
}

/* src into dst[0..cap), cut to fit (messages: a cut one still says what failed). */
static void
copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* images/sandpipe-image, installed next to this program (images/module.mk). */
static void
script_path(char *out, size_t cap)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, cap, "%s/sandpipe-image", self);
}

/* The builder works on the store this API reads (--images), whatever its environment says. */
static void
child_env(void)
{
    setenv("SANDPIPE_IMAGE_DIR", g_api.image_store, 1);
}

int
oh_image_tool(const char *const *argv, char *out, size_t cap, char *errline, size_t ecap)
{
    char script[PATH_MAX + 32];
    script_path(script, sizeof script);
    size_t argc = 0;
    while (argv[argc])
        argc++;
    const char **av = xcalloc(argc + 2, sizeof *av);
    av[0] = script;
    memcpy(av + 1, argv, argc * sizeof *av);
    int po[2], pe[2];
    out[0] = errline[0] = '\0';
    if (pipe2(po, O_CLOEXEC) < 0) {
        free(av);
        return -1;
    }
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        free(av);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        child_env();
        execv(script, (char **)av);
        _exit(127);
    }
    free(av);
    close(po[1]);
    close(pe[1]);
    /* Small outputs (a line or two): stdout first, then stderr, without deadlock. */
    char buf[4096];
    size_t n = 0;
    ssize_t got;
    while ((got = read(po[0], buf + n, sizeof buf - 1 - n)) > 0 && n < sizeof buf - 1)
        n += (size_t)got;
    buf[n] = '\0';
    snprintf(out, cap, "%.*s", (int)strcspn(buf, "\n"), buf);
    n = 0;
    while ((got = read(pe[0], buf + n, sizeof buf - 1 - n)) > 0 && n < sizeof buf - 1)
        n += (size_t)got;
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    const char *last = strrchr(buf, '\n');
    last = last ? last + 1 : buf;
    if (!strncmp(last, "sandpipe image: ", 16)) /* the script's prefix: the API says its own */
        last += 16;
    copy_cut(errline, ecap, last);
    close(po[0]);
    close(pe[0]);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
build_id_of(const char *target, char *id, size_t cap)
{
    snprintf(id, cap, "b-");
    for (size_t i = 0; target[i] && 2 + 2 * i + 2 < cap; i++)
        snprintf(id + 2 + 2 * i, 3, "%02x", (unsigned char)target[i]);
}

/* <store>/builds/<id><suffix> */
static void
state_path(const char *id, const char *suffix, char *out, size_t cap)
{
    snprintf(out, cap, "%s/builds/%s%s", g_api.image_store, id, suffix);
}

/* The pid of <id>'s build shell while it runs, else 0. Ended: it wrote <id>.status. Running:
 * the pid in <id>.pid is alive and is that shell (its command line holds the build's prefix),
 * not another process that got the pid since (pids are reused, 32768 of them by default). */
static pid_t
build_running(const char *id)
{
    char p[PATH_MAX], prefix[PATH_MAX], line[32] = "";
    state_path(id, ".status", p, sizeof p);
    if (access(p, F_OK) == 0)
        return 0;
    state_path(id, ".pid", p, sizeof p);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    pid_t pid = (pid_t)atoi(line);
    if (pid <= 0 || kill(pid, 0) < 0)
        return 0;
    char cmdline[PATH_MAX * 2];
    snprintf(p, sizeof p, "/proc/%d/cmdline", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof cmdline - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    state_path(id, "", prefix, sizeof prefix);
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(cmdline + i) + 1) { /* NUL-separated args */
        cmdline[n] = '\0';
        if (!strcmp(cmdline + i, prefix))
            return pid;
    }
    return 0;
}

/* Whether any build runs now (one at a time: a build is minutes of CPU, disk and apt). */
static bool
any_build_running(void)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/builds", g_api.image_store);
    DIR *d = opendir(dir);
    bool busy = false;
    for (struct dirent *e; d && !busy && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > 4 && !strcmp(e->d_name + n - 4, ".pid") && n - 4 < BUILD_ID_MAX) {
            char id[BUILD_ID_MAX];
            snprintf(id, sizeof id, "%.*s", (int)(n - 4), e->d_name);
            busy = build_running(id) > 0;
        }
    }
    if (d)
        closedir(d);
    return busy;
}

/* Starts `sandpipe-image build --base BASE --tag NAME... [--owner OWNER]` detached (its own
 * session, reparented to init), writing <id>.pid, .log and, at its end, .status (its exit
 * code). owner: the user the names are for (NULL: the operator). */
static int
start_build(const char *id, const char *base, build_form_t *f, const char *owner)
{
    char script[PATH_MAX + 32], prefix[PATH_MAX];
    script_path(script, sizeof script);
    state_path(id, "", prefix, sizeof prefix);
    const char *av[10 + 2 * (1 + BUILD_TAGS_MAX)];
    int n = 0;
    av[n++] = "/bin/sh";
    av[n++] = "-c";
    av[n++] = "echo $$ >\"$0.pid\"; \"$@\" >\"$0.log\" 2>&1; echo $? >\"$0.status.tmp\"; "
              "mv \"$0.status.tmp\" \"$0.status\"";
    av[n++] = prefix;
    av[n++] = script;
    av[n++] = "build";
    av[n++] = "--base";
    av[n++] = base;
    for (int i = 0; i <= f->ntags; i++) {
        av[n++] = "--tag";
        av[n++] = f->names[i];
    }
    if (owner) {
        av[n++] = "--owner";
        av[n++] = owner;
    }
    av[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) { /* the worker is single-threaded (pre-forked): plain fork is safe */
        setsid();
        if (fork() != 0)
            _exit(0);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        child_env();
        execv(av[0], (char **)av);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    /* the pid file, written by the shell: wait for it briefly so /build_status sees BUILDING */
    for (int i = 0; i < 200 && !build_running(id); i++)
        usleep(5000);
    return 0;
}

static void
reply_build(api_req_t *r, const char *id, const char *target)
{
    json_object *o = json_object_new_object();
    json_set_str(o, "build_id", id);
    json_set_str(o, "image", target);
    api_reply_json(r, 202, o);
}

/* Points f's names at the store's image base (own: one of OpenHands' images, served with the
 * default), for r: no build. Under the names lock. */
static void
name_store_image(api_req_t *r, build_form_t *f, const char *id, const char *base, bool own)
{
    const char *args[6 + BUILD_TAGS_MAX] = {"tag"};
    int n = 1;
    if (!api_is_admin(r)) {
        args[n++] = "--owner";
        args[n++] = r->claims.sub;
    }
    args[n++] = own ? OH_PROFILE : base;
    for (int i = 0; i <= f->ntags; i++)
        args[n++] = f->names[i];
    args[n] = NULL;
    char first[256], why[512], p[PATH_MAX];
    if (oh_image_tool(args, first, sizeof first, why, sizeof why) != 0) {
        api_failf(r, ERR_INTERNAL, "cannot name the image %s: %s", f->names[0], why);
        return;
    }
    state_path(id, ".status", p, sizeof p); /* a build of the same name before */
    unlink(p);
    reply_build(r, id, f->names[0]);
}

/* Starts the build of f's names on the local Docker image base, for r. Under the names lock. */
static void
build_on_docker_image(api_req_t *r, build_form_t *f, const char *id, const char *base)
{
    static const char *const stale[] = {".status", ".log", ".pid"};
    char p[PATH_MAX];
    for (size_t i = 0; i < 3; i++) {
        state_path(id, stale[i], p, sizeof p);
        unlink(p);
    }
    int e = start_build(id, base, f, api_is_admin(r) ? NULL : r->claims.sub);
    if (e < 0)
        api_failf(r, ERR_INTERNAL, "cannot start the build: %s", strerror(-e));
    else
        reply_build(r, id, f->names[0]);
}

void
api_oh_build(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    if (!strcmp(r->claims.role, "viewer")) {
        api_failf(r, ERR_FORBIDDEN, "viewer tokens cannot build or name images");
        return;
    }
    char dir[PATH_MAX], id[BUILD_ID_MAX], ctx[PATH_MAX + 32], why[512], base[256], kind[32];
    snprintf(dir, sizeof dir, "%s/builds", g_api.image_store);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        api_failf(r, ERR_UNAVAILABLE, "cannot make %s: %s", dir, strerror(errno));
        return;
    }
    snprintf(ctx, sizeof ctx, "%s/context.%d", dir, (int)getpid()); /* one request per worker */
    build_form_t *f = xcalloc(1, sizeof *f);
    f->ctx_fd = open(ctx, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (f->ctx_fd < 0) {
        api_failf(r, ERR_UNAVAILABLE, "cannot write %s: %s", ctx, strerror(errno));
        free(f);
        return;
    }
    int e = read_form(r, f, why, sizeof why);
    close(f->ctx_fd);
    const char *target = f->names[0];
    for (int i = 0; e == 0 && i <= f->ntags; i++)
        if (!image_name_valid(f->names[i]) || !strcmp(f->names[i], IMAGE_HOST)) {
            snprintf(why, sizeof why, "%s must be 1-%d of [A-Za-z0-9._:/@-]",
                     i ? "each tag" : "target_image (a form field)", IMAGE_NAME_MAX);
            e = -1;
        }
    if (e == 0 && !f->has_context) {
        snprintf(why, sizeof why, "the form has no context (the build folder, a tar.gz)");
        e = -1;
    }
    const char *cb_args[] = {"context-base", ctx, NULL};
    if (e == 0 && oh_image_tool(cb_args, base, sizeof base, why, sizeof why) != 0)
        e = -1;
    unlink(ctx);
    if (e < 0) {
        api_failf(r, ERR_BAD_REQ, "%s", why);
        free(f);
        return;
    }
    build_id_of(target, id, sizeof id);
    bool own = oh_own_image(base);
    const char *kind_args[] = {"base-kind", base, NULL};
    if (own)
        snprintf(kind, sizeof kind, "store");
    else if (oh_image_tool(kind_args, kind, sizeof kind, why, sizeof why) != 0) {
        api_failf(r, ERR_NOT_FOUND, "cannot build %s: base image %s: %s", target, base,
                  why[0] ? why : "unknown");
        free(f);
        return;
    }
    /* Who may name what (runtime_image_owner.c), decided and recorded under the names lock,
     * which also makes "one build at a time" hold between workers. */
    const char *names[1 + BUILD_TAGS_MAX];
    for (int i = 0; i <= f->ntags; i++)
        names[i] = f->names[i];
    err_t err = {0};
    int lock = oh_names_lock(&err);
    bool store = !strcmp(kind, "store"), building = lock >= 0 && any_build_running();
    if (lock < 0 || oh_names_check(r, names, f->ntags + 1, building, &err) < 0)
        api_failf(r, err.code, "%s", err.msg);
    else if (!store && building)
        api_failf(r, ERR_BUSY, "an image build is running; one at a time: try again later");
    else if (oh_names_claim(r, names, f->ntags + 1, &err) < 0)
        api_failf(r, err.code, "%s", err.msg);
    else if (store) /* names of an image the store has: no build */
        name_store_image(r, f, id, base, own);
    else
        build_on_docker_image(r, f, id, base);
    oh_names_unlock(lock);
    free(f);
}

/* The last line of <id>.log that the builder wrote as its error ("sandpipe image: ..."), else
 * its last line. */
static void
build_error(const char *id, char *out, size_t cap)
{
    char p[PATH_MAX], line[1024];
    state_path(id, ".log", p, sizeof p);
    FILE *f = fopen(p, "re");
    copy_cut(out, cap, "the build failed, without a message");
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "sandpipe image: ", 16)) {
            copy_cut(out, cap, line + 16);
            found = true;
        } else if (!found && line[0]) {
            copy_cut(out, cap, line);
        }
    }
    if (f)
        fclose(f);
}

void
api_oh_build_status(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    char id[BUILD_ID_MAX], name[IMAGE_NAME_MAX + 1], rootfs[PATH_MAX], p[PATH_MAX], msg[1024];
    if (api_query(r, "build_id", id, sizeof id) <= 0) {
        api_failf(r, ERR_BAD_REQ, "query parameter build_id is required");
        return;
    }
    size_t hex = strlen(id) >= 2 ? strlen(id) - 2 : 1, i = 0;
    bool ok = !strncmp(id, "b-", 2) && hex % 2 == 0 && hex / 2 <= IMAGE_NAME_MAX;
    for (; ok && i < hex / 2; i++) {
        unsigned v;
        ok = sscanf(id + 2 + 2 * i, "%2x", &v) == 1 && v > 0;
        name[i] = (char)v;
    }
    name[ok ? i : 0] = '\0';
    ok = ok && image_name_valid(name);
    err_t err = {0};
    json_object *o = json_object_new_object();
    json_set_str(o, "image", name);
    state_path(id, ".status", p, sizeof p);
    FILE *f = ok ? fopen(p, "re") : NULL;
    if (f) { /* a build that ended */
        int code = -1;
        if (fscanf(f, "%d", &code) != 1)
            code = -1;
        fclose(f);
        if (code == 0 && image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err) == 0) {
            json_set_str(o, "status", "SUCCESS");
        } else {
            build_error(id, msg, sizeof msg);
            json_set_str(o, "status", "FAILURE");
            json_set_str(o, "error", msg);
        }
    } else if (ok && build_running(id)) {
        json_set_str(o, "status", "BUILDING");
    } else if (ok && image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err) == 0) {
        json_set_str(o, "status", "SUCCESS"); /* an alias, or a build whose state was cleared */
    } else if (ok && (state_path(id, ".log", p, sizeof p), access(p, F_OK) == 0)) {
        json_set_str(o, "status", "FAILURE"); /* its builder died without a word */
        json_set_str(o, "error", "the build stopped before it ended (the host restarted?)");
    } else {
        json_object_put(o);
        api_failf(r, ERR_NOT_FOUND, "no build %s", id);
        return;
    }
    api_reply_json(r, 200, o);
}
