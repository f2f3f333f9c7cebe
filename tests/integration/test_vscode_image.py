"""VS Code in a runtime image (sandpipe-image build --vscode, images/setup.sh). By hand: a session
of the image runs code-server as its user, on a unix socket in its home; code-server's pages are
relative, so they work behind a proxy that strips a base path, and in real Chromium the
workspace opens, the explorer lists its files and a terminal runs commands in /workspace as the
user. As OpenHands opens it (docs/api.md, "VS Code"): an OpenHands V0 runtime of the image,
through nginx: connection_token gives the runtime's key, {url}/vscode?tkn=KEY starts code-server
(the executor's vscode plugin) and redirects to the session's preview of port 60001, whose
redirect sets the cookie, and code-server's workbench answers; in Chromium the explorer and a
terminal work there; a wrong key, an image without code-server and a deployment without a
preview domain are refused with words. The image is this tree's image plus the code-server step
(built once, cached in the store; the npm registry at build time). Real bwrap, real Redis, real
nginx, Debian's Chromium driven by web/'s playwright-core."""
import http.client
import json
import os
import re
import socket
import subprocess
import unittest
import urllib.parse
import uuid

from apistack import ApiStack
from providers import this_build_image, this_build_vscode_image
from spexec import ROOT
from test_gateway_limits import StackCase, exit_code, run, sandbox_of
from test_oh_remote_runtime import V0RemoteRuntime, url_path

# The terminal's DOM renderer (not WebGL's canvas): its text is what the browser test reads.
SETTINGS = ("mkdir -p $HOME/.local/share/code-server/User && echo "
            "'{\"terminal.integrated.gpuAcceleration\": \"off\"}' "
            "> $HOME/.local/share/code-server/User/settings.json; ")
START = SETTINGS + (
    "nohup code-server --socket $HOME/.code-server.sock --auth none --disable-telemetry "
    "--disable-update-check --disable-workspace-trust /workspace >/tmp/code-server.log 2>&1 & "
    "for i in $(seq 600); do test -S $HOME/.code-server.sock && break; sleep 0.1; done; "
    "test -S $HOME/.code-server.sock || cat /tmp/code-server.log")


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(self.unix_path)


class CodeServerTest(StackCase):
    @classmethod
    def setUpClass(cls):
        cls.image = this_build_vscode_image()
        cls.stack_args = {"pool": 0, "extra": ["--image", cls.image]}
        super().setUpClass()

    def code_server(self):
        """A session of the image with code-server started in it: (session socket, the
        code-server socket's path on the host)."""
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        _, _, obs = run(ws, "echo needle > /workspace/hello.txt; " + START, timeout=90)
        self.assertEqual(exit_code(obs), 0, obs["content"])
        sb = sandbox_of(self.st, sid)
        homes = [os.path.join(sb["dir"], "disk", "home"), os.path.join(sb["dir"], "home")]
        sock = next(os.path.join(h, ".code-server.sock") for h in homes if os.path.isdir(h))
        return ws, sock

    def get(self, sock, path):
        c = UnixHTTPConnection(sock)
        c.request("GET", path)
        r = c.getresponse()
        try:
            return r.status, dict(r.getheaders()), r.read().decode()
        finally:
            c.close()

    def test_serves_relative_pages_as_the_user(self):
        ws, sock = self.code_server()
        status, headers, _ = self.get(sock, "/")
        self.assertEqual((status, headers.get("Location")), (302, "./?folder=/workspace"))
        status, headers, page = self.get(sock, "/?folder=/workspace")
        self.assertEqual(status, 200, page[:500])
        self.assertIn("text/html", headers.get("Content-Type", ""))
        urls = re.findall(r'(?:src|href)="([^"]*)"', page)
        self.assertTrue(urls, page[:2000])
        self.assertEqual([u for u in urls if u.startswith("/")], [], "absolute URLs break a base path")
        _, _, obs = run(ws, "ps -eo user:16,args | grep '[c]ode-server/out/node/entry.js'")
        users = {line.split()[0] for line in obs["content"].splitlines()}
        self.assertEqual(users, {"openhands"}, obs["content"])

    def test_terminal_in_chromium_behind_a_base_path(self):
        if not os.path.exists(os.path.join(ROOT, "web", "node_modules", "playwright-core")):
            raise AssertionError("web/'s playwright-core is missing: run make web")
        ws, sock = self.code_server()
        expect = "from-terminal-42 openhands /workspace"
        command = "echo from-terminal-$((6*7)) $(id -un) $(pwd) | tee /workspace/t.txt"
        r = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "vscode_browser.mjs"),
                            sock, "/runtime/s-test/vscode", "hello.txt", command, expect],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
        self.assertEqual(r.stdout.splitlines(), ["workbench", "explorer lists hello.txt", "prompt",
                                                 f"output {expect}"])
        _, _, obs = run(ws, "cat /workspace/t.txt")
        self.assertEqual(obs["content"].strip(), expect, obs)


