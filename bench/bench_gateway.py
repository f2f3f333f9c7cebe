"""Gateway figures that are milliseconds or counts (Python's own overhead is far below them):
warm-pool claim and cold bubblewrap start to first command, next to their floor measured in the
same rounds: bubblewrap alone with a sandbox's namespaces and mounts (bench/bwrap_floor.py)
running `true` and `bash -c true`. Uses the stack the caller started (see bench/run.sh).

The figures (WebSocket, a gateway with --pool 2, Redis on a unix socket):
- claim: from sending session.create on an open /ws/control to its answer (READY: the record
  stored, the sandbox popped from the pool, its executor linked, the session's plugins told).
- claim → first command: the same start, then a /ws/sessions/{id} opened (one WebSocket
  handshake) and `true` run to its observation.
- the same with the control WebSocket opened first (two handshakes: the figure issue 35 quoted
  as "warm claim → first command", 4.1 ms).
- cold: session.create with custom limits (never from the pool: its own disk, cgroup, uid
  block, bwrap, executor) to the observation of `true`, the control WebSocket open first.
Each warm round waits 1 s (the pool refills 100 ms after a claim and a refill blocks the
gateway's loop while bwrap starts) and so does each cold one (its own delete's unmount)."""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from wsclient import WS, jwt  # noqa: E402

import bwrap_floor  # noqa: E402

port, secret, redis_sock = int(sys.argv[1]), sys.argv[2], sys.argv[3]
executor = sys.argv[4] if len(sys.argv) > 4 else os.path.join(os.path.dirname(__file__), "..", "build", "release",
                                                              "sandpipe-executor")
ROUNDS = int(os.environ.get("BENCH_CLAIM_ROUNDS", "10"))
TOK = jwt(secret, sub="bench", role="admin")


def ws(path):
    return WS("127.0.0.1", port, f"{path}{'&' if '?' in path else '?'}token={TOK}")


def create(params=None):
    c = ws("/ws/control")
    c.send_json({"id": 1, "method": "session.create", "params": params or {}})
    r = c.recv_json(60)
    c.close()
    return r["result"]["id"]


def run(sock, cmd):
    sock.send_json({"type": "action", "id": 1, "action": {"action": "run", "args": {"command": cmd, "blocking": True}, "timeout": 600}})
    while True:
        m = sock.recv_json(600)
        if m.get("type") == "observation":
            return m


def to_first_command(params):
    """(ms to READY, ms to the first command's observation, ms of the same with the control
    WebSocket's handshake, session id)"""
    t0 = time.perf_counter()
    c = ws("/ws/control")
    t1 = time.perf_counter()
    c.send_json({"id": 1, "method": "session.create", "params": params})
    r = c.recv_json(60)
    t2 = time.perf_counter()
    if "result" not in r:
        raise RuntimeError(f"session.create {params}: {r}")
    sid = r["result"]["id"]
    s = ws(f"/ws/sessions/{sid}")
    run(s, "true")
    t3 = time.perf_counter()
    s.close()
    c.close()
    return (t2 - t1) * 1000, (t3 - t1) * 1000, (t3 - t0) * 1000, sid


def delete(sid):
    c = ws("/ws/control")
    c.send_json({"id": 1, "method": "session.delete", "params": {"session": sid}})
    c.recv_json(30)
    c.close()


def line(what, xs, unit="ms"):
    print(f"{what}: median {statistics.median(xs):.1f} {unit} (min {min(xs):.1f}, max {max(xs):.1f})")


res = {k: [] for k in ("claim", "claim_cmd", "claim_cmd2", "cold", "floor", "floor_bash")}
floor_ws = tempfile.mkdtemp(prefix="sp-floor-")
os.chmod(floor_ws, 0o777)
try:
    for i in range(ROUNDS):
        time.sleep(1.0)  # let the pool refill
        claim, cmd, cmd2, sid = to_first_command({})
        res["claim"].append(claim)
        res["claim_cmd"].append(cmd)
        res["claim_cmd2"].append(cmd2)
        delete(sid)
        time.sleep(1.0)  # the refill that claim started is over
        res["floor"].append(bwrap_floor.run_once(floor_ws, executor, ["true"]))
        _, cold, _, sid = to_first_command({"pids": 512})  # custom limits: a fresh sandbox
        res["cold"].append(cold)
        delete(sid)
        res["floor_bash"].append(bwrap_floor.run_once(floor_ws, executor, ["bash", "-c", "true"]))
finally:
    os.rmdir(floor_ws)
line("warm claim (session.create → READY, control WebSocket open)", res["claim"])
line("warm claim → first command (one WebSocket handshake)", res["claim_cmd"])
line("warm claim → first command, control WebSocket opened first (two handshakes)", res["claim_cmd2"])
line("cold bwrap sandbox → first command", res["cold"])
line("floor: bare `bwrap <a sandbox's namespaces and mounts> true`", res["floor"])
line("floor: bare `bwrap <the same> bash -c true`", res["floor_bash"])
print(f"cold / bare bwrap true: {statistics.median(res['cold']) / statistics.median(res['floor']):.2f}x "
      f"(bash -c true: {statistics.median(res['cold']) / statistics.median(res['floor_bash']):.2f}x; target ≤ 3x)")

sid = create({})
prod = ws(f"/ws/sessions/{sid}")

delete(sid)
