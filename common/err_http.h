/* err_http.h — the one table from an error code (common/err.h) to the HTTP status the HTTP
 * APIs answer it with: the REST API's (sandpipe-api, and the gateway where it serves the same
 * routes itself) and the OpenHands action server's where that differs. Pure, no I/O. */
#ifndef SP_ERR_HTTP_H
#define SP_ERR_HTTP_H

#include <stdbool.h>

/* The HTTP status of code (errno or ERR_*, either sign): the action server's when action_server
 * and it has its own, else REST's; 500 for a code the table does not know. */
int err_http_status(int code, bool action_server);
/* The code whose err_name() is name, among the codes a gateway sends in its error objects;
 * ERR_INTERNAL for a name it never sends (a gateway's "unauthorized" is ERR_AUTH_ROLE: a role
 * refused after the token was verified). */
int err_from_gateway_name(const char *name);

#endif
