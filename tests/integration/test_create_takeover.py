"""A session create whose gateway dies (kill -9) after it took the request and before the session
was READY (issue 21, docs/api.md "Creating a session when its gateway dies"): the caller gets one
clear answer, never a hang: the session as a surviving gateway of the host brought it up (201),
or an error naming the session, which its record shows ERROR with the reason; no sandbox is left
running that no session holds.

The moment is made exact, not raced: the gateways run a test executor (a shell script standing in
for sandpipe-executor) that stops itself (SIGSTOP) when its sandbox's environment asks, before it
runs the real executor. Once it is stopped the sandbox is started and recorded and its executor
has not said HELLO: the owner is killed -9 there, then the script is let go (SIGCONT) or killed.
A record cut off earlier still (STARTING with no sandbox yet) is written as a dead gateway of this
host leaves it. Real nginx, API, Redis, three gateways, bwrap sandboxes; bounded waits, no timing
asserted."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from apistack import ApiStack, ClassStack  # noqa: E402
from faults import executor_pid  # noqa: E402
from stack import BUILD  # noqa: E402

HOLD = "SP_TEST_HOLD_START"

WRAPPER = f"""#!/bin/sh
# a test's executor: stops itself first when its sandbox's environment says so
[ "${HOLD}" = 1 ] && kill -STOP $$
exec "$(dirname "$0")/plugins/real-executor" "$@"
"""


def make_executor_dir():
    """A directory with the wrapper as sandpipe-executor and, in plugins/ (bound next to it in
    a sandbox), the real executor and the real plugins."""
    d = tempfile.mkdtemp(prefix="sp-exe-")
    os.chmod(d, 0o755)
    real = os.environ.get("SANDPIPE_EXECUTOR") or os.path.join(BUILD, "sandpipe-executor")
    plugins = os.path.join(d, "plugins")
    src = os.path.join(os.path.dirname(real), "plugins")
    if os.path.isdir(src):
        shutil.copytree(src, plugins, symlinks=True)
    else:
        os.mkdir(plugins)
    os.chmod(plugins, 0o755)
    shutil.copy2(real, os.path.join(plugins, "real-executor"))
    exe = os.path.join(d, "sandpipe-executor")
    with open(exe, "w") as f:
        f.write(WRAPPER)
    os.chmod(exe, 0o755)
    return d, exe


def held_pids():
    """Processes stopped (state T) whose environment asks to be held: the wrappers."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state != "T":
                continue
            with open(f"/proc/{p}/environ", "rb") as f:
                if f"{HOLD}=1".encode() in f.read().split(b"\0"):
                    out.append(int(p))
        except (OSError, IndexError):
            continue
    return out


def proc_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


class CreateTakeoverTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.exe_dir, exe = make_executor_dir()
        kept = os.environ.pop("SANDPIPE_EXECUTOR", None)  # ours must be the last --executor
        try:
            cls.st = ApiStack(pool=0, gateways=3, extra=["--executor", exe])
        finally:
            if kept is not None:
                os.environ["SANDPIPE_EXECUTOR"] = kept
        cls.tok = cls.st.token()

    @classmethod
    def tearDownClass(cls):
        for pid in held_pids():
            os.kill(pid, signal.SIGKILL)
        cls.st.stop()
        shutil.rmtree(cls.exe_dir, ignore_errors=True)

    def proc_of(self, gw):
        return self.st.gateway_proc(gw)

    def live_gateways(self):
        return [g for g in ("gw-test", "gw-test-2", "gw-test-3") if self.proc_of(g).poll() is None]

    def record(self, sid):
        raw = self.st.redis("HGETALL", f"sp:session:{{{sid}}}").split("\n")
        return dict(zip(raw[0::2], raw[1::2]))

    def start_held_create(self):
        """A create in a thread whose sandbox's executor stops itself: returns (the thread's
        result dict, the wrapper's pid, the session id, its gateway)."""
        before = set(held_pids())
        known = set(self.st.redis("ZRANGE", "sp:sessions", "0", "-1").split())
        result = {}

        def run():
            result["answer"] = self.st.request(
                "POST", "/api/v1/sessions?timeout=60", {"env": {HOLD: "1"}, "plugins": []},
                token=self.tok, timeout=120)[:2]

        th = threading.Thread(target=run, daemon=True)
        th.start()
        deadline = time.monotonic() + 60
        while True:
            held = [p for p in held_pids() if p not in before]
            if held:
                break
            self.assertTrue(th.is_alive(), f"the create answered first: {result}")
            self.assertLess(time.monotonic(), deadline, "the test executor never stopped itself")
            time.sleep(0.02)
        new = set(self.st.redis("ZRANGE", "sp:sessions", "0", "-1").split()) - known
        self.assertEqual(len(new), 1, new)
        sid = new.pop()
        rec = self.record(sid)
        self.assertEqual(rec.get("status"), "STARTING_RUNTIME", rec)
        self.assertIn("sandbox", rec)
        return th, result, held[0], sid, rec["gateway"]

    def kill(self, gw):
        p = self.proc_of(gw)
        p.send_signal(signal.SIGKILL)
        p.wait(10)

    def told_why(self, th, result, sid, sandbox):
        """The held create failed: it answered, naming the session and the error its record
        keeps, and the sandbox is gone. Returns (HTTP status, record)."""
        th.join(120)
        self.assertFalse(th.is_alive(), "the create never answered")
        status, body = result["answer"]
        self.assertIn("error", body, (status, body))
        msg = body["error"]["message"]
        self.assertIn(sid, msg, (status, body))
        rec = self.record(sid)
        self.assertTrue(rec.get("error"), rec)
        self.assertIn(rec["error"], msg)
        self.assertFalse(proc_alive(sandbox["pid"]), "the sandbox still runs")
        return status, rec

    def tearDown(self):
        for g in ("gw-test", "gw-test-2", "gw-test-3"):
            if self.proc_of(g).poll() is not None:
                self.st.restart_gateway(g)

    def test_1_killed_before_ready_the_session_comes_up_on_a_survivor(self):
        th, result, held, sid, victim = self.start_held_create()
        sandbox = json.loads(self.record(sid)["sandbox"])
        self.kill(victim)
        os.kill(held, signal.SIGCONT)
        th.join(120)
        self.assertFalse(th.is_alive(), "the create never answered")
        status, body = result["answer"]
        self.assertEqual(status, 201, body)
        self.assertEqual(body["id"], sid, body)
        self.assertEqual(body["status"], "READY", body)
        self.assertNotEqual(body["gateway"], victim, body)
        self.assertIn(body["gateway"], self.live_gateways())
        rec = self.record(sid)
        self.assertEqual((rec["status"], rec["gateway"]), ("READY", body["gateway"]), rec)
        self.assertEqual(json.loads(rec["sandbox"])["id"], sandbox["id"])
        st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                    {"action": "run", "args": {"command": "echo up-$((6*7))"}},
                                    token=self.tok, timeout=60)
        self.assertEqual((st, ev["observation"]["content"]), (200, "up-42"), ev)
        st, b, _ = self.st.request("DELETE", f"/api/v1/sessions/{sid}", token=self.tok)
        self.assertEqual(st, 200, b)

    def test_2_killed_before_ready_and_the_sandbox_dies_too_the_caller_is_told(self):
        th, result, held, sid, victim = self.start_held_create()
        sandbox = json.loads(self.record(sid)["sandbox"])
        self.kill(victim)
        os.kill(held, signal.SIGKILL)
        status, rec = self.told_why(th, result, sid, sandbox)
        self.assertGreaterEqual(status, 400)
        self.assertIn(rec["status"], ("ERROR", "ERROR_RUNTIME_DISCONNECTED", "STOPPED"), rec)

    def test_2b_taken_over_then_the_executor_dies_before_its_hello_the_caller_is_told(self):
        th, result, held, sid, victim = self.start_held_create()
        sandbox = json.loads(self.record(sid)["sandbox"])
        self.kill(victim)
        deadline = time.monotonic() + 60
        while self.record(sid).get("gateway") == victim:
            self.assertLess(time.monotonic(), deadline, "the session was not taken over")
            time.sleep(0.02)
        os.kill(held, signal.SIGKILL)  # the new owner is connected and waits for its HELLO
        status, rec = self.told_why(th, result, sid, sandbox)
        self.assertEqual(status, 503)
        self.assertIn(rec["status"], ("ERROR", "STOPPED"), rec)

    def test_3_a_record_cut_off_before_its_sandbox_becomes_error(self):
        """A dead gateway of this host (its pid gone) left a session STARTING with no sandbox: the
        peer that claims it marks it ERROR with the reason instead of leaving it starting."""
        sid, ghost = "s-0000000000c0ffee", "gw-ghost"
        dead = subprocess.Popen(["true"])
        dead.wait()
        info = {}
        with open("/proc/sys/kernel/random/boot_id") as f:
            info["boot"] = f.read().strip()
        info["pidns"] = os.readlink("/proc/self/ns/pid")
        host = self.st.redis("HGET", "sp:gateway:gw-test:info", "host")
        self.st.redis("HSET", f"sp:session:{{{sid}}}", "id", sid, "owner", "test",
                      "gateway", ghost, "status", "STARTING_RUNTIME", "profile", "default",
                      "created", f"{time.time():.6f}", "create_key", "k" * 32)
        self.st.redis("SET", "sp:create:" + "k" * 32, sid, "EX", "600")
        self.st.redis("ZADD", "sp:sessions", f"{time.time():.6f}", sid)
        self.st.redis("SADD", f"sp:gateway:{ghost}:sessions", sid)
        self.st.redis("HSET", f"sp:gateway:{ghost}:info", "host", host, "pid", str(dead.pid),
                      "pid_start", "1", "boot", info["boot"], "pidns", info["pidns"], "started", "1")
        self.st.redis("SADD", "sp:gateways", ghost)
        deadline = time.monotonic() + 60
        while self.record(sid).get("status") == "STARTING_RUNTIME":
            self.assertLess(time.monotonic(), deadline, "the record stays STARTING")
            time.sleep(0.05)
        rec = self.record(sid)
        self.assertEqual(rec["status"], "ERROR", rec)
        self.assertIn(ghost, rec.get("error", ""), rec)
        self.assertIn("before its sandbox", rec.get("error", ""), rec)
        st, b, _ = self.st.request("GET", f"/api/v1/sessions/{sid}", token=self.st.token(sub="test"))
        self.assertEqual((st, b["status"]), (200, "ERROR"), b)
        events = self.st.redis("XRANGE", f"sp:session:{{{sid}}}:events", "-", "+")
        self.assertIn("before its sandbox", events)
        for g in self.live_gateways():
            self.assertNotIn(sid, self.st.redis("SMEMBERS", f"sp:gateway:{g}:sessions").split())


