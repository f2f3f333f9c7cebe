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

import leftovers
from spexec import ROOT, MODE
from resp import Redis
from wsclient import WS, jwt

BUILD = os.path.join(ROOT, "build", MODE)

# The tests' own Redis user (tests/integration/redis-test-admin.acl): every right, for the test
# helpers that read or change what the gateway and the API store. The programs themselves are
# the users of redis/users.acl (gateway, api), as under make run.
REDIS_ADMIN = "sp-test-admin"


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
    """Host pids of the sandboxes under state_dir, and their ids (leftovers.processes: found
    from the host side, by the working directory the provider gives each sandbox's top process,
    <state_dir>/<id>, their cgroups and their descendants; nothing a sandbox can read names its
    host directory, not even bwrap's command line)."""
    procs, ids = leftovers.processes(state_dir)
    return set(procs), ids


def kill_sandboxes(state_dir):
    """Destroys what the sandboxes under state_dir left on the host (leftovers.destroy):
    sandboxes outlive the gateway by design, and their pid-namespace init ignores SIGTERM."""
    return leftovers.destroy(state_dir)


def netd_names(table_prefix, if_letter):
    """A sandpipe-netd's own nftables table, interface prefix and address pool: a random tag, and
    a /16 of 10.100-199 that no address of this host is in (netd refuses one that is; another
    stack's pool included), so several netds share a host."""
    tag = os.urandom(3).hex()
    used = set(re.findall(r"inet 10\.(\d+)\.", subprocess.run(
        ["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout))
    second = 100 + int(tag[:2], 16) % 100
    while str(second) in used:
        second = 100 + (second - 99) % 100
    return table_prefix + tag, if_letter + tag[:5], f"10.{second}.0.0/16"


class Stack:
    def __init__(self, provider=None, pool=2, extra=(), redis=True, wrap=(), gateway_id="gw-test",
                 netd=None):
        """netd: start a sandpipe-netd for this stack (a dict of its options, e.g.
        {"resolver": "198.51.100.53"}, or {}), and give the gateway --netd: sessions may then
        have a network. Its nftables table, interface prefix and address pool are this
        stack's own."""
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
        self.redis_acl = self.make_redis_acl()
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
        self.netd = None
        self.netd_opts = netd
        if netd is not None:
            self.start_netd()
            self.extra += ["--netd", self.netd_sock]
        self.start_gateway()

    def make_redis_acl(self):
        """This stack's Redis users: redis/users.acl rendered as make run does (the default user
        off; gateway and api with their own passwords) plus REDIS_ADMIN, passwords made once in
        self.tmp (redis-USER.password). Returns the ACL file's path."""
        acl = os.path.join(self.tmp, "users.acl")
        subprocess.run([os.path.join(BUILD, "sandpipe"), "redis-acl", "--generate", "--dir", self.tmp,
                        "--template", os.path.join(ROOT, "redis", "users.acl"),
                        "--template", os.path.join(ROOT, "tests", "integration", "redis-test-admin.acl"),
                        "--out", acl], check=True, capture_output=True)
        return acl

    def redis_password_file(self, user):
        return os.path.join(self.tmp, f"redis-{user}.password")

    def redis_password(self, user):
        with open(self.redis_password_file(user)) as f:
            return f.read().strip()

    def redis_args(self, user):
        """A daemon's options to reach this stack's Redis as user (gateway, api)."""
        return ["--redis", "unix:" + self.redis_sock, "--redis-user", user,
                "--redis-password-file", self.redis_password_file(user)]

    def redis_conn(self, timeout=120):
        """A resp.Redis connection authenticated as REDIS_ADMIN (caller closes)."""
        return Redis(self.redis_sock, timeout, user=REDIS_ADMIN, password=self.redis_password(REDIS_ADMIN))

    def start_redis(self):
        self.redis_proc = subprocess.Popen(
            ["redis-server", os.path.join(ROOT, "redis", "redis.conf"), "--port", "0",
             "--unixsocket", self.redis_sock, "--dir", self.tmp, "--aclfile", self.redis_acl,
             "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(self.redis_sock):
                return
            time.sleep(0.02)
        raise RuntimeError("redis did not start")

    def redis_cli(self, *args, timeout=None):
        """redis-cli on this stack's Redis as REDIS_ADMIN (the password in its environment)."""
        return subprocess.run(["redis-cli", "-s", self.redis_sock, "--user", REDIS_ADMIN, *args],
                              capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, REDISCLI_AUTH=self.redis_password(REDIS_ADMIN)))

    def redis(self, *args):
        return self.redis_cli(*args).stdout.strip()

    def start_netd(self):
        """sandpipe-netd on a control socket of this stack's, with a table, an interface prefix
        and a /16 of 10.0.0.0/8 of its own (nothing another stack or make run uses)."""
        self.netd_sock = os.path.join(self.tmp, "netd.sock")
        self.netd_table, self.netd_prefix, self.netd_pool = netd_names("sptest_", "t")
        opts = self.netd_opts or {}
        args = [os.path.join(BUILD, "sandpipe-netd"), "--control", self.netd_sock,
                "--state-dir", os.path.join(self.tmp, "netd"), "--table", self.netd_table,
                "--ifprefix", self.netd_prefix, "--pool", self.netd_pool]
        # No resolver given: one on loopback where nothing answers (no query leaves the machine)
        resolvers = opts.get("resolver", ["127.0.0.1:9"])
        for r in [resolvers] if isinstance(resolvers, str) else resolvers:
            args += ["--resolver", r]
        for k in ("max-conns", "bandwidth"):
            if k in opts:
                args += [f"--{k}", str(opts[k])]
        for c in opts.get("deny", []):
            args += ["--deny", c]
        for c in opts.get("allow-private", []):
            args += ["--allow-private", c]
        self.netd_log = open(os.path.join(self.tmp, "netd.log"), "a")
        self.netd = subprocess.Popen(args, stdout=self.netd_log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.netd_sock):
            if self.netd.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("netd did not start: " + self.netd_text())
            time.sleep(0.02)

    def netd_text(self):
        with open(os.path.join(self.tmp, "netd.log")) as f:
            return f.read()

    def start_gateway(self, wait=True):
        self.log = open(os.path.join(self.tmp, "gateway.log"), "a")
        self.gw = subprocess.Popen(
            [*self.wrap, os.path.join(BUILD, "sandpipe-gateway"), "--listen", f"127.0.0.1:{self.port}",
             "--listen-unix", self.gw_sock,
             *self.redis_args("gateway"), "--provider", self.provider,
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

    def eventually(self, check, what, timeout=60, step=0.02):
        """check()'s first true value, asked every step seconds; AssertionError naming what
        never happened (with the gateway's log) after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            v = check()
            if v:
                return v
            if time.monotonic() >= deadline:
                raise AssertionError(f"never happened: {what}\n{self.gateway_log()[-3000:]}")
            time.sleep(step)

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

    def destroy_sandboxes(self):
        """What the sandboxes of this stack left once its gateways are stopped: destroyed."""
        if self.provider == "docker":
            remove_containers(self.state_dir)  # first: a container may hold a disk's mount
        kill_sandboxes(self.state_dir)

    def stop(self):
        """Stops what the stack started, by pid, then destroys what its sandboxes left (they
        outlive the gateway by design) and checks that nothing of them is left on the host: a
        process, loop device, mount or cgroup left fails the test naming it (the stack's
        directory is then kept, as evidence)."""
        terminate(self.gw)
        self.destroy_sandboxes()
        if self.netd:
            terminate(self.netd)
            self.netd_log.close()
            # netd leaves its rules while a sandbox's link exists: the sandboxes are gone now
            subprocess.run(["nft", "delete", "table", "inet", self.netd_table], capture_output=True)
        unmount_under(self.tmp)  # whatever else is mounted below (rmtree would cross it)
        if self.redis_proc:
            self.redis_proc.terminate()
            self.redis_proc.wait(5)
        self.log.close()
        left = leftovers.left(self.state_dir)
        if self.provider == "docker":
            left += [f"docker container {c}" for c in containers_under(self.state_dir)]
        reports = sanitizer_reports(self.tmp)
        failures = ["sanitizer report in the stack's logs:\n" + "\n".join(reports)] if reports else []
        if left:
            failures.append(f"left on the host by the sandboxes of {self.state_dir} (the directory "
                            "is kept):\n  " + "\n  ".join(left))
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if failures:
            raise AssertionError("\n".join(failures))


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


mounts_under = leftovers.mounts


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
