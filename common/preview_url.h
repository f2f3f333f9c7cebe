/* preview_url.h — the host form of a sandbox port's preview URL (docs/api.md, "Previews"):
 * nginx's wildcard preview origin, the template it sends the gateways as X-SP-Preview-Origin
 * ("http://{port}-{session}.DOMAIN:N"; "" when the deployment has no preview domain), filled
 * in. The gateway's ports routes and VS Code's redirect, and the API's OpenHands work_hosts
 * (api/openhands/work_hosts.c, from the fastcgi parameter SP_PREVIEW_ORIGIN) name it. Pure. */
#ifndef SP_PREVIEW_URL_H
#define SP_PREVIEW_URL_H

#include <stddef.h>

/* "<origin with port and sid>/" into out. 0, or -1 with out "" when origin is no such template
 * ("" included) or the URL does not fit in cap. */
int preview_host_url(const char *origin, const char *sid, unsigned port, char *out, size_t cap);

#endif
