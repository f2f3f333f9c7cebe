"""The OpenHands Runtime API under /openhands (issue 11): the call sequences of its three clients
replayed as their source does them (V0 openhands/runtime/impl/remote/remote_runtime.py, the V1
app server's openhands/app_server/sandbox/remote_sandbox_service.py, the SDK's
openhands-workspace/openhands/workspace/remote_api/workspace.py), through nginx + sandpipe-api +
gateway + bwrap sandboxes, plus auth, bad input, capacity and idle pause. Contract:
the fields and statuses those clients read (docs/api.md)."""
import io
import json
import os
import threading
import time
import unittest
import urllib.request
import uuid
import zipfile
from urllib.parse import urlparse

from apistack import ApiStack

API = "/openhands"
STACK = None
POLL_LIMIT_S = 180  # V0's remote_runtime_init_timeout: a client gives up after this


def setUpModule():
    global STACK
    STACK = ApiStack(pool=2)


def api_log_problems(stack):
    """What sandpipe-api logged about dead workers or sanitizer reports: must be nothing."""
    with open(os.path.join(stack.tmp, "api.log")) as f:
        return [line for line in f if "exited" in line or "Sanitizer" in line or "runtime error" in line]


def stop_checked(stack):
    """Stops the stack; then fails if sandpipe-api logged a dead worker or a sanitizer report."""
    problems = api_log_problems(stack)
    stack.stop()
    if problems:
        raise AssertionError("sandpipe-api: " + "".join(problems))


def tearDownModule():
    if STACK:
        stop_checked(STACK)


def v0_command(plugins=("agent_skills", "jupyter"), browser=False):
    """get_action_execution_server_startup_command(60000, plugins, config) of OpenHands 0.62."""
    cmd = ["/openhands/micromamba/bin/micromamba", "run", "-n", "openhands", "poetry", "run", "python",
           "-u", "-m", "openhands.runtime.action_execution_server", "60000", "--working-dir", "/workspace"]
    if plugins:
        cmd += ["--plugins", *plugins]
    cmd += ["--username", "openhands", "--user-id", "1000"]
    if not browser:
        cmd.append("--no-enable-browser")
    return cmd


def run_action(command):
    return {"action": {"action": "run", "args": {"command": command, "is_input": False, "thought": "",
                                                 "blocking": False, "hidden": False,
                                                 "confirmation_state": "confirmed", "security_risk": -1},
                       "timeout": 120.0}}


def pool_claims(tc):
    c = tc.s.control()
    try:
        return tc.s.call(c, "pool")["result"]["default"]["claims"]
    finally:
        c.close()


def cgroup_memory_limit(sb):
    if sb.get("cgroup_version") == 1:
        path = f"/sys/fs/cgroup/memory/{sb['cgroup']}/memory.limit_in_bytes"
    else:
        path = f"/sys/fs/cgroup/{sb['cgroup']}/memory.max"
    with open(path) as f:
        return int(f.read())


def url_path(url):
    return urlparse(url).path


def build_request(stack, key, dockerfile, target, tags=()):
    """POST /build as OpenHands' RemoteRuntimeBuilder sends it: the build folder as a base64
    tar.gz ("context"), target_image, tags. dockerfile None: a context without one."""
    import base64
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        files = {"./code/openhands/__init__.py": b"", **({"./Dockerfile": dockerfile.encode()} if dockerfile else {})}
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    parts = [("context", "context.tar.gz", base64.b64encode(buf.getvalue()).decode()),
             ("target_image", None, target)] + [("tags", None, t) for t in tags]
    boundary = "sp-build-" + uuid.uuid4().hex
    body = "".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{n}\""
                   + (f"; filename=\"{fn}\"" if fn else "") + f"\r\n\r\n{v}\r\n" for n, fn, v in parts)
    body += f"--{boundary}--\r\n"
    st, b, _ = stack.request("POST", API + "/build", body, headers={
        "X-API-Key": key, "Content-Type": f"multipart/form-data; boundary={boundary}"}, timeout=120)
    return st, b


def unname(name):
    """Removes a name of the store (its record of who named it, and its Docker tag), not the
    image it names."""
    store = os.environ.get("SANDPIPE_IMAGE_DIR", "/var/lib/sandpipe/images")
    for d in ("names", "owners"):
        try:
            os.unlink(os.path.join(store, d, name.replace("/", "+")))
        except FileNotFoundError:
            pass
    import subprocess
    subprocess.run(["docker", "rmi", name], capture_output=True, timeout=60)


def check_runtime_object(tc, rt):
    """Fields every client dereferences, never null (as OpenHands' RemoteRuntime client reads them)."""
    for k in ("runtime_id", "session_id", "url", "session_api_key", "status", "pod_status", "work_hosts",
              "restart_count", "restart_reasons"):
        tc.assertIn(k, rt)
        tc.assertIsNotNone(rt[k], k)
    tc.assertTrue(rt["runtime_id"].startswith("rt-"), rt)
    tc.assertTrue(rt["session_api_key"])
    tc.assertFalse(rt["url"].endswith("/"), rt["url"])
    tc.assertEqual(urlparse(rt["url"]).path, "/" + rt["runtime_id"])  # path mode
    tc.assertIn(rt["status"], ("running", "paused", "stopped", "starting", "error"))
    # the app ports as preview URLs once the runtime has its session (docs/api.md, "Previews")
    tc.assertIn(sorted(rt["work_hosts"].values()), ([], [12000, 12001]), rt["work_hosts"])
    for url, port in rt["work_hosts"].items():
        tc.assertTrue(url.startswith(f"http://{port}-s-") or f"/preview/s-" in url, url)
    tc.assertEqual(rt["restart_count"], 0)


