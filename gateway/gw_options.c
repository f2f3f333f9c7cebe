/* gw_options.c — sandpipe-gateway's command line: the options, their defaults in g_gw.cfg, and
 * what is checked while parsing (main.c checks what needs several options or the machine). */
#include "gw_options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "net_policy.h"
#include "preview_listen.h"
#include "sandbox/provider.h"
#include "takeover.h"

static void
usage(FILE *f)
{
    fprintf(
        f,
        "usage: sandpipe-gateway [options]\n"
        "  --listen HOST:PORT       WebSocket and HTTP listen address, that one address alone\n"
        "                           (default 127.0.0.1:8081; 0.0.0.0 every IPv4 address,\n"
        "                           [::] every IPv6 one; a name: its first address)\n"
        "  --listen-unix PATH       also on this unix socket (mode 0666), for an nginx on\n"
        "                           this host (render.sh --gateway ADDR=unix:PATH)\n"
        "  --advertise HOST:PORT    where nginx reaches that listener (default: the --listen\n"
        "                           address; this host's name when it listens on any address)\n"
        "  --redis ADDR             unix:/path, host:port (default 127.0.0.1:6379) or\n"
        "                           sentinel://HOST:PORT[,HOST:PORT...]/NAME: the primary\n"
        "                           the sentinels name, followed through a failover\n"
        "  --redis-user NAME        the Redis ACL user to be (redis/users.acl: gateway)\n"
        "  --redis-password-file FILE  its password, one line, mode 0600 (read again at each\n"
        "                           reconnection); alone: the default user's password\n"
        "  --redis-sentinel-user NAME, --redis-sentinel-password-file FILE\n"
        "                           the same for the sentinels (default: no AUTH to them)\n"
        "  --id ID                  gateway id (default gw-<hostname>)\n"
        "  --host-id ID             the machine whose sandboxes this gateway reaches: peers\n"
        "                           with the same one take over each other's sessions\n"
        "                           (default /etc/machine-id, else the hostname)\n"
        "  --provider NAME          bwrap (default), docker or local\n"
        "  --image NAME             sessions' default image (default host: the host's /usr;\n"
        "                           sandpipe image ls lists the others)\n"
        "  --images DIR             the image store (default " IMAGE_STORE_DEF ")\n"
        "  --state-dir DIR          sandboxes' directories (default /var/lib/sandpipe)\n"
        "  --executor PATH          sandpipe-executor binary (default: next to this binary)\n"
        "  --secret-file FILE       JWT secret (hex); required\n"
        "  --pool N                 warm sandboxes to keep ready (default 2)\n"
        "  --idle-timeout SEC       reap sessions idle this long (default 1800, 0 = never)\n"
        "  --max-lifetime SEC       stop sessions after this long (default 0 = never)\n"
        "  --stream-cap N           events kept per session stream (default 100000)\n"
        "  --stream-bytes BYTES     and about this many bytes (default 64 MiB; 0 = no limit)\n"
        "  --retention SEC          keep a stopped session's keys this long (default 7 days)\n"
        "  --term-grace SEC         a terminal whose connection dropped waits this long to be\n"
        "                           taken back (default 60)\n"
        "  --memory BYTES --cpu MILLICORES --pids N   default sandbox limits\n"
        "  --disk BYTES             each sandbox's own disk for /workspace, /tmp, /var/tmp\n"
        "                           (sparse; default 10 GiB; 0 = none: host disk, tmpfs)\n"
        "  --disk-max BYTES         largest disk per session (default 16 x --disk)\n"
        "  --max-upload BYTES       largest file upload over HTTP (default 1 GiB; as nginx's\n"
        "                           --upload-max)\n"
        "  --sandbox-uids BASE:COUNT|off  host uids for sandboxes, 65536 each (default "
        "1073741824:1073676288, 16383 sandboxes); off: the gateway's uid\n"
        "  --root-inside on|off     bwrap sandboxes map their 65536 uids: root inside (sudo),\n"
        "                           an image's root writable on the sandbox's disk (default on,\n"
        "                           where the gateway is root and the kernel can idmap mounts)\n"
        "  --netd PATH              sandpipe-netd's control socket: sandboxes may have a network\n"
        "                           (without it every sandbox has loopback only)\n"
        "  --preview-listen ADDR    where nginx sends sandbox apps' traffic (HOST:PORT, port 0:\n"
        "                           any free one; unix:PATH; default: the --listen host, port\n"
        "                           0), announced in Redis for the route lookup\n"
        "  --preview-public on|off  owners may make a port public: no credential (default off)\n"
        "  --preview-timeout SEC    an app's first byte within this, else 504 (default 60)\n"
        "  --network-default MODE   a session that does not ask: none (default), egress\n"
        "  --network-roles admin=MODE,user=MODE  the widest mode each role may ask for (none,\n"
        "                           allowlist, egress; default admin=egress,user=egress)\n");
}

