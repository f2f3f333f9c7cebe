/* fuzz_exec_client.c — arbitrary server bytes fed to an exec_client_t, in varying splits, with
 * callbacks that act as a real caller would (send data from on_writable, toggle auto-grant in
 * on_data, open a new channel from on_close), so reentrant paths are exercised too. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exec_client.h"
#include "json_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    exec_client_t *c;
    unsigned ndata;
} fuzz_state_t;

static void
on_data(void *ud, uint32_t ch, bool is_stderr, const uint8_t *p, size_t n)
{
    fuzz_state_t *s = ud;
    (void)is_stderr;
    (void)p;
    (void)n;
    if (++s->ndata % 3 == 0)
        exec_client_set_auto_grant(s->c, ch, s->ndata % 2);
    if (s->ndata % 5 == 0)
        exec_client_grant(s->c, ch, (uint32_t)n);
}

static void
on_writable(void *ud, uint32_t ch, size_t avail)
{
    fuzz_state_t *s = ud;
    static const char chunk[256];
    (void)avail;
    exec_client_send_data(s->c, ch, chunk, sizeof(chunk));
}

static void
on_close(void *ud, uint32_t ch, json_object *res)
{
    fuzz_state_t *s = ud;
    size_t len;
    json_text(res, &len);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "again");
    uint32_t nch = exec_client_open(s->c, req, NULL);
    json_object_put(req);
    if (nch == ch) /* the closing id is still allocated while on_close runs */
        __builtin_trap();
}

static void
on_json(void *ud, uint32_t ch, json_object *msg)
{
    fuzz_state_t *s = ud;
    exec_client_send_json(s->c, ch, msg);
}

static void
on_eof(void *ud, uint32_t ch)
{
    fuzz_state_t *s = ud;
    exec_client_send_eof(s->c, ch);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const exec_client_cbs_t cbs = {
        .on_data = on_data,
        .on_writable = on_writable,
        .on_close = on_close,
        .on_json = on_json,
        .on_eof = on_eof,
    };
    fuzz_state_t s = {0};
    s.c = exec_client_new(&cbs, &s);
    exec_client_set_max_frame(s.c, 256 * 1024);
    json_object *req = json_object_new_object();
    json_set_str(req, "op", "proc.spawn");
    for (int i = 0; i < 4; i++)
        exec_client_open(s.c, req, NULL);
    json_object_put(req);

    /* The first byte picks the split size, so the corpus covers partial frames. */
    size_t step = size ? (size_t)data[0] % 32 + 1 : 1;
    size_t off = 0;
    err_t e;
    while (off < size) {
        size_t n = size - off < step ? size - off : step;
        if (exec_client_feed(s.c, data + off, n, &e) < 0)
            break;
        off += n;
        buf_t *out = exec_client_out(s.c);
        buf_consume(out, out->len / 2);
    }
    exec_client_free(s.c);
    return 0;
}
