"""What reaches a gateway from in front (issue 29): its route lookup (GET /_sp/route) answers
nginx alone, which carries a key derived from the JWT secret (nginx/render.sh --secret-file,
X-SP-Route-Key); and a request URI the gateways' HTTP parser cannot read (an escaped NUL, CR or
LF, a '%' without two hex digits) is answered 400 in the API's shape on every route nginx sends
to a gateway, which keeps serving. Real nginx, Redis, API and gateway with real sandboxes."""
import hashlib
import hmac
import http.client
import json
import os
import socket
import subprocess
import unittest

from apistack import ModuleStack
from spexec import ROOT
from stack import BUILD

STACK = ModuleStack(pool=1)
setUpModule, tearDownModule = STACK.start, STACK.stop


def route_key(secret_hex):
    """What nginx carries: HMAC-SHA256(secret, "sandpipe route v1") in hex (common/route_key.h)."""
    return hmac.new(bytes.fromhex(secret_hex), b"sandpipe route v1", hashlib.sha256).hexdigest()


class RouteLookup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.alice = cls.s.token(sub="alice")
        cls.sid = cls.s.api_create_session(cls.alice)

    def lookup(self, key=None, uri=None):
        """GET /_sp/route straight to the gateway, as nginx asks it (its token along)."""
        h = {"X-SP-URI": uri or f"/api/v1/sessions/{self.sid}/files?path=.", "X-SP-Method": "GET",
             "Authorization": "Bearer " + self.alice}
        if key is not None:
            h["X-SP-Route-Key"] = key
        c = http.client.HTTPConnection("127.0.0.1", self.s.port, timeout=30)
        try:
            c.request("GET", "/_sp/route", headers=h)
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
        finally:
            c.close()

    def assertTellsNothing(self, status, headers, body):
        self.assertEqual(status, 401, body)
        self.assertFalse([k for k in headers if k.startswith("x-sp-")], headers)
        self.assertEqual(json.loads(body)["error"]["code"], "unauthorized")
        self.assertNotIn(self.sid, body)
        self.assertNotIn(str(self.s.port), body)

    def test_a_lookup_without_nginxs_key_is_401_and_tells_nothing(self):
        key = route_key(self.s.secret)
        self.assertTellsNothing(*self.lookup())
        self.assertTellsNothing(*self.lookup(""))
        self.assertTellsNothing(*self.lookup(key[:-1]))
        self.assertTellsNothing(*self.lookup(key + "0"))
        self.assertTellsNothing(*self.lookup(key.upper() if key != key.upper() else key[::-1]))
        self.assertTellsNothing(*self.lookup(("1" if key[20] == "0" else "0").join((key[:20], key[21:]))))
        self.assertTellsNothing(*self.lookup(route_key(os.urandom(32).hex())))  # another secret's
        # nor does an unknown session tell it apart from a known one
        self.assertTellsNothing(*self.lookup(uri="/api/v1/sessions/s-nosuch/files"))
        status, headers, _ = self.lookup(key)
        self.assertEqual(status, 200)
        self.assertEqual(headers["x-sp-gateway"], f"127.0.0.1:{self.s.port}")
        status, headers, _ = self.lookup(key, uri="/api/v1/sessions/s-nosuch/files")
        self.assertEqual((status, headers["x-sp-status"]), (404, "404"))

    def test_nginx_carries_the_key_and_its_configuration_not_the_secret(self):
        st, body, _ = self.s.request("GET", f"/api/v1/sessions/{self.sid}/files?path=.", token=self.alice)
        self.assertEqual(st, 200, body)  # routed: nginx's lookups carry the key
        conf = os.path.join(self.s.nginx_prefix, "route_lookup.conf")
        self.assertEqual(os.stat(conf).st_mode & 0o777, 0o600)
        with open(conf) as f:
            text = f.read()
        self.assertIn(f"X-SP-Route-Key {route_key(self.s.secret)};", text)
        for path, _, files in os.walk(self.s.nginx_prefix):
            for name in files:
                with open(os.path.join(path, name), "rb") as f:
                    self.assertNotIn(self.s.secret.encode(), f.read(), name)
        # the CLI says the same key
        out = subprocess.run([os.path.join(BUILD, "sandpipe"), "token", "--secret-file",
                              self.s.secret_file, "--route-key"], capture_output=True, text=True)
        self.assertEqual(out.stdout.strip(), route_key(self.s.secret))

    def test_render_wants_the_secret(self):
        out = subprocess.run([os.path.join(ROOT, "nginx", "render.sh"), "--prefix",
                              os.path.join(self.s.tmp, "nginx-nokey"), "--api-socket", "/nonexistent"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("--secret-file", out.stderr)


class UnreadableUris(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.alice = cls.s.token(sub="alice")
        cls.sid = cls.s.api_create_session(cls.alice)

    def raw(self, method, uri, headers=(), body=b""):
        """One request through nginx, its URI sent as it is: (status, parsed JSON or text)."""
        sock = socket.create_connection(("127.0.0.1", self.s.http_port), timeout=30)
        try:
            head = [f"{method} {uri} HTTP/1.1", "Host: x", "Authorization: Bearer " + self.alice,
                    f"Content-Length: {len(body)}", "Connection: close", *headers]
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        finally:
            sock.close()
        head, _, payload = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, payload.decode("utf-8", "replace")

    def gateway_serves(self):
        st, body = self.raw("GET", f"/api/v1/sessions/{self.sid}/files?path=.")
        self.assertEqual(st, 200, body)
        self.assertIsNone(self.s.gw.poll())

    def test_every_route_to_a_gateway_answers_400_and_the_gateway_keeps_serving(self):
        sid, ws = self.sid, ("Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
        requests = [
            ("GET", f"/api/v1/sessions/{sid}/files?path=a%00b", ()),
            ("GET", f"/api/v1/sessions/{sid}/files/stat?path=%00", ()),
            ("GET", f"/api/v1/sessions/{sid}/files/download?path=x%00y", ()),
            ("PUT", f"/api/v1/sessions/{sid}/files/content?path=a%00", ()),
            ("POST", f"/api/v1/sessions/{sid}/files/mkdir?path=d%00", ()),
            ("POST", f"/api/v1/sessions/{sid}/actions?wait=%00", ()),
            ("GET", f"/runtime/{sid}/alive?x=%00", ()),
            ("POST", f"/runtime/{sid}/list_files?x=%00", ()),
            ("GET", f"/runtime/{sid}/download_files?path=%00", ()),
            ("GET", f"/runtime/{sid}/view?path=%00", ()),
            ("GET", f"/ws/sessions/{sid}?token={self.alice}&x=%00", ws),
            ("GET", f"/ws/control?token={self.alice}&x=%00", ws),
            # the other escapes the parser cannot take: CR and LF (it ended the request line
            # there: a%0Ab listed "a"), a '%' without two hex digits (an HTML 403)
            ("GET", f"/api/v1/sessions/{sid}/files?path=a%0Ab", ()),
            ("GET", f"/api/v1/sessions/{sid}/files?path=a%0db", ()),
            ("GET", f"/api/v1/sessions/{sid}/files?path=a%zz", ()),
            ("GET", f"/api/v1/sessions/{sid}/files?path=a%", ()),
            ("GET", f"/api/v1/sessions/{sid}/files?path=a%2", ()),
        ]
        for method, uri, headers in requests:
            with self.subTest(uri=uri):
                st, body = self.raw(method, uri, headers, b"{}" if method != "GET" else b"")
                self.assertEqual(st, 400, body)
                self.assertEqual(body["error"]["code"], "bad_request")
                self.assertIn("%00", body["error"]["message"])
            self.gateway_serves()
        # the API decodes its own routes: an escaped NUL there is its 400 too
        st, body = self.raw("GET", f"/api/v1/sessions/{sid}/events?since=%00")
        self.assertEqual((st, body["error"]["code"]), (400, "bad_request"))

    def test_escapes_a_gateway_reads_still_reach_it(self):
        st, body = self.raw("PUT", f"/api/v1/sessions/{self.sid}/files/content?path=sp%20ace%2Fx%25",
                            ("Content-Type: application/octet-stream",), b"ok")
        self.assertIn(st, (200, 201), body)
        st, body = self.raw("GET", f"/api/v1/sessions/{self.sid}/files?path=sp%20ace")
        self.assertEqual(st, 200, body)
        self.assertEqual([e["name"] for e in body["entries"]], ["x%"])


if __name__ == "__main__":
    unittest.main()