class V0RemoteRuntime:
    """RemoteRuntime's calls in order: _check_existing_runtime, _start_runtime,
    _wait_until_alive (every 2 s), the action server with X-API-Key and X-Session-API-Key on the
    same httpx session, 503 → /resume and retry when keep_runtime_alive, close → /pause or /stop."""

    def __init__(self, tc, stack, api_key, sid, keep_runtime_alive=False, image="default",
                 plugins=("agent_skills", "jupyter")):
        self.tc, self.s, self.sid = tc, stack, sid
        self.image, self.plugins = image, plugins
        self.headers = {"X-API-Key": api_key}
        self.keep_runtime_alive = keep_runtime_alive
        self.runtime_id = self.runtime_url = None
        self.waits = 0  # the 2 s sleeps wait_until_alive took

    def api(self, method, path, body=None):
        st, b, _ = self.s.request(method, API + path, body, headers=self.headers, timeout=180)
        return st, b

    def parse(self, rt):
        self.runtime_id = rt["runtime_id"]
        self.runtime_url = rt["url"]
        self.available_hosts = rt.get("work_hosts", {})
        if "session_api_key" in rt:
            self.headers["X-Session-API-Key"] = rt["session_api_key"]

    def check_existing(self):
        st, data = self.api("GET", f"/sessions/{self.sid}")
        if st == 404:
            return False
        self.tc.assertEqual(st, 200, data)
        status = data.get("status")
        if status in ("running", "paused"):
            self.parse(data)
        if status == "running":
            return True
        if status == "paused":
            self.resume()
            return True
        self.tc.assertEqual(status, "stopped", data)
        return False

    def start(self):
        st, rt = self.api("POST", "/start", {
            "image": self.image, "command": v0_command(self.plugins), "working_dir": "/openhands/code/",
            "environment": {"DEBUG": "true"}, "session_id": self.sid, "resource_factor": 1})
        self.tc.assertEqual(st, 200, rt)
        check_runtime_object(self.tc, rt)
        self.parse(rt)

    def resume(self):
        st, body = self.api("POST", "/resume", {"runtime_id": self.runtime_id})
        self.tc.assertEqual(st, 200, body)
        self.wait_until_alive()

    def wait_until_alive(self):
        deadline = time.monotonic() + POLL_LIMIT_S
        while time.monotonic() < deadline:
            st, data = self.api("GET", f"/runtime/{self.runtime_id}")
            self.tc.assertEqual(st, 200, data)
            self.tc.assertEqual(data["runtime_id"], self.runtime_id)
            pod_status = data["pod_status"].lower()
            if pod_status == "ready":
                st, alive, _ = self.s.request("GET", url_path(self.runtime_url) + "/alive", headers=self.headers,
                                              timeout=5)
                self.tc.assertEqual((st, alive), (200, {"status": "ok"}))  # V0 fails at once on 404/502/503
                return
            self.tc.assertNotIn(pod_status, ("failed", "unknown", "crashloopbackoff"), data)
            self.waits += 1
            time.sleep(2)  # tenacity.wait_fixed(2)
        self.tc.fail(f"runtime {self.runtime_id} not ready within {POLL_LIMIT_S} s")

    def connect(self):
        if not self.check_existing():
            self.start()
        self.wait_until_alive()

    def execute(self, command):
        path = url_path(self.runtime_url) + "/execute_action"
        st, obs, _ = self.s.request("POST", path, run_action(command), headers=self.headers, timeout=180)
        if st == 503 and self.keep_runtime_alive:
            self.resume()
            st, obs, _ = self.s.request("POST", path, run_action(command), headers=self.headers, timeout=180)
        return st, obs

    def close(self):
        route = "/pause" if self.keep_runtime_alive else "/stop"
        st, body = self.api("POST", route, {"runtime_id": self.runtime_id})
        self.tc.assertEqual(st, 200, body)
        return body


