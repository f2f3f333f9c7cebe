"""port.list and port.watch against a real executor in its own bwrap sandbox (its
own network and PID namespaces: the ports and processes it sees are only the test's), with real
servers started in it by proc.spawn and bash."""
import os
import unittest

from spexec import ExecutorTest

# Small servers of the Python standard library, each saying "listening" once it listens.
SERVERS = r'''
import fcntl, hashlib, os, select, socket, struct, sys, termios, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host, port))
s.listen(0 if mode == "late" else 512)
if mode == "late":  # told to go on through a FIFO: the executor may be stopped meanwhile
    go = os.open("go.fifo", os.O_RDONLY | os.O_NONBLOCK)
print("listening", flush=True)
if mode == "hold":  # never accepts: connections wait in the backlog
    time.sleep(3600)
if mode == "late":  # accepts when told: till then its backlog of one is full, a SYN waits
    select.select([go], [], [])
    first, _ = s.accept()
c, _ = s.accept()
if mode == "hello":
    c.sendall(b"hello from " + host.encode())
elif mode == "digest":  # reads to EOF, then answers the size and SHA-256 of what it read
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.sendall(b"%d %s" % (n, h.hexdigest().encode()))
elif mode in ("reset", "late"):  # some bytes, then a reset
    c.sendall(b"partial")
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    if mode == "late":
        with open("done.fifo", "w") as f:
            f.write("reset")
    time.sleep(3600)
elif mode == "sink":  # reads nothing; on a line on stdin, says how many bytes wait for it
    sys.stdin.readline()
    print("unread %d" % struct.unpack("i", fcntl.ioctl(c, termios.FIONREAD, b"\0" * 4))[0],
          flush=True)
    time.sleep(3600)
elif mode == "closed":  # says when its client went away
    while c.recv(1 << 16):
        pass
    print("closed", flush=True)
c.close()
'''


class PortOpsTest(ExecutorTest):
    executor_args = dict(bwrap=True)
    connection = "test"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(os.path.join(cls.ex.workspace, "servers.py"), "w") as f:
            f.write(SERVERS)

    def setUp(self):
        super().setUp()
        self.servers = []

    def tearDown(self):
        for ch, pid_id in self.servers:
            self.c.call({"op": "proc.signal", "id": pid_id, "signal": "KILL"})
            ch.collect()
        super().tearDown()

    def spawn(self, argv, until=b"listening\n"):
        """Starts a server in the sandbox; returns (its channel, its started event)."""
        ch = self.c.open({"op": "proc.spawn", "argv": argv})
        started = ch.next().json()
        self.servers.append((ch, started["id"]))
        if until:
            out, _, close = ch.read(until=lambda b: until in b)
            self.assertIsNone(close, out)
        return ch, started

    def server(self, mode, port, host="127.0.0.1"):
        return self.spawn(["python3", "servers.py", mode, host, str(port)])

    def wait_listed(self, port):
        """Waits for port in port.watch (the HTTP server says nothing when it listens)."""
        w = self.c.open({"op": "port.watch"})
        ev = w.next().json()
        while not any(p["port"] == port for p in ev.get("ports", [ev])):
            ev = w.next().json()
        w.close()
        self.assertEqual(w.collect()[3], {"ok": True})

    def test_list_shows_servers_started_by_proc_spawn_and_by_bash(self):
        _, started = self.spawn(["python3", "-m", "http.server", "8000", "--bind", "0.0.0.0"],
                                until=None)
        self.wait_listed(8000)
        _, obs = self.c.run("python3 servers.py hold ::1 8001 > /dev/null &")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        long_arg = "x" * 300
        self.spawn(["bash", "-c", "exec -a $'\\xff\\xfeserver' python3 servers.py hold 127.0.0.1 8002 "
                    + long_arg])
        self.wait_listed(8001)
        ports = self.c.call({"op": "port.list"})["ports"]
        self.assertEqual([p["port"] for p in ports], [8000, 8001, 8002])
        self.assertEqual(ports[0], {"port": 8000, "address": "0.0.0.0", "family": "ipv4",
                                    "pid": started["pid"],
                                    "command": "python3 -m http.server 8000 --bind 0.0.0.0"})
        self.assertEqual((ports[1]["address"], ports[1]["family"]), ("::1", "ipv6"))
        self.assertEqual(ports[1]["command"], "python3 servers.py hold ::1 8001")
        self.assertIsInstance(ports[1]["pid"], int)
        # bytes that are not UTF-8 as U+FFFD; at most 200 bytes, cut between characters
        cmd = ports[2]["command"]
        self.assertTrue(cmd.startswith("\ufffd\ufffdserver servers.py hold 127.0.0.1 8002 xxx"), cmd)
        self.assertEqual(len(cmd.encode()), 200)
        self.c.run("kill %1")

    def test_watch_sees_a_listener_open_and_close(self):
        w = self.c.open({"op": "port.watch"})
        first = w.next().json()
        self.assertEqual(first["event"], "ports")
        self.assertNotIn(8070, [p["port"] for p in first["ports"]])
        _, started = self.spawn(["python3", "-m", "http.server", "8070", "--bind", "127.0.0.1"],
                                until=None)
        ev = w.next().json()
        self.assertEqual(ev, {"event": "opened", "port": 8070, "address": "127.0.0.1",
                              "family": "ipv4", "pid": started["pid"],
                              "command": "python3 -m http.server 8070 --bind 127.0.0.1"})
        self.c.call({"op": "proc.signal", "id": started["id"], "signal": "TERM"})
        ev = w.next().json()
        self.assertEqual(ev, {"event": "closed", "port": 8070, "address": "127.0.0.1",
                              "family": "ipv4"})
        w.close()
        self.assertEqual(w.collect()[3], {"ok": True})


if __name__ == "__main__":
    unittest.main()
