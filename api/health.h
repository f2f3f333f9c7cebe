/* health.h — what GET /api/v1/health and /metrics both show: the gateways and the warm pool, as
 * Redis has them. */
#ifndef SP_API_HEALTH_H
#define SP_API_HEALTH_H

#include <json-c/json.h>

#include "http.h"

/* {"<profile>": {"ready": N, "gateways": {"<gw>": N}}} from the sp:pool:{P}:GW lists (new ref),
 * NULL on Redis failure. */
json_object *api_pool_json(api_req_t *r);
/* [{"id","alive","last_beat","sessions"}] for every gateway in sp:gateways (new ref); *live
 * counts the alive ones. NULL on Redis failure. */
json_object *api_gateways_json(api_req_t *r, int *live);

#endif
