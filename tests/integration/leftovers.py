"""What the sandboxes of one state directory leave on the host, found from the host side and
never by a command line or a name: their processes (a cwd or root under the state directory,
as the provider starts each sandbox's top process in <state_dir>/<id>, a cgroup sandpipe/<id>
of one of its sandboxes, and everything below those), the loop devices backed by a file under
it (each sandbox's disk.img), the mounts under it (<id>/disk) and the cgroups sandpipe/<id>.

Sandboxes outlive their gateway on purpose (a restarted gateway re-attaches them), so whoever
made a state directory destroys what is left of it once its gateways are stopped: destroy(),
then check() says what survived. stack.Stack.stop does both for every integration test, and
bench/run.sh through this file's command line:
    python3 tests/integration/leftovers.py destroy|check|list STATE_DIR
(destroy: kill, unmount, detach, remove, then check; check: exit 1 naming what is left; list:
what is there now). One scan of /proc and one of /sys/block per look, cheap enough for every
test's teardown."""
import glob
import os
import re
import signal
import subprocess
import sys
import time

# cgroup.c: the v1 controllers a sandbox gets a group in; v2 is one hierarchy at the mount.
CGROUP_MOUNT = "/sys/fs/cgroup"
CGROUP_V1 = ("memory", "pids", "cpu", "cpuacct", "freezer")
NOT_SANDBOXES = ("uids",)  # <state_dir>/uids: the uid claims (sandbox_uid.c); .etc-*: sandbox_etc.h
DELETED = " (deleted)"  # what /proc and sysfs append to a path that was removed


def _under(path, root):
    """path (possibly "... (deleted)") is root or below it; root ends with '/'."""
    if path.endswith(DELETED):
        path = path[:-len(DELETED)]
    return path.startswith(root) or path + "/" == root


def _prefix(state_dir):
    """state_dir's real path with a '/' after it; refused above two levels deep ("/", "/tmp"):
    a mistaken argument must never make every process and mount of the host "left"."""
    path = os.path.realpath(state_dir)
    if path.count("/") < 2:
        raise ValueError(f"{state_dir}: not a state directory of a harness")
    return path + "/"


def sandbox_ids(state_dir):
    """The sandboxes' ids: the directories under state_dir (empty once it is gone)."""
    try:
        return {e.name for e in os.scandir(state_dir)
                if e.is_dir(follow_symlinks=False) and e.name not in NOT_SANDBOXES
                and not e.name.startswith(".")}
    except OSError:
        return set()


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _link(path):
    try:
        return os.readlink(path)
    except OSError:
        return ""


def processes(state_dir, ids=None):
    """{pid: why} of the live processes of the sandboxes under state_dir (and of ids, known
    from an earlier look), and the ids seen (those, the directories there and those a cwd or
    root names), from one pass over /proc."""
    root = _prefix(state_dir)
    ids = sandbox_ids(state_dir) | set(ids or ())
    seen, parents = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        stat = _read(f"/proc/{d}/stat").rsplit(")", 1)
        fields = stat[1].split() if len(stat) == 2 else []
        if len(fields) < 2 or fields[0] in "ZX":
            continue  # gone, or a zombie: nothing of it is left but its exit status
        pid = int(d)
        if pid == os.getpid():
            continue  # the harness itself, whatever its working directory
        parents[pid] = int(fields[1])
        cwd, top = _link(f"/proc/{d}/cwd"), _link(f"/proc/{d}/root")
        cg = re.findall(r"/sandpipe/([^/\n]+)", _read(f"/proc/{d}/cgroup"))
        seen[pid] = (cwd, top, cg)
    found = {}
    for pid, (cwd, top, cg) in seen.items():
        for what, path in (("cwd", cwd), ("root", top)):
            if _under(path, root):
                found[pid] = f"{what} {path}"
                rest = path[len(root):]
                if rest:
                    ids.add(rest.split("/")[0].removesuffix(DELETED))
    for pid, (_, _, cg) in seen.items():
        mine = [i for i in cg if i in ids]
        if pid not in found and mine:
            found[pid] = f"cgroup sandpipe/{mine[0]}"
    children = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(found)
    while todo:
        parent = todo.pop()
        for child in children.get(parent, []):
            if child not in found:
                found[child] = f"child of {parent}"
                todo.append(child)
    return {p: f"{_read(f'/proc/{p}/comm').strip()}: {why}" for p, why in found.items()}, ids


def loop_devices(state_dir):
    """{/dev/loopN: backing file} of the loop devices backed by a file under state_dir."""
    root = _prefix(state_dir)
    found = {}
    for f in glob.glob("/sys/block/loop*/loop/backing_file"):
        backing = _read(f).strip()
        if _under(backing, root):
            found["/dev/" + f.split("/")[3]] = backing
    return found


def mounts(path):
    """Mount points at or below path in our mount namespace, deepest first."""
    root = _prefix(path)
    found = []
    for line in _read("/proc/self/mountinfo").splitlines():
        mp = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
        if _under(mp, root):
            found.append(mp)
    return sorted(found, key=len, reverse=True)


