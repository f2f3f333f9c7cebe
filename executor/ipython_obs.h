/* ipython_obs.h — the OpenHands `run_ipython` observation (IPythonRunCellObservation) from what
 * a cell produced, with upstream's texts (openhands/runtime/plugins/jupyter/execute_server.py
 * and action_execution_server.py, OpenHands 0.62.0): ANSI colour codes stripped with upstream's
 * pattern, "[Code executed successfully with no output]", "[Execution timed out (T seconds).]",
 * the content right-trimmed, sandpipe's no-network note (net_hint.h) where asked, and with
 * include_extra the "[Jupyter current working directory: …]" and "[Jupyter Python interpreter:
 * …]" lines. Pure: no I/O. */
#ifndef SP_IPYTHON_OBS_H
#define SP_IPYTHON_OBS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    IPY_END_OK,      /* the kernel replied and went idle */
    IPY_END_TIMEOUT, /* the action's timeout elapsed; the cell was interrupted */
    IPY_END_DEAD,    /* the kernel died during the cell */
} ipy_end_t;

typedef struct {
    const char *code;
    ipy_end_t end;
    const char *text; /* the cell's text outputs joined as upstream joins them */
    size_t text_len;
    json_object *images;    /* array of data URLs (borrowed; empty or NULL: image_urls null) */
    json_object *timeout;   /* the action's "timeout" as given (borrowed; may be NULL) */
    double default_timeout; /* used when timeout is NULL */
    bool include_extra;     /* action.args.include_extra (default true) */
    const char *cwd;        /* bash's working directory */
    const char *python;     /* the kernel's sys.executable */
    bool no_network;        /* the output ends with NET_HINT_NOTE (net_hint.h), before the
                               include_extra lines: it shows a name that did not resolve in a
                               sandbox without network */
} ipy_obs_in_t;

/* {"observation":"run_ipython","content":…,"extras":{"code":…,"image_urls":…},"message":"Code
 * executed in IPython cell.","success":true} */
json_object *ipython_obs_build(const ipy_obs_in_t *in);

/* Removes upstream's ANSI pattern \x1B\[\d+(;\d+){0,2}m from s[0..n); returns a new string. */
char *ipython_strip_ansi(const char *s, size_t n);

#endif
