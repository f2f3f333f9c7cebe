"""The fault suite, short (issue 15): a few kills of each kind against the whole real stack.
`make soak` (tests/soak/soak.py) runs the same rounds many times. Each test counts what went
wrong over its rounds (fault_audit.COUNTS) and fails unless every count is 0; the message
lists every round. FAULT_SEED=<n> replays the random kill points of a run."""
import os
import random
import sys
import time
import unittest

import fault_audit as fa
import fault_scenarios as fs
import fault_status as fst
from faults import FaultStack

SEED = int(os.environ.get("FAULT_SEED", random.randrange(1 << 30)))


class FaultCase(unittest.TestCase):
    def setUp(self):
        # a stack of its own per test: a fault one test leaves behind cannot fail the next
        self.st = FaultStack(pool=1)
        self.addCleanup(self.st.stop)
        self.rng = random.Random(f"{SEED}:{self.id()}")

    def check(self, rounds, hit=None):
        """All rounds' counts must be 0; prints each round (the figures a failure is read by).
        hit: a flag at least one round must have raised, or the fault missed what it tests."""
        total = fa.new_counts()
        for r in rounds:
            fa.add(total, r.counts)
            print(f"  [{self.id().rsplit('.', 1)[-1]}] {r.line()}", file=sys.stderr)
        bad = fa.failures(total)
        self.assertEqual(bad, {}, f"FAULT_SEED={SEED}: " + "\n".join(r.line() for r in rounds))
        if hit:
            self.assertTrue(any(r.flags.get(hit) for r in rounds),
                            f"FAULT_SEED={SEED}: no round had {hit}: the fault missed its moment")


    def rounds(self, n, one, hit):
        """Rounds of one() until n of them raised the flag `hit` (the kill hit a running
        command: a fast one may end before the reader reaches the kill point), at most 2n."""
        out = []
        while len(out) < 2 * n and sum(1 for r in out if r.flags.get(hit)) < n:
            out.append(one())
        return out


class GatewayKillTest(FaultCase):
    def test_kill9_mid_seq_output_loses_nothing(self):
        self.check(self.rounds(3, lambda: fs.gateway_kill(self.st, self.rng, *fs.seq_command()), "mid_stream"),
                   "mid_stream")

    def test_kill9_mid_paced_output_loses_nothing(self):
        self.check(self.rounds(2, lambda: fs.gateway_kill(self.st, self.rng, *fs.paced_command(800)), "mid_stream"),
                   "mid_stream")

    def test_command_ending_while_gateway_down_keeps_exit_code_and_command(self):
        self.check([fs.gateway_down_while_command_ends(self.st, self.rng, v) for v in (0, 1)], "ended_while_down")


class RedisRestartTest(FaultCase):
    def test_redis_kill9_keeps_history_and_gateway_recovers(self):
        probe = self.st.create_session()
        self.check([fs.redis_restart(self.st, self.rng, 300, probe) for _ in range(2)])

    def test_create_while_redis_is_down_is_refused_with_why(self):
        self.st.kill_redis()
        c = self.st.control()
        r = self.st.call(c, "session.create", timeout=20)  # answered, not left waiting
        c.close()
        self.assertEqual(r.get("type"), "error", r)
        self.assertIn("Redis", r["error"]["message"])
        self.st.restart_redis()
        self.assertTrue(self.st.wait_redis_ready())
        deadline = time.monotonic() + 30  # the gateway reconnects, then creates again
        while True:
            try:
                self.assertTrue(self.st.create_session())
                break
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def test_redis_restart_still_loading_big_aof(self):
        probe = self.st.create_session()
        self.st.fill_redis(600000)  # about a second of LOADING after each restart
        self.check([fs.redis_restart(self.st, self.rng, 300, probe)], "loading_seen")


class ExecutorKillTest(FaultCase):
    def test_executor_kill9_status_is_one_truth(self):
        self.check([fst.executor_kill(self.st, self.rng) for _ in range(2)])


class StatusAfterRestartTest(FaultCase):
    def test_sandbox_dead_while_gateway_down_status_true_once(self):
        self.check([fst.status_after_restart(self.st, self.rng)])

    def test_outer_bwrap_killed_sandbox_still_ready_after_restart(self):
        self.check([fst.outer_bwrap_killed(self.st, self.rng)], hit="killed")


class HostileRecordTest(FaultCase):
    def test_redis_record_cannot_move_a_session_to_another_sandbox_or_host_dir(self):
        self.check([fst.hostile_sandbox_record(self.st, self.rng)], hit="rewritten")


if __name__ == "__main__":
    unittest.main()