def _self_cgroups():
    """{controller: our cgroup path} from /proc/self/cgroup ("" for v2)."""
    own = {}
    for line in _read("/proc/self/cgroup").splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            own[c] = path
    return own


def cgroup_parents():
    """The directories a gateway started by us makes sandboxes' groups in (cgroup.c):
    <hierarchy>/sandpipe, or <hierarchy>/<the gateway's own group>/sandpipe where the first is
    not writable; v2 at the mount, v1 one hierarchy per controller."""
    own = _self_cgroups()
    if os.path.exists(f"{CGROUP_MOUNT}/cgroup.controllers"):
        hierarchies = [(CGROUP_MOUNT, own.get("", "/"))]
    else:
        hierarchies = [(f"{CGROUP_MOUNT}/{c}", own.get(c, "/")) for c in CGROUP_V1]
    out = []
    for h, mine in hierarchies:
        for p in (f"{h}/sandpipe", f"{h}{mine.rstrip('/')}/sandpipe"):
            if p not in out:
                out.append(p)
    return out


def cgroups(ids):
    """The cgroup directories of the sandboxes ids that exist."""
    return [f"{p}/{i}" for p in cgroup_parents() for i in sorted(ids) if os.path.isdir(f"{p}/{i}")]


def by_kind(state_dir, ids=None):
    """What the sandboxes of state_dir (and of ids, known from an earlier look) left on the
    host: {"process": [...], "loop device": [...], "mount": [...], "cgroup": [...]}."""
    procs, ids = processes(state_dir, ids)
    return {"process": [f"{p} ({why})" for p, why in sorted(procs.items())],
            "loop device": [f"{d} backed by {f}" for d, f in sorted(loop_devices(state_dir).items())],
            "mount": mounts(state_dir),
            "cgroup": cgroups(ids)}


def left(state_dir, ids=None):
    """by_kind() as lines ("process 123 (bash: cwd ...)"), [] when nothing is left."""
    return [f"{kind} {what}" for kind, items in by_kind(state_dir, ids).items() for what in items]


def _thaw(groups):
    for g in groups:  # a frozen process cannot die
        for f, v in (("freezer.state", "THAWED"), ("cgroup.freeze", "0")):
            if os.path.exists(f"{g}/{f}"):
                try:
                    with open(f"{g}/{f}", "w") as fh:
                        fh.write(v)
                except OSError:
                    pass


def destroy(state_dir, settle=5):
    """Ends everything the sandboxes of state_dir left, as the gateway's destroy does: SIGKILL to
    their processes (their cgroups thawed first; a sandbox's init ignores SIGTERM), their disks
    unmounted, the loop devices backed by their images detached, their cgroups removed. Waits
    up to settle seconds for the kernel to let go (a lazily unmounted disk frees its loop device
    when its last user is gone). Returns left(state_dir): what survived, [] normally."""
    ids = set()
    deadline = time.monotonic() + settle
    while True:
        procs, ids = processes(state_dir, ids)
        if procs:
            _thaw(cgroups(ids))
            for pid in procs:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if not procs or time.monotonic() > deadline:  # then their disks are free to unmount
            for m in mounts(state_dir):
                if subprocess.run(["umount", m], capture_output=True).returncode != 0:
                    subprocess.run(["umount", "-l", m], capture_output=True)
            for dev in loop_devices(state_dir):
                subprocess.run(["losetup", "-d", dev], capture_output=True)
            for g in cgroups(ids):
                try:
                    os.rmdir(g)
                except OSError:
                    pass
            rest = left(state_dir, ids)
            if not rest or time.monotonic() > deadline:
                return rest
        time.sleep(0.02)


def check(state_dir, settle=5, ids=None):
    """Raises AssertionError naming what the sandboxes of state_dir (and of ids) left, after
    waiting up to settle seconds for it to go (a killed process's exit, a loop device's
    autoclear)."""
    deadline = time.monotonic() + settle
    rest = left(state_dir, ids)
    while rest and time.monotonic() < deadline:
        time.sleep(0.05)
        rest = left(state_dir, ids)
    if rest:
        raise AssertionError(f"left on the host by the sandboxes of {state_dir}:\n  " + "\n  ".join(rest))


def main(argv):
    if len(argv) != 3 or argv[1] not in ("destroy", "check", "list"):
        sys.exit(__doc__)
    cmd, state_dir = argv[1], argv[2]
    if cmd == "list":
        for line in left(state_dir):
            print(line)
        return 0
    try:
        if cmd == "destroy":
            found = {k: len(v) for k, v in by_kind(state_dir).items() if v}
            if found:
                plural = {"process": "processes"}
                print(f"{state_dir}: destroying what its sandboxes left: " + ", ".join(
                    f"{n} {plural.get(k, k + 's') if n > 1 else k}" for k, n in found.items()), file=sys.stderr)
            rest = destroy(state_dir)  # (it knows the ids its processes named: the dir may be gone)
            if rest:
                raise AssertionError(f"left on the host by the sandboxes of {state_dir}:\n  "
                                     + "\n  ".join(rest))
        else:
            check(state_dir)
    except AssertionError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
