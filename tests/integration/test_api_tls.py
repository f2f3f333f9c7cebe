"""The TLS variant of the nginx configuration (nginx/sandpipe-tls.conf.template, rendered by
render.sh --tls --tls-cert --tls-key) in front of the real stack: a certificate made with openssl
for this test, HTTPS on loopback verified against it, the REST API and the OpenHands runtime
route over TLS, a WebSocket upgraded through TLS, plain HTTP redirected to HTTPS, and the
security headers (HSTS included) on every kind of response."""
import http.client
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest
import warnings

from apistack import ApiStack
from stack import BUILD
from stack import run_action
from wsclient import WS

STACK = None
CERT_DIR = None
HSTS = "max-age=31536000"


def setUpModule():
    global STACK, CERT_DIR
    if not shutil.which("openssl"):
        raise RuntimeError("openssl is needed to make the test certificate")
    CERT_DIR = tempfile.mkdtemp(prefix="sp-tls-")
    cert, key = os.path.join(CERT_DIR, "cert.pem"), os.path.join(CERT_DIR, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "2", "-subj", "/CN=sandpipe test", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    STACK = ApiStack(pool=1, tls=(cert, key))


def tearDownModule():
    if STACK:
        STACK.stop()
    if CERT_DIR:
        shutil.rmtree(CERT_DIR, ignore_errors=True)


class Tls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.port = STACK.http_port
        cls.cert = os.path.join(CERT_DIR, "cert.pem")
        cls.alice = STACK.token(sub="alice", role="user")

    def https(self, method, path, body=None, headers=None, context=None):
        """One request over TLS; returns (status, body bytes, lower-case headers, TLS socket facts)."""
        c = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=60, context=context or self.s.tls)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            facts = {"version": c.sock.version(), "peer": c.sock.getpeercert(binary_form=True)}
            return r.status, data, {k.lower(): v for k, v in r.getheaders()}, facts
        finally:
            c.close()

    def test_health_over_https_with_the_given_certificate(self):
        st, body, hdrs, facts = self.https("GET", "/api/v1/health")
        self.assertEqual(st, 200, body)
        self.assertIn(b'"status":"ok"', body.replace(b" ", b""))
        with open(self.cert) as f:
            want = ssl.PEM_cert_to_DER_cert(f.read())
        self.assertEqual(facts["peer"], want)  # the test's certificate, not one render.sh made
        self.assertEqual(facts["version"], "TLSv1.3")

    def test_the_cli_speaks_wss_and_https(self):
        """The CLI sets TLS up for wss:// and https:// URLs (and only for them: test_cli.py)."""
        cli = os.path.join(BUILD, "sandpipe")
        env = dict(os.environ, SANDPIPE_URL=f"wss://127.0.0.1:{self.port}",
                   SANDPIPE_TOKEN=self.s.token(sub="admin", role="admin"))
        r = subprocess.run([cli, "--insecure", "sessions", "ls"], env=env, capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"STATUS", r.stdout)
        r = subprocess.run([cli, "sessions", "ls"], env=env, capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)  # not --insecure: the self-signed certificate is refused
        env["SANDPIPE_URL"] = f"https://127.0.0.1:{self.port}"
        r = subprocess.run([cli, "--insecure", "sessions", "ls"], env=env, capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_client_that_does_not_trust_the_certificate_is_refused(self):
        with self.assertRaises(ssl.SSLCertVerificationError):
            self.https("GET", "/api/v1/health", context=ssl.create_default_context())

    def test_tls_1_2_is_accepted_and_1_1_refused(self):
        ctx = ssl.create_default_context(cafile=self.cert)
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        st, _, _, facts = self.https("GET", "/api/v1/health", context=ctx)
        self.assertEqual((st, facts["version"]), (200, "TLSv1.2"))
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.load_verify_locations(self.cert)
        old.set_ciphers("DEFAULT:@SECLEVEL=0")  # let the client offer TLS 1.1: the server refuses
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            old.minimum_version = ssl.TLSVersion.TLSv1_1
            old.maximum_version = ssl.TLSVersion.TLSv1_1
        with self.assertRaises(ssl.SSLError) as cm:
            self.https("GET", "/api/v1/health", context=old)
        self.assertIn("ALERT_PROTOCOL_VERSION", str(cm.exception))  # the server's alert

    def test_session_create_and_execute_action_over_https(self):
        sid = self.s.api_create_session(self.alice)  # ApiStack.request speaks TLS here
        st, obs, _ = self.s.request("POST", f"/runtime/{sid}/execute_action",
                                    {"action": {"action": "run", "args": {"command": "echo over tls"}}},
                                    headers={"X-Session-API-Key": self.alice}, timeout=60)
        self.assertEqual(st, 200, obs)
        self.assertEqual(obs["observation"], "run")
        self.assertEqual(obs["content"], "over tls")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        st, body, hdrs = self.s.request("GET", f"/api/v1/sessions/{sid}", token=self.alice)
        self.assertEqual((st, body["status"]), (200, "READY"))
        self.assertEqual(hdrs.get("strict-transport-security"), HSTS)

    def test_websocket_upgrade_through_tls(self):
        sid = self.s.api_create_session(self.alice)
        ws = WS("127.0.0.1", self.port, f"/ws/sessions/{sid}", protocols=["sandpipe.v1", "bearer." + self.alice],
                tls=self.s.tls)
        try:
            self.assertEqual(ws.status, 101)
            self.assertIsInstance(ws.sock, ssl.SSLSocket)
            self.assertEqual(ws.headers.get("sec-websocket-protocol"), "sandpipe.v1")
            _, out, obs = run_action(ws, "echo ws over tls")
            self.assertEqual(out.strip(), "ws over tls")
            self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        finally:
            ws.close()

    def test_plain_http_to_the_tls_port_is_redirected_to_https(self):
        for method, body in (("GET", None), ("POST", b"{}")):
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            try:
                c.request(method, "/api/v1/health?x=1", body=body)
                r = c.getresponse()
                r.read()
                # 308: a client repeats the same method and body over https.
                self.assertEqual(r.status, 308, method)
                self.assertEqual(r.getheader("Location"), f"https://127.0.0.1:{self.port}/api/v1/health?x=1")
            finally:
                c.close()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        try:  # a browser's ws:// to the https port is redirected the same way
            s.sendall(b"GET /ws/control HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                      b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      b"Sec-WebSocket-Version: 13\r\n\r\n")
            head = s.recv(4096).split(b"\r\n")
            self.assertTrue(head[0].startswith(b"HTTP/1.1 308"), head[0])
        finally:
            s.close()

    def test_security_headers_on_every_kind_of_response(self):
        sid = self.s.api_create_session(self.alice)
        cases = [
            ("GET", "/api/v1/health", {}, 200),                       # API, FastCGI
            ("GET", "/api/v1/sessions", {}, 401),                     # API error (no token)
            ("GET", f"/runtime/{sid}/alive", {}, 200),                # OpenHands route
            ("GET", f"/runtime/{sid}/vscode/connection_token", {}, 403),
            ("GET", "/", {}, 200),                                    # static web UI
            ("GET", "/no/such/page", {}, 404),                        # nginx's own JSON error
        ]
        for method, path, headers, want in cases:
            st, _, hdrs, _ = self.https(method, path, headers=headers)
            self.assertEqual(st, want, path)
            self.assertEqual(hdrs.get("strict-transport-security"), HSTS, path)
            self.assertEqual(hdrs.get("x-content-type-options"), "nosniff", path)
            self.assertEqual(hdrs.get("x-frame-options"), "SAMEORIGIN", path)
            self.assertEqual(hdrs.get("referrer-policy"), "no-referrer", path)
            self.assertNotIn("/", hdrs.get("server", ""), path)  # server_tokens off: no version
        st, _, hdrs, _ = self.https("GET", "/")
        self.assertIn("default-src 'self'", hdrs.get("content-security-policy", ""))
        self.assertIn("wss:", hdrs.get("content-security-policy", ""))


if __name__ == "__main__":
    unittest.main()
