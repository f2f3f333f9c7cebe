"""Sandboxes are hostile (issue 15): a tenant attacks the host side and other tenants from
inside its own sandbox, through the public WebSocket API of a real stack (Redis, gateway, bwrap
sandboxes, executors). Each test runs the attack and asserts it fails."""
import http.client
import json
import os
import signal
import time
import unittest

from stack import Stack, act, executor_pid, proc_tree, run_action

EXEC_LINK_DEAD_MS = 6000  # gateway/exec_link.h: heartbeats missing this long = link down


def sandbox_of(st, sid):
    return json.loads(st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))


def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


# Run inside a sandbox: each call with harmless arguments, printing "name errno-name" ("0" when
# it went through). Syscall numbers per architecture (python3 has no os.unshare before 3.12).
SECCOMP_PROBE = r"""
import ctypes, errno, os, platform
NR = {"x86_64": dict(unshare=272, setns=308, mount=165, keyctl=250, bpf=321,
                     perf_event_open=298, clone3=435, io_uring_setup=425),
      "aarch64": dict(unshare=97, setns=268, mount=40, keyctl=219, bpf=280,
                      perf_event_open=241, clone3=435, io_uring_setup=425)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(128)
calls = [("unshare", NR["unshare"], 0x10000000), ("setns", NR["setns"], -1, 0),
         ("mount", NR["mount"], b"none", b"/tmp", b"tmpfs", 0, 0),
         ("keyctl", NR["keyctl"], 0, -3, 0), ("bpf", NR["bpf"], 0, buf, 64),
         ("perf_event_open", NR["perf_event_open"], buf, 0, -1, -1, 0),
         ("clone3", NR["clone3"], buf, 64), ("io_uring_setup", NR["io_uring_setup"], 1, buf)]
for name, nr, *args in calls:
    r = libc.syscall(nr, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    print(name, 0 if r >= 0 else errno.errorcode[ctypes.get_errno()])
pid = os.fork()
if pid == 0:
    os._exit(0 if libc.ptrace(0, 0, 0, 0) == 0 else 1)
print("ptrace", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


class SandboxSecurityTest(unittest.TestCase):
    def setUp(self):
        self.st = Stack(pool=0)
        self.socks = []

    def tearDown(self):
        for s in self.socks:
            s.close()
        self.st.stop()

    def session_ws(self, sid, token=None):
        ws = self.st.ws(f"/ws/sessions/{sid}", token)
        self.socks.append(ws)
        return ws

    def act(self, ws, command, timeout=60):
        """Sends a run action; returns ("observation", output text, observation) or ("error",
        message, None) - a disconnected runtime answers either way."""
        try:
            _, out, obs = run_action(ws, command, "x", timeout)
        except RuntimeError as e:
            return "error", json.dumps(e.args[0]), None
        return "observation", out, obs

    def wait_status(self, ws, want, timeout):
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            try:
                m = ws.recv_json(timeout=max(0.1, deadline - time.monotonic()))
            except (TimeoutError, OSError):
                break
            if m.get("type") == "status":
                status = m["status"]
                if status == want:
                    break
        return status

    def test_symlinked_socket_and_stopped_executor_do_not_reach_another_tenant(self):
        a = self.st.create_session(self.st.token(sub="tenant-a"))
        b = self.st.create_session(self.st.token(sub="tenant-b"))
        wa = self.session_ws(a, self.st.token(sub="tenant-a"))
        wb = self.session_ws(b, self.st.token(sub="tenant-b"))
        secret = "B-PRIVATE-" + os.urandom(8).hex()
        _, out, _ = run_action(wb, f"echo {secret} > /workspace/private.txt; echo ok")
        self.assertEqual(out, "ok\n")
        sba, sbb = sandbox_of(self.st, a), sandbox_of(self.st, b)
        # What a tenant would aim at: B's socket on the host (the state dir is no secret to
        # assume), today's path and the path of the layout this attack used to work against.
        targets = [sbb["socket_path"], os.path.join(sbb["dir"], "run", "executor.sock")]
        self.assertTrue(os.path.exists(sbb["socket_path"]))

        # Inside A: put symlinks to B's socket wherever A's socket could be, then stop A's own
        # executor (after the action has answered) so the gateway's heartbeat gives up on it.
        links = "; ".join(
            f"ln -sfn {t} {d}/executor.sock 2>/dev/null"
            for t in targets for d in ("/run/sandpipe", "/workspace", "/tmp"))
        attack = ("mkdir -p /run/sandpipe 2>/dev/null; "
                  "mv /run/sandpipe/executor.sock /run/sandpipe/moved 2>/dev/null; "
                  f"{links}; "
                  "exe=$(pgrep -o -u $(id -u) -f ^/opt/sandpipe/sandpipe-executor); "
                  "( (sleep 0.5; kill -STOP $exe) >/dev/null 2>&1 & ); "
                  "echo stopping $exe")
        kind, out, _ = self.act(wa, attack)
        self.assertEqual(kind, "observation")
        self.assertTrue(out.startswith("stopping "), out)
        host_exe = executor_pid(sba["pid"])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(f"/proc/{host_exe}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "T":
                    break
            time.sleep(0.05)
        else:
            self.fail("A's executor did not stop")

        # Past the heartbeat's death and the gateway's reconnect attempts.
        status = self.wait_status(wa, "ERROR_RUNTIME_DISCONNECTED",
                                  timeout=EXEC_LINK_DEAD_MS / 1000 + 40)

        kind, out, obs = self.act(wa, "touch /workspace/touched-by-a; cat /workspace/private.txt; "
                                      "echo ran-in-a")
        self.assertNotIn(secret, out)
        self.assertNotIn(secret, json.dumps(obs) if obs else "")
        self.assertFalse(os.path.exists(os.path.join(sbb["workspace"], "touched-by-a")))
        # A ends up disconnected (its own executor is stopped), never attached to B's.
        self.assertEqual(status, "ERROR_RUNTIME_DISCONNECTED")
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{a}}}", "status"),
                         "ERROR_RUNTIME_DISCONNECTED")
        # B is untouched and still answers to its own tenant only.
        _, out, _ = run_action(wb, "cat /workspace/private.txt; ls /workspace")
        self.assertEqual(out, f"{secret}\nprivate.txt\n")
        os.kill(host_exe, signal.SIGCONT)

    def test_sandboxes_are_distinct_unprivileged_host_users(self):
        a = self.st.create_session(self.st.token(sub="tenant-a"))
        b = self.st.create_session(self.st.token(sub="tenant-b"))
        wa = self.session_ws(a, self.st.token(sub="tenant-a"))
        run_action(wa, "true")
        sba, sbb = sandbox_of(self.st, a), sandbox_of(self.st, b)
        self.assertNotEqual(sba["uid"], sbb["uid"])
        for sb in (sba, sbb):
            self.assertGreaterEqual(sb["uid"], 1000000)  # far from root and from login users
            pids = proc_tree(sb["pid"])
            self.assertGreaterEqual(len(pids), 3)
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/status") as f:
                        status = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
                except OSError:
                    continue  # ended meanwhile
                # one id of its own block (root inside is its first, the user first + 1000)
                uid, gid = status["Uid"].split(), status["Gid"].split()
                self.assertEqual(len(set(uid)), 1, (pid, uid))
                self.assertEqual(len(set(gid)), 1, (pid, gid))
                self.assertTrue(0 <= int(uid[0]) - sb["uid"] < sb.get("uid_range", 1), (pid, uid))
                self.assertTrue(0 <= int(gid[0]) - sb["gid"] < sb.get("uid_range", 1), (pid, gid))
                self.assertEqual(status["Groups"].strip(), "")
        victim = executor_pid(sbb["pid"])
        # From inside A, B's processes cannot even be named (another pid namespace) ...
        _, out, _ = run_action(wa, f"kill -9 {victim} 2>/dev/null; echo $?; kill -0 $$; echo $?")
        self.assertEqual(out, "1\n0\n")
        # ... and A's uid on the host, outside every namespace, may not signal them either.
        child = os.fork()
        if child == 0:
            code = 1
            try:
                os.setgroups([])
                os.setresgid(sba["gid"], sba["gid"], sba["gid"])
                os.setresuid(sba["uid"], sba["uid"], sba["uid"])
                try:
                    os.kill(victim, signal.SIGKILL)
                except PermissionError:
                    code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(child, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        os.kill(victim, 0)  # still there
        wb = self.session_ws(b, self.st.token(sub="tenant-b"))
        _, out, _ = run_action(wb, "echo b-alive")
        self.assertEqual(out, "b-alive\n")

    def test_seccomp_refuses_namespaces_keyrings_bpf_mounts(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        with open(os.path.join(sandbox_of(self.st, sid)["workspace"], "probe.py"), "w") as f:
            f.write(SECCOMP_PROBE)
        _, out, _ = run_action(ws, "python3 /workspace/probe.py; "
                                   "unshare -U true 2>/dev/null; echo unshare-U $?; "
                                   "grep '^Seccomp:' /proc/self/status | tr -d '\\t'")
        self.assertEqual(out, "unshare EPERM\nsetns EPERM\nmount EPERM\nkeyctl EPERM\n"
                              "bpf EPERM\nperf_event_open EPERM\nclone3 ENOSYS\n"
                              "io_uring_setup ENOSYS\nptrace 0\nunshare-U 1\nSeccomp:2\n")

    def test_etc_is_one_read_only_copy_of_the_curated_files(self):
        """/etc is one read-only bind of a copy the gateway made (sandbox_etc.h), not a bind per
        file (issue 35: those were half of bwrap's start-up): the curated host files with their
        bytes, the generated passwd, hostname and resolv.conf, no shadow, nothing writable."""
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        _, out, _ = run_action(ws, "awk '$5 == \"/etc\" || $5 ~ \"^/etc/\" {print $5}' /proc/self/mountinfo")
        self.assertEqual(out.split(), ["/etc", "/etc/resolv.conf"])  # resolv.conf: its data bind
        _, out, _ = run_action(ws, "cat /etc/hostname; grep -c . /etc/passwd; ls /etc/shadow /etc/ssh 2>&1 | wc -l; "
                                   "sha256sum < /etc/ssl/certs/ca-certificates.crt; head -1 /etc/resolv.conf; "
                                   "touch /etc/x /etc/ssl/x 2>&1 | grep -c 'Read-only'")
        lines = out.splitlines()
        self.assertEqual(lines[0], "sandbox")
        self.assertEqual(lines[1], "3")  # root, user, nobody: the generated passwd
        self.assertEqual(lines[2], "2")  # two "No such file" lines: neither is there
        import hashlib
        with open("/etc/ssl/certs/ca-certificates.crt", "rb") as f:
            self.assertEqual(lines[3].split()[0], hashlib.sha256(f.read()).hexdigest())
        self.assertTrue(lines[4].startswith("nameserver "), out)
        self.assertEqual(lines[5], "2")

    def test_no_host_state_path_in_what_a_sandbox_reads(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        sb = sandbox_of(self.st, sid)
        state = os.path.realpath(self.st.state_dir)
        _, out, _ = run_action(ws, "tr '\\0' ' ' < /proc/1/cmdline; echo; "
                                   "tr '\\0' ' ' < /proc/$(pgrep -o -u $(id -u) -f ^/opt/sandpipe/sandpipe-executor)/cmdline")
        init, exe = out.splitlines()
        self.assertIn("bwrap", init)
        self.assertIn("sandpipe-executor", exe)
        for text in (init, exe):
            self.assertNotIn(state, text)
            self.assertNotIn(sb["id"], text)
        # Every process's command line and environment, as the sandbox sees them.
        _, out, _ = run_action(ws, "cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null "
                                   "| tr '\\0' '\\n' | sort -u")
        self.assertIn("sandpipe-executor", out)
        self.assertNotIn(state, out)
        self.assertNotIn(sb["id"], out)
        # The same processes seen from the host: bwrap and the executor name no host path.
        for pid in proc_tree(sb["pid"]):
            try:
                self.assertNotIn(state, cmdline(pid))
            except OSError:
                pass

    def test_no_fd_of_its_executor_or_init_reaches_the_host(self):
        """From inside: the executor's fds cannot be taken (pidfd_getfd) or read (/proc/N/fd),
        no process's fd names a host path, and what a sandbox writes to any fd it can take (its
        init's stdout) grows no host file: the gateway's log takes a bounded part of it."""
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        state = os.path.realpath(self.st.state_dir)
        with open(os.path.join(sandbox_of(self.st, sid)["workspace"], "grab.py"), "w") as f:
            f.write(PIDFD_PROBE)
        # the executor is the oldest process of the user's with its command line (the sudo
        # broker, root's, has it too); its init's fds are root inside's: taken with sudo
        exe = "$(pgrep -o -u $(id -u) -f ^/opt/sandpipe/sandpipe-executor)"
        _, out, _ = run_action(ws, f"python3 /workspace/grab.py {exe} 1; sudo python3 /workspace/grab.py 1 1 200",
                               timeout=120)
        lines = out.splitlines()
        self.assertEqual(lines[0], "getfd EPERM", out)  # the executor: not dumpable
        self.assertTrue(lines[1].startswith("getfd ok pipe:["), out)  # bwrap's init: a pipe
        self.assertTrue(lines[1].endswith("wrote 200 MiB") or "EPIPE" in lines[1] or "EAGAIN" in lines[1], out)
        _, out, _ = run_action(ws, f"ls -l /proc/*/fd/ 2>&1; ls /proc/{exe}/fd 2>&1 | head -1")
        self.assertNotIn(state, out)
        self.assertIn("Permission denied", out.splitlines()[-1])
        # Nothing under the state directory grew, and the gateway's log took at most its burst
        # plus its rate for the time the writes took (sandbox_log.h), not 200 MiB.
        total = 0
        for root, _, files in os.walk(state):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_blocks * 512  # disks are sparse
                except OSError:
                    pass
        self.assertLess(total, 64 << 20, "the state directory grew")
        log = self.st.gateway_log()
        self.assertLess(len(log), 4 << 20)
        self.assertIn("bytes of its output dropped", log)

    def test_a_fifo_read_through_every_file_path_never_holds_the_executor(self):
        """A FIFO with no writer, read as a file (the editor's view, OpenHands' read action, the
        viewer's and downloads' file.download): each answers, and the session goes on."""
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        run_action(ws, "mkfifo /workspace/pipe.png")
        for i, action in enumerate([
                {"action": "read", "args": {"path": "/workspace/pipe.png"}},
                {"action": "edit", "args": {"path": "/workspace/pipe.png", "command": "view",
                                            "impl_source": "oh_aci"}}]):
            try:
                act(ws, action, f"r{i}", timeout=20)
            except RuntimeError:
                pass  # an error answer is an answer
        c = http.client.HTTPConnection("127.0.0.1", self.st.port, timeout=20)
        c.request("GET", f"/api/v1/sessions/{sid}/files/download?path=/workspace/pipe.png",
                  headers={"Authorization": "Bearer " + self.st.token()})
        r = c.getresponse()
        r.read()
        c.close()
        self.assertGreaterEqual(r.status, 400)  # not a regular file, answered at once
        _, out, _ = run_action(ws, "echo still here", timeout=20)
        self.assertEqual(out, "still here\n")


# Run inside a sandbox: pidfd_getfd(pid, fd); prints "getfd ok <link>" or "getfd <errno>"; with
# a third argument writes that many MiB through the fd taken (a non-blocking pipe may refuse).
PIDFD_PROBE = r"""
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid, fd = int(sys.argv[1]), int(sys.argv[2])
pfd = os.pidfd_open(pid)
got = libc.syscall(438, pfd, fd, 0)
if got < 0:
    print("getfd", errno.errorcode[ctypes.get_errno()])
    sys.exit(0)
line = "getfd ok " + os.readlink(f"/proc/self/fd/{got}")
if len(sys.argv) > 3:
    block, mib = b"x" * (1 << 20), int(sys.argv[3])
    try:
        for _ in range(mib):
            n = 0
            while n < len(block):
                try:
                    n += os.write(got, block[n:])
                except BlockingIOError:
                    pass
        line += f" wrote {mib} MiB"
    except OSError as e:
        line += " " + errno.errorcode[e.errno]
print(line)
"""

if __name__ == "__main__":
    unittest.main()