/* --network-roles admin=MODE,user=MODE (either may be left out) */
static int
parse_network_roles(const char *arg, gw_config_t *cfg)
{
    char copy[128], *save = NULL;
    snprintf(copy, sizeof copy, "%s", arg);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        int m = eq ? net_mode_parse(eq + 1) : -1;
        if (m < 0)
            return -1;
        *eq = '\0';
        if (strcmp(t, "admin") == 0)
            cfg->network_max_admin = m;
        else if (strcmp(t, "user") == 0)
            cfg->network_max_user = m;
        else
            return -1;
    }
    return 0;
}

/* --sandbox-uids BASE:COUNT|off */
static int
parse_uid_range(const char *arg, gw_config_t *cfg)
{
    if (strcmp(arg, "off") == 0) {
        cfg->sandbox_shared_uid = true;
        return 0;
    }
    char *end;
    unsigned long long base = strtoull(arg, &end, 10), count;
    if (*end != ':')
        return -1;
    count = strtoull(end + 1, &end, 10);
    if (*end || base == 0 || count < SANDBOX_UID_WIDTH || base + count > 0x7fffffffULL)
        return -1;
    cfg->sandbox_uid_base = (uint32_t)base;
    cfg->sandbox_uid_count = (uint32_t)count;
    return 0;
}

/* Long options without a letter of their own. */
enum {
    OPT_REDIS_USER = 256,
    OPT_REDIS_PASSWORD_FILE,
    OPT_REDIS_SENTINEL_USER,
    OPT_REDIS_SENTINEL_PASSWORD_FILE,
    OPT_PREVIEW_LISTEN,
    OPT_PREVIEW_PUBLIC,
    OPT_PREVIEW_TIMEOUT
};