V0_PLUGINS = ("agent_skills", "jupyter", "vscode")  # upstream's default


def fetch(port, path, host=None, headers=None):
    """One GET to 127.0.0.1:port (Host: host:port when given): (status, lower-case headers,
    body text)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=180)
    h = dict(headers or {})
    h["Host"] = f"{host or '127.0.0.1'}:{port}"
    try:
        c.request("GET", path, headers=h)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace")
    finally:
        c.close()


class OpenHandsOpensVSCode(unittest.TestCase):
    """A V0 runtime of the code-server image (the stack's default) and one of the image without
    it, both with upstream's plugins (agent_skills jupyter vscode)."""

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(os.path.join(ROOT, "web", "node_modules", "playwright-core")):
            raise AssertionError("web/'s playwright-core is missing: run make web")
        cls.image, cls.plain = this_build_vscode_image(), this_build_image()
        cls.st = ApiStack(pool=0, extra=["--image", cls.image])
        try:
            cls.v0 = cls.runtime("default")
            cls.key = cls.v0.headers["X-Session-API-Key"]
            cls.base = url_path(cls.v0.runtime_url)  # /rt-<16 hex>
            cls.sid = cls.st.redis("HGET", f"sp:oh:session:{{{cls.v0.sid}}}", "session")
            st, obs = cls.v0.execute(SETTINGS + "echo needle > /workspace/hello.txt")
            assert st == 200 and obs["extras"]["metadata"]["exit_code"] == 0, obs
        except Exception:
            cls.st.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    @classmethod
    def runtime(cls, image):
        v0 = V0RemoteRuntime(unittest.TestCase(), cls.st, cls.st.token(sub=f"oh-{uuid.uuid4().hex[:6]}"), uuid.uuid4().hex,
                             image=image, plugins=V0_PLUGINS)
        v0.connect()
        return v0

    def vscode_url(self, tkn):
        return f"{self.base}/vscode?tkn={urllib.parse.quote(tkn, safe='')}&folder=/workspace"

    def plugin(self, sid):
        return json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "plugin_status"))["vscode"]

    def test_the_token_then_two_redirects_lead_to_code_servers_workbench(self):
        st, body, _ = self.st.request("GET", f"{self.base}/vscode/connection_token",
                                      headers={"X-Session-API-Key": self.key})
        self.assertEqual((st, body), (200, {"token": self.key}))
        # V0's own URL (path mode): the runtime's URL + /vscode?tkn=…&folder=/workspace
        st, hdrs, body = fetch(self.st.http_port, self.vscode_url(self.key))
        self.assertEqual(st, 302, body)
        self.assertEqual(hdrs["cache-control"], "no-store")
        host = f"60001-{self.sid}.localhost"
        m = re.fullmatch(rf"http://{re.escape(host)}:{self.st.http_port}/\?sp_token=(s60001\.[^&]+)&folder=%2Fworkspace",
                         hdrs["location"])
        self.assertTrue(m, hdrs["location"])
        # the preview takes the token into its cookie
        u = urllib.parse.urlsplit(hdrs["location"])
        st, hdrs, _ = fetch(self.st.http_port, f"{u.path}?{u.query}", host=host)
        self.assertEqual((st, hdrs["location"]), (302, "/?folder=%2Fworkspace"))
        cookie = hdrs["set-cookie"].split(";")[0]
        st, hdrs, page = fetch(self.st.http_port, "/?folder=%2Fworkspace", host=host, headers={"Cookie": cookie})
        self.assertEqual(st, 200, page[:500])
        self.assertIn("text/html", hdrs["content-type"])
        self.assertIn("vscode-workbench-web-configuration", page)
        # started once, as the user, counted as the plugin's memory
        vs = self.plugin(self.sid)
        self.assertEqual((vs["state"], vs["port"]), ("running", 60001), vs)
        self.assertGreater(vs["rss_bytes"], 50 << 20, vs)
        _, obs = self.v0.execute("ps -o user:16=,pgid=,args= -e | grep '[c]ode-server/out/node/entry.js'")
        procs = [line.split(None, 2) for line in obs["content"].splitlines()]
        self.assertEqual({p[0] for p in procs}, {"openhands"}, obs["content"])
        self.assertEqual({int(p[1]) for p in procs}, {vs["pid"]}, obs["content"])
        # a second opening finds it running: the same process
        st, _, _ = fetch(self.st.http_port, self.vscode_url(self.key))
        self.assertEqual((st, self.plugin(self.sid)["pid"]), (302, vs["pid"]))

    def test_a_wrong_or_missing_key_is_refused(self):
        for path in (self.vscode_url(self.key[:-1] + ("0" if self.key[-1] != "0" else "1")),
                     self.vscode_url("x"), f"{self.base}/vscode?folder=/workspace",
                     f"/runtime/{self.v0.runtime_id}/vscode?tkn=nope"):
            st, hdrs, body = fetch(self.st.http_port, path)
            self.assertEqual((st, json.loads(body)), (403, {"detail": "Invalid API Key"}), path)
            self.assertNotIn("location", hdrs)
        st, body, _ = self.st.request("GET", f"{self.base}/vscode/connection_token",
                                      headers={"X-Session-API-Key": "nope"})
        self.assertEqual(st, 403, body)

    def test_only_who_may_change_the_session_gets_the_key(self):
        # the key opens a shell: a viewer of the session sees the action server, not VS Code
        for token, want in ((self.st.token(sub="carol", role="viewer", session=self.sid), None),
                            (self.st.token(sub="root", role="admin"), self.key)):
            st, body, _ = self.st.request("GET", f"{self.base}/vscode/connection_token",
                                          headers={"X-Session-API-Key": token})
            self.assertEqual((st, body), (200, {"token": want}))

    def test_chromium_opens_the_workspace_and_a_terminal_of_the_sandbox(self):
        expect = "from-vscode-42 openhands /workspace"
        command = "echo from-vscode-$((6*7)) $(id -un) $(pwd) | tee /workspace/v.txt"
        # SP_VSCODE_SCREENSHOT=PATH keeps the window's picture to look at
        shot = os.environ.get("SP_VSCODE_SCREENSHOT") or os.path.join(self.st.tmp, "vscode.png")
        url = f"http://127.0.0.1:{self.st.http_port}{self.vscode_url(self.key)}"
        r = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "vscode_browser.mjs"), "--url", url,
                            "hello.txt", command, expect, shot], capture_output=True, text=True, timeout=400)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
        self.assertEqual(r.stdout.splitlines(), [
            "workbench", f"at http://60001-{self.sid}.localhost:{self.st.http_port}/?folder=%2Fworkspace",
            "explorer lists hello.txt", "prompt", f"output {expect}"])
        self.assertGreater(os.path.getsize(shot), 10000)
        _, obs = self.v0.execute("cat /workspace/v.txt")
        self.assertEqual(obs["content"].strip(), expect, obs)

    def test_a_runtime_without_code_server_says_so(self):
        v0 = self.runtime(self.plain)
        self.addCleanup(v0.close)
        key, base = v0.headers["X-Session-API-Key"], url_path(v0.runtime_url)
        st, body, _ = self.st.request("GET", f"{base}/vscode/connection_token", headers={"X-Session-API-Key": key})
        self.assertEqual((st, body), (200, {"token": None}))
        st, _, body = fetch(self.st.http_port, f"{base}/vscode?tkn={key}&folder=/workspace")
        self.assertEqual(st, 501, body)
        self.assertIn("VS Code is not available in this runtime: code-server is not installed",
                      json.loads(body)["detail"])

    def test_a_port_taken_by_another_program_is_not_taken_for_code_server(self):
        v0 = self.runtime("default")
        self.addCleanup(v0.close)
        key, base = v0.headers["X-Session-API-Key"], url_path(v0.runtime_url)
        sid = self.st.redis("HGET", f"sp:oh:session:{{{v0.sid}}}", "session")
        st, obs = v0.execute("(nohup python3 -m http.server 60001 --bind 127.0.0.1 >/dev/null 2>&1 &); "
                             "for i in $(seq 100); do curl -s -o /dev/null 127.0.0.1:60001 && break; sleep 0.1; done")
        self.assertEqual(st, 200, obs)
        st, _, body = fetch(self.st.http_port, f"{base}/vscode?tkn={key}")
        self.assertEqual(st, 500, body)
        detail = json.loads(body)["detail"]
        self.assertTrue(detail.startswith("VS Code could not be started: code-server exited with status "), detail)
        self.assertIn("EADDRINUSE", detail)
        vs = self.plugin(sid)
        self.assertEqual(vs["state"], "exited", vs)
        self.assertIn("EADDRINUSE", vs["reason"])

    def test_without_a_preview_domain_the_refusal_says_what_is_missing(self):
        # nginx without render.sh --preview-domain sends the gateway an empty X-SP-Preview-Origin:
        # the gateway asked directly gets none at all, which it takes the same way
        st, _, body = fetch(self.st.port, f"{self.base}/vscode/connection_token",
                            headers={"X-Session-API-Key": self.key})
        self.assertEqual((st, json.loads(body)), (200, {"token": None}))
        st, hdrs, body = fetch(self.st.port, self.vscode_url(self.key))
        self.assertEqual(st, 501, body)
        self.assertIn("render.sh --preview-domain", json.loads(body)["detail"])


if __name__ == "__main__":
    unittest.main()
