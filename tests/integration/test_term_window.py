"""Terminals in the moments around a takeover (issue 21, docs/api.md "Re-attaching"): a client that
reconnects while the new gateway is still taking the terminal back (its re-attach window) with a
`since` past anything the executor ever had is refused with `bad_request` once the executor
answers, as it would be at any other time, while a valid `since` in that same window goes on
from there; and a paused session's terminal survives its gateway's kill -9 and works after the
resume on the gateway that took the session over.

The window is held open, not raced: the sandbox's executor is stopped (SIGSTOP) before its gateway
is killed, so the peer that takes the session over is connected to it but has no HELLO yet; it is
let go (SIGCONT) once the clients are in. Real nginx, API, Redis, two gateways, bwrap sandboxes
and bash; bounded waits, no timing asserted."""
import json
import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from apistack import ClassStack  # noqa: E402
from faults import executor_pid  # noqa: E402
from test_term_takeover import Term, Base  # noqa: E402
from wsclient import BINARY, CLOSE, TEXT  # noqa: E402

GWS = ("gw-test", "gw-test-2")


class TermWindowTest(ClassStack, Base):
    STACK_KW = dict(pool=1, gateways=2)

    def tearDown(self):
        for g in GWS:
            if self.st.gateway_proc(g).poll() is not None:
                self.st.restart_gateway(g)

    def owner(self, sid):
        return self.st.redis("HGET", f"sp:session:{{{sid}}}", "gateway")

    def kill_owner_and_wait_takeover(self, sid):
        victim = self.owner(sid)
        p = self.st.gateway_proc(victim)
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        deadline = time.monotonic() + 60
        while self.owner(sid) in ("", victim):
            self.assertLess(time.monotonic(), deadline, "the session was not taken over")
            time.sleep(0.05)
        return victim

    def api(self, method, path):
        st, body, _ = self.st.request(method, "/api/v1" + path, token=self.st.token(), timeout=60)
        return st, body

    def read_until_text(self, t, kind, timeout=60):
        """Reads t until a text message of type kind; returns it."""
        t.read(lambda t: any(m.get("type") == kind for m in t.texts), timeout=timeout)
        return [m for m in t.texts if m.get("type") == kind][0]

    def test_1_since_past_the_end_in_the_reattach_window_is_refused_a_valid_one_goes_on(self):
        sid = self.st.api_create_session(self.st.token())
        a = self.open_with_state(sid)
        b = Term(self.st, sid)
        b.type("echo second-$((2*5))\n")
        b.read(lambda b: b"second-10" in b.data)
        ta, tb, since_b = a.hello["term"], b.hello["term"], b.offset
        far = a.offset + 10 * 1024 * 1024  # beyond anything the executor ever had
        sb = json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))
        exe = executor_pid(sb["pid"])
        self.assertTrue(exe, "no executor process found")
        os.kill(exe, signal.SIGSTOP)
        try:
            self.kill_owner_and_wait_takeover(sid)
            a.drop()
            b.drop()
            # in the window: both accepted for now (the offsets are known once the executor answers)
            u = Term(self.st, sid, term=ta, since=far)
            self.assertEqual((u.hello.get("type"), u.hello.get("term")), ("terminal", ta), u.hello)
            v = Term(self.st, sid, term=tb, since=since_b)
            self.assertEqual((v.hello.get("type"), v.hello.get("offset")), ("terminal", since_b), v.hello)
        finally:
            os.kill(exe, signal.SIGCONT)
        err = None
        deadline = time.monotonic() + 60
        while err is None:
            self.assertLess(time.monotonic(), deadline, f"no refusal; texts {u.texts}")
            op, d = u.ws.recv(timeout=30)
            self.assertNotEqual(op, CLOSE, f"closed without an error: {d!r}")
            self.assertNotEqual(op, BINARY, "bytes sent for an offset past the end")
            if op == TEXT:
                m = json.loads(d)
                self.assertEqual(m.get("type"), "error", m)
                err = m
        self.assertEqual(err["error"]["code"], "bad_request", err)
        self.assertIn("since must be an output offset from 0 to", err["error"]["message"])
        # the valid one goes on from its offset, the shell the same
        v.type("echo after-$((3*3))\n")
        v.read(lambda v: b"after-9" in v.data)
        self.assertFalse([m for m in v.texts if m.get("type") in ("truncated", "error")], v.texts)
        self.assertNotIn(b"second-10", v.data)  # what came before since is not sent again
        # the refused terminal is still there for a valid offset
        w = Term(self.st, sid, term=ta, since=0)
        self.assertEqual(w.hello.get("type"), "terminal", w.hello)
        self.check_state_and_typing(w)
        for t in (u, v, w):
            t.drop()

    def test_2_a_paused_sessions_terminal_survives_the_takeover_and_works_after_resume(self):
        sid = self.st.api_create_session(self.st.token())
        t = self.open_with_state(sid)
        tid, since = t.hello["term"], t.offset
        st, b = self.api("POST", f"/sessions/{sid}/pause")
        self.assertEqual((st, b.get("status")), (200, "PAUSED"), b)
        victim = self.kill_owner_and_wait_takeover(sid)
        t.drop()
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "PAUSED")
        self.assertEqual(self.terms_record(sid).get("open"), [tid])
        # reconnected while still paused: the terminal waits for the thaw
        u = Term(self.st, sid, term=tid, since=since)
        self.assertEqual((u.hello.get("type"), u.hello.get("offset")), ("terminal", since), u.hello)
        st, b = self.api("POST", f"/sessions/{sid}/resume")
        self.assertEqual((st, b.get("status")), (200, "READY"), b)
        self.assertNotEqual(b.get("gateway", self.owner(sid)), victim, b)
        self.check_state_and_typing(u)
        self.assertFalse([m for m in u.texts if m.get("type") in ("truncated", "error", "exit")], u.texts)
        self.assertEqual(self.terms_record(sid).get("open"), [tid])
        u.drop()
        # and a client that comes only after the resume
        w = Term(self.st, sid, term=tid, since=u.offset)
        self.assertEqual(w.hello.get("type"), "terminal", w.hello)
        w.type("echo again-$((5+5))\n")
        w.read(lambda w: b"again-10" in w.data)
        w.drop()


