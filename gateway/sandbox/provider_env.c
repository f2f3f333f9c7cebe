/* provider_env.c — the environment a sandbox's executor starts with. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "provider.h"
#include "xalloc.h"

#define SYSTEM_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void
env_put(char ***envp, size_t *n, const char *key, const char *val)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i < *n; i++) {
        if (strncmp((*envp)[i], key, kl) == 0 && (*envp)[i][kl] == '=') {
            free((*envp)[i]);
            (*envp)[i] = xasprintf("%s=%s", key, val);
            return;
        }
    }
    *envp = xrealloc(*envp, (*n + 2) * sizeof **envp);
    (*envp)[(*n)++] = xasprintf("%s=%s", key, val);
    (*envp)[*n] = NULL;
}

int
provider_env_check(json_object *env, err_t *err)
{
    if (!env)
        return 0;
    if (!json_object_is_type(env, json_type_object))
        return err_set(err, ERR_BAD_REQ, "env must be an object of strings");
    json_object_object_foreach(env, key, val)
    {
        bool ok = key[0] && !(key[0] >= '0' && key[0] <= '9');
        for (const char *p = key; ok && *p; p++)
            ok = *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9');
        if (!ok || !json_object_is_type(val, json_type_string) ||
            strlen(json_object_get_string(val)) != (size_t)json_object_get_string_len(val))
            return err_set(err, ERR_BAD_REQ,
                           "env: bad variable '%.64s' (names match [A-Za-z_][A-Za-z0-9_]*, "
                           "values are strings without NUL)",
                           key);
    }
    return 0;
}

/* Whether the image has images/setup.sh's Python environment (the image store's own files: a
 * stat of the operator's directory, nothing a sandbox wrote). */
static bool
image_has_python_env(const sandbox_spec_t *spec)
{
    char p[PATH_MAX];
    struct stat st;
    if (!spec->rootfs || !spec->rootfs[0])
        return false;
    int n = snprintf(p, sizeof p, "%s" IMAGE_PYTHON_ENV "/pyvenv.cfg", spec->rootfs);
    return n > 0 && (size_t)n < sizeof p && lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

char **
provider_env_new(const sandbox_spec_t *spec, const char *home, err_t *err)
{
    char **envp = xcalloc(1, sizeof *envp);
    size_t n = 0;
    if (image_has_python_env(spec)) {
        /* as its bin/activate does: python, python3 and pip are the agent's own, where pip
         * installs (Debian's answers "externally-managed-environment", PEP 668) */
        env_put(&envp, &n, "PATH", IMAGE_PYTHON_ENV "/bin:" SYSTEM_PATH);
        env_put(&envp, &n, "VIRTUAL_ENV", IMAGE_PYTHON_ENV);
    } else if (spec->rootfs && spec->rootfs[0]) {
        env_put(&envp, &n, "PATH", SYSTEM_PATH);
    } else { /* the host's /usr: sandpipe's sudo where the host has none (provider_bwrap.c) */
        env_put(&envp, &n, "PATH", SYSTEM_PATH ":" SANDBOX_TOOLS_BIN);
    }
    env_put(&envp, &n, "HOME", home);
    env_put(&envp, &n, "LANG", "C.UTF-8");
    env_put(&envp, &n, "TERM", "xterm-256color");
    if (provider_env_check(spec->env, err) < 0) {
        provider_env_free(envp);
        return NULL;
    }
    if (spec->env) {
        json_object_object_foreach(spec->env, key, val)
            env_put(&envp, &n, key, json_object_get_string(val));
    }
    return envp;
}

void
provider_env_free(char **envp)
{
    for (size_t i = 0; envp && envp[i]; i++)
        free(envp[i]);
    free(envp);
}
