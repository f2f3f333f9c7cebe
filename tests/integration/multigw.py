"""Several real gateways on one Redis and one state directory (one host's sandboxes), for the
takeover tests and bench/bench_takeover.py: start, kill -9, restart by index; who owns a
session (the `gateway` field of its record); readers that follow a session's events across
takeovers, reconnecting to the owner with since=<last seq>."""
import json
import os
import signal
import socket
import subprocess
import threading
import time

from stack import BUILD, Stack, free_port, terminate
from wsclient import WS


class MultiStack(Stack):
    """Stack's redis, secret and state dir; gateways gw-0..gw-(n-1) on their own ports.
    hosts: a --host-id per gateway (default: all the same, this machine's)."""

    def __init__(self, n=3, pool=1, hosts=None, extra=(), wraps=None):
        self.n = n
        self.hosts = hosts or [None] * n
        self.wraps = wraps or [()] * n  # a command a gateway runs under (e.g. unshare), or ()
        self.gws = [None] * n
        self.ports = [free_port() for _ in range(n)]
        super().__init__(pool=pool, extra=extra)

    def start_gateway(self, wait=True):  # Stack.__init__ starts "the" gateway: start them all
        self.log = open(os.path.join(self.tmp, "gateway.log"), "a")
        for i in range(self.n):
            self.start(i, wait)
        self.gw = None

    def gid(self, i):
        return f"gw-{i}"

    def start(self, i, wait=True):
        host = ["--host-id", self.hosts[i]] if self.hosts[i] else []
        self.gws[i] = subprocess.Popen(
            [*self.wraps[i], os.path.join(BUILD, "sandpipe-gateway"), "--listen", f"127.0.0.1:{self.ports[i]}",
             *self.redis_args("gateway"), "--provider", self.provider,
             "--state-dir", self.state_dir, "--secret-file", self.secret_file,
             "--pool", str(self.pool), "--id", self.gid(i), *host,
             *(["--image", os.environ["SANDPIPE_TEST_IMAGE"]] if os.environ.get("SANDPIPE_TEST_IMAGE") else []),
             *self.extra,
             *(["--executor", os.environ["SANDPIPE_EXECUTOR"]] if os.environ.get("SANDPIPE_EXECUTOR") else [])],
            stdout=self.log, stderr=subprocess.STDOUT)
        if not wait:
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.ports[i]), timeout=0.2).close()
                return
            except OSError:
                if self.gws[i].poll() is not None:
                    break
                time.sleep(0.02)
        raise RuntimeError(f"gateway {i} did not start: " + self.gateway_log()[-3000:])

    def kill(self, i):
        """kill -9 gateway i; returns the monotonic time of the kill."""
        t = time.monotonic()
        self.gws[i].send_signal(signal.SIGKILL)
        self.gws[i].wait(10)
        return t

    def gateway_pid(self, i):
        """The gateway process itself (under a wrapper: the wrapper's child)."""
        pid = self.gws[i].pid
        if self.wraps[i]:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                pid = int(f.read().split()[0])
        return pid

    def alive(self, i):
        return self.gws[i] is not None and self.gws[i].poll() is None

    def index(self, gid):
        return int(gid.split("-")[1]) if gid.startswith("gw-") else None

    def owner(self, sid):
        return self.redis("HGET", f"sp:session:{{{sid}}}", "gateway")

    def ws_to(self, i, path, token=None):
        sep = "&" if "?" in path else "?"
        return WS("127.0.0.1", self.ports[i], f"{path}{sep}token={token or self.token()}")

    def create_on(self, i, params=None):
        c = self.ws_to(i, "/ws/control")
        c.send_json({"id": 1, "method": "session.create", "params": params or {}})
        r = c.recv_json(60)
        c.close()
        if r.get("type") != "result":
            raise RuntimeError(f"session.create failed: {r}")
        return r["result"]["id"]

    def stop(self):
        for i, p in enumerate(self.gws):
            if p and p.poll() is None:
                if self.wraps[i]:  # the wrapper (unshare) does not pass SIGTERM on: end its child
                    try:
                        gw = self.gateway_pid(i)
                        os.kill(gw, signal.SIGCONT)
                        os.kill(gw, signal.SIGTERM)
                    except (OSError, ValueError, IndexError):
                        pass
                terminate(p)
        super().stop()


class Follower(threading.Thread):
    """Reads one session's events like a client that survives gateway deaths: connected to the
    owner the session's record names, and on a lost connection reconnected to the (new) owner
    with since=<the last seq it saw>. Stops at the observation of action `until` (set later),
    or at stop()."""

    def __init__(self, ms, sid, token=None):
        super().__init__(daemon=True)
        self.ms, self.sid, self.token = ms, sid, token
        self.events, self.reconnects, self.errors = [], 0, []
        self.until = None
        self.done = threading.Event()
        self.stopping = False
        self.last = 0
        self.ws = None

    def send(self, msg):
        ws = self.ws
        if ws:
            ws.send_json(msg)

    def run(self):
        deadline = time.monotonic() + 900  # bounded: a test never hangs on a reader
        while not self.stopping and time.monotonic() < deadline:
            gid = self.ms.owner(self.sid)
            i = self.ms.index(gid or "")
            try:
                if i is None or not self.ms.alive(i):
                    raise ConnectionError("owner not running")
                self.ws = self.ms.ws_to(i, f"/ws/sessions/{self.sid}?since={self.last}", self.token)
                if self.ws.status != 101:
                    raise ConnectionError(f"status {self.ws.status}")
                while not self.stopping:
                    m = self.ws.recv_json(120)
                    if "seq" not in m or "ts" not in m:
                        continue  # acks, errors: not stream events
                    self.events.append(m)
                    self.last = m["seq"]
                    if (self.until is not None and m.get("type") == "observation"
                            and m.get("action") == self.until):
                        self.done.set()
                        return
            except (OSError, ConnectionError, ValueError, TimeoutError) as e:
                self.errors.append(str(e))
                if self.ws:
                    self.ws.sock.close()
                self.ws = None
                self.reconnects += 1
                time.sleep(0.05)
        self.done.set()

    def stop(self):
        self.stopping = True
        ws = self.ws
        if ws:
            try:
                ws.sock.close()
            except OSError:
                pass


def output_text(events, action_seq):
    """The action's output as the client saw it (the output events in order)."""
    return "".join(e.get("data", "") for e in events
                   if e.get("type") == "output" and e.get("action") == action_seq)


def wait_until(pred, timeout, step=0.02):
    """Polls pred until it returns something true (returned) or the time is up (None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


def stream_events(ms, sid, start="-"):
    """Every event of the session's stream (from Redis), parsed."""
    out = ms.redis_cli("--raw", "XRANGE", f"sp:session:{{{sid}}}:events", start, "+").stdout
    evs = []
    for line in out.splitlines():
        if line.startswith("{"):
            try:
                evs.append(json.loads(line))
            except ValueError:
                pass
    return evs
