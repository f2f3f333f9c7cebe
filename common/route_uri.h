/* route_uri.h — which session a request URI names, as nginx's route lookup sees it (the raw
 * $request_uri: path and query, not decoded): the session-bound routes of docs/api.md, "nginx".
 * Pure: no I/O, no allocation. */
#ifndef SP_ROUTE_URI_H
#define SP_ROUTE_URI_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    ROUTE_URI_NONE,    /* not a session's path */
    ROUTE_URI_WS,      /* /ws/sessions/{id}[/terminal] */
    ROUTE_URI_REST,    /* /api/v1/sessions/{id}/… */
    ROUTE_URI_RUNTIME, /* /runtime/{id}/… or a runtime's own /rt-<16 hex>/… */
    ROUTE_URI_PREVIEW, /* /preview/{id}/{port}/… (a P-S.<domain> host's lookup asks this too) */
    ROUTE_URI_ENVD,    /* /envd/{id}/…: E2B's envd (nginx names an E2b-Sandbox-Id's so) */
} route_uri_kind_t;

#define ROUTE_URI_ID_MAX 128

typedef struct {
    route_uri_kind_t kind;
    bool write; /* the request changes the session (a viewer may not): all but an event stream */
    char id[ROUTE_URI_ID_MAX]; /* the session or runtime id, as it appears in the path */
} route_uri_t;

/* Parses uri into out. 0, or -1 (out->kind ROUTE_URI_NONE) when it names no session: another
 * path, an empty id, one of ROUTE_URI_ID_MAX bytes or more, or one holding '%' (an escaped id is
 * left to the API, which decodes it). */
int route_uri_parse(const char *uri, route_uri_t *out);
/* The raw value of query parameter name of uri into out ("" when absent or not shorter than
 * cap). */
void route_uri_arg(const char *uri, const char *name, char *out, size_t cap);

#endif
