/* runtime_images.c — the Runtime API's image routes on sandpipe's image store (common/image.h,
 * built by images/sandpipe-image): /image_exists, /build, /build_status, and what /start's
 * image means.
 *
 * An image /start may name: "default" (the gateway's default image), a name of the store
 * (`sandpipe image ls`), or one of OpenHands' own published runtime / agent-server images
 * (OH_OWN_IMAGES), which sandpipe serves with its default image: their action or agent server
 * is what sandpipe's executor stands in for. Anything else is refused (404), never replaced.
 *
 * /build (V0 calls it when no runtime_container_image is set) cannot run OpenHands' Dockerfile
 * (it installs OpenHands' own action server, which sandpipe's executor replaces): it names
 * target_image an alias of the store's default image, so image_exists and /start find it, and
 * answers a build id that carries the name (hex), so /build_status needs no state. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "errors.h"
#include "form.h"
#include "image.h"
#include "json_util.h"
#include "runtime_api.h"

static const char *const OH_OWN_IMAGES[] = {"ghcr.io/openhands/", "ghcr.io/all-hands-ai/",
                                            "docker.all-hands.dev/", NULL};

int
oh_image_map(const char *image, char *session_image, size_t cap, err_t *err)
{
    if (cap)
        session_image[0] = '\0';
    if (!image[0] || !strcmp(image, OH_PROFILE))
        return 0;
    for (size_t i = 0; OH_OWN_IMAGES[i]; i++)
        if (!strncmp(image, OH_OWN_IMAGES[i], strlen(OH_OWN_IMAGES[i])))
            return 0;
    char rootfs[PATH_MAX];
    int e = image_resolve(g_api.image_store, image, rootfs, sizeof rootfs, err);
    if (e == 0)
        snprintf(session_image, cap, "%s", image);
    return e;
}

/* created= and size= of the image's .sandpipe-image (written by images/sandpipe-image). */
static void
image_info(const char *name, json_object *img)
{
    char rootfs[PATH_MAX], path[PATH_MAX + 32], line[256];
    err_t err = {0};
    json_set(img, "upload_time", NULL);
    json_set_int(img, "image_size_bytes", 0);
    if (image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err) < 0 || !rootfs[0])
        return;
    snprintf(path, sizeof path, "%s/.sandpipe-image", rootfs);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "created=", 8))
            json_set_str(img, "upload_time", line + 8);
        else if (!strncmp(line, "size=", 5))
            json_set_int(img, "image_size_bytes", atoll(line + 5));
    }
    if (f)
        fclose(f);
}

void
api_oh_image_exists(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    char image[256], mapped[256];
    if (api_query(r, "image", image, sizeof image) <= 0) {
        api_failf(r, ERR_BAD_REQ, "query parameter image is required");
        return;
    }
    err_t err = {0};
    json_object *o = json_object_new_object();
    bool exists = oh_image_map(image, mapped, sizeof mapped, &err) == 0;
    json_set_bool(o, "exists", exists);
    if (exists) {
        json_object *img = json_object_new_object();
        json_set_str(img, "name", image);
        image_info(mapped[0] ? mapped : "default", img);
        json_set(o, "image", img);
    }
    api_reply_json(r, 200, o);
}

/* Reads the form's target_image into out. */
static int
read_target(api_req_t *r, char *out, size_t cap)
{
    api_form_t *f = NULL;
    if (api_form_open(&f, r, "target_image", cap - 1) != API_FORM_OK)
        return -1;
    size_t n = 0;
    ssize_t got;
    while (n < cap - 1 && (got = api_form_read(f, out + n, cap - 1 - n)) > 0)
        n += (size_t)got;
    out[n] = '\0';
    int bad = got < 0 || n == 0;
    api_form_free(f);
    return bad ? -1 : 0;
}

void
api_oh_build(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    char target[IMAGE_NAME_MAX + 2], def[PATH_MAX], link[PATH_MAX * 2], rel[PATH_MAX];
    if (read_target(r, target, sizeof target) < 0 || !image_name_valid(target) ||
        !strcmp(target, IMAGE_HOST)) {
        api_failf(r, ERR_BAD_REQ, "target_image must be a form field of 1-%d of [A-Za-z0-9._:/@-]",
                  IMAGE_NAME_MAX);
        return;
    }
    err_t err = {0};
    snprintf(def, sizeof def, "%s/names/default", g_api.image_store);
    ssize_t n = readlink(def, rel, sizeof rel - 1);
    if (n <= 0 || image_resolve(g_api.image_store, "default", link, sizeof link, &err) < 0) {
        api_failf(r, ERR_UNAVAILABLE,
                  "no default image in %s: run `sandpipe image build` on the host first",
                  g_api.image_store);
        return;
    }
    rel[n] = '\0';
    /* names/<target, "/" as "+">: a symlink beside "default", pointing where it points */
    int len = snprintf(link, sizeof link, "%s/names/", g_api.image_store);
    for (size_t i = 0; target[i] && (size_t)len < sizeof link - 1; i++)
        link[len++] = target[i] == '/' ? '+' : target[i];
    link[len] = '\0';
    char tmp[sizeof link + 16];
    snprintf(tmp, sizeof tmp, "%s.%d", link, (int)getpid());
    unlink(tmp);
    if (symlink(rel, tmp) < 0 || rename(tmp, link) < 0) {
        api_failf(r, ERR_INTERNAL, "cannot name the image %s: %s", target, strerror(errno));
        unlink(tmp);
        return;
    }
    char id[2 * IMAGE_NAME_MAX + 8] = "b-";
    for (size_t i = 0; target[i]; i++)
        snprintf(id + 2 + 2 * i, 3, "%02x", (unsigned char)target[i]);
    json_object *o = json_object_new_object();
    json_set_str(o, "build_id", id);
    json_set_str(o, "image", target);
    api_reply_json(r, 202, o);
}

void
api_oh_build_status(api_req_t *r, char **params)
{
    (void)params;
    if (oh_auth(r) < 0)
        return;
    char id[2 * IMAGE_NAME_MAX + 8], name[IMAGE_NAME_MAX + 1], rootfs[PATH_MAX];
    if (api_query(r, "build_id", id, sizeof id) <= 0) {
        api_failf(r, ERR_BAD_REQ, "query parameter build_id is required");
        return;
    }
    size_t hex = strlen(id) - 2, i = 0;
    bool ok = !strncmp(id, "b-", 2) && hex % 2 == 0 && hex / 2 <= IMAGE_NAME_MAX;
    for (; ok && i < hex / 2; i++) {
        unsigned v;
        ok = sscanf(id + 2 + 2 * i, "%2x", &v) == 1;
        name[i] = (char)v;
    }
    name[ok ? i : 0] = '\0';
    err_t err = {0};
    if (!ok || image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err) < 0) {
        api_failf(r, ERR_NOT_FOUND, "no build %s", id);
        return;
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "status", "SUCCESS");
    json_set_str(o, "image", name);
    api_reply_json(r, 200, o);
}
