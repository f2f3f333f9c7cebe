"""The gateway against real Redis, real sandboxes and real executors (issue 4's test list)."""
import base64
import json
import os
import signal
import socket
import struct
import threading
import time
import unittest

from stack import Stack, act, executor_pid, run_action
from wsclient import BINARY, CLOSE, TEXT, WS, HandshakeError


class GatewayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.st = Stack(pool=2)

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def session_ws(self, sid, since=None, token=None):
        path = f"/ws/sessions/{sid}" + (f"?since={since}" if since is not None else "")
        return self.st.ws(path, token)

    def wait_warm(self, c):
        """Waits (bounded) until the pool holds a warm sandbox again after the other tests'
        claims; its record, the first listed."""
        self.st.eventually(lambda: self.st.call(c, "pool")["result"]["default"]["ready"] >= 1,
                           "a warm sandbox in the pool", timeout=10, step=0.1)
        return json.loads(self.st.redis("LRANGE", f"sp:pool:{{default}}:{self.st.gateway_id}", "0", "0"))

    def test_session_lifecycle_and_status_events(self):
        c = self.st.control()
        r = self.st.call(c, "session.create", {"idle_timeout": 300})
        self.assertEqual(r["type"], "result")
        s = r["result"]
        self.assertEqual(s["status"], "READY")
        self.assertEqual(s["owner"], "alice")
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{s['id']}}}", "status"), "READY")
        ids = [x["id"] for x in self.st.call(c, "session.list")["result"]["sessions"]]
        self.assertIn(s["id"], ids)
        self.assertEqual(self.st.call(c, "session.get", {"session": s["id"]})["result"]["id"], s["id"])
        ws = self.session_ws(s["id"], since=0)
        statuses = [ws.recv_json()["status"] for _ in range(3)]
        self.assertEqual(statuses, ["STARTING_RUNTIME", "RUNTIME_STARTED", "READY"])
        r = self.st.call(c, "session.delete", {"session": s["id"]})
        self.assertEqual(r["result"]["status"], "STOPPED")
        m = ws.recv_json()
        self.assertEqual((m["type"], m["status"]), ("status", "STOPPED"))
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{s['id']}}}", "status"), "STOPPED")
        self.assertEqual(self.st.call(c, "session.get", {"session": s["id"]})["error"]["code"], "not_found")

    def test_first_action_runs_with_the_sessions_plugins(self):
        # READY does not wait for the executor's answer to the session's `plugins` op: an action
        # queued before the sandbox is up goes out right behind the op on the same connection,
        # which the executor reads in order, so it runs with the session's list (no jupyter:
        # upstream's refusal). A warm claim and a sandbox of its own alike.
        c = self.st.control()
        for params in ({}, {"pids": 512}):
            r = self.st.call(c, "session.create", dict(params, plugins=["browser"], early=True))
            sid = r["result"]["id"]
            try:
                ws = self.session_ws(sid)
                _, _, obs = act(ws, {"action": "run_ipython", "args": {"code": "1+1"}}, timeout=60)
                self.assertEqual(obs["content"], "JupyterRequirement not found. Unable to run IPython action.")
                status = self.st.call(c, "session.get", {"session": sid})["result"]["plugin_status"]
                self.assertEqual(status["jupyter"]["state"], "disabled", status)
                self.assertEqual(status["browser"]["state"], "not_started", status)
            finally:
                self.st.call(c, "session.delete", {"session": sid})

    def test_control_answers_keep_their_order(self):
        # Small answers on the control connection go out at once when nothing is ahead of them
        # (ws_reply.c): requests sent back to back are still answered in order (the create
        # whenever it is READY), and the error for a message that is not JSON after the answer
        # before it.
        c = self.st.control()
        for i, (method, params) in enumerate([("session.create", {}), ("pool", {}), ("session.list", {}),
                                               ("no.such", {}), ("pool", {})], start=1):
            c.send_json({"id": i, "method": method, "params": params})
        got = [c.recv_json(60) for _ in range(5)]
        at_once = [m for m in got if m["id"] != 1]  # the create answers when READY, any time
        self.assertEqual([m["id"] for m in at_once], [2, 3, 4, 5], got)
        self.assertEqual([m["type"] for m in at_once], ["result", "result", "error", "result"], got)
        created = next(m for m in got if m["id"] == 1)
        self.assertEqual(created["result"]["status"], "READY")
        self.st.call(c, "session.delete", {"session": created["result"]["id"]})
        c.send_json({"id": 7, "method": "pool"})
        c.send_frame(TEXT, b"not json")
        self.assertEqual(c.recv_json(10)["id"], 7)
        self.assertEqual(c.recv_json(10)["type"], "error")
        c.close()

    def test_action_streams_output_then_observation(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        seq, out, obs = run_action(ws, "for i in 1 2 3; do echo line$i; sleep 0.2; done")
        self.assertEqual(out, "line1\nline2\nline3\n")
        self.assertEqual(obs["observation"], "run")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        # the same events are in Redis, in order, with ids 0-<seq>
        n = int(self.st.redis("XLEN", f"sp:session:{{{sid}}}:events"))
        self.assertGreaterEqual(n, 7)

    def test_output_arrives_incrementally(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        ws.send_json({"type": "action", "id": "x", "action": {"action": "run", "args": {"command": "echo first; sleep 1.5; echo second"}}})
        t0 = time.monotonic()
        while True:
            m = ws.recv_json()
            if m.get("type") == "output":
                self.assertEqual(m["data"], "first\n")
                self.assertLess(time.monotonic() - t0, 1.2)  # before the command finished
                break

    def test_output_that_is_not_strict_utf8_goes_as_base64(self):
        # A surrogate (CESU-8), an overlong "/" and a code point past U+10FFFF: each has the shape
        # of a UTF-8 sequence but is not UTF-8, so it may not go out as JSON text (a strict
        # client refuses the frame), only as data_b64. Until issue 16 the gateway let them through.
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        cmd = r"printf 'a\xed\xa0\x80b\xe0\x80\xafc\xf4\x90\x80\x80d\n'"
        ws.send_json({"type": "action", "id": "u", "action": {"action": "run", "args": {"command": cmd}}})
        seq, out, kinds = None, b"", set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            op, frame = ws.recv()
            self.assertEqual(op, TEXT)
            m = json.loads(frame.decode("utf-8"))  # strict: raises on a surrogate or an overlong
            if m.get("type") == "ack" and m.get("id") == "u":
                seq = m["seq"]
            elif m.get("type") == "output" and m.get("action") == seq:
                kinds |= {"data" if "data" in m else "data_b64"}
                out += m["data"].encode() if "data" in m else base64.b64decode(m["data_b64"])
            elif m.get("type") == "observation" and m.get("action") == seq:
                break
        self.assertEqual(out, b"a\xed\xa0\x80b\xe0\x80\xafc\xf4\x90\x80\x80d\n")
        self.assertIn("data_b64", kinds)

    def test_two_clients_see_identical_streams(self):
        sid = self.st.create_session()
        a, b = self.session_ws(sid, since=0), self.session_ws(sid, since=0)
        run_action(a, "seq 1 2000")
        def drain(ws):
            got = []
            while True:
                m = ws.recv_json()
                got.append(m)
                if m.get("type") == "observation":
                    return got
        ga, gb = drain(self.session_ws(sid, since=0)), drain(b)
        self.assertEqual([m["seq"] for m in ga], [m["seq"] for m in gb])
        self.assertEqual(ga, gb)
        self.assertEqual([m["seq"] for m in ga], list(range(1, len(ga) + 1)))

    def test_reconnect_with_since_no_gap_no_duplicate(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid, since=0)
        ws.send_json({"type": "action", "id": "r", "action": {"action": "run", "args": {"command": "for i in $(seq 1 30); do echo n$i; sleep 0.05; done"}}})
        seen = []
        while len(seen) < 8:
            seen.append(ws.recv_json())
        ws.sock.close()  # drop mid-command
        time.sleep(0.5)
        last = max(m["seq"] for m in seen if "ts" in m)
        ws2 = self.session_ws(sid, since=last)
        while True:
            m = ws2.recv_json()
            seen.append(m)
            if m.get("type") == "observation":
                break
        seqs = [m["seq"] for m in seen if "ts" in m]
        self.assertEqual(seqs, list(range(1, seqs[-1] + 1)))
        text = "".join(m.get("data", "") for m in seen if m.get("type") == "output")
        self.assertEqual(text, "".join(f"n{i}\n" for i in range(1, 31)))

    def test_since_reads_old_events_from_redis(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        for i in range(3):
            run_action(ws, f"echo r{i}", ident=f"i{i}")
        # a fresh client replaying from the start gets exactly what Redis holds
        replay = self.session_ws(sid, since=0)
        got = []
        while len([m for m in got if m["type"] == "observation"]) < 3:
            got.append(replay.recv_json())
        raw = self.st.redis("XRANGE", f"sp:session:{{{sid}}}:events", "-", "+")
        self.assertEqual(len(got), int(self.st.redis("XLEN", f"sp:session:{{{sid}}}:events")))
        self.assertIn('"r2', raw)

    def test_an_idle_session_replays_every_event_after_shrinking(self):
        """An idle session keeps only its newest 16 events in memory (session_memory.c, after
        10 s with nothing running): a client replaying from the start, or from one of the
        events let go, still gets every event once, in order, from Redis then memory."""
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        for i in range(12):  # 3 events each, past the 16 kept
            run_action(ws, f"echo idle{i}", ident=f"i{i}")
        ws.close()
        time.sleep(12)  # idle past SESSION_SHRINK_AFTER_S (10 s): the gateway lets them go
        total = int(self.st.redis("XLEN", f"sp:session:{{{sid}}}:events"))
        self.assertGreater(total, 36)
        for since in (0, 5, total - 20, total - 3):
            replay = self.session_ws(sid, since=since)
            got = [replay.recv_json()["seq"] for _ in range(total - since)]
            self.assertEqual(got, list(range(since + 1, total + 1)), f"since={since}")
            replay.close()
        ws = self.session_ws(sid, since=total)  # and the ring grows again with new events
        run_action(ws, "echo after", ident="after")
        self.assertEqual(int(self.st.redis("XLEN", f"sp:session:{{{sid}}}:events")), total + 3)

    def test_viewer_reads_but_cannot_act(self):
        sid = self.st.create_session()
        viewer = self.st.token(sub="dash", role="viewer", session=sid)
        v = self.session_ws(sid, since=0, token=viewer)
        self.assertEqual(v.recv_json()["status"], "STARTING_RUNTIME")
        v.send_json({"type": "action", "id": 1, "action": {"action": "run", "args": {"command": "id"}}})
        while True:
            m = v.recv_json()
            if m["type"] == "error":
                self.assertEqual(m["error"]["code"], "forbidden")
                break
        other = self.st.create_session()
        w = self.session_ws(other, token=viewer)
        self.assertEqual(w.recv_json()["error"]["code"], "not_found")

    def test_auth_failures_are_clear(self):
        for tok in ["", "garbage", self.st.token(exp_in=-10),
                    self.st.token()[:-4] + "AAAA"]:
            ws = self.st.control(token=tok) if tok else WS("127.0.0.1", self.st.port, "/ws/control")
            m = ws.recv_json()
            self.assertEqual(m["error"]["code"], "unauthorized", tok)
            op, payload = ws.recv()
            self.assertEqual((op, payload[:2]), (CLOSE, b"\x03\xf0"))  # 1008 (test_ws_protocol)

    def test_user_cannot_touch_other_users_session(self):
        sid = self.st.create_session(token=self.st.token(sub="bob"))
        ws = self.session_ws(sid, token=self.st.token(sub="mallory"))
        self.assertEqual(ws.recv_json()["error"]["code"], "not_found")
        c = self.st.control(self.st.token(sub="mallory"))
        self.assertEqual(self.st.call(c, "session.delete", {"session": sid})["error"]["code"], "not_found")

    def test_bad_input_gets_clear_errors_and_connection_survives(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        ws.send_frame(TEXT, b"{not json")
        self.assertEqual(ws.recv_json()["error"]["code"], "bad_request")
        ws.send_json({"type": "nope"})
        self.assertEqual(ws.recv_json()["error"]["code"], "bad_request")
        ws.send_json({"type": "action", "id": 9, "action": {"args": {}}})
        self.assertEqual(ws.recv_json()["error"]["code"], "bad_request")
        ws.send_json({"type": "action", "id": 10, "action": {"action": "teleport", "args": {}}})
        seq, obs = None, None
        while obs is None:
            m = ws.recv_json()
            if m["type"] == "ack":
                seq = m["seq"]
            if m["type"] == "observation" and m["action"] == seq:
                obs = m["observation"]
        self.assertEqual(obs["observation"], "error")
        self.assertIn("not supported", obs["content"])
        _, out, _ = run_action(ws, "echo still-fine")
        self.assertEqual(out, "still-fine\n")
        c = self.st.control()
        self.assertEqual(self.st.call(c, "session.get", {"session": "s-doesnotexist"})["error"]["code"], "not_found")
        self.assertEqual(self.st.call(c, "frobnicate")["error"]["code"], "bad_request")
        bad = self.session_ws("s-doesnotexist")
        self.assertEqual(bad.recv_json()["error"]["code"], "not_found")

    def test_oversized_message_is_refused(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        ws.send_frame(TEXT, b'{"type":"ping","pad":"' + b"x" * (1 << 20) + b'"}')
        m = ws.recv_json()
        self.assertEqual(m["error"]["code"], "too_large")
        c = self.st.control()
        self.assertEqual(self.st.call(c, "health")["type"], "result")

    def test_slow_client_does_not_slow_others(self):
        sid = self.st.create_session()
        lazy = self.session_ws(sid, since=0)  # never reads
        lazy.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        ws = self.session_ws(sid)
        t0 = time.monotonic()
        seq, out, obs = run_action(ws, "seq 1 200000", timeout=60)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        self.assertEqual(len(out), len("".join(f"{i}\n" for i in range(1, 200001))))
        # the lazy client finally reads: it gets everything, in order
        got = []
        while True:
            m = lazy.recv_json(timeout=30)
            got.append(m)
            if m.get("type") == "observation" and m["action"] == seq:
                break
        self.assertEqual([m["seq"] for m in got], list(range(1, len(got) + 1)))

    def test_terminal_endpoint(self):
        sid = self.st.create_session()
        t = self.st.ws(f"/ws/sessions/{sid}/terminal?cols=100&rows=30")
        t.send_json({"resize": {"cols": 120, "rows": 40}})
        t.send_binary(b"stty size; echo T-$((40+2))\r")
        buf = b""
        deadline = time.monotonic() + 10
        while b"T-42" not in buf and time.monotonic() < deadline:
            op, data = t.recv()
            if op == BINARY:
                buf += data
        self.assertIn(b"40 120", buf)
        t.send_binary(b"exit 3\r")
        while True:
            op, data = t.recv()
            if op == TEXT:
                self.assertEqual(json.loads(data), {"type": "exit", "exit_code": 3})
                break
        op, data = t.recv()  # then a normal close (docs/api.md, "Closing")
        self.assertEqual((op, data[:2]), (CLOSE, b"\x03\xe8"))

    def test_pool_claims_under_concurrent_creates(self):
        results, errors = [], []
        def create():
            try:
                results.append(self.st.create_session())
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
        threads = [threading.Thread(target=create) for _ in range(6)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        self.assertEqual(errors, [])
        self.assertEqual(len(set(results)), 6)
        sandboxes = [self.st.redis("HGET", f"sp:session:{{{s}}}", "sandbox") for s in results]
        ids = [json.loads(x)["id"] for x in sandboxes]
        self.assertEqual(len(set(ids)), 6)  # no sandbox handed out twice

    def test_warm_claim_goes_out_behind_its_record_without_a_round_trip(self):
        """The sandbox leaves the pool only once Redis holds the session's record (a gateway
        dying in between leaves no sandbox without one), and the claim waits for no answer to
        get there: it is sent on the record's connection right behind it (Redis runs them in
        order), not after a PING's reply (issue 35: one round trip less in every warm claim)."""
        from resp import Redis
        from stack import REDIS_ADMIN
        c = self.st.control()
        self.wait_warm(c)
        mon = Redis(self.st.redis_sock, 30, user=REDIS_ADMIN, password=self.st.redis_password(REDIS_ADMIN))
        mon.sock.sendall(b"*1\r\n$7\r\nMONITOR\r\n")
        self.assertEqual(mon._read(), "OK")
        r = self.st.call(c, "session.create")
        self.assertEqual(r["result"]["status"], "READY", r)
        sid = r["result"]["id"]
        seen = []  # the gateway's commands, as MONITOR prints them, up to the claim's
        while not any(line.startswith('"EVAL"') and f'"{sid}"' in line for line in seen):
            line = mon._read()
            seen.append(line.split("] ", 1)[1] if "] " in line else line)
        mon.close()
        record = next(i for i, line in enumerate(seen)
                      if line.startswith(f'"HSET" "sp:session:{{{sid}}}" "id"'))
        between = seen[record + 1:-1]
        self.assertTrue(all(sid in line for line in between), between)  # its record's, no PING
        c.close()

    def test_warm_claim_keeps_the_link_its_sandbox_warmed_up_with(self):
        """The claimed sandbox's executor link is the one the pool opened when it warmed up: the
        claim waits for no new connection and no HELLO (issue 35). Its executor's sockets are the
        same before and after the claim, and it takes commands."""
        c = self.st.control()
        first = self.wait_warm(c)
        pid = executor_pid(first["pid"])

        def sockets():
            out = set()
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:"):
                    out.add(target)
            return out
        before = sockets()
        r = self.st.call(c, "session.create")
        self.assertEqual(r["result"]["status"], "READY", r)
        self.assertEqual(json.loads(self.st.redis("HGET", f"sp:session:{{{r['result']['id']}}}", "sandbox"))["id"],
                         first["id"])
        _, out, _ = run_action(self.session_ws(r["result"]["id"]), "echo claimed")
        self.assertEqual(out, "claimed\n")
        self.assertEqual(sockets(), before)  # no connection closed, none accepted
        c.close()

    def test_warm_sandbox_whose_executor_died_is_not_handed_out(self):
        """A claim takes a warm sandbox as the pool made it while its link is up (no socket
        tried): one whose executor died while it waited is not given to a session; the session
        gets another and takes commands."""
        c = self.st.control()
        first = self.wait_warm(c)
        os.kill(executor_pid(first["pid"]), signal.SIGKILL)
        for _ in range(100):  # the gateway saw its link go
            if f"pool: warm sandbox {first['id']}: its executor's link went down" in self.st.gateway_log():
                break
            time.sleep(0.1)
        r = self.st.call(c, "session.create")
        self.assertEqual(r["result"]["status"], "READY", r)
        sid = r["result"]["id"]
        self.assertNotEqual(json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))["id"], first["id"])
        _, out, _ = run_action(self.session_ws(sid), "echo alive")
        self.assertEqual(out, "alive\n")
        self.st.call(c, "session.delete", {"session": sid})
        c.close()

    def test_env_applies_to_a_warm_sandbox(self):
        c = self.st.control()
        claims = self.st.call(c, "pool")["result"]["default"]["claims"]
        r = self.st.call(c, "session.create", {"env": {"SP_GREETING": "hello world", "SP_N": "7"}})
        self.assertEqual(r["result"]["status"], "READY", r)
        self.assertEqual(self.st.call(c, "pool")["result"]["default"]["claims"], claims + 1)  # warm
        ws = self.session_ws(r["result"]["id"])
        _, out, _ = run_action(ws, "echo \"$SP_GREETING/$SP_N\"; bash -c 'echo $SP_N'")
        self.assertEqual(out, "hello world/7\n7\n")
        bad = self.st.call(c, "session.create", {"env": {"1BAD": "x"}})
        self.assertEqual(bad["type"], "error", bad)
        self.assertIn("bad variable '1BAD'", bad["error"]["message"])
        self.assertEqual(bad["error"]["code"], "bad_request")
        c.close()

    def test_many_idle_clients(self):
        sid = self.st.create_session()
        conns = [self.session_ws(sid) for _ in range(300)]
        ws = self.session_ws(sid)
        run_action(ws, "echo fanout")
        for c in conns[:: 50]:
            seen = [c.recv_json()["type"] for _ in range(3)]
            self.assertEqual(seen, ["action", "output", "observation"])
        for c in conns:
            c.sock.close()


class GatewayRestartTest(unittest.TestCase):
    def setUp(self):
        self.st = Stack(pool=0)

    def tearDown(self):
        self.st.stop()

    def test_sigkill_mid_command_then_restart_keeps_session_and_output(self):
        sid = self.st.create_session()
        ws = self.st.ws(f"/ws/sessions/{sid}?since=0")
        ws.send_json({"type": "action", "id": "k", "action": {"action": "run", "args": {"command": "for i in $(seq 1 20); do echo k$i; sleep 0.1; done"}}})
        got = []
        while len([m for m in got if m.get("type") == "output"]) < 2:
            got.append(ws.recv_json())
        self.st.kill_gateway(signal.SIGKILL)
        time.sleep(1.0)  # output keeps being produced inside the sandbox meanwhile
        self.st.start_gateway()
        last = max(m["seq"] for m in got if "ts" in m)
        ws2 = self.st.ws(f"/ws/sessions/{sid}?since={last}")
        while True:
            m = ws2.recv_json(timeout=30)
            got.append(m)
            if m.get("type") == "observation":
                break
        seqs = [m["seq"] for m in got if "ts" in m]
        self.assertEqual(seqs, list(range(1, seqs[-1] + 1)))
        text = "".join(m.get("data", "") for m in got if m.get("type") == "output")
        self.assertEqual(text, "".join(f"k{i}\n" for i in range(1, 21)))
        _, out, _ = run_action(ws2, "echo after-restart")
        self.assertEqual(out, "after-restart\n")

    def test_dead_executor_marks_session_disconnected_others_unaffected(self):
        a, b = self.st.create_session(), self.st.create_session()
        sb = json.loads(self.st.redis("HGET", f"sp:session:{{{a}}}", "sandbox"))
        ws = self.st.ws(f"/ws/sessions/{a}")
        os.kill(executor_pid(sb["pid"]), signal.SIGKILL)
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:
            m = ws.recv_json(timeout=20)
            if m.get("type") == "status":
                status = m["status"]
                if status == "ERROR_RUNTIME_DISCONNECTED":
                    break
        self.assertEqual(status, "ERROR_RUNTIME_DISCONNECTED")
        wb = self.st.ws(f"/ws/sessions/{b}")
        _, out, _ = run_action(wb, "echo b-alive")
        self.assertEqual(out, "b-alive\n")


if __name__ == "__main__":
    unittest.main()
