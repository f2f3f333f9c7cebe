/* sandbox_log.h — a sandbox's stdout/stderr (its executor's log, bwrap's errors) into the
 * gateway's log, bounded.
 *
 * provider_spawn hands the read end of the sandbox's output pipe to sandbox_log_watch, which
 * reads it on the loop and logs each line as "sandbox <id>: <line>" (bytes that are not printable
 * ASCII escaped as \xNN, lines cut at SANDBOX_LOG_LINE), at most SANDBOX_LOG_RATE bytes a second
 * per sandbox after a burst of SANDBOX_LOG_BURST: the sandbox is hostile (any of its processes
 * may hold the pipe) and the gateway's log is the host's disk. What is over the rate is dropped
 * and a line says how much. The watch ends when every process holding the pipe has. A gateway
 * that restarts cannot get the pipe of a running sandbox back: its executor's later lines are
 * lost (writes fail, never block it). */
#ifndef SP_SANDBOX_LOG_H
#define SP_SANDBOX_LOG_H

#define SANDBOX_LOG_LINE  512
#define SANDBOX_LOG_RATE  4096
#define SANDBOX_LOG_BURST (64 * 1024)

/* Takes fd (non-blocking; closed when the pipe ends). For provider_log_sink. */
void sandbox_log_watch(const char *sandbox_id, int fd);

/* The dropped byte count of every watch since the start (metrics). */
unsigned long long sandbox_log_dropped(void);

#endif
