"""The `1+1` IPython cell and bash's `echo hi` through the whole path a WebSocket client takes
(client -> gateway -> executor -> sandpipe-jupyter -> kernel and back; each action stored in
Redis as its action, output and observation events before the observation is sent), alternated
on one session socket so both see the same load. Usage: bench_plugins_ws.py PORT SID TOKEN [N]"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from wsclient import WS  # noqa: E402

port, sid, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]
n = int(sys.argv[4]) if len(sys.argv) > 4 else 200
ws = WS("127.0.0.1", port, f"/ws/sessions/{sid}?token={token}")
seq_ident = 0


def act(action):
    global seq_ident
    seq_ident += 1
    ident = str(seq_ident)
    t0 = time.perf_counter()
    ws.send_json({"type": "action", "id": ident, "action": action})
    seq = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        m = ws.recv_json(max(0.1, deadline - time.monotonic()))
        if m.get("type") == "ack" and m.get("id") == ident:
            seq = m["seq"]
        elif m.get("type") == "observation" and seq is not None and m.get("action") == seq:
            return time.perf_counter() - t0, m["observation"]
        elif m.get("type") == "error":
            raise RuntimeError(m)
    raise TimeoutError(action)


cell = {"action": "run_ipython", "args": {"code": "1+1", "include_extra": False}}
echo = {"action": "run", "args": {"command": "echo hi"}}
dt, obs = act(cell)
assert obs["content"] == "2", obs
print(f"kernel start through the gateway (first cell, action to observation): {dt * 1000:.0f} ms")
for _ in range(20):
    act(cell), act(echo)
xs, ys = [], []
for _ in range(n):
    xs.append(act(cell)[0])
    ys.append(act(echo)[0])
xs.sort(), ys.sort()
for name, v in (("ipython `1+1`", xs), ("bash `echo hi`", ys)):
    print(f"through the gateway (WebSocket), {name}, {n} rounds: p50 {v[n // 2] * 1000:.2f} ms, "
          f"p90 {v[n * 9 // 10] * 1000:.2f}, p99 {v[min(n - 1, n * 99 // 100)] * 1000:.2f}")
print(f"ipython over bash, p50: +{(xs[n // 2] - ys[n // 2]) * 1000:.2f} ms")
