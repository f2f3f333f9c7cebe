"""The client side of bench_preview.py, run both on the host (through nginx and the preview) and
inside the sandbox (straight to the app on localhost), so both sides measure with the same code.
Python's standard library only.
    preview_probe.py get  HOST PORT PATH N [HOSTHDR]   N GETs on one kept connection: ms each
    preview_probe.py bulk HOST PORT PATH [HOSTHDR]     one GET, read whole: bytes, seconds
    preview_probe.py ws   HOST PORT PATH N [HOSTHDR]   N 1 KiB WebSocket echoes: ms each
Prints one JSON line."""
import base64
import http.client
import json
import os
import socket
import struct
import sys
import time


def get(host, port, path, n, hosthdr):
    c = http.client.HTTPConnection(host, port, timeout=60)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        c.request("GET", path, headers={"Host": hosthdr})
        r = c.getresponse()
        r.read()
        out.append((time.perf_counter() - t) * 1000)
        if r.status != 200:
            raise SystemExit(f"status {r.status}")
    return {"ms": out}


def bulk(host, port, path, hosthdr):
    c = http.client.HTTPConnection(host, port, timeout=120)
    t = time.perf_counter()
    c.request("GET", path, headers={"Host": hosthdr})
    r = c.getresponse()
    n = 0
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        n += len(b)
    return {"bytes": n, "s": time.perf_counter() - t}


def ws(host, port, path, n, hosthdr):
    s = socket.create_connection((host, port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: {hosthdr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    head, buf = buf.split(b"\r\n\r\n", 1)
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise SystemExit(head.decode(errors="replace"))
    msg = os.urandom(1024)
    mask = b"\x01\x02\x03\x04"
    frame = b"\x82\xfe" + struct.pack(">H", len(msg)) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(msg))
    out = []
    for _ in range(n):
        t = time.perf_counter()
        s.sendall(frame)
        want = 4 + len(msg)
        while len(buf) < want:
            buf += s.recv(65536)
        buf = buf[want:]
        out.append((time.perf_counter() - t) * 1000)
    return {"ms": out}


def main():
    kind, host, port, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if kind == "bulk":
        hosthdr = sys.argv[5] if len(sys.argv) > 5 else f"{host}:{port}"
        print(json.dumps(bulk(host, port, path, hosthdr)))
        return
    n = int(sys.argv[5])
    hosthdr = sys.argv[6] if len(sys.argv) > 6 else f"{host}:{port}"
    print(json.dumps((get if kind == "get" else ws)(host, port, path, n, hosthdr)))


if __name__ == "__main__":
    main()
