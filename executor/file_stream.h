/* file_stream.h — file operations that stream: upload (client DATA chunks into an atomically
 * replaced file), download (file chunks as DATA within credit, never the whole file in memory)
 * and watch (inotify events as JSON until the client closes). */
#ifndef SP_FILE_STREAM_H
#define SP_FILE_STREAM_H

#include <json-c/json.h>

#include "conn.h"

void file_op_upload(channel_t *ch, json_object *req);
void file_op_download(channel_t *ch, json_object *req);
void file_op_watch(channel_t *ch, json_object *req);

#endif
