"""The floor of a cold bwrap sandbox: bubblewrap alone with the namespaces and mounts a sandbox of
gateway/sandbox/provider_bwrap.c gets (host_root and build_options, host profile, kept in step
by hand: a mount added there belongs here), running `true` or `bash -c true` instead of the
executor. Left out, and said so next to the figure: the gateway's own steps (the disk, the
cgroup, the uid switch, the user namespace it makes for root inside, the seccomp filter, the
executor's HELLO): what they cost is what the ratio to this floor shows."""
import atexit
import os
import shutil
import tempfile
import time

ETC_FILES = ["/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
             "/etc/localtime", "/etc/timezone", "/etc/nsswitch.conf", "/etc/ssl/certs",
             "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/bash.bashrc", "/etc/profile",
             "/etc/profile.d", "/etc/inputrc", "/etc/terminfo", "/etc/mime.types", "/etc/protocols",
             "/etc/services", "/etc/gai.conf", "/etc/host.conf", "/etc/debian_version",
             "/etc/os-release", "/etc/lsb-release", "/etc/python3", "/etc/magic", "/etc/vim",
             "/etc/fonts", "/etc/matplotlibrc", "/etc/skel"]
GENERATED = {"passwd": b"root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/workspace:/bin/bash\n",
             "group": b"root:x:0:\nuser:x:1000:\n", "hosts": b"127.0.0.1 localhost sandbox\n",
             "hostname": b"sandbox\n", "resolv.conf": b"nameserver 192.0.2.53\n"}


def _memfd(name, data):
    fd = os.memfd_create(name, 0)  # inheritable: bwrap reads it as --ro-bind-data
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_etc = None


def etc_copy():
    """A copy of ETC_FILES and GENERATED in a directory of its own, as sandbox_etc.c makes one
    (a named symlink followed, symlinks inside directories kept); made once per run."""
    global _etc
    if _etc is None:
        _etc = tempfile.mkdtemp(prefix="sp-floor-etc-")
        atexit.register(shutil.rmtree, _etc, True)
        for f in ETC_FILES:
            dst = os.path.join(_etc, os.path.relpath(f, "/etc"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.isdir(f):
                shutil.copytree(f, dst, symlinks=True, ignore_dangling_symlinks=True)
            elif os.path.isfile(f):
                shutil.copy2(f, dst)
        for name, data in GENERATED.items():
            with open(os.path.join(_etc, name), "wb") as out:
                out.write(data if name != "resolv.conf" else b"")
        os.chmod(_etc, 0o755)
    return _etc


def command(workspace, executor, inside):
    """(argv, fds to pass): bwrap with a sandbox's options running inside (a list)."""
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    a = [bwrap, "--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc",
         "--unshare-uts", "--unshare-cgroup-try", "--unshare-net", "--new-session",
         "--cap-drop", "ALL", "--uid", "1000", "--gid", "1000", "--hostname", "sandbox"]
    for d in ("/etc", "/opt", "/opt/sandpipe", "/opt/sandpipe/bin", "/var"):
        a += ["--perms", "0755", "--dir", d]
    a += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(top):
            a += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            a += ["--ro-bind", top, top]
    a += ["--ro-bind", etc_copy(), "/etc"]  # sandbox_etc.h: one copy, one bind
    fd = _memfd("resolv.conf", GENERATED["resolv.conf"])
    fds = [fd]
    a += ["--perms", "0644", "--ro-bind-data", str(fd), "/etc/resolv.conf"]
    a += ["--proc", "/proc", "--dev", "/dev"]
    for where in ("/dev/shm", "/tmp", "/var/tmp"):
        a += ["--perms", "1777", "--size", str(1 << 30), "--tmpfs", where]
    sudo = os.path.join(os.path.dirname(executor), "sandpipe-sudo")
    if os.access(sudo, os.X_OK):
        a += ["--ro-bind", sudo, "/usr/bin/sudo" if os.path.exists("/usr/bin/sudo") else "/opt/sandpipe/bin/sudo"]
    a += ["--bind", workspace, "/workspace", "--ro-bind", executor, "/opt/sandpipe/sandpipe-executor",
          "--ro-bind-try", os.path.join(os.path.dirname(executor), "plugins"), "/opt/sandpipe/plugins",
          "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/workspace", *inside]
    return a, fds


def run_once(workspace, executor, inside):
    """Wall time in ms of one bwrap ... inside, from spawn to its exit (posix_spawn, as root)."""
    argv, fds = command(workspace, executor, inside)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, {"PATH": "/usr/bin:/bin"})
        _, status = os.waitpid(pid, 0)
        dt = (time.perf_counter() - t0) * 1000
    finally:
        for fd in fds:
            os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"bare bwrap failed: {argv}")
    return dt
