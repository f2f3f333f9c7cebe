/* kernel.h — one IPython kernel (python3 -m ipykernel_launcher) started by this helper, and the
 * ZeroMQ sockets that talk to it over ipc:// endpoints in a private directory: shell (DEALER,
 * requests and replies), iopub (SUB, output) and control (DEALER). Interrupts are SIGINT, the
 * kernel's default interrupt mode. */
#ifndef SP_JUPYTER_KERNEL_H
#define SP_JUPYTER_KERNEL_H

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "err.h"
#include "wire.h"

typedef struct {
    pid_t pid;       /* 0: not running */
    int exit_status; /* its wait status once it is gone (kernel_alive reaped it) */
    void *zctx, *shell, *iopub, *control;
    char key[65];
    char session[JW_ID_LEN + 1];
    char prefix[PATH_MAX]; /* ipc endpoint prefix: <dir>/k<n> */
    char dir[PATH_MAX];
    char log[PATH_MAX]; /* the kernel's stderr */
    unsigned generation;
} kernel_t;

/* Starts the kernel with python in dir (a private directory) and connects to it; does not wait
 * for it to answer (kernel_handshake). Returns 0 or < 0 with err set. */
int kernel_start(kernel_t *k, const char *dir, const char *python, err_t *err);
/* Waits (up to timeout_ms) until the kernel answers kernel_info on shell and its iopub delivers
 * to us. Returns 0, or < 0 with err set (dead, or too slow). */
int kernel_handshake(kernel_t *k, int timeout_ms, err_t *err);
/* Kills the kernel (SIGKILL), reaps it, closes the sockets. Safe when not running. */
void kernel_stop(kernel_t *k);
/* false once the kernel process has exited (reaped here). */
bool kernel_alive(kernel_t *k);
void kernel_interrupt(kernel_t *k);

/* Sends a request on sock (k->shell or k->control); id_out gets its msg_id. */
int kernel_send(kernel_t *k, void *sock, const char *msg_type, json_object *content,
                char id_out[JW_ID_LEN + 1]);
/* Receives one message from sock without waiting: 1 with m filled, 0 if none, < 0 on a bad
 * message (dropped, err set). */
int kernel_recv(kernel_t *k, void *sock, jw_msg_t *m, err_t *err);

/* The last bytes of the kernel's stderr (for an error message), NUL-terminated into out. */
void kernel_log_tail(const kernel_t *k, char *out, size_t cap);

/* How the last kernel ended, in words ("killed by signal 9 (SIGKILL: ...)", "exit status 1"). */
void kernel_exit_text(const kernel_t *k, char *out, size_t cap);

#endif
