"""Previews (issue 31) against the same requests made inside the sandbox, same run: a small GET
(keep-alive, sequential), a 100 MB download, and 1 KiB WebSocket echoes, through nginx, the
gateway's preview listener and the executor (host form, P-S.localhost) against a client in the
sandbox talking to the app on localhost (bench/preview_probe.py on both sides: the same code).
The apps: python3 -m http.server and tests/integration/preview_apps/app.py. Starts its own stack
(tests/integration/apistack.py) with the build in $MODE and the default image."""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from apistack import ApiStack  # noqa: E402

N_GET, N_WS, BIG, ROUNDS = 500, 500, 100 * 1000 * 1000, 5


def med(xs):
    return statistics.median(xs)


def p99(xs):
    return sorted(xs)[int(len(xs) * 0.99) - 1]


def main():
    st = ApiStack(pool=1, extra=["--image", "default"])
    try:
        tok = st.token(sub="bench", role="user")
        sid = st.api_create_session(tok)

        def put(path, local):
            with open(local, "rb") as f:
                code, body, _ = st.request("PUT", f"/api/v1/sessions/{sid}/files/content?path={path}",
                                           f.read(), token=tok)
            assert code == 200, body

        def sh(cmd):
            code, ev, _ = st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true&timeout=300",
                                     {"action": "run", "args": {"command": cmd, "timeout": 300}},
                                     token=tok, timeout=320)
            assert code == 200, ev
            return ev["observation"]["content"]

        put("/workspace/app.py", os.path.join(HERE, "..", "tests", "integration", "preview_apps", "app.py"))
        put("/workspace/probe.py", os.path.join(HERE, "preview_probe.py"))
        sh("cd /workspace && head -c %d /dev/zero > big.bin && head -c 1024 /dev/urandom > small.bin && "
           "(nohup python3 -m http.server 8000 >/dev/null 2>&1 &) && (nohup python3 app.py 8001 >/dev/null 2>&1 &) "
           "&& sleep 1" % BIG)
        code, t8000, _ = st.request("POST", f"/api/v1/sessions/{sid}/ports/8000/token", token=tok)
        code, t8001, _ = st.request("POST", f"/api/v1/sessions/{sid}/ports/8001/token", token=tok)
        probe = os.path.join(HERE, "preview_probe.py")

        def outside(*args):
            r = subprocess.run([sys.executable, probe, *map(str, args)], capture_output=True, text=True,
                               timeout=600, check=True)
            return json.loads(r.stdout)

        def inside(*args):
            return json.loads(sh("python3 /workspace/probe.py " + " ".join(map(str, args))).strip().splitlines()[-1])

        tk0, tk1 = t8000["token"], t8001["token"]
        # warm both paths up (the cookie-free header credential for the host form)
        rows = []
        g_out = outside("get", "127.0.0.1", st.http_port, f"/preview/{sid}/8000/~{tk0}/small.bin", N_GET)["ms"]
        g_in = inside("get", "127.0.0.1", 8000, "/small.bin", N_GET)["ms"]
        rows.append(("GET 1 KiB, kept connection (median / p99)",
                     f"{med(g_in):.2f} / {p99(g_in):.2f} ms", f"{med(g_out):.2f} / {p99(g_out):.2f} ms",
                     f"{med(g_out) / med(g_in):.1f}x"))
        mb_out, mb_in = [], []
        for _ in range(ROUNDS):  # alternating, so that drift hits both
            b_out = outside("bulk", "127.0.0.1", st.http_port, f"/preview/{sid}/8000/~{tk0}/big.bin")
            b_in = inside("bulk", "127.0.0.1", 8000, "/big.bin")
            assert b_out["bytes"] == b_in["bytes"] == BIG, (b_out, b_in)
            mb_out.append(BIG / b_out["s"] / 1e6)
            mb_in.append(BIG / b_in["s"] / 1e6)
        mb_out, mb_in = med(mb_out), med(mb_in)
        rows.append((f"100 MB download (median of {ROUNDS})", f"{mb_in:.0f} MB/s", f"{mb_out:.0f} MB/s",
                     f"{mb_out / mb_in:.2f}x"))
        w_out = outside("ws", "127.0.0.1", st.http_port, f"/preview/{sid}/8001/~{tk1}/ws", N_WS)["ms"]
        w_in = inside("ws", "127.0.0.1", 8001, "/ws", N_WS)["ms"]
        rows.append(("WebSocket 1 KiB echo (median / p99)", f"{med(w_in):.2f} / {p99(w_in):.2f} ms",
                     f"{med(w_out):.2f} / {p99(w_out):.2f} ms", f"{med(w_out) / med(w_in):.1f}x"))
        print("| what | inside the sandbox (localhost) | through the preview (nginx → gateway → executor) | ratio |")
        print("|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
        print(f"\n({N_GET} GETs and {N_WS} echoes per side, sequential, each GET through the preview a "
              "new connection from nginx to the gateway and from the executor to the app)")
    finally:
        st.stop()


if __name__ == "__main__":
    main()
