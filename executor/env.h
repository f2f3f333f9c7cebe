/* env.h — NULL-terminated environment arrays ("K=V" strings) that we own. */
#ifndef SP_ENV_H
#define SP_ENV_H

#include <json-c/json.h>

char **env_copy(char *const *src);
/* Sets or replaces K (copies both). */
void env_set(char ***envp, const char *k, const char *v);
/* Sets every member of vars as env_set does (a value as json_object_get_string gives it);
 * nothing when vars is NULL or not an object. */
void env_set_json(char ***envp, json_object *vars);
const char *env_get(char *const *env, const char *k);
/* Removes K (no-op when absent). */
void env_unset(char **env, const char *k);
void env_free(char **env);

#endif
