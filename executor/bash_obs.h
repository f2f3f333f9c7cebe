/* bash_obs.h — builds the OpenHands `run` observation (CmdOutputObservation) from what the bash
 * session saw: output shaping (right-trimmed lines, no echoed command), truncation exactly as
 * upstream (content over 30,000 code points keeps the first and last 15,000 around
 * "\n[... Observation truncated due to length ...]\n"; only the last BASH_OBS_MAX_LINES lines
 * with the "[Previous command outputs are truncated. Showing the last N lines of the output
 * below.]" prefix), and every message/prefix/suffix text of openhands/runtime/utils/bash.py
 * (OpenHands 0.62.0). Pure: no I/O. */
#ifndef SP_BASH_OBS_H
#define SP_BASH_OBS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Lines of output an observation keeps (the last ones). Upstream reads them back from its tmux
 * pane: a history of at most 10,000 rows (history-limit; tmux drops the oldest tenth when it is
 * full, so 9,001 to 10,000) plus the 1,000-row screen, less its prompt's lines: at most 10,988
 * lines of output (measured with tmux 3.3a), fewer just after tmux dropped a tenth, and fewer
 * still for lines wider than the 1,000 columns. 11,000 is never less than upstream shows. */
#define BASH_OBS_MAX_LINES 11000

typedef enum {
    BASH_END_COMPLETED,         /* the prompt marker came back: exit_code is real */
    BASH_END_NO_CHANGE_TIMEOUT, /* no new output for no_change_timeout seconds; still running */
    BASH_END_HARD_TIMEOUT,      /* the action's timeout elapsed; still running */
    BASH_END_INTERRUPTED,       /* completed after C-c was sent (exit code 130 suffix) */
} bash_end_t;

typedef struct {
    const char *command; /* the action's command text as given */
    const char *output;  /* raw output bytes of this observation (marker already removed) */
    size_t output_len;
    bool output_cut;      /* older output was already dropped (the caller keeps a bounded tail):
                             the truncation prefix is due even if output holds few lines */
    bool is_continuation; /* output of a command that was already running (empty command /
                             is_input): content gets the "[Below is the output of the
                             previous command.]\n" prefix */
    bash_end_t end;
    int exit_code;         /* when completed; else ignored (-1 in metadata) */
    double timeout;        /* hard timeout in seconds as given (printed like Python's float) */
    int no_change_timeout; /* seconds (integer) */
    int pid;               /* $! or -1 */
    const char *username;
    const char *hostname;
    const char *working_dir;
    const char *py_interpreter_path; /* may be NULL → "" */
    bool hidden;                     /* action.hidden */
    bool is_input;                   /* the action typed text into a running program */
    char key;        /* 'C', 'D', 'Z', ... when the command was a C-<letter> key; 0 else */
    bool no_network; /* the output shows a failed name resolution in a sandbox without network:
                        the suffix ends with NET_HINT_NOTE (net_hint.h) */
} bash_obs_in_t;

/* The whole observation object: {"observation":"run","content":...,"extras":{"command":...,
 * "metadata":{8 keys},"hidden":...},"message":"Command `X` executed with exit code N.",
 * "success":bool}. */
json_object *bash_obs_build(const bash_obs_in_t *in);

/* A `run` observation carrying one of upstream's error texts as content (no previous command,
 * nothing to interact with, previous command still running with "[Your command \"X\" is NOT
 * executed. ...]" suffix). kind selects the text: */
typedef enum {
    BASH_ERR_NO_PREVIOUS_FOR_LOGS,   /* empty command, nothing running */
    BASH_ERR_NO_PREVIOUS_FOR_INPUT,  /* is_input, nothing running */
    BASH_ERR_PREVIOUS_STILL_RUNNING, /* new command while one runs; out carries current output */
} bash_err_t;
json_object *bash_obs_error(bash_err_t kind, const bash_obs_in_t *in);

/* An `error` observation (ErrorObservation): {"observation":"error","content":text,
 * "extras":{"error_id":""},"message":text} as upstream serialises it. */
json_object *obs_error_new(const char *text);

/* Truncates like upstream's maybe_truncate (code points, not bytes); returns a new string. */
char *obs_truncate(const char *s, size_t len, size_t max_chars);

#endif
