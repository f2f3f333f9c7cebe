"""The fault suite's scenarios (issue 15, parts 2-4), one round each: a round injects one fault
into a FaultStack, follows what a client sees, and returns a Round with the audit's counts
(fault_audit.COUNTS), recovery times and notes. test_faults.py runs a few rounds of each,
tests/soak/soak.py many. A round never raises for a misbehaving stack: it counts."""
import time

import fault_audit as fa
from faults import Follower, submit_run

SEQ_N = 300000
PACED_N = 3000


def seq_command(n=SEQ_N):
    return f"seq 1 {n}", fa.numbered(n)


def paced_command(n=PACED_N, pause="0.002"):
    return f"for i in $(seq 1 {n}); do echo line$i; sleep {pause}; done", fa.numbered(n, "line{}")


class Round:
    def __init__(self, kind):
        self.kind = kind
        self.counts = fa.new_counts()
        self.notes = []
        self.times = {}  # name -> seconds (recovery times)
        self.flags = {}  # name -> bool (e.g. mid_stream: the fault hit while output flowed)
        self.broken = False  # the stack did not recover: later rounds need a fresh one

    def failures(self):
        return fa.failures(self.counts)

    def line(self):
        bits = [self.kind, fa.dumps(self.counts)]
        bits += [f"{k}={v:.2f}s" for k, v in self.times.items() if v is not None]
        bits += [f"{k}={v}" for k, v in self.flags.items()]
        return " ".join(bits) + ("" if not self.notes else " | " + "; ".join(self.notes))


def _out_bytes(f, seq):
    return sum(len(e.get("data", "")) + len(e.get("data_b64", "")) * 3 // 4
               for e in f.events if e.get("type") == "output" and e.get("action") == seq)


def _is_obs(seq):
    return lambda m: m.get("type") == "observation" and m.get("action") == seq


def wait_stored(st, sid, seq, timeout=15):
    """The stored history once it holds the action's observation (writes to Redis are
    asynchronous), or as it is at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            stored = st.stored_events(sid)
        except (OSError, RuntimeError, ConnectionError):
            stored = []
        if any(e and e.get("type") == "observation" and e.get("action") == seq for _, e in stored):
            return stored
        if time.monotonic() > deadline:
            return stored
        time.sleep(0.1)


def replay(st, sid, seq, timeout=20):
    """A fresh client reading the action's events from the start: the re-read view."""
    try:
        f = Follower(st, sid, since=seq - 1)
    except (OSError, ConnectionError):
        return []
    try:
        f.until(_is_obs(seq), timeout, reconnect=False)
    finally:
        f.close()
    return f.events


def finish(r, st, sid, f, seq, command, expected, exit_code, obs_timeout):
    """Reads to the observation (unless already read), then audits the live, stored and
    replayed views."""
    obs = next((e for e in f.events if _is_obs(seq)(e)), None) or f.until(_is_obs(seq), obs_timeout)
    if obs is None:
        r.notes.append(f"no observation within {obs_timeout}s (last seq {f.last_seq})")
    stored = wait_stored(st, sid, seq, 15 if obs else 2)
    again = replay(st, sid, seq, 20) if obs else []
    try:
        rest = st.rest_events(sid, seq - 1)
    except (OSError, ValueError, KeyError):
        rest = None
    c, notes = fa.audit_run(f.events, stored, seq, command, expected, exit_code, replay=again, rest=rest)
    fa.add(r.counts, c)
    r.notes += notes
    f.close()


def gateway_kill(st, rng, command, expected, down_s=0.1, obs_timeout=60):
    """Part 2: kill -9 the gateway at a random point of a command's output, restart it, resume
    with since=; every line once, in order, true exit code and command. Flag mid_stream: the
    observation was not stored yet when the gateway died (the command ran, or its end was in
    flight); time `resume`: from the restart to the first event resumed."""
    r = Round("gateway-kill")
    sid = st.create_session()
    try:
        f = Follower(st, sid, since=0)
        seq = submit_run(f, command, "k")
        if seq is None:
            r.counts["stuck"] += 1
            r.notes.append("action not acknowledged")
            return r
        total = sum(len(x) + 1 for x in expected)
        target = rng.uniform(0.01, 0.35) * total
        f.until(lambda m: _is_obs(seq)(m) or _out_bytes(f, seq) >= target, obs_timeout, reconnect=False)
        done = _is_obs(seq)(st.stored_last(sid) or {})  # already stored: not mid-stream
        st.kill_gateway()
        time.sleep(down_s)
        t0 = time.monotonic()
        st.restart_gateway(0)
        f.drain_closed()
        finish(r, st, sid, f, seq, command, expected, 0, obs_timeout)
        r.flags["mid_stream"] = not done
        r.times["resume"] = f.resumed_at - t0 if f.resumed_at else None
    finally:
        st.delete_session(sid)
    return r


