"""A sandbox's network is its own, never the host's (issue 28): real sandboxes, a real
sandpipe-netd (veth pairs, nftables, its proxy and resolver) and a small "outside world" the test
builds in a network namespace of its own on TEST-NET addresses (networld.py): an HTTP and an
HTTPS server, a DNS server, a package index and a git repository. Nothing leaves the machine:
netd's only resolver is the world's, and every address a sandbox reaches is the world's.

What a hostile tenant tries first is the probe of the issue: the host (every address it has, on
a port something listens on), another sandbox, cloud metadata, private ranges. Every mode must
refuse them, and each refusal must be in the owner's log (REST) and in the session's stream."""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import unittest
import urllib.error
import urllib.request

from networld import NetWorld
from providers import ensure_default_image, ensure_docker_image
from stack import Stack, run_action

FILES = "files.world.example"      # 198.51.100.10
SECURE = "secure.world.example"    # 198.51.100.20
OTHER = "other.world.example"      # 203.0.113.30


def host_addresses():
    """Every IPv4 address of the host but loopback (which, inside, is the sandbox's own): its
    uplink, Docker's bridge, the world's link, the sandboxes' links' host ends..."""
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    return sorted({m.group(1) for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/", out)} - {"127.0.0.1"})


class Listener:
    """A TCP server on every host address (0.0.0.0): what a host service bound too widely is.
    It counts the connections that reach it: a sandbox's must never."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            c.close()

    def close(self):
        self.sock.close()


class NetworkTestBase(unittest.TestCase):
    stack_kw = {}
    netd_opts = {}
    world_kw = {}
    image = None

    @classmethod
    def setUpClass(cls):
        if cls.stack_kw.get("provider") == "docker":
            ensure_docker_image()
        elif cls.image:
            ensure_default_image()
        cls.world = NetWorld(**cls.world_kw)
        try:
            extra = list(cls.stack_kw.get("extra", []))
            if cls.image:
                extra += ["--image", cls.image]
            kw = dict(cls.stack_kw, extra=extra)
            cls.st = Stack(netd={"resolver": cls.world.dns_addr, **cls.netd_opts}, **kw)
        except BaseException:
            cls.world.close()
            raise
        cls.admin = cls.st.token(sub="root", role="admin")
        cls.hello = cls.world.hello.decode()
        cls.wss = {}

    @classmethod
    def tearDownClass(cls):
        for ws in cls.wss.values():
            ws.close()
        try:
            cls.st.stop()
        finally:
            cls.world.close()

    def session(self, network, token=None):
        params = {} if network is None else {"network": network}
        return self.st.create_session(token=token or self.admin, params=params)

    def sh(self, sid, command, timeout=60, token=None):
        """Runs command in the session; its output and exit code."""
        if sid not in self.wss:
            self.wss[sid] = self.st.ws(f"/ws/sessions/{sid}", token or self.admin)
        _, out, obs = run_action(self.wss[sid], command, timeout=timeout)
        return out, obs["extras"]["metadata"]["exit_code"]

    def rest(self, path, token=None, method="GET", body=None):
        req = urllib.request.Request(f"http://127.0.0.1:{self.st.port}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + (token or self.admin)})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def network(self, sid, token=None):
        status, body = self.rest(f"/api/v1/sessions/{sid}/network", token)
        self.assertEqual(status, 200, body)
        return body

    def refusals(self, sid):
        return self.network(sid)["refusals"]

    def stream_events(self, sid, kind):
        """The session's stored events of one type (the Redis stream, as replay serves it)."""
        out = self.st.redis("XRANGE", f"sp:session:{{{sid}}}:events", "-", "+")
        found = []
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("{"):
                ev = json.loads(line)
                if ev.get("type") == kind:
                    found.append(ev)
        return found

    def wait_for(self, cond, what, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = cond()
            if v:
                return v
            time.sleep(0.05)
        self.fail(f"not within {timeout} s: {what}")

    def curl(self, sid, url, *args, timeout=20):
        out, code = self.sh(sid, "curl -sS --max-time 10 " + " ".join([*args, f"'{url}'"]) + " 2>&1",
                            timeout=timeout)
        return out, code


class BoundaryTest(NetworkTestBase):
    """The probe, from every mode: nothing of the host, no other sandbox, no private range."""

    def setUp(self):
        self.listener = Listener()

    def tearDown(self):
        self.listener.close()

    def probe(self, sid, targets):
        """Tries a TCP connection to each (address, port) from inside; {target: error text}."""
        script = "; ".join(
            f"(exec 3<>/dev/tcp/{a}/{p}) 2>/dev/null && echo '{a}:{p} CONNECTED' || echo '{a}:{p} FAILED'"
            for a, p in targets)
        out, _ = self.sh(sid, script)
        return out

    def targets(self, other_addr):
        t = [(a, self.listener.port) for a in host_addresses()]
        t += [(other_addr, 8000), ("169.254.169.254", 80), ("10.0.0.1", 80), ("172.16.5.5", 80),
              ("192.168.1.1", 80), ("100.64.1.1", 80), (a := host_addresses()[0], self.st.port)]
        return t

    def test_the_probe_is_refused_in_every_mode_and_logged(self):
        # another tenant's sandbox, with a server listening on every address it has
        victim = self.session(True, token=self.st.token(sub="bob", role="admin"))
        victim_addr = self.network(victim)["address"]
        self.sh(victim, "(python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1 &) ; sleep 0.5")
        for mode in ("none", "egress", {"allow": [FILES, "203.0.113.0/24"]}):
            with self.subTest(mode=mode):
                sid = self.session(mode)
                targets = self.targets(victim_addr)
                out = self.probe(sid, targets)
                self.assertNotIn("CONNECTED", out, out)
                self.assertEqual(out.count("FAILED"), len(targets), out)
                if mode == "none":
                    # no link at all: the sandbox sees its loopback only
                    dev, _ = self.sh(sid, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
                    self.assertEqual(dev.split(), ["lo"])
                    continue
                # refused at the handshake ("connection refused", not a timeout)
                out, _ = self.sh(sid, f"(exec 3<>/dev/tcp/169.254.169.254/80) 2>&1")
                self.assertIn("Connection refused", out)
                # every attempt is in the owner's log, with the rule that refused it
                log = self.wait_for(lambda: len(self.refusals(sid)) >= len(targets) + 1 and
                                    self.refusals(sid), "the refusals in the log")
                dests = {r["dest"]: r["rule"] for r in log}
                for a, p in targets:
                    self.assertIn(f"{a}:{p}", dests, log)
                self.assertEqual(dests[f"169.254.169.254:80"],
                                 "a private or reserved range (169.254.0.0/16)")
                self.assertEqual(dests[f"{victim_addr}:8000"], "another sandbox")
                self.assertEqual(dests[f"{self.world.host_addr}:{self.listener.port}"], "the host itself")
                self.assertGreaterEqual(self.network(sid)["counters"]["refused"], len(targets))
                self.wait_for(lambda: int(self.st.redis("HGET", f"sp:session:{{{sid}}}", "net_refused") or 0)
                              >= len(targets), "the session record's count")
                # and in the session's stream, for whoever watches it
                evs = self.wait_for(lambda: len(self.stream_events(sid, "network")) >= len(targets) and
                                    self.stream_events(sid, "network"), "network events")
                self.assertEqual({e["verdict"] for e in evs}, {"refused"})
                self.assertIn("169.254.169.254:80", {e.get("dest") for e in evs})
        self.assertEqual(self.listener.accepted, 0)
        # the victim's server was never reached by anyone but itself
        out, _ = self.sh(victim, "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8000/")
        self.assertEqual(out, "200")

    def test_a_sandbox_cannot_spoof_or_leave_by_udp(self):
        sid = self.session(True)
        # UDP other than DNS goes nowhere: a datagram to the world's DNS port by address is
        # answered by netd's resolver (every port-53 packet is), any other port by no one
        out, _ = self.sh(sid, "python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
                              " s.settimeout(2); s.sendto(b'x', ('198.51.100.10', 9999));"
                              " print(s.recvfrom(10) if False else 'sent')\"")
        self.assertIn("sent", out)
        # the world saw no packet but DNS (its HTTP log stays empty too)
        self.assertEqual(self.world.http_requests(), [])

    def test_without_a_network_dns_and_the_world_fail_at_once(self):
        sid = self.session(None)  # the operator's default: none
        self.assertEqual(self.network(sid)["policy"], {"mode": "none"})
        self.assertFalse(self.network(sid)["attached"])
        out, code = self.curl(sid, f"http://{FILES}/hello.txt")
        self.assertNotEqual(code, 0)
        self.assertIn("Could not resolve host", out)
        out, code = self.curl(sid, "http://198.51.100.10/hello.txt")
        self.assertNotEqual(code, 0)


class EgressTest(NetworkTestBase):
    def test_egress_reaches_the_world_by_name_and_by_address(self):
        sid = self.session("egress")
        out, code = self.curl(sid, f"http://{FILES}/hello.txt")
        self.assertEqual((code, out), (0, self.hello))
        out, code = self.curl(sid, "http://203.0.113.30/host")
        self.assertEqual((code, out), (0, "203.0.113.30"))
        self.sh(sid, f"cat > /tmp/ca.pem <<'EOF'\n{self.world.ca_pem}EOF")
        out, code = self.curl(sid, f"https://{SECURE}/hello.txt", "--cacert /tmp/ca.pem")
        self.assertEqual((code, out), (0, self.hello))
        self.assertIn(FILES, self.world.dns_queries())  # through netd to the world's resolver
        info = self.network(sid)
        self.assertEqual(info["policy"], {"mode": "egress"})
        self.assertGreaterEqual(info["counters"]["connections"], 3)
        self.assertGreater(info["counters"]["bytes_in"], 0)
        self.assertEqual(info["refusals"], [])

    def test_a_name_that_does_not_resolve_gets_no_no_network_note(self):
        """The note that a session has no network (test_scenarios) is only for sessions without
        one: here the name is unknown to the world's resolver, the network is there."""
        sid = self.session("egress")
        if sid not in self.wss:
            self.wss[sid] = self.st.ws(f"/ws/sessions/{sid}", self.admin)
        _, out, obs = run_action(self.wss[sid], "python3 -c \"import socket; "
                                 "socket.getaddrinfo('nosuch.world.example', 80)\"", timeout=60)
        self.assertIn("gaierror", out)
        self.assertEqual(obs["extras"]["metadata"]["suffix"], "\n[The command completed with exit code 1.]")

    def test_a_flood_of_refusals_is_counted_whole_and_reported_in_part(self):
        sid = self.session("egress")
        self.sh(sid, "for i in $(seq 300); do (exec 3<>/dev/tcp/10.9.9.9/80) 2>/dev/null; done; true")
        info = self.wait_for(lambda: (i := self.network(sid))["counters"]["refused"] >= 300 and i,
                             "300 refusals counted")
        self.assertEqual(info["counters"]["refused"], 300)
        self.assertEqual(info["refusals_total"], 300)
        self.assertEqual(len(info["refusals"]), 64)  # the log keeps the last 64
        evs = self.stream_events(sid, "network")
        self.assertLess(len(evs), 150)  # 20 a second are reported one by one, not all 300
        self.assertTrue(any(e.get("unreported", 0) > 0 for e in evs), evs[-3:])

    def test_true_is_egress_and_false_is_none(self):
        self.assertEqual(self.network(self.session(True))["policy"], {"mode": "egress"})
        self.assertEqual(self.network(self.session(False))["policy"], {"mode": "none"})

    def test_a_deny_list_in_egress(self):
        sid = self.session({"mode": "egress", "deny": ["203.0.113.0/24", SECURE]})
        out, code = self.curl(sid, f"http://{FILES}/hello.txt")
        self.assertEqual((code, out), (0, self.hello))
        out, code = self.curl(sid, "http://203.0.113.30/hello.txt")
        self.assertNotEqual(code, 0, out)
        self.world.clear_logs()
        out, code = self.curl(sid, f"http://{SECURE}/hello.txt")
        self.assertIn("Could not resolve host", out)
        self.assertNotIn(SECURE, self.world.dns_queries())  # refused before it left the host
        # a denied name in the Host of a request to an allowed address is refused as well
        out, code = self.curl(sid, "http://198.51.100.10/hello.txt", f"-H 'Host: {SECURE}'")
        self.assertNotEqual(code, 0, out)
        rules = {(r["proto"], r.get("dest", ""), r.get("name", "")): r["rule"] for r in self.refusals(sid)}
        self.assertEqual(rules[("tcp", "203.0.113.30:80", "")], "deny 203.0.113.0/24")
        self.assertEqual(rules[("dns", "", SECURE)], f"deny {SECURE}")
        self.assertEqual(rules[("tcp", "198.51.100.10:80", SECURE)], f"deny {SECURE}")

    def test_the_network_survives_pause_resume_and_a_gateway_restart(self):
        sid = self.session("egress")
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt")[1], 0)
        c = self.st.control(self.admin)
        self.assertEqual(self.st.call(c, "session.pause", {"session": sid})["type"], "result")
        self.assertEqual(self.st.call(c, "session.resume", {"session": sid})["type"], "result")
        c.close()
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))
        self.wss.pop(sid).close()
        self.st.kill_gateway()
        self.st.start_gateway()
        self.wait_for(lambda: self.rest(f"/api/v1/sessions/{sid}/network")[0] == 200, "the session back")
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))
        # the restarted gateway read the policy back from the record and took netd's link back
        info = self.network(sid)
        self.assertEqual((info["policy"], info["attached"]), ({"mode": "egress"}, True), info)
        self.assertEqual(json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "network")),
                         {"mode": "egress"})
        # refusals after the restart reach the stream through the new gateway
        self.sh(sid, "(exec 3<>/dev/tcp/10.1.2.3/80) 2>/dev/null; true")
        self.wait_for(lambda: any(e.get("dest") == "10.1.2.3:80" for e in self.stream_events(sid, "network")),
                      "the refusal as an event after the restart")


