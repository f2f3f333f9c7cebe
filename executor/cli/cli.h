/* cli.h — sandpipe-exec, the executor's debug client: shared state of one invocation.
 *
 * One invocation = one connection, one main channel (the subcommand's OPEN) and maybe a few
 * helper channels (a Ctrl-C sent as bash.signal). cli_loop.c owns the blocking poll() loop: it
 * reads the socket into exec_client, writes exec_client's output, forwards an input fd (stdin,
 * a file to upload) as DATA within the server's credit, and turns signals into hook calls
 * through a self-pipe. Each subcommand (cli_cmd_*.c) builds its OPEN request and sets hooks for
 * what to do with the main channel's frames; unset hooks get the defaults in cli_loop.c. */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io.h" /* io_write_all */
#include "exec_client.h"

#define CLI_EXIT_USAGE 2
#define CLI_EXIT_FAIL  1

typedef struct cli cli_t;

/* What a subcommand does with its main channel. All optional. */
typedef struct {
    void (*on_data)(cli_t *c, bool is_stderr, const uint8_t *p, size_t n); /* default: stdout/err */
    void (*on_json)(cli_t *c, json_object *msg);           /* default: one JSON line on stdout */
    void (*on_eof)(cli_t *c);                              /* default: nothing */
    void (*on_close)(cli_t *c, json_object *res);          /* default: cli_print_result */
    void (*on_sigint)(cli_t *c);                           /* default: detach once, then exit 130 */
    void (*on_winch)(cli_t *c);                            /* default: nothing */
    void (*on_pong)(cli_t *c, const uint8_t *p, size_t n); /* PONG on channel 0 */
    void (*on_writable)(cli_t *c, size_t avail);           /* the server granted DATA credit */
    void (*on_connect)(cli_t *c);                          /* connected, before the main OPEN */
} cli_hooks_t;

struct cli {
    /* Where to connect (global options); the connection is made by cli_run, after the
     * subcommand has checked its arguments. */
    const char *unix_path;
    const char *tcp_addr; /* HOST:PORT, or NULL for the unix socket */
    const char *token;
    exec_client_t *ec;
    int sock;    /* -1 until connected */
    uint32_t ch; /* main channel, 0 before OPEN */
    cli_hooks_t hooks;
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
int cli_run(cli_t *c, json_object *req);

/* Opens a helper channel whose result is only reported on failure. req is consumed. */
void cli_open_aside(cli_t *c, json_object *req);

/* Runs the loop with no main channel until done (ping). */
int cli_run_bare(cli_t *c);

/* The default on_close: prints the result as pretty JSON (stdout), or its error on stderr;
 * exit code 0 or 1. */
void cli_print_result(cli_t *c, json_object *res);

/* Reports {"error":{"code","message"}} on stderr if res is one; returns true when it was. */
bool cli_report_error(const char *what, json_object *res);

/* Prints obj to fd, pretty when pretty, with a newline. */
void cli_print_json(int fd, json_object *obj, bool pretty);

/* Restores the terminal if cli_tty_raw changed it (also called at exit). */
void cli_tty_restore(void);
/* Puts fd's terminal in raw mode (restored at exit). Returns 0 or -errno. */
int cli_tty_raw(int fd);

/* Message on stderr, prefixed "sandpipe-exec: ". */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_warn, then exit(code) (tty restored). */
_Noreturn void cli_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Builds {"op": op}. */
json_object *cli_req(const char *op);
/* A signal given as a number or a name (TERM, SIGTERM, term); -1 when unknown. */
int cli_parse_signal(const char *s);

/* Subcommands: argv[0] is the subcommand's name. Return the process exit code. */
typedef int (*cli_cmd_fn)(cli_t *c, int argc, char **argv);
typedef struct {
    const char *name;
    cli_cmd_fn fn;
    const char *usage;
} cli_cmd_t;

int cli_cmd_run(cli_t *c, int argc, char **argv);
int cli_cmd_action(cli_t *c, int argc, char **argv);
int cli_cmd_input(cli_t *c, int argc, char **argv);
int cli_cmd_key(cli_t *c, int argc, char **argv);
int cli_cmd_signal(cli_t *c, int argc, char **argv);
int cli_cmd_sessions(cli_t *c, int argc, char **argv);
int cli_cmd_env(cli_t *c, int argc, char **argv);
int cli_cmd_spawn(cli_t *c, int argc, char **argv);
int cli_cmd_attach(cli_t *c, int argc, char **argv);
int cli_cmd_ps(cli_t *c, int argc, char **argv);
int cli_cmd_kill(cli_t *c, int argc, char **argv);
int cli_cmd_term(cli_t *c, int argc, char **argv);
int cli_cmd_ls(cli_t *c, int argc, char **argv);
int cli_cmd_stat(cli_t *c, int argc, char **argv);
int cli_cmd_cat(cli_t *c, int argc, char **argv);
int cli_cmd_write(cli_t *c, int argc, char **argv);
int cli_cmd_mkdir(cli_t *c, int argc, char **argv);
int cli_cmd_mv(cli_t *c, int argc, char **argv);
int cli_cmd_rm(cli_t *c, int argc, char **argv);
int cli_cmd_upload(cli_t *c, int argc, char **argv);
int cli_cmd_download(cli_t *c, int argc, char **argv);
int cli_cmd_watch(cli_t *c, int argc, char **argv);
int cli_cmd_health(cli_t *c, int argc, char **argv);
int cli_cmd_ping(cli_t *c, int argc, char **argv);
int cli_cmd_raw(cli_t *c, int argc, char **argv);

/* Usage error for the current subcommand: prints its usage line, returns CLI_EXIT_USAGE. */
int cli_usage(const char *cmd);

#endif
