#!/usr/bin/env python3
"""`make soak`: the fault suite, long (issue 15). Runs the rounds of tests/integration's
fault_scenarios/fault_status many times against the real stack (50 gateway kills mid-stream,
20 Redis restarts, the last ones into a LOADING AOF, 10 executor kills, sandboxes dying while
their gateway is down, outer bwraps killed, sandbox records rewritten in Redis), then the other promises' probe tests once (hijack, quota, seccomp: test
files found by name), and prints the counts that must all be 0 (lost, dup, wrong-exit, ...)
with recovery times (p50/max). Exits 1 if any count is not 0, a probe failed or is missing,
or the time budget ran out before every round ran.

  --seed N            replay the random kill points of an earlier soak
  --gw-kills/--redis-restarts/--exec-kills/--status/--down-at-exit N   rounds of each
  --max-minutes M     budget; rounds not run by then count as failures
  --logs DIR          gateway logs of rounds that went wrong (default build/<mode>/soak-logs)
  SOAK_PROBES         space-separated glob patterns of the probe test files
                      (default: DEFAULT_PROBES below; "" for none)
"""
import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INTEGRATION = os.path.join(ROOT, "tests", "integration")
sys.path.insert(0, INTEGRATION)

import fault_audit as fa  # noqa: E402
import fault_scenarios as fs  # noqa: E402
import fault_status as fst  # noqa: E402
from faults import FaultStack  # noqa: E402

# the hijack, unprivileged-uid, seccomp and executor-fd probes are in test_sandbox_security.py;
# the listener, route key and URI probes in test_gateway_listen.py and test_gateway_front.py;
# the API's Redis restarts in test_redis_auth.py; image names in test_oh_build_owners.py;
# what a stack leaves behind in test_leftovers.py
DEFAULT_PROBES = ("test_sandbox_security.py test_*quota*.py test_gateway_listen.py "
                  "test_gateway_front.py test_redis_auth.py test_oh_build_owners.py test_leftovers.py")
LOADING_KEYS = 1000000  # about 2 s of LOADING after each restart


class Group:
    """The rounds of one scenario, on a stack that is replaced after a round left it stuck."""

    def __init__(self, name, deadline, logdir):
        self.name, self.deadline, self.logdir = name, deadline, logdir
        self.rounds, self.not_run, self.errors = [], 0, []
        self.st = None

    def stack(self):
        if self.st is None:
            self.st = FaultStack(pool=1)
        return self.st

    def drop_stack(self):
        st, self.st = self.st, None
        if st is not None:
            try:
                st.stop()
            except Exception as e:  # noqa: BLE001 - report, keep going
                print(f"  {self.name}: stopping the stack failed: {e}", flush=True)

    def run(self, n, one, counts=None):
        """one(stack, i) -> Round, each on a working stack, within the budget, until n rounds
        for which counts(round) holds (every round by default; e.g. "the kill hit while output
        flowed"), at most 2n rounds."""
        done = 0
        try:
            for i in range(2 * n):
                if done >= n:
                    return
                if time.monotonic() > self.deadline:
                    self.not_run = n - done
                    print(f"  {self.name}: time budget spent, {n - done} rounds not run", flush=True)
                    return
                t0 = time.monotonic()
                try:
                    r = one(self.stack(), i)
                except Exception as e:  # noqa: BLE001 - a harness-level failure is a finding too
                    r = fs.Round(self.name)
                    r.counts["stuck"] += 1
                    r.broken = True
                    r.notes.append(f"round raised {type(e).__name__}: {e}")
                    self.errors.append(str(e))
                    self.drop_stack()
                self.rounds.append(r)
                if r.failures() and self.st is not None:
                    self.keep_log(len(self.rounds))
                done += 1 if counts is None or counts(r) or r.failures() else 0
                print(f"  {self.name} {done}/{n} ({time.monotonic() - t0:.1f}s) {r.line()}", flush=True)
                if r.broken and self.st is not None:
                    self.drop_stack()  # a stack that did not recover would fail every later round
            self.not_run = n - done
        finally:
            self.drop_stack()

    def keep_log(self, n):
        """The gateway's log (all its restarts) of a round that went wrong, for diagnosis."""
        os.makedirs(self.logdir, exist_ok=True)
        dst = os.path.join(self.logdir, f"{self.name}-{n}-gateway.log")
        try:
            shutil.copyfile(os.path.join(self.st.tmp, "gateway.log"), dst)
            print(f"  {self.name}: gateway log kept in {dst}", flush=True)
        except OSError as e:
            print(f"  {self.name}: could not keep the gateway log: {e}", flush=True)

    def summary(self):
        total = fa.new_counts()
        times = {}
        flags = {}
        for r in self.rounds:
            fa.add(total, r.counts)
            for k, v in r.times.items():
                if v is not None:
                    times.setdefault(k, []).append(v)
            for k, v in r.flags.items():
                if isinstance(v, (bool, int)):  # bools: rounds where it held; ints: totals
                    flags[k] = flags.get(k, 0) + int(v)
        bad = sum(1 for r in self.rounds if r.failures())
        return {"rounds": len(self.rounds), "bad_rounds": bad, "not_run": self.not_run, "counts": total,
                "times": {k: {"p50": fa.pct(v, 50), "max": max(v), "n": len(v)} for k, v in times.items()},
                "flags": flags}


