"""Previews across gateways (issue 31 item 6): nginx sends a preview straight to the gateway that
owns its session, whichever gateway it asked; when that gateway dies (kill -9) its peer takes the
session over and the same preview URL answers again, from the same app in the same sandbox; an
app that never answers is cut at --preview-timeout with a page, and holds nothing else up. Real
nginx, API, Redis, two gateways of one host, bwrap sandboxes of the default image."""
import os
import signal
import threading
import time
import unittest

from apistack import ApiStack
from providers import PROVIDERS
from test_preview import APP


class PreviewRouting(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        image = PROVIDERS["bwrap"].prepare()
        cls.st = ApiStack(pool=1, gateways=2, extra=["--image", image, "--preview-timeout", "2"])
        cls.alice = cls.st.token(sub="alice", role="user")
        # one after the other, each on the gateway with the fewest sessions
        cls.sids = [cls.st.api_create_session(cls.alice) for _ in range(2)]
        cls.owner = {s: cls.owner_of(s) for s in cls.sids}
        with open(APP, "rb") as f:
            app = f.read()
        cls.tok = {}
        for sid in cls.sids:
            st, body, _ = cls.st.request("PUT", f"/api/v1/sessions/{sid}/files/content?path=/workspace/app.py",
                                         app, token=cls.alice)
            assert st == 200, body
            cls.sh(sid, "(cd /workspace && nohup python3 app.py 8001 >/tmp/app.log 2>&1 &); sleep 1")
            st, body, _ = cls.st.request("POST", f"/api/v1/sessions/{sid}/ports/8001/token", token=cls.alice)
            assert st == 200, body
            cls.tok[sid] = body["token"]

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    @classmethod
    def owner_of(cls, sid):
        return cls.st.redis("HGET", f"sp:session:{{{sid}}}", "gateway")

    @classmethod
    def sh(cls, sid, command):
        st, ev, _ = cls.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true&timeout=60",
                                   {"action": "run", "args": {"command": command}}, token=cls.alice, timeout=90)
        assert st == 200, (st, ev)
        return ev["observation"]["content"]

    def headers(self, sid, timeout=30):
        st, body, _ = self.st.request("GET", f"/preview/{sid}/8001/~{self.tok[sid]}/headers", timeout=timeout)
        return st, body

    def test_1_each_preview_is_served_by_its_sessions_gateway(self):
        self.assertEqual(sorted(self.owner.values()), ["gw-test", "gw-test-2"])
        for sid in self.sids:
            st, body = self.headers(sid)
            self.assertEqual(st, 200, body)
            self.assertEqual(body["line"], "GET /headers HTTP/1.1")
            # the lookup named that gateway's own preview listener
            pv = self.st.redis("HGET", f"sp:gateway:{self.owner[sid]}:info", "preview")
            self.assertRegex(pv, r"^127\.0\.0\.1:\d+$")

    def test_2_an_app_that_never_answers_is_cut_and_holds_nothing_up(self):
        sid = self.sids[0]
        got = {}

        def hang():
            got["hang"] = self.st.request("GET", f"/preview/{sid}/8001/~{self.tok[sid]}/hang", timeout=60)

        t = threading.Thread(target=hang)
        t.start()
        try:
            time.sleep(0.3)
            st, body = self.headers(sid)  # meanwhile, the same app's other requests go on
            self.assertEqual(st, 200, body)
            self.assertTrue(t.is_alive(), "the stuck request ended before the others were served")
        finally:
            t.join(60)
        st, body, hdrs = got["hang"]
        self.assertEqual(st, 504, body)
        self.assertIn("sent nothing for 2 s", body)
        self.assertEqual(hdrs.get("x-sp-preview-error"), "1")

    def test_3_after_a_kill_9_the_peer_serves_the_same_preview(self):
        sid = next(s for s in self.sids if self.owner[s] == "gw-test-2")
        pid_before = self.sh(sid, "pgrep -f 'app.py 8001'").strip()
        self.st.more_gws[0].send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.owner_of(sid) in ("gw-test-2", ""):
            time.sleep(0.2)
        self.assertEqual(self.owner_of(sid), "gw-test")
        deadline, st, body = time.monotonic() + 30, 0, ""
        while time.monotonic() < deadline:
            st, body = self.headers(sid, timeout=10)
            if st == 200:
                break
            time.sleep(0.2)
        self.assertEqual(st, 200, body)
        # the same app, in the same sandbox (the REST route may still name the dead gateway for
        # the second nginx keeps a lookup)
        deadline = time.monotonic() + 10
        while True:
            st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true&timeout=60",
                                        {"action": "run", "args": {"command": "pgrep -f 'app.py 8001'"}},
                                        token=self.alice, timeout=90)
            if st != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(st, 200, ev)
        self.assertEqual(ev["observation"]["content"].strip(), pid_before)


if __name__ == "__main__":
    unittest.main()
