/* docker_orphans.c — the start-up clean-up of the Docker provider. See docker_orphans.h. */
#include "docker_orphans.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker_api.h"
#include "gw.h"
#include "json_util.h"
#include "provider.h"
#include "sandbox_destroy.h"

#define LIST_TIMEOUT_MS 60000

/* This gateway process's mark on the containers it creates (label sandpipe.run): random, made
 * once. The start-up clean-up tells an earlier life's containers from this one's by it. */
const char *
docker_life_id(void)
{
    static char id[33];
    if (!id[0]) {
        uint8_t r[16];
        if (getrandom(r, sizeof r, 0) != sizeof r) { /* pid and time still tell lives apart */
            uint64_t v[2] = {(uint64_t)getpid(), (uint64_t)time(NULL)};
            memcpy(r, v, sizeof r);
        }
        for (size_t i = 0; i < sizeof r; i++)
            snprintf(id + 2 * i, 3, "%02x", r[i]);
    }
    return id;
}

/* The sandbox a listed container (GET /containers/json) belongs to, from its labels (set by us
 * at creation; a container cannot change its own). */
static bool
listed_sandbox(json_object *c, sandbox_t *sb)
{
    json_object *labels = json_get(c, "Labels");
    const char *id = json_get_str(labels, "sandpipe.sandbox", ""),
               *dir = json_get_str(labels, "sandpipe.dir", "");
    memset(sb, 0, sizeof *sb);
    if (!id[0] || dir[0] != '/' || strlen(id) >= sizeof sb->id || strlen(dir) >= sizeof sb->dir)
        return false;
    snprintf(sb->id, sizeof sb->id, "%s", id);
    snprintf(sb->dir, sizeof sb->dir, "%s", dir);
    snprintf(sb->provider, sizeof sb->provider, "docker");
    struct stat st; /* the uid to give back to the range: the workspace's owner */
    char ws[PATH_MAX + 16];
    snprintf(ws, sizeof ws, "%s/workspace", dir);
    sb->uid = stat(ws, &st) == 0 ? st.st_uid : geteuid();
    sb->uid_range = 1;
    return true;
}

/* The start-up clean-up's question (owned is called from on_listed). */
static bool (*cleanup_owned)(const char *sandbox_id);

/* An earlier life's container nothing uses: one that stopped, or one still running whose
 * sandbox no restored session and no pool entry holds (its session was deleted while the
 * gateway was down, or the gateway died between starting it and recording it). This life's
 * own containers (label sandpipe.run) are never orphans, also those still starting when the
 * list comes back. */
static bool
orphaned(json_object *c, const sandbox_t *sb)
{
    if (!strcmp(json_get_str(json_get(c, "Labels"), "sandpipe.run", ""), docker_life_id()))
        return false;
    if (strcmp(json_get_str(c, "State", ""), "running") != 0)
        return true;
    return cleanup_owned && !cleanup_owned(sb->id);
}

static void
on_listed(void *ud, long status, json_object *body, const char *error)
{
    (void)ud;
    if (status != 200 || !json_object_is_type(body, json_type_array)) {
        GW_LOG("docker: cannot list this gateway's containers: %s", error ? error : "?");
        return;
    }
    for (size_t i = 0; i < json_object_array_length(body); i++) {
        json_object *c = json_object_array_get_idx(body, i);
        sandbox_t sb;
        if (!listed_sandbox(c, &sb) || !orphaned(c, &sb))
            continue;
        GW_LOG("docker: removing %s (sandbox %s, %s), left by an earlier run without a session",
               json_get_str(c, "Id", "?"), sb.id, json_get_str(c, "State", "?"));
        sandbox_destroy(&provider_docker, &sb, NULL, NULL, false);
    }
}

void
docker_orphans_clean(const char *gateway_id, bool (*owned)(const char *sandbox_id))
{
    cleanup_owned = owned;
    char filter[256], path[512];
    snprintf(filter, sizeof filter, "{\"label\":[\"sandpipe.gateway=%s\"]}", gateway_id);
    char *q = docker_api_escape(filter);
    snprintf(path, sizeof path, "/containers/json?all=1&filters=%s", q);
    free(q);
    if (docker_api_request(g_gw.loop, "GET", path, NULL, LIST_TIMEOUT_MS, on_listed, NULL) < 0)
        GW_LOG("docker: cannot list this gateway's containers");
}