class TermGoneInWindowTest(ClassStack, Base):
    """A terminal whose --term-grace ran out while no gateway was there, asked for inside the
    restarted gateway's re-attach window: not_found once the executor answers, as at any other
    time."""
    STACK_KW = dict(pool=1, gateways=1, extra=["--term-grace", "2"])

    def test_a_terminal_the_executor_hung_up_is_not_found_after_the_hello(self):
        sid = self.st.api_create_session(self.st.token())
        t = Term(self.st, sid)
        tid = t.hello["term"]
        t.type("echo hi-$((3+4))\n")
        t.read(lambda t: b"hi-7" in t.data)
        self.st.gw.send_signal(signal.SIGKILL)
        self.st.gw.wait(10)
        t.drop()
        time.sleep(4)  # --term-grace 2: the executor hangs the orphaned shell up
        sb = json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))
        exe = executor_pid(sb["pid"])
        self.assertTrue(exe, "no executor process found")
        os.kill(exe, signal.SIGSTOP)
        try:
            self.st.start_gateway()
            u = Term(self.st, sid, term=tid, since=t.offset)
            self.assertEqual((u.hello.get("type"), u.hello.get("term")), ("terminal", tid), u.hello)
        finally:
            os.kill(exe, signal.SIGCONT)
        u.read(lambda u: any(m.get("type") == "error" for m in u.texts))
        err = [m for m in u.texts if m.get("type") == "error"][0]
        self.assertEqual(err["error"]["code"], "not_found", err)
        self.assertIn("--term-grace", err["error"]["message"])
        self.assertEqual(u.data, b"")
        self.assertEqual(json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "terms"))["open"], [])


if __name__ == "__main__":
    unittest.main()
