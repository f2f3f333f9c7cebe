"""What a harness's sandboxes leave on the host once its gateways are gone (issue 29): a stopped
gateway does not stop its sandboxes (they are detached so that a restarted one re-attaches
them), so the harness destroys them by the state directory it made (leftovers.py) and checks
that nothing of them is left: processes, loop devices, mounts, cgroups. Real bwrap sandboxes
with their own disks, real Redis, the real bench/run.sh."""
import os
import shutil
import subprocess
import tempfile
import unittest

import leftovers
from spexec import MODE, ROOT
from stack import Stack, run_action, terminate


def state_dirs_of(root):
    """The state directories (<...>/sandboxes) the processes working under root are in, a
    deleted one included: what a run that forgot its sandboxes left, to destroy it."""
    procs, _ = leftovers.processes(root)
    dirs = set()
    for why in procs.values():
        path = why.split(": cwd ", 1)[-1].split(": root ", 1)[-1].removesuffix(leftovers.DELETED)
        if "/sandboxes/" in path:
            dirs.add(path.split("/sandboxes/")[0] + "/sandboxes")
    return dirs


class ForgetfulStack(Stack):
    """A harness that stops its gateway and forgets its sandboxes (as bench/run.sh did once
    bwrap's command line no longer named the state directory its cleanup matched)."""

    def destroy_sandboxes(self):
        pass


class StackTeardownTest(unittest.TestCase):
    def setUp(self):
        self.st, self.stopped = None, False

    def tearDown(self):
        if self.st is None:
            return
        if not self.stopped:
            try:
                self.st.stop()
            except AssertionError:
                pass
        leftovers.destroy(self.st.state_dir)
        shutil.rmtree(self.st.tmp, ignore_errors=True)

    def make_sandboxes(self, stack_class):
        """A stack (no warm pool: no sandbox half-made when its gateway stops) with two
        sessions, one paused (its processes frozen), each running a process of its own; the
        gateway then stopped, as a harness stops it. Returns the sandboxes' ids."""
        self.st = stack_class(pool=0)
        for paused in (False, True):
            sid = self.st.create_session()
            ws = self.st.ws(f"/ws/sessions/{sid}")
            run_action(ws, "sleep 1000 & echo started")
            ws.close()
            if paused:
                c = self.st.control()
                r = self.st.call(c, "session.pause", {"session": sid})
                c.close()
                self.assertEqual(r["result"]["status"], "PAUSED", r)
        terminate(self.st.gw)
        return leftovers.sandbox_ids(self.st.state_dir)

    def assert_names_every_sandbox(self, ids, found):
        for kind in ("process", "loop device", "mount", "cgroup"):
            self.assertTrue(found[kind], f"no {kind} found: {found}")
        text = "\n".join(x for items in found.values() for x in items)
        for i in ids:
            self.assertIn(f"sandpipe/{i}", text)  # its cgroup, and its processes by their cgroup
            self.assertIn(f"{i}/disk.img", text)  # its loop device

    def test_stop_destroys_what_the_stopped_gateway_left(self):
        ids = self.make_sandboxes(Stack)
        self.assertEqual(len(ids), 2)
        # the gateway is gone, its sandboxes are not
        self.assert_names_every_sandbox(ids, leftovers.by_kind(self.st.state_dir))
        state_dir = self.st.state_dir
        self.stopped = True
        self.st.stop()  # raises if anything is left
        self.assertFalse(os.path.exists(self.st.tmp))
        self.assertEqual(leftovers.left(state_dir, ids), [])

    def test_stop_fails_naming_what_a_forgetful_teardown_left(self):
        ids = self.make_sandboxes(ForgetfulStack)
        self.stopped = True
        with self.assertRaises(AssertionError) as caught:
            self.st.stop()
        msg = str(caught.exception)
        self.assertIn(f"left on the host by the sandboxes of {self.st.state_dir}", msg)
        for i in ids:
            self.assertIn(f"cgroup sandpipe/{i}", msg)
            self.assertIn(f"{i}/disk.img", msg)
        self.assertTrue(os.path.isdir(self.st.state_dir))  # kept, as evidence
        self.assertEqual(leftovers.destroy(self.st.state_dir), [])
        self.assertEqual(leftovers.left(self.st.state_dir, ids), [])


class BenchCleanupTest(unittest.TestCase):
    """bench/run.sh's common part (Redis, a gateway with a warm pool of 2, one session: no
    section) in a temporary directory of ours; the run must end with nothing of it left."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sp-benchtest-")
        os.chmod(self.tmp, 0o711)  # sandboxes run as their own uids below it

    def tearDown(self):
        for d in state_dirs_of(self.tmp):  # what a run that forgot its sandboxes left
            leftovers.destroy(d)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_bench_leaves_no_sandbox(self):
        r = subprocess.run(["bench/run.sh", MODE], cwd=ROOT, capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, TMPDIR=self.tmp, BENCH_SECTIONS="none"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(leftovers.left(self.tmp), [], r.stderr)
        # it had sandboxes to destroy (the pool's and the session's), and did
        self.assertIn("destroying what its sandboxes left", r.stderr)
        self.assertEqual(os.listdir(self.tmp), [])  # its work directory removed


if __name__ == "__main__":
    unittest.main()
