/* docker_api.h — the Docker Engine API over its unix socket (libcurl, CURLOPT_UNIX_SOCKET_PATH).
 *
 * Asynchronous requests run on the gateway's uv loop: one curl multi handle whose sockets and
 * timer are uv_poll / uv_timer handles (no threads, no docker CLI). The provider interface's
 * few synchronous calls (inspect for alive, pause, unpause: each a local round trip of a few
 * ms) use docker_api_sync with a short timeout. Bodies are JSON both ways. */
#ifndef SP_DOCKER_API_H
#define SP_DOCKER_API_H

#include <json-c/json.h>
#include <stddef.h>
#include <uv.h>

#define DOCKER_API_VERSION "/v1.41" /* Docker 20.10; newer engines accept it */

/* status: the HTTP status (0 when the request failed: error says why); body: the parsed reply or
 * NULL (borrowed: valid during the call). */
typedef void (*docker_cb)(void *ud, long status, json_object *body, const char *error);

/* The socket: $DOCKER_HOST (unix://PATH) or /var/run/docker.sock. */
const char *docker_api_socket(void);

/* Starts METHOD path (below DOCKER_API_VERSION) with body (borrowed, may be NULL) on loop; cb
 * later, exactly once (also for failures). Returns 0, or < 0 when it could not start (no cb). */
int docker_api_request(uv_loop_t *loop, const char *method, const char *path, json_object *body,
                       long timeout_ms, docker_cb cb, void *ud);

/* The same, blocking: returns the status (0 on failure, error filled); *out the reply (new) or
 * NULL; out may be NULL. */
long docker_api_sync(const char *method, const char *path, json_object *body, long timeout_ms,
                     json_object **out, char *error, size_t cap);

/* s percent-encoded for a query string (new string). */
char *docker_api_escape(const char *s);

#endif
