/* inbox.h — the REST API's streamed transfers (file.upload, file.download) to this gateway,
 * through Redis (redis/README.md, "Requests to a gateway"; every other request of the API comes
 * over HTTP, http_control.c): XREAD BLOCK on `sp:gateway:<id>:inbox` on a connection of its own,
 * each request answered by RPUSH to its reply key. */
#ifndef SP_INBOX_H
#define SP_INBOX_H

void inbox_start(void);
void inbox_stop(void);

#endif
