"""A sandbox's destroy runs off the gateway's loop (gateway/sandbox_destroy.c), is answered once
it is done, and is carried out even when the gateway is killed during it.

The slow destroy is a real one: a sandbox without its own disk (--disk 0) that wrote 100,000
files, which the purge removes one by one (about a second here, seconds on a loaded host);
another session's command is answered well inside that."""
import json
import os
import select
import subprocess
import unittest

from stack import Stack, act, run_action, sandbox_processes

FILES = 100_000


class SlowDestroy(unittest.TestCase):
    def setUp(self):
        self.st = Stack(provider="bwrap", pool=0, extra=["--disk", "0"])
        self.c = self.st.control()

    def tearDown(self):
        self.c.close()
        self.st.stop()

    def session_with_many_files(self):
        """A session whose sandbox wrote FILES files; its id and its directory on the host."""
        sid = self.st.create_session()
        ws = self.st.ws(f"/ws/sessions/{sid}")
        make = (f"python3 -c 'import os; os.mkdir(\"many\"); "
                f"[open(f\"many/{{i}}\", \"w\").close() for i in range({FILES})]' && ls many | wc -l")
        _, out, obs = act(ws, {"action": "run", "args": {"command": make, "blocking": True, "timeout": 300}},
                          timeout=300)
        self.assertEqual(out.strip(), str(FILES), obs)
        ws.close()
        sb = json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))
        d = os.path.join(self.st.state_dir, sb["id"])
        self.assertTrue(os.path.isdir(d), d)
        self.pid = sb["pid"]  # the sandbox's top process on the host
        return sid, sb["id"], d

    def top_gone(self, pid=None):
        try:
            return open(f"/proc/{pid or self.pid}/stat").read().rsplit(")", 1)[1].split()[0] in "ZX"
        except FileNotFoundError:
            return True


class SandboxDestroyOffLoopTest(SlowDestroy):
    def test_other_session_answers_while_a_sandbox_is_destroyed_and_delete_answers_after(self):
        other = self.st.create_session()
        ows = self.st.ws(f"/ws/sessions/{other}")
        _, out, _ = run_action(ows, "echo before")
        self.assertEqual(out, "before\n")
        sid, sbid, d = self.session_with_many_files()
        self.c.send_json({"id": 7, "method": "session.delete", "params": {"session": sid}})
        # The loop is free while the purge runs: the other session's command is answered, and
        # at that moment the deleted sandbox's directory is still being removed and the delete
        # not yet answered (it is answered once the sandbox is gone).
        _, out, _ = run_action(ows, "echo during")
        self.assertEqual(out, "during\n")
        self.assertTrue(os.path.isdir(d), "the destroy was over before another session was served")
        if self.c.buf or select.select([self.c.sock], [], [], 0)[0]:
            early = self.c.recv_json(10)
            self.assertNotEqual(early.get("id"), 7, "the delete was answered before its sandbox was gone")
        r = self.c.recv_json(120)
        self.assertEqual((r.get("id"), r.get("type")), (7, "result"), r)
        self.assertEqual(r["result"]["status"], "STOPPED")
        # Answered: nothing of the sandbox is left, and the session left the gateway's set.
        self.assertFalse(os.path.exists(d), "the sandbox's directory outlived the delete's answer")
        self.assertNotIn(sbid, sandbox_processes(self.st.state_dir)[1])
        self.assertEqual(self.st.redis("SISMEMBER", f"sp:gateway:{self.st.gateway_id}:sessions", sid), "0")
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "STOPPED")
        _, out, _ = run_action(ows, "echo after")
        self.assertEqual(out, "after\n")
        ows.close()


class DestroyInterruptedTest(SlowDestroy):
    def test_gateway_killed_during_a_destroy_finishes_it_after_its_restart(self):
        sid, sbid, d = self.session_with_many_files()
        self.c.send_json({"id": 8, "method": "session.delete", "params": {"session": sid}})
        # The destroy kills the sandbox's processes first, then purges its files: killed there.
        self.st.eventually(self.top_gone, "the sandbox's processes killed", timeout=120)
        self.st.kill_gateway()
        self.assertTrue(os.path.isdir(os.path.join(d, "ctl")),
                        "the destroy was over before the gateway could be killed during it")
        self.c.close()
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "STOPPED")
        self.assertEqual(self.st.redis("SISMEMBER", f"sp:gateway:{self.st.gateway_id}:sessions", sid), "1",
                         "the session left the gateway's set before its sandbox was gone")
        self.st.start_gateway()
        self.c = self.st.control()
        # The restart finds the session STOPPED with its sandbox still there: destroyed again.
        self.st.eventually(lambda: not os.path.exists(d), "the interrupted destroy carried out after the restart", timeout=120)
        self.st.eventually(lambda: self.st.redis("SISMEMBER", f"sp:gateway:{self.st.gateway_id}:sessions", sid) == "0",
                           "the session left the gateway's set", timeout=120)
        self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "STOPPED")
        r = self.st.call(self.c, "session.create", {}, timeout=60)
        self.assertEqual(r["result"]["status"], "READY", r)


class DestroyFailsTest(SlowDestroy):
    def test_a_failed_destroy_is_told_keeps_the_record_and_is_retried_at_the_restart(self):
        """A purge that cannot remove everything (here a filesystem the host mounted inside the
        sandbox's workspace, which the purge never enters) fails the delete with why; the
        session is STOPPED but stays in its gateway's set and keeps its host record (ctl/), so
        the next start of the gateway destroys it for good."""
        sid = self.st.create_session()
        sb = json.loads(self.st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))
        d = os.path.join(self.st.state_dir, sb["id"])
        mnt = os.path.join(d, "workspace", "mnt")
        os.mkdir(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "sp-test", mnt], check=True)
        try:
            r = self.st.call(self.c, "session.delete", {"session": sid}, timeout=60)
            self.assertEqual(r.get("type"), "error", r)
            self.assertEqual(r["error"]["code"], "failed", r)
            self.assertIn("not destroyed", r["error"]["message"])
            self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "STOPPED")
            self.assertEqual(self.st.redis("SISMEMBER", f"sp:gateway:{self.st.gateway_id}:sessions", sid), "1")
            self.assertTrue(os.path.isdir(os.path.join(d, "ctl")), "the host record went with a failed purge")
            self.assertTrue(self.top_gone(sb["pid"]), "the sandbox's processes outlived its delete")
        finally:
            subprocess.run(["umount", mnt], check=True)
        self.st.kill_gateway()
        self.c.close()
        self.st.start_gateway()
        self.c = self.st.control()
        self.st.eventually(lambda: not os.path.exists(d), "the failed destroy carried out at the restart", timeout=120)
        self.st.eventually(lambda: self.st.redis("SISMEMBER", f"sp:gateway:{self.st.gateway_id}:sessions", sid) == "0",
                           "the session left the gateway's set", timeout=120)


if __name__ == "__main__":
    unittest.main()
