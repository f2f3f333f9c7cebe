"""Each sandbox's own disk against a real stack (Redis, gateway, bwrap sandboxes, executors, real
loop devices and ext4): a full disk is ENOSPC inside (/workspace, /tmp, /var/tmp) and costs the
host nothing past the limit, /tmp no longer eats the memory limit, the disk survives a gateway
restart and goes with the session; without loop devices the gateway degrades visibly to bounded
tmpfs (docs/operations.md, "Limits"). Needs root and loop devices: without them these tests fail
with the reason, or skip under SANDPIPE_ALLOW_SKIP."""
import json
import os
import time
import unittest

from stack import Stack, mounts_under
from test_gateway_limits import StackCase, exit_code, run, sandbox_of

MiB = 1 << 20
ENOSPC = "No space left on device"


def loops_backed_by(path):
    """/dev/loopN devices whose backing file is path (also once it was deleted)."""
    found = []
    for name in os.listdir("/sys/block"):
        try:
            with open(f"/sys/block/{name}/loop/backing_file") as f:
                if f.read().strip().startswith(path):
                    found.append(name)
        except OSError:
            pass
    return found


def disk_state(sb):
    """(mounted, loop devices, image exists) for a sandbox's disk."""
    img = os.path.join(sb["dir"], "disk.img")
    return bool(mounts_under(os.path.join(sb["dir"], "disk"))), loops_backed_by(img), os.path.exists(img)


