"""The plugins through the whole stack (nginx + sandpipe-api + gateway + a bwrap sandbox):
run_ipython and browse at the OpenHands action server /runtime/{id}/, the REST actions route,
and a viewer refused."""
import json
import unittest

from apistack import ModuleStack
from test_openhands_runtime import client_action

JUPYTER_MISSING = "JupyterRequirement not found. Unable to run IPython action."
BROWSER_MISSING = "Browser functionality is not supported or disabled."

STACK = ModuleStack(pool=1)
setUpModule, tearDownModule = STACK.start, STACK.stop


class IPythonThroughApis(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.owner = STACK.token(sub="agent", role="user")
        cls.sid = STACK.api_create_session(cls.owner)
        cls.key = {"X-Session-API-Key": cls.owner}

    def execute(self, body, headers=None):
        return STACK.request("POST", f"/runtime/{self.sid}/execute_action", body,
                             headers=self.key if headers is None else headers, timeout=150)

    def test_runtime_execute_action_and_rest(self):
        st, obs, _ = self.execute(client_action("run_ipython", code="a = 6 * 7\nprint(a)",
                                                include_extra=True, kernel_init_code=""))
        self.assertEqual(st, 200, obs)
        self.assertEqual(set(obs), {"message", "observation", "content", "extras", "success"})
        self.assertEqual(obs["observation"], "run_ipython")
        self.assertEqual(obs["extras"], {"code": "a = 6 * 7\nprint(a)", "image_urls": None})
        self.assertEqual(obs["content"], "42\n[Jupyter current working directory: /workspace]\n"
                                         "[Jupyter Python interpreter: /usr/bin/python3]")
        # The REST API reaches the same kernel: the variable is there.
        st, body, _ = STACK.request("POST", f"/api/v1/sessions/{self.sid}/actions?wait=true",
                                    {"action": "run_ipython", "args": {"code": "a", "include_extra": False}},
                                    token=self.owner, timeout=150)
        self.assertEqual(st, 200, body)
        obs = body["observation"]
        self.assertEqual(obs["content"], "42")

    def test_browse_a_server_inside_the_sandbox(self):
        st, obs, _ = self.execute(client_action(
            "run", command="mkdir -p /tmp/site && echo '<h1>Inside</h1>' > /tmp/site/index.html && "
                           "(python3 -m http.server 8932 --bind 127.0.0.1 -d /tmp/site >/dev/null 2>&1 &)"))
        self.assertEqual(st, 200, obs)
        self.execute(client_action("run", command="for i in $(seq 100); do python3 -c 'import socket; "
                                                  "socket.create_connection((\"127.0.0.1\", 8932))' 2>/dev/null && break; sleep 0.1; done"))
        st, obs, _ = self.execute(client_action("browse", url="http://127.0.0.1:8932/", return_axtree=False))
        self.assertEqual(st, 200, obs)
        self.assertEqual(obs["observation"], "browse")
        self.assertFalse(obs["extras"]["error"], obs["content"])
        self.assertIn("# Inside", obs["content"])
        self.assertTrue(obs["extras"]["screenshot"].startswith("data:image/png;base64,"))

    def test_session_plugins_field(self):
        st, s, _ = STACK.request("POST", "/api/v1/sessions", {"plugins": ["jupyter", "agent_skills"]},
                                 token=self.owner, timeout=90)
        self.assertEqual(st, 201, s)
        self.assertEqual(s["plugins"], ["jupyter", "agent_skills"])
        st, g, _ = STACK.request("GET", f"/api/v1/sessions/{s['id']}", token=self.owner)
        self.assertEqual(g["plugins"], ["jupyter", "agent_skills"])
        STACK.request("DELETE", f"/api/v1/sessions/{s['id']}", token=self.owner)
        st, e, _ = STACK.request("POST", "/api/v1/sessions", {"plugins": ["emacs"]}, token=self.owner, timeout=90)
        self.assertEqual(st, 400, e)
        self.assertIn("unknown plugin emacs", e["error"]["message"])

    def test_plugin_status_in_session_json_events_and_cgroup(self):
        # an absent list is every plugin this runtime runs
        st, s, _ = STACK.request("GET", f"/api/v1/sessions/{self.sid}", token=self.owner)
        self.assertEqual(s["plugins"], ["agent_skills", "jupyter", "browser"])
        st, obs, _ = self.execute(client_action("run_ipython", code="import os; print(os.getpid())",
                                                include_extra=False))
        self.assertEqual(st, 200, obs)
        kernel_pid = int(obs["content"])
        st, s, _ = STACK.request("GET", f"/api/v1/sessions/{self.sid}", token=self.owner)
        jup = s["plugin_status"]["jupyter"]
        self.assertEqual((jup["state"], jup["pid"]), ("running", kernel_pid), s)
        self.assertGreater(jup["rss_bytes"], 10 << 20)
        self.assertEqual(s["plugin_status"]["vscode"]["state"], "disabled")
        st, ev, _ = STACK.request("GET", f"/api/v1/sessions/{self.sid}/events?type=plugin_status",
                                  token=self.owner)
        states = [(e["plugin"], e["state"]) for e in ev["events"]]
        self.assertLess(states.index(("jupyter", "starting")), states.index(("jupyter", "running")), states)
        running = [e for e in ev["events"] if (e["plugin"], e["state"]) == ("jupyter", "running")][0]
        self.assertEqual(running["pid"], kernel_pid)
        # counted in the sandbox's limits: the kernel is a process of the sandbox's cgroup
        sb = json.loads(STACK.redis("HGET", f"sp:session:{{{self.sid}}}", "sandbox"))
        self.assertTrue(sb["cgroup"], sb)
        procs = (f"/sys/fs/cgroup/pids/{sb['cgroup']}/cgroup.procs" if sb.get("cgroup_version") == 1
                 else f"/sys/fs/cgroup/{sb['cgroup']}/cgroup.procs")
        with open(procs) as f:
            host_pids = [int(x) for x in f.read().split()]
        inner = {}
        for hp in host_pids:
            try:
                with open(f"/proc/{hp}/status") as f:
                    nspid = [l for l in f if l.startswith("NSpid:")][0].split()[1:]
                inner[int(nspid[-1])] = hp
            except (OSError, IndexError):
                continue
        self.assertIn(kernel_pid, inner, (kernel_pid, inner))
        with open(f"/proc/{inner[kernel_pid]}/cmdline", "rb") as f:
            self.assertIn(b"ipykernel", f.read())
        # Chromium too: the browser's pid as the session shows it is a process of that cgroup
        st, obs, _ = self.execute(client_action("browse", url="about:blank", return_axtree=False))
        self.assertEqual(st, 200, obs)
        st, s, _ = STACK.request("GET", f"/api/v1/sessions/{self.sid}", token=self.owner)
        br = s["plugin_status"]["browser"]
        self.assertEqual(br["state"], "running", s)
        self.assertGreater(br["rss_bytes"], 50 << 20)
        with open(procs) as f:
            host_pids = [int(x) for x in f.read().split()]
        found = None
        for hp in host_pids:
            try:
                with open(f"/proc/{hp}/status") as f:
                    nspid = [l for l in f if l.startswith("NSpid:")][0].split()[1:]
                if int(nspid[-1]) == br["pid"]:
                    found = hp
            except (OSError, IndexError):
                continue
        self.assertIsNotNone(found, (br, host_pids))
        with open(f"/proc/{found}/cmdline", "rb") as f:
            self.assertIn(b"chromium", f.read())

    def test_memory_limit_counts_the_kernel(self):
        # 48 MiB for the whole sandbox: the kernel (~80 MiB) cannot start; the OOM killer takes
        # it, not the executor or bash, and the plugin's state says why
        st, s, _ = STACK.request("POST", "/api/v1/sessions", {"memory": 48 << 20}, token=self.owner, timeout=90)
        self.assertEqual(st, 201, s)
        try:
            if s.get("warning"):
                self.fail(f"no memory limit here: {s['warning']}")
            st, body, _ = STACK.request("POST", f"/api/v1/sessions/{s['id']}/actions?wait=true",
                                        {"action": "run_ipython", "args": {"code": "1+1"}, "timeout": 60},
                                        token=self.owner, timeout=150)
            obs = body["observation"]
            self.assertEqual(obs["observation"], "error", obs)
            self.assertIn("killed by SIGKILL: the sandbox's memory limit", obs["content"])
            st, g, _ = STACK.request("GET", f"/api/v1/sessions/{s['id']}", token=self.owner)
            self.assertEqual(g["status"], "READY")
            self.assertEqual(g["plugin_status"]["jupyter"]["state"], "exited")
            self.assertIn("memory limit", g["plugin_status"]["jupyter"]["reason"])
            st, body, _ = STACK.request("POST", f"/api/v1/sessions/{s['id']}/actions?wait=true",
                                        {"action": "run", "args": {"command": "echo alive"}},
                                        token=self.owner, timeout=150)
            self.assertEqual(body["observation"]["content"], "alive")
        finally:
            STACK.request("DELETE", f"/api/v1/sessions/{s['id']}", token=self.owner)

    def test_session_without_plugins_gets_upstream_texts(self):
        sid = STACK.api_create_session(self.owner, {"plugins": ["agent_skills"]})
        try:
            key = {"X-Session-API-Key": self.owner}
            # OpenHands' action server raises RuntimeError: a 500 with the traceback as detail
            st, body, _ = STACK.request("POST", f"/runtime/{sid}/execute_action",
                                        client_action("run_ipython", code="1+1"), headers=key, timeout=150)
            self.assertEqual(st, 500, body)
            self.assertTrue(body["detail"].startswith("Traceback (most recent call last):\n"), body)
            self.assertTrue(body["detail"].endswith("RuntimeError: " + JUPYTER_MISSING + "\n"), body)
            st, obs, _ = STACK.request("POST", f"/runtime/{sid}/execute_action",
                                       client_action("browse", url="about:blank", return_axtree=False),
                                       headers=key, timeout=150)
            self.assertEqual((st, obs["observation"], obs["content"]), (200, "error", BROWSER_MISSING))
            # sandpipe's own API: the error observation itself
            st, body, _ = STACK.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                        {"action": "run_ipython", "args": {"code": "1"}},
                                        token=self.owner, timeout=150)
            self.assertEqual(body["observation"]["content"], JUPYTER_MISSING)
            st, s, _ = STACK.request("GET", f"/api/v1/sessions/{sid}", token=self.owner)
            self.assertEqual({k: v["state"] for k, v in s["plugin_status"].items()},
                             {"agent_skills": "unavailable", "jupyter": "disabled",
                              "browser": "disabled", "vscode": "disabled"})
        finally:
            STACK.request("DELETE", f"/api/v1/sessions/{sid}", token=self.owner)

    def test_vscode_disabled_answers_as_upstream_without_the_plugin(self):
        # the default image has no code-server (docs/api.md, "VS Code"): asked for or not, the
        # route answers what upstream's action server answers without the vscode plugin,
        # {"token": null}, which its client takes as "no VS Code URL"
        sid = STACK.api_create_session(self.owner, {"plugins": ["vscode"]})
        try:
            for s_id in (sid, self.sid):
                st, body, _ = STACK.request("GET", f"/runtime/{s_id}/vscode/connection_token",
                                            headers=self.key)
                self.assertEqual((st, body), (200, {"token": None}))
            st, s, _ = STACK.request("GET", f"/api/v1/sessions/{sid}", token=self.owner)
            vs = s["plugin_status"]["vscode"]
            self.assertEqual(vs["state"], "unavailable")
            self.assertIn("code-server is not installed", vs["reason"])
            st, body, _ = STACK.request("GET", "/runtime/s-nosuchsession/vscode/connection_token",
                                        headers=self.key)
            self.assertEqual((st, body), (404, {"detail": "Not Found"}))
        finally:
            STACK.request("DELETE", f"/api/v1/sessions/{sid}", token=self.owner)

    def test_viewer_cannot_run_cells(self):
        viewer = STACK.token(sub="v", role="viewer", session=self.sid)
        st, body, _ = STACK.request("POST", f"/api/v1/sessions/{self.sid}/actions",
                                    {"action": "run_ipython", "args": {"code": "1"}}, token=viewer)
        self.assertEqual(st, 403, body)
        st, body, _ = self.execute(client_action("run_ipython", code="1"), {"X-Session-API-Key": viewer})
        self.assertEqual(st, 403, body)


if __name__ == "__main__":
    unittest.main()
