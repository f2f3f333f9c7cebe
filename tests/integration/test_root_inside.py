"""Root inside that is nobody outside (issue 30, item 1): a bwrap sandbox's user namespace maps
its own block of 65,536 host uids (root inside = the block's first, the agent's uid 1000 = first
+ 1000), sudo is real (the executor's broker: executor/sudo_broker.h), and an image's root is
writable on the sandbox's own disk (gateway/sandbox/sandbox_root.h).

Run as OpenHands runs a runtime: its V0 start command through the Remote Runtime API's /start,
actions through /runtime/{id}/execute_action. apt-get installs from a Debian repository the test
builds and serves in its own outside world (networld.py, TEST-NET addresses in a namespace of
its own), reached through the gateway's default network (egress).

What root inside must not gain is checked from both sides: from inside (no mounts, no new user
namespaces, no ptrace of the executor, seccomp still on, /proc/sys read-only) and from the host
(the sandbox's processes are its block's uids, the image's directory is unchanged by what root
inside did, two sandboxes' blocks do not meet)."""
import os
import unittest
import uuid

from apistack import ApiStack
from networld import close_world_and_stack, world_and_api_stack
from providers import image_tool, this_build_image
from test_oh_remote_runtime import V0RemoteRuntime

WIDTH = 65536
HELLO = 'echo "hello from the world\'s repository"\n'


