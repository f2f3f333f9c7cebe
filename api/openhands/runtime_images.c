/* runtime_images.c — the Runtime API's image routes on sandpipe's image store (common/image.h,
 * built by images/sandpipe-image): /image_exists and what /start's image means.
 *
 * An image /start may name: "default" (the gateway's default image), a name of the store
 * (`sandpipe image ls`), or one of OpenHands' own published runtime / agent-server images
 * (OH_OWN_IMAGES), which sandpipe serves with its default image: their action or agent server
 * is what sandpipe's executor stands in for. Anything else is refused (404), never replaced.
 *
 * /build and /build_status: runtime_build.c. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "errors.h"
#include "image.h"
#include "json_util.h"
#include "runtime_api.h"

static const char *const OH_OWN_IMAGES[] = {"ghcr.io/openhands/", "ghcr.io/all-hands-ai/",
                                            "docker.all-hands.dev/", NULL};

bool
oh_own_image(const char *image)
{
    for (size_t i = 0; OH_OWN_IMAGES[i]; i++)
        if (!strncmp(image, OH_OWN_IMAGES[i], strlen(OH_OWN_IMAGES[i])))
            return true;
    return false;
}

int
oh_image_map(const char *image, char *session_image, size_t cap, err_t *err)
{
    if (cap)
        session_image[0] = '\0';
    if (!image[0] || !strcmp(image, OH_PROFILE) || oh_own_image(image))
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
