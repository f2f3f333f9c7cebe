/* provider_local.c — the executor as a plain process of the current user: NO ISOLATION,
 * development only. Same layout as bwrap (<dir>/workspace, <dir>/ctl/executor.sock created here
 * and handed to the executor as fd 3, its output a pipe to the gateway's log) and the same cgroup
 * (limits, pause, kill-all) when cgroups are writable, so destroy and pause behave alike. With no
 * sandbox to keep the host out, the executor's file roots are the workspace only (--root workspace,
 * where bwrap gives --root /); as root it runs with --user root (it would otherwise switch to uid
 * 1000, which does not own the workspace). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider.h"

static int
local_create(const sandbox_spec_t *spec, sandbox_t *out, err_t *err)
{
    static bool warned; /* starts run on several threads (gateway/sandbox_start.h) */
    if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED)) {
        fprintf(stderr, "sandpipe: WARNING: local provider: NO ISOLATION, development only\n");
    }
    memset(out, 0, sizeof *out);
    if (spec->rootfs && spec->rootfs[0])
        return err_set(err, ERR_BAD_REQ,
                       "the local provider runs on the host itself: no image (\"" IMAGE_HOST
                       "\" only)");
    snprintf(out->provider, sizeof out->provider, "local");
    snprintf(out->image, sizeof out->image, IMAGE_HOST);
    char **envp = provider_env_new(spec, "/", err); /* validated before anything is made */
    if (!envp)
        return -ERR_BAD_REQ;
    provider_env_free(envp);
    int e = provider_prepare(spec, out, false, err);
    if (e < 0)
        return e;
    envp = provider_env_new(spec, out->workspace, err);
    char exe[PATH_MAX];
    if (!realpath(spec->executor_path, exe)) /* it runs in the workspace: no relative path */
        snprintf(exe, sizeof exe, "%s", spec->executor_path);
    char *argv[] = {exe,
                    "--listen",
                    "fd:3",
                    "--workspace",
                    out->workspace,
                    "--root",
                    out->workspace,
                    geteuid() == 0 ? "--user" : NULL,
                    "root",
                    NULL};
    int lfd = provider_listen(out, err);
    e = lfd < 0 ? lfd : provider_spawn(spec, out, argv, envp, out->workspace, &lfd, 1, err);
    if (lfd >= 0)
        close(lfd);
    provider_env_free(envp);
    if (e < 0)
        provider_generic_destroy(out, true, NULL); /* nothing half-made stays behind */
    if (e == 0) {
        size_t l = strlen(out->warning);
        snprintf(out->warning + l, sizeof out->warning - l, "%slocal provider: NO ISOLATION",
                 l ? "; " : "");
    }
    return e;
}

const provider_t provider_local = {
    .name = "local",
    .create = local_create,
    .destroy = provider_generic_destroy,
    .alive = provider_generic_alive,
    .pause = provider_generic_pause,
    .resume = provider_generic_resume,
    .usage = provider_generic_usage,
};
