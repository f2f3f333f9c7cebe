"""Density (issue 35): N idle sandboxes on one machine, each answering `echo hi`. Its own stack
(tests/integration/apistack.py: Redis, one gateway with bwrap sandboxes, the API, nginx; the
build in $MODE). N sessions are created over REST (POST /api/v1/sessions, BENCH_DENSITY_N,
default 5000, BENCH_DENSITY_CLIENTS at a time, default 8), each then runs `echo hi` (POST
.../actions?wait=true), all are deleted. Reported: the creation rate, host memory per sandbox
(MemAvailable before and after, and the sum of the PSS of the sandboxes' processes), the
gateway's RSS per idle session (10 s after the last action, when idle sessions let go of what
their work grew), the gateway's RSS after every session was deleted against its start, how many
answered `echo hi`, Redis memory per session, and the gateway's descriptors per session.
Bounded: creation stops early when MemAvailable falls under BENCH_DENSITY_MIN_AVAIL_GIB
(default 4) or after BENCH_DENSITY_MAX_S (default 3600 s), and says so; every sandbox is
destroyed and checked for by the stack on the way out. BENCH_DENSITY_DISK=0: sandboxes without
a disk of their own (the gateway's --disk 0). BENCH_DENSITY_GATEWAY: another build's
sandpipe-gateway to run instead of $MODE's (an A/B against an older commit). Also reported, as
signs of a stalled loop: the executor links the gateway found dead (its log), the lowest
remaining TTL of its heartbeat key in Redis (5 s when refreshed; PTTL asked every 100 ms) while
creating and while deleting, and the latency of one session's `echo hi` over REST, repeated
while all the others are deleted."""
import collections
import concurrent.futures as cf
import os
import resource
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from apistack import ApiStack  # noqa: E402
from stack import sandbox_processes  # noqa: E402

N = int(os.environ.get("BENCH_DENSITY_N", "5000"))
CLIENTS = int(os.environ.get("BENCH_DENSITY_CLIENTS", "8"))
MIN_AVAIL = float(os.environ.get("BENCH_DENSITY_MIN_AVAIL_GIB", "4")) * (1 << 30)
MAX_S = float(os.environ.get("BENCH_DENSITY_MAX_S", "3600"))
# The gateway's --disk: "" its default (each sandbox its own sparse ext4 disk on a loop device,
# ~0.5 MiB of the host's disk each when empty), "0" none (the workspace in the sandbox's
# directory, /tmp a tmpfs): for a host whose disk would not hold N of them.
DISK = os.environ.get("BENCH_DENSITY_DISK", "")
PID_MAX_WANTED = 4194304


def meminfo(field):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def redis_used(st):
    for line in st.redis("INFO", "memory").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return 0


def kib(b):
    return b / 1024


def mib(b):
    return b / (1 << 20)


def raise_sysctl(name, want):
    """Sets /proc/sys/<name> to want where it is lower; returns the value to put back, or None."""
    path = "/proc/sys/" + name.replace(".", "/")
    with open(path) as f:
        old = int(f.read())
    if old >= want:
        print(f", {name} {old}", end="")
        return None
    try:
        with open(path, "w") as f:
            f.write(str(want))
    except OSError:
        print(f", {name} {old} (read-only here)", end="")
        return None
    print(f", {name} {old} -> {want} (put back after)", end="")
    return old


def raise_limits():
    """What thousands of sandboxes need of this host (docs/operations.md, "Limits"): descriptors
    for the gateway (it raises its soft limit to the hard one), pids for the sandboxes' processes
    and a PTY each for their bash (every sandbox's devpts counts against kernel.pty.max less
    kernel.pty.reserve: 3,072 by default). Returns {sysctl: value to put back}."""
    if os.geteuid() != 0:
        return {}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(hard, 1 << 20)
    with open("/proc/sys/fs/nr_open") as f:
        want = min(want, int(f.read()))
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, want))
    except (ValueError, OSError):  # no CAP_SYS_RESOURCE (a container): the hard limit stays
        pass
    print(f"limits: the gateway's descriptors {resource.getrlimit(resource.RLIMIT_NOFILE)[1]}", end="")
    with open("/proc/sys/kernel/pty/reserve") as f:
        reserve = int(f.read())
    old = {}
    for name, value in (("kernel.pid_max", PID_MAX_WANTED),
                        ("kernel.pty.max", min(reserve + 2 * N + 4096, 1 << 20))):
        was = raise_sysctl(name, value)
        if was is not None:
            old[name] = was
    print()
    return old


