/* spx.h — sandpipe-exec (spx), the executor's debug client: shared state of one invocation.
 *
 * One invocation = one connection, one main channel (the subcommand's OPEN) and maybe a few
 * helper channels (a Ctrl-C sent as bash.signal). loop.c owns the blocking poll() loop: it
 * reads the socket into exec_client, writes exec_client's output, forwards an input fd (stdin,
 * a file to upload) as DATA within the server's credit, and turns signals into hook calls
 * through a self-pipe. Each subcommand (cmd_*.c) builds its OPEN request and sets hooks for
 * what to do with the main channel's frames; unset hooks get the defaults in loop.c. */
#ifndef SP_TOOLS_SPX_H
#define SP_TOOLS_SPX_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io.h" /* io_write_all */
#include "exec_client.h"

#define CLI_EXIT_USAGE 2
#define CLI_EXIT_FAIL  1

typedef struct spx spx_t;

/* What a subcommand does with its main channel. All optional. */
typedef struct {
    void (*on_data)(spx_t *c, bool is_stderr, const uint8_t *p, size_t n); /* default: stdout/err */
    void (*on_json)(spx_t *c, json_object *msg);           /* default: one JSON line on stdout */
    void (*on_eof)(spx_t *c);                              /* default: nothing */
    void (*on_close)(spx_t *c, json_object *res);          /* default: spx_print_result */
    void (*on_sigint)(spx_t *c);                           /* default: detach once, then exit 130 */
    void (*on_winch)(spx_t *c);                            /* default: nothing */
    void (*on_pong)(spx_t *c, const uint8_t *p, size_t n); /* PONG on channel 0 */
    void (*on_writable)(spx_t *c, size_t avail);           /* the server granted DATA credit */
    void (*on_connect)(spx_t *c);                          /* connected, before the main OPEN */
} spx_hooks_t;

struct spx {
    /* Where to connect (global options); the connection is made by spx_run, after the
     * subcommand has checked its arguments. */
    const char *unix_path;
    const char *tcp_addr; /* HOST:PORT, or NULL for the unix socket */
    const char *token;
    exec_client_t *ec;
    int sock;    /* -1 until connected */
    uint32_t ch; /* main channel, 0 before OPEN */
    spx_hooks_t hooks;
    bool done;
    int exit_code;
    bool json_out; /* --json: results to stdout even where stderr is the default */
    bool verbose;  /* -v: HELLO and protocol warnings */
    int sigints;
    /* DATA forwarding from a local fd on the main channel. */
    int input_fd;        /* -1: none */
    bool input_started;  /* forwarding begins once set (after OPEN, or after an event) */
    bool input_eof;      /* local EOF reached and sent */
    bool input_send_eof; /* send EOF at local EOF (false for terminals) */
    /* Per-subcommand state. */
    const char *session;
    int out_fd; /* where DATA goes for download */
    void *op;
};

/* Sends OPEN req (consumed: the reference is dropped) as the main channel and runs the loop
 * until the main channel closes or a hook sets done. Returns the exit code. */
int spx_run(spx_t *c, json_object *req);

/* Opens a helper channel whose result is only reported on failure. req is consumed. */
void spx_open_aside(spx_t *c, json_object *req);

/* Runs the loop with no main channel until done (ping). */
int spx_run_bare(spx_t *c);

/* The default on_close: prints the result as pretty JSON (stdout), or its error on stderr;
 * exit code 0 or 1. */
void spx_print_result(spx_t *c, json_object *res);

/* Reports {"error":{"code","message"}} on stderr if res is one; returns true when it was. */
bool spx_report_error(const char *what, json_object *res);

/* Prints obj to fd, pretty when pretty, with a newline. */
void spx_print_json(int fd, json_object *obj, bool pretty);

/* Restores the terminal if spx_tty_raw changed it (also called at exit). */
void spx_tty_restore(void);
/* Puts fd's terminal in raw mode (restored at exit). Returns 0 or -errno. */
int spx_tty_raw(int fd);

/* Message on stderr, prefixed "sandpipe-exec: ". */
void spx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* spx_warn, then exit(code) (tty restored). */
_Noreturn void spx_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Builds {"op": op}. */
json_object *spx_req(const char *op);
/* A signal given as a number or a name (TERM, SIGTERM, term); -1 when unknown. */
int spx_parse_signal(const char *s);

/* Subcommands: argv[0] is the subcommand's name. Return the process exit code. */
typedef int (*spx_cmd_fn)(spx_t *c, int argc, char **argv);
typedef struct {
    const char *name;
    spx_cmd_fn fn;
    const char *usage;
} spx_cmd_t;

int spx_cmd_run(spx_t *c, int argc, char **argv);
int spx_cmd_action(spx_t *c, int argc, char **argv);
int spx_cmd_input(spx_t *c, int argc, char **argv);
int spx_cmd_key(spx_t *c, int argc, char **argv);
int spx_cmd_signal(spx_t *c, int argc, char **argv);
int spx_cmd_sessions(spx_t *c, int argc, char **argv);
int spx_cmd_env(spx_t *c, int argc, char **argv);
int spx_cmd_spawn(spx_t *c, int argc, char **argv);
int spx_cmd_attach(spx_t *c, int argc, char **argv);
int spx_cmd_ps(spx_t *c, int argc, char **argv);
int spx_cmd_kill(spx_t *c, int argc, char **argv);
int spx_cmd_term(spx_t *c, int argc, char **argv);
int spx_cmd_ls(spx_t *c, int argc, char **argv);
int spx_cmd_stat(spx_t *c, int argc, char **argv);
int spx_cmd_cat(spx_t *c, int argc, char **argv);
int spx_cmd_write(spx_t *c, int argc, char **argv);
int spx_cmd_mkdir(spx_t *c, int argc, char **argv);
int spx_cmd_mv(spx_t *c, int argc, char **argv);
int spx_cmd_rm(spx_t *c, int argc, char **argv);
int spx_cmd_upload(spx_t *c, int argc, char **argv);
int spx_cmd_download(spx_t *c, int argc, char **argv);
int spx_cmd_watch(spx_t *c, int argc, char **argv);
int spx_cmd_health(spx_t *c, int argc, char **argv);
int spx_cmd_ping(spx_t *c, int argc, char **argv);
int spx_cmd_raw(spx_t *c, int argc, char **argv);

/* Usage error for the current subcommand: prints its usage line, returns CLI_EXIT_USAGE. */
int spx_usage(const char *cmd);

#endif
