"""A minimal RFC 6455 WebSocket client (standard library only: PyPI is not reachable here),
enough to drive the gateway in tests: handshake with subprotocols, masked client frames,
text/binary/close/ping, fragmented messages, a raw mode for malformed input, and wss:// (TLS)."""
import base64
import hashlib
import json
import os
import socket
import struct
import time

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BINARY, CLOSE, PING, PONG = 1, 2, 8, 9, 10


class HandshakeError(Exception):
    pass


class WS:
    def __init__(self, host, port, path, protocols=None, timeout=10, read=True, tls=None, early=b"",
                 host_header=None, headers=None):
        """tls: an ssl.SSLContext to speak wss:// (the handshake is verified by the context).
        early: bytes sent right behind the request, in the same write (frames before the answer).
        host_header: the Host to name (default host:port; a name that resolves nowhere, as a
        preview's P-S.localhost, while connecting to host); headers: more {name: value}."""
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock, server_hostname=host)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", f"Host: {host_header or f'{host}:{port}'}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if protocols:
            lines.append("Sec-WebSocket-Protocol: " + ", ".join(protocols))
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + early)
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise HandshakeError("connection closed during handshake")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        self.status = int(head.split(b" ")[1])
        self.headers = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.decode().partition(":")
            self.headers[k.strip().lower()] = v.strip()
        if self.status != 101:
            raise HandshakeError(f"status {self.status}")
        want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if self.headers.get("sec-websocket-accept") != want:
            raise HandshakeError("bad Sec-WebSocket-Accept")
        self.closed = None

    def send_frame(self, opcode, payload, fin=True, mask=True):
        head = bytes([(0x80 if fin else 0) | opcode])
        n = len(payload)
        mbit = 0x80 if mask else 0
        if n < 126:
            head += bytes([mbit | n])
        elif n < 65536:
            head += bytes([mbit | 126]) + struct.pack(">H", n)
        else:
            head += bytes([mbit | 127]) + struct.pack(">Q", n)
        if mask:
            m = os.urandom(4)
            head += m
            payload = bytes(b ^ m[i % 4] for i, b in enumerate(payload)) if n < 65536 else _mask(payload, m)
        self.sock.sendall(head + payload)

    def send_json(self, obj):
        self.send_frame(TEXT, json.dumps(obj).encode())

    def send_binary(self, data):
        self.send_frame(BINARY, data)

    def _read(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no WebSocket data in time")
            self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_frame(self, timeout=10):
        deadline = time.monotonic() + timeout
        b0, b1 = self._read(2, deadline)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2, deadline))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8, deadline))[0]
        return b0 & 0x0F, bool(b0 & 0x80), self._read(n, deadline)

    def recv(self, timeout=10):
        """Next whole message: (opcode, bytes). Answers pings; CLOSE returns (CLOSE, payload)."""
        data, op = b"", None
        while True:
            opcode, fin, payload = self.recv_frame(timeout)
            if opcode == PING:
                self.send_frame(PONG, payload)
                continue
            if opcode == CLOSE:
                self.closed = payload
                return CLOSE, payload
            if opcode != 0:
                op = opcode
            data += payload
            if fin:
                return op, data

    def recv_json(self, timeout=10):
        op, data = self.recv(timeout)
        if op == CLOSE:
            raise ConnectionError(f"closed: {data[:2].hex()} {data[2:]!r}")
        return json.loads(data)

    def close(self):
        try:
            self.send_frame(CLOSE, struct.pack(">H", 1000))
        except OSError:
            pass
        self.sock.close()


def terminal_path(sid, term=None, since=None, ack=True):
    """The path of a session's terminal WebSocket (docs/api.md, "Terminals"): a new one, or
    terminal term taken back from output offset since."""
    q = "cols=100&rows=30" + ("&ack=1" if ack else "")
    if term:
        q += f"&term={term}" + (f"&since={since}" if since is not None else "")
    return f"/ws/sessions/{sid}/terminal?{q}"


class Terminal:
    """A client of one terminal WebSocket: its hello, the bytes so far (data), the output
    offset they end at, the JSON messages (texts); acknowledges every ack_every bytes read
    (None: never, for a connection opened without ack=1)."""

    def __init__(self, ws, ack_every=65536):
        self.ws = ws
        self.ack_every = ack_every
        self.hello = ws.recv_json(timeout=30)
        self.offset = self.hello.get("offset", 0)
        self.data = b""
        self.texts = []
        self.acked = self.offset

    def read(self, until, timeout=60):
        """Reads until until(self) is true; returns False on a close."""
        deadline = time.monotonic() + timeout
        while not until(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; texts {self.texts}, last bytes {self.data[-300:]!r}")
            op, d = self.ws.recv(timeout=30)
            if op == BINARY:
                self.data += d
                self.offset += len(d)
                if self.ack_every and self.offset - self.acked >= self.ack_every:
                    self.ws.send_json({"ack": self.offset})
                    self.acked = self.offset
            elif op == TEXT:
                m = json.loads(d)
                self.texts.append(m)
                if m.get("type") == "truncated":  # the bytes go on from where the ring starts
                    self.offset = m["lost_to"]
            elif op == CLOSE:
                self.closed = d
                return False
        return True

    def type(self, text):
        self.ws.send_binary(text.encode())

    def drop(self):
        """The connection goes away without a close frame, as a network failure ends it."""
        self.ws.sock.close()


def _mask(payload, m):
    n = len(payload)
    full = (m * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(full, "big")).to_bytes(n, "big")


def jwt(secret_hex, sub="alice", role="user", session=None, exp_in=3600):
    """Mints an HS256 token the way sandpipe's tokens look (for tests)."""
    import hmac

    def b64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": sub, "role": role, "exp": int(time.time()) + exp_in}
    if session:
        claims["session"] = session
    payload = b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(bytes.fromhex(secret_hex), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(sig)}"
