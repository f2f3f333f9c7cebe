/* work_hosts.h — the runtime's app ports as OpenHands V0 reads them (`work_hosts` of /start and
 * /sessions/{id}: {url: port}, put verbatim into the agent's prompt and opened by the user):
 * ports 12000 and 12001 of the runtime's session as preview URLs (docs/api.md, "Previews"),
 * each with a shared preview token for that port. */
#ifndef SP_OH_WORK_HOSTS_H
#define SP_OH_WORK_HOSTS_H

#include <json-c/json.h>

#include "http.h"

#define OH_WORK_PORT_1 12000
#define OH_WORK_PORT_2 12001
#define OH_WORK_TTL    (7 * 24 * 3600) /* the longest a shared preview token lives */

/* {url: port} for session sid ("": {} , a runtime not started yet). */
json_object *oh_work_hosts(const api_req_t *r, const char *sid);

#endif
