"""The gateway's limits against a real stack (Redis, gateway, bwrap sandboxes, executors): idle
reaping, maximum lifetime, the stream cap and its truncation marker, per-session resource
limits, sandbox isolation seen through the API, terminal backpressure, many idle clients and
the gateway heartbeat (docs/api.md, docs/operations.md, redis/README.md)."""
import json
import os
import resource
import signal
import socket
import sys
import time
import unittest

from stack import Stack, act, kill_sandboxes, run_action
from wsclient import BINARY, CLOSE, TEXT

# 1000 client sockets in this process, and the gateway (a child, started below) inherits the
# limit: raise it before any Stack starts.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
_want = 4096 if _hard == resource.RLIM_INFINITY else min(4096, _hard)
if _soft != resource.RLIM_INFINITY and _soft < _want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (_want, _hard))


def run(ws, command, timeout=30, action_timeout=None, ident="x"):
    a = {"action": "run", "args": {"command": command}}
    if action_timeout is not None:
        a["timeout"] = action_timeout
    return act(ws, a, ident=ident, timeout=timeout)


def exit_code(obs):
    return obs["extras"]["metadata"]["exit_code"]


def session_hash(st, sid, field):
    return st.redis("HGET", f"sp:session:{{{sid}}}", field)


def sandbox_of(st, sid):
    return json.loads(session_hash(st, sid, "sandbox"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cgroup_file(sb, controller, name):
    if sb.get("cgroup_version") == 1:
        return f"/sys/fs/cgroup/{controller}/{sb['cgroup']}/{name}"
    return f"/sys/fs/cgroup/{sb['cgroup']}/{name}"


def sandbox_alive(sb):
    """Whether the sandbox's top process (pid and start time from its provider JSON) lives."""
    try:
        with open(f"/proc/{sb['pid']}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return int(fields[19]) == int(sb["start_time"]) and fields[0] != "Z"


def wait_destroyed(sb, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (sandbox_alive(sb) or os.path.exists(sb["dir"])):
        time.sleep(0.05)
    return not sandbox_alive(sb) and not os.path.exists(sb["dir"])


def destroy_stack_sandboxes(st):
    """What Stack.stop() does about sandboxes, again after it (a test may have left some)."""
    kill_sandboxes(st.state_dir)


class StackCase(unittest.TestCase):
    """One Stack per class; every socket a test opens is closed in tearDown, also on failure."""
    stack_args = {}

    @classmethod
    def setUpClass(cls):
        cls.st = Stack(**cls.stack_args)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.st.stop()
        finally:
            destroy_stack_sandboxes(cls.st)  # after the gateway: it starts no new sandbox

    def setUp(self):
        self.socks = []

    def tearDown(self):
        for ws in self.socks:
            try:
                ws.sock.close()
            except OSError:
                pass

    def ws(self, path, token=None):
        w = self.st.ws(path, token)
        self.socks.append(w)
        return w

    def session_ws(self, sid, since=None, token=None):
        return self.ws(f"/ws/sessions/{sid}" + (f"?since={since}" if since is not None else ""), token)

    def log_tail(self, n=4000):
        return "\n--- gateway log ---\n" + self.st.gateway_log()[-n:]


class IdleReapTest(StackCase):
    stack_args = {"pool": 2, "extra": ["--idle-timeout", "2"]}

    def test_idle_session_is_reaped_busy_one_is_not(self):
        busy = self.st.create_session()
        idle = self.st.create_session()
        t0 = time.monotonic()
        idle_sb = sandbox_of(self.st, idle)
        self.assertTrue(sandbox_alive(idle_sb))
        iws = self.session_ws(idle, since=0)
        bws = self.session_ws(busy)
        stopped_at, stop_event, last_tick = None, None, 0.0
        while time.monotonic() - t0 < 7:
            now = time.monotonic()
            if now - last_tick >= 1.0:
                last_tick = now
                _, out, obs = run(bws, "echo tick")
                self.assertEqual(out, "tick\n")
            if stopped_at is None:
                try:
                    m = iws.recv_json(timeout=0.2)
                except TimeoutError:
                    continue
                if m.get("type") == "status" and m.get("status") == "STOPPED":
                    stopped_at, stop_event = time.monotonic() - t0, m
            else:
                time.sleep(0.05)
        self.assertIsNotNone(stopped_at, "idle session was not stopped within 7 s" + self.log_tail())
        self.assertLessEqual(stopped_at, 5.0)
        self.assertGreaterEqual(stopped_at, 1.5)  # not before the idle timeout
        self.assertEqual(stop_event.get("message"), "idle timeout")
        self.assertEqual(session_hash(self.st, idle, "status"), "STOPPED")
        # "stopped and their sandboxes destroyed" (docs/operations.md)
        self.assertTrue(wait_destroyed(idle_sb), f"sandbox of the reaped session survives: {idle_sb}")
        # the stream of the stopped session ends with session_ended
        m = iws.recv_json(timeout=5)
        self.assertEqual(m.get("error", {}).get("code"), "session_ended", m)
        # the busy session outlived several idle periods and still works
        self.assertEqual(session_hash(self.st, busy, "status"), "READY")
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.get", {"session": busy})["result"]["status"], "READY")
        _, out, _ = run(bws, "echo still-here")
        self.assertEqual(out, "still-here\n")


class MaxLifetimeTest(StackCase):
    stack_args = {"pool": 1, "extra": ["--max-lifetime", "3"]}

    def test_active_session_is_stopped_at_max_lifetime(self):
        sid = self.st.create_session()
        t0 = time.monotonic()
        sb = sandbox_of(self.st, sid)
        ws = self.session_ws(sid, since=0)
        stop, n, i = None, 0, 0
        while stop is None and time.monotonic() - t0 < 8:
            # keep it active: an action every 0.3 s
            i += 1
            ws.send_json({"type": "action", "id": i, "action": {"action": "run", "args": {"command": "echo busy"}}})
            deadline = time.monotonic() + 0.3
            while time.monotonic() < deadline:
                try:
                    m = ws.recv_json(timeout=max(0.01, deadline - time.monotonic()))
                except TimeoutError:
                    break
                if m.get("type") == "observation":
                    n += 1
                if m.get("type") == "status" and m.get("status") == "STOPPED":
                    stop = (time.monotonic() - t0, m)
                    break
        self.assertIsNotNone(stop, "session not stopped within 8 s" + self.log_tail())
        elapsed, ev = stop
        self.assertGreaterEqual(elapsed, 2.5)  # not before its lifetime; after it, within the 8 s above
        self.assertGreater(n, 5)  # it really was active meanwhile
        self.assertEqual(ev.get("message"), "maximum lifetime reached")
        self.assertEqual(session_hash(self.st, sid, "status"), "STOPPED")
        self.assertTrue(wait_destroyed(sb), f"sandbox of the expired session survives: {sb}")
        # no further actions on it
        c = self.ws("/ws/control")
        r = self.st.call(c, "session.get", {"session": sid})
        self.assertEqual(r.get("error", {}).get("code"), "not_found", r)


class StreamCapTest(StackCase):
    stack_args = {"pool": 1, "extra": ["--stream-cap", "50"]}

    def assert_no_silent_gap(self, sid, last):
        r = self.session_ws(sid, since=0)
        got = []
        while not got or got[-1]["seq"] < last:
            got.append(r.recv_json(timeout=10))
        start = 1
        if got[0]["type"] == "truncated":
            self.assertEqual(got[0]["from"], 1)
            start = got[0]["to"] + 1
            got = got[1:]
        self.assertEqual([m["seq"] for m in got], list(range(start, last + 1)))
        self.assertNotIn("truncated", [m["type"] for m in got])
        r.close()

    def test_trimmed_history_is_announced_then_contiguous(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        # Past the gateway's in-memory ring (the last 2048 events, docs/api.md) so that a
        # reader from the start must go to Redis, which keeps only ~50: 750 actions x 3 events.
        last = 0
        for batch in range(15):
            for k in range(50):
                i = batch * 50 + k
                ws.send_json({"type": "action", "id": i,
                              "action": {"action": "run", "args": {"command": f"echo e{i}"}}})
            done = 0
            while done < 50:
                m = ws.recv_json(timeout=30)
                if m.get("type") == "error":
                    self.fail(f"action refused: {m}")
                if m.get("type") == "observation":
                    done += 1
                    last = m["seq"]
            if batch == 1:
                # > 200 events, all still in the ring: a reader from the start gets them all
                # (or, if it had to go to Redis, a truncated marker first): never a silent gap
                self.assert_no_silent_gap(sid, last)
        self.assertGreater(last, 2048 + 200)
        key = f"sp:session:{{{sid}}}:events"
        # XADD MAXLEN ~ trims whole macro nodes: bounded, not exact
        xlen = int(self.st.redis("XLEN", key))
        self.assertLess(xlen, 200)
        self.assertGreaterEqual(xlen, 50)
        first_id = self.st.redis("XRANGE", key, "-", "+", "COUNT", "1").splitlines()[0]
        first_kept = int(first_id.split("-")[1])

        for since in (0, 100):
            r = self.session_ws(sid, since=since)
            m = r.recv_json(timeout=10)
            self.assertEqual(m.get("type"), "truncated", f"since={since}: first event {m}")
            self.assertEqual(m["from"], since + 1)
            k = m["to"]
            self.assertGreater(k, since)
            self.assertLessEqual(k, first_kept - 1)
            seqs = []
            while not seqs or seqs[-1] < last:
                e = r.recv_json(timeout=10)
                self.assertNotEqual(e.get("type"), "truncated", f"second truncation marker: {e}")
                seqs.append(e["seq"])
            self.assertEqual(seqs, list(range(k + 1, last + 1)), f"since={since}: gap or duplicate")
            r.close()
        _, out, _ = run_action(ws, "echo after-cap")
        self.assertEqual(out, "after-cap\n")
        self.assertLess(int(self.st.redis("XLEN", key)), 200)


class LimitsTest(StackCase):
    stack_args = {"pool": 2}

    # ---- 4. resource limits through session.create ----

    def test_memory_limit_kills_the_hog_not_the_session(self):
        sid = self.st.create_session(params={"memory": 134217728})
        ws = self.session_ws(sid)
        sb = sandbox_of(self.st, sid)
        with open(cgroup_file(sb, "memory", "memory.limit_in_bytes" if sb.get("cgroup_version") == 1
                              else "memory.max")) as f:
            self.assertEqual(int(f.read()), 134217728)
        _, out, obs = run(ws, "python3 -c \"b = b'x' * (512 << 20)\"", timeout=60)
        self.assertNotEqual(exit_code(obs), 0, out)
        self.assertTrue(exit_code(obs) == 137 or "Killed" in out, (exit_code(obs), out))
        _, out, obs = run(ws, "echo alive")
        self.assertEqual(out, "alive\n")
        self.assertEqual(exit_code(obs), 0)

    def test_pids_limit_contains_a_fork_bomb(self):
        other = self.st.create_session(token=self.st.token(sub="bob"))
        ows = self.session_ws(other, token=self.st.token(sub="bob"))
        sid = self.st.create_session(params={"pids": 64})
        ws = self.session_ws(sid)
        sb = sandbox_of(self.st, sid)
        pids_current = cgroup_file(sb, "pids", "pids.current")
        with open(cgroup_file(sb, "pids", "pids.max")) as f:
            self.assertEqual(f.read().strip(), "64")
        # The bomb runs as its own job (process group); print that group so it can be killed
        # with the shell's builtin kill (nothing can fork while the bomb holds every pid).
        _, out, obs = run(ws, "bash -c 'echo BOMB=$$; :(){ :|:& };:'", action_timeout=5)
        pgid = int(out.split("BOMB=")[1].split()[0])
        peak, deadline = 0, time.monotonic() + 10
        while time.monotonic() < deadline and peak < 64:
            with open(pids_current) as f:
                peak = max(peak, int(f.read()))
            time.sleep(0.05)
        self.assertEqual(peak, 64, "the bomb never reached the pids limit")
        # other users' sessions are unaffected while the bomb runs
        t0 = time.monotonic()
        _, out, _ = run(ows, "echo other")
        self.assertEqual(out, "other\n")
        self.assertLess(time.monotonic() - t0, 2.0)
        with open(pids_current) as f:
            self.assertLessEqual(int(f.read()), 64)
        # the bombed session still answers (a builtin), then cleans up with builtins only
        _, out, _ = run(ws, "echo during", action_timeout=5)
        self.assertIn("during", out.splitlines(), out[-300:])  # bomb noise may interleave
        run(ws, f"for i in 1 2 3 4 5 6 7 8 9 10; do kill -9 -- -{pgid} 2>/dev/null; done; true",
            action_timeout=5)
        # the session recovers: forks work again, pids drain (poll with a deadline)
        deadline, ok, out = time.monotonic() + 15, False, ""
        while time.monotonic() < deadline and not ok:
            run(ws, f"kill -9 -- -{pgid} 2>/dev/null; true", action_timeout=5)
            _, out, obs = run(ws, "/bin/echo ok", action_timeout=5)
            ok = "ok" in out.splitlines() and exit_code(obs) == 0
            if not ok:
                time.sleep(0.2)
        self.assertTrue(ok, f"session did not recover: {out[-300:]!r}" + self.log_tail())
        # killed processes leave the cgroup as they are reaped: poll (bounded) on a busy host
        deadline, now = time.monotonic() + 10, 64
        while time.monotonic() < deadline:
            with open(pids_current) as f:
                now = int(f.read())
            if now < 16:
                break
            run(ws, f"kill -9 -- -{pgid} 2>/dev/null; true", action_timeout=5)
            time.sleep(0.2)
        self.assertLess(now, 16)
        _, out, _ = run(ws, "echo ok")
        self.assertEqual(out, "ok\n")
        _, out, _ = run(ows, "echo other")
        self.assertEqual(out, "other\n")
        self.assertEqual(session_hash(self.st, sid, "status"), "READY")

    # ---- 5. isolation seen through the gateway ----

    def test_isolation_through_the_gateway(self):
        a = self.st.create_session()
        b = self.st.create_session()
        ws = self.session_ws(a)
        _, out, obs = run(ws, "ls /root")
        self.assertNotEqual(exit_code(obs), 0, out)
        _, out, obs = run(ws, "cat /etc/shadow")
        self.assertNotEqual(exit_code(obs), 0, out)
        self.assertNotIn("root:", out)
        _, out, obs = run(ws, "python3 -c 'import socket; print([n for _, n in socket.if_nameindex()])'")
        self.assertEqual(out, "['lo']\n")
        # the gateway's port is reachable on the host's loopback ...
        socket.create_connection(("127.0.0.1", self.st.port), timeout=2).close()
        # ... but not from the sandbox's own network namespace
        probe = ("import socket\n"
                 "try:\n"
                 f"    socket.create_connection(('127.0.0.1', {self.st.port}), timeout=2).close()\n"
                 "    print('CONNECTED')\n"
                 "except OSError as e:\n"
                 "    print('FAILED', type(e).__name__)\n")
        _, out, obs = run(ws, f"python3 -c \"{probe}\"", timeout=20)
        self.assertTrue(out.startswith("FAILED"), out)
        # another session's workspace, at its host path, is not there
        other_ws = sandbox_of(self.st, b)["workspace"]
        self.assertTrue(os.path.isdir(other_ws))
        with open(os.path.join(other_ws, "secret-of-b"), "w") as f:
            f.write("b's data\n")
        _, out, obs = run(ws, f"ls -d {other_ws}; cat {other_ws}/secret-of-b")
        self.assertNotEqual(exit_code(obs), 0, out)
        self.assertNotIn("b's data", out)
        _, out, obs = run(ws, f"test -e {other_ws} && echo VISIBLE || echo absent")
        self.assertEqual(out, "absent\n")
        # nor is it reachable by a search from the sandbox's root
        _, out, obs = run(ws, "find / -xdev -name secret-of-b 2>/dev/null; echo done", timeout=60)
        self.assertEqual(out, "done\n")

    # ---- 6. terminal backpressure ----

    def test_terminal_backpressure(self):
        other = self.st.create_session()
        ows = self.session_ws(other)
        sid = self.st.create_session()
        t = self.ws(f"/ws/sessions/{sid}/terminal?cols=80&rows=24")
        pid = self.st.gw.pid
        rss0 = rss_kib(pid)
        t.send_binary(b"yes\r")
        peak = rss0
        t0 = time.monotonic()
        answered = None
        while time.monotonic() - t0 < 3.0:
            peak = max(peak, rss_kib(pid))
            if answered is None and time.monotonic() - t0 > 1.0:
                a0 = time.monotonic()
                _, out, _ = run_action(ows, "echo other", timeout=10)
                answered = time.monotonic() - a0
                self.assertEqual(out, "other\n")
            time.sleep(0.1)
        peak = max(peak, rss_kib(pid))
        self.assertLess(peak - rss0, 32 * 1024, f"gateway RSS grew {rss0} -> {peak} KiB")
        # Another session's action was answered while the terminal's client read nothing (run_action
        # failing would have failed here): the stalled terminal holds no one else up. How long it
        # took is logged, not asserted (a speed, on a shared machine: make bench's business).
        self.assertIsNotNone(answered)
        print(f"[terminal backpressure] another session's echo answered in {answered * 1000:.0f} ms",
              file=sys.stderr)
        # now read: the paused output arrives
        data = b""
        deadline = time.monotonic() + 10
        while data.count(b"y\r\n") < 50000 and time.monotonic() < deadline:
            op, d = t.recv(timeout=10)
            if op == BINARY:
                data += d
        self.assertGreaterEqual(data.count(b"y\r\n"), 50000)
        t.send_binary(b"\x03")
        time.sleep(0.2)
        t.send_binary(b"exit\r")
        deadline = time.monotonic() + 20
        exit_msg = None
        while exit_msg is None and time.monotonic() < deadline:
            op, d = t.recv(timeout=20)
            if op == TEXT:
                exit_msg = json.loads(d)
            elif op == CLOSE:
                break
        self.assertIsNotNone(exit_msg, "no exit message after C-c and exit")
        self.assertEqual(exit_msg.get("type"), "exit")
        self.assertLess(rss_kib(pid) - rss0, 32 * 1024)

    # ---- 7. many idle clients ----

    def test_thousand_idle_clients(self):
        sid = self.st.create_session()
        conns = []
        try:
            for _ in range(1000):
                conns.append(self.st.ws(f"/ws/sessions/{sid}"))
            ws = self.session_ws(sid)
            seq, out, _ = run_action(ws, "echo fanout")
            self.assertEqual(out, "fanout\n")
            for c in conns[::100]:
                got = []
                while not got or got[-1]["type"] != "observation":
                    got.append(c.recv_json(timeout=10))
                self.assertEqual([m["type"] for m in got], ["action", "output", "observation"])
                self.assertEqual(got[0]["seq"], seq)
                self.assertEqual(got[1]["data"], "fanout\n")
            # every connection is still open and answering
            for i, c in enumerate(conns):
                c.send_json({"type": "ping", "id": i})
            for i, c in enumerate(conns):
                while True:
                    m = c.recv_json(timeout=10)
                    if m.get("type") == "pong":
                        self.assertEqual(m["id"], i)
                        break
            hc = self.ws("/ws/control", self.st.token(sub="root", role="admin"))
            health = self.st.call(hc, "health")["result"]
            self.assertGreaterEqual(health["connections"], 1000)
        finally:
            for c in conns:
                c.close()
        # the gateway noticed: connections drop back
        deadline, n = time.monotonic() + 10, None
        while time.monotonic() < deadline:
            hc = self.ws("/ws/control", self.st.token(sub="root", role="admin"))
            n = self.st.call(hc, "health")["result"]["connections"]
            hc.close()
            if n < 50:
                break
            time.sleep(0.1)
        self.assertLess(n, 50)

    # ---- 8. gateway heartbeat ----

    def test_gateway_heartbeat_and_session_set(self):
        self.assertNotEqual(self.st.redis("GET", "sp:gateway:gw-test"), "")
        ttl = int(self.st.redis("TTL", "sp:gateway:gw-test"))
        self.assertGreaterEqual(ttl, 1)
        self.assertLessEqual(ttl, 15)
        beat = float(self.st.redis("GET", "sp:gateway:gw-test"))
        self.assertLess(abs(time.time() - beat), 5)
        self.assertEqual(self.st.redis("SISMEMBER", "sp:gateways", "gw-test"), "1")
        a, b = self.st.create_session(), self.st.create_session()
        members = set(self.st.redis("SMEMBERS", "sp:gateway:gw-test:sessions").split())
        self.assertLessEqual({a, b}, members)
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.delete", {"session": a})["result"]["status"], "STOPPED")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.st.redis("SISMEMBER", "sp:gateway:gw-test:sessions", a) != "0":
            time.sleep(0.05)
        self.assertEqual(self.st.redis("SISMEMBER", "sp:gateway:gw-test:sessions", a), "0")
        self.assertEqual(self.st.redis("SISMEMBER", "sp:gateway:gw-test:sessions", b), "1")
        # refreshed every second: the value moves on
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and float(self.st.redis("GET", "sp:gateway:gw-test")) == beat:
            time.sleep(0.1)
        self.assertGreater(float(self.st.redis("GET", "sp:gateway:gw-test")), beat)


if __name__ == "__main__":
    unittest.main()
