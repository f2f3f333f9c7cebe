/* sudo_wire.h — what sandpipe's sudo (sudo_client.c) and the executor's sudo broker
 * (sudo_broker.c) say to each other, over the sandbox's own abstract unix socket.
 *
 * The client sends one request: a 4-byte length (host order) then that many bytes of
 * NUL-terminated strings:
 *     "sudo1", user ("" = root), group ("" = the user's), flags, directory ("" = the client's),
 *     argc, argv[0..argc), envc, env[0..envc) (the caller's), setc, set[0..setc) (VAR=value
 *     given on sudo's command line: set whatever the environment rules keep)
 * with SCM_RIGHTS on its first byte: the client's stdin, stdout, stderr and working directory.
 * flags are letters: E keep the caller's environment, i login shell, s shell, b background,
 * P keep the caller's groups. Then, while the command runs, each byte the client sends is a
 * signal number to deliver to the command's process group; the broker ends with 4 bytes, the
 * command's wait status (W* macros). The client closing its end hangs the command up (SIGHUP).
 *
 * Everything in a request is the sandbox's own: the broker runs it as any user the sandbox has,
 * which is what sudo with NOPASSWD:ALL (upstream OpenHands' images) gives the agent anyway. */
#ifndef SP_SUDO_WIRE_H
#define SP_SUDO_WIRE_H

#define SUDO_SOCKET_NAME "sandpipe-sudo" /* abstract: "\0sandpipe-sudo", per network namespace */
#define SUDO_WIRE_MAGIC  "sudo1"
#define SUDO_REQUEST_MAX (4u << 20) /* argv and env together, as the kernel's ARG_MAX order */
#define SUDO_PASSED_FDS  4          /* stdin, stdout, stderr, cwd */
#define SUDO_SECURE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#endif