class AllowlistTest(NetworkTestBase):
    def test_names_and_cidrs_of_the_allow_list(self):
        sid = self.session({"allow": [FILES, "203.0.113.0/24"]})
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))
        self.assertEqual(self.curl(sid, "http://203.0.113.30/hello.txt"), (self.hello, 0))
        self.world.clear_logs()
        out, code = self.curl(sid, f"http://{SECURE}/hello.txt")
        self.assertIn("Could not resolve host", out)
        self.assertNotIn(SECURE, self.world.dns_queries())
        # an address no allowed name resolved to, and not in an allowed CIDR
        out, code = self.curl(sid, "http://198.51.100.20/hello.txt")
        self.assertNotEqual(code, 0, out)
        log = self.refusals(sid)
        self.assertIn({"proto": "dns", "name": SECURE, "rule": "not in the allow-list"},
                      [{k: r[k] for k in ("proto", "name", "rule") if k in r} for r in log])
        self.assertIn(("198.51.100.20:80", "not in the allow-list (no allowed name resolved to this address)"),
                      [(r.get("dest"), r["rule"]) for r in log])

    def test_an_https_domain_is_not_reached_by_a_raw_address_or_another_name(self):
        sid = self.session({"allow": [SECURE]})
        self.sh(sid, f"cat > /tmp/ca.pem <<'EOF'\n{self.world.ca_pem}EOF")
        # the name's address, never resolved here: the sandbox's word is not enough
        out, code = self.curl(sid, f"https://{SECURE}/hello.txt", "--cacert /tmp/ca.pem",
                              f"--resolve {SECURE}:443:198.51.100.20")
        self.assertNotEqual(code, 0, out)
        # resolved through netd: reached
        out, code = self.curl(sid, f"https://{SECURE}/hello.txt", "--cacert /tmp/ca.pem")
        self.assertEqual((out, code), (self.hello, 0))
        # the same (now allowed) address with another name in its TLS handshake: refused
        out, code = self.curl(sid, "https://evil.example/hello.txt", "-k",
                              "--resolve evil.example:443:198.51.100.20")
        self.assertNotEqual(code, 0, out)
        rules = [(r.get("dest"), r.get("name", ""), r["rule"]) for r in self.refusals(sid)]
        # refused before a byte was read: the address alone decides
        self.assertIn(("198.51.100.20:443", "",
                       "not in the allow-list (no allowed name resolved to this address)"), rules)
        self.assertIn(("198.51.100.20:443", "evil.example", "evil.example is not in the allow-list"), rules)

    def test_a_request_whose_host_cannot_be_read_is_refused(self):
        sid = self.session({"allow": [FILES]})
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))  # pinned
        # the absolute form names its host in the request line, which a server may route by:
        # read as "names nothing" it would reach any host behind the allowed address
        script = ("import socket\n"
                  "s = socket.create_connection(('198.51.100.10', 80), timeout=5)\n"
                  "s.sendall(b'GET http://evil.example/hello.txt HTTP/1.1\\r\\nHost: evil.example\\r\\n\\r\\n')\n"
                  "try:\n"
                  "    print(s.recv(100) or b'closed')\n"
                  "except OSError as e:\n"
                  "    print('reset', e.errno)\n")
        self.sh(sid, f"cat > /tmp/abs.py <<'EOF'\n{script}EOF")
        out, _ = self.sh(sid, "python3 /tmp/abs.py")
        self.assertIn("reset", out)
        self.assertIn(("198.51.100.10:80", "a TLS or HTTP start whose host name cannot be read"),
                      [(r.get("dest"), r["rule"]) for r in self.refusals(sid)])

    def test_a_changed_policy_keeps_no_address_its_old_names_opened(self):
        """session.set_network (E2B's updateNetwork) on a running sandbox: netd replaces its
        policy in place, and the addresses an allowed name resolved to (pins) open nothing the
        new policy does not allow: a connection that names no host is decided by them."""
        sid = self.session({"allow": [FILES]})
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))  # pinned
        script = ("import socket\n"
                  "s = socket.create_connection(('198.51.100.10', 80), timeout=5)\n"
                  "s.sendall(b'ping\\n')\n"
                  "try:\n"
                  "    print(s.recv(100) or b'closed')\n"
                  "except OSError as e:\n"
                  "    print('reset', e.errno)\n")
        self.sh(sid, f"cat > /tmp/raw.py <<'EOF'\n{script}EOF")
        self.sh(sid, "python3 /tmp/raw.py")
        refused = lambda: [r for r in self.refusals(sid) if r.get("dest") == "198.51.100.10:80"]
        self.assertEqual(refused(), [], "a name the policy allows resolved to it")
        c = self.st.control(self.admin)
        r = self.st.call(c, "session.set_network", {"session": sid, "network": {"allow": [OTHER]}})
        c.close()
        self.assertEqual(r["type"], "result", r)
        self.assertEqual(r["result"]["network"], {"mode": "allowlist", "allow": [OTHER]})
        self.assertEqual(self.network(sid)["policy"], {"mode": "allowlist", "allow": [OTHER]})
        self.sh(sid, "python3 /tmp/raw.py")
        self.assertEqual([x["rule"] for x in refused()],
                         ["not in the allow-list (no allowed name resolved to this address)"])
        self.assertEqual(self.curl(sid, f"http://{OTHER}/hello.txt"), (self.hello, 0))
        policy = [e for e in self.stream_events(sid, "network") if e.get("event") == "policy"]
        self.assertEqual([(e["policy"], e["origin"]) for e in policy],
                         [({"mode": "allowlist", "allow": [OTHER]}, "root")])

    def test_a_wildcard_and_a_malformed_policy(self):
        sid = self.session({"allow": ["*.world.example"]})
        self.assertEqual(self.curl(sid, f"http://{OTHER}/hello.txt"), (self.hello, 0))
        c = self.st.control(self.admin)
        for bad, why in (({"allow": ["not a domain!"]}, "neither an IPv4"),
                         ({"allow": ["10.0.0.1/8"]}, "host bits zero"),
                         ({"allow": ["2001:db8::/32"]}, "IPv4 only"),
                         ({"mode": "egress", "allow": [FILES]}, "allowlist mode"),
                         ({"allow": []}, "non-empty"),
                         ("everything", "network must be"),
                         ({"mode": "egress", "ports": [80]}, "unknown field")):
            r = self.st.call(c, "session.create", {"network": bad})
            self.assertEqual(r["type"], "error", (bad, r))
            self.assertEqual(r["error"]["code"], "bad_request", r)
            self.assertIn(why, r["error"]["message"])
        c.close()


