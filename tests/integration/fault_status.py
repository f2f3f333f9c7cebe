"""The fault suite's status scenarios (issue 15, part 4 and the executor kills): after a fault a
session's status must be the truth, the same everywhere: the last status event (what WebSocket
clients see), the hash `sp:session:{id}`, REST GET /api/v1/sessions/{id} and /runtime/{id}/alive;
READY exactly when actions run."""
import json
import os
import signal
import time

from fault_scenarios import Round, _is_obs, _out_bytes, paced_command
from faults import Follower, submit_run, ws_probe


def statuses(st, sid, token):
    """What each place says: hash status, REST status, /runtime/alive ("ok" or why not)."""
    try:
        out = {"hash": st.session_hash(sid).get("status")}
    except (OSError, RuntimeError, ConnectionError) as e:
        out = {"hash": f"redis: {e}"}
    try:
        code, body, _ = st.request("GET", f"/api/v1/sessions/{sid}", token=token, timeout=15)
        out["rest"] = body.get("status") if code == 200 and isinstance(body, dict) else f"HTTP {code}"
        code, body, _ = st.request("GET", f"/runtime/{sid}/alive", timeout=15)
        out["alive"] = body.get("status") if code == 200 and isinstance(body, dict) else f"HTTP {code}"
    except OSError as e:
        out.setdefault("rest", f"no answer: {e}")
        out.setdefault("alive", f"no answer: {e}")
    return out


def try_action(st, sid, timeout=20):
    """A WebSocket `run` on the session: "ok" when it ran (exit 0), else what refused it."""
    try:
        f = Follower(st, sid)
    except (OSError, ConnectionError) as e:
        return f"no stream: {e}"
    try:
        f.send({"type": "action", "id": "t", "action": {"action": "run", "args": {"command": "echo usable"}}})
        m = f.until(lambda m: m.get("id") == "t" and m.get("type") in ("ack", "error"), timeout, reconnect=False)
        if not m:
            return "no answer"
        if m["type"] == "error":
            return m["error"].get("code", "error")
        obs = f.until(_is_obs(m["seq"]), timeout, reconnect=False)
        if obs and obs["observation"].get("extras", {}).get("metadata", {}).get("exit_code") == 0:
            return "ok"
        return "failed: " + (str(obs["observation"].get("content", ""))[:80] if obs else "no observation")
    finally:
        f.close()


def lie(places, action):
    """Why these answers are not one truth, or None."""
    ready = sorted(k for k, v in places.items() if v in ("READY", "ok"))
    if action == "ok" and len(ready) < len(places):
        return f"actions run but not every place says READY: {places}"
    if action != "ok" and ready:
        return f"action refused ({action}) but {ready} say READY: {places}"
    if len({places["hash"], places["rest"], places["ws"]}) > 1:
        return f"places disagree: {places}"
    return None


def last_status(st, sid):
    events = [e for _, e in st.stored_events(sid) if e and e.get("type") == "status"]
    return events[-1]["status"] if events else None


def judge(r, st, sid, token, settle=10):
    """Asks every place (and tries an action) until they agree or `settle` seconds passed: a
    status may lag a fault by a moment, never stay wrong. Counts a lie if they never agree."""
    deadline = time.monotonic() + settle
    while True:
        places = statuses(st, sid, token)
        places["ws"] = last_status(st, sid)
        action = try_action(st, sid)
        why = lie(places, action)
        if why is None or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    r.flags["status"] = f"{places} action={action}"
    if why:
        r.counts["lies"] += 1
        r.notes.append(why)


def executor_kill(st, rng, obs_timeout=40, settle=30):
    """kill -9 the executor inside a sandbox (found under its bwrap in the host's /proc) while
    a command streams: the action ends with an observation (not a client waiting forever), and
    the session's status is one truth everywhere (ERROR_RUNTIME_DISCONNECTED, or recovered)."""
    r = Round("executor-kill")
    token = st.token()
    sid = st.create_session()
    command, expected = paced_command(1000, "0.005")
    try:
        f = Follower(st, sid, since=0)
        seq = submit_run(f, command, "e")
        if seq is None:
            r.counts["stuck"] += 1
            return r
        target = rng.uniform(0.05, 0.5) * sum(len(x) + 1 for x in expected)
        f.until(lambda m: _out_bytes(f, seq) >= target or _is_obs(seq)(m), obs_timeout, reconnect=False)
        pid = st.sandbox_executor_pid(sid)
        if pid is None:
            r.counts["stuck"] += 1
            r.notes.append("executor process not found")
            return r
        t0 = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        if f.until(_is_obs(seq), obs_timeout) is None:
            r.counts["stuck"] += 1
            r.notes.append("the running action never got an observation")
        changed = f.until(lambda m: m.get("type") == "status" and m.get("status") != "READY", settle)
        r.times["status_change"] = time.monotonic() - t0 if changed else None
        f.close()
        judge(r, st, sid, token)
    finally:
        st.delete_session(sid)
    return r


