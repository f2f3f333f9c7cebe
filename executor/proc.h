/* proc.h — processes without a PTY: separate stdout/stderr, stdin with EOF, exit status kept
 * after the client leaves, re-attach by id from any connection, continuing from byte offsets.
 * Each stream keeps its last PROC_RING_BYTES in a ring (ring.h). With a reader attached and out
 * of credit, the pipe is not read (the process blocks on write: backpressure); with no reader
 * the ring overwrites its oldest bytes and a later attach from an older offset is told exactly
 * which range was lost ("truncated" event). */
#ifndef SP_PROC_H
#define SP_PROC_H

#include <json-c/json.h>

#include "conn.h"

#define PROC_RING_BYTES (1u << 20)

void proc_op_spawn(channel_t *ch, json_object *req);
void proc_op_attach(channel_t *ch, json_object *req);
void proc_op_list(channel_t *ch, json_object *req);
void proc_op_signal(channel_t *ch, json_object *req);

int proc_count(void);

/* "TERM", "SIGTERM", 15 -> 15; < 0 when unknown. */
int signal_from_json(json_object *v);

#endif