int
gw_options_parse(int argc, char **argv, gw_options_t *o)
{
    static const struct option opts[] = {
        {"listen", required_argument, 0, 'l'},
        {"advertise", required_argument, 0, 'A'},
        {"listen-unix", required_argument, 0, 'x'},
        {"redis", required_argument, 0, 'r'},
        {"redis-user", required_argument, 0, OPT_REDIS_USER},
        {"redis-password-file", required_argument, 0, OPT_REDIS_PASSWORD_FILE},
        {"redis-sentinel-user", required_argument, 0, OPT_REDIS_SENTINEL_USER},
        {"redis-sentinel-password-file", required_argument, 0, OPT_REDIS_SENTINEL_PASSWORD_FILE},
        {"id", required_argument, 0, 'i'},
        {"host-id", required_argument, 0, 'H'},
        {"provider", required_argument, 0, 'p'},
        {"image", required_argument, 0, 'm'},
        {"images", required_argument, 0, 'G'},
        {"state-dir", required_argument, 0, 's'},
        {"executor", required_argument, 0, 'e'},
        {"secret-file", required_argument, 0, 'k'},
        {"pool", required_argument, 0, 'P'},
        {"idle-timeout", required_argument, 0, 'I'},
        {"max-lifetime", required_argument, 0, 'L'},
        {"stream-cap", required_argument, 0, 'c'},
        {"stream-bytes", required_argument, 0, 'B'},
        {"retention", required_argument, 0, 'R'},
        {"term-grace", required_argument, 0, 'T'},
        {"memory", required_argument, 0, 'M'},
        {"cpu", required_argument, 0, 'C'},
        {"pids", required_argument, 0, 'D'},
        {"disk", required_argument, 0, 'S'},
        {"disk-max", required_argument, 0, 'X'},
        {"sandbox-uids", required_argument, 0, 'U'},
        {"root-inside", required_argument, 0, 'Z'},
        {"preview-listen", required_argument, 0, OPT_PREVIEW_LISTEN},
        {"preview-public", required_argument, 0, OPT_PREVIEW_PUBLIC},
        {"preview-timeout", required_argument, 0, OPT_PREVIEW_TIMEOUT},
        {"max-upload", required_argument, 0, 'u'},
        {"netd", required_argument, 0, 'N'},
        {"network-default", required_argument, 0, 'W'},
        {"network-roles", required_argument, 0, 'O'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    gw_config_t *cfg = &g_gw.cfg;
    *o = (gw_options_t){.listen = "127.0.0.1:8081"};
    cfg->redis = "127.0.0.1:6379";
    cfg->provider = "bwrap";
    cfg->image = IMAGE_HOST;
    cfg->image_store = IMAGE_STORE_DEF;
    cfg->root_inside = true;
    cfg->state_dir = "/var/lib/sandpipe";
    cfg->pool_size = 2;
    cfg->idle_timeout = 1800;
    cfg->stream_max_events = 100000;
    cfg->stream_max_bytes = 64LL << 20;
    cfg->retention = 7 * 86400;
    cfg->term_grace = 60;
    cfg->default_memory = 2LL << 30;
    cfg->default_pids = 1024;
    cfg->default_cpu = 0;
    cfg->default_disk = 10LL << 30;
    cfg->max_disk = -1; /* 16 x --disk: what the largest resource_factor asks for */
    cfg->upload_max = 1ull << 30;
    cfg->network_default = NET_NONE;
    cfg->network_max_admin = NET_EGRESS;
    cfg->network_max_user = NET_EGRESS;
    snprintf(o->host, sizeof o->host, "local");
    gethostname(o->host, sizeof o->host - 1);
    snprintf(cfg->id, sizeof cfg->id, "gw-%.56s", o->host);
    takeover_default_host_id(cfg->host_id, sizeof cfg->host_id);
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'l': o->listen = optarg; break;
        case 'x': cfg->listen_unix = optarg; break;
        case 'A': snprintf(cfg->advertise, sizeof cfg->advertise, "%s", optarg); break;
        case 'r': cfg->redis = optarg; break;
        case OPT_REDIS_USER: o->redis_auth.user = optarg; break;
        case OPT_REDIS_PASSWORD_FILE: o->redis_auth.password_file = optarg; break;
        case OPT_REDIS_SENTINEL_USER: o->sentinel_auth.user = optarg; break;
        case OPT_REDIS_SENTINEL_PASSWORD_FILE: o->sentinel_auth.password_file = optarg; break;
        case OPT_PREVIEW_LISTEN: o->preview_listen = optarg; break;
        case OPT_PREVIEW_PUBLIC:
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "sandpipe-gateway: --preview-public is on or off\n");
                return 2;
            }
            preview_set_public_allowed(strcmp(optarg, "on") == 0);
            break;
        case OPT_PREVIEW_TIMEOUT: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 3600) {
                fprintf(stderr, "sandpipe-gateway: --preview-timeout takes 1 to 3600 seconds\n");
                return 2;
            }
            preview_set_first_byte_timeout((int)v);
            break;
        }
        case 'i': snprintf(cfg->id, sizeof cfg->id, "%s", optarg); break;
        case 'H': snprintf(cfg->host_id, sizeof cfg->host_id, "%s", optarg); break;
        case 'p': cfg->provider = optarg; break;
        case 'm': cfg->image = optarg; break;
        case 'G': cfg->image_store = optarg; break;
        case 's': cfg->state_dir = optarg; break;
        case 'e': cfg->executor_path = optarg; break;
        case 'k': cfg->secret_file = optarg; break;
        case 'P': cfg->pool_size = atoi(optarg); break;
        case 'I': cfg->idle_timeout = atoi(optarg); break;
        case 'L': cfg->max_lifetime = atoi(optarg); break;
        case 'c': cfg->stream_max_events = atoll(optarg); break;
        case 'B': cfg->stream_max_bytes = atoll(optarg); break;
        case 'R': cfg->retention = atoi(optarg); break;
        case 'T': cfg->term_grace = atoi(optarg); break;
        case 'M': cfg->default_memory = atoll(optarg); break;
        case 'C': cfg->default_cpu = atoll(optarg); break;
        case 'D': cfg->default_pids = atoll(optarg); break;
        case 'S': cfg->default_disk = atoll(optarg); break;
        case 'X': cfg->max_disk = atoll(optarg); break;
        case 'u': cfg->upload_max = strtoull(optarg, NULL, 10); break;
        case 'U':
            if (parse_uid_range(optarg, cfg) < 0) {
                fprintf(stderr, "sandpipe-gateway: --sandbox-uids takes BASE:COUNT (COUNT at "
                                "least 65536, one sandbox's) or off\n");
                return 2;
            }
            break;
        case 'Z':
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "sandpipe-gateway: --root-inside is on or off\n");
                return 2;
            }
            cfg->root_inside = strcmp(optarg, "on") == 0;
            break;
        case 'N': cfg->netd = optarg; break;
        case 'W':
            cfg->network_default = net_mode_parse(optarg);
            if (cfg->network_default != NET_NONE && cfg->network_default != NET_EGRESS) {
                fprintf(stderr, "sandpipe-gateway: --network-default is none or egress\n");
                return 2;
            }
            break;
        case 'O':
            if (parse_network_roles(optarg, cfg) < 0) {
                fprintf(stderr, "sandpipe-gateway: --network-roles takes admin=MODE,user=MODE "
                                "(none, allowlist, egress)\n");
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    return -1;
}
