"""The browser IDE (web/) in real Chromium against the whole stack: redis, the gateway with
bwrap sandboxes, sandpipe-api and nginx serving web/dist on one loopback origin, as `make run`
starts it. Each test runs one file of web/tests/ (node's test runner driving Debian's chromium
through playwright-core); screenshots of each view go to build/<mode>/web-screenshots/."""
import json
import os
import shutil
import subprocess
import unittest

from apistack import ApiStack
from spexec import MODE, ROOT
from stack import free_port

STACK = None
WEB = os.path.join(ROOT, "web")
# What nginx serves: web/dist (make web), or another build (node web/build.mjs --outdir DIR).
DIST = os.environ.get("SANDPIPE_WEB_ROOT", os.path.join(WEB, "dist"))
SHOTS = os.path.join(ROOT, "build", MODE, "web-screenshots")


def setUpModule():
    global STACK
    missing = [p for p in (os.path.join(DIST, "index.html"),
                           os.path.join(WEB, "node_modules", "playwright-core"))
               if not os.path.exists(p)]
    if missing:
        raise AssertionError(f"the web UI is not built ({', '.join(missing)} missing): run make web")
    if not shutil.which("node") or not os.path.exists(os.environ.get("SP_CHROMIUM", "/usr/bin/chromium")):
        raise AssertionError("node and chromium are needed (scripts/install-deps.sh installs them)")
    STACK = ApiStack(pool=2, web_root=DIST)


def tearDownModule():
    if STACK:
        STACK.stop()


class Browser(unittest.TestCase):
    def run_web_test(self, name, timeout=600, stack=None, **extra_env):
        stack = stack or STACK
        env = dict(os.environ,
                   SP_URL=f"http://127.0.0.1:{stack.http_port}",
                   SP_ADMIN_TOKEN=stack.token(sub="root", role="admin"),
                   SP_USER_TOKEN=stack.token(sub="alice", role="user"),
                   SP_SHOTS=SHOTS,
                   SP_NGINX_PID=str(stack.nginx.pid), SP_GATEWAY_PID=str(stack.gw.pid), **extra_env)
        def run():
            r = subprocess.run(["node", "--test", "--test-reporter=spec", f"tests/{name}.test.mjs"],
                               cwd=WEB, env=env, capture_output=True, text=True, timeout=timeout)
            return r, r.stdout + r.stderr
        r, out = run()
        print(out)
        if r.returncode != 0 and "Target crashed" in out:
            # Chromium's renderer itself died (seen once under a loaded full run, never alone):
            # the page cannot answer after that, so the file runs once more, and says so.
            print(f"web/tests/{name}.test.mjs: Chromium's renderer crashed; running it again")
            r, out = run()
            print(out)
        self.assertEqual(r.returncode, 0, f"web/tests/{name}.test.mjs failed:\n{out[-6000:]}")

    def test_sign_in(self):
        self.run_web_test("signin")

    def test_sessions_list(self):
        self.run_web_test("sessions")

    def test_terminal(self):
        self.run_web_test("terminal")

    def test_terminal_outage(self):
        self.run_web_test("terminal_outage")

    def test_viewer_is_read_only(self):
        self.run_web_test("viewer")

    def test_agent_view(self):
        self.run_web_test("agent")

    def test_agent_timeline_truth(self):
        self.run_web_test("agent_truth")

    def test_ended_unknown_unauthorised_states(self):
        self.run_web_test("states")

    def test_files(self):
        self.run_web_test("files")

    def test_file_events(self):
        self.run_web_test("file_events")

    def test_keyboard(self):
        self.run_web_test("keyboard")

    def test_editor_tabs_search_and_restore(self):
        self.run_web_test("editor_tabs")

    def test_dashboards(self):
        self.run_web_test("dashboard")

    def test_plugin_observations(self):
        self.run_web_test("plugins")

    def test_preview_tab(self):
        self.run_web_test("preview")

    def test_e2b_sdk_watched_live_and_replayed(self):
        # the real npm e2b SDK (tests/e2b, make e2b-sdk) drives a sandbox while /watch shows it
        if not os.path.exists(os.path.join(ROOT, "tests", "e2b", "node_modules", "e2b")):
            raise AssertionError("the e2b SDK is not installed (tests/e2b/node_modules): run make e2b-sdk")
        origin = f"http://127.0.0.1:{STACK.http_port}"
        self.run_web_test("e2b_watch", E2B_API_URL=f"{origin}/e2b", E2B_SANDBOX_URL=origin,
                          E2B_API_KEY=STACK.token(sub="alice", role="user"))


class TakeoverBrowser(unittest.TestCase):
    """Two gateways of one host behind nginx: a terminal over its gateway's SIGKILL."""
    run_web_test = Browser.run_web_test

    def test_terminal_over_a_takeover(self):
        st = ApiStack(pool=1, gateways=2, web_root=DIST)
        try:
            pids = {"gw-test": st.gw.pid, "gw-test-2": st.more_gws[0].pid}
            self.run_web_test("terminal_takeover", stack=st, SP_GATEWAY_PIDS=json.dumps(pids))
        finally:
            st.stop()


class PreviewSameSiteBrowser(unittest.TestCase):
    """The Preview tab where the IDE and the previews are same-site (the IDE opened as
    ide.pv.localhost, previews at P-S.pv.localhost): the frame takes the port's own origin; and
    public ports allowed (--preview-public on): Make public is offered."""
    run_web_test = Browser.run_web_test

    def test_preview_tab_in_the_ports_own_origin(self):
        st = ApiStack(pool=1, web_root=DIST, preview_domain="pv.localhost",
                      extra=["--preview-public", "on"])
        try:
            self.run_web_test("preview", stack=st, SP_IDE_URL=f"http://ide.pv.localhost:{st.http_port}",
                              SP_PREVIEW_FORM="host", SP_PREVIEW_PUBLIC="on")
        finally:
            st.stop()


class EmbedBrowser(unittest.TestCase):
    """/watch/ in frames of other origins: refused by default, allowed for the origins of
    render.sh --frame-ancestors (a stack of its own), the IDE never."""
    run_web_test = Browser.run_web_test

    def test_watch_is_not_embedded_elsewhere_by_default(self):
        self.run_web_test("watch_embed", SP_FRAME_PORT=str(free_port()), SP_FRAME_NAMED="0")

    def test_watch_is_embedded_where_the_operator_allows(self):
        port = free_port()
        st = ApiStack(pool=1, web_root=DIST,
                      nginx_extra=["--frame-ancestors", f"http://127.0.0.1:{port}"])
        try:
            self.run_web_test("watch_embed", stack=st, SP_FRAME_PORT=str(port), SP_FRAME_NAMED="1")
        finally:
            st.stop()


if __name__ == "__main__":
    unittest.main()
