/* fuzz_cmd_split.c — the bash-aware command splitter and the observation renderer over
 * arbitrary text: both run on agent-controlled input (the command, the program's output). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/bash_obs.h"
#include "executor/cmd_split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    cmd_list_t l;
    cmd_split(text, &l);
    if (*text && l.n == 0)
        __builtin_trap(); /* non-empty text always yields at least one command */
    char *refusal = cmd_split_refusal(&l);
    free(refusal);
    cmd_list_free(&l);
    char *esc = cmd_escape_special_chars(text);
    free(esc);
    /* The same bytes as terminal output of a finished command. */
    bash_obs_in_t in = {.command = text,
                        .output = (const char *)data,
                        .output_len = size,
                        .end = BASH_END_COMPLETED,
                        .exit_code = 0,
                        .timeout = 1.5,
                        .no_change_timeout = 10,
                        .pid = -1,
                        .username = "u",
                        .hostname = "h",
                        .working_dir = "/w"};
    json_object *o = bash_obs_build(&in);
    if (!o)
        __builtin_trap();
    json_object_put(o);
    char *t = obs_truncate(text, strlen(text), 64);
    free(t);
    free(text);
    return 0;
}
