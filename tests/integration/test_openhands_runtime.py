"""/runtime/{session}/ as an OpenHands action-execution server: the requests an upstream
ActionExecutionClient sends (openhands/runtime/impl/action_execution/action_execution_client.py),
replayed through nginx + sandpipe-api + gateway + a bwrap sandbox, and the answers checked field
by field against upstream's action_execution_server."""
import base64
import json
import os
import re
import signal
import time
import unittest

from apistack import ApiStack, ModuleStack
from stack import proc_tree

STACK = ModuleStack(pool=1)
setUpModule, tearDownModule = STACK.start, STACK.stop


def vsize(pid):
    """A process's virtual size in bytes (/proc/PID/stat field 23), 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[20])
    except (OSError, IndexError, ValueError):
        return 0


def client_action(action, timeout=120.0, **args):
    """An action serialised as the upstream client does (event_to_dict + timeout)."""
    base = {"thought": "", "security_risk": -1}  # asdict(): the action class's fields only
    if action in ("run", "run_ipython"):
        base["confirmation_state"] = "confirmed"
    if action == "run":
        base.update({"is_input": False, "blocking": False, "is_static": False, "cwd": None, "hidden": False})
    base.update(args)
    return {"action": {"action": action, "args": base, "timeout": timeout, "message": f"{action} action"}}


METADATA_KEYS = {"exit_code", "pid", "username", "hostname", "working_dir", "py_interpreter_path",
                 "prefix", "suffix"}


class RuntimeServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.owner = STACK.token(sub="agent", role="user")
        cls.sid = STACK.api_create_session(cls.owner)
        cls.base = f"/runtime/{cls.sid}"
        cls.key = {"X-Session-API-Key": cls.owner}

    def post(self, route, body, headers=None, timeout=150):
        return self.s.request("POST", f"{self.base}/{route}", body, headers=self.key if headers is None else headers,
                              timeout=timeout)

    def execute(self, action, **args):
        st, obs, _ = self.post("execute_action", client_action(action, **args))
        self.assertEqual(st, 200, obs)
        return obs

    def test_alive_needs_no_key(self):
        st, body, _ = self.s.request("GET", f"{self.base}/alive")
        self.assertEqual((st, body), (200, {"status": "ok"}))

    def server_info(self):
        st, raw, _ = self.s.request("GET", f"{self.base}/server_info", raw=True)  # no key needed
        self.assertEqual(st, 200, raw)
        return json.loads(raw)

    def test_server_info_floats_and_idle_time_reset_only_by_execute_action(self):
        self.execute("run", command="true")
        time.sleep(1.2)
        self.post("list_files", {})
        info = self.server_info()
        self.assertIsInstance(info["uptime"], float)
        self.assertIsInstance(info["idle_time"], float)
        self.assertGreaterEqual(info["idle_time"], 1.0)  # list_files did not reset it
        self.execute("run", command="true")
        self.assertLess(self.server_info()["idle_time"], 1.0)

    def test_last_execution_time_reaches_redis(self):
        """The gateway keeps the last execution time in memory and writes it to the session's
        runtime hash within a second or two, where a gateway taking the session over reads it."""
        before = time.time()
        self.execute("run", command="true")
        stored = 0.0
        for _ in range(50):  # the gateway writes it at its next 1 s tick
            stored = float(self.s.redis("HGET", f"sp:session:{{{self.sid}}}:runtime", "last_execute") or 0)
            if stored >= before:
                break
            time.sleep(0.1)
        self.assertGreaterEqual(stored, before)
        self.assertLessEqual(stored, time.time())

    def test_server_info_resources_are_the_sandboxs(self):
        """Upstream's get_system_stats() shape and types (openhands/runtime/utils/system_stats.py),
        filled from the executor's health of this sandbox, checked against the host's view."""
        info = self.server_info()
        self.assertEqual(set(info), {"uptime", "idle_time", "resources"})
        res = info["resources"]
        self.assertEqual(set(res), {"cpu_percent", "memory", "disk", "io"})
        self.assertIsInstance(res["cpu_percent"], float)
        self.assertGreaterEqual(res["cpu_percent"], 0.0)
        self.assertLessEqual(res["cpu_percent"], 100.0 * os.cpu_count())

        mem = res["memory"]
        self.assertEqual(set(mem), {"rss", "vms", "percent"})
        self.assertIsInstance(mem["rss"], int)
        self.assertIsInstance(mem["vms"], int)
        self.assertIsInstance(mem["percent"], float)
        self.assertGreater(mem["rss"], 1 << 20)  # the executor and its bash at least
        # vms sums the virtual sizes of the sandbox's processes, as psutil would: more than their
        # RSS, and at least the executor's own as the host sees it
        self.assertGreater(mem["vms"], mem["rss"])
        sb = json.loads(self.s.redis("HGET", f"sp:session:{{{self.sid}}}", "sandbox"))
        self.assertGreaterEqual(mem["vms"], max(vsize(p) for p in proc_tree(sb["pid"])))
        with open("/proc/meminfo") as f:
            total = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
        self.assertAlmostEqual(mem["percent"], 100.0 * mem["rss"] / total, places=4)

        disk = res["disk"]
        self.assertEqual(set(disk), {"total", "used", "free", "percent"})
        for k in ("total", "used", "free"):
            self.assertIsInstance(disk[k], int, k)
        self.assertIsInstance(disk["percent"], float)
        # the filesystem of the sandbox's workspace: its own disk (docs/operations.md, "Limits")
        st = os.statvfs(sb["workspace"])
        self.assertEqual(disk["total"], st.f_blocks * st.f_frsize)
        self.assertGreater(disk["used"], 0)
        self.assertLessEqual(disk["used"] + disk["free"], disk["total"])
        # psutil's percent: used over what a user can use, one decimal
        self.assertEqual(disk["percent"], round(100.0 * disk["used"] / (disk["used"] + disk["free"]), 1))

        self.assertEqual(set(res["io"]), {"read_bytes", "write_bytes"})
        for k in ("read_bytes", "write_bytes"):
            self.assertIsInstance(res["io"][k], int, k)
            self.assertGreaterEqual(res["io"][k], 0)

    def test_server_info_cpu_percent_sees_a_busy_sandbox(self):
        obs = self.execute("run", command="(while :; do :; done) &")
        self.assertRegex(obs["content"], r"^\[1\] \d+")
        try:
            self.server_info()  # the start of the window cpu_percent is measured over
            time.sleep(0.5)
            busy = self.server_info()["resources"]["cpu_percent"]
        finally:
            self.execute("run", command="kill %1")
        self.assertGreater(busy, 0.0)
        self.assertLessEqual(busy, 100.0 * os.cpu_count())

    def test_run_observation_fields(self):
        obs = self.execute("run", command="echo hello && cd /tmp")
        self.assertEqual(obs["observation"], "run")
        self.assertEqual(obs["content"], "hello")
        self.assertEqual(obs["message"], "Command `echo hello && cd /tmp` executed with exit code 0.")
        self.assertIs(obs["success"], True)
        self.assertEqual(set(obs), {"observation", "content", "extras", "message", "success"})
        md = obs["extras"]["metadata"]
        self.assertEqual(set(md), METADATA_KEYS)
        self.assertEqual(md["exit_code"], 0)
        self.assertEqual(md["working_dir"], "/tmp")
        self.assertEqual(md["suffix"], "\n[The command completed with exit code 0.]")
        self.assertEqual(obs["extras"]["command"], "echo hello && cd /tmp")
        obs = self.execute("run", command="cd /workspace && false")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 1)
        self.assertIs(obs["success"], False)

    def test_write_then_read(self):
        obs = self.execute("write", path="/workspace/rt.txt", content="alpha\nbeta", start=0, end=-1)
        self.assertEqual(obs["observation"], "write")
        self.assertEqual(obs["extras"]["path"], "/workspace/rt.txt")
        obs = self.execute("read", path="/workspace/rt.txt", start=0, end=-1, impl_source="default",
                           view_range=None)
        self.assertEqual(obs["observation"], "read")
        self.assertEqual(obs["extras"]["path"], "/workspace/rt.txt")
        self.assertIn("alpha\n", obs["content"])
        self.assertIn("beta", obs["content"])

    def test_edit_create_replace_and_view(self):
        obs = self.execute("edit", path="/workspace/e.py", command="create", file_text="x = 1\ny = 2\n",
                           impl_source="oh_aci", old_str=None, new_str=None, insert_line=None,
                           content="", start=1, end=-1)
        self.assertEqual(obs["observation"], "edit")
        self.assertIn("File created successfully at: /workspace/e.py", obs["content"])
        obs = self.execute("edit", path="/workspace/e.py", command="str_replace", old_str="y = 2",
                           new_str="y = 3", impl_source="oh_aci")
        self.assertEqual(obs["observation"], "edit")
        self.assertIn("has been edited", obs["content"])
        self.assertEqual(obs["extras"]["old_content"], "y = 2")
        self.assertEqual(obs["extras"]["new_content"], "y = 3")
        obs = self.execute("edit", path="/workspace/e.py", command="view", impl_source="oh_aci")
        self.assertIn("Here's the result of running `cat -n`", obs["content"])
        self.assertIn("     2\ty = 3", obs["content"])

    def test_error_cases_come_back_as_upstream_texts(self):
        obs = self.execute("edit", path="/workspace/e2.py", command="str_replace", old_str="nope",
                           new_str="x", impl_source="oh_aci")
        self.assertTrue(obs["content"].startswith("ERROR:\n"), obs)
        obs = self.execute("read", path="/workspace/missing.txt", start=0, end=-1)
        self.assertIn("File not found: /workspace/missing.txt", obs["content"])
        obs = self.execute("run", command="")
        self.assertIn("ERROR: No previous running command to retrieve logs from.", obs["content"])

    def test_execute_action_without_action_is_422(self):
        st, body, _ = self.post("execute_action", {"not_action": {}})
        self.assertEqual(st, 422)
        self.assertEqual(body["detail"], "Invalid request parameters")
        self.assertIn("errors", body)
        st, body, _ = self.post("execute_action", "{broken")
        self.assertEqual(st, 422)

    def test_missing_or_wrong_key_is_403(self):
        other = self.s.token(sub="someone-else", role="user")
        viewer = self.s.token(sub="v", role="viewer", session=self.sid)
        for headers in ({}, {"X-Session-API-Key": "nope"}, {"X-Session-API-Key": other},
                        {"X-Session-API-Key": viewer}):
            st, body, _ = self.post("execute_action", client_action("run", command="true"), headers=headers)
            self.assertEqual((st, body), (403, {"detail": "Invalid API Key"}))
        st, body, _ = self.post("list_files", {}, headers={})
        self.assertEqual((st, body), (403, {"detail": "Invalid API Key"}))
        st, body, _ = self.post("list_files", {}, headers={"X-Session-API-Key": viewer})
        self.assertEqual(st, 200)  # read-only is fine for a viewer

    def test_unknown_session_is_404(self):
        for method, route in (("GET", "alive"), ("GET", "server_info"), ("POST", "execute_action")):
            st, body, _ = self.s.request(method, f"/runtime/s-doesnotexist/{route}",
                                         client_action("run", command="true") if method == "POST" else None,
                                         headers=self.key)
            self.assertEqual(st, 404)
            self.assertIn("detail", body)

    def test_list_files_sorted_as_upstream(self):
        self.execute("run", command="mkdir -p /workspace/lf/Bdir /workspace/lf/adir && "
                                    "touch /workspace/lf/c.txt /workspace/lf/.hidden /workspace/lf/B.txt")
        st, files, _ = self.post("list_files", {"path": "/workspace/lf"})
        self.assertEqual(st, 200)
        self.assertEqual(files, ["adir/", "Bdir/", ".hidden", "B.txt", "c.txt"])
        st, files, _ = self.post("list_files", {"path": "lf"})  # relative to the initial cwd
        self.assertEqual(files, ["adir/", "Bdir/", ".hidden", "B.txt", "c.txt"])
        st, files, _ = self.post("list_files", {"path": "/workspace/nope"})
        self.assertEqual((st, files), (200, []))
        st, files, _ = self.post("list_files", {"path": "/workspace/lf/c.txt"})
        self.assertEqual((st, files), (200, []))
        st, files, _ = self.post("list_files", {})
        self.assertIn("lf/", files)

    def put_file(self, path, data):
        """Writes data to path in the sandbox (through bash: base64 in pieces)."""
        b64, tmp = base64.b64encode(data).decode(), f"'{path}.b64'"
        self.execute("run", command=f"rm -f {tmp}")
        for i in range(0, len(b64), 60000):
            self.execute("run", command=f"printf %s '{b64[i:i + 60000]}' >> {tmp}")
        obs = self.execute("run", command=f"base64 -d {tmp} > '{path}' && rm {tmp}")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0, obs)

    def view(self, path, headers=None):
        from urllib.parse import quote
        return self.s.request("GET", f"{self.base}/view?path={quote(path, safe='')}",
                              headers=self.key if headers is None else headers, raw=True)

    def inline(self, page, mime):
        """The bytes a viewer page carries inline as a data: URL of mime."""
        m = re.search(rb'src="data:' + re.escape(mime.encode()) + rb';base64,([A-Za-z0-9+/=]*)"', page)
        self.assertIsNotNone(m, page[:600])
        return base64.b64decode(m.group(1))

    def test_view_shows_a_png_and_a_pdf_as_upstreams_file_viewer(self):
        self.execute("run", command="mkdir -p /workspace/vw/adir && echo hi > /workspace/vw/notes.txt")
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3 + b"\x01"  # 777 bytes: not a multiple of 3
        pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
        self.put_file("/workspace/vw/a b.png", png)
        self.put_file("/workspace/vw/doc.PDF", pdf)
        st, page, h = self.view("/workspace/vw/a b.png")
        self.assertEqual(st, 200, page)
        self.assertEqual(h["content-type"], "text/html; charset=utf-8")
        self.assertEqual(int(h["content-length"]), len(page))
        self.assertIn("default-src 'none'", h["content-security-policy"])
        self.assertIn(b"<title>File Viewer - a b.png</title>", page)
        self.assertIn(b'<img alt="a b.png"', page)
        self.assertEqual(self.inline(page, "image/png"), png)
        st, page, h = self.view("/workspace/vw/doc.PDF")
        self.assertEqual((st, h["content-type"]), (200, "text/html; charset=utf-8"))
        self.assertIn(b"<title>File Viewer - doc.PDF</title>", page)
        self.assertIn(b'<embed type="application/pdf"', page)
        self.assertEqual(self.inline(page, "application/pdf"), pdf)
        # upstream's errors: HTML, its statuses and words
        for path, status, words in [
                ("workspace/vw/a b.png", 400, b"<h1>Error: Path must be absolute</h1><p>workspace/vw/a b.png</p>"),
                ("/workspace/vw/nope.png", 404, b"<h1>Error: File not found</h1><p>/workspace/vw/nope.png</p>"),
                ("/workspace/vw/adir", 400, b"<h1>Error: Path is a directory</h1><p>/workspace/vw/adir</p>"),
                ("/workspace/vw/notes.txt", 500, b"<h1>Error viewing file</h1><p>/workspace/vw/notes.txt</p>"
                                                 b"<p>Unsupported file extension: .txt. Supported extensions"
                                                 b" are: .pdf, .png, .jpg, .jpeg, .gif</p>"),
                ("/workspace/vw/<b>.png", 404, b"<p>/workspace/vw/&lt;b&gt;.png</p>")]:
            st, page, h = self.view(path)
            self.assertEqual(st, status, (path, page))
            self.assertEqual(h["content-type"], "text/html; charset=utf-8")
            self.assertIn(words, page)
        st, body, _ = self.s.request("GET", f"{self.base}/view", headers=self.key)
        self.assertEqual(st, 422)
        self.assertEqual(body["errors"][0]["loc"], ["query", "path"])
        st, _, _ = self.view("/workspace/vw/a b.png", headers={})
        self.assertEqual(st, 403)

    def test_view_streams_a_file_past_the_executors_window(self):
        n = 3 * 1024 * 1024 + 2
        data = bytes(i * 7 % 251 for i in range(n))
        obs = self.execute("run", command="python3 -c 'import sys; sys.stdout.buffer.write("
                                          f"bytes(i * 7 % 251 for i in range({n})))' > /workspace/big.jpg")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0, obs)
        st, page, h = self.view("/workspace/big.jpg")
        self.assertEqual(st, 200)
        self.assertEqual(int(h["content-length"]), len(page))
        self.assertEqual(self.inline(page, "image/jpeg"), data)

    def test_server_url_file_names_the_viewer(self):
        obs = self.execute("run", command="cat /tmp/oh-server-url")
        self.assertEqual(obs["content"].strip(), "http://localhost:30001")

    def test_vscode_connection_token_is_null(self):
        st, body, _ = self.s.request("GET", f"{self.base}/vscode/connection_token", headers=self.key)
        self.assertEqual((st, body), (200, {"token": None}))
        st, body, _ = self.s.request("GET", f"{self.base}/vscode/connection_token")
        self.assertEqual(st, 403)


class NoChangeTimeout(unittest.TestCase):
    """The "no new output" timeout (10 s by default) comes from the session's environment,
    NO_CHANGE_TIMEOUT_SECONDS, as upstream's runtime reads it (its own tests run with 1 s)."""

    def check(self, params):
        owner = STACK.token(sub="agent", role="user")
        sid = STACK.api_create_session(owner, params)
        key = {"X-Session-API-Key": owner}
        st, obs, _ = STACK.request("POST", f"/runtime/{sid}/execute_action",
                                   client_action("run", command="echo started; sleep 4; echo done"), headers=key,
                                   timeout=60)
        self.assertEqual(st, 200, obs)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], -1, obs)
        self.assertIn("[The command has no new output after 1 seconds.", obs["extras"]["metadata"]["suffix"])
        self.assertIn("started", obs["content"])
        self.assertNotIn("done", obs["content"])
        STACK.request("DELETE", f"/api/v1/sessions/{sid}", token=owner)

    def test_a_warm_sandbox_takes_it_from_the_sessions_env(self):
        self.check({"env": {"NO_CHANGE_TIMEOUT_SECONDS": "1"}})

    def test_a_fresh_sandbox_takes_it_from_the_sessions_env(self):
        self.check({"env": {"NO_CHANGE_TIMEOUT_SECONDS": "1"}, "pids": 300})  # own limits: not from the pool


