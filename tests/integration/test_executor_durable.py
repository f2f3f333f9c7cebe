"""Durable actions (executor/durable.h): an action opened with an id survives its connection.
Output is kept until acknowledged (CREDIT), a new connection takes the action over with
action.attach from the offset it has stored, and the result waits for action.release."""
import struct
import time
import unittest

from spexec import CLOSE, CREDIT, DATA, JSON, ExecutorTest, encode

LINES = 200000  # `seq 1 200000` is 1,288,895 bytes: several windows


def expected(n):
    return b"".join(b"%d\n" % i for i in range(1, n + 1))


class DurableTest(ExecutorTest):
    def open_action(self, c, aid, command, timeout=60):
        return c.open({"op": "action", "id": aid, "session": "s-" + aid,
                       "action": {"action": "run", "timeout": timeout,
                                  "args": {"command": command, "blocking": True}}},
                      auto_credit=False)

    def read(self, ch, until_bytes=None, timeout=30):
        """Reads frames without granting credit; returns (bytes, events, close or None)."""
        until = None if until_bytes is None else (lambda b: len(b) >= until_bytes)
        return ch.read(until, timeout, strict=False)

    def ack(self, c, ch, n):
        c.sock.sendall(encode(CREDIT, ch.id, struct.pack(">I", n)))

    def stream_to_end(self, c, ch, stored):
        """Acknowledges everything as it arrives; returns (all bytes, close)."""
        got = bytearray(stored)
        while True:
            f = ch.next(timeout=60)
            if f.type == DATA:
                got.extend(f.payload)
                self.ack(c, ch, len(f.payload))
            elif f.type == CLOSE:
                return bytes(got), f.json()

    def test_connection_lost_mid_stream_loses_nothing(self):
        c = self.ex.connect()
        ch = self.open_action(c, "t1", "seq 1 %d" % LINES)
        first, _, close = self.read(ch, until_bytes=100000)
        self.assertIsNone(close)
        stored = first[:70000]  # the client stored (and acknowledged) only part of it
        self.ack(c, ch, len(stored))
        time.sleep(0.05)
        c.close()  # the gateway dies: the action goes on, orphaned
        c2 = self.ex.connect()
        ch2 = c2.open({"op": "action.attach", "id": "t1", "offset": len(stored)}, auto_credit=False)
        f = ch2.next()
        self.assertEqual(f.type, JSON)
        ev = f.json()
        self.assertEqual(ev["event"], "attached")
        self.assertEqual(ev["acked"], len(stored))
        got, obs = self.stream_to_end(c2, ch2, stored)
        self.assertEqual(got, expected(LINES))
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        self.assertEqual(obs["extras"]["command"], "seq 1 %d" % LINES)
        # Kept until released; released once.
        self.assertEqual(c2.call({"op": "action.release", "id": "t1"}), {"released": True})
        self.assertEqual(c2.call({"op": "action.release", "id": "t1"}), {"released": False})
        c2.close()

    def test_attach_past_the_acknowledged_offset_loses_nothing(self):
        """The gateway stores output before it acknowledges it (credit goes back in batches), so
        it attaches from further than it acknowledged. The attached event's `acked` is where the
        executor's kept bytes begin from then on: credit counted from it (as the gateway counts)
        drops no byte that was never sent."""
        c = self.ex.connect()
        ch = self.open_action(c, "t6", "seq 1 %d" % LINES)
        first, _, close = self.read(ch, until_bytes=100000)
        self.assertIsNone(close)
        self.ack(c, ch, 30000)
        stored = first[:100000]  # stored more than it acknowledged
        time.sleep(0.05)
        c.close()
        c2 = self.ex.connect()
        deadline = time.monotonic() + 30  # the orphan ends: all its output kept, past one window
        while time.monotonic() < deadline and any(
                a["id"] == "t6" and a["running"] for a in c2.call({"op": "action.list"})["actions"]):
            time.sleep(0.05)
        ch2 = c2.open({"op": "action.attach", "id": "t6", "offset": len(stored)}, auto_credit=False)
        ev = ch2.next().json()
        self.assertEqual(ev["event"], "attached")
        self.assertEqual(ev["acked"], len(stored))
        # a window's worth arrives, then credit for all of it, counted from `acked`
        window, _, close = self.read(ch2, until_bytes=256 * 1024)
        self.assertIsNone(close)
        self.ack(c2, ch2, len(stored) + len(window) - ev["acked"])
        got, obs = self.stream_to_end(c2, ch2, stored + window)
        self.assertEqual(got, expected(LINES))
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        c2.call({"op": "action.release", "id": "t6"})
        c2.close()

    def test_action_that_ended_while_detached_keeps_exit_code_and_output(self):
        c = self.ex.connect()
        ch = self.open_action(c, "t2", "sleep 0.5; echo done; (exit 3)")
        c.close()
        time.sleep(1.5)
        c2 = self.ex.connect()
        listing = c2.call({"op": "action.list"})["actions"]
        self.assertIn({"id": "t2", "running": False, "acked": 0, "unacked": 5}, listing)
        ch2 = c2.open({"op": "action.attach", "id": "t2", "offset": 0}, auto_credit=False)
        out, events, obs = self.read(ch2)
        self.assertEqual(events[0]["event"], "attached")
        self.assertIsNotNone(obs)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 3)
        self.assertIn("done", obs["content"])
        self.assertEqual(obs["extras"]["command"], "sleep 0.5; echo done; (exit 3)")
        c2.call({"op": "action.release", "id": "t2"})
        c2.close()

    def test_unknown_id_and_bad_offset(self):
        c = self.ex.connect()
        r = c.call({"op": "action.attach", "id": "nope", "offset": 0})
        self.assertEqual(r["error"]["code"], "not_found")
        ch = self.open_action(c, "t3", "echo hi")
        _, _, close = self.read(ch)
        self.assertIsNotNone(close)
        r = c.call({"op": "action.attach", "id": "t3", "offset": 10 ** 9})
        self.assertEqual(r["error"]["code"], "bad_request")
        r = c.call({"op": "action", "id": "t3", "action": {"action": "run", "args": {"command": "true"}}})
        self.assertEqual(r["error"]["code"], "exists")
        r = c.call({"op": "action", "id": "bad id!", "action": {"action": "run", "args": {"command": "true"}}})
        self.assertEqual(r["error"]["code"], "bad_request")
        c.call({"op": "action.release", "id": "t3"})
        c.close()

    def test_takeover_from_a_live_connection(self):
        c = self.ex.connect()
        ch = self.open_action(c, "t4", "sleep 0.3; echo taken")
        c2 = self.ex.connect()
        ch2 = c2.open({"op": "action.attach", "id": "t4", "offset": 0}, auto_credit=False)
        _, _, close_old = self.read(ch, timeout=10)
        self.assertEqual(close_old["error"]["code"], "busy")
        out, _, obs = self.read(ch2)
        self.assertIn(b"taken", out)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        c2.call({"op": "action.release", "id": "t4"})
        c.close()
        c2.close()

    def test_explicit_close_forgets_the_action(self):
        c = self.ex.connect()
        ch = self.open_action(c, "t5", "sleep 0.2")
        ch.close()
        time.sleep(0.1)
        r = c.call({"op": "action.attach", "id": "t5", "offset": 0})
        self.assertEqual(r["error"]["code"], "not_found")
        c.close()


if __name__ == "__main__":
    unittest.main()


class HeldOutputTest(ExecutorTest):
    """A command whose output waits for credit (the gateway grants it once Redis stored the
    output: a Redis failover or restart holds it) is not a command with no new output: the
    no-change timeout (2 s here) does not end it while the reader holds it back (4 s)."""
    executor_args = {"extra_args": ["--no-change-timeout", "2"]}
    read, ack, stream_to_end = DurableTest.read, DurableTest.ack, DurableTest.stream_to_end

    def test_output_held_for_credit_is_not_no_change(self):
        c = self.ex.connect()
        ch = c.open({"op": "action", "id": "h1", "session": "s-h1",
                     "action": {"action": "run", "timeout": 60,
                                "args": {"command": "seq 1 %d" % LINES, "blocking": False}}},
                    auto_credit=False)
        first, _, close = self.read(ch, until_bytes=200000)  # most of the first window
        self.assertIsNone(close)
        time.sleep(4)  # no credit: output held, longer than the no-change timeout
        self.ack(c, ch, len(first))
        got, obs = self.stream_to_end(c, ch, first)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0, obs["extras"]["metadata"])
        self.assertEqual(got, expected(LINES))
        c.close()
