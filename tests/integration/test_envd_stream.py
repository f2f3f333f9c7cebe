"""A pipe-mode command's output (E2B's commands.run: envd's Start over Connect with its JSON
codec) through nginx and the gateway, read raw from the socket: every byte whole and in order,
and a client that stops reading holds the command back within a bound (envd_proc.h: the
executor's window, the follower's queue, the socket buffers on the way), then gets the rest.
A real stack (tests/integration/apistack.py): Redis, a gateway with bwrap sandboxes, sandpipe-api
and nginx."""
import base64
import json
import socket
import struct
import time
import unittest

from apistack import ApiStack

LINE = 65536        # each line: 8 digits of its number, filler, "\n"
LINES = 2048        # 128 MiB in all: far more than anything on the way may hold
# What may be produced while nobody reads: the executor's pipe and window (1 MiB each), the
# follower's queue (1 MiB), the gateway's socket to nginx (2 MiB asked, 4 MiB in the kernel's
# count) and nginx's to the client (TCP, tcp_wmem's 4 MiB at most), base64 taking a third more
# on the last three. 32 MiB is well above that and far below the 128 MiB a missing bound lets by.
HELD_MAX = 32 << 20
# Bash builtins only: each line is written, then its number is left in the progress file.
COMMAND = ("f=$(printf '%0{fill}d' 0); i=0; while [ $i -lt {lines} ]; do i=$((i+1)); "
           "printf '%08d%s\\n' $i \"$f\" || exit 3; echo $i > /tmp/sp-progress; done"
           ).format(fill=LINE - 9, lines=LINES)


def envelope(msg):
    body = json.dumps(msg).encode()
    return b"\0" + struct.pack(">I", len(body)) + body


class ConnectStream:
    """Start's answer read off a raw socket: HTTP/1.1 chunked, Connect envelopes inside."""

    def __init__(self, port, sandbox, access, cmd, rcvbuf=None):
        self.sock = socket.socket()
        if rcvbuf:  # before connect: the window the client offers stays this small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(120)
        self.sock.connect(("127.0.0.1", port))
        body = envelope({"process": {"cmd": "/bin/bash", "args": ["-c", cmd]}})
        self.sock.sendall((f"POST /process.Process/Start HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           f"Content-Type: application/connect+json\r\nE2b-Sandbox-Id: {sandbox}\r\n"
                           f"X-Access-Token: {access}\r\nContent-Length: {len(body)}\r\n"
                           f"Connection: close\r\n\r\n").encode() + body)
        self.raw = b""
        self.body = b""
        head = self._until(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        assert b" 200 " in status, head
        assert b"chunked" in head.lower(), head
        self.done = False

    def _fill(self):
        d = self.sock.recv(1 << 16)
        if not d:
            raise EOFError("the stream ended early")
        self.raw += d

    def _until(self, sep):
        while sep not in self.raw:
            self._fill()
        out, self.raw = self.raw.split(sep, 1)
        return out

    def _take(self, n):
        while len(self.raw) < n:
            self._fill()
        out, self.raw = self.raw[:n], self.raw[n:]
        return out

    def message(self):
        """The next Connect message (a dict), or None after the end-of-stream envelope."""
        while len(self.body) < 5 or len(self.body) < 5 + struct.unpack(">I", self.body[1:5])[0]:
            size = int(self._until(b"\r\n").split(b";")[0], 16)
            if size == 0:
                raise EOFError("the body ended inside a message")
            self.body += self._take(size)
            self._take(2)
        flags, n = self.body[0], struct.unpack(">I", self.body[1:5])[0]
        msg, self.body = json.loads(self.body[5:5 + n]), self.body[5 + n:]
        if flags & 2:
            self.done = True
            return None
        return msg

    def close(self):
        self.sock.close()


class PipeStreamThroughNginx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = ApiStack(pool=1)
        try:
            status, sb, _ = cls.stack.request("POST", "/e2b/v2/sandboxes", {},
                                           headers={"X-API-Key": cls.stack.token(sub="bob")})
            assert status == 201, (status, sb)
            cls.sandbox, cls.access = sb["sandboxID"], sb["envdAccessToken"]
        except BaseException:
            cls.stack.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def stream(self, cmd, **kw):
        s = ConnectStream(self.stack.http_port, self.sandbox, self.access, cmd, **kw)
        self.addCleanup(s.close)
        return s

    def progress(self):
        """How many lines the command has written (its progress file), read by a second command;
        the file is rewritten after each line, so a read that finds it empty is made again."""
        for _ in range(100):
            s = self.stream("cat /tmp/sp-progress 2>/dev/null || echo 0")
            out = b""
            while (m := s.message()) is not None:
                data = m.get("event", {}).get("data", {})
                if "stdout" in data:
                    out += base64.b64decode(data["stdout"])
            if out.strip():
                return int(out)
        self.fail("the progress file was empty at every read")

    def read_lines(self, s, first):
        """Reads s to its end: every line numbered first, first+1, ... and whole. Returns the
        number after the last line and the end event."""
        pending, expect, end = b"", first, None
        while (m := s.message()) is not None:
            ev = m.get("event", {})
            if "data" in ev and "stdout" in ev["data"]:
                pending += base64.b64decode(ev["data"]["stdout"])
                whole = len(pending) - len(pending) % LINE
                for at in range(0, whole, LINE):
                    line = pending[at:at + LINE]
                    self.assertEqual(line[:8], b"%08d" % expect, f"line {expect} out of place")
                    self.assertEqual(line[8:], b"0" * (LINE - 9) + b"\n", f"line {expect} not whole")
                    expect += 1
                pending = pending[whole:]
            if "end" in ev:
                end = ev["end"]
        self.assertEqual(pending, b"", "a line cut short at the end")
        return expect, end

    def test_a_reader_that_stops_holds_the_command_back_and_then_gets_every_byte(self):
        s = self.stream(COMMAND, rcvbuf=64 << 10)
        self.assertIn("start", s.message()["event"])
        # a first line, to know it runs; then nothing is read for a while
        first = s.message()["event"]["data"]["stdout"]
        self.assertTrue(base64.b64decode(first).startswith(b"00000001"))
        # wait until it stops (the same count twice in a row), however long the machine takes
        seen, before = -1, self.progress()
        for _ in range(600):
            time.sleep(0.5)
            seen, before = before, self.progress()
            if seen == before:
                break
        self.assertEqual(seen, before, "the command never stopped while nobody read")
        self.assertGreater(before, 0, "the command wrote nothing")
        self.assertLess(before, LINES, "the whole output went by while nobody read")
        self.assertLessEqual(before * LINE, HELD_MAX,
                             f"{before * LINE >> 20} MiB written while nobody read")
        # the rest comes whole and in order, then the end
        s.body = envelope({"event": {"data": {"stdout": first}}}) + s.body  # re-read the first
        expect, end = self.read_lines(s, 1)
        self.assertEqual(expect, LINES + 1)
        self.assertEqual(end.get("exitCode", 0), 0, end)
        self.assertTrue(s.done)


if __name__ == "__main__":
    unittest.main()
