/* provider_env.c — the environment a sandbox's executor starts with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"
#include "xalloc.h"

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

char **
provider_env_new(const sandbox_spec_t *spec, const char *home, err_t *err)
{
    char **envp = xcalloc(1, sizeof *envp);
    size_t n = 0;
    env_put(&envp, &n, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
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