def wait_disk_gone(sb, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (disk_state(sb) != (False, [], False) or os.path.exists(sb["dir"])):
        time.sleep(0.05)
    return disk_state(sb), os.path.exists(sb["dir"])


def need_disk(sb):
    if sb.get("disk_bytes"):
        return
    why = f"sandboxes get no disk here: {sb.get('warning') or 'no warning'}"
    if os.environ.get("SANDPIPE_ALLOW_SKIP"):
        raise unittest.SkipTest(why)
    raise AssertionError(why + " (needs root and loop devices; SANDPIPE_ALLOW_SKIP=1 to skip)")


class DiskQuotaTest(StackCase):
    stack_args = {"pool": 1}

    def small_disk_session(self, **params):
        sid = self.st.create_session(params={"disk": 64 * MiB, **params})
        sb = sandbox_of(self.st, sid)
        need_disk(sb)
        return sid, sb

    def test_full_disk_is_enospc_inside_and_the_host_is_untouched(self):
        sid, sb = self.small_disk_session()
        self.assertEqual(sb["disk_bytes"], 64 * MiB)
        self.assertEqual(sb["workspace"], os.path.join(sb["dir"], "disk", "workspace"))
        mounted, loops, image = disk_state(sb)
        self.assertTrue(mounted and image, sb)
        self.assertEqual(len(loops), 1, loops)
        img = os.path.join(sb["dir"], "disk.img")
        ws = self.session_ws(sid)
        _, out, obs = run(ws, "df -B1 --output=size,target /workspace /tmp /var/tmp | tail -n +2")
        for line in out.splitlines():
            size = int(line.split()[0])
            self.assertTrue(48 * MiB < size <= 64 * MiB, out)  # the sandbox's own 64 MiB disk
        for where in ("/workspace", "/tmp", "/var/tmp"):
            _, out, obs = run(ws, f"head -c 100M /dev/zero > {where}/fill", timeout=60)
            self.assertIn(ENOSPC, out, where)
            self.assertNotEqual(exit_code(obs), 0, out)
            # the session lives on and still runs commands
            _, out, obs = run(ws, f"ls {where}")
            self.assertEqual(exit_code(obs), 0, out)
            self.assertIn("fill", out.split())
            # the host: the image holds at most the limit, whatever was written into it
            st = os.stat(img)
            self.assertEqual(st.st_size, 64 * MiB)
            self.assertLessEqual(st.st_blocks * 512, 64 * MiB)
            self.assertGreater(st.st_blocks * 512, 32 * MiB)
            _, out, obs = run(ws, f"rm {where}/fill && sync")
            self.assertEqual(exit_code(obs), 0, out)
        # deleted blocks go back to the host: discarded after the journal commit, in the background
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and os.stat(img).st_blocks * 512 >= 8 * MiB:
            os.sync()
            time.sleep(0.2)
        self.assertLess(os.stat(img).st_blocks * 512, 8 * MiB)
        # the sandbox cannot write anywhere else: / and /dev are read-only
        _, out, obs = run(ws, "touch /x /dev/x /etc/x 2>&1; echo done")
        self.assertEqual(out.count("Read-only file system"), 3, out)
        # deleting the session unmounts the disk, detaches the loop device, removes the image
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.delete", {"session": sid})["result"]["status"], "STOPPED")
        state, dir_left = wait_disk_gone(sb)
        self.assertEqual(state, (False, [], False), "disk left behind" + self.log_tail())
        self.assertFalse(dir_left)

    def test_full_tmp_is_enospc_not_an_oom_kill(self):
        # /tmp used to be a tmpfs charged to the memory limit: filling it killed everything
        # (exit 137). Now it is on the disk: past 128 MiB of memory, then ENOSPC.
        sid, sb = self.small_disk_session(disk=256 * MiB, memory=128 * MiB)
        ws = self.session_ws(sid)
        _, out, obs = run(ws, "head -c 400M /dev/zero > /tmp/fill; echo rc=$?", timeout=120)
        self.assertIn(ENOSPC, out)
        self.assertIn("rc=1", out)
        _, out, obs = run(ws, "ls -s --block-size=M /tmp/fill")
        self.assertEqual(exit_code(obs), 0, out)
        self.assertGreater(int(out.split("M")[0]), 128)  # more than the memory limit, on disk
        # /dev/shm stays a tmpfs, bounded to a quarter of the memory limit
        _, out, obs = run(ws, "head -c 100M /dev/zero > /dev/shm/fill; echo rc=$?; df -B1 --output=size /dev/shm")
        self.assertIn(ENOSPC, out)
        self.assertEqual(int(out.split()[-1]), 32 * MiB)
        _, out, obs = run(ws, "rm -f /tmp/fill /dev/shm/fill; ls /")
        self.assertEqual(exit_code(obs), 0, out)
        self.assertEqual(session_status(self.st, sid), "READY")

    def test_disk_survives_a_gateway_restart_and_goes_with_the_session(self):
        sid, sb = self.small_disk_session()
        ws = self.session_ws(sid)
        _, out, obs = run(ws, "echo kept > /workspace/kept; echo kept > /tmp/kept")
        self.assertEqual(exit_code(obs), 0, out)
        ws.sock.close()
        self.st.kill_gateway()
        self.st.start_gateway()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and session_status(self.st, sid) != "READY":
            time.sleep(0.1)
        self.assertEqual(disk_state(sb)[0], True)  # still mounted, the sandbox's all along
        ws = self.session_ws(sid)
        _, out, obs = run(ws, "cat /workspace/kept /tmp/kept")
        self.assertEqual(out, "kept\nkept\n")
        c = self.ws("/ws/control")
        self.assertEqual(self.st.call(c, "session.delete", {"session": sid})["result"]["status"], "STOPPED")
        state, dir_left = wait_disk_gone(sb)
        self.assertEqual(state, (False, [], False), "disk left behind" + self.log_tail())
        self.assertFalse(dir_left)

    def test_disk_param_is_checked(self):
        c = self.ws("/ws/control")
        for bad in ("64M", 0, 1000, -1, 1 << 50):
            r = self.st.call(c, "session.create", {"disk": bad})
            self.assertEqual(r.get("error", {}).get("code"), "bad_request", (bad, r))
            self.assertIn("disk", r["error"]["message"])


class NoLoopDevicesTest(StackCase):
    """A host without usable loop devices (here: /dev/loop-control masked by /dev/null in the
    gateway's own mount namespace, where it exists at all): sandboxes start without a disk, say so, and /tmp is a
    tmpfs bounded to a quarter of the memory limit instead of the whole of it."""
    stack_args = {"pool": 0, "wrap": ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                       '{ [ ! -e /dev/loop-control ] || mount --bind /dev/null /dev/loop-control; } && exec "$@"',
                                       "sh"]}

    def test_degrades_visibly_to_bounded_tmpfs(self):
        sid = self.st.create_session(params={"memory": 128 * MiB})
        sb = sandbox_of(self.st, sid)
        self.assertEqual(sb["disk_bytes"], 0)
        self.assertIn("no disk limit (loop devices unavailable", sb.get("warning", ""))
        self.assertIn("no disk limit", self.st.gateway_log())
        c = self.ws("/ws/control")
        info = self.st.call(c, "session.get", {"session": sid})["result"]
        self.assertIn("no disk limit", info.get("warning", ""), info)
        self.assertEqual(sb["workspace"], os.path.join(sb["dir"], "workspace"))
        ws = self.session_ws(sid)
        for where in ("/tmp", "/var/tmp", "/dev/shm"):
            _, out, obs = run(ws, f"df -B1 --output=size {where} | tail -1; head -c 100M /dev/zero > {where}/fill")
            self.assertEqual(int(out.split()[0]), 32 * MiB, where)
            self.assertIn(ENOSPC, out, where)
            _, out, obs = run(ws, f"ls {where}; rm {where}/fill")
            self.assertEqual(exit_code(obs), 0, out)
        self.assertEqual(session_status(self.st, sid), "READY")


