/* env.c — owned environment arrays. */
#include "env.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

char **
env_copy(char *const *src)
{
    size_t n = 0;
    while (src && src[n])
        n++;
    char **e = xcalloc(n + 1, sizeof *e);
    for (size_t i = 0; i < n; i++)
        e[i] = xstrdup(src[i]);
    return e;
}

void
env_set(char ***envp, const char *k, const char *v)
{
    size_t klen = strlen(k), n = 0;
    char **e = *envp;
    char *entry = xasprintf("%s=%s", k, v ? v : "");
    for (; e[n]; n++)
        if (strncmp(e[n], k, klen) == 0 && e[n][klen] == '=') {
            free(e[n]);
            e[n] = entry;
            return;
        }
    e = xrealloc(e, (n + 2) * sizeof *e);
    e[n] = entry;
    e[n + 1] = NULL;
    *envp = e;
}

void
env_set_json(char ***envp, json_object *vars)
{
    if (!vars || !json_object_is_type(vars, json_type_object))
        return;
    json_object_object_foreach(vars, k, v) env_set(envp, k, json_object_get_string(v));
}

const char *
env_get(char *const *env, const char *k)
{
    size_t klen = strlen(k);
    for (; env && *env; env++)
        if (strncmp(*env, k, klen) == 0 && (*env)[klen] == '=')
            return *env + klen + 1;
    return NULL;
}

void
env_unset(char **env, const char *k)
{
    size_t klen = strlen(k), n = 0;
    while (env[n] && !(strncmp(env[n], k, klen) == 0 && env[n][klen] == '='))
        n++;
    if (!env[n])
        return;
    free(env[n]);
    for (; env[n]; n++)
        env[n] = env[n + 1];
}

void
env_free(char **env)
{
    if (!env)
        return;
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
}
