"""`sandpipe`, the command-line client, run as a binary against a real stack (Redis, gateway,
bwrap sandboxes): tokens, sessions, run, events, attach through a pty, errors."""
import base64
import hashlib
import json
import os
import pty
import select
import socket
import struct
import subprocess
import threading
import time
import unittest

from apistack import ApiStack
from stack import BUILD, Stack

CLI = os.path.join(BUILD, "sandpipe")


def b64url_json(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(CLI, os.X_OK):
            raise unittest.SkipTest(f"{CLI} not built") if os.environ.get("SANDPIPE_ALLOW_SKIP") else \
                AssertionError(f"{CLI} is not built (make)")
        cls.st = Stack(pool=1)
        cls.env = dict(os.environ, SANDPIPE_URL=f"ws://127.0.0.1:{cls.st.port}",
                       SANDPIPE_TOKEN=cls.st.token())
        cls.sid = cls.cli_ok("sessions", "create").stdout.decode().strip()

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    @classmethod
    def cli(cls, *args, env=None, timeout=60, **kw):
        return subprocess.run([CLI, *args], env=env or cls.env, capture_output=True, timeout=timeout, **kw)

    @classmethod
    def cli_ok(cls, *args, **kw):
        r = cls.cli(*args, **kw)
        if r.returncode != 0:
            raise AssertionError(f"sandpipe {' '.join(args)} exited {r.returncode}: {r.stderr.decode()}")
        return r

    # ---- token ----

    def test_token_minted_locally_is_accepted_by_the_gateway(self):
        r = self.cli_ok("token", "--secret-file", self.st.secret_file, "--sub", "carol", "--role", "user",
                        "--ttl", "600")
        tok = r.stdout.decode().strip()
        claims = b64url_json(tok.split(".")[1])
        self.assertEqual((claims["sub"], claims["role"]), ("carol", "user"))
        self.assertAlmostEqual(claims["exp"] - time.time(), 600, delta=30)
        env = dict(self.env, SANDPIPE_TOKEN=tok)
        sid = self.cli_ok("sessions", "create", env=env).stdout.decode().strip()
        got = json.loads(self.cli_ok("sessions", "get", sid, env=env).stdout)
        self.assertEqual(got["owner"], "carol")
        self.cli_ok("sessions", "rm", sid, env=env)

    def test_token_refuses_a_viewer_without_session_as_usage_error(self):
        r = self.cli("token", "--secret-file", self.st.secret_file, "--role", "viewer")
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"--session", r.stderr)

    # ---- sessions ----

    def test_sessions_create_ls_get_rm_round_trip(self):
        sid = self.cli_ok("sessions", "create", "--env", "CLI_X=42", "--idle-timeout", "300",
                          "--pids", "200").stdout.decode().strip()
        self.assertTrue(sid.startswith("s-"), sid)
        self.assertIn(sid, self.cli_ok("sessions", "ls", "-q").stdout.decode().split())
        self.assertIn(sid, self.cli_ok("sessions").stdout.decode())
        listed = json.loads(self.cli_ok("sessions", "ls", "--json").stdout)
        self.assertIn(sid, [s["id"] for s in listed["sessions"]])
        got = json.loads(self.cli_ok("sessions", "get", sid).stdout)
        self.assertEqual((got["id"], got["status"], got["idle_timeout"]), (sid, "READY", 300))
        self.assertEqual(self.cli_ok("run", sid, "--", "echo $CLI_X").stdout, b"42\n")
        self.cli_ok("sessions", "rm", sid)
        self.assertNotIn(sid, self.cli_ok("sessions", "ls", "-q").stdout.decode().split())
        r = self.cli("sessions", "get", sid)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"not_found", r.stderr)

    # ---- run ----

    def test_run_streams_output_as_it_arrives_and_exits_zero(self):
        p = subprocess.Popen([CLI, "run", self.sid, "--", "for i in 1 2 3; do echo line$i; sleep 0.5; done"],
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t0 = time.monotonic()
        first = p.stdout.readline()
        t_first = time.monotonic() - t0
        rest, err = p.communicate(timeout=30)
        total = time.monotonic() - t0
        self.assertEqual(first + rest, b"line1\nline2\nline3\n", err)
        self.assertEqual(p.returncode, 0)
        self.assertGreater(total, 1.0)
        self.assertLess(t_first, total - 0.7)  # line1 came before the command finished

    def test_run_exits_with_the_commands_exit_code(self):
        r = self.cli("run", self.sid, "--", "bash -c 'echo out; exit 3'")
        self.assertEqual((r.returncode, r.stdout), (3, b"out\n"), r.stderr)

    def test_run_writes_non_utf8_output_byte_exact(self):
        r = self.cli_ok("run", self.sid, "--", r"printf 'a\xff\xfe\x00b\x80\ncaf\xc3\xa9'")
        self.assertEqual(r.stdout, b"a\xff\xfe\x00b\x80\ncaf\xc3\xa9")

    def test_run_past_its_timeout_exits_124_and_leaves_the_session_usable(self):
        t0 = time.monotonic()
        r = self.cli("run", "--timeout", "1", self.sid, "--", "echo started; sleep 30")
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertIn(b"started", r.stdout)
        self.assertIn(b"timeout", r.stderr)
        self.assertLess(time.monotonic() - t0, 15)
        self.assertEqual(self.cli_ok("run", self.sid, "--", "echo again").stdout, b"again\n")

    def test_run_new_uses_a_fresh_session_and_removes_it(self):
        before = set(self.cli_ok("sessions", "ls", "-q").stdout.decode().split())
        r = self.cli_ok("run", "--new", "--", "echo fresh")
        self.assertEqual(r.stdout, b"fresh\n")
        after = set(self.cli_ok("sessions", "ls", "-q").stdout.decode().split())
        self.assertEqual(after, before)

    # ---- events ----

    def test_events_since_0_lists_the_action_output_and_observation_of_a_run(self):
        self.cli_ok("run", self.sid, "--", "echo events-marker")
        t0 = time.monotonic()
        r = self.cli_ok("events", self.sid, "--since", "0")
        self.assertLess(time.monotonic() - t0, 5)  # stops once nothing new arrives
        events = [json.loads(line) for line in r.stdout.decode().splitlines()]
        seqs = [e["seq"] for e in events]
        self.assertEqual(seqs, sorted(seqs))
        self.assertEqual(seqs[0], 1)
        action = [e for e in events if e["type"] == "action"
                  and e["action"]["args"]["command"] == "echo events-marker"][-1]
        mine = [e for e in events if e.get("action") == action["seq"]]
        self.assertIn({"type": "output", "data": "events-marker\n"},
                      [{"type": e["type"], "data": e.get("data")} for e in mine])
        obs = [e for e in mine if e["type"] == "observation"]
        self.assertEqual(obs[0]["observation"]["extras"]["metadata"]["exit_code"], 0)
        # --since skips what came before
        later = self.cli_ok("events", self.sid, "--since", str(action["seq"])).stdout.decode().splitlines()
        self.assertTrue(all(json.loads(x)["seq"] > action["seq"] for x in later))

    # ---- attach ----

    def test_attach_through_a_pty_runs_the_shell_and_exits_with_its_code(self):
        pid, fd = pty.fork()
        if pid == 0:
            os.environ.update(self.env)
            os.execv(CLI, [CLI, "attach", self.sid])
        out = b""

        def read_until(pattern, timeout=15):
            nonlocal out
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if select.select([fd], [], [], 0.1)[0]:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        return False
                    if not chunk:
                        return False
                    out += chunk
                    if pattern in out:
                        return True
            return False

        try:
            os.write(fd, b"echo hi-$((40+2))\r")
            self.assertTrue(read_until(b"hi-42"), out)
            os.write(fd, b"exit 7\r")
            read_until(b"\0never", timeout=10)  # until the client closes the pty
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.05)
            else:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                self.fail(f"attach did not exit: {out[-300:]!r}")
            self.assertEqual(os.waitstatus_to_exitcode(status), 7, out[-300:])
        finally:
            os.close(fd)

    # ---- errors ----

    def test_a_plain_ws_url_does_not_set_up_tls(self):
        """OpenSSL's setup (its configuration and the system's CA store, ~25 ms of CPU, most of a
        short command's time) happens for wss:// and https:// only (test_api_tls.py runs those)."""
        # LeakSanitizer cannot run under ptrace: an ASan build is traced without it
        asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))
        r = subprocess.run(["strace", "-f", "-e", "trace=open,openat", CLI, "sessions", "ls"],
                           env=dict(self.env, ASAN_OPTIONS=asan), capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        opened = [l for l in r.stderr.decode(errors="replace").splitlines() if "open" in l]
        self.assertTrue(any("libssl" in l for l in opened), opened[:20])  # strace saw the opens
        self.assertEqual([l for l in opened if "openssl.cnf" in l or "/etc/ssl/certs" in l], [])

    def test_bad_token_exits_1_with_a_clear_message(self):
        for tok, words in (("not-a-token", b"unauthorized"), (self.st.token(exp_in=-60), b"expired")):
            env = dict(self.env, SANDPIPE_TOKEN=tok)
            for args in (("sessions",), ("run", self.sid, "--", "true"), ("events", self.sid)):
                r = self.cli(*args, env=env)
                self.assertEqual(r.returncode, 1, (args, r.stderr))
                self.assertIn(words, r.stderr.lower(), args)
                self.assertTrue(r.stderr.startswith(b"sandpipe"), r.stderr)

    def test_unreachable_gateway_exits_1(self):
        r = self.cli("--url", "ws://127.0.0.1:1", "sessions")
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"cannot connect", r.stderr)

    def test_usage_errors_exit_2(self):
        for args in (("nope",), ("run",), ("run", self.sid), ("sessions", "create", "--pids", "x"),
                     ("events",), ("attach",), ("--url", "ftp://x", "sessions", "bogus")):
            r = self.cli(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertTrue(r.stderr, args)

    def test_cp_usage_errors_exit_2(self):
        for args in (("cp",), ("cp", "a.txt"), ("cp", "a.txt", "b.txt"),
                     ("cp", f"{self.sid}:a", f"{self.sid}:b"), ("cp", "a.txt", "bad id!:x"),
                     ("cp", "a.txt", f"{self.sid}:"), ("cp", "--mode", "rwx", "a", f"{self.sid}:a"),
                     ("cp", "-", f"{self.sid}:dir/")):
            r = self.cli(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertTrue(r.stderr, args)

    def test_cp_straight_to_the_sessions_own_gateway_works(self):
        """The session's gateway serves the file routes itself (what nginx routes to it)."""
        src = os.path.join(self.st.tmp, "cp-src.txt")
        with open(src, "wb") as f:
            f.write(b"x\0y")
        r = self.cli("cp", src, f"{self.sid}:x.txt")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.cli("cp", f"{self.sid}:x.txt", "-")
        self.assertEqual((r.returncode, r.stdout), (0, b"x\0y"), r.stderr)


class CliCpTest(unittest.TestCase):
    """`sandpipe cp` through nginx and the REST API (its streamed file routes)."""

    @classmethod
    def setUpClass(cls):
        if not os.access(CLI, os.X_OK):
            raise AssertionError(f"{CLI} is not built (make)")
        cls.st = ApiStack(pool=1)
        cls.token = cls.st.token(sub="alice", role="user")
        cls.env = dict(os.environ, SANDPIPE_URL=f"http://127.0.0.1:{cls.st.http_port}",
                       SANDPIPE_TOKEN=cls.token)
        cls.sid = cls.st.api_create_session(cls.token)
        cls.dir = os.path.join(cls.st.tmp, "cp")
        os.mkdir(cls.dir)

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def cp(self, *args, ok=True, **kw):
        r = subprocess.run([CLI, "cp", *args], env=self.env, capture_output=True, timeout=120, **kw)
        if ok and r.returncode != 0:
            self.fail(f"sandpipe cp {' '.join(args)} exited {r.returncode}: {r.stderr.decode()}")
        return r

    def local(self, name, data=None):
        p = os.path.join(self.dir, name)
        if data is not None:
            with open(p, "wb") as f:
                f.write(data)
        return p

    def read(self, name):
        with open(self.local(name), "rb") as f:
            return f.read()

    def test_a_binary_file_both_ways(self):
        data = os.urandom(9 << 20) + bytes(range(256))
        self.cp(self.local("up.bin", data), f"{self.sid}:cp/up.bin")
        self.cp(f"{self.sid}:cp/up.bin", self.local("down.bin"))
        self.assertEqual(hashlib.sha256(self.read("down.bin")).digest(), hashlib.sha256(data).digest())
        self.assertEqual([n for n in os.listdir(self.dir) if "sp-part" in n], [])

    def test_stdin_and_stdout(self):
        data = bytes(range(256)) * 4096
        self.cp("-", f"{self.sid}:cp/stdin.bin", input=data)
        r = self.cp(f"{self.sid}:cp/stdin.bin", "-")
        self.assertEqual(r.stdout, data)

    def test_directories_keep_the_file_name_and_mode_applies(self):
        self.cp("--mode", "0755", self.local("tool.sh", b"#!/bin/sh\necho hi\n"), f"{self.sid}:cp/bin/")
        st, s, _ = self.st.request("GET", f"/api/v1/sessions/{self.sid}/files/stat?path=cp/bin/tool.sh",
                                   token=self.token)
        self.assertEqual((st, s.get("mode")), (200, "0755"), s)
        os.mkdir(self.local("into"))
        self.cp(f"{self.sid}:cp/bin/tool.sh", self.local("into"))
        self.assertEqual(self.read("into/tool.sh"), b"#!/bin/sh\necho hi\n")

    def test_errors_exit_1_with_the_api_message_and_leave_no_file(self):
        r = self.cp(f"{self.sid}:cp/missing.bin", self.local("missing.bin"), ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"not_found", r.stderr)
        self.assertFalse(os.path.exists(self.local("missing.bin")))
        self.assertEqual([n for n in os.listdir(self.dir) if "missing" in n], [])
        r = self.cp(self.local("e.txt", b"e"), f"{self.sid}:../../etc/e.txt", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"permission_denied", r.stderr)  # the sandbox's /etc is read-only
        r = self.cp(self.local("e.txt"), "s-nosuchsession:e.txt", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"not_found", r.stderr)
        r = self.cp(self.local("nope-local.txt"), f"{self.sid}:e.txt", ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"No such file", r.stderr)
        env = dict(self.env, SANDPIPE_TOKEN="garbage")
        r = subprocess.run([CLI, "cp", self.local("e.txt"), f"{self.sid}:e.txt"], env=env,
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"unauthorized", r.stderr)

    def test_a_failed_download_does_not_clobber_an_existing_file(self):
        self.local("keep.txt", b"precious")
        r = self.cp(f"{self.sid}:cp/nothing-here", self.local("keep.txt"), ok=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(self.read("keep.txt"), b"precious")



class FakeServer:
    """Accepts WebSocket upgrades on a free port and answers every connection with the given
    raw frames (bytes, already encoded), then a close frame."""

    def __init__(self, frames):
        self.frames = frames
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @staticmethod
    def frame(payload, opcode=1):
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([n])
        elif n < 65536:
            head += bytes([126]) + struct.pack(">H", n)
        else:
            head += bytes([127]) + struct.pack(">Q", n)
        return head + payload

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                req = b""
                while b"\r\n\r\n" not in req:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    req += chunk
                key = [l.split(b":", 1)[1].strip() for l in req.split(b"\r\n")
                       if l.lower().startswith(b"sec-websocket-key:")]
                if not key:
                    continue
                accept = base64.b64encode(hashlib.sha1(key[0] + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
                try:
                    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                 b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
                    for f in self.frames:
                        conn.sendall(f)
                        time.sleep(0.05)
                    conn.sendall(self.frame(struct.pack(">H", 1000), opcode=8))
                    while conn.recv(4096):
                        pass
                except OSError:
                    pass

    def close(self):
        self.sock.close()


class CliBadServerTest(unittest.TestCase):
    """Whatever a server sends, the client reports an error (exit 1) and does not crash."""

    def run_against(self, frames, *args, codes=(1,)):
        srv = FakeServer(frames)
        try:
            env = dict(os.environ, SANDPIPE_URL=f"ws://127.0.0.1:{srv.port}", SANDPIPE_TOKEN="t")
            r = subprocess.run([CLI, *args], env=env, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        finally:
            srv.close()
        self.assertNotIn(b"Sanitizer", r.stderr)
        self.assertNotIn(b"runtime error", r.stderr)
        self.assertIn(r.returncode, codes, (args, r.stderr))
        if r.returncode:
            self.assertTrue(r.stderr.startswith(b"sandpipe"), r.stderr)
        return r

    def test_control_answers_that_are_not_json_objects(self):
        F = FakeServer.frame
        self.run_against([F(b"\xffnot json")], "sessions")
        self.run_against([F(b"[1,2]")], "sessions", "get", "s-1")
        self.run_against([F(b'{"type":"result","id":1,"result":"str"}')], "sessions", "create")
        self.run_against([F(b"")], "sessions", "rm", "s-1")
        self.run_against([F(b'{"type":"error","error":7}')], "sessions")

    def test_session_streams_with_wrong_types(self):
        F = FakeServer.frame
        self.run_against([F(b"\x00\x01", opcode=2), F(b'{"type":"ack","id":"sandpipe-run","seq":"x"}'),
                          F(b'{"type":"output","action":"x","data_b64":"!!"}'),
                          F(b'{"type":"observation","action":null}')], "run", "s-1", "--", "true")
        self.run_against([F(b'{"type":"ack","id":"sandpipe-run","seq":4}'),
                          F(b'{"type":"output","action":4,"data_b64":"not base64!"}')], "run", "s-1", "--", "true")
        self.run_against([F(b'{"type":"ack","id":"sandpipe-run","seq":4}'),
                          F(b'{"type":"observation","action":4,"observation":{"observation":"run","extras":7}}')],
                         "run", "s-1", "--", "true")
        self.run_against([F(b"[]")], "events", "s-1")
        self.run_against([F(b"\x01\x02\x03", opcode=2), F(b"nope")], "attach", "s-1")

    def test_frame_claiming_a_huge_length(self):
        huge = bytes([0x81, 127]) + struct.pack(">Q", 1 << 62) + b"x" * 1000
        self.run_against([huge], "sessions")
        # events: the first bytes of a message that never completes, then silence: nothing to print
        self.run_against([huge], "events", "s-1", codes=(0, 1))


if __name__ == "__main__":
    unittest.main()
