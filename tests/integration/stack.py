"""Starts the real parts for gateway tests: a redis-server and sandpipe-gateway on free
loopback ports, with real sandboxes (bwrap by default) running the real executor."""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from spexec import ROOT, MODE
from wsclient import WS, jwt

BUILD = os.path.join(ROOT, "build", MODE)


SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def sanitizer_reports(root):
    """The sanitizer reports (ASan, LSan, UBSan) in the logs under root: a process that died of
    one shows up in a test only as a missing answer, so the stack says so itself."""
    found = []
    for d, _, files in os.walk(root):
        for f in files:
            if not (f.endswith(".log") or f.endswith(".stderr")):
                continue
            path = os.path.join(d, f)
            try:
                with open(path, errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            for m in SANITIZER_MARKS:
                i = text.find(m)
                if i >= 0:
                    start = text.rfind("\n", 0, max(0, i - 200)) + 1
                    found.append(f"{os.path.relpath(path, root)}: {text[start:i + 1500]}")
                    break
    return found


def terminate(p, grace=10):
    """Ends a process we started: SIGTERM, up to grace seconds to go, then SIGKILL; reaped."""
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


CGROUP_BASES = ["/sys/fs/cgroup/" + c for c in ("memory", "pids", "cpu", "cpuacct", "freezer",
                                               "cpu,cpuacct")] + ["/sys/fs/cgroup"]


def proc_parents():
    """{pid: ppid} of every process on the host, from /proc."""
    parents = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parents[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return parents


def proc_children():
    """{ppid: [pid, ...]} of every process on the host, from /proc."""
    children = {}
    for pid, ppid in proc_parents().items():
        children.setdefault(ppid, []).append(pid)
    return children


def proc_tree(pid):
    """pid and all its descendants (pids alive now)."""
    children, out, todo = proc_children(), [], [pid]
    while todo and len(out) < 10000:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cmdline(pid):
    """A process's argv (bytes), [] once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def executor_pid(sandbox_pid):
    """The host pid of the executor running under a sandbox's top (bwrap) process, or None."""
    for p in proc_tree(sandbox_pid):
        argv = cmdline(p)
        if argv and argv[0].endswith(b"sandpipe-executor"):
            return p
    return None


def sandbox_processes(state_dir):
    """Host pids of the sandboxes under state_dir, and their ids. Nothing a sandbox can read
    names its host directory (not even bwrap's command line), so they are found from the host
    side: the provider starts each sandbox with <state_dir>/<id> as the working directory of
    its top process (the outer bwrap, or the local provider's executor), and every other
    process of the sandbox descends from that one."""
    root = os.path.realpath(state_dir) + "/"
    tops, ids = set(), set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{d}/cwd")
        except OSError:
            continue
        if cwd.startswith(root):
            tops.add(int(d))
            ids.add(cwd[len(root):].split("/")[0])
    children, pids, todo = proc_children(), set(tops), list(tops)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in pids:
                pids.add(child)
                todo.append(child)
    return pids, ids


def thaw_cgroups(ids):
    for sid in ids:
        for path, value in ((f"/sys/fs/cgroup/freezer/sandpipe/{sid}/freezer.state", "THAWED"),
                            (f"/sys/fs/cgroup/sandpipe/{sid}/cgroup.freeze", "0")):
            try:
                with open(path, "w") as f:
                    f.write(value)
            except OSError:
                pass


def kill_sandboxes(state_dir):
    """SIGKILLs every process of the sandboxes under state_dir (thawed first: a frozen process
    cannot die) and removes their cgroups. Sandboxes outlive the gateway by design, and their
    pid-namespace init ignores SIGTERM from outside."""
    ids = set(os.listdir(state_dir)) if os.path.isdir(state_dir) else set()
    for _ in range(3):
        pids, found = sandbox_processes(state_dir)
        ids |= found
        if not pids:
            break
        thaw_cgroups(ids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
    for sid in sorted(ids):
        for base in CGROUP_BASES:
            path = f"{base}/sandpipe/{sid}"
            deadline = time.monotonic() + 2
            while os.path.isdir(path) and time.monotonic() < deadline:
                try:
                    os.rmdir(path)
                except OSError:
                    time.sleep(0.05)


class Stack:
    def __init__(self, provider=None, pool=2, extra=(), redis=True, wrap=(), gateway_id="gw-test"):
        self.gateway_id = gateway_id
        self.tmp = tempfile.mkdtemp(prefix="sp-stack-")
        os.chmod(self.tmp, 0o711)  # sandboxes run as their own uids: the state dir is below
        self.provider = provider or os.environ.get("SANDPIPE_TEST_PROVIDER", "bwrap")
        self.secret_file = os.path.join(self.tmp, "secret")
        with open(self.secret_file, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        os.chmod(self.secret_file, 0o600)
        self.secret = open(self.secret_file).read().strip()
        self.redis_sock = os.path.join(self.tmp, "redis.sock")
        self.state_dir = os.path.join(self.tmp, "sandboxes")
        self.redis_proc = None
        if redis:
            self.start_redis()
        self.port = free_port()
        self.gw_sock = os.path.join(self.tmp, "gateway.sock")  # the same listener for nginx
        self.pool = pool
        self.extra = list(extra)
        self.wrap = list(wrap)  # a command the gateway runs under (e.g. unshare), or nothing
        self.gw = None
        self.start_gateway()

    def start_redis(self):
        self.redis_proc = subprocess.Popen(
            ["redis-server", os.path.join(ROOT, "redis", "redis.conf"), "--port", "0",
             "--unixsocket", self.redis_sock, "--dir", self.tmp, "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(self.redis_sock):
                return
            time.sleep(0.02)
        raise RuntimeError("redis did not start")

    def redis(self, *args):
        out = subprocess.run(["redis-cli", "-s", self.redis_sock, *args], capture_output=True, text=True)
        return out.stdout.strip()

    def start_gateway(self, wait=True):
        self.log = open(os.path.join(self.tmp, "gateway.log"), "a")
        self.gw = subprocess.Popen(
            [*self.wrap, os.path.join(BUILD, "sandpipe-gateway"), "--listen", f"127.0.0.1:{self.port}",
             "--listen-unix", self.gw_sock,
             "--redis", "unix:" + self.redis_sock, "--provider", self.provider,
             "--state-dir", self.state_dir, "--secret-file", self.secret_file,
             "--pool", str(self.pool), "--id", self.gateway_id,
             *(["--image", os.environ["SANDPIPE_TEST_IMAGE"]] if os.environ.get("SANDPIPE_TEST_IMAGE") else []),
             *self.extra,
             *(["--executor", os.environ["SANDPIPE_EXECUTOR"]] if os.environ.get("SANDPIPE_EXECUTOR") else [])],
            stdout=self.log, stderr=subprocess.STDOUT)
        if not wait:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.gw.poll() is not None:
                    break
                time.sleep(0.02)
        raise RuntimeError("gateway did not start: " + self.gateway_log())

    def gateway_log(self):
        with open(os.path.join(self.tmp, "gateway.log")) as f:
            return f.read()

    def token(self, sub="alice", role="user", session=None, exp_in=3600):
        return jwt(self.secret, sub=sub, role=role, session=session, exp_in=exp_in)

    def ws(self, path, token=None, **kw):
        sep = "&" if "?" in path else "?"
        if token is None:
            token = self.token()
        if token:
            path = f"{path}{sep}token={token}"
        return WS("127.0.0.1", self.port, path, **kw)

    def control(self, token=None):
        return self.ws("/ws/control", token)

    def call(self, ws, method, params=None, timeout=30):
        ws.send_json({"id": 1, "method": method, "params": params or {}})
        return ws.recv_json(timeout)

    def create_session(self, token=None, params=None):
        c = self.control(token)
        r = self.call(c, "session.create", params)
        c.close()
        if r.get("type") != "result":
            raise RuntimeError(f"session.create failed: {r}")
        return r["result"]["id"]

    def kill_gateway(self, sig=signal.SIGKILL):
        self.gw.send_signal(sig)
        self.gw.wait(10)

    def stop(self):
        terminate(self.gw)
        kill_sandboxes(self.state_dir)
        if self.provider == "docker":
            remove_containers(self.state_dir)
        # Sandboxes' own disks (loop-mounted images) are mounted on the host: unmount them, or
        # rmtree would leave their mounts and loop devices behind.
        unmount_under(self.tmp)
        if self.redis_proc:
            self.redis_proc.terminate()
            self.redis_proc.wait(5)
        self.log.close()
        reports = sanitizer_reports(self.tmp)
        shutil.rmtree(self.tmp, ignore_errors=True)
        if reports:
            raise AssertionError("sanitizer report in the stack's logs:\n" + "\n".join(reports))


def containers_under(state_dir):
    """Docker containers of the sandboxes under state_dir (by their sandpipe.dir label)."""
    root = os.path.realpath(state_dir) + "/"
    out = subprocess.run(["docker", "ps", "-aq", "--no-trunc", "--filter", "label=sandpipe.dir"],
                         capture_output=True, text=True, timeout=60).stdout.split()
    found = []
    for cid in out:
        d = subprocess.run(["docker", "inspect", "-f", '{{index .Config.Labels "sandpipe.dir"}}', cid],
                           capture_output=True, text=True, timeout=60).stdout.strip()
        if d.startswith(root):
            found.append(cid)
    return found


def remove_containers(state_dir):
    ids = containers_under(state_dir)
    if ids:
        subprocess.run(["docker", "rm", "-f", *ids], capture_output=True, timeout=120)


def mounts_under(path):
    """Mount points at or below path, from /proc/self/mountinfo, deepest first."""
    path = os.path.realpath(path)
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4]
            mp = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), mp)
            if mp == path or mp.startswith(path + "/"):
                found.append(mp)
    return sorted(found, key=len, reverse=True)


def unmount_under(path):
    for mp in mounts_under(path):
        subprocess.run(["umount", "-l", mp], capture_output=True)


def run_action(ws, command, ident="a", timeout=30, **args):
    """Sends a run action on a session socket; returns (seq, output text, observation)."""
    return act(ws, {"action": "run", "args": {"command": command, **args}}, ident, timeout)


def act(ws, action, ident="x", timeout=30):
    """Sends any action on a session socket; returns (seq, output text, observation). An error
    message raises RuntimeError with the message."""
    ws.send_json({"type": "action", "id": ident, "action": action})
    seq, out = None, []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = ws.recv_json(max(0.1, deadline - time.monotonic()))
        if m.get("type") == "ack" and m.get("id") == ident:
            seq = m["seq"]
        elif m.get("type") == "output" and m.get("action") == seq:
            out.append(m.get("data", ""))
        elif m.get("type") == "observation" and m.get("action") == seq:
            return seq, "".join(out), m["observation"]
        elif m.get("type") == "error":
            raise RuntimeError(m)
    raise TimeoutError(f"no observation for {action!r}")
