"""The network tests' outside world (networld.py), checked from the namespace the network daemon
will reach it from: DNS answers over UDP and TCP (and through glibc's resolver), HTTP and HTTPS at
every served address with the test CA, the package index and its wheel, a git clone over dumb
HTTP, the logs a test reads to know what arrived; and that close() (or a failed start) leaves
no namespace, link, route or server process behind.

The world is 198.51.100.0/24 (the link, its DNS server, files and secure) and 203.0.113.0/24
(routed through it); never 192.0.2.0/24, where the machines this project runs on number their
own uplink. So this module runs in the machine's real host namespace, the one the daemon proxies
from, and a host numbered in 192.0.2.0/24 is no conflict. A namespace that does use the world's
ranges is refused with the reason (tested here in namespaces of their own, made to overlap)."""
import hashlib
import io
import http.client
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

import networld
from networld import NetWorld, DEFAULT_NAMES, direct_env
from stack import cmdline, proc_parents

NAMES = dict(DEFAULT_NAMES, **{"chain.world.example": "cname.world.example",
                               "multi.world.example": ["203.0.113.31", "203.0.113.32"]})
BIG = 3 << 20


def netns_names():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def worlds():
    """The worlds' namespaces on the machine."""
    return sorted(n for n in netns_names() if n.startswith(networld.NS_PREFIX))


def link_exists(name):
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


def routes():
    return subprocess.run(["ip", "-4", "route"], capture_output=True, text=True, check=True).stdout


def route_to(addr):
    """`ip route get addr`: the route the kernel would use ("" when none)."""
    return subprocess.run(["ip", "-4", "route", "get", addr], capture_output=True, text=True).stdout


