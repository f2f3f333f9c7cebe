"""Runtime images and the Docker provider (issue 18), each beside its reference in the same run:
cold sandbox to first command (bwrap host-/usr, bwrap from the image, Docker) next to
`docker run --rm IMAGE true`; a warm Docker claim; `echo hi` round trips in a Docker and a bwrap
sandbox next to `docker exec CONTAINER echo hi`. Starts its own stacks (tests/integration/stack.py)
with the build in $MODE; needs the default image in both forms (sandpipe image build --docker)."""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from stack import Stack  # noqa: E402

N_COLD, N_RTT, N_EXEC = 10, 300, 30
IMAGE = "sandpipe/runtime:default"


def med(xs):
    return statistics.median(xs)


def run(ws, cmd, ident="b"):
    ws.send_json({"type": "action", "id": ident, "action": {"action": "run", "args": {"command": cmd}}})
    while True:
        m = ws.recv_json(120)
        if m.get("type") == "observation":
            return m


def cold(st, params):
    out = []
    for _ in range(N_COLD):
        t0 = time.perf_counter()
        sid = st.create_session(params=params)
        ws = st.ws(f"/ws/sessions/{sid}")
        run(ws, "true")
        out.append((time.perf_counter() - t0) * 1000)
        ws.close()
        c = st.control()
        st.call(c, "session.delete", {"session": sid})
        c.close()
    return out


def rtt(st):
    sid = st.create_session()
    ws = st.ws(f"/ws/sessions/{sid}")
    run(ws, "true")
    out = []
    for i in range(N_RTT):
        t0 = time.perf_counter()
        run(ws, "echo hi", ident=str(i))
        out.append((time.perf_counter() - t0) * 1000)
    return out, sid


def warm_claims(st, n=10):
    out = []
    for _ in range(n):
        time.sleep(1.5)  # the pool refills between claims
        t0 = time.perf_counter()
        st.create_session()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main():
    res = {}
    docker_run = []
    for _ in range(N_COLD):
        t0 = time.perf_counter()
        subprocess.run(["docker", "run", "--rm", "--network", "none", IMAGE, "true"], check=True,
                       capture_output=True)
        docker_run.append((time.perf_counter() - t0) * 1000)
    # cold starts: pool 0, the default limits, a fresh sandbox each
    for name, prov, image in (("bwrap host", "bwrap", "host"), ("bwrap image", "bwrap", "default"),
                              ("docker", "docker", "default")):
        st = Stack(provider=prov, pool=0, extra=["--image", image])
        try:
            res["cold " + name] = cold(st, None)
        finally:
            st.stop()
    for name, prov in (("bwrap", "bwrap"), ("docker", "docker")):
        st = Stack(provider=prov, pool=2, extra=["--image", "default"])
        try:
            time.sleep(3)
            res["rtt " + name], sid = rtt(st)
            if prov == "docker":
                res["warm docker"] = warm_claims(st)
                cname = "sandpipe-" + __import__("json").loads(
                    st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))["id"]
                ex = []
                for _ in range(N_EXEC):
                    t0 = time.perf_counter()
                    subprocess.run(["docker", "exec", cname, "echo", "hi"], check=True, capture_output=True)
                    ex.append((time.perf_counter() - t0) * 1000)
                res["docker exec"] = ex
        finally:
            st.stop()
    print(f"### Sandboxes from images, Docker provider ({N_COLD} cold starts each, {N_RTT} round trips)")
    print("```")
    print(f"docker run --rm IMAGE true (reference)     median {med(docker_run):8.1f} ms")
    for k in ("cold bwrap host", "cold bwrap image", "cold docker"):
        print(f"{k + ' to first command':42s} median {med(res[k]):8.1f} ms")
    print(f"  docker cold / docker run: {med(res['cold docker']) / med(docker_run):.2f}x (target <= 1.2x)")
    print(f"  bwrap image cold / host cold: {med(res['cold bwrap image']) / med(res['cold bwrap host']):.2f}x"
          " (target <= 1.5x)")
    print(f"{'warm docker claim (session.create)':42s} median {med(res['warm docker']):8.1f} ms")
    print(f"{'echo hi round trip, bwrap (image)':42s} median {med(res['rtt bwrap']):8.3f} ms")
    print(f"{'echo hi round trip, docker':42s} median {med(res['rtt docker']):8.3f} ms"
          f"  ({100 * (med(res['rtt docker']) / med(res['rtt bwrap']) - 1):+.0f}% vs bwrap, target within 10%)")
    print(f"{'docker exec CONTAINER echo hi (reference)':42s} median {med(res['docker exec']):8.1f} ms")
    print("```")


if __name__ == "__main__":
    main()
