/* bash_env.c — what bash.env means: checked names, the `export` lines typed into the shell, and
 * the executor's own settings a session's environment carries (NO_CHANGE_TIMEOUT_SECONDS). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bash_session.h"
#include "bash_session_int.h"
#include "env.h"
#include "executor.h"

bool
bash_set_no_change_timeout(const char *text)
{
    char *end;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || end == text || *end || errno || v < 1 || v > 86400)
        return false;
    g_exec.no_change_timeout = (int)v;
    return true;
}

static bool
env_name_ok(const char *k)
{
    bool ok = *k && !('0' <= k[0] && k[0] <= '9');
    for (const char *p = k; *p; p++)
        ok = ok && (*p == '_' || ('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
                    ('0' <= *p && *p <= '9'));
    return ok;
}

int
bash_env_script(json_object *env, buf_t *out, err_t *err)
{
    json_object_object_foreach(env, name, value)
    {
        if (!env_name_ok(name))
            return err_set(err, ERR_BAD_REQ,
                           "environment variable names must match [A-Za-z_][A-Za-z0-9_]*");
        const char *val = json_object_is_type(value, json_type_string)
                              ? json_object_get_string(value)
                              : json_object_to_json_string(value);
        buf_printf(out, "export %s=", name);
        shell_quote(out, val);
        buf_puts(out, "\n");
        env_set(&g_exec.base_env, name, val);
        if (!strcmp(name, BASH_NO_CHANGE_ENV))
            bash_set_no_change_timeout(val);
    }
    return 0;
}
