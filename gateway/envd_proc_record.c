/* envd_proc_record.c — what an SDK ran, in the session's event log ("process" and
 * "process_output" events), for the web IDE, /watch and replays (envd_proc.h). */
#include <inttypes.h>
#include <string.h>

#include "buf.h"
#include "envd_proc.h"
#include "envd_proc_int.h"
#include "json_util.h"
#include "session_int.h"

void
envd_proc_record_start(envd_proc_t *p)
{
    json_object *e = session_event_new("process");
    json_set_str(e, "event", "start");
    json_set_str(e, "via", "e2b");
    json_set_int(e, "pid", p->pid);
    json_set(e, "cmd", json_object_get(json_get(p->config, "cmd")));
    json_set(e, "args", json_object_get(json_get(p->config, "args")));
    if (json_get(p->config, "cwd"))
        json_set(e, "cwd", json_object_get(json_get(p->config, "cwd")));
    if (p->tag[0])
        json_set_str(e, "tag", p->tag);
    json_set_bool(e, "pty", p->pty);
    event_log_append(p->s->log, e);
}

/* Output as text when it is UTF-8 without NUL, else base64 (b64: d's, made already); while
 * Redis is behind it is counted, not kept, and the count goes into the next event that is kept
 * (or the end). Built as text: json-c's escaping is slow on floods (as session_output.c). */
void
envd_proc_record_output(envd_proc_t *p, const char *stream, const uint8_t *d, size_t n,
                        const char *b64, size_t b64_len)
{
    if (event_log_full(p->s->log)) {
        p->unrecorded += n;
        return;
    }
    buf_t m = BUF_INIT;
    buf_printf(&m, "\"type\":\"process_output\",\"pid\":%u,\"stream\":\"%s\",", p->pid, stream);
    if (p->unrecorded) {
        buf_printf(&m, "\"unrecorded_before\":%" PRIu64 ",", p->unrecorded);
        p->unrecorded = 0;
    }
    size_t key_at = m.len;
    buf_puts(&m, "\"data\":\"");
    if (!json_escape_text_append(&m, (const char *)d, n)) { /* checked as it is escaped */
        m.len = key_at;                                     /* not text: base64 instead */
        buf_puts(&m, "\"data_b64\":\"");
        buf_append(&m, b64, b64_len);
    }
    buf_puts(&m, "\"");
    event_log_append_members(p->s->log, m.data, m.len);
    buf_free(&m);
}

void
envd_proc_record_end(envd_proc_t *p, json_object *end)
{
    json_object *e = session_event_new("process");
    json_set_str(e, "event", "end");
    json_set_int(e, "pid", p->pid);
    json_set_int(e, "exit_code", json_get_int(end, "exitCode", 0));
    json_set_str(e, "status", json_get_str(end, "status", ""));
    if (p->unrecorded)
        json_set_int(e, "unrecorded", (int64_t)p->unrecorded);
    event_log_append(p->s->log, e);
}
