/* gw.h — the gateway's process-wide state and configuration (defined in gw.c, filled by main.c).
 * One uv loop; libwebsockets and hiredis attach to it. Blocking sandbox starts and destroys
 * run on libuv's thread pool (work_queue.h); nothing else leaves the loop. */
#ifndef SP_GW_H
#define SP_GW_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "route_key.h"

#define GW_VERSION "0.1.0"

struct lws_context;
typedef struct gw_session gw_session_t;

typedef struct {
    char id[64];             /* gateway id (Redis keys, session ownership) */
    char host_id[128];       /* the machine whose sandboxes it reaches (takeover.h) */
    const char *listen_host; /* WebSocket listen address */
    int listen_port;
    const char *listen_unix; /* also this unix socket (nginx on this host), or NULL */
    char advertise[192];     /* host:port nginx reaches the listener at (sp:gateway:ID:info addr) */
    const char *redis;       /* "unix:/path" or "host:port" */
    const char *provider;    /* default provider name */
    const char *image_store; /* runtime images (sandbox/image.h) */
    const char *image;       /* default image ("host": the host's /usr); the pool's */
    const char *state_dir;   /* sandboxes' directories */
    const char *executor_path; /* sandpipe-executor binary for providers */
    const char *secret_file;   /* JWT secret (hex) */
    int pool_size;             /* warm sandboxes per profile */
    int idle_timeout;          /* seconds without activity before a session is reaped; 0 = off */
    int max_lifetime;          /* seconds; 0 = off */
    int64_t stream_max_events; /* per-session event stream cap (entries) */
    int64_t stream_max_bytes;  /* ... and (about) bytes */
    int retention;             /* seconds a stopped session's keys are kept */
    int term_grace;            /* seconds a terminal waits for its client to come back */
    int64_t default_memory;    /* per-sandbox defaults */
    int64_t default_pids;
    int64_t default_cpu;
    int64_t default_disk;      /* each sandbox's own filesystem (sandbox_disk.h); 0 = none */
    int64_t max_disk;          /* largest disk a session may ask for */
    uint64_t upload_max;       /* largest upload (PUT …/files/content; nginx --upload-max) */
    uint32_t sandbox_uid_base; /* host uids of bwrap sandboxes (0 count: the default range) */
    uint32_t sandbox_uid_count;
    bool sandbox_shared_uid; /* --sandbox-uids off: sandboxes run as the gateway's uid */
    bool root_inside;        /* --root-inside: bwrap sandboxes map their block, sudo works
                              * (provider.h); off where this host cannot (checked at start) */
    const char *netd;        /* sandpipe-netd's control socket; NULL: no network for sandboxes */
    int network_default;     /* net_mode_t of a session that does not ask */
    int network_max_admin;   /* the widest net_mode_t a role may ask for */
    int network_max_user;
} gw_config_t;

typedef struct {
    uv_loop_t *loop;
    gw_config_t cfg;
    struct lws_context *lws;
    uint8_t secret[64];
    size_t secret_len;
    char route_key[ROUTE_KEY_HEX_LEN + 1]; /* what nginx's route lookups carry (route_key.h) */
    double started;
    gw_session_t *sessions; /* sessions this gateway owns (linked list) */
    bool stopping;
} gw_t;

extern gw_t g_gw;

/* Monotonic seconds. */
double gw_now(void);
/* Wall clock seconds (for timestamps in events). */
double gw_wall(void);
/* prefix and 16 random hex digits into out (cap bytes): session ids, E2B PTYs' terminal ids. */
void gw_random_id(char *out, size_t cap, const char *prefix);

#define GW_LOG(fmt, ...) fprintf(stderr, "sandpipe-gateway: " fmt "\n", ##__VA_ARGS__)

#endif