class OHRemoteRuntime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK

    def user(self, sub=None, role="user", session=None):
        return self.s.token(sub=sub or f"u-{uuid.uuid4().hex[:8]}", role=role, session=session)

    def api(self, method, path, body=None, key=None, headers=None, timeout=60):
        h = dict(headers or {})
        if key:
            h["X-API-Key"] = key
        return self.s.request(method, API + path, body, headers=h, timeout=timeout)[:2]

    def start(self, key, sid, **extra):
        st, rt = self.api("POST", "/start", {"image": "default", "session_id": sid, **extra}, key=key)
        self.assertEqual(st, 200, rt)
        check_runtime_object(self, rt)
        return rt

    def wait_status(self, key, sid, status, pod_status=None):
        """Polls /sessions/{sid} (as the SDK does) until it reports status."""
        deadline = time.monotonic() + POLL_LIMIT_S
        while time.monotonic() < deadline:
            st, rt = self.api("GET", f"/sessions/{sid}", key=key)
            self.assertEqual(st, 200, rt)
            if rt["status"] == status and (pod_status is None or rt["pod_status"] == pod_status):
                return rt
            self.assertNotIn(rt["pod_status"], ("failed", "unknown"), rt)
            time.sleep(0.2)
        self.fail(f"{sid} never reached {status}/{pod_status}")

    def stop(self, key, rt):
        st, body = self.api("POST", "/stop", {"runtime_id": rt["runtime_id"]}, key=key)
        self.assertEqual(st, 200, body)

    # ---- the three clients ----

    def test_v0_warm_start_is_ready_on_its_first_look(self):
        """/start waits (bounded: --oh-start-wait, default 5 s) for a runtime that becomes ready, so
        V0's first GET /runtime/{id} right after it sees pod_status ready and V0 never sleeps its
        2 s poll interval (upstream's own Runtime API answers once the pod is scheduled)."""
        key, sid = self.user(), uuid.uuid4().hex
        v0 = V0RemoteRuntime(self, self.s, key, sid)
        v0.start()
        st, rt = v0.api("GET", f"/runtime/{v0.runtime_id}")
        self.assertEqual((st, rt["status"], rt["pod_status"]), (200, "running", "ready"), rt)
        v0.wait_until_alive()
        self.assertEqual(v0.waits, 0)
        v0.close()

    def test_v0_remote_runtime_start_pause_resume_stop_restart(self):
        key, sid = self.user(), uuid.uuid4().hex
        v0 = V0RemoteRuntime(self, self.s, key, sid, keep_runtime_alive=True)
        st, body = v0.api("GET", f"/sessions/{sid}")
        self.assertEqual(st, 404, body)
        self.assertIn("detail", body)
        v0.connect()
        first = v0.runtime_id
        st, obs = v0.execute("export MARK=kept-across-pause; echo state > /workspace/v0.txt")
        self.assertEqual((st, obs["extras"]["metadata"]["exit_code"]), (200, 0), obs)
        st, obs = v0.execute("echo $SESSION_API_KEY $RUNTIME_ID $VSCODE_PORT $OH_RUNTIME_IDLE_TIMEOUT_SECONDS $DEBUG")
        self.assertEqual(obs["content"].split(), [v0.headers["X-Session-API-Key"], first, "60001", "1800", "true"])

        # The runtime pauses (as the API's idle reaper would): actions get 503, V0 resumes.
        paused = v0.close()
        self.assertEqual((paused["status"], paused["pod_status"]), ("paused", "paused"))
        st, body, _ = self.s.request("POST", url_path(v0.runtime_url) + "/execute_action", run_action("true"),
                                     headers=v0.headers)
        self.assertEqual(st, 503, body)
        st, obs = v0.execute("echo $MARK; cat /workspace/v0.txt")  # 503 → /resume → poll → retry
        self.assertEqual((st, obs["content"]), (200, "kept-across-pause\nstate"))

        # close with keep_runtime_alive, then a new RemoteRuntime for the same sid reattaches.
        v0.close()
        again = V0RemoteRuntime(self, self.s, key, sid, keep_runtime_alive=False)
        again.connect()  # /sessions says paused → /resume → poll → /alive
        self.assertEqual(again.runtime_id, first)
        st, obs = again.execute("echo $MARK; cat /workspace/v0.txt")
        self.assertEqual((st, obs["content"]), (200, "kept-across-pause\nstate"))
        stopped = again.close()  # default: /stop
        self.assertEqual((stopped["status"], stopped["pod_status"]), ("stopped", "not found"))
        st, body, _ = self.s.request("POST", url_path(again.runtime_url) + "/execute_action", run_action("true"),
                                     headers=again.headers)
        self.assertEqual(st, 404, body)

        # Reattach after stop: a new runtime under the same session_id.
        third = V0RemoteRuntime(self, self.s, key, sid)
        third.connect()
        self.assertNotEqual(third.runtime_id, first)
        st, obs = third.execute("cat /workspace/v0.txt 2>/dev/null || echo fresh")
        self.assertEqual(obs["content"], "fresh")
        third.close()

    def test_sdk_api_remote_workspace(self):
        key, sid = self.user(), f"agent-server-{uuid.uuid4()}"
        api_headers = {"X-API-Key": key}
        st, body = self.api("GET", f"/sessions/{sid}", headers=api_headers)
        self.assertEqual(st, 404, body)
        st, rt = self.api("POST", "/start", {
            "image": "ghcr.io/openhands/agent-server:abc1234-python-amd64",
            "command": "/usr/local/bin/openhands-agent-server --port 60000", "working_dir": "/",
            "environment": {}, "session_id": sid, "run_as_user": 10001, "fs_group": 10001,
            "image_pull_policy": "IfNotPresent", "runtime_class": "sysbox-runc"}, headers=api_headers, timeout=300)
        self.assertEqual(st, 200, rt)
        check_runtime_object(self, rt)
        self.assertEqual(rt["command"], "/usr/local/bin/openhands-agent-server --port 60000")  # recorded
        runtime_id, url = rt.get("runtime_id") or rt.get("id"), rt["url"]
        # _wait_until_runtime_alive_once: /sessions/{sid}, pod_status, then {url}/health bare.
        deadline, wait = time.monotonic() + 300, 2
        while True:
            st, data = self.api("GET", f"/sessions/{sid}", headers=api_headers)
            self.assertEqual(st, 200, data)
            self.assertIsInstance(data["restart_count"], int)
            pod_status = data.get("pod_status", "").lower()
            self.assertNotIn(pod_status, ("failed", "unknown", "crashloopbackoff"), data)
            if pod_status == "ready":
                with urllib.request.urlopen(url + "/health", timeout=5.0) as resp:
                    self.assertEqual(resp.status, 200)
                    self.assertEqual(json.loads(resp.read()), {"status": "ok"})
                with urllib.request.urlopen(url + "/ready", timeout=5.0) as resp:
                    self.assertEqual(json.loads(resp.read()), {"status": "ready"})
                break
            self.assertLess(time.monotonic(), deadline)
            time.sleep(wait)
            wait = min(wait * 2, 10)
        # After connecting the SDK's client sends X-Session-API-Key everywhere, the API included.
        both = {"X-API-Key": key, "X-Session-API-Key": data["session_api_key"]}
        for route in ("/pause", "/resume"):
            st, body = self.api("POST", route, {"runtime_id": runtime_id}, headers=both, timeout=30)
            self.assertEqual(st, 200, body)
        self.wait_status(key, sid, "running", "ready")
        st, body = self.api("POST", "/stop", {"runtime_id": runtime_id}, headers=both, timeout=30)
        self.assertEqual((st, body["status"]), (200, "stopped"))
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(url + "/health", timeout=5.0)
        self.assertEqual(cm.exception.code, 404)

    def test_v1_app_server_start_batch_list_pause_resume_delete(self):
        key = self.user()
        ids = [uuid.uuid4().hex[:22] for _ in range(2)]  # base62 of 16 bytes, roughly
        env = {"OPENVSCODE_SERVER_ROOT": "/openhands/.openvscode-server", "LOG_JSON": "true",
               "OH_ENABLE_VNC": "0", "OH_CONVERSATIONS_PATH": "/workspace/conversations",
               "OH_BASH_EVENTS_DIR": "/workspace/bash_events", "OH_VSCODE_PORT": "60001"}
        for sandbox_id in ids:
            st, rt = self.api("POST", "/start", {
                "image": "ghcr.io/openhands/agent-server:abc1234-python",
                "command": ["/usr/local/bin/openhands-agent-server", "--port", "60000"], "working_dir": "/workspace",
                "environment": env, "session_id": sandbox_id, "resource_factor": 1, "run_as_user": 10001,
                "run_as_group": 10001, "fs_group": 10001}, key=key, timeout=15)  # V1's httpx budget
            self.assertEqual(st, 200, rt)
            self.assertIn(rt["status"], ("starting", "running"))
            self.assertTrue(rt["session_api_key"])
        # get_sandbox: pod_status first, then status, until RUNNING; then {url}/alive bare.
        for sandbox_id in ids:
            rt = self.wait_status(key, sandbox_id, "running", "ready")
            with urllib.request.urlopen(rt["url"] + "/alive", timeout=5.0) as resp:
                self.assertEqual(json.loads(resp.read()), {"status": "ok"})
        st, batch = self.api("GET", f"/sessions/batch?ids={ids[0]}&ids=unknown-id&ids={ids[1]}", key=key)
        self.assertEqual(st, 200, batch)
        self.assertEqual(sorted(r["session_id"] for r in batch), sorted(ids))
        st, listed = self.api("GET", "/list", key=key)
        self.assertEqual(st, 200, listed)
        self.assertEqual(listed["total"], len(listed["runtimes"]))
        by_sid = {r["session_id"]: r for r in listed["runtimes"]}
        for sandbox_id in ids:
            self.assertEqual(by_sid[sandbox_id]["status"], "running")
            self.assertTrue(by_sid[sandbox_id]["session_api_key"])
        # pause_sandbox / resume_sandbox / delete_sandbox: /sessions for the runtime_id, then the route.
        for route, status in (("/pause", "paused"), ("/resume", "running"), ("/stop", "stopped")):
            st, rt = self.api("GET", f"/sessions/{ids[0]}", key=key)
            st, body = self.api("POST", route, {"runtime_id": rt["runtime_id"]}, key=key, timeout=15)
            self.assertEqual((st, body["status"]), (200, status), body)
        st, listed = self.api("GET", "/list", key=key)
        self.assertEqual([r["session_id"] for r in listed["runtimes"]], [ids[1]])  # stopped: not listed
        self.stop(key, by_sid[ids[1]])

    # ---- /start semantics ----

    def test_start_is_idempotent_per_session_id(self):
        key, sid = self.user(), uuid.uuid4().hex
        first = self.start(key, sid, command=v0_command())
        again = self.start(key, sid)
        self.assertEqual(again["runtime_id"], first["runtime_id"])
        self.assertEqual(again["session_api_key"], first["session_api_key"])
        self.wait_status(key, sid, "running", "ready")
        st, body = self.api("POST", "/pause", {"runtime_id": first["runtime_id"]}, key=key)
        self.assertEqual((st, body["status"]), (200, "paused"))
        resumed = self.start(key, sid)  # paused → resumed, same runtime
        self.assertEqual((resumed["runtime_id"], resumed["status"]), (first["runtime_id"], "running"))
        self.stop(key, first)
        fresh = self.start(key, sid)  # stopped → a new runtime, same session_id
        self.assertNotEqual(fresh["runtime_id"], first["runtime_id"])
        self.assertEqual(fresh["session_id"], sid)
        st, old = self.api("GET", f"/runtime/{first['runtime_id']}", key=key)
        self.assertEqual(st, 404, old)
        self.wait_status(key, sid, "running", "ready")
        self.stop(key, fresh)

    def test_session_ended_outside_the_api_reads_as_stopped(self):
        key, sid = self.user(), uuid.uuid4().hex
        self.start(key, sid)
        rt = self.wait_status(key, sid, "running", "ready")
        st, body, _ = self.s.request("DELETE", f"/api/v1/sessions/{rt['sandpipe']['session']}", token=key)
        self.assertEqual(st, 200, body)
        st, view = self.api("GET", f"/sessions/{sid}", key=key)
        self.assertEqual((st, view["status"], view["pod_status"]), (200, "stopped", "not found"))
        st, listed = self.api("GET", "/list", key=key)
        self.assertNotIn(sid, [r["session_id"] for r in listed["runtimes"]])
        fresh = self.start(key, sid)
        self.assertNotEqual(fresh["runtime_id"], rt["runtime_id"])
        self.stop(key, fresh)

    def test_concurrent_starts(self):
        key = self.user()
        results, sids = {}, [uuid.uuid4().hex for _ in range(20)]

        def go(i, sid):
            results[i] = self.api("POST", "/start", {"session_id": sid, "command": v0_command()}, key=key, timeout=60)

        same = uuid.uuid4().hex
        threads = [threading.Thread(target=go, args=(i, sid)) for i, sid in enumerate(sids)]
        threads += [threading.Thread(target=go, args=(100 + i, same)) for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, (st, rt) in results.items():
            self.assertEqual(st, 200, rt)
        self.assertEqual(len({results[i][1]["runtime_id"] for i in range(20)}), 20)
        self.assertEqual(len({results[100 + i][1]["runtime_id"] for i in range(5)}), 1)  # one per session_id
        for sid in sids + [same]:
            rt = self.wait_status(key, sid, "running", "ready")
            self.stop(key, rt)

    def test_environment_sets_the_no_change_timeout(self):
        """environment NO_CHANGE_TIMEOUT_SECONDS, as upstream's runtime reads it (default 10 s)."""
        key, sid = self.user(), uuid.uuid4().hex
        rt = self.start(key, sid, environment={"NO_CHANGE_TIMEOUT_SECONDS": "1"})
        self.wait_status(key, sid, "running", "ready")
        st, obs, _ = self.s.request("POST", url_path(rt["url"]) + "/execute_action",
                                    run_action("echo started; sleep 4; echo done"),
                                    headers={"X-Session-API-Key": rt["session_api_key"]}, timeout=60)
        self.assertEqual(st, 200, obs)
        self.assertIn("[The command has no new output after 1 seconds.", obs["extras"]["metadata"]["suffix"])
        self.assertNotIn("done", obs["content"])
        self.stop(key, rt)

    def test_user_and_logname_name_the_sandbox_user_in_bash_and_ipython(self):
        """USER and LOGNAME as a login sets them: the name whoami gives, in bash and in the jupyter
        plugin's kernel (OpenHands' test_ipython_multi_user reads os.environ['USER']); a
        session's environment that sets them wins, fresh and warm."""
        key = self.user()
        cell = {"action": {"action": "run_ipython", "args": {
            "code": "import os; print(os.environ['USER'], os.environ['LOGNAME'])", "thought": "",
            "include_extra": False, "confirmation_state": "confirmed", "security_risk": -1},
            "timeout": 120.0}}
        for factor, env in ((1, {}), (2, {}), (1, {"USER": "agent", "LOGNAME": "agent"}),
                            (2, {"USER": "agent", "LOGNAME": "agent"})):
            sid = uuid.uuid4().hex
            rt = self.start(key, sid, command=v0_command(), environment=env, resource_factor=factor)
            self.wait_status(key, sid, "running", "ready")
            base, sk = url_path(rt["url"]), {"X-Session-API-Key": rt["session_api_key"]}
            st, obs, _ = self.s.request("POST", base + "/execute_action",
                                        run_action("whoami; echo \"$USER $LOGNAME\""), headers=sk, timeout=180)
            self.assertEqual(st, 200, obs)
            whoami, names = obs["content"].split("\n")
            want = env.get("USER", whoami)
            self.assertRegex(whoami, r"^[a-z_][a-z0-9_-]*$")  # the sandbox's passwd has a name for it
            self.assertEqual(names, f"{want} {want}", (factor, env))
            st, obs, _ = self.s.request("POST", base + "/execute_action", cell, headers=sk, timeout=180)
            self.assertEqual((st, obs.get("content")), (200, f"{want} {want}"), (factor, env, obs))
            self.stop(key, rt)

    def test_url_follows_host_and_forwarded_proto(self):
        key, sid = self.user(), uuid.uuid4().hex
        rt = self.start(key, sid)
        self.assertEqual(rt["url"], f"http://127.0.0.1:{self.s.http_port}/{rt['runtime_id']}")
        st, view = self.api("GET", f"/sessions/{sid}", key=key,
                            headers={"Host": "sandpipe.example:8443", "X-Forwarded-Proto": "https"})
        self.assertEqual(view["url"], f"https://sandpipe.example:8443/{rt['runtime_id']}")
        self.stop(key, rt)

    def test_runtime_url_serves_file_transfers_with_its_key(self):
        key, sid = self.user(), uuid.uuid4().hex
        rt = self.start(key, sid)
        self.wait_status(key, sid, "running", "ready")
        base, sk = url_path(rt["url"]), {"X-Session-API-Key": rt["session_api_key"]}
        boundary = "sp-oh-boundary"
        form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up.txt\"\r\n"
                f"Content-Type: application/octet-stream\r\n\r\nthrough the runtime url\r\n--{boundary}--\r\n")
        st, b, _ = self.s.request("POST", base + "/upload_file?destination=/workspace/up&recursive=false", form,
                                  headers={**sk, "Content-Type": f"multipart/form-data; boundary={boundary}"})
        self.assertEqual((st, b.get("filename")), (200, "up.txt"), b)
        st, raw, _ = self.s.request("GET", base + "/download_files?path=/workspace/up", headers=sk, raw=True)
        self.assertEqual(st, 200, raw[:200])
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            self.assertEqual(z.read("up.txt"), b"through the runtime url")
        self.stop(key, rt)

    def test_resource_factor_scales_limits_and_plugins_follow_flags(self):
        key, sid = self.user(), uuid.uuid4().hex
        rt = self.start(key, sid, resource_factor=2, command=v0_command(plugins=("jupyter",), browser=True))
        self.assertEqual(rt["resource_factor"], 2)
        self.assertEqual(rt["sandpipe"]["resource_factor"], 2)
        self.assertEqual(rt["sandpipe"]["plugins"], ["jupyter", "browser"])
        rt = self.wait_status(key, sid, "running", "ready")
        # the sandbox's real cgroup limit: the gateway's default (2 GiB) times the factor
        sb = json.loads(self.s.redis("HGET", f"sp:session:{{{rt['sandpipe']['session']}}}", "sandbox"))
        self.assertEqual(cgroup_memory_limit(sb), 2 * 2 * 1024 ** 3)
        self.stop(key, rt)

    def test_factor_one_runtime_comes_from_the_warm_pool_with_its_env(self):
        key, sid = self.user(), uuid.uuid4().hex
        before = pool_claims(self)
        rt = self.start(key, sid, environment={"WARM_ENV": "yes"})
        rt = self.wait_status(key, sid, "running", "ready")
        self.assertEqual(pool_claims(self), before + 1, "the runtime did not come from the warm pool")
        sb = json.loads(self.s.redis("HGET", f"sp:session:{{{rt['sandpipe']['session']}}}", "sandbox"))
        self.assertEqual(cgroup_memory_limit(sb), 2 * 1024 ** 3)
        st, obs, _ = self.s.request("POST", url_path(rt["url"]) + "/execute_action",
                                    run_action("echo $WARM_ENV $RUNTIME_ID"),
                                    headers={"X-Session-API-Key": rt["session_api_key"]})
        self.assertEqual((st, obs["content"]), (200, f"yes {rt['runtime_id']}"), obs)
        self.stop(key, rt)

    # ---- errors ----

    def test_auth_failures_are_401_or_403_with_json(self):
        owner = self.user()
        for headers in ({}, {"X-API-Key": "nope"}, {"X-API-Key": self.s.token(exp_in=-10)}):
            for method, path, body in (("GET", "/list", None), ("POST", "/start", {}),
                                       ("GET", "/sessions/x", None), ("POST", "/stop", {"runtime_id": "rt-x"})):
                st, b = self.api(method, path, body, headers=headers)
                self.assertEqual(st, 401, (path, headers, b))
                self.assertIn("detail", b)
                self.assertIn(b["error"]["code"], ("unauthorized", "token_expired"))
        sid = uuid.uuid4().hex
        rt = self.start(owner, sid)
        viewer = self.user(role="viewer", session="s-whatever")
        st, b = self.api("POST", "/start", {"session_id": uuid.uuid4().hex}, key=viewer)
        self.assertEqual((st, b["error"]["code"]), (403, "forbidden"))
        st, b = self.api("POST", "/stop", {"runtime_id": rt["runtime_id"]}, key=viewer)
        self.assertEqual(st, 403, b)
        other = self.user()
        st, b = self.api("GET", f"/sessions/{sid}", key=other)  # not revealed to another user
        self.assertEqual(st, 404, b)
        st, b = self.api("POST", "/stop", {"runtime_id": rt["runtime_id"]}, key=other)
        self.assertEqual(st, 404, b)
        st, b = self.api("GET", "/list", key=other)
        self.assertNotIn(sid, [r["session_id"] for r in b["runtimes"]])
        admin = self.user(role="admin")
        st, b = self.api("GET", "/list", key=admin)
        self.assertIn(sid, [r["session_id"] for r in b["runtimes"]])
        # The runtime's own URL: a wrong session key is upstream's 403.
        self.wait_status(owner, sid, "running", "ready")
        st, b, _ = self.s.request("POST", url_path(rt["url"]) + "/execute_action", run_action("true"),
                                  headers={"X-Session-API-Key": "wrong"})
        self.assertEqual((st, b), (403, {"detail": "Invalid API Key"}))
        st, b, _ = self.s.request("POST", url_path(rt["url"]) + "/execute_action", run_action("echo ok"),
                                  headers={"X-Session-API-Key": owner})  # a sandpipe token works too
        self.assertEqual((st, b["content"]), (200, "ok"))
        self.stop(owner, rt)

    def test_unknown_runtime_is_404(self):
        key = self.user()
        unknown = "rt-0123456789abcdef"
        st, b = self.api("GET", f"/runtime/{unknown}", key=key)
        self.assertEqual(st, 404, b)
        for route in ("/pause", "/resume", "/stop"):
            st, b = self.api("POST", route, {"runtime_id": unknown}, key=key)
            self.assertEqual(st, 404, b)
            self.assertIn("detail", b)
        for route in ("alive", "health", "ready", "server_info"):
            st, b, _ = self.s.request("GET", f"/{unknown}/{route}")
            self.assertEqual((st, b), (404, {"detail": "Not Found"}))

    def test_malformed_requests_are_400(self):
        key = self.user()
        for body in ("{not json", "[1, 2]", "", {"session_id": "has space"}, {"session_id": "batch"}, {"command": 5},
                     {"command": ["ok", 3]}, {"environment": {"A=B": "x"}}, {"environment": "x"},
                     {"resource_factor": 3.5}, {"resource_factor": 0}, {"run_as_user": "root"}):
            st, b = self.api("POST", "/start", body, key=key)
            self.assertEqual(st, 400, (body, b))
            self.assertEqual(b["error"]["code"], "bad_request")
        for body in ("{", {"runtime_id": 5}, {}):
            st, b = self.api("POST", "/pause", body, key=key)
            self.assertEqual(st, 400, (body, b))

    def test_images_and_builds(self):
        key = self.user()
        st, b = self.api("GET", "/registry_prefix", key=key)
        self.assertEqual((st, b), (200, {"registry_prefix": "sandpipe"}))
        st, b = self.api("GET", "/image_exists?image=default", key=key)
        self.assertEqual(st, 200)
        self.assertIs(b["exists"], True)
        self.assertIn("upload_time", b["image"])
        self.assertIsInstance(b["image"]["image_size_bytes"], int)
        st, b = self.api("GET", "/image_exists?image=sandpipe/runtime:oh_v0.62.0_abc", key=key)
        self.assertEqual((st, b), (200, {"exists": False}))
        # /build's base is its context's FROM line: an image of the store (or OpenHands' own,
        # served with the default) is named at once; an unknown one is refused, never replaced
        from providers import ensure_default_image, image_tool
        ensure_default_image()
        names = []
        try:
            for base, target, tags in (("sandpipe/runtime:default", "sandpipe/runtime:x", ["sandpipe/runtime:x2"]),
                                       ("ghcr.io/openhands/runtime:0.62-nikolaik", "sandpipe/runtime:y", [])):
                st, b = build_request(self.s, key, f"FROM {base}\nRUN true\n", target, tags)
                names += [target, *tags]
                self.assertEqual(st, 202, b)
                self.assertEqual(b["build_id"], "b-" + target.encode().hex())
                st, b = self.api("GET", f"/build_status?build_id={b['build_id']}", key=key)
                self.assertEqual((st, b["status"], b["image"]), (200, "SUCCESS", target), b)
                for name in (target, *tags):
                    st, b = self.api("GET", f"/image_exists?image={name}", key=key)
                    self.assertIs(b["exists"], True, b)
                    self.assertGreater(b["image"]["image_size_bytes"], 0)
                    self.assertTrue(b["image"]["upload_time"])
                    self.assertEqual(image_tool("resolve", name).stdout, image_tool("resolve", "default").stdout)
        finally:
            for name in names:
                unname(name)
        st, b = build_request(self.s, key, "FROM nikolaik/python-nodejs:python3.12-nodejs22\n", "sandpipe/runtime:z")
        self.assertEqual(st, 404, b)
        self.assertIn("base image nikolaik/python-nodejs:python3.12-nodejs22", b["detail"])
        self.assertIn("no local Docker image", b["detail"])
        st, b = build_request(self.s, key, None, "sandpipe/runtime:z")
        self.assertEqual(st, 400, b)
        self.assertIn("no Dockerfile", b["detail"])
        st, b = build_request(self.s, key, "FROM default\n", "../bad")
        self.assertEqual(st, 400, b)
        st, b = self.api("GET", "/image_exists?image=sandpipe/runtime:z", key=key)
        self.assertIs(b["exists"], False, b)
        st, b = self.api("GET", "/build_status?build_id=b-1", key=key)
        self.assertEqual(st, 404, b)
        # /start: an image sandpipe does not have is refused, never replaced
        st, b = self.api("POST", "/start", {"image": "quay.io/nobody/nothing:1", "session_id": "img-x"}, key=key)
        self.assertEqual(st, 404, b)
        self.assertIn("no image", b["detail"])

    # ---- the REST API's pause/resume (the same gateway ops) ----

    def test_rest_pause_resume(self):
        key = self.user()
        sid = self.s.api_create_session(key)
        st, body, _ = self.s.request("POST", f"/api/v1/sessions/{sid}/pause", token=key)
        self.assertEqual((st, body["status"]), (200, "PAUSED"), body)
        st, body, _ = self.s.request("POST", f"/runtime/{sid}/execute_action", run_action("true"),
                                     headers={"X-Session-API-Key": key})
        self.assertEqual(st, 503, body)
        viewer = self.s.token(sub="v", role="viewer", session=sid)
        st, body, _ = self.s.request("POST", f"/api/v1/sessions/{sid}/resume", token=viewer)
        self.assertEqual(st, 403, body)
        st, body, _ = self.s.request("POST", f"/api/v1/sessions/{sid}/resume", token=key)
        self.assertEqual((st, body["status"]), (200, "READY"), body)
        st, obs, _ = self.s.request("POST", f"/runtime/{sid}/execute_action", run_action("echo back"),
                                    headers={"X-Session-API-Key": key})
        self.assertEqual((st, obs["content"]), (200, "back"))
        self.s.request("DELETE", f"/api/v1/sessions/{sid}", token=key)


