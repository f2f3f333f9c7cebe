"""VS Code in a runtime image (sandpipe-image build --vscode, images/setup.sh): a session of the
image runs code-server as its user, on a unix socket in its home; code-server's pages are
relative, so they work behind a proxy that strips a base path (/runtime/<id>/vscode/, as the
session's route to it will), and in real Chromium the workspace opens, the explorer lists its
files and a terminal runs commands in /workspace as the user. The image is this tree's image
plus the code-server step (built once, cached in the store; the npm registry at build time).
Real bwrap, real Redis, Debian's Chromium driven by web/'s playwright-core."""
import http.client
import os
import re
import socket
import subprocess
import unittest

from providers import this_build_vscode_image
from spexec import ROOT
from test_gateway_limits import StackCase, exit_code, run, sandbox_of

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


if __name__ == "__main__":
    unittest.main()
