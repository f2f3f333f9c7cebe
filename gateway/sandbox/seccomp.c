/* seccomp.c — the sandboxes' seccomp filter: one table of rules (below), given to bwrap as BPF
 * (libseccomp) and to Docker as a profile in its JSON form. See seccomp.h. The BPF is built for
 * each sandbox (well under a millisecond); the Docker profile once. */
#include "seccomp.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "json_util.h"
#include "xalloc.h"

/* clone's flags are its first argument except on s390, where the stack comes first. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

typedef enum {
    ALWAYS,
    IF_NEWUSER_A0,    /* only when arg 0 has CLONE_NEWUSER (unshare) */
    IF_NEWUSER_CLONE, /* only when clone's flags have CLONE_NEWUSER */
} when_t;

typedef struct {
    const char *name;
    int err; /* the errno the call fails with */
    when_t when;
    bool core; /* must exist on the native architecture (the others may be absent there) */
} rule_t;

static const rule_t rules[] = {
    /* Nested user namespaces: inside a new one a process has every capability again, and with
     * them the kernel's whole privileged surface (mounts, netfilter, ...), where most container
     * escapes start. bwrap's --disable-userns also caps them at the kernel level. clone3 passes
     * its flags in memory a filter cannot read: ENOSYS, so glibc and others fall back to
     * clone, which is filtered. */
    {"unshare", EPERM, IF_NEWUSER_A0, true},
    {"clone", EPERM, IF_NEWUSER_CLONE, true},
    {"clone3", ENOSYS, ALWAYS, true},
    {"setns", EPERM, ALWAYS, true},
    /* Mounts, old and new API: the sandbox's file system is what the provider made. */
    {"mount", EPERM, ALWAYS, true},
    {"umount2", EPERM, ALWAYS, true},
    {"umount", EPERM, ALWAYS, false},
    {"pivot_root", EPERM, ALWAYS, true},
    {"move_mount", EPERM, ALWAYS, true},
    {"open_tree", EPERM, ALWAYS, true},
    {"fsopen", EPERM, ALWAYS, true},
    {"fsmount", EPERM, ALWAYS, true},
    {"fspick", EPERM, ALWAYS, true},
    {"fsconfig", EPERM, ALWAYS, true},
    {"mount_setattr", EPERM, ALWAYS, true},
    /* The kernel keyring is not namespaced: keys would be shared with the host. */
    {"keyctl", EPERM, ALWAYS, true},
    {"add_key", EPERM, ALWAYS, true},
    {"request_key", EPERM, ALWAYS, true},
    /* Large interfaces with a long record of kernel exploits, not needed to run programs. */
    {"bpf", EPERM, ALWAYS, true},
    {"perf_event_open", EPERM, ALWAYS, true},
    {"userfaultfd", EPERM, ALWAYS, true}, /* makes kernel races easy to win */
    /* io_uring: its operations run in kernel workers that no seccomp filter sees (an SQE can
     * open, connect, ... without a system call to filter), and it has been among the largest
     * sources of kernel privilege escalations; Docker, ChromeOS, Android and Google's servers
     * turn it off. ENOSYS: every user has a fallback for kernels without it. */
    {"io_uring_setup", ENOSYS, ALWAYS, true},
    {"io_uring_enter", ENOSYS, ALWAYS, true},
    {"io_uring_register", ENOSYS, ALWAYS, true},
    /* Reaching around the mount namespace with a file handle. */
    {"open_by_handle_at", EPERM, ALWAYS, true},
    /* Administering the host. */
    {"kexec_load", EPERM, ALWAYS, true},
    {"kexec_file_load", EPERM, ALWAYS, false},
    {"init_module", EPERM, ALWAYS, true},
    {"finit_module", EPERM, ALWAYS, true},
    {"delete_module", EPERM, ALWAYS, true},
    {"reboot", EPERM, ALWAYS, true},
    {"swapon", EPERM, ALWAYS, true},
    {"swapoff", EPERM, ALWAYS, true},
    {"acct", EPERM, ALWAYS, true},
    {"quotactl", EPERM, ALWAYS, true},
    {"quotactl_fd", EPERM, ALWAYS, true},
    {"syslog", EPERM, ALWAYS, true},
    /* Setting the clock (reading it, adjtimex with no modes included, stays allowed, as in
     * Docker's profile: changing it needs CAP_SYS_TIME on the host anyway). */
    {"settimeofday", EPERM, ALWAYS, true},
    {"clock_settime", EPERM, ALWAYS, true},
    {"clock_settime64", EPERM, ALWAYS, false},
    {"stime", EPERM, ALWAYS, false},
    /* Obsolete, or x86 port and vm86 access: nothing current uses them. */
    {"uselib", EPERM, ALWAYS, false},
    {"ustat", EPERM, ALWAYS, false},
    {"sysfs", EPERM, ALWAYS, false},
    {"_sysctl", EPERM, ALWAYS, false},
    {"lookup_dcookie", EPERM, ALWAYS, false},
    {"nfsservctl", EPERM, ALWAYS, false},
    {"create_module", EPERM, ALWAYS, false},
    {"get_kernel_syms", EPERM, ALWAYS, false},
    {"query_module", EPERM, ALWAYS, false},
    {"vm86", EPERM, ALWAYS, false},
    {"vm86old", EPERM, ALWAYS, false},
    {"iopl", EPERM, ALWAYS, false},
    {"ioperm", EPERM, ALWAYS, false},
};

/* 32-bit programs go through the same rules, not around them (and are not killed for their
 * architecture). */