class OHStartNoWait(unittest.TestCase):
    """--oh-start-wait 0: /start answers at once, the runtime still starting."""

    @classmethod
    def setUpClass(cls):
        cls.s = ApiStack(pool=0, api_extra=["--oh-start-wait", "0"])

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    user = OHRemoteRuntime.user
    api = OHRemoteRuntime.api
    start = OHRemoteRuntime.start
    stop = OHRemoteRuntime.stop

    def test_start_answers_starting_at_once(self):
        key, sid = self.user(), uuid.uuid4().hex
        rt = self.start(key, sid)
        self.assertEqual(rt["status"], "starting", rt)
        self.stop(key, rt)

    def test_stop_while_starting_leaves_no_session_running(self):
        sub = f"u-{uuid.uuid4().hex[:8]}"
        key, sid = self.user(sub), uuid.uuid4().hex
        rt = self.start(key, sid, environment={"X": "1"})
        self.stop(key, rt)
        st, body = self.api("GET", f"/sessions/{sid}", key=key)
        self.assertEqual((st, body["status"]), (200, "stopped"))
        deadline = time.monotonic() + 60
        while True:
            st, page, _ = self.s.request("GET", "/api/v1/sessions", token=key)
            self.assertEqual(st, 200)
            live = [s for s in page["sessions"] if s["status"] != "STOPPED"]
            if not live:
                break
            self.assertLess(time.monotonic(), deadline, live)
            time.sleep(0.2)