class HeartbeatWatch:
    """The lowest PTTL of the gateway's heartbeat key per phase, asked every 100 ms on a
    connection of its own (a key gone counts as 0)."""

    def __init__(self, st):
        self.conn, self.key = st.redis_conn(timeout=10), f"sp:gateway:{st.gateway_id}"
        self.phase, self.low, self.done = None, {}, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.wait(0.1):
            ttl, phase = self.conn("PTTL", self.key), self.phase
            if phase:
                self.low[phase] = min(self.low.get(phase, 5000), max(int(ttl), 0))

    def stop(self):
        self.done.set()
        self.thread.join()
        self.conn.close()


def main():
    old_limits = raise_limits()
    other = os.environ.get("BENCH_DENSITY_GATEWAY")
    st = ApiStack(pool=int(os.environ.get("BENCH_DENSITY_POOL", "4")), workers=8,
                  extra=["--disk", DISK] if DISK else [],
                  # the stack's gateway path is dropped, other's run with its options
                  wrap=["sh", "-c", 'shift; exec "$0" "$@"', other] if other else [])
    ids = []
    try:
        tok = st.token(role="admin")
        gw = st.gw.pid
        time.sleep(2)
        gw_start, gw_fds0, redis0, avail0 = rss(gw), fds(gw), redis_used(st), meminfo("MemAvailable")
        stop_why = None
        failed = collections.Counter()  # a sandbox that did not start in time on a loaded host
        max_failed = max(10, N // 50)
        hb = HeartbeatWatch(st)
        hb.phase = "creating"
        t0 = time.monotonic()

        def create(_):
            return st.api_create_session(tok, {})

        with cf.ThreadPoolExecutor(CLIENTS) as ex:
            while len(ids) < N and not stop_why:
                batch = min(CLIENTS * 8, N - len(ids))
                for r in ex.map(lambda i: _try(create, i), range(batch)):
                    if isinstance(r, str):
                        ids.append(r)
                    else:
                        failed[str(r)[:160]] += 1
                if sum(failed.values()) > max_failed:
                    stop_why = f"more than {max_failed} creates failed"
                if meminfo("MemAvailable") < MIN_AVAIL:
                    stop_why = f"MemAvailable under {mib(MIN_AVAIL):.0f} MiB"
                elif time.monotonic() - t0 > MAX_S:
                    stop_why = f"{MAX_S:.0f} s spent creating"
        t_create = time.monotonic() - t0
        hb.phase = None
        n = len(ids)
        print(f"sessions created over REST: {n} of {N} in {t_create:.0f} s, "
              f"{n / t_create:.1f} sessions/s ({CLIENTS} clients at a time, warm pool of {st.pool}, "
              f"disks: {'--disk ' + DISK if DISK else 'the default'})"
              + (f"; stopped early: {stop_why}" if stop_why else ""))
        for why, count in failed.items():
            print(f"  failed creates: {count} x {why}")
        if not n:
            return 1

        def echo(sid):
            try:
                s, b, _ = st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true&timeout=120",
                                     {"action": "run", "args": {"command": "echo hi"}}, token=tok,
                                     timeout=180)
            except OSError:
                return False
            return s == 200 and b.get("observation", {}).get("content", "").strip() == "hi"

        t1 = time.monotonic()
        with cf.ThreadPoolExecutor(CLIENTS) as ex:
            ok = sum(ex.map(echo, ids))
        print(f"answered `echo hi`: {ok} of {n} ({time.monotonic() - t1:.0f} s for all)")
        log = st.gateway_log()
        print(f"executor links found dead while creating: "
              f"{log.count('executor stopped answering heartbeats')} (heartbeats), "
              f"{log.count('did not come up')} (pool sandboxes that did not come up)")
        time.sleep(12)  # idle sessions let go of what their work grew after 10 s
        procs, _ = sandbox_processes(st.state_dir)
        sb_pss = sum(pss(p) for p in procs)
        avail1 = meminfo("MemAvailable")
        gw_idle, gw_fds1, redis1 = rss(gw), fds(gw), redis_used(st)
        print(f"host memory per sandbox: MemAvailable {mib(avail0):.0f} -> {mib(avail1):.0f} MiB, "
              f"{kib(avail0 - avail1) / n:.0f} KiB each (everything on the host, other work "
              f"included); PSS of the sandboxes' {len(procs)} processes {mib(sb_pss):.0f} MiB, "
              f"{kib(sb_pss) / n:.0f} KiB each")
        print(f"gateway RSS: {mib(gw_start):.1f} MiB at start, {mib(gw_idle):.1f} MiB with {n} idle "
              f"sessions: {kib(gw_idle - gw_start) / n:.1f} KiB per idle session; descriptors "
              f"{gw_fds0} -> {gw_fds1} ({(gw_fds1 - gw_fds0) / n:.1f} per session)")
        print(f"Redis used_memory: {mib(redis0):.1f} -> {mib(redis1):.1f} MiB, "
              f"{kib(redis1 - redis0) / n:.1f} KiB per session (its record and events)")

        def delete(sid):
            try:
                return st.request("DELETE", f"/api/v1/sessions/{sid}", token=tok, timeout=120)[0]
            except OSError:
                return 0

        # One session stays while the others are deleted: its `echo hi` over REST, one after
        # the other, is what every other user of the gateway feels of the destroys.
        probe_sid, stop_probe, lat = ids[0], threading.Event(), []

        def probe():
            while not stop_probe.is_set():
                t = time.monotonic()
                if echo(probe_sid):
                    lat.append((time.monotonic() - t) * 1000)

        t2 = time.monotonic()
        hb.phase = "deleting"
        prober = threading.Thread(target=probe)
        prober.start()
        with cf.ThreadPoolExecutor(CLIENTS) as ex:
            statuses = collections.Counter(ex.map(delete, ids[1:]))
        stop_probe.set()
        prober.join()
        statuses[delete(probe_sid)] += 1
        hb.stop()
        lat.sort()
        if lat:
            print(f"another session's `echo hi` over REST while the others were deleted: "
                  f"n={len(lat)} p50={lat[len(lat) // 2]:.1f} ms p99={lat[len(lat) * 99 // 100]:.1f} ms "
                  f"max={lat[-1]:.1f} ms")
        print(f"the gateway's heartbeat key (TTL 5000 ms), lowest PTTL seen: "
              f"{hb.low.get('creating', '-')} ms while creating, "
              f"{hb.low.get('deleting', '-')} ms while deleting")
        deleted = statuses[200] + statuses[204]
        t_del = time.monotonic() - t2
        ids = []
        deadline = time.monotonic() + 120
        while sandbox_processes(st.state_dir)[0] and time.monotonic() < deadline:
            time.sleep(1)
        time.sleep(3)  # the gateway trims its heap on its next tick
        gw_end = rss(gw)
        print(f"deleted: {deleted} of {n} in {t_del:.0f} s (HTTP statuses {dict(statuses)}); gateway RSS after: {mib(gw_end):.1f} MiB "
              f"(start {mib(gw_start):.1f} MiB, with the sessions {mib(gw_idle):.1f} MiB)")
        return 0 if ok == n and deleted == n and not stop_why else 1
    finally:
        st.stop()  # every sandbox destroyed, and checked for
        for name, value in old_limits.items():
            with open("/proc/sys/" + name.replace(".", "/"), "w") as f:
                f.write(str(value))


def _try(fn, arg):
    try:
        return fn(arg)
    except Exception as e:  # noqa: BLE001 - reported, creation stops
        return e


if __name__ == "__main__":
    sys.exit(main())
