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