class MkfsOncePerSizeTest(StackCase):
    """mkfs.ext4 runs once per disk size (issue 35): the images after get the bytes it wrote
    (gateway/sandbox/disk_template.h), each still a filesystem of its own. The gateway's PATH
    finds a mkfs.ext4 first that counts its runs, then runs the real one."""
    stack_args = {"pool": 0}

    @classmethod
    def setUpClass(cls):
        import shutil
        import tempfile
        cls.bin = tempfile.mkdtemp(prefix="sp-mkfs-")
        cls.runs = os.path.join(cls.bin, "runs")
        real = shutil.which("mkfs.ext4", path="/usr/sbin:/sbin:/usr/bin:/bin")
        with open(os.path.join(cls.bin, "mkfs.ext4"), "w") as f:
            f.write(f'#!/bin/sh\necho "$*" >> {cls.runs}\nexec {real} "$@"\n')
        os.chmod(os.path.join(cls.bin, "mkfs.ext4"), 0o755)
        cls.stack_args = {"pool": 0, "wrap": ["env", f"PATH={cls.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}"]}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            import shutil
            shutil.rmtree(cls.bin, ignore_errors=True)

    def mkfs_runs(self):
        try:
            with open(self.runs) as f:
                return len(f.read().splitlines())
        except FileNotFoundError:
            return 0

    def test_mkfs_runs_once_per_size_and_every_disk_is_its_own(self):
        sessions = []
        for i in range(3):
            sid = self.st.create_session(params={"disk": 64 * MiB})
            sb = sandbox_of(self.st, sid)
            need_disk(sb)
            sessions.append((sid, sb))
        self.assertEqual(self.mkfs_runs(), 1)
        for i, (sid, sb) in enumerate(sessions):
            ws = self.session_ws(sid)
            _, out, obs = run(ws, f"df -B1 --output=size /workspace | tail -1; ls -A /workspace; "
                                  f"echo {i} > /workspace/mine; cat /workspace/mine")
            lines = out.split()
            self.assertTrue(48 * MiB < int(lines[0]) <= 64 * MiB, out)
            self.assertEqual(lines[1:], [str(i)], out)  # empty before: nobody else's file
            self.assertEqual(exit_code(obs), 0, out)
        _, out, obs = run(self.session_ws(sessions[0][0]), "cat /workspace/mine; head -c 100M /dev/zero > /workspace/x")
        self.assertIn(ENOSPC, out)
        self.assertEqual(out.splitlines()[0], "0")
        sid = self.st.create_session(params={"disk": 128 * MiB})  # another size: mkfs.ext4 again
        need_disk(sandbox_of(self.st, sid))
        self.assertEqual(self.mkfs_runs(), 2)
        _, out, obs = run(self.session_ws(sid), "df -B1 --output=size /workspace | tail -1")
        self.assertTrue(96 * MiB < int(out) <= 128 * MiB, out)


class NoDiskOptionTest(StackCase):
    """--disk 0: no per-sandbox disk by default (no warning: a choice); the same bounded tmpfs.
    With --disk-max a session may still ask for one."""
    stack_args = {"pool": 0, "extra": ["--disk", "0", "--disk-max", str(64 * MiB)]}

    def test_no_disk_by_choice(self):
        sid = self.st.create_session(params={"memory": 256 * MiB})
        sb = sandbox_of(self.st, sid)
        self.assertEqual(sb["disk_bytes"], 0)
        self.assertNotIn("disk", sb.get("warning", ""))
        self.assertFalse(mounts_under(sb["dir"]))
        ws = self.session_ws(sid)
        _, out, obs = run(ws, "df -B1 --output=size /tmp | tail -1")
        self.assertEqual(int(out), 64 * MiB)
        # a session may still ask for a disk of its own, up to --disk-max
        c = self.ws("/ws/control")
        r = self.st.call(c, "session.create", {"disk": 128 * MiB})
        self.assertEqual(r.get("error", {}).get("code"), "bad_request", r)
        sid2 = self.st.create_session(params={"disk": 32 * MiB})
        sb2 = sandbox_of(self.st, sid2)
        need_disk(sb2)
        self.assertEqual(sb2["disk_bytes"], 32 * MiB)


def session_status(st, sid):
    return st.redis("HGET", f"sp:session:{{{sid}}}", "status")


if __name__ == "__main__":
    unittest.main()
