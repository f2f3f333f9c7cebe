/* seccomp.h — the seccomp filter every bwrap sandbox runs under, built with libseccomp.
 *
 * In the spirit of Docker's default profile, as a deny list (everything else is allowed, as
 * the user namespace already withholds privileges): system calls that give a sandbox more
 * kernel to attack or more reach than running programs needs. Denied calls fail with EPERM
 * (ENOSYS where callers fall back when a call "does not exist": clone3, io_uring); the full
 * list and the reasons are in seccomp.c and docs/operations.md. ptrace stays allowed (gdb and
 * strace inside a sandbox are useful; the sandbox's own processes are all it can reach).
 *
 * bwrap installs the program (`--seccomp FD`) after setting the sandbox up, just before it
 * executes the executor, so everything in the sandbox runs under it. Docker containers get the
 * same rules as a Docker seccomp profile (SecurityOpt "seccomp=<json>"), instead of Docker's
 * default profile. */
#ifndef SP_SECCOMP_H
#define SP_SECCOMP_H

#include "err.h"

/* A sealed memfd (O_CLOEXEC, offset 0, read-only; compiled once, each call its own open file)
 * holding the filter as classic BPF for the native architecture and its 32-bit companions (x86 and
 * x32 on x86-64, arm on aarch64), the form bwrap's --seccomp reads. Returns the fd or < 0 with err
 * set. */
int seccomp_filter_fd(err_t *err);

/* The same rules as a Docker seccomp profile (JSON text: defaultAction allow, the architectures
 * above, one SCMP_ACT_ERRNO entry with errnoRet per rule, clone/unshare's CLONE_NEWUSER as a
 * masked argument comparison). Built on the first call and kept: a static string. */
const char *seccomp_docker_profile(void);

#endif