static void
add_companion_arches(scmp_filter_ctx ctx)
{
    uint32_t native = seccomp_arch_native();
    if (native == SCMP_ARCH_X86_64) {
        seccomp_arch_add(ctx, SCMP_ARCH_X86);
        seccomp_arch_add(ctx, SCMP_ARCH_X32);
    } else if (native == SCMP_ARCH_AARCH64) {
        seccomp_arch_add(ctx, SCMP_ARCH_ARM);
    }
}

static int
add_rule(scmp_filter_ctx ctx, const rule_t *r, err_t *err)
{
    int nr = seccomp_syscall_resolve_name(r->name);
    if (nr == __NR_SCMP_ERROR)
        return r->core ? err_set(err, ENOSYS, "seccomp: libseccomp does not know %s", r->name) : 0;
    uint32_t act = SCMP_ACT_ERRNO((uint32_t)r->err);
    int rc;
    if (r->when == ALWAYS)
        rc = seccomp_rule_add(ctx, act, nr, 0);
    else
        rc = seccomp_rule_add(ctx, act, nr, 1,
                              SCMP_CMP(r->when == IF_NEWUSER_A0 ? 0 : CLONE_FLAGS_ARG,
                                       SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    if (rc < 0 && r->core)
        return err_set(err, -rc, "seccomp: rule for %s: %s", r->name, strerror(-rc));
    return 0;
}

/* The program compiled into a sealed memfd (libseccomp: ~1-2 ms of a cold start here). */
static int
compile(err_t *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return err_set(err, ENOMEM, "seccomp_init failed");
    add_companion_arches(ctx);
    int e = 0, fd = -1;
    for (size_t i = 0; e == 0 && i < sizeof rules / sizeof rules[0]; i++)
        e = add_rule(ctx, &rules[i], err);
    if (e == 0 && (fd = memfd_create("sandpipe-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0)
        e = err_set(err, errno, "memfd_create: %s", strerror(errno));
    int rc;
    if (e == 0 && (rc = seccomp_export_bpf(ctx, fd)) < 0)
        e = err_set(err, -rc, "seccomp_export_bpf: %s", strerror(-rc));
    if (e == 0 &&
        (lseek(fd, 0, SEEK_SET) < 0 ||
         fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK) < 0))
        e = err_set(err, errno, "seccomp memfd: %s", strerror(errno));
    seccomp_release(ctx);
    if (e < 0 && fd >= 0)
        close(fd);
    return e < 0 ? e : fd;
}

int
seccomp_filter_fd(err_t *err)
{
    /* Compiled once: the rules never change in a gateway's life. Each caller gets its own read
     * of the sealed memfd (a new open file, at offset 0, read-only), which nobody can change. */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* starts run on several threads */
    static int compiled = -1;
    pthread_mutex_lock(&lock);
    if (compiled < 0)
        compiled = compile(err);
    int have = compiled;
    if (compiled < 0)
        compiled = -1; /* asked again by the next start */
    pthread_mutex_unlock(&lock);
    if (have < 0)
        return have;
    char path[48];
    snprintf(path, sizeof path, "/proc/self/fd/%d", have);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : err_set(err, errno, "seccomp filter: %s: %s", path, strerror(errno));
}

/* Docker's names for the architectures add_companion_arches adds. */
static void
docker_arches(json_object *a)
{
    uint32_t native = seccomp_arch_native();
    const char *names[3] = {NULL, NULL, NULL};
    if (native == SCMP_ARCH_X86_64) {
        names[0] = "SCMP_ARCH_X86_64";
        names[1] = "SCMP_ARCH_X86";
        names[2] = "SCMP_ARCH_X32";
    } else if (native == SCMP_ARCH_AARCH64) {
        names[0] = "SCMP_ARCH_AARCH64";
        names[1] = "SCMP_ARCH_ARM";
    }
    for (size_t i = 0; i < 3 && names[i]; i++)
        json_object_array_add(a, json_object_new_string(names[i]));
}

/* One Docker rule: {"names":[name],"action":"SCMP_ACT_ERRNO","errnoRet":N[,"args":[...]]}. */
static json_object *
docker_rule(const rule_t *r)
{
    json_object *o = json_object_new_object(), *names = json_object_new_array();
    json_object_array_add(names, json_object_new_string(r->name));
    json_set(o, "names", names);
    json_set_str(o, "action", "SCMP_ACT_ERRNO");
    json_set_int(o, "errnoRet", r->err);
    if (r->when != ALWAYS) {
        json_object *args = json_object_new_array(), *a = json_object_new_object();
        json_set_int(a, "index", r->when == IF_NEWUSER_A0 ? 0 : CLONE_FLAGS_ARG);
        json_set_int(a, "value", CLONE_NEWUSER);
        json_set_int(a, "valueTwo", CLONE_NEWUSER);
        json_set_str(a, "op", "SCMP_CMP_MASKED_EQ");
        json_object_array_add(args, a);
        json_set(o, "args", args);
    }
    return o;
}

const char *
seccomp_docker_profile(void)
{
    static char *profile;
    if (profile)
        return profile;
    json_object *p = json_object_new_object(), *arches = json_object_new_array(),
                *calls = json_object_new_array();
    json_set_str(p, "defaultAction", "SCMP_ACT_ALLOW");
    docker_arches(arches);
    json_set(p, "architectures", arches);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (seccomp_syscall_resolve_name(rules[i].name) != __NR_SCMP_ERROR)
            json_object_array_add(calls, docker_rule(&rules[i]));
    json_set(p, "syscalls", calls);
    profile = xstrdup(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN));
    json_object_put(p);
    return profile;
}
