"""make bench's network section (issue 28): what a sandbox's own network costs, each figure next
to its peer in the same run. Builds its own stack (Stack with a sandpipe-netd) and its own outside
world (tests/integration/networld.py: HTTP on TEST-NET addresses in a network namespace of its
own), so nothing leaves the machine.

- HTTP GET of 100 MB from the world: from a sandbox (through netd's proxy) against curl in the
  host's namespace (plain routing), interleaved rounds, medians.
- TCP connect latency to the world, 300 connects each, from a sandbox and from the host.
- Warm claim and cold create to the first command, with a network and without.
- Fair share: another session's `true` round trips while one sandbox floods the network (8
  downloads of /big at once, in a loop), against the same with no flood.
Bounded: a few rounds of each; everything it started is stopped (by pid) at the end."""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from networld import NetWorld  # noqa: E402
from stack import Stack, run_action  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_NET_ROUNDS", "5"))
BIG = 100 << 20
URL = "http://198.51.100.10/big"
# A fresh connection and a small request, to the first byte of the answer: through netd, the
# connect completes at netd (its proxy), so this is what an application waits for.
CONNECT_PY = ("import socket, time\n"
              "t = []\n"
              "for i in range(300):\n"
              "    t0 = time.perf_counter()\n"
              "    s = socket.create_connection(('198.51.100.10', 80))\n"
              "    s.sendall(b'GET /hello.txt HTTP/1.0\\r\\n\\r\\n')\n"
              "    s.recv(1)\n"
              "    t.append(time.perf_counter() - t0)\n"
              "    s.close()\n"
              "t.sort()\n"
              "print(t[len(t) // 2] * 1e6, t[int(len(t) * 0.99)] * 1e6)\n")


def med(xs):
    return statistics.median(xs)


def main():
    world = NetWorld(big_bytes=BIG)
    st = None
    try:
        st = Stack(netd={"resolver": world.dns_addr}, pool=2)
        tok = st.token(sub="bench", role="admin")

        def session(params):
            t0 = time.perf_counter()
            sid = st.create_session(token=tok, params=params)
            ws = st.ws(f"/ws/sessions/{sid}", tok)
            run_action(ws, "true")
            return sid, ws, (time.perf_counter() - t0) * 1000

        def delete(sid, ws):
            ws.close()
            c = st.control(tok)
            st.call(c, "session.delete", {"session": sid})
            c.close()

        sid, ws, _ = session({"network": "egress"})
        run_action(ws, f"cat > /tmp/c.py <<'EOF'\n{CONNECT_PY}EOF")
        inside, host = [], []
        for _ in range(ROUNDS):
            _, out, _ = run_action(ws, f"curl -s -o /dev/null -w '%{{time_total}}' {URL}", timeout=120)
            inside.append(BIG / float(out) / 1e6)
            out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", URL],
                                 capture_output=True, text=True, timeout=120).stdout
            host.append(BIG / float(out) / 1e6)
        _, out, _ = run_action(ws, "python3 /tmp/c.py", timeout=120)
        c_in = [float(x) for x in out.split()]
        with open(os.path.join(st.tmp, "c.py"), "w") as f:
            f.write(CONNECT_PY)
        out = subprocess.run([sys.executable, os.path.join(st.tmp, "c.py")], capture_output=True,
                             text=True, timeout=120).stdout
        c_host = [float(x) for x in out.split()]
        delete(sid, ws)

        # fair share: B's round trips, quiet and while A floods
        a, a_ws, _ = session({"network": "egress"})
        b, b_ws, _ = session({})

        def rtts(n=200):
            out = []
            for _ in range(n):
                t0 = time.perf_counter()
                run_action(b_ws, "true")
                out.append((time.perf_counter() - t0) * 1e6)
            out.sort()
            return out[len(out) // 2], out[int(len(out) * 0.99)]

        quiet = rtts()
        flood = ("for r in 1 2 3 4 5 6; do for i in 1 2 3 4 5 6 7 8; do "
                 f"curl -s -o /dev/null {URL} & done; wait; done")
        a_ws.send_json({"type": "action", "id": "flood",
                        "action": {"action": "run", "args": {"command": flood}, "timeout": 600}})
        time.sleep(1.0)
        flooded = rtts()
        while True:  # the flood's own end (bounded: 48 downloads)
            m = a_ws.recv_json(600)
            if m.get("type") == "observation":
                break
        # the peer: the same flood from the host's namespace (no netd), the same round trips
        host_flood = subprocess.Popen(["bash", "-c", flood], stdout=subprocess.DEVNULL)
        time.sleep(1.0)
        flooded_host = rtts()
        host_flood.wait(600)
        delete(a, a_ws)
        delete(b, b_ws)

        warm = {False: [], True: []}
        cold = {False: [], True: []}
        for _ in range(ROUNDS):
            for net in (False, True):
                time.sleep(1.0)  # the pool refills
                sid, ws, ms = session({"network": "egress"} if net else {})
                warm[net].append(ms)
                delete(sid, ws)
                sid, ws, ms = session({"pids": 512, **({"network": "egress"} if net else {})})
                cold[net].append(ms)
                delete(sid, ws)

        print("### Network (issue 28): a sandbox's own network against the host's, same run")
        print("```")
        print(f"HTTP GET 100 MB from the test world: sandbox (netd proxy) {med(inside):.0f} MB/s, "
              f"host namespace {med(host):.0f} MB/s: {med(inside) / med(host):.2f}x "
              f"(medians of {ROUNDS} interleaved rounds)")
        print(f"new connection + small request to the first byte of the answer: sandbox p50 {c_in[0]:.0f} us, p99 {c_in[1]:.0f} us; "
              f"host p50 {c_host[0]:.0f} us, p99 {c_host[1]:.0f} us: {c_in[0] / c_host[0]:.2f}x")
        print(f"another session's `true` round trip: quiet p50 {quiet[0]:.0f} us, p99 {quiet[1]:.0f} us; "
              f"while one sandbox floods the network (8 parallel 100 MB downloads through netd) "
              f"p50 {flooded[0]:.0f} us, p99 {flooded[1]:.0f} us: {flooded[0] / quiet[0]:.2f}x; "
              f"while the same flood runs on the host (no netd) p50 {flooded_host[0]:.0f} us, "
              f"p99 {flooded_host[1]:.0f} us: {flooded_host[0] / quiet[0]:.2f}x")
        print(f"warm claim to first command: with network {med(warm[True]):.1f} ms, without "
              f"{med(warm[False]):.1f} ms: +{med(warm[True]) - med(warm[False]):.1f} ms")
        print(f"cold create to first command: with network {med(cold[True]):.1f} ms, without "
              f"{med(cold[False]):.1f} ms: +{med(cold[True]) - med(cold[False]):.1f} ms")
        print("```")
    finally:
        if st:
            st.stop()
        world.close()


if __name__ == "__main__":
    main()
