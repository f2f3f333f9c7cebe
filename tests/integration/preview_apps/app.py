"""A web app for the preview tests, run inside a sandbox (Python's standard library only):
   POST /upload   answers the sha256 and length of the body it read
   GET  /events   a server-sent stream: five events 0.3 s apart, then the end
   GET  /ws       a WebSocket that echoes every text and binary message (RFC 6455, no extensions)
   GET  /headers  the request line and headers it got, as JSON (what the proxy passed on)
   GET  /abs      a page that names /abs-asset by an absolute path
   GET  /hang     reads the request and never answers (an app that is stuck)
   GET  /ws-page  a page whose script opens a WebSocket to ws (relative: either preview form),
                  sends "hello preview" and shows what comes back (the web IDE's Preview tab)
usage: python3 app.py PORT"""
import base64
import hashlib
import http.server
import json
import struct
import sys
import time

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WS_PAGE = b"""<!doctype html><html><body><p id="out">connecting</p><script>
const out = document.getElementById('out');
const ws = new WebSocket(new URL('ws', location.href).href.replace(/^http/, 'ws'));
ws.onopen = () => { out.textContent = 'open'; ws.send('hello preview'); };
ws.onmessage = (e) => { out.textContent = 'echo: ' + e.data; };
ws.onerror = () => { out.textContent = 'error'; };
</script></body></html>"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if self.path != "/upload":
            return self.reply(404, b"{}")
        left = int(self.headers.get("Content-Length", "0"))
        h, n = hashlib.sha256(), 0
        while left:
            b = self.rfile.read(min(left, 1 << 20))
            if not b:
                break
            h.update(b)
            n += len(b)
            left -= len(b)
        self.reply(200, json.dumps({"sha256": h.hexdigest(), "bytes": n}).encode())

    def do_GET(self):
        if self.path.split("?")[0] == "/headers":
            got = {"line": self.requestline, "headers": dict(self.headers.items())}
            return self.reply(200, json.dumps(got).encode())
        if self.path == "/hang":
            time.sleep(3600)
            return
        if self.path == "/ws-page":
            return self.reply(200, WS_PAGE, "text/html")
        if self.path == "/abs":
            return self.reply(200, b'<html><body><img src="/abs-asset"></body></html>', "text/html")
        if self.path == "/events":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(5):
                self.wfile.write(f"data: tick {i} {time.monotonic():.3f}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.3)
            self.close_connection = True
            return
        if self.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        self.reply(404, b"{}")

    def websocket(self):
        accept = base64.b64encode(hashlib.sha1((self.headers["Sec-WebSocket-Key"] + GUID).encode()).digest())
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept.decode())
        self.end_headers()
        self.wfile.flush()
        r, w = self.rfile, self.wfile
        while True:
            head = r.read(2)
            if len(head) < 2:
                break
            op, ln = head[0] & 0x0F, head[1] & 0x7F
            if ln == 126:
                ln = struct.unpack(">H", r.read(2))[0]
            elif ln == 127:
                ln = struct.unpack(">Q", r.read(8))[0]
            mask = r.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytearray(r.read(ln))
            for i in range(len(data)):
                data[i] ^= mask[i % 4]
            if op == 8:
                w.write(b"\x88\x00")
                w.flush()
                break
            if op == 9:
                op = 10
            n = len(data)
            hdr = bytes([0x80 | op]) + (bytes([n]) if n < 126 else
                                        (b"\x7e" + struct.pack(">H", n)) if n < 65536 else
                                        (b"\x7f" + struct.pack(">Q", n)))
            w.write(hdr + bytes(data))
            w.flush()
        self.close_connection = True


http.server.ThreadingHTTPServer(("0.0.0.0", int(sys.argv[1])), Handler).serve_forever()
