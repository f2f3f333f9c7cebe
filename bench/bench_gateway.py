"""Gateway figures that are milliseconds or counts (Python's own overhead is far below them):
warm-pool claim and cold bubblewrap start to first command. Uses the stack the caller started (see bench/run.sh)."""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from wsclient import WS, jwt  # noqa: E402

port, secret, redis_sock = int(sys.argv[1]), sys.argv[2], sys.argv[3]
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
    t0 = time.perf_counter()
    sid = create(params)
    s = ws(f"/ws/sessions/{sid}")
    run(s, "true")
    dt = (time.perf_counter() - t0) * 1000
    s.close()
    return dt, sid


def delete(sid):
    c = ws("/ws/control")
    c.send_json({"id": 1, "method": "session.delete", "params": {"session": sid}})
    c.recv_json(30)
    c.close()


warm, cold = [], []
for i in range(8):
    time.sleep(1.0)  # let the pool refill
    dt, sid = to_first_command({})
    warm.append(dt)
    delete(sid)
    dt, sid = to_first_command({"pids": 512})  # custom limits: a fresh sandbox
    cold.append(dt)
    delete(sid)
print(f"warm pool claim → first command: median {statistics.median(warm):.1f} ms (min {min(warm):.1f}, max {max(warm):.1f})")
print(f"cold bwrap sandbox → first command: median {statistics.median(cold):.1f} ms (min {min(cold):.1f}, max {max(cold):.1f})")

sid = create({})
prod = ws(f"/ws/sessions/{sid}")

delete(sid)