def status_after_restart(st, rng, restarts=2):
    """A sandbox dies while its gateway is down: after each restart REST, hash and /alive say
    the session is not usable, and exactly one status event says so in all."""
    r = Round("status-after-restart")
    token = st.token()
    sid = st.create_session()
    try:
        before = len(st.stored_events(sid))
        st.kill_gateway()
        if not st.kill_sandbox(sid):
            r.notes.append("sandbox processes survived SIGKILL")
        for n in range(1, restarts + 1):
            st.restart_gateway(rng.uniform(0, 0.3))
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not (ws_probe(st) and st.gateway_alive_key()):
                time.sleep(0.1)
            judge(r, st, sid, token)
            added = [e["status"] for _, e in st.stored_events(sid)[before:] if e and e.get("type") == "status"]
            r.flags[f"restart{n}"] = added
            if len(added) != 1:
                r.counts["extra_status"] = max(r.counts["extra_status"], abs(len(added) - 1))
                r.notes.append(f"after restart {n}: {len(added)} status events {added}")
    finally:
        st.delete_session(sid)
    return r


def _restart_and_settle(st, rng):
    st.restart_gateway(rng.uniform(0, 0.3))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (ws_probe(st) and st.gateway_alive_key()):
        time.sleep(0.1)


def outer_bwrap_killed(st, rng):
    """The sandbox's top process (the outer bwrap, the pid its record names) is killed, its
    processes inside keep running; the gateway restarts: the session is READY and runs actions
    (liveness is its executor answering, not that pid), one truth everywhere, and no status event
    says otherwise."""
    r = Round("outer-bwrap-killed")
    token = st.token()
    sid = st.create_session()
    try:
        before = len(st.stored_events(sid))
        top = st.sandbox_pid(sid)
        executor = st.sandbox_executor_pid(sid)
        os.kill(top, signal.SIGKILL)
        r.flags["killed"] = executor is not None and os.path.exists(f"/proc/{executor}")
        _restart_and_settle(st, rng)
        judge(r, st, sid, token)
        added = [e["status"] for _, e in st.stored_events(sid)[before:] if e and e.get("type") == "status"]
        if not r.flags["status"].endswith("action=ok") or added:
            r.counts["lies"] += 1
            r.notes.append(f"a live sandbox reported {added or r.flags['status']}")
    finally:
        st.delete_session(sid)
    return r


def hostile_sandbox_record(st, rng):
    """Whoever writes Redis rewrites a session's sandbox record: its id to another session's
    sandbox, or its dir, workspace, cgroup and pid to host paths and processes. After a gateway
    restart the session runs in its own sandbox or not at all (never in the other's), deleting
    it removes no host directory, and the other session is untouched."""
    r = Round("hostile-record")
    token = st.token()
    a, b = st.create_session(), st.create_session()
    victim = os.path.join(st.tmp, "victim-dir")
    os.makedirs(victim, exist_ok=True)
    with open(os.path.join(victim, "keep"), "w") as f:
        f.write("keep")
    try:
        sb_a = json.loads(st.session_hash(a)["sandbox"])
        sb_b = json.loads(st.session_hash(b)["sandbox"])
        lie_a = dict(sb_a, dir=victim, workspace=victim, cgroup="../../..", pid=1, uid=0)
        st.redis("HSET", f"sp:session:{{{a}}}", "sandbox", json.dumps(lie_a))
        c = st.create_session()
        sb_c = json.loads(st.session_hash(c)["sandbox"])
        st.redis("HSET", f"sp:session:{{{c}}}", "sandbox", json.dumps(dict(sb_c, id=sb_b["id"], dir=sb_b["dir"])))
        r.flags["rewritten"] = True
        _restart_and_settle(st, rng)
        if try_action(st, a) != "ok":
            r.counts["lies"] += 1
            r.notes.append("the session whose dir was rewritten lost its own sandbox")
        hc = st.session_hash(c)
        if hc.get("status") != "ERROR" or "another session" not in hc.get("error", ""):
            r.counts["lies"] += 1
            r.notes.append(f"the session pointed at another's sandbox: {hc.get('status')} {hc.get('error')}")
        if try_action(st, b) != "ok":
            r.counts["lies"] += 1
            r.notes.append("the other session's sandbox was disturbed")
        st.delete_session(a)
        st.delete_session(c)
        if not os.path.exists(os.path.join(victim, "keep")):
            r.counts["lies"] += 1
            r.notes.append("deleting the session removed a host directory its record named")
        if not os.path.exists(os.path.join(st.state_dir, sb_b["id"])):
            r.counts["lies"] += 1
            r.notes.append("deleting a session removed another session's sandbox")
    finally:
        for s in (a, b):
            st.delete_session(s)
    return r
