/* fuzz_file_req.c — common/file_req on arbitrary queries and bodies: the input's first line is
 * a query ("name=value&…", split as given), the rest a JSON body. Every builder either returns
 * an op naming itself or fails with a message; nothing reads past its input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "file_req.h"
#include "json_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *
get(const void *src, const char *name)
{
    size_t n = strlen(name);
    for (const char *const *a = src; *a; a++)
        if (!strncmp(*a, name, n) && ((*a)[n] == '=' || !(*a)[n]))
            return (*a)[n] ? *a + n + 1 : "";
    return NULL;
}

static void
check(json_object *op, const err_t *err)
{
    if (op) {
        if (strncmp(json_get_str(op, "op", ""), "file.", 5) != 0)
            __builtin_trap();
        json_object_put(op);
    } else if (!err->msg[0]) {
        __builtin_trap();
    }
}

typedef json_object *(*by_query_fn)(const file_req_query_t *q, err_t *err);
typedef json_object *(*by_body_fn)(json_object *body, err_t *err);
static const by_query_fn by_query[] = {file_req_list, file_req_stat, file_req_read, file_req_remove,
                                       file_req_download};
static const by_body_fn by_body[] = {file_req_write, file_req_mkdir, file_req_move};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = '\0';
    char *nl = memchr(in, '\n', size);
    char *rest = nl ? nl + 1 : in + size;
    if (nl)
        *nl = '\0';
    const char *args[9];
    int n = 0;
    for (char *save = NULL, *a = strtok_r(in, "&", &save); a && n < 8;
         a = strtok_r(NULL, "&", &save))
        args[n++] = a;
    args[n] = NULL;
    file_req_query_t q = {get, args};
    for (size_t i = 0; i < sizeof by_query / sizeof by_query[0]; i++) {
        err_t err = {0};
        check(by_query[i](&q, &err), &err);
    }
    err_t err = {0};
    bool append = false;
    json_object *up = file_req_upload(&q, 1u << 30, &append, &err);
    if (up && append)
        up = file_req_append(up, rest, strlen(rest));
    check(up, &err);
    err_t perr = {0};
    json_object *body = json_parse(rest, strlen(rest), &perr);
    if (body && json_object_is_type(body, json_type_object)) {
        for (size_t i = 0; i < sizeof by_body / sizeof by_body[0]; i++) {
            err_t e = {0};
            check(by_body[i](body, &e), &e);
        }
    }
    json_object_put(body);
    char d[1200];
    file_req_disposition(d, sizeof d, rest);
    if (strlen(d) >= sizeof d)
        __builtin_trap();
    free(in);
    return 0;
}
