"""Redis Sentinel spoken by the gateway and the API (issue 34, item 2): three sentinels
(`redis-server --sentinel`, no redis-sentinel package), a primary and a replica on loopback, with
ACL users and passwords as everywhere else (redis/users.acl: gateway, api, replica, sentinel;
the sentinels' own users for their clients and for each other). The gateway and the API get
--redis sentinel://.../sandpipe and nothing else.

  - the primary is SIGKILLed while a session streams: its history on the new primary is whole
    (lost 0, dup 0, seqs increasing and never reused: fault_audit), the gateway and the API
    serve actions and new sessions on the new primary, and the old primary, back as a replica,
    is not written to. The times (sentinel-detected switch to the first event on the new
    primary, and to the first action and create served) are printed, never asserted. Again
    with the replica stopped for half a second when the primary dies: events the gateway had
    not confirmed reach the new primary, and count as stored, not lost.
  - a demoted primary (SENTINEL FAILOVER: the sentinels send it REPLICAOF, it stays up and
    answers READONLY to writes): the gateway and the API follow, the stream whole again.
  - the only replica frozen: events held REDIS_REPLICATED_ALONE_MS, then stored on the primary
    alone (logged, counted), the stream whole; a probe finds the replica once it is thawed.
A killed primary comes back as a replica of the new one at once (as deploy/swarm's ha.sh starts
it), not as a primary for the sentinels to convert 10-20 s later: the same checks, half the time.
"""
import os
import signal
import subprocess
import sys
import time
import unittest

import fault_audit as fa
import fault_scenarios as fs
from faults import FaultStack
from resp import Redis
from spexec import ROOT
from stack import REDIS_ADMIN, free_port

MASTER = "sandpipe"
DOWN_AFTER_MS = 1000