DOWN_AT_EXIT = [("bash -c 'echo start; sleep 1; echo done; exit 3'", ["start", "done"]),
                ("sleep 1; echo done; (exit 3)", ["done"])]


def gateway_down_while_command_ends(st, rng, variant=0, obs_timeout=40):
    """Part 2: the command ends while the gateway is down (killed at a random point of its
    1 s sleep); it must still get its real exit code, output and command text, not "No
    previous running command" and -1."""
    r = Round("gateway-down-at-exit")
    command, expected = DOWN_AT_EXIT[variant % len(DOWN_AT_EXIT)]
    sid = st.create_session()
    try:
        f = Follower(st, sid, since=0)
        seq = submit_run(f, command, "d")
        if seq is None:
            r.counts["stuck"] += 1
            return r
        if expected[0] == "start":
            f.until(lambda m: _out_bytes(f, seq) >= len("start\n") or _is_obs(seq)(m), 20, reconnect=False)
        time.sleep(rng.uniform(0, 0.8))  # inside the 1 s sleep: the command ends while down
        done = _is_obs(seq)(st.stored_last(sid) or {})
        st.kill_gateway()
        time.sleep(1.5)  # the command ends meanwhile
        st.restart_gateway(0)
        f.drain_closed()
        finish(r, st, sid, f, seq, command, expected, 3, obs_timeout)
        r.flags["ended_while_down"] = not done
    finally:
        st.delete_session(sid)
    return r


def recovery_probe(st, probe_sid, token, timeout=60):
    """After a Redis restart: seconds until an action (REST, wait=true) on an existing session
    and a session create (REST) both succeed, how many 503s came meanwhile, and how many
    requests got no answer at all within 20 s although they asked for an answer within 10 s
    (a 504 at worst, docs/api.md): requests lost on the way."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    t_action = t_create = None
    n503 = hung = 0
    body = {"action": "run", "args": {"command": "echo probe"}}
    while time.monotonic() < deadline and (t_action is None or t_create is None):
        try:
            if t_action is None:
                code, res, _ = st.request("POST", f"/api/v1/sessions/{probe_sid}/actions?wait=true&timeout=10",
                                          body, token=token, timeout=20)
                n503 += code == 503
                if code == 200 and res.get("observation", {}).get("content", "").strip() == "probe":
                    t_action = time.monotonic() - t0
            if t_create is None:
                code, res, _ = st.request("POST", "/api/v1/sessions?timeout=10", {}, token=token, timeout=20)
                n503 += code == 503
                if code == 201:
                    t_create = time.monotonic() - t0
                    st.request("DELETE", f"/api/v1/sessions/{res['id']}", token=token, timeout=15)
        except OSError:
            hung += 1  # no answer within 20 s, or the connection refused
        except ValueError:
            pass
        if t_action is None or t_create is None:
            time.sleep(0.2)
    return t_action, t_create, n503, hung


def redis_restart(st, rng, n_lines=300, probe_sid=None, down=(0.5, 1.0), obs_timeout=90, pause="0.01"):
    """Part 3: kill -9 Redis while a command streams (a line every 10 ms: one event each, as in
    the issue's 305-event runs), restart it on its AOF; the stored history ends up whole, and
    actions and creates work again by themselves (recovery time)."""
    r = Round("redis-restart")
    command, expected = paced_command(n_lines, pause)
    token = st.token()
    sid = st.create_session()
    try:
        f = Follower(st, sid, since=0)
        seq = submit_run(f, command, "r")
        if seq is None:
            r.counts["stuck"] += 1
            return r
        total = sum(len(x) + 1 for x in expected)
        target = rng.uniform(0.05, 0.5) * total
        hit = f.until(lambda m: _is_obs(seq)(m) or _out_bytes(f, seq) >= target, obs_timeout, reconnect=False)
        r.flags["mid_stream"] = hit is not None and hit.get("type") != "observation"
        st.kill_redis()
        time.sleep(rng.uniform(*down))
        st.restart_redis()
        r.flags["loading_seen"] = st.redis_loading()
        t_action, t_create, n503, hung = recovery_probe(st, probe_sid, token)
        r.times["recover_action"], r.times["recover_create"] = t_action, t_create
        r.flags["503s"], r.flags["unanswered"] = n503, hung
        if t_action is None or t_create is None:
            r.counts["stuck"] += 1
            r.broken = True
            r.notes.append(f"not recovered within 60s (action {t_action}, create {t_create})")
        elif hung:
            r.counts["stuck"] += 1
            r.notes.append(f"{hung} REST requests never answered (asked for an answer within 10 s)")
        st.wait_redis_ready()
        finish(r, st, sid, f, seq, command, expected, 0, obs_timeout)
    finally:
        st.delete_session(sid)
    return r
