/* env.h — NULL-terminated environment arrays ("K=V" strings) that we own. */
#ifndef SP_ENV_H
#define SP_ENV_H

char **env_copy(char *const *src);
/* Sets or replaces K (copies both). */
void env_set(char ***envp, const char *k, const char *v);
const char *env_get(char *const *env, const char *k);
void env_free(char **env);

#endif
