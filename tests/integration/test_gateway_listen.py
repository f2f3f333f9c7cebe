"""The gateway binds exactly the address --listen names (issue 29): told 127.0.0.1 it is not
reachable on the machine's other addresses (with libwebsockets 4.1.6 it bound every address of
both families for that, its log saying 127.0.0.1, and its route lookup and control routes
answered anyone who reached the machine).

Each test runs a real gateway in a network namespace of its own, joined by a veth pair to a
second namespace that plays another machine on its network:

    gateway's netns (spgwl-XXXXXX-g)                    peer's netns (spgwl-XXXXXX-p)
    lo 127.0.0.1 ::1, veth 198.51.100.1/24 2001:db8::1   veth 198.51.100.2/24 2001:db8::2

and checks what the gateway listens on (ss -ltn in its namespace) and who reaches it. The
addresses exist in these two namespaces alone: nothing here touches the host's network."""
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import unittest

from stack import BUILD, terminate

GW_V4, PEER_V4 = "198.51.100.1", "198.51.100.2"
GW_V6, PEER_V6 = "2001:db8::1", "2001:db8::2"
PORT = 8081  # a namespace of the test's own: any port is free

# Connects from inside a namespace and sends a plain request: the status line, or "refused".
PROBE = r"""
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((host, port), timeout=5)
except OSError as e:
    print("refused" if isinstance(e, ConnectionRefusedError) else "error " + repr(e))
    sys.exit(0)
s.sendall(b"GET /_sp/route HTTP/1.1\r\nHost: x\r\n\r\n")
print(s.recv(4096).split(b"\r\n", 1)[0].decode())
"""


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip() or r.returncode}")
    return r.stdout


