"""scripts/run.sh (make run) stops everything on Ctrl-C, also when its output goes to a pipe the
same Ctrl-C closed (make run | tee log): Redis, nginx, the API, the gateway and every sandbox
process (bwrap, the executor, what runs inside, a paused sandbox too) are gone within a bounded
wait. The real script through `make run`, with its knobs for ports, state directory and no
install/build step; Ctrl-C is SIGINT to the foreground process group, as a terminal sends it."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from spexec import MODE, ROOT
from stack import free_port, netd_names, proc_parents, unmount_under
from wsclient import WS

STOP_BOUND = 60  # seconds: generous, the point is that stopping ends


def proc_start_time(pid):
    """(start time, state) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[19]), fields[0]
    except (OSError, IndexError, ValueError):
        return None


def all_processes():
    """{pid: (ppid, cmdline, cwd)} of every process."""
    out = {}
    for pid, ppid in proc_parents().items():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        out[pid] = (ppid, cmd, cwd)
    return out


def started_by(root_pid, run_dir):
    """Every process this run started: the descendants of the command, and the processes that
    name the run directory or work in it (the sandboxes, double-forked away from the gateway)
    with theirs. Returned as {pid: (start time, cmdline)}."""
    procs = all_processes()
    roots = {root_pid} | {p for p, (_, cmd, cwd) in procs.items()
                          if run_dir in cmd or cwd.startswith(run_dir + "/")}
    found = set(roots)
    while True:
        more = {p for p, (pp, _, _) in procs.items() if pp in found and p not in found}
        if not more:
            break
        found |= more
    out = {}
    for p in found:
        st = proc_start_time(p)
        if st and st[1] != "Z" and p in procs:
            out[p] = (st[0], procs[p][1])
    return out


def still_alive(procs):
    """The processes of procs that still run (same pid and start time, not a zombie)."""
    alive = {}
    for p, (start, cmd) in procs.items():
        st = proc_start_time(p)
        if st and st[0] == start and st[1] != "Z":
            alive[p] = cmd
    return alive


