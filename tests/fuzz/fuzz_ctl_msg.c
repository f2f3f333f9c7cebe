/* fuzz_ctl_msg.c — common/ctl_msg on arbitrary bodies, both ways: a request it accepts has an op
 * of 1..CTL_OP_MAX bytes and a known role, every pointer into the object it returned; an answer
 * it accepts gives exactly one of result and error, and what it re-encodes decodes the same. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    err_t err = {0};
    ctl_request_t q;
    json_object *o = ctl_request_decode(body, size, &q, &err);
    if (o) {
        size_t n = strlen(q.op);
        if (n == 0 || n > CTL_OP_MAX || !q.owner || !q.viewer_session ||
            (strcmp(q.role, "admin") && strcmp(q.role, "user") && strcmp(q.role, "viewer")))
            __builtin_trap();
        json_object_put(o);
    } else if (err.code != ERR_BAD_REQ) {
        __builtin_trap();
    }
    json_object *res = NULL, *e = NULL;
    int rc = ctl_answer_decode(body, size, &res, &e, &err);
    if ((rc == 1 && (!res || e)) || (rc == 0 && (res || !e)) || (rc < 0 && (res || e)))
        __builtin_trap();
    if (rc >= 0) {
        size_t len;
        char *again = rc == 1 ? ctl_answer_ok(res, &len) : ctl_answer_fail(e, &len);
        json_object *res2 = NULL, *e2 = NULL;
        if (ctl_answer_decode(again, len, &res2, &e2, &err) != rc)
            __builtin_trap();
        json_object_put(res2);
        json_object_put(e2);
        free(again);
    }
    return 0;
}