class Listen(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tag = secrets.token_hex(3)
        cls.gw_ns, cls.peer_ns = f"spgwl-{tag}-g", f"spgwl-{tag}-p"
        cls.tmp = tempfile.mkdtemp(prefix="sp-listen-")
        cls.redis = None
        try:
            for ns in (cls.gw_ns, cls.peer_ns):
                run("ip", "netns", "add", ns)
                run("ip", "-n", ns, "link", "set", "lo", "up")
            run("ip", "-n", cls.gw_ns, "link", "add", "veth-g", "type", "veth", "peer", "name",
                "veth-p", "netns", cls.peer_ns)
            for ns, dev, v4, v6 in ((cls.gw_ns, "veth-g", GW_V4, GW_V6),
                                    (cls.peer_ns, "veth-p", PEER_V4, PEER_V6)):
                run("ip", "-n", ns, "addr", "add", v4 + "/24", "dev", dev)
                run("ip", "-n", ns, "-6", "addr", "add", v6 + "/64", "dev", dev, "nodad")
                run("ip", "-n", ns, "link", "set", dev, "up")
            cls.secret = os.path.join(cls.tmp, "secret")
            with open(cls.secret, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
            os.chmod(cls.secret, 0o600)
            # Redis on a unix socket (reached from any namespace): the gateway listens at once
            cls.redis_sock = os.path.join(cls.tmp, "redis.sock")
            cls.redis = subprocess.Popen(
                ["redis-server", "--port", "0", "--unixsocket", cls.redis_sock, "--save", "",
                 "--appendonly", "no", "--dir", cls.tmp], stdout=subprocess.DEVNULL)
            for _ in range(250):
                if os.path.exists(cls.redis_sock):
                    break
                time.sleep(0.02)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        terminate(cls.redis)
        for ns in (cls.gw_ns, cls.peer_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def start(self, listen):
        """The gateway told --listen listen, in its namespace: (process, log path) once it
        listens or has exited."""
        log = os.path.join(self.tmp, f"gw-{secrets.token_hex(3)}.log")
        with open(log, "w") as out:
            gw = subprocess.Popen(
                ["ip", "netns", "exec", self.gw_ns, os.path.join(BUILD, "sandpipe-gateway"),
                 "--listen", listen, "--redis", "unix:" + self.redis_sock, "--provider", "local",
                 "--image", "host", "--pool", "0", "--id", "gw-listen",
                 "--state-dir", os.path.join(self.tmp, "state"), "--secret-file", self.secret],
                stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and gw.poll() is None:
            if "listening on ws://" in self.text(log):
                break
            time.sleep(0.05)
        self.addCleanup(terminate, gw)
        return gw, log

    @staticmethod
    def text(path):
        with open(path) as f:
            return f.read()

    def bound(self):
        """The local addresses listening on PORT in the gateway's namespace (ss -ltn)."""
        out = run("ip", "netns", "exec", self.gw_ns, "ss", "-Hltn")
        return sorted(f.split()[3] for f in out.splitlines() if f.split()[3].endswith(f":{PORT}"))

    def reach(self, ns, host):
        return run("ip", "netns", "exec", ns, "python3", "-c", PROBE, host, str(PORT)).strip()

    def assertAnswers(self, ns, host):
        self.assertTrue(self.reach(ns, host).startswith("HTTP/1.1 "), f"{host} from {ns}")

    def assertRefused(self, ns, host):
        # refused, not unreachable: the address answers, with nothing on the port
        self.assertEqual(self.reach(ns, host), "refused", f"{host} from {ns}")

    def test_told_127_0_0_1_it_is_reachable_there_alone(self):
        gw, log = self.start(f"127.0.0.1:{PORT}")
        self.assertIsNone(gw.poll(), self.text(log))
        self.assertEqual(self.bound(), [f"127.0.0.1:{PORT}"])
        self.assertIn(f"listening on ws://127.0.0.1:{PORT} ", self.text(log))
        self.assertAnswers(self.gw_ns, "127.0.0.1")
        self.assertRefused(self.peer_ns, GW_V4)
        self.assertRefused(self.peer_ns, GW_V6)
        self.assertRefused(self.gw_ns, "::1")

    def test_told_its_network_address_it_is_reachable_there_alone(self):
        gw, log = self.start(f"{GW_V4}:{PORT}")
        self.assertIsNone(gw.poll(), self.text(log))
        self.assertEqual(self.bound(), [f"{GW_V4}:{PORT}"])
        self.assertAnswers(self.peer_ns, GW_V4)
        self.assertRefused(self.gw_ns, "127.0.0.1")
        self.assertRefused(self.peer_ns, GW_V6)

    def test_0_0_0_0_is_every_ipv4_address_and_no_ipv6_one(self):
        gw, log = self.start(f"0.0.0.0:{PORT}")
        self.assertIsNone(gw.poll(), self.text(log))
        self.assertEqual(self.bound(), [f"0.0.0.0:{PORT}"])
        self.assertAnswers(self.peer_ns, GW_V4)
        self.assertAnswers(self.gw_ns, "127.0.0.1")
        self.assertRefused(self.peer_ns, GW_V6)

    def test_brackets_name_an_ipv6_address_and_ipv6_alone(self):
        gw, log = self.start(f"[::]:{PORT}")
        self.assertIsNone(gw.poll(), self.text(log))
        self.assertEqual(self.bound(), [f"[::]:{PORT}"])
        self.assertIn(f"listening on ws://[::]:{PORT} ", self.text(log))
        self.assertAnswers(self.peer_ns, GW_V6)
        self.assertAnswers(self.gw_ns, "::1")
        self.assertRefused(self.peer_ns, GW_V4)  # IPV6_V6ONLY: no IPv4 through it
        self.assertRefused(self.gw_ns, "127.0.0.1")
        terminate(gw)
        gw, log = self.start(f"[::1]:{PORT}")
        self.assertIsNone(gw.poll(), self.text(log))
        self.assertEqual(self.bound(), [f"[::1]:{PORT}"])
        self.assertAnswers(self.gw_ns, "::1")
        self.assertRefused(self.peer_ns, GW_V6)

    def test_a_name_binds_its_first_address_alone(self):
        gw, log = self.start(f"localhost:{PORT}")
        self.assertIsNone(gw.poll(), self.text(log))
        self.assertIn(self.bound(), ([f"127.0.0.1:{PORT}"], [f"[::1]:{PORT}"]))
        self.assertRefused(self.peer_ns, GW_V4)
        self.assertRefused(self.peer_ns, GW_V6)

    def test_what_it_cannot_bind_as_asked_stops_it_with_why(self):
        for listen, code, why in ((f"198.51.100.9:{PORT}", 1, "cannot listen on 198.51.100.9"),
                                  (f":{PORT}", 2, "names no host"),
                                  (f"no-such-host.invalid:{PORT}", 2, "does not resolve"),
                                  ("127.0.0.1", 2, "HOST:PORT")):
            gw, log = self.start(listen)
            self.assertEqual(gw.wait(15), code, self.text(log))
            self.assertIn(why, self.text(log))
            self.assertNotIn("listening on ws://", self.text(log))
            self.assertEqual(self.bound(), [])


if __name__ == "__main__":
    unittest.main()