class WarmEnvTakeoverTest(ClassStack, unittest.TestCase):
    """A warm sandbox gets the session's env from its gateway once its executor answers; the env
    is not stored, so a gateway killed before that leaves a start no peer can finish: ERROR."""
    STACK_KW = dict(pool=1, gateways=2)

    def warm_executors(self):
        """The executors of every gateway's warm sandboxes (the pool lists), once each pool is
        full."""
        deadline = time.monotonic() + 60
        while True:
            entries = [self.st.redis("LRANGE", f"sp:pool:{{default}}:{g}", "0", "-1")
                       for g in ("gw-test", "gw-test-2")]
            if all(e.strip() for e in entries):
                break
            self.assertLess(time.monotonic(), deadline, "the pools never filled")
            time.sleep(0.05)
        pids = []
        for e in entries:
            for line in e.split("\n"):
                exe = executor_pid(json.loads(line)["pid"])
                self.assertTrue(exe, line)
                pids.append(exe)
        return pids

    def test_killed_before_the_env_is_set_the_session_is_error(self):
        known = set(self.st.redis("ZRANGE", "sp:sessions", "0", "-1").split())
        stopped = self.warm_executors()
        for p in stopped:
            os.kill(p, signal.SIGSTOP)
        result = {}

        def run():
            result["answer"] = self.st.request(
                "POST", "/api/v1/sessions?timeout=60", {"env": {"SECRET_ISH": "x"}},
                token=self.st.token(), timeout=120)[:2]

        th = threading.Thread(target=run, daemon=True)
        th.start()
        try:
            deadline = time.monotonic() + 60
            while True:
                new = set(self.st.redis("ZRANGE", "sp:sessions", "0", "-1").split()) - known
                rec = {}
                if new:
                    sid = next(iter(new))
                    raw = self.st.redis("HGETALL", f"sp:session:{{{sid}}}").split("\n")
                    rec = dict(zip(raw[0::2], raw[1::2]))
                if rec.get("env_pending") == "1":
                    break
                self.assertLess(time.monotonic(), deadline, f"no warm claim seen: {rec}")
                time.sleep(0.01)
            victim = self.st.gateway_proc(rec["gateway"])
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
        finally:
            for p in stopped:
                os.kill(p, signal.SIGCONT)
        th.join(120)
        self.assertFalse(th.is_alive(), "the create never answered")
        status, body = result["answer"]
        self.assertEqual(status, 503, body)
        self.assertIn(sid, body["error"]["message"])
        self.assertIn("before the session's env was set", body["error"]["message"])
        raw = self.st.redis("HGETALL", f"sp:session:{{{sid}}}").split("\n")
        rec2 = dict(zip(raw[0::2], raw[1::2]))
        self.assertEqual(rec2["status"], "ERROR", rec2)
        self.assertFalse(proc_alive(json.loads(rec["sandbox"])["pid"]), "the sandbox still runs")
        self.st.restart_gateway(rec["gateway"])


if __name__ == "__main__":
    unittest.main()