class SentinelStack(FaultStack):
    """FaultStack whose Redis is a primary, a replica and three sentinels on loopback TCP ports.
    Every process is kept in extra_redis (stopped by pid with the rest)."""

    def start_redis(self):
        self.redis_ports = [free_port(), free_port()]
        self.sentinel_ports = [free_port(), free_port(), free_port()]
        self.redis_procs = {}
        self.peer_pw = os.urandom(16).hex()
        self.client_pw_file = os.path.join(self.tmp, "sentinel-client.password")
        with open(os.open(self.client_pw_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(16).hex() + "\n")
        for i, port in enumerate(self.redis_ports):
            self.start_redis_server(port, replica_of=None if i == 0 else self.redis_ports[0])
        self.wait_replicated(self.redis_ports[1])
        for port in self.sentinel_ports:
            self.start_sentinel(port)
        self.wait_sentinels_agree()

    def start_redis_server(self, port, replica_of=None, follow=None):
        """follow: the port of the primary a restarted server replicates from at once (as
        deploy/swarm's ha.sh starts one: the sentinels asked first), rather than coming back as a
        primary for the sentinels to convert (which takes them 10-20 s: their INFO period)."""
        d = os.path.join(self.tmp, f"redis-{port}")
        os.makedirs(d, exist_ok=True)
        conf = os.path.join(d, "redis.conf")
        if not os.path.exists(conf):  # a restart keeps the file (the sentinels may rewrite it)
            lines = [f"include {os.path.join(ROOT, 'redis', 'redis.conf')}", f"port {port}",
                     "bind 127.0.0.1", f"dir {d}", f"aclfile {self.redis_acl}",
                     "masteruser replica", f"masterauth {self.redis_password('replica')}"]
            if replica_of:
                lines.append(f"replicaof 127.0.0.1 {replica_of}")
            with open(os.open(conf, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "log"), "a") as log:  # the child keeps its own descriptor
            p = subprocess.Popen(["redis-server", conf, *(["--replicaof", "127.0.0.1", str(follow)] if follow else [])],
                                 stdout=log, stderr=subprocess.STDOUT)
        self.extra_redis.append(p)
        self.redis_procs[port] = p
        self.wait_answers(port)

    def start_sentinel(self, port):
        d = os.path.join(self.tmp, f"sentinel-{port}")
        os.makedirs(d, exist_ok=True)
        conf = os.path.join(d, "sentinel.conf")
        with open(self.client_pw_file) as f:
            client_pw = f.read().strip()
        lines = [f"port {port}", "bind 127.0.0.1", f"dir {d}",
                 f"sentinel monitor {MASTER} 127.0.0.1 {self.redis_ports[0]} 2",
                 f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}",
                 f"sentinel failover-timeout {MASTER} 5000",
                 f"sentinel auth-user {MASTER} sentinel",
                 f"sentinel auth-pass {MASTER} {self.redis_password('sentinel')}",
                 # the sentinels' own users: nobody unnamed; each other; sandpipe's daemons
                 "user default off",
                 f"user sp-peer on >{self.peer_pw} ~* &* +@all",
                 "sentinel sentinel-user sp-peer", f"sentinel sentinel-pass {self.peer_pw}",
                 f"user sandpipe on >{client_pw} +ping +sentinel|get-master-addr-by-name"]
        with open(os.open(conf, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(d, "log"), "a") as log:
            p = subprocess.Popen(["redis-server", conf, "--sentinel"], stdout=log, stderr=subprocess.STDOUT)
        self.extra_redis.append(p)

    def redis_args(self, user):
        sentinels = ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports)
        return ["--redis", f"sentinel://{sentinels}/{MASTER}", "--redis-user", user,
                "--redis-password-file", self.redis_password_file(user),
                "--redis-sentinel-user", "sandpipe", "--redis-sentinel-password-file", self.client_pw_file]

    def logs_tail(self, *ports, n=40):
        """The last lines of the servers on ports' logs and of every sentinel's: why a role is
        not what a test expected."""
        out = []
        for name in [f"redis-{p}" for p in ports] + [f"sentinel-{p}" for p in self.sentinel_ports]:
            try:
                with open(os.path.join(self.tmp, name, "log"), errors="replace") as f:
                    out.append(f"--- {name}:\n" + "".join(f.readlines()[-n:]))
            except OSError as e:
                out.append(f"--- {name}: {e}")
        return "\n".join(out)

    # ---- asking ----
    def server(self, port, timeout=10):
        return Redis(("127.0.0.1", port), timeout, user=REDIS_ADMIN, password=self.redis_password(REDIS_ADMIN))

    def ask(self, port, *args, timeout=5):
        r = self.server(port, timeout)
        try:
            return r(*args)
        finally:
            r.close()

    def sentinel(self, port, *args):
        r = Redis(("127.0.0.1", port), 2, user="sp-peer", password=self.peer_pw)
        try:
            return r(*args)
        finally:
            r.close()

    def primary_port(self):
        """The primary's port as the first sentinel that answers says, or None."""
        for s in self.sentinel_ports:
            try:
                return int(self.sentinel(s, "SENTINEL", "get-master-addr-by-name", MASTER)[1])
            except (OSError, TypeError, IndexError, ValueError, ConnectionError):
                continue
        return None

    def role(self, port):
        try:
            return self.ask(port, "ROLE", timeout=2)[0].decode()
        except (OSError, ConnectionError, TypeError, IndexError):
            return None

    def redis_conn(self, timeout=120):
        return self.server(self.primary_port(), timeout)

    def redis_cli(self, *args, timeout=None):
        return subprocess.run(["redis-cli", "-p", str(self.primary_port()), "--user", REDIS_ADMIN, *args],
                              capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, REDISCLI_AUTH=self.redis_password(REDIS_ADMIN)))

    # ---- waiting (bounded) ----
    def wait_answers(self, port, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.role(port):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis on {port} did not start")

    def wait_replicated(self, port, timeout=20):
        """Until the server on port is a replica whose link to its primary is up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = self.ask(port, "INFO", "replication").decode()
            if "role:slave" in info and "master_link_status:up" in info:
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis on {port} is no replica in sync")

    def wait_sentinels_agree(self, timeout=30):
        """Until every sentinel knows the other two and the replica."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ok = all(len(self.sentinel(s, "SENTINEL", "sentinels", MASTER)) == 2 and
                         len(self.sentinel(s, "SENTINEL", "replicas", MASTER)) == 1
                         for s in self.sentinel_ports)
                if ok:
                    return
            except (OSError, ConnectionError):
                pass
            time.sleep(0.1)
        raise RuntimeError("the sentinels did not find each other")

    def wait_primary_not(self, port, timeout=30):
        """Until the sentinels name another primary than port; its port."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = self.primary_port()
            if p is not None and p != port:
                return p
            time.sleep(0.02)
        raise AssertionError(f"no failover from {port} within {timeout}s")

    def stream_top(self, port, sid):
        try:
            rows = self.ask(port, "XREVRANGE", f"sp:session:{{{sid}}}:events", "+", "-", "COUNT", "1")
        except (OSError, ConnectionError):
            return None
        return int(rows[0][0].split(b"-")[1]) if rows else 0

    def gateway_clients(self, port):
        """Names of the gateway's connections to the server on port."""
        out = self.ask(port, "CLIENT", "LIST").decode()
        return [w for line in out.splitlines() for w in line.split() if w.startswith("name=sp-gw:")]


