"""OpenHands Remote Runtime API figures (issue 11), through nginx like a real client:
  /start -> pod_status "ready" (polling GET /runtime/{id} every 2 s as V0 does, and every 2 ms to
  see when readiness happens) -> GET {url}/alive answers 200;
  warm (resource_factor 1: a warm-pool sandbox, its env exported once claimed) next to cold
  (resource_factor 2: scaled limits need a fresh bwrap sandbox), in the same run;
  POST /pause and POST /resume round trips (cgroup freezer).
Usage: bench_oh.py HTTP_PORT TOKEN [ROUNDS]"""
import http.client
import json
import statistics
import sys
import time
import uuid

PORT, TOKEN = int(sys.argv[1]), sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 10
conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)


def call(method, path, body=None, headers=None):
    h = {"X-API-Key": TOKEN, **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body)
        h["Content-Type"] = "application/json"
    conn.request(method, path, data, h)
    r = conn.getresponse()
    raw = r.read()
    return r.status, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw)


def wait_pool_ready():
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        st, p = call("GET", "/api/v1/pool", headers={"Authorization": "Bearer " + TOKEN})
        if st == 200 and p.get("default", {}).get("ready", 0) >= 1:
            return
        time.sleep(0.02)
    sys.exit("the warm pool did not refill")


def start_until_alive(factor, poll_s=0.002):
    """poll_s: the pause between looks at pod_status (V0 sleeps 2 s; 2 ms shows when readiness
    happens)."""
    t0 = time.monotonic()
    st, rt = call("POST", "/openhands/start", {"image": "default", "session_id": uuid.uuid4().hex,
                                                "resource_factor": factor,
                                                "command": "/usr/local/bin/openhands-agent-server --port 60000"})
    if st != 200:
        sys.exit(f"/start: {st} {rt}")
    rid = rt["runtime_id"]
    while True:
        st, rt = call("GET", f"/openhands/runtime/{rid}")
        if st != 200:
            sys.exit(f"/runtime: {st} {rt}")
        if rt["pod_status"] == "ready":
            break
        if rt["pod_status"] in ("failed", "unknown"):
            sys.exit(f"runtime failed: {rt}")
        time.sleep(poll_s)
    path = "/" + rt["url"].split("/", 3)[3]
    st, _ = call("GET", path + "/alive", headers={"X-Session-API-Key": rt["session_api_key"]})
    if st != 200:
        sys.exit(f"/alive: {st}")
    return (time.monotonic() - t0) * 1000, rt


def timed(method, path, body):
    t0 = time.monotonic()
    st, b = call(method, path, body)
    if st != 200:
        sys.exit(f"{path}: {st} {b}")
    return (time.monotonic() - t0) * 1000


def summary(name, xs):
    xs = sorted(xs)
    return (f"{name}: n={len(xs)} p50={statistics.median(xs):.1f} ms "
            f"min={xs[0]:.1f} max={xs[-1]:.1f}")


def rest_cold_session():
    """The peer: a plain REST session with custom limits (a fresh bwrap sandbox), created and
    answered READY (POST /api/v1/sessions waits for READY)."""
    t0 = time.monotonic()
    st, s = call("POST", "/api/v1/sessions", {"memory": 2 * 1024 ** 3},
                 headers={"Authorization": "Bearer " + TOKEN})
    if st != 201:
        sys.exit(f"session create: {st} {s}")
    ms = (time.monotonic() - t0) * 1000
    call("DELETE", f"/api/v1/sessions/{s['id']}", headers={"Authorization": "Bearer " + TOKEN})
    return ms


warm, cold, pause, resume, peer, v0 = [], [], [], [], [], []
for _ in range(ROUNDS):
    wait_pool_ready()
    ms, rt = start_until_alive(1, poll_s=2.0)  # as V0 polls: tenacity.wait_fixed(2)
    v0.append(ms)
    call("POST", "/openhands/stop", {"runtime_id": rt["runtime_id"]})
    wait_pool_ready()
    ms, rt = start_until_alive(1)
    warm.append(ms)
    pause.append(timed("POST", "/openhands/pause", {"runtime_id": rt["runtime_id"]}))
    resume.append(timed("POST", "/openhands/resume", {"runtime_id": rt["runtime_id"]}))
    call("POST", "/openhands/stop", {"runtime_id": rt["runtime_id"]})
    ms, rt = start_until_alive(2)
    cold.append(ms)
    call("POST", "/openhands/stop", {"runtime_id": rt["runtime_id"]})
    peer.append(rest_cold_session())
print(summary("/start -> ready -> /alive, warm pool (resource_factor 1)", warm))
print(summary("/start -> ready -> /alive, warm pool, polled every 2 s as V0 does", v0))
print(f"V0-style / polled every 2 ms p50: {statistics.median(v0) / statistics.median(warm):.2f}")
print(summary("/start -> ready -> /alive, cold bwrap sandbox (resource_factor 2)", cold))
print(summary("peer: REST session with custom limits (fresh bwrap sandbox) until READY", peer))
print(f"warm / cold p50: {statistics.median(warm) / statistics.median(cold):.2f}; "
      f"cold runtime / cold REST session p50: {statistics.median(cold) / statistics.median(peer):.2f}")
print(summary("POST /pause (cgroup freeze)", pause))
print(summary("POST /resume (thaw)", resume))
