/* http_ports.h — a session's ports and its preview links over REST (docs/api.md, "Previews"):
 *   GET  /api/v1/sessions/{id}/ports                  what listens, each with its preview URLs
 *   POST /api/v1/sessions/{id}/ports/{port}/token     a shared token for one port, with a TTL
 *   POST /api/v1/sessions/{id}/ports/{port}/link      the owner's one-time link (sets a cookie)
 *   PUT  /api/v1/sessions/{id}/ports/{port}           {"public": true|false} (--preview-public) */
#ifndef SP_HTTP_PORTS_H
#define SP_HTTP_PORTS_H

#include "http_server.h"

#define PREVIEW_SHARE_TTL_DEFAULT 3600
#define PREVIEW_SHARE_TTL_MAX     (7 * 24 * 3600)
#define PREVIEW_LINK_TTL          60

void http_ports_list(http_req_t *h, const char *id);
/* POST …/ports/{port}/token and …/link, PUT …/ports/{port}: the rest of the path says which. */
void http_ports_post(http_req_t *h, const char *id);
void http_ports_put(http_req_t *h, const char *id);

#endif
