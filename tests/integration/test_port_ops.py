"""port.list, port.connect and port.watch against a real executor in its own bwrap sandbox (its
own network and PID namespaces: the ports and processes it sees are only the test's), with real
servers started in it by proc.spawn and bash."""
import hashlib
import os
import re
import select
import signal
import time
import unittest

from spexec import CLOSE, DATA, EOF, JSON, PING, PONG, WINDOW, ExecutorTest, encode

TUNNELS_MAX = 256  # PORT_TUNNELS_MAX, executor/port_tunnel.h
BIG = 10 * 1024 * 1024

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

# Fills a backlog: connects, then waits.
FILLER = 'import socket, sys; s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); ' \
         'print("in", flush=True); sys.stdin.readline()'


def host_pid(ex):
    """The executor's pid on the host: the process under ex's bwrap that runs it."""
    def parent(pid):
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])

    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if not f.read().startswith(b"/opt/sandpipe/sandpipe-executor"):
                    continue
            pid = int(name)
            while pid > 1 and pid != ex.proc.pid:
                pid = parent(pid)
            if pid == ex.proc.pid:
                return int(name)
        except (FileNotFoundError, ProcessLookupError):
            continue
    raise AssertionError("no executor under bwrap pid %d" % ex.proc.pid)


class PortOpsTest(ExecutorTest):
    executor_args = dict(bwrap=True)
    connection = "test"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(os.path.join(cls.ex.workspace, "servers.py"), "w") as f:
            f.write(SERVERS)
        cls.big = os.urandom(BIG)
        with open(os.path.join(cls.ex.workspace, "big.bin"), "wb") as f:
            f.write(cls.big)

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

    def tunnel(self, port, **kw):
        ch = self.c.open({"op": "port.connect", "port": port}, **kw)
        f = ch.next()
        self.assertEqual(f.type, JSON, f)
        return ch, f.json()

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

    def test_connect_relays_a_get_and_10_mb_byte_exact_within_the_credit(self):
        self.spawn(["python3", "-m", "http.server", "8000", "--bind", "0.0.0.0"], until=None)
        self.wait_listed(8000)
        ch, ev = self.tunnel(8000, auto_credit=False)
        self.assertEqual(ev, {"event": "connected", "address": "127.0.0.1"})
        req = b"GET /big.bin HTTP/1.1\r\nHost: preview\r\nConnection: close\r\n\r\n"
        ch.send(req)
        ch.eof()
        # Credit only once the last is used up: the executor must stop reading and resume.
        got, granted, eof = bytearray(), 0, False
        while True:
            f = ch.next()
            if f.type == DATA:
                got += f.payload
                self.assertLessEqual(len(got), WINDOW + granted, "DATA beyond the credit")
                if len(got) == WINDOW + granted:
                    ch.grant(100 * 1024)
                    granted += 100 * 1024
            elif f.type == EOF:
                eof = True
            elif f.type == CLOSE:
                break
        self.assertTrue(eof)
        head, body = bytes(got).split(b"\r\n\r\n", 1)
        self.assertTrue(head.startswith(b"HTTP/1.0 200"), head)
        self.assertEqual(hashlib.sha256(body).hexdigest(), hashlib.sha256(self.big).hexdigest())
        self.assertEqual(f.json(), {"ok": True, "sent": len(req), "received": len(got)})

    def test_connect_relays_a_10_mb_upload_and_the_half_close(self):
        self.server("digest", 8010)
        ch, ev = self.tunnel(8010)
        self.assertEqual(ev["address"], "127.0.0.1")
        ch.send(self.big)  # within the credit the executor grants as the app takes the bytes
        ch.eof()  # the server answers only once it read EOF: shutdown(SHUT_WR) reached it
        out, _, events, close = ch.collect()
        self.assertEqual(out, b"%d %s" % (BIG, hashlib.sha256(self.big).hexdigest().encode()))
        self.assertEqual(close, {"ok": True, "sent": BIG, "received": len(out)})

    def test_a_slow_app_slows_the_client(self):
        srv, _ = self.server("sink", 8015)
        ch, _ = self.tunnel(8015)
        # Send while there is credit, taking in what CREDIT has come, for at most 32 MiB.
        chunk, sent = os.urandom(65536), 0
        while sent < 32 * 1024 * 1024:
            if ch.send_credit >= len(chunk):
                ch.send(chunk)
                sent += len(chunk)
                continue
            try:  # no credit came back for a second: the app is not taking the bytes
                self.c._pump(time.monotonic() + 1)
            except TimeoutError:
                break
        granted = sent + ch.send_credit - WINDOW
        self.assertGreater(granted, 0)  # some went through to the socket
        # What the executor wrote to the socket is in its send queue or the app's receive
        # queue (the app read nothing): the credit it gave back can be no more than that.
        # The send queue first: bytes moving on meanwhile are counted twice, never missed.
        tcp, _, _, _ = self.c.open({"op": "proc.spawn", "argv": ["cat", "/proc/net/tcp"]}).collect()
        in_send_queue = sum(int(f[4].split(":")[0], 16) for f in
                            (l.split() for l in tcp.decode().splitlines()[1:])
                            if int(f[2].split(":")[1], 16) == 8015)
        srv.send(b"report\n")
        out, _, _ = srv.read(until=lambda b: re.search(rb"unread \d+\n", b))
        unread = int(re.search(rb"unread (\d+)\n", out)[1])
        self.assertLessEqual(granted, in_send_queue + unread)
        ch.close()
        ch.collect()

    def test_nothing_listening_is_not_found_and_a_bad_port_a_bad_request(self):
        res = self.c.call({"op": "port.connect", "port": 8020})
        self.assertEqual(res["error"], {"code": "not_found", "message": "nothing listens on port 8020"})
        for port in (0, 65536, -1, "80", None, 80.5):
            res = self.c.call({"op": "port.connect", "port": port})
            self.assertEqual(res["error"]["code"], "bad_request", port)

    def test_a_server_bound_to_another_address_is_reached_through_the_listen_table(self):
        for host in ("127.0.0.2", "::1"):
            self.server("hello", 8030 if host == "::1" else 8031, host)
            ch, ev = self.tunnel(8030 if host == "::1" else 8031)
            self.assertEqual(ev, {"event": "connected", "address": host})
            ch.eof()
            out, _, _, close = ch.collect()
            self.assertEqual(out, b"hello from " + host.encode())
            self.assertEqual(close, {"ok": True, "sent": 0, "received": len(out)})

    def test_a_reset_after_the_bytes_is_an_ok_close_that_says_reset(self):
        self.server("reset", 8040)
        ch, _ = self.tunnel(8040)
        out, _, _, close = ch.collect()
        self.assertEqual(out, b"partial")
        self.assertEqual(close["ok"], True)
        self.assertEqual(close["reset"], True)
        self.assertEqual(close["received"], 7)

    def test_a_connection_reset_before_the_executor_saw_it_made_gives_its_bytes(self):
        # The app accepts, sends and resets while the executor is stopped between its connect()
        # and the wake-up that would see the connection made.
        fifos = [os.path.join(self.ex.workspace, n) for n in ("go.fifo", "done.fifo")]
        for f in fifos:
            os.mkfifo(f)
            os.chmod(f, 0o666)
            self.addCleanup(os.unlink, f)
        self.server("late", 8045)
        self.spawn(["python3", "-c", FILLER, "8045"], until=b"in\n")
        ch = self.c.open({"op": "port.connect", "port": 8045})
        self.c.raw(encode(PING, 0, b"p"))  # frames are handled in order: at the PONG, the
        self.c._conn_frame(PONG)  # OPEN was, and its connect() waits on the full backlog
        done = os.open(fifos[1], os.O_RDONLY | os.O_NONBLOCK)
        self.addCleanup(os.close, done)
        pid = host_pid(self.ex)
        os.kill(pid, signal.SIGSTOP)
        try:
            go = os.open(fifos[0], os.O_WRONLY | os.O_NONBLOCK)
            os.write(go, b"go")
            os.close(go)
            self.assertTrue(select.select([done], [], [], 30)[0], "the server did not reset")
            self.assertEqual(os.read(done, 16), b"reset")
        finally:
            os.kill(pid, signal.SIGCONT)
        out, _, events, close = ch.collect()
        self.assertEqual(events, [{"event": "connected", "address": "127.0.0.1"}])
        self.assertEqual(out, b"partial")
        self.assertEqual(close["reset"], True)

    def test_client_close_closes_the_socket_at_once(self):
        srv, _ = self.server("closed", 8050)
        ch, _ = self.tunnel(8050)
        ch.send(b"some bytes")
        ch.close()
        close = ch.collect()[3]
        self.assertEqual(close["ok"], True)
        self.assertEqual(close["cancelled"], True)
        out, _, _ = srv.read(until=lambda b: b"closed" in b)  # the server saw its client go

    def test_tunnels_past_the_cap_are_busy_until_one_closes(self):
        self.server("hold", 8060)
        # OPEN them all at once, then read the answers
        chans = [self.c.open({"op": "port.connect", "port": 8060}) for _ in range(TUNNELS_MAX + 1)]
        for ch in chans[:TUNNELS_MAX]:
            self.assertEqual(ch.next().json(), {"event": "connected", "address": "127.0.0.1"})
        res = chans[TUNNELS_MAX].collect()[3]
        self.assertEqual(res["error"]["code"], "busy")
        self.assertIn(str(TUNNELS_MAX), res["error"]["message"])
        chans[0].close()
        self.assertTrue(chans[0].collect()[3]["cancelled"])
        ch, ev = self.tunnel(8060)  # room for one again
        self.assertEqual(ev["event"], "connected")
        for c in chans[1:TUNNELS_MAX] + [ch]:
            c.close()
        for c in chans[1:TUNNELS_MAX] + [ch]:
            self.assertTrue(c.collect()[3]["cancelled"])

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
