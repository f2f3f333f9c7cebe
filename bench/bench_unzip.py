"""upload_file's zip unpacking and the gateway's other sessions (issue 21): one gateway (its own
stack, tests/integration/apistack.py, the build in $MODE, bwrap sandboxes, nginx in front), two
sessions. Session B runs `echo` actions back to back (POST /runtime/{b}/execute_action) while
session A's upload_file unpacks a zip; B's round trips are reported with nothing else running
(the peer, same run), during a zip of zeros (BENCH_UNZIP_MIB, default 1024 MiB inflated from
~1 MiB) and during a hostile one (96 MiB of empty deflate blocks before 256 MiB of zeros). Also
the gateway's loop thread's CPU time over each unpack (the rest of the process is libuv's
threadpool)."""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from apistack import ApiStack  # noqa: E402
import test_openhands_unzip as tz  # noqa: E402

MIB = 1 << 20
ZEROS_MIB = int(os.environ.get("BENCH_UNZIP_MIB", "1024"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid, tid=None):
    path = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def zeros_zip(mib):
    def chunks():
        for _ in range(mib):
            yield bytes(MIB)
    return tz.make_zip([tz.deflated_entry("z/zeros.bin", chunks)])


def fmt(lat):
    lat = sorted(lat)
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3  # noqa: E731
    return (f"n {len(lat)}, p50 {q(0.5):.2f} ms, p99 {q(0.99):.2f} ms, "
            f"max {lat[-1] * 1e3:.1f} ms")


def main():
    st = ApiStack(pool=3)
    tz.STACK = tz.oh.STACK = st
    try:
        key = st.token(sub="agent", role="user")
        a, b = st.api_create_session(key), st.api_create_session(key)
        tz.Unzip.key = key
        run = tz.Unzip.run_in
        for _ in range(50):  # warm
            run(b, "echo warm")
        base = []
        for i in range(500):
            t0 = time.monotonic()
            run(b, f"echo {i}")
            base.append(time.monotonic() - t0)
        print(f"B's `echo` round trip, nothing else running: {fmt(base)}")
        gw = st.gw.pid
        for name, data in ((f"{ZEROS_MIB} MiB of zeros ({{}} KiB zip)", zeros_zip(ZEROS_MIB)),
                           ("96 MiB of empty deflate blocks + 256 MiB of zeros ({} KiB zip)",
                            tz.stall_zip(96))):
            run(a, "rm -rf /workspace/u")
            up = tz.Upload(a, key, data, "/workspace/u")
            lat = []
            c0, l0 = cpu_s(gw), cpu_s(gw, gw)
            t0 = time.monotonic()
            up.start()
            while not up.done.is_set():
                t1 = time.monotonic()
                run(b, "echo x")
                lat.append(time.monotonic() - t1)
            up.join()
            secs = time.monotonic() - t0
            c1, l1 = cpu_s(gw), cpu_s(gw, gw)
            assert up.reply and up.reply[0] == 200, up.reply
            print(f"during an upload_file of {name.format(len(data) >> 10)}: {secs:.2f} s; "
                  f"B's round trips {fmt(lat)}; gateway CPU {c1 - c0:.2f} s, of which its loop "
                  f"thread {l1 - l0:.2f} s")
    finally:
        st.stop()


if __name__ == "__main__":
    main()
