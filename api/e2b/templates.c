/* templates.c — E2B's templates on sandpipe's runtime images (docs/operations.md "Runtime
 * images"; common/image.h): a template is an image of the store by one of its names, "base" the
 * gateway's default one. GET /templates lists them, GET /templates/aliases/{alias} says whether
 * one exists (Template.exists). Building one from E2B's template steps (Template.build: a
 * Dockerfile's instructions run in E2B's builder, files uploaded to its storage) is not
 * something sandpipe's image builder does: it makes images from a base rootfs or a local Docker
 * image, on the host (`sandpipe image build`). So POST /v3/templates (and the older build
 * requests) and DELETE /templates/{id} of an image are refused with how to do it instead. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b.h"
#include "image.h"
#include "json_util.h"

#define TEMPLATES_MAX 500 /* names listed at most */

#define HOW_TO_BUILD                                                                               \
    "a template is a runtime image of the host: build one there with `sandpipe image build "       \
    "--base IMAGE|ROOTFS --tag NAME` (docs/operations.md \"Runtime images\"), then "               \
    "Sandbox.create('NAME')"

/* Does template name exist ("base", or a name the image store resolves)? 0, -ERR_NOT_FOUND or
 * -ERR_BAD_REQ (a malformed name) with e. */
static int
template_exists(const char *name, api_err_t *e)
{
    if (!strcmp(name, E2B_DEFAULT_TEMPLATE))
        return 0;
    char rootfs[PATH_MAX];
    err_t err = {0};
    int rc = image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err);
    if (rc == -ERR_BAD_REQ)
        return api_err_set(e, ERR_BAD_REQ, "%s", err.msg);
    if (rc < 0)
        return api_err_set(e, ERR_NOT_FOUND, "template '%.200s' not found", name);
    return 0;
}

/* The created= line of the image's .sandpipe-image (RFC 3339 already), into out ("" if none). */
static void
image_created(const char *name, char *out, size_t cap)
{
    char rootfs[PATH_MAX], path[PATH_MAX + 32], line[256];
    err_t err = {0};
    out[0] = '\0';
    if (image_resolve(g_api.image_store, name, rootfs, sizeof rootfs, &err) < 0 || !rootfs[0])
        return;
    snprintf(path, sizeof path, "%s/.sandpipe-image", rootfs);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "created=", 8)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(out, cap, "%.40s", line + 8);
        }
    if (f)
        fclose(f);
}

/* E2B's Template of name (new ref): its image's figures where sandpipe has them; a template
 * carries no limits here (the gateway's apply to every sandbox), so cpuCount and memoryMB are
 * this host's. */
static json_object *
template_json(const char *name)
{
    char created[64];
    image_created(strcmp(name, E2B_DEFAULT_TEMPLATE) ? name : "default", created, sizeof created);
    json_object *t = json_object_new_object(), *names = json_object_new_array();
    json_object_array_add(names, json_object_new_string(name));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), pages = sysconf(_SC_PHYS_PAGES),
         page = sysconf(_SC_PAGESIZE);
    json_set_str(t, "templateID", name);
    json_set_str(t, "buildID", name);
    json_set(t, "aliases", json_object_get(names));
    json_set(t, "names", names);
    json_set_str(t, "buildStatus", "ready");
    json_set_int(t, "buildCount", 1);
    json_set_int(t, "cpuCount", cpus > 0 ? cpus : 1);
    json_set_int(t, "memoryMB", ((int64_t)pages * page) >> 20);
    json_set_int(t, "diskSizeMB", 0);
    json_set_str(t, "envdVersion", E2B_ENVD_VERSION);
    json_set_bool(t, "public", true);
    json_set_int(t, "spawnCount", 0);
    json_set(t, "createdBy", NULL);
    json_set(t, "lastSpawnedAt", NULL);
    json_set(t, "createdAt", created[0] ? json_object_new_string(created) : e2b_rfc3339(0));
    json_set(t, "updatedAt", created[0] ? json_object_new_string(created) : e2b_rfc3339(0));
    return t;
}

void
api_e2b_templates(api_req_t *r, char **params)
{
    (void)params;
    if (e2b_auth(r, false) < 0)
        return;
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, template_json(E2B_DEFAULT_TEMPLATE));
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/names", g_api.image_store);
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort); /* a stable order */
    for (int i = 0; i < n; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s", ents[i]->d_name);
        for (char *p = name; *p; p++) /* the store spells '/' as '+' */
            if (*p == '+')
                *p = '/';
        api_err_t e;
        if (ents[i]->d_name[0] != '.' && json_object_array_length(arr) < TEMPLATES_MAX &&
            template_exists(name, &e) == 0)
            json_object_array_add(arr, template_json(name));
        free(ents[i]);
    }
    free(ents);
    api_reply_json(r, 200, arr);
}

void
api_e2b_template_alias(api_req_t *r, char **params)
{
    if (e2b_auth(r, false) < 0)
        return;
    api_err_t e;
    if (template_exists(params[0], &e) < 0) {
        api_fail(r, &e);
        return;
    }
    json_object *o = json_object_new_object();
    json_set_str(o, "templateID", params[0]);
    json_set_bool(o, "public", true);
    api_reply_json(r, 200, o);
}

void
api_e2b_template_build(api_req_t *r, char **params)
{
    (void)params;
    if (e2b_auth(r, true) < 0)
        return;
    api_failf(r, ERR_NOT_IMPLEMENTED, "Template.build is not supported by sandpipe: " HOW_TO_BUILD);
}

void
api_e2b_template_delete(api_req_t *r, char **params)
{
    if (e2b_auth(r, true) < 0)
        return;
    api_err_t e;
    if (template_exists(params[0], &e) < 0) { /* deleteSnapshot of what is not there: false */
        api_fail(r, &e);
        return;
    }
    api_failf(r, ERR_NOT_IMPLEMENTED,
              "template '%.200s' is a runtime image of the host: remove it there with `sandpipe "
              "image rm NAME` (docs/operations.md \"Runtime images\")",
              params[0]);
}
