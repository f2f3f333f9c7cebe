"""Pause and resume (cgroup freezer) through the gateway: state kept, work refused while frozen,
heartbeats quiet, idle pause, a gateway restart while paused (real bwrap sandboxes, real Redis)."""
import os
import signal
import time
import unittest

from test_gateway_limits import (StackCase, cgroup_file, exit_code, run, sandbox_of,
                                 session_hash)


def read_int(path):
    with open(path) as f:
        text = f.read().strip()
    return int(text) if text else 0


def freezer_state(sb):
    if sb.get("cgroup_version") == 1:
        with open(cgroup_file(sb, "freezer", "freezer.state")) as f:
            return f.read().strip()
    with open(cgroup_file(sb, "freezer", "cgroup.events")) as f:
        return "FROZEN" if "frozen 1" in f.read() else "THAWED"


class PauseTest(StackCase):
    stack_args = {"pool": 1}

    def call(self, method, sid):
        c = self.ws("/ws/control")
        return self.st.call(c, method, {"session": sid})

    def wait_status(self, ws, status, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = ws.recv_json(timeout=max(0.1, deadline - time.monotonic()))
            if m.get("type") == "status" and m.get("status") == status:
                return m
        self.fail(f"no {status} status event")

    def test_pause_freezes_keeps_state_and_resume_continues(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        sb = sandbox_of(self.st, sid)
        ctr = os.path.join(sb["workspace"], "ctr")
        _, out, _ = run(ws, "x=42; (i=0; while true; do i=$((i+1)); echo $i > ctr; sleep 0.02; done) & echo started")
        self.assertTrue(out.endswith("started\n"), out)
        while not os.path.exists(ctr) or read_int(ctr) < 3:
            time.sleep(0.02)

        r = self.call("session.pause", sid)
        self.assertEqual(r["result"]["status"], "PAUSED", r)
        self.assertEqual(freezer_state(sb), "FROZEN")
        self.assertEqual(session_hash(self.st, sid, "status"), "PAUSED")
        m = self.wait_status(ws, "PAUSED")
        self.assertEqual(m.get("message"), "paused by client")
        frozen_at = read_int(ctr)
        # Longer than the executor heartbeat's dead-man time (6 s): a paused session is not
        # taken for a dead one.
        time.sleep(7)
        self.assertEqual(read_int(ctr), frozen_at, "the counter moved while frozen")
        self.assertEqual(self.call("session.get", sid)["result"]["status"], "PAUSED")
        # work is refused with a clear error while paused
        ws.send_json({"type": "action", "id": "p", "action": {"action": "run", "args": {"command": "echo no"}}})
        m = ws.recv_json(timeout=10)
        self.assertEqual(m.get("type"), "error", m)
        self.assertIn("PAUSED", m["error"]["message"])
        # pausing twice is fine
        self.assertEqual(self.call("session.pause", sid)["result"]["status"], "PAUSED")

        r = self.call("session.resume", sid)
        self.assertEqual(r["result"]["status"], "READY", r)
        self.assertEqual(freezer_state(sb), "THAWED")
        _, out, _ = run(ws, "echo $x")
        self.assertEqual(out, "42\n")  # the shell kept its variables
        while read_int(ctr) <= frozen_at:  # the background job runs again
            time.sleep(0.02)
        self.assertEqual(self.call("session.resume", sid)["result"]["status"], "READY")

    def test_command_running_at_pause_finishes_after_resume(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        ws.send_json({"type": "action", "id": "r", "action": {"action": "run", "args": {"command": "for i in $(seq 1 10); do echo n$i; sleep 0.1; done"}}})
        got, seq = [], None
        while not [m for m in got if m.get("type") == "output"]:
            m = ws.recv_json(timeout=20)
            if m.get("type") == "ack":
                seq = m["seq"]
            got.append(m)
        self.assertEqual(self.call("session.pause", sid)["result"]["status"], "PAUSED")
        time.sleep(0.5)
        self.assertEqual(self.call("session.resume", sid)["result"]["status"], "READY")
        while True:
            m = ws.recv_json(timeout=30)
            got.append(m)
            if m.get("type") == "observation" and m.get("action") == seq:
                break
        text = "".join(m.get("data", "") for m in got if m.get("type") == "output")
        self.assertEqual(text, "".join(f"n{i}\n" for i in range(1, 11)))
        self.assertEqual(exit_code(m["observation"]), 0)

    def test_viewer_and_other_user_cannot_pause(self):
        sid = self.st.create_session()
        c = self.ws("/ws/control", self.st.token(role="viewer", session=sid))
        self.assertEqual(self.st.call(c, "session.pause", {"session": sid})["error"]["code"], "forbidden")
        c = self.ws("/ws/control", self.st.token(sub="mallory"))
        self.assertEqual(self.st.call(c, "session.pause", {"session": sid})["error"]["code"], "not_found")
        self.assertEqual(self.call("session.resume", sid)["result"]["status"], "READY")  # not paused: no-op


class IdlePauseTest(StackCase):
    stack_args = {"pool": 0}

    def test_idle_session_with_idle_action_pause_is_paused_not_stopped(self):
        sid = self.st.create_session(params={"idle_timeout": 1, "idle_action": "pause"})
        ws = self.session_ws(sid)
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline and status != "PAUSED":
            m = ws.recv_json(timeout=20)
            if m.get("type") == "status":
                status = m["status"]
                msg = m.get("message")
        self.assertEqual(status, "PAUSED")
        self.assertEqual(msg, "idle timeout")
        self.assertEqual(freezer_state(sandbox_of(self.st, sid)), "FROZEN")
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.resume", {"session": sid})["result"]["status"], "READY")
        _, out, _ = run(ws, "echo awake")
        self.assertEqual(out, "awake\n")


class PauseRestartTest(StackCase):
    stack_args = {"pool": 0}

    def test_gateway_restart_while_paused_then_resume(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        run(ws, "y=7")
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.pause", {"session": sid})["result"]["status"], "PAUSED")
        self.st.kill_gateway(signal.SIGKILL)
        self.st.start_gateway()
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.get", {"session": sid})["result"]["status"], "PAUSED")
        r = self.st.call(c, "session.resume", {"session": sid})
        self.assertNotIn("error", r, r)
        ws = self.session_ws(sid)
        _, out, _ = run(ws, "echo $y")
        self.assertEqual(out, "7\n")
        self.assertEqual(session_hash(self.st, sid, "status"), "READY")


class LifetimePauseTest(StackCase):
    stack_args = {"pool": 0}

    def test_lifetime_action_pause_survives_a_restart_and_pauses_at_the_end(self):
        """lifetime_action "pause" and auto_resume (E2B's onTimeout 'pause', autoResume) are in
        the session's record: a gateway killed and restarted still pauses the session at its
        max_lifetime (no end after that) instead of deleting it; bad values are refused."""
        sid = self.st.create_session(params={"max_lifetime": 4, "lifetime_action": "pause",
                                             "auto_resume": 60})
        ws = self.session_ws(sid)
        run(ws, "y=9")
        self.st.kill_gateway(signal.SIGKILL)
        self.st.start_gateway()
        c = self.ws("/ws/control")
        got = self.st.call(c, "session.get", {"session": sid})["result"]
        self.assertEqual((got["lifetime_action"], got["auto_resume"]), ("pause", 60))
        got = self.st.eventually(
            lambda: (lambda r: r if r["status"] == "PAUSED" else None)(
                self.st.call(c, "session.get", {"session": sid})["result"]),
            "the session paused at its max_lifetime", timeout=30, step=0.2)
        self.assertEqual(got["max_lifetime"], 0, "no end while paused")
        self.assertEqual(freezer_state(sandbox_of(self.st, sid)), "FROZEN")
        self.assertEqual(session_hash(self.st, sid, "lifetime_action"), "pause")
        self.assertEqual(self.st.call(c, "session.resume", {"session": sid})["result"]["status"], "READY")
        ws = self.session_ws(sid)
        _, out, _ = run(ws, "echo $y")
        self.assertEqual(out, "9\n")
        for bad, field in (({"lifetime_action": "sleep"}, "lifetime_action"),
                           ({"idle_action": "halt"}, "idle_action"),
                           ({"auto_resume": -1}, "auto_resume")):
            r = self.st.call(c, "session.create", bad)
            self.assertEqual(r["error"]["code"], "bad_request", r)
            self.assertIn(field, r["error"]["message"])


if __name__ == "__main__":
    unittest.main()
