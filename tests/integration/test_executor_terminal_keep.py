"""Terminals that outlive their executor connection (executor/terminal.h, docs/protocol.md
"terminal"): opened with an id, a terminal goes on when its connection is lost (its gateway died
or restarts), keeps its last 1 MiB of output by offset, and terminal.attach takes it back on a
new connection from an offset: the same shell, every kept byte once; past the cap the start
moves (the client sees the gap from the offsets); a client CLOSE or the grace running out ends
it. The real executor and bash."""
import os
import re
import time
import unittest

from spexec import CLOSE, JSON, ExecutorTest

KEEP = 1024 * 1024


def wait_file(path, timeout=60):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


class TerminalKeepTest(ExecutorTest):
    def open(self, c, tid, argv=("bash", "--norc", "-i"), grace=60):
        ch = c.open({"op": "terminal", "cols": 80, "rows": 24, "argv": list(argv), "id": tid,
                     "grace": grace})
        self.assertEqual(ch.next().json()["event"], "started")
        return ch

    def attach(self, c, tid, offset):
        ch = c.open({"op": "terminal.attach", "id": tid, "offset": offset})
        f = ch.next()
        return ch, (f.json() if f.type in (JSON, CLOSE) else None), f.type

    def test_connection_lost_the_shell_goes_on_and_is_taken_back(self):
        c = self.ex.connect()
        ch = self.open(c, "k1")
        ch.send(b"cd /tmp; X=kept-$((6*7)); echo go-$((1+2))\r")
        out, _, _ = ch.read(lambda b: b"go-3\r\n" in b)
        c.close()  # as a gateway killed with -9
        c2 = self.ex.connect()
        ch2, ev, _ = self.attach(c2, "k1", len(out))
        self.assertEqual(ev["event"], "attached", ev)
        self.assertEqual(ev["offset"], len(out))
        self.assertGreaterEqual(ev["end"], len(out))
        ch2.send(b'echo "$X:$(pwd)"\r')
        more, _, _ = ch2.read(lambda b: b"kept-42:/tmp\r\n" in b)
        # from offset 0 the kept bytes come again, the same ones
        c3 = self.ex.connect()
        ch3, ev, _ = self.attach(c3, "k1", 0)
        self.assertEqual(ev["offset"], 0)
        again, _, _ = ch3.read(lambda b: len(b) >= len(out) + len(more))
        self.assertEqual(again[:len(out) + len(more)], out + more)
        # the connection that held it lost it
        _, _, closed = ch2.read(lambda b: False, timeout=10)
        self.assertEqual(closed["error"]["code"], "busy", closed)
        ch3.send(b"exit 4\r")
        _, _, closed = ch3.read(lambda b: False)
        self.assertEqual(closed["exit_code"], 4)
        c2.close()
        c3.close()

    def test_attach_by_pid_from_what_comes_next(self):
        """terminal.attach by the shell's pid (E2B's connect by pid) with live: the kept
        terminal, from its next output; an unknown pid, or one of a terminal without an id
        (which ends with its connection), is not_found."""
        c = self.ex.connect()
        ch = c.open({"op": "terminal", "cols": 80, "rows": 24, "argv": ["bash", "--norc", "-i"],
                     "id": "e2b-k9", "grace": 60})
        pid = ch.next().json()["pid"]
        plain = c.open({"op": "terminal", "cols": 80, "rows": 24, "argv": ["bash", "--norc", "-i"]})
        plain_pid = plain.next().json()["pid"]
        ch.send(b"Y=by-pid; echo old-$((2+3))\r")
        out, _, _ = ch.read(lambda b: b"old-5\r\n" in b)
        c.close()
        c2 = self.ex.connect()
        ch2 = c2.open({"op": "terminal.attach", "pid": pid, "live": True})
        ev = ch2.next().json()
        self.assertEqual((ev["event"], ev["pid"]), ("attached", pid), ev)
        self.assertEqual(ev["offset"], ev["end"], "live: from what it writes next")
        self.assertGreaterEqual(ev["end"], len(out))
        ch2.send(b"echo $Y\r")
        more, _, _ = ch2.read(lambda b: b"by-pid\r\n" in b)
        self.assertNotIn(b"old-5", more, "nothing from before the attach")
        for gone in (plain_pid, 999999):
            g = c2.open({"op": "terminal.attach", "pid": gone, "live": True})
            f = g.next()
            self.assertEqual((f.type, f.json()["error"]["code"]), (CLOSE, "not_found"))
        ch2.send(b"exit 0\r")
        _, _, closed = ch2.read(lambda b: False)
        self.assertEqual(closed["exit_code"], 0)
        c2.close()

    def test_output_and_exit_while_orphaned_wait_for_the_attach(self):
        go = os.path.join(self.ex.workspace, "go-k2")
        c = self.ex.connect()
        self.open(c, "k2", ["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.02; done; echo bye-$((5*5)); exit 3"])
        c.close()
        open(go, "w").close()
        c2 = self.ex.connect()
        # exited while orphaned, or exits now: either way its output, then its exit code
        ch, ev, _ = self.attach(c2, "k2", 0)
        self.assertEqual(ev["event"], "attached", ev)
        out, _, closed = ch.read(lambda b: False)
        self.assertIn(b"bye-25", out)
        self.assertEqual(closed["exit_code"], 3)
        _, ev, typ = self.attach(c2, "k2", 0)  # delivered: gone
        self.assertEqual((typ, ev["error"]["code"]), (CLOSE, "not_found"), ev)
        c2.close()

    def test_past_the_cap_the_oldest_bytes_give_way(self):
        go, done = os.path.join(self.ex.workspace, "go-k3"), os.path.join(self.ex.workspace, "done-k3")
        c = self.ex.connect()
        self.open(c, "k3", ["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.02; done; seq 1 300000;"
                                        f" touch {done}; sleep 600"])
        c.close()
        open(go, "w").close()
        wait_file(done)
        c2 = self.ex.connect()
        ch, ev, _ = self.attach(c2, "k3", 0)
        self.assertGreater(ev["offset"], 0)  # the start moved: what was before it is gone
        self.assertEqual(ev["end"] - ev["offset"], KEEP)
        out, _, _ = ch.read(lambda b: len(b) >= KEEP)
        self.assertEqual(len(out), KEEP)
        nums = [int(n) for n in re.findall(rb"(\d+)\r\n", out)]
        self.assertEqual(nums[-1], 300000)
        self.assertEqual(nums, list(range(nums[0], 300001)))
        ch.close()  # the client closes it: hung up, gone
        c2.close()
        c3 = self.ex.connect()
        _, ev, typ = self.attach(c3, "k3", 0)
        self.assertEqual((typ, ev["error"]["code"]), (CLOSE, "not_found"), ev)
        c3.close()

    def test_the_grace_runs_out_bad_ids_and_offsets(self):
        c = self.ex.connect()
        ch = self.open(c, "k4", grace=1)
        ch.send(b"echo up\r")
        ch.read(lambda b: b"up\r\n" in b)
        _, ev, typ = self.attach(c, "k4", 10 ** 9)
        self.assertEqual((typ, ev["error"]["code"]), (CLOSE, "bad_request"), ev)
        dup = c.open({"op": "terminal", "cols": 80, "rows": 24, "id": "k4"})
        _, _, closed = dup.read(lambda b: False)
        self.assertEqual(closed["error"]["code"], "bad_request")
        bad = c.open({"op": "terminal", "cols": 80, "rows": 24, "id": "no spaces"})
        _, _, closed = bad.read(lambda b: False)
        self.assertEqual(closed["error"]["code"], "bad_request")
        c.close()
        time.sleep(2.5)  # grace 1 s: hung up
        c2 = self.ex.connect()
        _, ev, typ = self.attach(c2, "k4", 0)
        self.assertEqual((typ, ev["error"]["code"]), (CLOSE, "not_found"), ev)
        _, ev, typ = self.attach(c2, "never", 0)
        self.assertEqual((typ, ev["error"]["code"]), (CLOSE, "not_found"), ev)
        c2.close()


if __name__ == "__main__":
    unittest.main()
