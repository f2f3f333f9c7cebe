"""Processes, terminals and flow control against a real executor."""
import os
import struct
import time
import unittest

from spexec import CLOSE, DATA, JSON, Executor, ExecutorTest


class ProcTest(ExecutorTest):
    connection = "test"

    def test_spawn_separate_streams_and_exit_code(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "echo out; echo err >&2; exit 7"]})
        out, err, events, res = ch.collect()
        self.assertEqual(out, b"out\n")
        self.assertEqual(err, b"err\n")
        self.assertEqual(events[0]["event"], "started")
        self.assertEqual(res["exit_code"], 7)
        self.assertIsNone(res["signal"])

    def test_stdin_and_eof(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "tr a-z A-Z; echo done"]})
        ch.send(b"hello ")
        ch.send(b"world\n")
        ch.eof()
        out, _, _, res = ch.collect()
        self.assertEqual(out, b"HELLO WORLD\ndone\n")
        self.assertEqual(res["exit_code"], 0)

    def test_large_stdin_roundtrip(self):
        data = os.urandom(3 * 1024 * 1024)
        ch = self.c.open({"op": "proc.spawn", "argv": ["cat"]})
        out, sent = bytearray(), 0
        # One thread: send while we have credit, otherwise read (which also brings CREDIT).
        while True:
            if sent < len(data) and ch.send_credit > 0:
                n = min(ch.send_credit, 65536, len(data) - sent)
                ch.send(data[sent:sent + n])
                sent += n
                if sent == len(data):
                    ch.eof()
                continue
            f = ch.next(timeout=30)
            if f.type == DATA:
                out.extend(f.payload)
            elif f.type == CLOSE:
                break
        self.assertEqual(bytes(out), data)
        self.assertEqual(f.json()["exit_code"], 0)

    def test_cwd_env_and_missing_binary(self):
        ws = os.path.realpath(self.ex.workspace)
        os.makedirs(os.path.join(ws, "d"), exist_ok=True)
        out, _, _, res = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "pwd; echo $SP_X"],
                                      "cwd": "d", "env": {"SP_X": "42"}}).collect()
        self.assertEqual(out, f"{ws}/d\n42\n".encode())
        res = self.c.call({"op": "proc.spawn", "argv": ["/nonexistent/binary"]})
        self.assertEqual(res["error"]["code"], "not_found")
        self.assertIn("/nonexistent/binary", res["error"]["message"])

    def test_cwd_escape_refused(self):
        res = self.c.call({"op": "proc.spawn", "argv": ["true"], "cwd": "/etc"})
        self.assertEqual(res["error"]["code"], "path_escape")

    def test_status_kept_after_client_leaves_and_reattach_with_offset(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "echo first; sleep 0.5; echo second; exit 3"]})
        started = ch.next()
        pid_id = started.json()["id"]
        first = ch.next()
        self.assertEqual(first.payload, b"first\n")
        ch.close()  # detach: the process keeps running
        self.c.close()
        time.sleep(1.0)
        c2 = self.ex.connect()
        procs = {p["id"]: p for p in c2.call({"op": "proc.list"})["processes"]}
        self.assertFalse(procs[pid_id]["running"])
        self.assertEqual(procs[pid_id]["exit_code"], 3)
        out, _, events, res = c2.open({"op": "proc.attach", "id": pid_id, "stdout_offset": 6}).collect()
        self.assertEqual(out, b"second\n")
        self.assertEqual(events[0]["event"], "attached")
        self.assertEqual(res["exit_code"], 3)
        c2.close()
        self.c = self.ex.connect()

    def test_reattach_to_running_process(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "for i in 1 2 3 4 5; do echo $i; sleep 0.2; done"]})
        pid_id = ch.next().json()["id"]
        ch.close()
        c2 = self.ex.connect()
        out, _, _, res = c2.open({"op": "proc.attach", "id": pid_id}).collect()
        self.assertEqual(out, b"1\n2\n3\n4\n5\n")
        self.assertEqual(res["exit_code"], 0)
        c2.close()

    def test_signal_and_kill(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["sleep", "100"]})
        pid_id = ch.next().json()["id"]
        r = self.c.call({"op": "proc.signal", "id": pid_id, "signal": "TERM"})
        self.assertNotIn("error", r)
        _, _, _, res = ch.collect()
        self.assertEqual(res["signal"], 15)
        self.assertIsNone(res["exit_code"])
        r = self.c.call({"op": "proc.signal", "id": "p999999", "signal": "TERM"})
        self.assertEqual(r["error"]["code"], "not_found")

    def test_lost_output_is_reported_not_silent(self):
        # 3 MiB written with nobody attached: the 1 MiB ring keeps the tail, the head is reported lost.
        ch = self.c.open({"op": "proc.spawn", "argv": ["sh", "-c", "head -c 3145728 /dev/zero"]})
        pid_id = ch.next().json()["id"]
        ch.close()
        for _ in range(100):
            p = [p for p in self.c.call({"op": "proc.list"})["processes"] if p["id"] == pid_id][0]
            if not p["running"]:
                break
            time.sleep(0.05)
        out, _, events, res = self.c.open({"op": "proc.attach", "id": pid_id}).collect()
        lost = [e for e in events if e.get("event") == "truncated"]
        self.assertEqual(len(lost), 1)
        self.assertEqual(lost[0]["lost_from"], 0)
        self.assertEqual(lost[0]["lost_to"] + len(out), 3145728)
        self.assertEqual(len(out), 1 << 20)

    def test_backpressure_yes_without_reader_is_bounded_and_lossless(self):
        ch = self.c.open({"op": "proc.spawn", "argv": ["yes"]}, auto_credit=False)
        pid_id = ch.next().json()["id"]
        time.sleep(1.0)
        # We granted nothing beyond the initial window: yes must be blocked, not buffered.
        got = bytearray()
        while True:
            try:
                f = ch.next(timeout=0.5)
            except TimeoutError:
                break
            if f.type == DATA:
                got.extend(f.payload)
        self.assertEqual(len(got), 256 * 1024)
        health = self.c.call({"op": "health"})
        self.assertLess(health["memory"]["executor_rss_bytes"], 64 << 20)
        # Grant more: streaming resumes with no gap.
        ch.grant(1 << 20)
        more = bytearray()
        while len(more) < (1 << 20):
            f = ch.next()
            if f.type == DATA:
                more.extend(f.payload)
        data = bytes(got + more)
        self.assertEqual(data, b"y\n" * (len(data) // 2))
        self.c.call({"op": "proc.signal", "id": pid_id, "signal": "KILL"})

    def test_terminal_raw_pty_and_resize(self):
        ch = self.c.open({"op": "terminal", "cols": 100, "rows": 30, "argv": ["bash", "--norc", "-i"]})
        self.assertEqual(ch.next().json()["event"], "started")
        ch.json({"resize": {"cols": 132, "rows": 43}})
        ch.send(b"stty size; echo MARK-$((6*7))\r")
        buf = bytearray()
        deadline = time.monotonic() + 10
        while b"MARK-42" not in buf and time.monotonic() < deadline:
            f = ch.next()
            if f.type == DATA:
                buf.extend(f.payload)
        self.assertIn(b"43 132", buf)
        self.assertIn(b"MARK-42", buf)
        ch.send(b"exit 5\r")
        while True:
            f = ch.next()
            if f.type == CLOSE:
                self.assertEqual(f.json()["exit_code"], 5)
                break

    def test_terminal_says_when_it_reads_hidden_input(self):
        """A password prompt (ECHO off, canonical mode): hidden_input on before the prompt, off
        once the secret is read; readline's own editing (ECHO and ICANON off) is not hidden."""
        ch = self.c.open({"op": "terminal", "cols": 80, "rows": 24, "argv": ["bash", "--norc", "-i"]})
        self.assertEqual(ch.next().json()["event"], "started")

        def until(marker):
            seen, buf = [], bytearray()
            deadline = time.monotonic() + 10
            while marker not in buf and time.monotonic() < deadline:
                f = ch.next()
                if f.type == DATA:
                    buf.extend(f.payload)
                    seen.append(("data", bytes(f.payload)))
                elif f.type == JSON:
                    seen.append(("json", f.json()))
            self.assertIn(marker, buf, seen)
            return seen

        ch.send(b"echo ready-$((1+1))\r")
        seen = until(b"ready-2")  # readline edited that line: nothing hidden at its end
        told = [x[1]["on"] for x in seen if x[0] == "json" and x[1].get("event") == "hidden_input"]
        self.assertFalse(told and told[-1], seen)
        ch.send(b"read -s -p \"$(printf 'Pass%s: ' word)\" pw; echo; echo got-${#pw}\r")
        seen = until(b"Password: ")  # the prompt (the command line, echoed, spells it otherwise)
        events = [x[1] for x in seen if x[0] == "json"]
        self.assertEqual(events[-1:], [{"event": "hidden_input", "on": True}], seen)
        at = len(seen) - 1 - seen[::-1].index(("json", events[-1]))
        self.assertNotIn(b"Password: ", b"".join(x[1] for x in seen[:at] if x[0] == "data"))
        ch.send(b"hunter2\r")
        seen = until(b"got-7")
        self.assertIn(("json", {"event": "hidden_input", "on": False}), seen)
        self.assertNotIn(b"hunter2", b"".join(x[1] for x in seen if x[0] == "data"))
        ch.send(b"exit\r")

    def test_terminal_binary_input(self):
        ch = self.c.open({"op": "terminal", "cols": 80, "rows": 24, "argv": ["sh", "-c", "stty raw -echo; head -c 4 | od -An -tx1; sleep 0.2"]})
        ch.next()
        time.sleep(0.3)
        ch.send(b"\x00\xff\x1b\x7f")
        out = bytearray()
        while True:
            f = ch.next()
            if f.type == DATA:
                out.extend(f.payload)
            elif f.type == CLOSE:
                break
        self.assertIn(b"00 ff 1b 7f", out)


class Pid1Test(unittest.TestCase):
    """The executor as the sandbox's init (PID 1): orphans are reparented to it and reaped."""

    def test_executor_as_pid1_reaps_orphans(self):
        ex = Executor(bwrap=True, as_pid1=True)
        try:
            c = ex.connect()
            self.assertEqual(c.hello["pid"], 1)
            # Double-forked children whose parent exits at once: PID 1 inherits them.
            out, _, _, res = c.open({"op": "proc.spawn", "cmd": "for i in 1 2 3 4 5; do (sleep 0.2 &); done; echo spawned"}).collect()
            self.assertEqual(out, b"spawned\n")
            time.sleep(1.0)
            out, _, _, _ = c.open({"op": "proc.spawn", "cmd": "ps -eo stat= > /tmp/st; wc -l < /tmp/st; grep -c '^Z' /tmp/st || true"}).collect()
            processes, zombies = out.split()
            self.assertGreater(int(processes), 2)  # ps works in the sandbox: the check is real
            self.assertEqual(zombies, b"0")
            _, obs = c.run("echo still-works")
            self.assertEqual(obs["content"], "still-works")
        finally:
            ex.stop()


if __name__ == "__main__":
    unittest.main()