class RootInside(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.image = os.environ.get("SANDPIPE_TEST_IMAGE") or this_build_image()
        image = [] if os.environ.get("SANDPIPE_TEST_IMAGE") else ["--image", cls.image]
        def serve(world):
            cls.source = world.add_deb("sp-hello", "1.0", HELLO)
        cls.world, cls.s = world_and_api_stack(serve, image)

    @classmethod
    def tearDownClass(cls):
        close_world_and_stack(cls.world, cls.s)

    def runtime(self):
        v0 = V0RemoteRuntime(self, self.s, self.s.token(sub=f"u-{uuid.uuid4().hex[:8]}"),
                             uuid.uuid4().hex)
        v0.connect()
        self.addCleanup(v0.close)
        return v0

    def sh(self, v0, command, exit_code=0):
        st, obs = v0.execute(command)
        self.assertEqual(st, 200, obs)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], exit_code, (command, obs["content"]))
        return obs["content"]

    def block(self, v0):
        """The host uid root inside is, and how many ids the sandbox maps."""
        inside, outside, count = self.sh(v0, "cat /proc/self/uid_map").split()
        self.assertEqual(inside, "0")
        return int(outside), int(count)

    def test_sudo_is_root_and_chown_reaches_any_id(self):
        v0 = self.runtime()
        self.assertEqual(self.sh(v0, "id -un; id -u; sudo id -un; sudo id -u").split(),
                         ["openhands", "1000", "root", "0"])
        # OpenHands' own setup step, which failed with "Invalid argument" (gid 0 unmapped)
        self.sh(v0, "sudo chown openhands:root /workspace")
        self.assertEqual(self.sh(v0, "stat -c %U:%G /workspace"), "openhands:root")
        self.sh(v0, "touch /workspace/f && sudo chown 4242:4343 /workspace/f")
        self.assertEqual(self.sh(v0, "stat -c %u:%g /workspace/f"), "4242:4343")
        self.sh(v0, "sudo touch /root/x && sudo ls /root")
        self.assertEqual(self.sh(v0, "sudo stat -c %U /root/x"), "root")
        # as any user of the sandbox, with the caller's directory; the status comes back
        self.assertEqual(self.sh(v0, "cd /tmp && sudo -u nobody sh -c 'id -un; pwd'").split(),
                         ["nobody", "/tmp"])
        self.sh(v0, "sudo sh -c 'exit 7'", exit_code=7)
        self.assertIn("command not found", self.sh(v0, "sudo no-such-command 2>&1", exit_code=1))
        # the agent's own processes have no capabilities; root's are Docker's default set
        self.assertEqual(self.sh(v0, "grep CapEff /proc/self/status").split()[1], "0" * 16)
        self.assertEqual(self.sh(v0, "sudo grep CapEff /proc/self/status").split()[1],
                         "00000000a80425fb")
        outside, count = self.block(v0)
        self.assertEqual(count, WIDTH)
        self.assertGreaterEqual(outside, 1 << 30)

    def test_sudo_apt_get_install_from_a_repository(self):
        v0 = self.runtime()
        # the image's own sources name hosts this world has not: the test's repository only
        self.sh(v0, f"echo '{self.source}' | sudo tee /etc/apt/sources.list >/dev/null && "
                    "sudo rm -f /etc/apt/sources.list.d/*")
        out = self.sh(v0, "sudo apt-get update 2>&1")
        self.assertIn("files.world.example", out)
        out = self.sh(v0, "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y sp-hello 2>&1")
        self.assertIn("Setting up sp-hello (1.0)", out)
        self.assertEqual(self.sh(v0, "sp-hello"), "hello from the world's repository")
        self.assertEqual(self.sh(v0, "dpkg-query -W -f '${Status}' sp-hello"), "install ok installed")
        # it went into the sandbox's own layer: the image on the host has no such file
        rootfs = image_tool("resolve", self.image).stdout.strip()
        self.assertFalse(os.path.exists(os.path.join(rootfs, "usr/bin/sp-hello")))

    def test_root_inside_gains_nothing_outside(self):
        v0, other = self.runtime(), self.runtime()
        rootfs = image_tool("resolve", self.image).stdout.strip()
        before = sorted(os.listdir(os.path.join(rootfs, "etc")))
        # what root inside may do to the image's files, it does to its own layer only
        self.sh(v0, "sudo rm -rf /etc/apt && sudo touch /etc/sp-marker && sudo chmod 000 /usr/bin/env")
        self.assertEqual(sorted(os.listdir(os.path.join(rootfs, "etc"))), before)
        self.assertEqual(os.stat(os.path.join(rootfs, "usr/bin/env")).st_mode & 0o777, 0o755)
        self.assertIn("sp-marker", self.sh(v0, "ls /etc"))
        self.assertNotIn("sp-marker", self.sh(other, "ls /etc"))
        self.sh(other, "test -d /etc/apt")
        # the host's files bound in (the executor, its plugins) stay read-only to root inside
        out = self.sh(v0, "sudo sh -c 'echo x >> /opt/sandpipe/sandpipe-executor' 2>&1", exit_code=2)
        self.assertRegex(out, "Permission denied|Read-only file system")  # nobody's, read-only
        # the seccomp filter and the missing capabilities hold for root inside too
        self.assertIn("Operation not permitted", self.sh(v0, "sudo unshare -U true 2>&1", exit_code=1))
        self.assertIn("permission denied", self.sh(v0, "sudo mount -t tmpfs none /mnt 2>&1", exit_code=32))
        self.sh(v0, "sudo sh -c 'echo 1 > /proc/sys/kernel/ns_last_pid' 2>/dev/null", exit_code=1)
        self.sh(v0, "test ! -e /sys/fs/cgroup/cgroup.procs && test ! -e /sys/fs/cgroup/tasks")
        # the executor (not dumpable, no CAP_SYS_PTRACE for root inside): its fds stay its own
        exe = self.sh(v0, "pgrep -u openhands -o -f '^/opt/sandpipe/sandpipe-executor'")
        self.sh(v0, f"sudo readlink /proc/{exe}/fd/0 >/dev/null 2>&1", exit_code=1)
        self.sh(v0, f"sudo cat /proc/{exe}/environ >/dev/null 2>&1", exit_code=1)
        getfd = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                 f"r = libc.syscall(438, os.pidfd_open({exe}), 3, 0); print(r, ctypes.get_errno())")
        self.assertEqual(self.sh(v0, f'sudo python3 -c "{getfd}"'), "-1 1")  # pidfd_getfd: EPERM
        # from the host: every process of the sandbox is one of its block's uids, never root
        outside, count = self.block(v0)
        theirs, _ = self.block(other)
        self.assertGreaterEqual(abs(outside - theirs), WIDTH)  # blocks do not meet
        self.sh(v0, "sudo sleep 300 >/dev/null 2>&1 & sleep 0.3")
        uids = set()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/uid_map") as f:
                    m = f.read().split()
                with open(f"/proc/{pid}/status") as f:
                    uid = int(next(line for line in f if line.startswith("Uid:")).split()[1])
            except (OSError, StopIteration):
                continue
            if m[:3] == ["0", str(outside), str(WIDTH)]:
                uids.add(uid)
        self.assertIn(outside, uids)  # root inside: the block's first uid
        self.assertIn(outside + 1000, uids)  # the agent
        self.assertTrue(all(outside <= u < outside + count for u in uids), uids)
        self.sh(v0, "sudo pkill -x sleep", exit_code=0)


class OneUid(unittest.TestCase):
    """--root-inside off: the sandbox maps one uid, sudo runs the command as that user (nothing
    to become) and an image's root stays read-only."""

    @classmethod
    def setUpClass(cls):
        image = os.environ.get("SANDPIPE_TEST_IMAGE") or this_build_image()
        cls.s = ApiStack(pool=0, extra=["--image", image, "--root-inside", "off"])

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def test_sudo_runs_as_the_user(self):
        v0 = V0RemoteRuntime(self, self.s, self.s.token(sub="u-one"), uuid.uuid4().hex)
        v0.connect()
        self.addCleanup(v0.close)
        st, obs = v0.execute("cat /proc/self/uid_map; sudo id -u; sudo touch /etc/x 2>&1; true")
        self.assertEqual(st, 200, obs)
        lines = obs["content"].splitlines()
        self.assertEqual(lines[0].split()[::2], ["1000", "1"])
        self.assertEqual(lines[1], "1000")
        self.assertIn("Read-only file system", obs["content"])


if __name__ == "__main__":
    unittest.main()