class SentinelTest(unittest.TestCase):
    def setUp(self):
        self.st = SentinelStack(pool=1)
        self.addCleanup(self.st.stop)

    def stream_while(self, fault, n_lines=200, pause="0.01"):
        """A session streams n_lines paced lines; at about a fifth of them fault() runs (it returns
        the seconds to print). Returns (round, sid) once the history is audited (lost 0, dup 0,
        seqs increasing, never reused: fault_audit)."""
        st = self.st
        r = fs.Round("sentinel")
        command, expected = fs.paced_command(n_lines, pause)
        sid = st.create_session()
        f = fs.Follower(st, sid, since=0)
        seq = fs.submit_run(f, command, "s")
        self.assertIsNotNone(seq, "the command did not start")
        target = 0.2 * sum(len(x) + 1 for x in expected)
        hit = f.until(lambda m: fs._is_obs(seq)(m) or fs._out_bytes(f, seq) >= target, 60, reconnect=False)
        r.flags["mid_stream"] = hit is not None and hit.get("type") != "observation"
        r.times.update(fault(sid))
        fs.finish(r, st, sid, f, seq, command, expected, 0, 90)
        print(f"  [{self.id().rsplit('.', 1)[-1]}] {r.line()}", file=sys.stderr)
        if fa.failures(r.counts):
            redis_lines = [x for x in st.gateway_log().splitlines() if "redis" in x or "event" in x or "DBG" in x]
            infos = []
            for port in st.redis_ports:
                try:
                    infos.append(f"{port}: " + st.ask(port, "INFO", "replication").decode().replace("\r\n", " "))
                except (OSError, ConnectionError) as e:
                    infos.append(f"{port}: {e}")
            self.fail(r.line() + "\n  the gateway's log:\n    " + "\n    ".join(redis_lines[-60:]) +
                      "\n  replication:\n    " + "\n    ".join(infos))
        self.assertTrue(r.flags["mid_stream"], "the fault came after the output: " + r.line())
        return r, sid

    def probe(self):
        """An action on a new session and a create, through nginx, the API and the gateway."""
        token = self.st.token()
        probe_sid = self.st.api_create_session(token)
        t_action, t_create, n503, hung = fs.recovery_probe(self.st, probe_sid, token)
        self.assertIsNotNone(t_action, "no action served after the failover")
        self.assertIsNotNone(t_create, "no session created after the failover")
        self.assertEqual(hung, 0)
        return t_action, t_create

    def test_primary_killed_mid_stream_loses_nothing_and_everything_moves_to_the_new_one(self):
        self.kill_primary_mid_stream(lag=0)

    def test_primary_killed_while_its_replica_lags_loses_nothing(self):
        """The replica stopped for half a second when the primary dies: the events written
        meanwhile were not confirmed (no WAIT answered) yet reach the replica (its socket had
        them), so the new primary has events the gateway never confirmed: they count as
        stored once a replica has them, not as lost."""
        self.kill_primary_mid_stream(lag=0.5)

    def kill_primary_mid_stream(self, lag):
        st = self.st
        old = st.redis_ports[0]
        times = {}

        def kill_primary(sid):
            top_before = st.stream_top(st.redis_ports[1], sid)
            replica = st.redis_procs[st.redis_ports[1]]
            if lag:
                replica.send_signal(signal.SIGSTOP)
                time.sleep(lag)
            t_kill = time.monotonic()
            st.redis_procs[old].send_signal(signal.SIGKILL)
            st.redis_procs[old].wait(10)
            if lag:
                replica.send_signal(signal.SIGCONT)
            new = st.wait_primary_not(old, timeout=DOWN_AFTER_MS / 1000 + 30)
            t_switch = time.monotonic()
            # The old primary comes back at once, as a replica of the new one (as ha.sh
            # restarts one); events wait for a replica meanwhile.
            st.start_redis_server(old, follow=new)
            deadline = t_switch + 30
            while time.monotonic() < deadline and (st.stream_top(new, sid) or 0) <= top_before:
                time.sleep(0.01)
            t_stored = time.monotonic()
            times.update(detect=t_switch - t_kill, switch_to_stored=t_stored - t_switch, new=new)
            return {"sentinel_switch": t_switch - t_kill, "switch_to_first_event": t_stored - t_switch}

        self.stream_while(kill_primary)
        new = times["new"]
        self.assertEqual(st.role(new), "master")
        t_action, t_create = self.probe()
        print(f"  failover: kill -9 to +switch-master {times['detect']:.2f}s, switch to the first "
              f"event on the new primary {times['switch_to_stored']:.2f}s, then an action in "
              f"{t_action:.2f}s and a create in {t_create:.2f}s", file=sys.stderr)
        # The two servers settle as one primary, the one the sentinels name, and a replica in
        # step with it; the gateway writes to the primary only. The sentinels, not sandpipe,
        # pick the primary: with a one-second down-after on a loaded machine they may fail
        # over once more (to the old one), which the gateway must follow as well.
        def settled():
            primary = st.primary_port()
            replica = old if primary == new else new
            if primary in (old, new) and st.role(primary) == "master" and st.role(replica) == "slave":
                return primary, replica
            return None

        try:
            primary, replica = st.eventually(settled, "one primary the sentinels name and a replica",
                                             timeout=30, step=0.1)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{st.logs_tail(old, new)}") from None
        if primary != new:
            print(f"  the sentinels failed over again, to {primary}:\n{st.logs_tail(old, new)}", file=sys.stderr)
        st.wait_replicated(replica)
        st.eventually(lambda: st.gateway_clients(replica) == [] and
                      f"name=sp-gw:{st.gateway_id}" in st.gateway_clients(primary),
                      "the gateway on the primary only", timeout=30, step=0.1)
        self.assertIn("primary 127.0.0.1:%d" % primary, st.gateway_log())

    def test_replica_frozen_mid_stream_holds_events_a_bounded_time_then_stores_them_alone(self):
        """The only replica frozen (SIGSTOP, as a node's loss leaves it: its connection stays
        open, it never answers): the primary stays, and no WAIT can be answered. The gateway
        holds events for REDIS_REPLICATED_ALONE_MS, asks the sentinels again (a new connection),
        and since they still name the primary, stores on it alone: the stream completes (lost
        0, dup 0), the log says so and sp:metrics counts them; once the replica is thawed a
        probe finds it and WAIT is back."""
        st = self.st
        primary, replica = st.redis_ports
        frozen = {}

        def freeze_replica(sid):
            t0 = time.monotonic()
            st.redis_procs[replica].send_signal(signal.SIGSTOP)
            frozen["at"] = t0
            return {}

        try:
            self.stream_while(freeze_replica, n_lines=200, pause="0.02")
            t_done = time.monotonic() - frozen["at"]
            self.assertEqual(st.primary_port(), primary)
            log = st.gateway_log()
            self.assertIn("events are stored on it alone", log)
            self.assertIn("no replica has confirmed a write for", log)
            deadline = time.monotonic() + 10  # the gateway's counters are flushed once a second
            stored_alone = 0
            while time.monotonic() < deadline and not stored_alone:
                stored_alone = int(st.ask(primary, "HGET", "sp:metrics", "events_unreplicated") or 0)
                time.sleep(0.1)
            self.assertGreater(stored_alone, 0)
        finally:
            st.redis_procs[replica].send_signal(signal.SIGCONT)
        print(f"  replica frozen: the stream complete {t_done:.1f}s after the freeze, "
              f"{stored_alone} events stored on the primary alone", file=sys.stderr)
        # Thawed, the replica answers the next probe: events wait for it again.
        deadline = time.monotonic() + 30
        probe_sid = st.create_session()
        f = fs.Follower(st, probe_sid, since=0)
        while time.monotonic() < deadline and "a replica has the writes again" not in st.gateway_log():
            fs.submit_run(f, "true", "p")
            time.sleep(0.2)
        self.assertIn("a replica has the writes again after", st.gateway_log())

    def test_demoted_primary_answering_readonly_is_left_for_the_new_one(self):
        st = self.st
        old = st.redis_ports[0]

        def demote(sid):
            t0 = time.monotonic()
            # SENTINEL FAILOVER: the replica promoted, the old primary sent REPLICAOF while it
            # stays up (its clients' writes get READONLY).
            self.assertEqual(st.sentinel(st.sentinel_ports[0], "SENTINEL", "FAILOVER", MASTER), "OK")
            st.wait_primary_not(old)
            return {"switch": time.monotonic() - t0}

        self.stream_while(demote)
        new = st.primary_port()
        self.assertNotEqual(new, old)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and st.role(old) != "slave":
            time.sleep(0.1)
        self.assertEqual(st.role(old), "slave")
        self.probe()
        self.assertEqual(st.gateway_clients(old), [])
        self.assertIn(f"name=sp-gw:{st.gateway_id}", st.gateway_clients(new))
        left = [line for line in st.gateway_log().splitlines() if "redis:" in line]
        print("  the gateway's Redis log:\n    " + "\n    ".join(left[-8:]), file=sys.stderr)

    def test_primary_made_a_replica_by_hand_is_left_for_the_new_one(self):
        """REPLICAOF by hand, no sentinel involved: the replica made the primary and the primary
        its replica. The gateway's writes to the old primary are refused (READONLY, or its
        blocked WAIT ends with the connection); until the sentinels see it, they still name the
        old one, whose ROLE says slave: the gateway asks again until they name the new one."""
        st = self.st
        old, new = st.redis_ports

        def swap(sid):
            t0 = time.monotonic()
            self.assertEqual(st.ask(new, "REPLICAOF", "NO", "ONE"), "OK")
            self.assertEqual(st.ask(old, "REPLICAOF", "127.0.0.1", str(new)), "OK")
            st.wait_primary_not(old, timeout=60)
            return {"sentinels_follow": time.monotonic() - t0}

        self.stream_while(swap)
        self.assertEqual(st.primary_port(), new)
        self.assertEqual(st.role(old), "slave")
        self.probe()
        self.assertEqual(st.gateway_clients(old), [])
        self.assertIn(f"name=sp-gw:{st.gateway_id}", st.gateway_clients(new))
        left = [line for line in st.gateway_log().splitlines() if "redis:" in line]
        print("  the gateway's Redis log:\n    " + "\n    ".join(left[-8:]), file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
