"""A small Python client of the executor protocol (docs/protocol.md), for integration tests.

Blocking socket, one connection; frames for channels not being waited on are kept per channel,
so a test can interleave operations. Credit is granted back automatically unless a channel is
opened with auto_credit=False.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import unittest

HDR = struct.Struct(">IBBHI")
HELLO, OPEN, DATA, JSON, CREDIT, EOF, CLOSE, ERROR, PING, PONG = range(1, 11)
STDERR = 1
WINDOW = 256 * 1024
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE = os.environ.get("MODE", "release")
EXECUTOR = os.environ.get("SANDPIPE_EXECUTOR", os.path.join(ROOT, "build", MODE, "sandpipe-executor"))
PLUGINS = os.path.join(os.path.dirname(EXECUTOR), "plugins")  # sandpipe-jupyter, agentskills


class Frame:
    def __init__(self, type_, flags, channel, payload):
        self.type, self.flags, self.channel, self.payload = type_, flags, channel, payload

    def json(self):
        return json.loads(self.payload.decode())

    def __repr__(self):
        return f"Frame(type={self.type}, ch={self.channel}, {self.payload[:80]!r})"


def encode(type_, channel, payload=b"", flags=0):
    return HDR.pack(len(payload), type_, flags, 0, channel) + payload


class Channel:
    def __init__(self, client, cid, auto_credit):
        self.client, self.id, self.auto_credit = client, cid, auto_credit
        self.frames = []  # queued, not yet consumed
        self.closed = None  # CLOSE payload (dict) once closed
        self.send_credit = WINDOW

    def next(self, timeout=30):
        """Returns the next frame on this channel."""
        deadline = time.monotonic() + timeout
        while not self.frames:
            self.client._pump(deadline)
        return self.frames.pop(0)

    def collect(self, timeout=30):
        """Reads until CLOSE; returns (stdout bytes, stderr bytes, json events, close dict)."""
        out, err, events = bytearray(), bytearray(), []
        while True:
            f = self.next(timeout)
            if f.type == DATA:
                (err if f.flags & STDERR else out).extend(f.payload)
            elif f.type == JSON:
                events.append(f.json())
            elif f.type == CLOSE:
                return bytes(out), bytes(err), events, f.json()
            elif f.type == ERROR:
                events.append({"protocol_error": f.json()})

    def read(self, until=None, timeout=30, strict=True):
        """Reads DATA until until(bytes so far) is true, a CLOSE, or the timeout; returns (bytes,
        JSON events, CLOSE dict or None). strict: running out of time fails the test; else
        what came so far is returned."""
        out, events = bytearray(), []
        deadline = time.monotonic() + timeout
        while until is None or not until(bytes(out)):
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError(f"timed out; last bytes {bytes(out[-200:])!r}")
                f = self.next(timeout=max(0.1, left))
            except TimeoutError as e:
                if strict:
                    raise AssertionError(str(e)) from e
                break
            if f.type == DATA:
                out.extend(f.payload)
            elif f.type == JSON:
                events.append(f.json())
            elif f.type == CLOSE:
                return bytes(out), events, f.json()
        return bytes(out), events, None

    def send(self, data):
        for i in range(0, len(data), 65536):
            chunk = data[i:i + 65536]
            while self.send_credit < len(chunk):
                self.client._pump(time.monotonic() + 30)
            self.send_credit -= len(chunk)
            self.client.sock.sendall(encode(DATA, self.id, chunk))

    def eof(self):
        self.client.sock.sendall(encode(EOF, self.id))

    def json(self, obj):
        self.client.sock.sendall(encode(JSON, self.id, json.dumps(obj).encode()))

    def grant(self, n):
        self.client.sock.sendall(encode(CREDIT, self.id, struct.pack(">I", n)))

    def close(self):
        self.client.sock.sendall(encode(CLOSE, self.id))


class Client:
    def __init__(self, path=None, sock=None, token=None):
        self.sock = sock or socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if path:
            self.sock.connect(path)
        self.buf = b""
        self.channels = {}
        self.conn_frames = []
        self.next_id = 1
        if token is not None:
            self.sock.sendall(encode(HELLO, 0, json.dumps({"token": token}).encode()))
        self.hello = self._conn_frame(HELLO).json()

    def _conn_frame(self, want, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            for i, f in enumerate(self.conn_frames):
                if f.type == want:
                    return self.conn_frames.pop(i)
            self._pump(deadline)

    def _pump(self, deadline):
        while True:
            if len(self.buf) >= HDR.size:
                n, t, fl, _, ch = HDR.unpack_from(self.buf)
                if len(self.buf) >= HDR.size + n:
                    payload = self.buf[HDR.size:HDR.size + n]
                    self.buf = self.buf[HDR.size + n:]
                    self._dispatch(Frame(t, fl, ch, payload))
                    return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame from the executor in time")
            self.sock.settimeout(left)
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("executor closed the connection")
            self.buf += data

    def _dispatch(self, f):
        c = self.channels.get(f.channel) if f.channel else None
        if c is None:
            self.conn_frames.append(f)
            return
        if f.type == CREDIT:
            c.send_credit += struct.unpack(">I", f.payload)[0]
            return
        if f.type == DATA and c.auto_credit and f.payload:
            self.sock.sendall(encode(CREDIT, c.id, struct.pack(">I", len(f.payload))))
        c.frames.append(f)
        if f.type == CLOSE:
            del self.channels[f.channel]

    def open(self, req, auto_credit=True):
        cid = self.next_id
        self.next_id += 1
        c = Channel(self, cid, auto_credit)
        self.channels[cid] = c
        self.sock.sendall(encode(OPEN, cid, json.dumps(req).encode()))
        return c

    def call(self, req, timeout=30):
        """One-shot op: returns the CLOSE payload."""
        return self.open(req).collect(timeout)[3]

    def run(self, command, session=None, timeout=None, is_input=False, blocking=False, **args):
        """OpenHands run action: returns (streamed bytes, observation dict)."""
        action = {"action": "run", "args": dict(command=command, is_input=is_input, blocking=blocking, **args)}
        if timeout is not None:
            action["timeout"] = timeout
        req = {"op": "action", "action": action}
        if session:
            req["session"] = session
        out, _, _, obs = self.open(req).collect(timeout=(timeout or 30) + 60)
        return out, obs

    def action(self, action, timeout=60):
        return self.open({"op": "action", "action": action}).collect(timeout)[3]

    def raw(self, data):
        self.sock.sendall(data)

    def close(self):
        self.sock.close()


class Executor:
    """Starts a real sandpipe-executor on a temporary unix socket (optionally under bwrap)."""

    def __init__(self, extra_args=(), workspace=None, bwrap=False, env=None, as_pid1=False):
        self.tmp = tempfile.mkdtemp(prefix="sp-exec-")
        self.workspace = workspace or os.path.join(self.tmp, "ws")
        os.makedirs(self.workspace, exist_ok=True)
        self.sock = os.path.join(self.tmp, "executor.sock")
        args = [EXECUTOR, "--listen", "unix:" + self.sock, "--workspace", self.workspace,
                "--root", self.workspace, "--root", self.tmp, "--user", "root", *extra_args]
        if bwrap:
            # The sandbox sees the workspace at /workspace and the socket dir at /run/sandpipe.
            args = ["bwrap", *(["--as-pid-1"] if as_pid1 else []), "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                    "--unshare-uts", "--hostname", "sandbox", "--die-with-parent",
                    "--uid", "1000", "--gid", "1000",
                    "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
                    "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                    "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
                    "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                    "--bind", self.workspace, "/workspace", "--bind", self.tmp, "/run/sandpipe",
                    "--ro-bind", EXECUTOR, "/opt/sandpipe/sandpipe-executor",
                    *(["--ro-bind", PLUGINS, "/opt/sandpipe/plugins"] if os.path.isdir(PLUGINS) else []),
                    "--setenv", "HOME", "/workspace",
                    "/opt/sandpipe/sandpipe-executor", "--listen", "unix:/run/sandpipe/executor.sock",
                    "--workspace", "/workspace", "--socket-mode", "0666", *extra_args]
        # The workspace as the sandbox sees it.
        self.ws_inside = "/workspace" if bwrap else os.path.realpath(self.workspace)
        self.log = open(os.path.join(self.tmp, "executor.log"), "w+")
        if env is None:
            # A clean HOME: the host user's ~/.bashrc is not the sandbox's.
            home = os.path.join(self.tmp, "home")
            os.makedirs(home, exist_ok=True)
            env = dict(os.environ, HOME=home, PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                raise RuntimeError("executor did not start: " + self.log.read())
            time.sleep(0.01)

    def connect(self):
        return Client(self.sock)

    def stop(self):
        from stack import sanitizer_reports, terminate  # stack imports this module
        terminate(self.proc, 5)
        self.log.close()
        reports = sanitizer_reports(self.tmp)
        shutil.rmtree(self.tmp, ignore_errors=True)
        if reports:
            raise AssertionError("sanitizer report in the executor's log:\n" + "\n".join(reports))


class ExecutorTest(unittest.TestCase):
    """A test class with one real executor for all its tests (cls.ex, started with
    executor_args as Executor's keyword arguments, stopped after the last test). connection
    "test" gives each test a new connection as self.c; "class" gives the class one as cls.c."""
    executor_args = {}
    connection = None

    @classmethod
    def setUpClass(cls):
        cls.ex = Executor(**cls.executor_args)
        if cls.connection == "class":
            cls.c = cls.ex.connect()

    @classmethod
    def tearDownClass(cls):
        if cls.connection == "class":
            cls.c.close()
        cls.ex.stop()

    def setUp(self):
        if self.connection == "test":
            self.c = self.ex.connect()

    def tearDown(self):
        if self.connection == "test":
            self.c.close()
