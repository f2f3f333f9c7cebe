"""The plugins through the whole stack (nginx + sandpipe-api + gateway + a bwrap sandbox):
run_ipython and browse at the OpenHands action server /runtime/{id}/, the REST actions route,
and a viewer refused."""
import unittest

from apistack import ApiStack
from test_openhands_runtime import client_action

STACK = None


def setUpModule():
    global STACK
    STACK = ApiStack(pool=1)


def tearDownModule():
    if STACK:
        STACK.stop()


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

    def test_viewer_cannot_run_cells(self):
        viewer = STACK.token(sub="v", role="viewer", session=self.sid)
        st, body, _ = STACK.request("POST", f"/api/v1/sessions/{self.sid}/actions",
                                    {"action": "run_ipython", "args": {"code": "1"}}, token=viewer)
        self.assertEqual(st, 403, body)
        st, body, _ = self.execute(client_action("run_ipython", code="1"), {"X-Session-API-Key": viewer})
        self.assertEqual(st, 403, body)


if __name__ == "__main__":
    unittest.main()