class RolesTest(NetworkTestBase):
    """The operator decides which role may ask for which mode (--network-roles) and what a
    session that asks nothing gets (--network-default)."""
    stack_kw = {"extra": ["--network-roles", "admin=egress,user=allowlist", "--network-default", "none"]}

    def test_a_user_may_not_ask_for_more_than_its_role_allows(self):
        user = self.st.token(sub="carol", role="user")
        c = self.st.control(user)
        r = self.st.call(c, "session.create", {"network": True})
        self.assertEqual(r["type"], "error", r)
        self.assertEqual(r["error"]["code"], "forbidden")
        self.assertIn('up to "allowlist"', r["error"]["message"])
        c.close()
        sid = self.session({"allow": [FILES]}, token=user)
        self.assertEqual(self.curl_as(user, sid), (self.hello, 0))
        self.assertEqual(self.network(self.session("egress"))["policy"]["mode"], "egress")  # admin
        # the viewer of a session reads its log; another user does not
        viewer = self.st.token(sub="dash", role="viewer", session=sid)
        self.assertEqual(self.rest(f"/api/v1/sessions/{sid}/network", viewer)[0], 200)
        self.assertEqual(self.rest(f"/api/v1/sessions/{sid}/network", self.st.token(sub="mallory"))[0], 404)

    def curl_as(self, token, sid):
        return self.sh(sid, f"curl -sS --max-time 10 http://{FILES}/hello.txt 2>&1", token=token)


