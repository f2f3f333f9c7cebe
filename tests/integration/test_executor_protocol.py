"""Malformed input never crashes the executor or disturbs other channels."""
import json
import os
import socket
import struct
import time
import unittest

from spexec import CLOSE, CREDIT, DATA, ERROR, OPEN, PING, PONG, ExecutorTest, encode


class ProtocolTest(ExecutorTest):
    connection = "test"

    def alive(self):
        c = self.ex.connect()
        self.assertTrue(c.call({"op": "health"})["alive"])
        c.close()

    def test_hello(self):
        self.assertEqual(self.c.hello["protocol"], 1)
        self.assertEqual(self.c.hello["window"], 256 * 1024)

    def test_ping_pong(self):
        self.c.raw(encode(PING, 0, b"abc"))
        self.assertEqual(self.c._conn_frame(PONG).payload, b"abc")

    def test_bad_json_unknown_op_missing_op(self):
        for payload, code in [(b"{not json", "protocol_error"), (b'{"op": "nope"}', "bad_request"),
                              (b'[1,2]', "bad_request"), (b'{"op": 5}', "bad_request"), (b"", "protocol_error")]:
            self.c.raw(encode(OPEN, 77, payload))
            ch = self.c.channels.setdefault(77, __import__("spexec").Channel(self.c, 77, True))
            res = ch.collect()[3]
            self.assertEqual(res["error"]["code"], code, payload)
        self.alive()

    def test_oversized_frame_is_skipped_and_connection_survives(self):
        big = b"x" * (1024 * 1024 + 10)
        self.c.raw(encode(OPEN, 5, big))
        err = self.c._conn_frame(ERROR)
        self.assertEqual(err.json()["error"]["code"], "too_large")
        self.assertTrue(self.c.call({"op": "health"})["alive"])

    def test_bad_header_fields(self):
        self.c.raw(struct.pack(">IBBHI", 0, 99, 0, 0, 1))
        self.assertEqual(self.c._conn_frame(ERROR).json()["error"]["code"], "protocol_error")
        self.c.raw(struct.pack(">IBBHI", 3, CREDIT, 0, 0, 1) + b"abc")
        self.assertEqual(self.c._conn_frame(ERROR).json()["error"]["code"], "protocol_error")
        self.c.raw(encode(DATA, 12345, b"data for nobody"))
        self.assertEqual(self.c._conn_frame(ERROR).json()["error"]["code"], "not_found")
        self.assertTrue(self.c.call({"op": "health"})["alive"])

    def test_garbage_stream_then_other_connections_fine(self):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.ex.sock)
        s.sendall(os.urandom(200000))
        s.close()
        self.alive()

    def test_channel_reuse_refused(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["sleep", "1"]})
        self.c.raw(encode(OPEN, ch.id, json.dumps({"op": "health"}).encode()))
        frames = []
        while True:
            f = ch.next()
            frames.append(f)
            if f.type == CLOSE:
                break
        # the refusal arrives as a CLOSE with an error; the process channel then still completes
        self.assertIn("already open", frames[-1].payload.decode() + "".join(x.payload.decode(errors="replace") for x in frames))

    def test_bad_channel_does_not_disturb_others(self):
        run = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "sleep 0.3; echo ok"]})
        self.c.raw(encode(OPEN, 999, b'{"op":"file.read","path":"/etc/shadow"}'))
        self.c.raw(encode(DATA, 4242, b"junk"))
        out, _, _, res = run.collect()
        self.assertEqual(out, b"ok\n")
        self.assertEqual(res["exit_code"], 0)

    def test_disconnect_mid_command_keeps_executor(self):
        c = self.ex.connect()
        c.open({"op": "action", "session": "dc", "action": {"action": "run", "args": {"command": "sleep 0.5; echo later"}}})
        c.close()
        time.sleep(1.0)
        _, obs = self.c.run("", session="dc")
        # the output produced while nobody listened is delivered to the next action
        self.assertIn("later", obs["content"])

    def write_calls(self):
        """The executor's write system calls so far (write, writev: /proc/PID/io's syscw)."""
        with open("/proc/%d/io" % self.ex.proc.pid) as f:
            return int(next(l for l in f if l.startswith("syscw:")).split()[1])

    def test_frames_of_one_turn_leave_in_one_write(self):
        # A download of a small file answers with its size event, its DATA, EOF and CLOSE
        # in the same turn of the executor's loop: they reach the client in one write (one
        # wake-up of the gateway), not one write per frame.
        with open(os.path.join(self.ex.workspace, "small.txt"), "w") as f:
            f.write("hi\n")
        n = 20
        self.c.open({"op": "file.download", "path": "small.txt"}).collect()
        before = self.write_calls()
        for _ in range(n):
            out, _, events, res = self.c.open({"op": "file.download", "path": "small.txt"}).collect()
            self.assertEqual(out, b"hi\n")
            self.assertEqual(events[0]["event"], "size")
        self.assertLess(self.write_calls() - before, 2 * n)


if __name__ == "__main__":
    unittest.main()
