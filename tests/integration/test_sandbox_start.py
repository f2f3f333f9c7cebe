"""A sandbox's start runs off the gateway's loop (gateway/sandbox_start.c): while one start is
held inside the provider, the gateway still takes connections, starts another sandbox, and that
session answers commands. The hold is a real one the test controls: bwrap on the gateway's PATH
is a wrapper whose first `bwrap --version` (the provider asks it once, during its first start
of a sandbox without root inside) waits on a FIFO until the test writes it."""
import os
import select
import shutil
import stat
import tempfile
import unittest

from stack import Stack, run_action, sandbox_processes

WRAPPER = """#!/bin/sh
# The first --version only: waits until the test writes the FIFO (mkdir is the atomic "first").
if [ "$1" = --version ] && mkdir "{dir}/held" 2>/dev/null; then
    : > "{dir}/reached"
    read line < "{dir}/release"
fi
exec {bwrap} "$@"
"""


class HeldStart(unittest.TestCase):
    """A stack whose first sandbox start waits in the wrapper until release()."""
    pool = 0

    def setUp(self):
        real = shutil.which("bwrap")
        self.assertIsNotNone(real, "bwrap is not installed")
        self.dir = tempfile.mkdtemp(prefix="sp-start-")
        os.chmod(self.dir, 0o755)  # bwrap runs as each sandbox's uid: it must reach the wrapper
        self.fifo = os.path.join(self.dir, "release")
        os.mkfifo(self.fifo, 0o600)
        wrapper = os.path.join(self.dir, "bwrap")
        with open(wrapper, "w") as f:
            f.write(WRAPPER.format(dir=self.dir, bwrap=real))
        os.chmod(wrapper, 0o755)
        # --root-inside off: the provider asks bwrap --version for such sandboxes (the hold)
        self.st = Stack(provider="bwrap", pool=self.pool, extra=["--root-inside", "off"],
                        wrap=["env", f"PATH={self.dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"])

    def release(self):
        """Lets the held `bwrap --version` go on, if it waits (no reader: nothing to do)."""
        try:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
        os.write(fd, b"go\n")
        os.close(fd)
        return True

    def tearDown(self):
        self.release()
        self.st.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def wait_reached(self):
        self.st.eventually(lambda: os.path.exists(os.path.join(self.dir, "reached")),
                           "the first start asked bwrap --version", step=0.05)


class SandboxStartOffLoopTest(HeldStart):
    def test_second_sandbox_starts_and_answers_while_first_start_is_held(self):
        held = self.st.control()
        held.send_json({"id": 1, "method": "session.create", "params": {}})
        self.wait_reached()  # the first start is inside the provider now, and stays there
        # The loop is free: a new connection is served, another sandbox starts beside the held
        # one and its session runs a command.
        c = self.st.control()
        r = self.st.call(c, "session.create", {}, timeout=60)
        self.assertEqual(r.get("type"), "result", r)
        self.assertEqual(r["result"]["status"], "READY")
        second = r["result"]["id"]
        self.assertTrue(os.path.isdir(os.path.join(self.dir, "held")))
        ws = self.st.ws(f"/ws/sessions/{second}")
        _, out, obs = run_action(ws, "echo hi")
        self.assertEqual((out, obs["extras"]["metadata"]["exit_code"]), ("hi\n", 0))
        # Only now does the first start go on; its session comes up as any other.
        self.assertTrue(self.release())
        r = held.recv_json(60)
        self.assertEqual(r.get("type"), "result", r)
        self.assertEqual(r["result"]["status"], "READY")
        first = r["result"]["id"]
        ws1 = self.st.ws(f"/ws/sessions/{first}")
        _, out, _ = run_action(ws1, "echo first")
        self.assertEqual(out, "first\n")
        # Both are the gateway's and their sandboxes' own: distinct uids, each recorded.
        info = [self.st.call(c, "session.get", {"session": s})["result"] for s in (first, second)]
        self.assertEqual([i["status"] for i in info], ["READY", "READY"])
        for s in (first, second):
            self.assertEqual(self.st.redis("HGET", f"sp:session:{{{s}}}", "status"), "READY")
        for w in (ws, ws1, held, c):
            w.close()


