/* log_entry.h — a session's events as E2B's sandbox log (GET /sandboxes/{id}/logs and
 * /v2/sandboxes/{id}/logs, sandbox_logs.c): its status changes, the processes started and ended
 * (E2B's commands and PTYs), signals, network refusals and policy changes, OpenHands actions,
 * plugins and ports; never what programs printed or people typed (output, input, observations).
 * Pure: events in, entries out. */
#ifndef SP_API_E2B_LOG_ENTRY_H
#define SP_API_E2B_LOG_ENTRY_H

#include <json-c/json.h>

/* The event types that make a log entry, NULL-terminated. */
extern const char *const e2b_log_types[];

/* ev (a stored event, borrowed) as E2B's SandboxLogEntry {"timestamp" (RFC 3339, the event's
 * ts), "level" (info; warn for a refusal, a process that exited non-zero, a plugin that exited,
 * lost events; error for an ERROR status), "message", "fields" (strings: "logger" (system,
 * process, network, action), "seq", and the event's own)}, new ref; NULL for an event that is
 * no log entry. */
json_object *e2b_log_entry(json_object *ev);
/* 0 debug, 1 info, 2 warn, 3 error; -1 for another word. */
int e2b_log_level_rank(const char *level);
/* The v1 log's "line" of entry: the JSON text {"level", "message", fields...} E2B's CLI parses
 * (new string ref). */
json_object *e2b_log_line(json_object *entry);

#endif
