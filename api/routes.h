/* routes.h — the API's route table: method + path pattern ("/api/v1/sessions/{}/events", each {}
 * one path segment, percent-decoded) to a handler, its auth, body handling and flavour (the
 * shape of its errors). api_route_find is pure (no I/O): routes.c's dispatch and the unit tests
 * use it. */
#ifndef SP_API_ROUTES_H
#define SP_API_ROUTES_H

#include "api.h"

#define API_ROUTE_PARAMS_MAX 4   /* {} captures in one pattern */
#define API_ROUTE_PARAM_MAX  256 /* bytes of one decoded capture, with its NUL */

/* A route's flags: one API_ROUTE_AUTH_ value, plus API_ROUTE_BODY_STREAM for handlers that read
 * the body themselves with api_body_read (uploads of any size); the others get it whole in
 * r->body (up to --max-body). */
enum {
    API_ROUTE_AUTH_NONE = 0,  /* none, or the handler's own (X-Session-API-Key, X-API-Key) */
    API_ROUTE_AUTH_ANY = 1,   /* a valid Bearer token */
    API_ROUTE_AUTH_ADMIN = 2, /* an admin's Bearer token */
    API_ROUTE_AUTH_MASK = 3,
    API_ROUTE_BODY_STREAM = 4,
};

typedef struct {
    const char *method;
    const char *pattern;
    api_handler_fn fn;
    int flags;
    api_flavour_t flavour;
} api_route_t;

/* What api_route_find found: the route and its captures, decoded, in order. */
typedef struct {
    const api_route_t *route;
    int nparams;
    char params[API_ROUTE_PARAMS_MAX][API_ROUTE_PARAM_MAX];
} api_route_match_t;

/* api_route_find's results. */
enum {
    API_ROUTE_FOUND = 0,
    API_ROUTE_NO_PATH = -1,     /* no pattern matches the path */
    API_ROUTE_NO_METHOD = -2,   /* some do, none with this method */
    API_ROUTE_BAD_SEGMENT = -3, /* none matches, and a capture was malformed (bad escape, a NUL
                                 * or a '/' once decoded, too long) */
};

/* The first route whose pattern matches path (raw, without the query; one trailing '/'
 * tolerated) and whose method is method: API_ROUTE_FOUND with m filled, else why not. */
int api_route_find(const char *method, const char *path, api_route_match_t *m);

#endif
