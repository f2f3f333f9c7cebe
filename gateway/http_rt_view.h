#ifndef SP_HTTP_RT_VIEW_H
#define SP_HTTP_RT_VIEW_H

#include "http_server.h"

/* GET /runtime/{id}/view?path=: OpenHands' file viewer page of a file of the sandbox. */
void http_rt_view(http_req_t *h, const char *id);

#endif
