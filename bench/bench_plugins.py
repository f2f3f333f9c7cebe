"""Plugin figures (issue 20), against a real executor socket. IPython: kernel start (the first
cell, from the run_ipython action to its observation, and the helper's own start time), the
`1+1` cell round trip once the kernel is up next to bash's `echo hi` on the same connection and
next to Jupyter's own client on its own kernel, the plugin's memory (helper + kernel RSS from
the executor's health). Browser: Chromium start (the first browse), browse of a local page to
its observation once Chromium is up, the browser's memory.
Usage: bench_plugins.py SOCKET [ROUNDS]"""
import http.server
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from spexec import Client  # noqa: E402

SOCK = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 300
c = Client(SOCK)


def cell(code):
    t0 = time.perf_counter()
    obs = c.action({"action": "run_ipython", "args": {"code": code, "include_extra": False}}, 120)
    return time.perf_counter() - t0, obs


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] * 1e6


first, obs = cell("1+1")
assert obs["content"] == "2", obs
jup = c.call({"op": "health"})["plugins"]["jupyter"]
print(f"kernel start (first cell, action to observation): {first * 1000:.0f} ms; "
      f"the helper's kernel start + handshake + set-up: {jup['start_ms']} ms")
for name, fn in (("ipython `1+1`", lambda: cell("1+1")[0]),
                 ("bash `echo hi`", lambda: (lambda t0: (c.run("echo hi"), time.perf_counter() - t0)[1])(time.perf_counter()))):
    for _ in range(20):
        fn()
    xs = [fn() for _ in range(ROUNDS)]
    print(f"{name} round trip, {ROUNDS} rounds: p50 {pct(xs, 0.5):.0f} µs, p90 {pct(xs, 0.9):.0f}, "
          f"p99 {pct(xs, 0.99):.0f}, mean {statistics.mean(xs) * 1e6:.0f}")

# Reference: Jupyter's own Python client (jupyter_client, Debian's python3-jupyter-client) on a
# kernel of its own, the same cell, waiting for the reply and the idle status as we do.
os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # quiets the kernel's debugger warning
try:
    from jupyter_client.manager import start_new_kernel
    t0 = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="python3")
    print(f"reference: jupyter_client start_new_kernel: {(time.perf_counter() - t0) * 1000:.0f} ms")

    def ref():
        t = time.perf_counter()
        kc.execute_interactive("1+1", output_hook=lambda m: None, timeout=60)
        return time.perf_counter() - t
    for _ in range(20):
        ref()
    xs = [ref() for _ in range(ROUNDS)]
    print(f"reference: jupyter_client `1+1` round trip, {ROUNDS} rounds: p50 {pct(xs, 0.5):.0f} µs, "
          f"p90 {pct(xs, 0.9):.0f}, p99 {pct(xs, 0.99):.0f}")
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    del kc, km
except ImportError:
    print("reference: jupyter_client not installed")
jup = c.call({"op": "health"})["plugins"]["jupyter"]
kpss = 0
try:
    with open(f"/proc/{jup['pid']}/smaps_rollup") as f:
        kpss = next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024
except (OSError, StopIteration, KeyError):
    pass
print(f"IPython memory: {jup['rss_bytes'] / (1 << 20):.1f} MiB RSS (helper + kernel, the plugin's "
      f"rss_bytes); kernel PSS {kpss / (1 << 20):.1f} MiB")

# The browser: a page served on loopback (the executor here is not sandboxed: same network).
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        body = b"<html><head><title>Bench</title></head><body><h1>Hello</h1><p>text</p><a href='/'>self</a></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{srv.server_address[1]}/"


def browse():
    t0 = time.perf_counter()
    obs = c.action({"action": "browse", "args": {"url": url}}, 120)
    assert not obs["extras"]["error"], obs["content"]
    return time.perf_counter() - t0


first = browse()
print(f"browser start (first browse, action to observation, Chromium included): {first * 1000:.0f} ms")
xs = [browse() for _ in range(min(ROUNDS, 50))]
print(f"browse of a local page to its observation (screenshot included), {len(xs)} rounds: "
      f"p50 {pct(xs, 0.5) / 1000:.1f} ms, p90 {pct(xs, 0.9) / 1000:.1f}, p99 {pct(xs, 0.99) / 1000:.1f}")
br = c.call({"op": "health"})["plugins"]["browser"]
pids = subprocess.run(["pgrep", "-f", "chromium.*remote-debugging-pipe"], capture_output=True, text=True).stdout.split()
pss = 0
for p in pids:
    try:
        with open(f"/proc/{p}/smaps_rollup") as f:
            pss += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024
    except (OSError, StopIteration):
        pass
print(f"browser memory: {br.get('rss_bytes', 0) / (1 << 20):.0f} MiB RSS summed over the helper's "
      f"process group (the plugin's rss_bytes: Chromium's processes, shared pages counted in each); "
      f"{pss / (1 << 20):.0f} MiB PSS")