def alive(pid):
    """pid is a live process (not a zombie): /proc has it and its state is not Z."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def get(addr, path, host=None, port=80, context=None, server_hostname=None):
    """One GET: (status, body, lower-case headers)."""
    if context:
        c = http.client.HTTPSConnection(addr, port, timeout=10, context=context)
        # the name checked against the certificate is not the address dialled
        c.sock = context.wrap_socket(socket.create_connection((addr, port), 10),
                                     server_hostname=server_hostname or addr)
    else:
        c = http.client.HTTPConnection(addr, port, timeout=10)
    try:
        c.request("GET", path, headers={"Host": host} if host else {})
        r = c.getresponse()
        return r.status, r.read(), {k.lower(): v for k, v in r.getheaders()}
    finally:
        c.close()


class Served(unittest.TestCase):
    """One world for these checks (each reads only what it asked for from the logs)."""

    @classmethod
    def setUpClass(cls):
        t0 = time.monotonic()
        cls.w = NetWorld(names=NAMES, big_bytes=BIG)
        print(f"\nworld {cls.w.ns} up in {time.monotonic() - t0:.2f}s", file=sys.stderr)

    @classmethod
    def tearDownClass(cls):
        cls.w.close()

    def tearDown(self):
        log = self.w.server_log()
        self.assertNotIn("Traceback", log, log[-3000:])

    def test_dns_answers_over_udp_and_tcp(self):
        for tcp in (False, True):
            with self.subTest(tcp=tcp):
                q = lambda name, qtype="A": networld.dns_query(name, qtype, tcp=tcp)
                r = q("files.world.example")
                self.assertEqual((r["rcode"], r["aa"]), ("NOERROR", True), r)
                self.assertEqual(r["answers"], [("files.world.example", "A", 30, "198.51.100.10")])
                self.assertEqual(q("secure.world.example")["answers"],
                                 [("secure.world.example", "A", 30, "198.51.100.20")])
                self.assertEqual(q("other.world.example")["answers"],
                                 [("other.world.example", "A", 30, "203.0.113.30")])
                self.assertEqual(sorted(a[3] for a in q("multi.world.example")["answers"]),
                                 ["203.0.113.31", "203.0.113.32"])
                r = q("Cname.World.Example")  # case-insensitive; the owner echoes the asked case
                self.assertEqual(r["answers"], [("Cname.World.Example", "CNAME", 30, "files.world.example"),
                                                ("files.world.example", "A", 30, "198.51.100.10")])
                self.assertEqual([a[1:] for a in q("chain.world.example")["answers"]],
                                 [("CNAME", 30, "cname.world.example"), ("CNAME", 30, "files.world.example"),
                                  ("A", 30, "198.51.100.10")])
                r = q("secure.world.example", "AAAA")
                self.assertEqual((r["rcode"], r["answers"]), ("NOERROR", []), r)
                r = q("nowhere.world.example")
                self.assertEqual((r["rcode"], r["answers"]), ("NXDOMAIN", []), r)
                r = q("example.com")  # not a recursive resolver: nothing outside its map exists
                self.assertEqual(r["rcode"], "NXDOMAIN", r)

    def test_the_dns_log_names_every_query_and_only_those(self):
        """A test asserts that a refused name never reached the server from this log: a name
        is there once asked, with its protocol, and a name never asked is not."""
        self.w.clear_logs()
        networld.dns_query("logged.world.example", "AAAA")
        networld.dns_query("Other.World.Example", tcp=True)
        self.assertEqual(self.w.dns_queries(), ["logged.world.example", "other.world.example"])
        self.assertEqual(self.w.dns_queries("AAAA"), ["logged.world.example"])
        self.assertEqual([(e["proto"], e["name"], e["type"], e["client"]) for e in self.w.dns_log()],
                         [("udp", "logged.world.example", "AAAA", networld.HOST_ADDR),
                          ("tcp", "Other.World.Example", "A", networld.HOST_ADDR)])
        self.assertNotIn("never-asked.world.example", self.w.dns_queries())

    def test_glibc_resolves_the_world_through_its_dns(self):
        """The stub resolver a program uses (getent: glibc), pointed at the world's server,
        follows the CNAME: the encoding is right for a real client, not only for ours."""
        r = subprocess.run(self.w.resolved(["getent", "ahostsv4", "cname.world.example"]),
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split()[:3], ["198.51.100.10", "STREAM", "files.world.example"], r.stdout)
        r = subprocess.run(self.w.resolved(["getent", "ahostsv4", "nowhere.world.example"]),
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 2, r.stdout)  # not found

    def test_http_serves_hello_and_echoes_host_at_every_address(self):
        self.assertEqual(self.w.addrs, ["198.51.100.10", "198.51.100.20", "203.0.113.30", "203.0.113.31",
                                        "203.0.113.32"])
        for addr in self.w.addrs:
            with self.subTest(addr=addr):
                st, body, hdrs = get(addr, "/hello.txt")
                self.assertEqual((st, body), (200, networld.HELLO))
                self.assertEqual(hdrs["content-length"], str(len(networld.HELLO)))
                st, body, _ = get(addr, "/host", host="files.world.example:80")
                self.assertEqual((st, body), (200, b"files.world.example:80"))

    def test_http_keeps_a_connection_alive_and_logs_requests(self):
        self.w.clear_logs()
        c = http.client.HTTPConnection("203.0.113.30", 80, timeout=10)
        try:
            c.request("GET", "/hello.txt", headers={"Host": "other.world.example"})
            r = c.getresponse()
            self.assertEqual(r.read(), networld.HELLO)
            port = c.sock.getsockname()[1]
            c.request("GET", "/host", headers={"Host": "x.example"})
            r = c.getresponse()
            self.assertEqual(r.read(), b"x.example")
            self.assertEqual(c.sock.getsockname()[1], port)  # the same connection
        finally:
            c.close()
        self.assertEqual([(e["scheme"], e["local"], e["client"], e["path"], e["host"], e["status"])
                          for e in self.w.http_requests()],
                         [("http", "203.0.113.30", networld.HOST_ADDR, "/hello.txt", "other.world.example", 200),
                          ("http", "203.0.113.30", networld.HOST_ADDR, "/host", "x.example", 200)])

    def test_big_file_is_whole(self):
        st, body, hdrs = get("198.51.100.10", "/big")
        self.assertEqual((st, int(hdrs["content-length"]), len(body)), (200, BIG, BIG))
        self.assertEqual(hashlib.sha256(body).hexdigest(), self.w.big_sha256)

    def test_https_is_verified_with_the_test_ca(self):
        with open(self.w.ca_file) as f:
            self.assertEqual(f.read(), self.w.ca_pem)
        self.assertIn("-----BEGIN CERTIFICATE-----", self.w.ca_pem)
        ctx = ssl.create_default_context(cadata=self.w.ca_pem)
        for addr, name in (("198.51.100.20", "secure.world.example"), ("198.51.100.10", "files.world.example"),
                           ("198.51.100.10", "cname.world.example"), ("203.0.113.30", "203.0.113.30")):
            with self.subTest(name=name):
                st, body, _ = get(addr, "/hello.txt", host=name, port=443, context=ctx, server_hostname=name)
                self.assertEqual((st, body), (200, networld.HELLO))
        st, body, _ = get("198.51.100.20", "/host", host="secure.world.example", port=443, context=ctx,
                          server_hostname="secure.world.example")
        self.assertEqual(body, b"secure.world.example")
        with self.assertRaises(ssl.SSLCertVerificationError):  # trusted only through the test CA
            get("198.51.100.20", "/hello.txt", port=443, context=ssl.create_default_context(),
                server_hostname="secure.world.example")
        with self.assertRaises(ssl.SSLCertVerificationError):  # and only for the world's names
            get("198.51.100.20", "/hello.txt", port=443, context=ctx, server_hostname="www.example.com")

    def test_package_index_serves_a_valid_wheel(self):
        """PEP 503 as pip reads it: /simple/ lists the project by its normalised name, the
        project page links the wheel with a #sha256 fragment matching the bytes served, and the
        wheel's RECORD matches its files."""
        st, body, _ = get("198.51.100.10", "/simple/", host="files.world.example")
        self.assertEqual(st, 200)
        self.assertIn(b'href="/simple/sptest-pkg/"', body)
        st, body, _ = get("198.51.100.10", "/simple/sptest-pkg/", host="files.world.example")
        self.assertEqual(st, 200)
        m = re.search(rb'<a href="([^"#]+)#sha256=([0-9a-f]{64})">sptest_pkg-1\.0-py3-none-any\.whl</a>', body)
        self.assertIsNotNone(m, body)
        self.assertEqual(m.group(2).decode(), self.w.wheel_sha256)
        st, wheel, _ = get("198.51.100.10", m.group(1).decode(), host="files.world.example")
        self.assertEqual(st, 200)
        self.assertEqual(hashlib.sha256(wheel).hexdigest(), self.w.wheel_sha256)
        with zipfile.ZipFile(io.BytesIO(wheel)) as z:
            self.assertIsNone(z.testzip())
            names = sorted(z.namelist())
            self.assertEqual(names, ["sptest_pkg-1.0.dist-info/METADATA", "sptest_pkg-1.0.dist-info/RECORD",
                                     "sptest_pkg-1.0.dist-info/WHEEL", "sptest_pkg/__init__.py"])
            record = z.read("sptest_pkg-1.0.dist-info/RECORD").decode().splitlines()
            for line in record:
                path, digest, size = line.rsplit(",", 2)
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                self.assertEqual(digest, networld._record_hash(z.read(path)), path)
                self.assertEqual(int(size), len(z.read(path)), path)
            self.assertIn(b"Name: sptest-pkg\nVersion: 1.0\n", z.read("sptest_pkg-1.0.dist-info/METADATA"))
            self.assertIn(b"Tag: py3-none-any\n", z.read("sptest_pkg-1.0.dist-info/WHEEL"))

    def test_git_clones_the_repository_over_dumb_http_by_name(self):
        d = tempfile.mkdtemp(prefix="sp-networld-git-")
        try:
            env = direct_env(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
            r = subprocess.run(self.w.resolved(["git", "clone", "-q", self.w.repo_url, f"{d}/repo"]),
                               capture_output=True, text=True, timeout=30, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            head = subprocess.run(["git", "-C", f"{d}/repo", "rev-parse", "HEAD"], capture_output=True,
                                  text=True, env=env, check=True).stdout.strip()
            self.assertEqual(head, self.w.git_head)
            with open(f"{d}/repo/hello.txt", "rb") as f:
                self.assertEqual(f.read(), networld.HELLO)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        self.assertIn("/repo.git/info/refs?service=git-upload-pack",
                      [e["path"] for e in self.w.http_requests()])  # dumb: the static info/refs


class Lifecycle(unittest.TestCase):
    def test_close_removes_namespace_link_routes_and_servers(self):
        t0 = time.monotonic()
        w = NetWorld(names={"files.world.example": "198.51.100.10"})
        t1 = time.monotonic()
        ns, host_if, pids, d = w.ns, w.host_if, list(w.pids), w.dir
        self.assertIn(ns, netns_names())
        self.assertTrue(link_exists(host_if))
        self.assertIn(f"203.0.113.0/24 via 198.51.100.2 dev {host_if}", routes())
        self.assertIn(f"198.51.100.0/24 dev {host_if}", routes())
        for addr in ("198.51.100.10", networld.DNS_ADDR, "203.0.113.30"):
            self.assertIn(f"dev {host_if}", route_to(addr), addr)
        self.assertTrue(pids and all(alive(p) for p in pids), pids)
        self.assertEqual(get("198.51.100.10", "/hello.txt")[1], networld.HELLO)
        with w:
            pass  # the context manager closes
        print(f"\nsetup {t1 - t0:.2f}s, teardown {time.monotonic() - t1:.2f}s", file=sys.stderr)
        self.assertNotIn(ns, netns_names())
        self.assertFalse(link_exists(host_if))
        self.assertNotIn(host_if, routes())
        self.assertNotIn("198.51.100.0/24", routes())
        self.assertNotIn("203.0.113.0/24", routes())
        self.assertEqual([p for p in pids if alive(p)], [])
        self.assertFalse(os.path.exists(d))
        for addr in ("198.51.100.10", networld.DNS_ADDR, "203.0.113.30"):
            # no route leads to the world any more (not dialled: the default route would carry
            # the attempt off the machine)
            self.assertNotIn("spw", route_to(addr), addr)
        w.close()  # twice is fine

    def test_a_failed_start_leaves_nothing(self):
        """Servers that do not report ready in time: __init__ raises and has removed what it had
        made (namespace, veth, routes, the started server)."""
        with self.assertRaises(RuntimeError) as cm:
            NetWorld(ready_timeout=0.001)
        self.assertIn("did not start", str(cm.exception))
        self.assertEqual(worlds(), [])
        self.assertNotIn("spw", routes())
        self.assertEqual([n for n in os.listdir("/sys/class/net") if n.startswith("spw")], [])
        serving = [p for p in proc_parents() if alive(p)
                   and any(a.endswith(b"networld_serve.py") for a in cmdline(p))]
        self.assertEqual(serving, [])
        with NetWorld(names={"files.world.example": "198.51.100.10"}):  # and the next one starts
            self.assertEqual(get("198.51.100.10", "/hello.txt")[1], networld.HELLO)

    def test_a_namespace_using_the_ranges_is_refused(self):
        """A namespace numbered as this project's machines are (uplink 192.0.2.2/24, default via
        192.0.2.1) is no conflict; one with an address in 198.51.100.0/24 is: the world would
        take over addresses it needs, so NetWorld refuses, says why, and has made nothing."""
        before = worlds()
        code = ("import json, networld\n"
                "print(json.dumps(networld.host_conflicts()))\n"
                "networld.ip('addr', 'add', '198.51.100.5/24', 'dev', 'd0')\n"
                "print(json.dumps(networld.host_conflicts()))\n"
                "try:\n"
                "    networld.NetWorld()\n"
                "except RuntimeError as e:\n"
                "    print(e)\n")
        script = ("ip link set lo up && "
                  "ip link add d2 type veth peer name d3 && ip link set d2 up && ip link set d3 up && "
                  "ip addr add 192.0.2.2/24 dev d2 && ip route add default via 192.0.2.1 dev d2 && "
                  "ip link add d0 type veth peer name d1 && ip link set d0 up && ip link set d1 up && "
                  'exec "$0" -c "$1"')
        r = subprocess.run(["unshare", "-n", "sh", "-c", script, sys.executable, code], capture_output=True,
                           text=True, timeout=30, cwd=os.path.dirname(os.path.abspath(__file__)))
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 3, r.stdout + r.stderr)
        self.assertEqual(json.loads(lines[0]), [])  # the machine's own uplink: not the world's
        self.assertEqual(json.loads(lines[1]), ["d0 has 198.51.100.5/24", "route 198.51.100.0/24 dev d0"])
        self.assertIn("already uses its ranges, 198.51.100.0/24, 203.0.113.0/24", lines[2])
        self.assertIn("d0 has 198.51.100.5/24, route 198.51.100.0/24 dev d0", lines[2])
        self.assertNotIn("192.0.2", lines[2])
        self.assertEqual(worlds(), before)

    def test_own_netns_holds_a_conflict_of_its_own_and_returns(self):
        """OwnNetns moves this thread into a fresh namespace (what it changes stays there, the
        host's does not show) and close() moves it back and deletes the namespace."""
        self.assertEqual(networld.host_conflicts(), [])
        with networld.OwnNetns() as own:
            name = own.name
            self.assertIn(name, netns_names())
            self.assertEqual([l["ifname"] for l in networld.ip_json("link", "show")], ["lo"])
            networld.ip("link", "add", "spwtest0", "type", "veth", "peer", "name", "spwtest1")
            networld.ip("addr", "add", "203.0.113.9/24", "dev", "spwtest0")
            networld.ip("link", "set", "spwtest0", "up")
            self.assertIn("spwtest0 has 203.0.113.9/24", networld.host_conflicts())
            with self.assertRaises(RuntimeError) as cm:
                NetWorld()
            self.assertIn("spwtest0 has 203.0.113.9/24", str(cm.exception))
        self.assertNotIn(name, netns_names())
        self.assertFalse(link_exists("spwtest0"))
        self.assertEqual(networld.host_conflicts(), [])
        self.assertEqual(worlds(), [])


class Addresses(unittest.TestCase):
    """What a name (or an extra address) may map to: the world's two ranges, never 192.0.2.0/24
    (the machines' own uplink), never the host's end of the link or a network or broadcast
    address. Refused before anything is made."""

    def test_names_outside_the_worlds_ranges_are_refused(self):
        for addr in ("192.0.2.10", "192.0.2.2", "192.0.2.53"):
            with self.subTest(addr=addr):
                with self.assertRaises(ValueError) as cm:
                    NetWorld(names={"files.world.example": addr})
                self.assertIn("192.0.2.0/24", str(cm.exception))
                self.assertIn("uplink", str(cm.exception))
                with self.assertRaises(ValueError):
                    NetWorld(names={"files.world.example": ["198.51.100.10", addr]})
                with self.assertRaises(ValueError):
                    NetWorld(names={}, extra_addrs=[addr])
        for addr in ("10.0.0.1", "198.51.100.1", "198.51.100.0", "198.51.100.255", "203.0.113.0",
                     "203.0.113.255"):
            with self.subTest(addr=addr):
                with self.assertRaises(ValueError):
                    NetWorld(names={"files.world.example": addr})
        self.assertEqual(worlds(), [])
        self.assertIsNone(networld._open_world)

    def test_the_constants(self):
        self.assertEqual((networld.HOST_ADDR, networld.WORLD_ADDR, networld.DNS_ADDR),
                         ("198.51.100.1", "198.51.100.2", "198.51.100.53"))
        self.assertEqual([str(n) for n in networld.NETS], ["198.51.100.0/24", "203.0.113.0/24"])
        self.assertEqual({k: v for k, v in DEFAULT_NAMES.items() if k != "cname.world.example"},
                         {"files.world.example": "198.51.100.10", "secure.world.example": "198.51.100.20",
                          "other.world.example": "203.0.113.30"})
        self.assertFalse(any(n.overlaps(networld.UPLINK_NET) for n in networld.NETS))

if __name__ == "__main__":
    unittest.main()