def thaw(pid):
    """Thaws the freezer cgroup (v1 or v2) a process is in, if any."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        _, ctrl, path = line.split(":", 2)
        target = (f"/sys/fs/cgroup/freezer{path}/freezer.state", "THAWED") if ctrl == "freezer" \
            else (f"/sys/fs/cgroup{path}/cgroup.freeze", "0") if ctrl == "" else None
        if target and "/sandpipe/" in path:
            try:
                with open(target[0], "w") as f:
                    f.write(target[1])
            except OSError:
                pass


class RunScriptStops(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sp-run-")
        os.chmod(self.tmp, 0o711)  # sandboxes run as their own uids: the state dir is below
        self.run_dir = os.path.join(self.tmp, "run")
        self.gw_port, self.http_port = free_port(), free_port()
        self.env = dict(os.environ, SANDPIPE_NO_SETUP="1",
                        SANDPIPE_BUILD_DIR=os.path.join(ROOT, "build", MODE),
                        SANDPIPE_RUN_DIR=self.run_dir, SANDPIPE_PORT=str(self.http_port),
                        SANDPIPE_GATEWAY_PORT=str(self.gw_port), SANDPIPE_REDIS_PORT="0",
                        SANDPIPE_POOL="1", SANDPIPE_API_WORKERS="4")
        # netd's table, interfaces and pool of this run's own (another run may share the host)
        self.netd_table, ifprefix, pool = netd_names("sprun_", "r")
        self.env.update(SANDPIPE_NETD_TABLE=self.netd_table, SANDPIPE_NETD_IFPREFIX=ifprefix,
                        SANDPIPE_NETD_POOL=pool)
        self.proc = None
        self.procs = {}

    def tearDown(self):
        # Whatever a failed test left, by pid: what was running at Ctrl-C and what names the
        # run directory now (a sandbox started later). A frozen (paused) one is thawed first.
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        left = still_alive(self.procs)
        left.update(still_alive(started_by(self.proc.pid if self.proc else -1, self.run_dir)))
        for p in left:
            thaw(p)
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        unmount_under(self.tmp)  # sandboxes' own disks, when a failed test left them
        subprocess.run(["nft", "delete", "table", "inet", self.netd_table], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def wait_for_banner(self, read_output):
        """Polls read_output() (all output so far) until the banner; returns the token."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = re.search(r"token:\s+(\S+)", read_output())
            if m:
                return m.group(1)
            self.assertIsNone(self.proc.poll(), "make run ended early: " + read_output())
            time.sleep(0.2)
        self.fail("no banner from make run: " + read_output())

    def populate(self, token):
        """A warm pool, a session with a process of its own running, a paused session."""
        c = WS("127.0.0.1", self.gw_port, f"/ws/control?token={token}")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            c.send_json({"id": 1, "method": "pool", "params": {}})
            pool = c.recv_json(10)["result"]
            if any(p.get("ready", 0) >= 1 for p in pool.values()):
                break
            time.sleep(0.2)
        sessions = []
        for params in ({"network": True}, {}):  # make run's netd gives the first its link
            c.send_json({"id": 2, "method": "session.create", "params": params})
            r = c.recv_json(60)
            self.assertEqual(r.get("type"), "result", r)
            sessions.append(r["result"]["id"])
        s = WS("127.0.0.1", self.gw_port, f"/ws/sessions/{sessions[0]}?token={token}")
        s.send_json({"type": "action", "id": "bg", "action": {
            "action": "run", "args": {"command": "nohup sleep 600 >/dev/null 2>&1 & "
                                                 "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '"}}})
        deadline, obs = time.monotonic() + 60, None
        while time.monotonic() < deadline:
            m = s.recv_json(60)
            if m.get("type") == "observation":
                obs = m["observation"]
                break
        self.assertEqual((obs or {}).get("content", "").split()[-2:], ["eth0", "lo"], obs)
        c.send_json({"id": 3, "method": "session.pause", "params": {"session": sessions[1]}})
        r = c.recv_json(30)
        self.paused = r.get("type") == "result"
        s.close()
        c.close()

    def interrupt_and_expect_everything_gone(self):
        self.procs = started_by(self.proc.pid, self.run_dir)
        names = " ".join(cmd for _, cmd in self.procs.values())
        for what in ("redis-server", "sandpipe-netd", "sandpipe-gateway", "sandpipe-api", "nginx",
                     "bwrap", "sleep 600"):
            self.assertIn(what, names, "the run is not fully up: " + names)
        os.killpg(self.proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the group
        deadline = time.monotonic() + STOP_BOUND
        alive = still_alive(self.procs)
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = still_alive(self.procs)
        self.assertEqual(alive, {}, f"still running {STOP_BOUND} s after Ctrl-C")
        self.proc.wait(STOP_BOUND)
        sbdir = os.path.join(self.run_dir, "sandboxes")
        self.assertEqual([d for d in os.listdir(sbdir) if d.startswith("sb-")], [])
        # netd stopped after the sandboxes: their links went with them, and its rules with it
        r = subprocess.run(["nft", "list", "table", "inet", self.netd_table], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0, r.stdout)

    def test_ctrl_c_with_output_through_tee_stops_everything(self):
        log = os.path.join(self.tmp, "log")
        err = open(os.path.join(self.tmp, "stderr"), "w")
        self.proc = subprocess.Popen(["bash", "-c", f"make -s run | tee {log} >/dev/null"],
                                     cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=err, stdin=subprocess.DEVNULL,
                                     start_new_session=True)

        def output():
            try:
                with open(log) as f:
                    return f.read()
            except OSError:
                return ""
        token = self.wait_for_banner(output)
        self.populate(token)
        self.interrupt_and_expect_everything_gone()
        err.close()
        with open(os.path.join(self.tmp, "stderr")) as f:
            self.assertIn("stopping...", f.read())

    def test_ctrl_c_with_both_outputs_on_a_closed_pipe_stops_everything(self):
        # make run 2>&1 | reader, the reader gone before Ctrl-C: every write of the stop
        # handler, to stdout or stderr, meets a closed pipe.
        self.proc = subprocess.Popen(["make", "-s", "run"], cwd=ROOT, env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        os.set_blocking(self.proc.stdout.fileno(), False)
        seen = []

        def output():
            chunk = self.proc.stdout.read()
            if chunk:
                seen.append(chunk.decode(errors="replace"))
            return "".join(seen)
        token = self.wait_for_banner(output)
        self.populate(token)
        self.proc.stdout.close()
        self.interrupt_and_expect_everything_gone()


if __name__ == "__main__":
    unittest.main()