class DeleteDuringStartTest(HeldStart):
    """A session deleted while its sandbox is still starting is answered once that sandbox has
    come and gone: after the answer none of its processes runs (a delete's promise), not when
    the session record changed while the sandbox was still on its way."""

    def test_delete_while_starting_is_answered_after_the_sandbox_is_destroyed(self):
        held = self.st.control()
        held.send_json({"id": 1, "method": "session.create", "params": {}})
        self.wait_reached()
        c = self.st.control()
        sessions = self.st.call(c, "session.list")["result"]["sessions"]
        self.assertEqual([s["status"] for s in sessions], ["STARTING_RUNTIME"], sessions)
        sid = sessions[0]["id"]
        c.send_json({"id": 2, "method": "session.delete", "params": {"session": sid}})
        # Its sandbox is still on the way (held in the wrapper): no answer yet.
        self.assertEqual(select.select([c.sock], [], [], 1.0)[0], [], "answered while its sandbox was starting")
        self.assertTrue(self.release())
        r = c.recv_json(60)
        self.assertEqual((r.get("id"), r.get("type")), (2, "result"), r)
        self.assertEqual(r["result"]["status"], "STOPPED")
        procs, _ = sandbox_processes(self.st.state_dir)
        self.assertEqual(procs, set(), "the deleted session's sandbox runs after the delete's answer")
        r = held.recv_json(60)
        self.assertEqual(r.get("type"), "error", r)
        self.assertEqual(self.st.redis("SISMEMBER", f"sp:gateway:{self.st.gateway_id}:sessions", sid), "0")
        for w in (held, c):
            w.close()


class WarmSandboxNotListedTest(HeldStart):
    """A warm sandbox whose listing in Redis fails (Redis gone when it came up) is discarded, not
    kept running for ever where no claim can find it; once Redis is back the pool warms one
    that is listed. The pool's first start is held (the wrapper) while Redis is stopped."""
    pool = 1

    def test_unlisted_warm_sandbox_is_discarded_and_the_pool_warms_a_listed_one(self):
        self.wait_reached()  # the pool's first warm sandbox is starting, held
        self.st.redis_proc.terminate()
        self.st.redis_proc.wait(5)
        self.assertTrue(self.release())
        self.st.eventually(lambda: "was not listed in Redis" in self.st.gateway_log(),
                        "the warm sandbox's failed listing noticed")
        self.st.eventually(lambda: not sandbox_processes(self.st.state_dir)[1],
                        "the unlisted warm sandbox destroyed")
        self.st.start_redis()
        key = f"sp:pool:{{default}}:{self.st.gateway_id}"
        self.st.eventually(lambda: self.st.redis("LLEN", key) == "1", "a warm sandbox listed again")
        self.assertEqual(len(sandbox_processes(self.st.state_dir)[1]), 1, "only the listed one runs")
        c = self.st.control()
        r = self.st.call(c, "session.create", {}, timeout=60)
        self.assertEqual(r.get("type"), "result", r)
        ws = self.st.ws(f"/ws/sessions/{r['result']['id']}")
        _, out, _ = run_action(ws, "echo claimed")
        self.assertEqual(out, "claimed\n")
        ws.close()
        c.close()


class SandboxStartErrorTest(unittest.TestCase):
    """A start that fails on the thread pool answers its client with the provider's error and
    code, as it did when starts ran on the loop: here the gateway has one block of uids, the
    first session holds it, the second's start finds none free."""

    def setUp(self):
        base = 0x40000000 + (os.getpid() % 16000) * 65536
        self.st = Stack(provider="bwrap", pool=0, extra=["--sandbox-uids", f"{base}:65536"])

    def tearDown(self):
        self.st.stop()

    def test_start_without_a_free_uid_block_answers_busy(self):
        c = self.st.control()
        r = self.st.call(c, "session.create", {}, timeout=60)
        self.assertEqual(r.get("type"), "result", r)
        r = self.st.call(c, "session.create", {}, timeout=60)
        self.assertEqual(r.get("type"), "error", r)
        self.assertEqual(r["error"]["code"], "busy", r)
        self.assertIn("no free sandbox uids", r["error"]["message"])
        # and the gateway goes on: the first session answers
        ws = self.st.ws(f"/ws/sessions/{self.st.call(c, 'session.list')['result']['sessions'][0]['id']}")
        _, out, _ = run_action(ws, "echo still")
        self.assertEqual(out, "still\n")
        ws.close()
        c.close()


if __name__ == "__main__":
    unittest.main()
