/* exec_link.h — one gateway-to-executor connection: a uv pipe to the executor's unix socket
 * driving an exec_client (common/exec_client.h), with connect retries, heartbeats (PING every
 * EXEC_LINK_PING_MS; nothing heard, a PONG or any other frame, within EXEC_LINK_DEAD_MS means
 * dead) and backpressure on writes.
 *
 * Ownership: the link owns its uv handles and the exec_client; exec_link_free closes them and
 * frees the link in the last close callback. Callbacks never run after exec_link_free. */
#ifndef SP_EXEC_LINK_H
#define SP_EXEC_LINK_H

#include <stdbool.h>

#include "exec_client.h"

#define EXEC_LINK_PING_MS 2000
#define EXEC_LINK_DEAD_MS 6000

typedef struct exec_link exec_link_t;

typedef struct {
    /* Connected and HELLO received: requests may be sent. */
    void (*on_up)(void *ud);
    /* The connection failed or was lost (why: a short reason). No callbacks follow until
     * exec_link_connect is called again. */
    void (*on_down)(void *ud, const char *why);
    /* Channel events, as exec_client_cbs_t (hello/pong/output are handled by the link). */
    void (*on_data)(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n);
    void (*on_json)(void *ud, uint32_t ch, json_object *msg);
    void (*on_eof)(void *ud, uint32_t ch);
    void (*on_close)(void *ud, uint32_t ch, json_object *result);
    void (*on_writable)(void *ud, uint32_t ch, size_t avail);
} exec_link_cbs_t;

exec_link_t *exec_link_new(const exec_link_cbs_t *cbs, void *ud);
/* Starts connecting to path, retrying every 5 ms for up to timeout_ms. */
void exec_link_connect(exec_link_t *l, const char *path, int timeout_ms);
exec_client_t *exec_link_client(exec_link_t *l);
/* Whether it is connected and the executor's HELLO was heard. */
bool exec_link_up(const exec_link_t *l);
/* Its callbacks from now on are cbs with ud: a link handed from one owner to another (a warm
 * sandbox's, pool.c, to the session that claimed it), up or not. */
void exec_link_rebind(exec_link_t *l, const exec_link_cbs_t *cbs, void *ud);
/* The sandbox user's home its executor's HELLO named (absolute; "" when it named none). A
 * sandbox's word: a path inside the sandbox, never one on the host. */
const char *exec_link_home(const exec_link_t *l);
/* Writes what the client queued (call after queuing requests). */
void exec_link_flush(exec_link_t *l);
/* Quiet: no heartbeats and no death by silence (the sandbox is frozen on purpose). Leaving
 * quiet restarts the dead-man timer from now. */
void exec_link_set_quiet(exec_link_t *l, bool quiet);
/* An idle link lets go of its empty buffers (exec_client_shrink). Returns the bytes let go. */
size_t exec_link_shrink(exec_link_t *l);
void exec_link_free(exec_link_t *l);

#endif