class OHCapacity(unittest.TestCase):
    """--oh-max-runtimes 2: a third starting/running runtime gets 429 (V0 retries it). /start
    may also wait for the session here (--oh-start-wait)."""

    @classmethod
    def setUpClass(cls):
        cls.s = ApiStack(pool=0, api_extra=["--oh-max-runtimes", "2", "--oh-start-wait", "5000"])

    @classmethod
    def tearDownClass(cls):
        stop_checked(cls.s)

    def api(self, method, path, body, key):
        return self.s.request(method, API + path, body, headers={"X-API-Key": key})[:2]

    def test_at_capacity_is_429(self):
        key = self.s.token(sub="cap", role="user")
        rts = []
        for sid in ("cap-a", "cap-b"):
            st, rt = self.api("POST", "/start", {"session_id": sid}, key)
            self.assertEqual(st, 200, rt)
            self.assertIn(rt["status"], ("starting", "running"))
            rts.append(rt)
        st, b = self.api("POST", "/start", {"session_id": "cap-c"}, key)
        self.assertEqual(st, 429, b)
        self.assertEqual(b["error"]["code"], "at_capacity")
        st, b = self.api("GET", "/sessions/cap-c", None, key)
        self.assertEqual(st, 404, b)  # nothing half-made
        st, b = self.api("POST", "/start", {"session_id": "cap-a"}, key)
        self.assertEqual(st, 200, b)  # its own runtime again: not a new one
        for rt in rts:  # a paused runtime does not count
            while self.api("GET", f"/runtime/{rt['runtime_id']}", None, key)[1]["pod_status"] != "ready":
                time.sleep(0.2)
        st, b = self.api("POST", "/pause", {"runtime_id": rts[0]["runtime_id"]}, key)
        self.assertEqual(st, 200, b)
        st, c = self.api("POST", "/start", {"session_id": "cap-c"}, key)
        self.assertEqual(st, 200, c)
        st, b = self.api("POST", "/resume", {"runtime_id": rts[0]["runtime_id"]}, key)
        self.assertEqual(st, 429, b)
        st, b = self.api("POST", "/stop", {"runtime_id": rts[1]["runtime_id"]}, key)
        self.assertEqual(st, 200, b)
        st, b = self.api("POST", "/resume", {"runtime_id": rts[0]["runtime_id"]}, key)
        self.assertEqual((st, b["status"]), (200, "running"), b)
        for rt in (rts[0], c):
            self.api("POST", "/stop", {"runtime_id": rt["runtime_id"]}, key)