class CapsTest(NetworkTestBase):
    """A sandbox's share: a cap on its open connections, its bandwidth shaped."""
    netd_opts = {"max-conns": 8, "bandwidth": 1 << 20}
    world_kw = {"big_bytes": 3 << 20}

    def test_connections_past_the_cap_are_refused_and_logged(self):
        sid = self.session("egress")
        script = ("import socket\n"
                  "ok = bad = 0\n"
                  "held = []\n"
                  "for i in range(12):\n"
                  "    try:\n"
                  "        s = socket.create_connection(('198.51.100.10', 80), timeout=5)\n"
                  "        held.append(s)\n"
                  "        s.sendall(b'GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\n"
                  "        ok += bool(s.recv(100))\n"
                  "    except OSError:\n"
                  "        bad += 1\n"
                  "print(ok, bad)\n")
        self.sh(sid, f"cat > /tmp/c.py <<'EOF'\n{script}EOF")
        out, _ = self.sh(sid, "python3 /tmp/c.py")
        self.assertEqual(out.split(), ["8", "4"], out)
        caps = [r for r in self.refusals(sid) if r["rule"] == "connection cap (8 open)"]
        self.assertEqual(len(caps), 4, self.refusals(sid))
        # the connections closed, the sandbox may connect again
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))

    def test_bandwidth_is_shaped_per_sandbox(self):
        sid = self.session("egress")
        # 3 MiB at 1 MiB/s (one second's worth may come at once): at least 1.5 s
        out, code = self.sh(sid, "curl -sS -o /dev/null -w '%{size_download} %{time_total}' "
                                 "--max-time 30 http://198.51.100.10/big")
        size, took = out.split()
        self.assertEqual((code, int(size)), (0, 3 << 20))
        self.assertGreater(float(took), 1.5, out)


