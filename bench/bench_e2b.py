"""E2B's SDK against sandpipe (issue 32), its peers in the same run: commands.run('echo hi')
through the SDK against the same command on sandpipe's session WebSocket, Sandbox.create() to
the end of a first command from the warm pool, and 256 MiB of stdout streamed to the SDK against
the same stream read raw and the same bytes through a pipe inside the sandbox. Starts its own stack
(tests/integration/apistack.py, a warm pool of 2) with the build in $MODE; the SDK is
tests/e2b/'s (make e2b-sdk). The measuring is bench/bench_e2b.mjs (one node process)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from apistack import ApiStack  # noqa: E402


def main():
    st = ApiStack(pool=2)
    try:
        origin = f"http://127.0.0.1:{st.http_port}"
        env = dict(os.environ, SP_URL=origin, E2B_API_URL=f"{origin}/e2b", E2B_SANDBOX_URL=origin,
                   E2B_API_KEY=st.token(sub="bench", role="user"))
        env.pop("E2B_DEBUG", None)
        env.pop("E2B_DOMAIN", None)
        r = subprocess.run(["node", os.path.join(HERE, "bench_e2b.mjs")], env=env, capture_output=True,
                           text=True, timeout=1200)
        if r.returncode != 0:
            sys.exit(f"bench_e2b.mjs failed:\n{r.stdout}\n{r.stderr}")
        o = json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        st.stop()
    e, w = o["echo_sdk"], o["echo_ws"]
    c, f, wl = o["create"], o["create_to_first_command"], o["echo_ws_login"]
    print("| measure | E2B SDK on sandpipe | peer, same run | ratio |")
    print("|---|---|---|---|")
    print(f"| `commands.run('echo hi')`, median (p99), n={e['n']} | {e['median']:.2f} ms ({e['p99']:.2f}) "
          f"| session WebSocket `run` action (its running shell): {w['median']:.2f} ms ({w['p99']:.2f}) "
          f"| {e['median'] / w['median']:.2f}× |")
    print(f"| the same work (a new login shell) | | WebSocket `run` of `bash -l -c 'echo hi'`: "
          f"{wl['median']:.2f} ms ({wl['p99']:.2f}) | {e['median'] / wl['median']:.2f}× |")
    print(f"| `Sandbox.create()` from the warm pool, median (p99), n={c['n']} | {c['median']:.1f} ms ({c['p99']:.1f}) | | |")
    print(f"| `Sandbox.create()` → first `commands.run('true')` done, median (p99) | {f['median']:.1f} ms ({f['p99']:.1f}) "
          f"| goal ≤ 20 ms; ComputeSDK's public medians: Daytona 186 ms, E2B 491 ms | |")
    print(f"| 256 MiB of stdout to `onStdout` | {o['stream_sdk_mbs']:.0f} MB/s | the same stream read raw "
          f"(fetch, not decoded): {o['stream_raw_mbs']:.0f} MB/s | {o['stream_sdk_mbs'] / o['stream_raw_mbs']:.2f}× |")
    print(f"| the same bytes through a pipe inside the sandbox (the floor) | | {o['stream_pipe_mbs']:.0f} MB/s | |")
    rr, rn = o["read_resuming"], o["read_running"]
    print(f"| `files.read` of a paused sandbox with `autoResume` (the read resumes it), median (p99), "
          f"n={rr['n']} | {rr['median']:.2f} ms ({rr['p99']:.2f}) | the same read of it running: "
          f"{rn['median']:.2f} ms ({rn['p99']:.2f}) | {rr['median'] / rn['median']:.2f}× |")


if __name__ == "__main__":
    main()
