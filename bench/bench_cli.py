"""How long a short `sandpipe` command takes, wall and CPU (its own user + system time), next to
curl doing the same REST request in the same run.
Usage: bench_cli.py SANDPIPE HTTP_PORT TOKEN SESSION [ROUNDS]"""
import os
import resource
import statistics
import subprocess
import sys

CLI, PORT, TOKEN, SID = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
ROUNDS = int(sys.argv[5]) if len(sys.argv) > 5 else 30
ENV = dict(os.environ, SANDPIPE_URL=f"ws://127.0.0.1:{PORT}", SANDPIPE_TOKEN=TOKEN)


def measure(cmd):
    """p50 wall and CPU milliseconds of cmd over ROUNDS runs (3 warm-up runs first)."""
    import time
    walls, cpus = [], []
    for i in range(ROUNDS + 3):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, check=True)
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i >= 3:
            walls.append((t1 - t0) * 1000)
            cpus.append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000)
    return statistics.median(walls), statistics.median(cpus)


rows = [
    ("sandpipe sessions ls (WebSocket control)", [CLI, "sessions", "ls"]),
    ("sandpipe run SESSION -- true", [CLI, "run", SID, "--", "true"]),
    ("peer: curl GET /api/v1/sessions", ["curl", "-sf", "-o", "/dev/null", "-H", f"Authorization: Bearer {TOKEN}",
                                        f"http://127.0.0.1:{PORT}/api/v1/sessions"]),
]
res = {}
for name, cmd in rows:
    wall, cpu = measure(cmd)
    res[name] = (wall, cpu)
    print(f"{name:44s} n={ROUNDS} wall p50 {wall:5.1f} ms, CPU p50 {cpu:5.1f} ms")
peer = res[rows[2][0]]
print(f"sessions ls / curl: wall {res[rows[0][0]][0] / peer[0]:.2f}x, CPU {res[rows[0][0]][1] / peer[1]:.2f}x")