class OHIdlePause(unittest.TestCase):
    """--oh-idle-timeout 2: an idle runtime is paused (not stopped); the next action gets 503,
    /resume brings it back with its state."""

    @classmethod
    def setUpClass(cls):
        cls.s = ApiStack(pool=0, api_extra=["--oh-idle-timeout", "2"])

    @classmethod
    def tearDownClass(cls):
        stop_checked(cls.s)

    def test_idle_runtime_is_paused_then_resumed_with_its_state(self):
        key = self.s.token(sub="idle", role="user")
        h = {"X-API-Key": key}
        st, rt = self.s.request("POST", API + "/start", {"session_id": "idle-1", "command": v0_command()},
                                headers=h)[:2]
        self.assertEqual(st, 200, rt)
        run_url = url_path(rt["url"]) + "/execute_action"
        sk = {"X-Session-API-Key": rt["session_api_key"]}
        deadline = time.monotonic() + POLL_LIMIT_S
        while True:
            st, obs, _ = self.s.request("POST", run_url, run_action("export IDLE_MARK=still-here"), headers=sk)
            if st == 200:
                break
            self.assertIn(st, (503,), obs)  # starting
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.2)
        st, obs, _ = self.s.request("POST", run_url, run_action("echo $OH_RUNTIME_IDLE_TIMEOUT_SECONDS"), headers=sk)
        self.assertEqual(obs["content"], "2")
        while True:
            st, view, _ = self.s.request("GET", API + "/sessions/idle-1", headers=h)
            self.assertIn(view["status"], ("running", "paused"), view)
            if view["status"] == "paused":
                break
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.3)
        st, body, _ = self.s.request("POST", run_url, run_action("true"), headers=sk)
        self.assertEqual(st, 503, body)
        st, body, _ = self.s.request("POST", API + "/resume", {"runtime_id": rt["runtime_id"]}, headers=h)
        self.assertEqual((st, body["status"]), (200, "running"), body)
        st, obs, _ = self.s.request("POST", run_url, run_action("echo $IDLE_MARK"), headers=sk)
        self.assertEqual((st, obs["content"]), (200, "still-here"))
        self.s.request("POST", API + "/stop", {"runtime_id": rt["runtime_id"]}, headers=h)


if __name__ == "__main__":
    unittest.main()
