/* gw_options.h — sandpipe-gateway's command line (gw_options.c). */
#ifndef SP_GW_OPTIONS_H
#define SP_GW_OPTIONS_H

#include "gw.h"
#include "redis_password.h"

/* What the options give beyond g_gw.cfg. */
typedef struct {
    const char *listen, *preview_listen; /* --listen (default 127.0.0.1:8081), --preview-listen */
    redis_auth_t redis_auth, sentinel_auth;
    char host[64]; /* this host's name: the default id's and advertised address' */
} gw_options_t;

/* Fills g_gw.cfg (defaults, then the options) and o. -1 to go on; else the exit status (0 after
 * --help, 2 for a bad option, said on stderr). */
int gw_options_parse(int argc, char **argv, gw_options_t *o);

#endif
