"""Terminals outlive their WebSocket (docs/api.md, "Re-attaching"): a dropped connection is taken
back by terminal id from the output offset the client has, every byte once and in order; what
the ring no longer holds is reported, never skipped silently; several terminals keep their ids
and shells (at most 32 a session); a normal close, the grace running out or the session ending
hang the terminal up."""
import re
import json
import subprocess
import time
import unittest

from stack import Stack
from wsclient import CLOSE, Terminal, terminal_path

LINES = 200000  # about 2.3 MB of output: more than the gateway's 1 MiB ring


class Term(Terminal):
    """One connection to a terminal, straight to the gateway; acks every 64 KiB."""

    def __init__(self, st, sid, term=None, since=None, ack=True):
        super().__init__(st.ws(terminal_path(sid, term, since, ack)), 65536 if ack else None)


def numbers(data):
    return [int(n) for n in re.findall(rb"line-(\d+)\r?\n", data)]


class TerminalReattachTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.st = Stack(pool=2, extra=["--term-grace", "3"])

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def test_drop_mid_output_and_take_it_back_every_byte_once(self):
        sid = self.st.create_session()
        t = Term(self.st, sid)
        self.assertEqual(t.hello["type"], "terminal", t.hello)
        self.assertEqual(t.hello["offset"], 0)
        tid = t.hello["term"]
        t.type(f"stty -echo; seq -f 'line-%g' 1 {LINES}; echo DONE-$((6*7))\r")
        t.read(lambda x: len(numbers(x.data)) >= 20000)
        first = t.data
        t.drop()  # mid-output: the shell goes on writing
        time.sleep(0.3)
        t2 = Term(self.st, sid, term=tid, since=t.offset)
        self.assertEqual((t2.hello["term"], t2.hello["offset"]), (tid, t.offset))
        self.assertLessEqual(t2.hello["start"], t.offset)  # the ring still holds what we lack
        t2.read(lambda x: b"DONE-42" in x.data, timeout=120)
        self.assertEqual([m for m in t2.texts if m.get("type") == "truncated"], [])
        whole = first + t2.data
        self.assertEqual(numbers(whole), list(range(1, LINES + 1)))  # each line once, in order
        # the same shell: its output offset goes on from where it was
        t2.type("echo PID=$$\r")
        t2.read(lambda x: re.search(rb"PID=\d+", x.data))
        t2.ws.close()

    def test_replay_past_the_ring_is_reported(self):
        sid = self.st.create_session()
        t = Term(self.st, sid)
        tid = t.hello["term"]
        t.type(f"stty -echo; seq -f 'line-%g' 1 {LINES}; echo DONE-$((6*7))\r")
        t.read(lambda x: b"DONE-42" in x.data, timeout=120)
        end = t.offset
        t.drop()
        time.sleep(0.3)
        # from 0: the first ~1.3 MB are gone; the gap is said, then the rest comes once
        t2 = Term(self.st, sid, term=tid, since=0)
        self.assertGreaterEqual(t2.hello["end"], end)  # (the prompt may have come after DONE)
        start = t2.hello["start"]
        self.assertGreater(start, 0)
        t2.read(lambda x: x.offset >= end)
        self.assertEqual(t2.texts[0], {"type": "truncated", "lost_from": 0, "lost_to": start,
                                       "bytes": start})
        self.assertEqual(t2.data[:end - start], t.data[start:])
        t2.ws.close()

    def test_a_large_burst_arrives_whole_in_order_at_its_offsets(self):
        # The executor reads the PTY several times per DATA frame (up to 64 KiB): every byte
        # still arrives once, in order, and a take-back from an offset inside the burst gets
        # exactly the bytes the stream had there.
        sid = self.st.create_session()
        t = Term(self.st, sid)
        tid = t.hello["term"]
        n = 300000  # 16 bytes a line with \r\n: 4.8 MB in one go
        t.type(f"stty -echo; seq -f 'line-%09g' 1 {n}; echo DONE-$((6*7))\r")
        t.read(lambda x: b"DONE-42" in x.data, timeout=120)
        self.assertEqual(numbers(t.data), list(range(1, n + 1)))
        self.assertEqual(t.offset, len(t.data))
        back = 500000  # within the 1 MiB ring
        at = len(t.data) - back
        t.drop()
        time.sleep(0.3)
        t2 = Term(self.st, sid, term=tid, since=at)
        self.assertEqual(t2.hello["offset"], at)
        t2.read(lambda x: len(x.data) >= back)
        self.assertEqual(t2.data[:back], t.data[at:])
        self.assertEqual([m for m in t2.texts if m.get("type") == "truncated"], [])
        t2.ws.close()

    def test_pasted_input_arrives_whole_across_credit_steps(self):
        # Input credit goes back to the gateway in 16 KiB steps, not per keystroke: pastes
        # past many steps, one after the other, reach the program whole.
        import hashlib
        import random
        sid = self.st.create_session()
        t = Term(self.st, sid)
        size = 180000  # many credit steps; with a step's worth pending, within the window
        t.type(f"stty raw -echo; echo READY-$((2+3)); for i in 1 2; do head -c {size} | "
               "sha256sum | sed s/^/SUM=/; done; stty sane\r")
        t.read(lambda x: b"READY-5" in x.data)
        rnd = random.Random(21)
        sums = []
        for _ in range(2):
            paste = bytes(rnd.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(size))
            for i in range(0, size, 16384):
                t.ws.send_binary(paste[i:i + 16384])
            sums.append(hashlib.sha256(paste).hexdigest().encode())
            t.read(lambda x: len(re.findall(rb"SUM=[0-9a-f]{64}", x.data)) >= len(sums))
        got = re.findall(rb"SUM=([0-9a-f]{64})", t.data)
        self.assertEqual(got, sums)
        t.ws.close()

    def test_pastes_past_the_input_window_wait_and_arrive_whole(self):
        # Three 1 MB messages at once: 12x the executor's 256 KiB input window. The gateway
        # holds what does not fit and stops reading the connection until the executor takes it.
        import hashlib
        import random
        sid = self.st.create_session()
        t = Term(self.st, sid)
        size, n = 1000000, 3
        t.type(f"stty raw -echo; echo READY-$((2+3)); head -c {size * n} | sha256sum | "
               "sed s/^/SUM=/; stty sane\r")
        t.read(lambda x: b"READY-5" in x.data)
        rnd = random.Random(7)
        pastes = [rnd.randbytes(size) for _ in range(n)]
        for p in pastes:
            t.ws.send_binary(p)
        t.read(lambda x: re.search(rb"SUM=[0-9a-f]{64}", x.data), timeout=120)
        got = re.search(rb"SUM=([0-9a-f]{64})", t.data).group(1)
        self.assertEqual(got, hashlib.sha256(b"".join(pastes)).hexdigest().encode())
        t.type("echo AFTER-$((3+4))\r")  # the connection reads again
        t.read(lambda x: b"AFTER-7" in x.data)
        t.ws.close()

    def test_several_terminals_keep_their_ids_and_shells(self):
        sid = self.st.create_session()
        terms = [Term(self.st, sid) for _ in range(3)]
        ids = [x.hello["term"] for x in terms]
        self.assertEqual(len(set(ids)), 3)
        pids = []
        for x in terms:
            x.type("echo PID=$$\r")
            x.read(lambda y: re.search(rb"PID=(\d+)\r\n", y.data))
            pids.append(re.search(rb"PID=(\d+)\r\n", x.data).group(1))
            x.drop()
        time.sleep(0.3)
        for tid, pid, old in zip(ids, pids, terms):
            x = Term(self.st, sid, term=tid, since=old.offset)
            x.type("echo AGAIN=$$\r")
            x.read(lambda y: re.search(rb"AGAIN=(\d+)\r\n", y.data))
            self.assertEqual(re.search(rb"AGAIN=(\d+)\r\n", x.data).group(1), pid)
            x.ws.close()

    def test_a_second_connection_takes_the_terminal_over(self):
        sid = self.st.create_session()
        a = Term(self.st, sid)
        b = Term(self.st, sid, term=a.hello["term"], since=0)
        self.assertEqual(b.hello["term"], a.hello["term"])
        msg = a.ws.recv_json(timeout=10)
        while msg.get("type") != "error":
            msg = a.ws.recv_json(timeout=10)
        self.assertEqual(msg["error"]["code"], "taken_over")
        op, d = a.ws.recv(timeout=10)
        while op != CLOSE:
            op, d = a.ws.recv(timeout=10)
        self.assertEqual(d[:2], b"\x03\xf0")  # 1008
        b.type("echo STILL-$((1+1))\r")
        b.read(lambda y: b"STILL-2" in y.data)
        b.ws.close()

    def refused(self, sid, query):
        ws = self.st.ws(f"/ws/sessions/{sid}/terminal?{query}")
        msg = ws.recv_json(timeout=10)
        op, d = ws.recv(timeout=10)
        self.assertEqual((op, d[:2]), (CLOSE, b"\x03\xf0"))
        return msg["error"]["code"]

    def test_bad_offsets_and_unknown_terminals_are_refused(self):
        sid = self.st.create_session()
        t = Term(self.st, sid)
        tid = t.hello["term"]
        self.assertEqual(self.refused(sid, f"term={tid}&since=99999999"), "bad_request")
        self.assertEqual(self.refused(sid, f"term={tid}&since=-1"), "bad_request")
        self.assertEqual(self.refused(sid, f"term={tid}&since=x"), "bad_request")
        self.assertEqual(self.refused(sid, "term=t999&since=0"), "not_found")
        t.ws.close()

    def test_a_session_holds_at_most_32_terminals(self):
        sid = self.st.create_session()
        terms = [Term(self.st, sid) for _ in range(32)]
        self.assertEqual(len({t.hello["term"] for t in terms}), 32)
        self.assertEqual(self.refused(sid, "cols=80&rows=24"), "busy")
        terms[0].drop()  # a dropped one still holds its place (it waits for its client)
        time.sleep(0.3)
        self.assertEqual(self.refused(sid, "cols=80&rows=24"), "busy")
        terms[1].ws.close()  # a closed one does not (once the gateway has read the close)
        for _ in range(50):
            t = Term(self.st, sid)
            if t.hello["type"] == "terminal":
                break
            self.assertEqual(t.hello["error"]["code"], "busy")
            time.sleep(0.1)
        self.assertEqual(t.hello["type"], "terminal", t.hello)
        for x in terms[2:] + [t]:
            x.ws.close()

    def test_a_normal_close_hangs_up_at_once(self):
        sid = self.st.create_session()
        t = Term(self.st, sid)
        tid = t.hello["term"]
        t.ws.close()  # 1000: the client is done with this terminal
        time.sleep(0.3)
        self.assertEqual(self.refused(sid, f"term={tid}&since=0"), "not_found")

    def test_the_grace_runs_out(self):
        sid = self.st.create_session()
        t = Term(self.st, sid)
        tid = t.hello["term"]
        t.type("echo HI\r")
        t.read(lambda y: b"HI\r\n" in y.data)
        t.drop()
        time.sleep(1)
        t2 = Term(self.st, sid, term=tid, since=t.offset)  # within the grace: back
        t2.drop()
        time.sleep(5)  # --term-grace 3 here, checked on the gateway's 1 s tick
        self.assertEqual(self.refused(sid, f"term={tid}&since=0"), "not_found")
        self.assertIn(f"terminal {tid} hung up", self.st.gateway_log())

    def typed_events(self, sid):
        """The session's terminal_input events, as stored in Redis."""
        import json
        c = self.st.redis_conn(10)
        try:
            entries = c("XRANGE", f"sp:session:{{{sid}}}:events", "-", "+")
        finally:
            c.close()
        evs = [json.loads(e[1][1]) for e in entries]
        return [e for e in evs if e["type"] == "terminal_input"]

    def test_what_is_typed_is_in_the_log_line_by_line(self):
        """For /watch: keystrokes become one terminal_input event per line, with the terminal
        and the token's subject; the part of a line not yet ended goes out when it ends."""
        sid = self.st.create_session()
        t = Term(self.st, sid)
        tid = t.hello["term"]
        for k in "echo TYPED-$((6*7))":
            t.type(k)
        t.type("\r")
        t.read(lambda y: b"TYPED-42\r\n" in y.data)
        t.type("printf 'a\\n'; echo PASTED\recho two\r")  # one message, two lines
        t.read(lambda y: b"two\r\n" in y.data)
        t.type("exit")  # no Enter: held, then recorded when the terminal ends
        t.ws.close()
        deadline = time.monotonic() + 10
        while len(self.typed_events(sid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        evs = self.typed_events(sid)
        self.assertEqual([e["data"] for e in evs],
                         ["echo TYPED-$((6*7))\r", "printf 'a\\n'; echo PASTED\recho two\r", "exit"])
        for e in evs:
            self.assertEqual((e["term"], e["origin"]), (tid, "alice"))

    def test_a_secret_typed_at_a_hidden_prompt_is_not_in_the_log(self):
        """A password prompt (read -s: the terminal does not show the input): what is typed
        there is counted ({"hidden": N}), never recorded; the line before it is."""
        sid = self.st.create_session()
        t = Term(self.st, sid)
        t.read(lambda y: b"$ " in y.data)  # the shell's prompt: nothing typed ahead
        t.type("read -s -p \"$(printf 'Pass%s: ' word)\" pw; echo; echo got-${#pw}\r")
        t.read(lambda y: b"Password: " in y.data)  # the prompt (the echoed line spells it otherwise)
        for k in "hunter2":
            t.type(k)
        t.type("\r")
        t.read(lambda y: b"got-7\r\n" in y.data)
        t.type("echo after\r")
        t.read(lambda y: b"after\r\n" in y.data)
        deadline = time.monotonic() + 10
        while len(self.typed_events(sid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        evs = self.typed_events(sid)
        self.assertEqual([e.get("data", e.get("hidden")) for e in evs],
                         ["read -s -p \"$(printf 'Pass%s: ' word)\" pw; echo; echo got-${#pw}\r", 8, "echo after\r"])
        self.assertNotIn("hunter2", json.dumps(evs))
        self.assertEqual(evs[1]["origin"], "alice")

    def test_an_echo_goes_out_without_a_writeable_round(self):
        """A keystroke's echo is written to the client when it comes from the executor, not after
        asking lws for WRITEABLE: with libuv each ask re-registers the client's socket with epoll
        (four epoll_ctl and a loop iteration per echo). Every echo still arrives, in order."""
        sid = self.st.create_session()
        t = Term(self.st, sid)
        t.type("echo RE''ADY\r")
        t.read(lambda y: b"READY\r\n" in y.data)
        t.read(lambda y: y.data.endswith(b"$ "))  # the next prompt: nothing more is coming
        trace = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=epoll_ctl", "-o", "/dev/stdout",
                                  "-p", str(self.st.gw.pid)], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        try:
            time.sleep(1)  # attached (strace -qq says nothing when it is)
            keys = "abcdefghijklmnopqrstuvwxyz" * 2
            for i, k in enumerate(keys):
                t.type(k)
                t.read(lambda y: y.data.endswith(b"$ " + keys[:i + 1].encode()))
        finally:
            trace.terminate()
            calls = trace.communicate(timeout=30)[0].decode().count("epoll_ctl(")
        t.type("\x15echo DO''NE\r")
        t.read(lambda y: b"DONE\r\n" in y.data)
        # before: ~4 per echo (208 here); what is left is the gateway's other work (Redis)
        self.assertLess(calls, len(keys), calls)

    def test_the_session_ending_ends_its_terminals(self):
        c = self.st.control()
        sid = self.st.call(c, "session.create")["result"]["id"]
        t = Term(self.st, sid)
        t.type("echo UP\r")
        t.read(lambda y: b"UP\r\n" in y.data)
        self.st.call(c, "session.delete", {"session": sid})
        t.read(lambda y: any(m.get("type") == "exit" for m in y.texts) or False, timeout=30)
        self.assertIn({"type": "exit", "exit_code": -1}, t.texts)
        c.close()


if __name__ == "__main__":
    unittest.main()
