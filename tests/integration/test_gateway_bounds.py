"""Bounds a host needs on Redis: a session's stream is capped in bytes (oldest trimmed, readers
told), a stopped session's keys expire after the retention and leave the listing."""
import json
import time
import unittest

from stack import Stack, run_action

CAP = 1 << 20  # --stream-bytes for this test


class BoundsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.st = Stack(pool=1, extra=["--stream-bytes", str(CAP), "--retention", "3"])

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def stream(self, sid):
        """Every stored event of the session, oldest first."""
        out = self.st.redis("XRANGE", f"sp:session:{{{sid}}}:events", "-", "+")
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    def test_stream_is_capped_in_bytes_and_readers_see_the_cut(self):
        sid = self.st.create_session()
        ws = self.st.ws(f"/ws/sessions/{sid}")
        # 6 MiB of output: far over the 1 MiB cap
        _, out, obs = run_action(ws, "head -c 6291456 /dev/zero | tr '\\0' x; echo", timeout=120)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        self.assertEqual(len(out), 6291456 + 1)  # live readers got every byte
        events = self.stream(sid)
        stored = sum(len(json.dumps(e)) for e in events)
        # trimmed in steps of cap/16: never much more than the cap
        self.assertLess(stored, CAP + CAP // 8, f"{stored} bytes stored for a {CAP} cap")
        self.assertEqual(events[-1]["type"], "observation")
        # A reader from the start is told what was cut, with the exact range (after a restart,
        # so it reads from Redis rather than the gateway's memory of recent events).
        self.st.kill_gateway()
        self.st.start_gateway()
        old = self.st.ws(f"/ws/sessions/{sid}?since=0")
        first = old.recv_json()
        self.assertEqual(first["type"], "truncated")
        self.assertEqual(first["from"], 1)
        self.assertEqual(first["to"], events[0]["seq"] - 1)
        self.assertEqual(old.recv_json()["seq"], events[0]["seq"])

    def test_stopped_session_keys_expire_and_leave_the_listing(self):
        sid = self.st.create_session()
        ws = self.st.ws(f"/ws/sessions/{sid}")
        run_action(ws, "echo kept for a while")
        c = self.st.control()
        self.assertEqual(self.st.call(c, "session.delete", {"session": sid})["result"]["status"], "STOPPED")
        ttl = int(self.st.redis("TTL", f"sp:session:{{{sid}}}"))
        self.assertTrue(0 < ttl <= 3, ttl)
        self.assertTrue(0 < int(self.st.redis("TTL", f"sp:session:{{{sid}}}:events")) <= 3)
        self.assertIsNotNone(self.st.redis("ZSCORE", "sp:sessions:ended", sid))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.st.redis("EXISTS", f"sp:session:{{{sid}}}") != "0":
            time.sleep(0.2)
        self.assertEqual(self.st.redis("EXISTS", f"sp:session:{{{sid}}}"), "0")
        self.assertEqual(self.st.redis("EXISTS", f"sp:session:{{{sid}}}:events"), "0")


if __name__ == "__main__":
    unittest.main()