class PackagesTest(NetworkTestBase):
    """What an agent does with a network: pip and git, from the world's index and repository,
    in the runtime image (its pip and git), over a pooled sandbox's network given at claim."""
    image = "default"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()

    def test_pip_download_and_git_clone(self):
        sid = self.session({"allow": [FILES]})
        out, code = self.sh(sid, f"pip download --no-deps --disable-pip-version-check -d /tmp/p "
                                 f"--index-url http://{FILES}/simple/ --trusted-host {FILES} sptest-pkg 2>&1",
                            timeout=120)
        self.assertEqual(code, 0, out)
        out, _ = self.sh(sid, "ls /tmp/p")
        self.assertEqual(out.strip(), self.world.wheel_name)
        out, code = self.sh(sid, f"git clone -q http://{FILES}/repo.git /tmp/repo 2>&1 && "
                                 "git -C /tmp/repo rev-parse HEAD", timeout=120)
        self.assertEqual((code, out.strip()), (0, self.world.git_head), out)


class DockerTest(BoundaryTest):
    """The same probe and the same world from Docker containers: Docker's network "none", never
    its bridge, and netd's link into the container's namespace."""
    stack_kw = {"provider": "docker", "pool": 1}
    image = "default"

    def test_the_world_through_a_container(self):
        sid = self.session({"allow": [FILES]})
        self.assertEqual(self.curl(sid, f"http://{FILES}/hello.txt"), (self.hello, 0))
        out, code = self.curl(sid, f"http://{SECURE}/hello.txt")
        self.assertIn("Could not resolve host", out)
        dev, _ = self.sh(sid, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort")
        self.assertEqual(dev.split(), ["eth0", "lo"])  # netd's link, no Docker bridge


if __name__ == "__main__":
    unittest.main()
