"""What a harness's sandboxes leave on the host once its gateways are gone (issue 29): a stopped
gateway does not stop its sandboxes (they are detached so that a restarted one re-attaches
them), so the harness destroys them by the state directory it made (leftovers.py) and checks
that nothing of them is left: processes, loop devices, mounts, cgroups. Real bwrap sandboxes
with their own disks, real Redis."""
import os
import shutil
import unittest

import leftovers
from stack import Stack, run_action, terminate


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


if __name__ == "__main__":
    unittest.main()