def run_probes(patterns, mode):
    """Each probe test file once; returns [(pattern, file or None, ok)]."""
    out = []
    for pat in patterns:
        files = sorted(glob.glob(os.path.join(INTEGRATION, pat)))
        if not files:
            print(f"  probe {pat}: MISSING (no such test file in tests/integration)", flush=True)
            out.append((pat, None, False))
            continue
        for f in files:
            mod = os.path.splitext(os.path.basename(f))[0]
            print(f"  probe {mod}: running", flush=True)
            try:
                p = subprocess.run([sys.executable, "-m", "unittest", "-v", mod], cwd=INTEGRATION,
                                   env=dict(os.environ, MODE=mode), timeout=1800)
                ok = p.returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            print(f"  probe {mod}: {'ok' if ok else 'FAILED'}", flush=True)
            out.append((pat, mod, ok))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    ap.add_argument("--gw-kills", type=int, default=50)
    ap.add_argument("--down-at-exit", type=int, default=6)
    ap.add_argument("--redis-restarts", type=int, default=20)
    ap.add_argument("--loading", type=int, default=5, help="of the Redis restarts, the last N into a big AOF")
    ap.add_argument("--exec-kills", type=int, default=10)
    ap.add_argument("--status", type=int, default=3)
    ap.add_argument("--max-minutes", type=float, default=90)
    ap.add_argument("--json", default=None, help="also write the summary here")
    ap.add_argument("--logs", default=os.path.join(ROOT, "build", os.environ.get("MODE", "release"), "soak-logs"),
                    help="where the gateway logs of rounds that went wrong are kept")
    args = ap.parse_args()
    mode = os.environ.get("MODE", "release")
    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.max_minutes * 60
    print(f"soak: seed {args.seed} (--seed {args.seed} replays it), MODE={mode}", flush=True)

    groups = []

    def group(name, n, one, counts=None):
        g = Group(name, deadline, args.logs)
        print(f"\n== {name}: {n} rounds", flush=True)
        g.run(n, one, counts)
        groups.append(g)

    def gw(st, i):  # two of three on `seq 1 300000`, one paced
        cmd = fs.seq_command() if i % 3 != 2 else fs.paced_command()
        return fs.gateway_kill(st, rng, *cmd)
    # a kill counts once it hit a running command (the observation was made after it)
    group("gateway-kill", args.gw_kills, gw, lambda r: r.flags.get("mid_stream"))
    group("gateway-down-at-exit", args.down_at_exit, lambda st, i: fs.gateway_down_while_command_ends(st, rng, i),
          lambda r: r.flags.get("ended_while_down"))

    probe = {}

    def redis(st, i):
        if probe.get("st") is not st:
            probe["st"], probe["sid"], probe["filled"] = st, st.create_session(), False
        if i >= args.redis_restarts - args.loading and not probe["filled"]:
            st.fill_redis(LOADING_KEYS)
            probe["filled"] = True
        r = fs.redis_restart(st, rng, 300, probe["sid"])
        r.flags["big_aof"] = probe["filled"]
        return r
    group("redis-restart", args.redis_restarts, redis)
    group("executor-kill", args.exec_kills, lambda st, i: fst.executor_kill(st, rng))
    group("status-after-restart", args.status, lambda st, i: fst.status_after_restart(st, rng))
    group("outer-bwrap-killed", args.status, lambda st, i: fst.outer_bwrap_killed(st, rng))
    group("hostile-record", args.status, lambda st, i: fst.hostile_sandbox_record(st, rng))

    patterns = os.environ.get("SOAK_PROBES", DEFAULT_PROBES).split()
    print(f"\n== probes: {' '.join(patterns) or '(none)'}", flush=True)
    probes = run_probes(patterns, mode)

    # ---- the report ----
    failed = False
    summary = {"seed": args.seed, "mode": mode, "groups": {}, "probes": []}
    print("\n== soak summary (every count must be 0; bad: rounds with any count)")
    cols = fa.COUNTS
    print(f"{'scenario':22} {'rounds':>6} {'bad':>4} " + " ".join(f"{c:>10}" for c in cols) + "  truncated-bytes")
    for g in groups:
        s = g.summary()
        summary["groups"][g.name] = s
        c = s["counts"]
        print(f"{g.name:22} {s['rounds']:>6} {s['bad_rounds']:>4} " + " ".join(f"{c[k]:>10}" for k in cols)
              + f"  {c['truncated']}")
        if fa.failures(c) or s["not_run"]:
            failed = True
    print("\nrecovery and flags:")
    for g in groups:
        s = g.summary()
        for k, t in s["times"].items():
            print(f"  {g.name:22} {k:16} p50 {t['p50']:.2f}s  max {t['max']:.2f}s  (n={t['n']})")
        for k, v in s["flags"].items():
            print(f"  {g.name:22} {k:16} {v} (over {s['rounds']} rounds)")
        if s["not_run"]:
            print(f"  {g.name:22} NOT RUN          {s['not_run']} rounds (time budget)")
    print("\nprobes:")
    for pat, mod, ok in probes:
        print(f"  {pat:28} {mod or '-':28} {'ok' if ok else ('MISSING' if mod is None else 'FAILED')}")
        summary["probes"].append({"pattern": pat, "file": mod, "ok": ok})
        failed |= not ok
    summary["failed"] = failed
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
        print(f"\nsummary written to {args.json}")
    print(f"\nsoak {'FAILED' if failed else 'passed'} (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
