/* file_download.h — a file of the sandbox streamed into an HTTP answer: the executor's
 * file.download channel relayed under the gateway's credit (the executor gets credit back only
 * for bytes that left for the socket, so a slow client slows the file's read and the gateway
 * holds at most the executor's window per download), with a Content-Length from the executor's
 * "size". sandpipe's REST download (http_files.c) and envd's GET /files (envd_files.c) differ
 * only in their headers and their words for a failure. */
#ifndef SP_FILE_DOWNLOAD_H
#define SP_FILE_DOWNLOAD_H

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "http_server.h"
#include "session.h"

typedef struct file_download file_download_t;

struct file_download {
    uint64_t req;         /* the request, while it waits (0 once it is gone) */
    session_stream_t *st; /* NULL once the executor closed the channel */
    bool head_sent;
    char path[PATH_MAX]; /* for the log and the failure's words */
    const char *extra;   /* the answer's more header lines ("name: value\r\n"…; static) */
    /* answers h for a failure before the head: res the executor's CLOSE ({"error"}), or NULL
     * when it sent no size */
    void (*fail)(file_download_t *d, http_req_t *h, json_object *res);
    void (*free)(file_download_t *d); /* frees the struct d is the first member of */
};

/* d (the first member of its caller's struct) becomes h's: freed with the request, or with its
 * channel's end when the client goes first. */
void file_download_attach(file_download_t *d, http_req_t *h);
/* Opens op (file.download's request, borrowed) on s into h's answer. 0, or -1 with err (h is
 * not answered). */
int file_download_open(file_download_t *d, gw_session_t *s, json_object *op, err_t *err);

#endif