class RuntimeGatewayGone(unittest.TestCase):
    """Its own stack: the session's gateway dies (SIGKILL) and its heartbeat expires."""

    def test_dead_gateway_is_502_runtime_disconnected_then_a_restart_serves_again(self):
        s = ApiStack(pool=0)
        try:
            owner = s.token(sub="agent", role="user")
            sid = s.api_create_session(owner)
            key = {"X-Session-API-Key": owner}
            st, obs, _ = s.request("POST", f"/runtime/{sid}/execute_action", client_action("run", command="echo up"), headers=key)
            self.assertEqual((st, obs["content"]), (200, "up"))
            s.kill_gateway(signal.SIGKILL)
            s.redis("DEL", "sp:gateway:gw-test")  # what its 15 s TTL does
            st, body, _ = s.request("POST", f"/runtime/{sid}/execute_action", client_action("run", command="echo x"),
                                    headers=key)
            self.assertEqual((st, body), (502, {"detail": "Runtime disconnected: its gateway is not running"}))
            st, body, _ = s.request("GET", f"/runtime/{sid}/alive")
            self.assertEqual(st, 502, body)
            s.start_gateway()  # re-attaches the session: the runtime answers again
            st, obs, _ = s.request("POST", f"/runtime/{sid}/execute_action", client_action("run", command="echo back"),
                                   headers=key)
            self.assertEqual((st, obs["content"]), (200, "back"))
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
