#!/usr/bin/env python3
"""`make soak-swarm`: issue 34's three-node swarm, on this machine (opt-in: ~15 minutes and
~8 GB of disk while it runs). Three dockerds in namespaces made here (swarm_nodes.py: TEST-NET-2
addresses on a bridge of the test's own, nothing leaves the machine), all three Swarm managers
(node 1 inits, advertising 198.51.100.1; nodes 2 and 3 join), the stack's and the sessions'
images loaded into each (docker save | docker load, as deploy/swarm/images.sh; the rootfs store
bound read-only into each node instead of copied), deploy/swarm/deploy.sh with a front on every
node. Then:
  - 30 sessions created through node 1's nginx: sessions per node (balance);
  - node 3 frozen (every process of it, as a machine that hangs): how long until each of its
    sessions is ERROR_RUNTIME_DISCONNECTED in REST and has that status event in its events,
    whether every other session still answers a command, where new sessions land;
  - node 3 back, its gateway killed while frozen so that Swarm's agent starts the task again:
    the gateway live again, its sessions whose sandboxes still run READY again and answering;
  - the same again for the node the sentinels name as holding the Redis primary (each node
    holds one of the three Redis: node 3 a replica, unless it held the primary, then the first
    round is on node 2), with the failover's times: sentinel switch, and the first event of a
    survivor's running command stored after the freeze (and its output whole at the end).
Prints each count and time; exits 1 if an item-3 outcome is not what operations.md states.
Everything made is removed (stack, nodes, namespaces, bridge, directories, image tag). The
test's HTTP runs in the nodes' bridge's network namespace (swarm_nodes.Nodes.enter)."""
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, HERE)

from httpjson import http_json  # noqa: E402
from providers import ensure_docker_image  # noqa: E402
from stack import BUILD  # noqa: E402
from swarm_nodes import Nodes  # noqa: E402

SWARM = os.path.join(ROOT, "deploy", "swarm")
SESSIONS = 30
PORT = 8088  # each node's own network namespace: no clash with the host's
LOST = "ERROR_RUNTIME_DISCONNECTED"


class Run:
    def __init__(self):
        self.failures = []
        self.name = "sp3" + uuid.uuid4().hex[:6]
        self.dir = tempfile.mkdtemp(prefix="sp-swarm3-")
        self.image = f"sandpipe/stack:{self.name}"
        self.nodes = Nodes(3)
        n1 = self.nodes.nodes[0]
        self.env = dict(os.environ, DOCKER_HOST=n1.host, SANDPIPE_SWARM_DIR=self.dir,
                        SANDPIPE_PORT=str(PORT), SANDPIPE_STACK_IMAGE=self.image, SANDPIPE_FRONTS="3",
                        SANDPIPE_POOL="2", SANDPIPE_GATEWAY_PREFIX="gw",
                        SANDPIPE=os.path.join(BUILD, "sandpipe"))

    def check(self, ok, what):
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.failures.append(what)

    def sentinel_primary(self, avoid=None):
        """The Redis service the sentinels name as the primary (redis-N), asked on a node not
        avoid; None if none answers."""
        with open(f"{self.dir}/sentinel.password") as f:
            auth = "REDISCLI_AUTH=" + f.read().strip()
        for n in self.nodes.nodes:
            if n is avoid:
                continue
            rows = n.docker("ps", "--filter", f"label=com.docker.stack.namespace={self.name}", "--format",
                            '{{.ID}} {{.Label "com.docker.swarm.service.name"}}', check=False).splitlines()
            for c in [r.split()[0] for r in rows if "_sentinel-" in r]:
                out = n.docker("exec", "-e", auth, c, "timeout", "2", "redis-cli", "-p", "26379", "--raw",
                               "SENTINEL", "get-master-addr-by-name", "sandpipe", check=False, timeout=10)
                if out.startswith("redis-"):
                    return out.split()[0]
        return None

    def node_of(self, service, ask=None):
        """The node (swarm_nodes.Node) running service's task, as the manager ask (node 1)
        says."""
        host = (ask or self.nodes.nodes[0]).docker("service", "ps", "--filter", "desired-state=running",
                                          "--format", "{{.Node}}", f"{self.name}_{service}", check=False)
        return next((n for n in self.nodes.nodes if n.hostname == host.strip()), None)

    def api(self, node, method, path, body=None, timeout=60):
        return request_at(node.addr, method, path, body, self.token, timeout)

    def images(self):
        """The stack's image built here, it and the sessions' image into every node at once."""
        source = ensure_docker_image()
        subprocess.run(["docker", "build", "-q", "-t", self.image, "-f",
                        os.path.join(ROOT, "images", "stack.Dockerfile"), ROOT],
                       check=True, capture_output=True, timeout=1800)
        rootfs = os.path.basename(os.path.realpath("/var/lib/sandpipe/images/names/default"))
        tags = sorted({self.image, "sandpipe/runtime:default", f"sandpipe/runtime:{rootfs}", source})
        loads = " ".join(f">(docker -H {n.host} load -q >/dev/null)" for n in self.nodes.nodes[1:])
        subprocess.run(["bash", "-c", f"set -o pipefail; docker save {' '.join(tags)} | tee {loads} | "
                        f"docker -H {self.nodes.nodes[0].host} load -q >/dev/null; wait"],
                       check=True, timeout=1800)
        for n in self.nodes.nodes:  # tee's readers may still be writing when it ends
            deadline = time.monotonic() + 600
            while not n.docker("image", "ls", "-q", self.image) and time.monotonic() < deadline:
                time.sleep(1)

    def swarm(self):
        n1, others = self.nodes.nodes[0], self.nodes.nodes[1:]
        n1.docker("swarm", "init", "--advertise-addr", n1.addr, "--listen-addr", f"{n1.addr}:2377")
        token = n1.docker("swarm", "join-token", "-q", "manager")
        for n in others:
            n.docker("swarm", "join", "--token", token, "--advertise-addr", n.addr,
                     "--listen-addr", f"{n.addr}:2377", f"{n1.addr}:2377", timeout=180)

    def deploy(self):
        r = subprocess.run([os.path.join(SWARM, "deploy.sh"), self.name], env=self.env,
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"deploy.sh: {r.stdout[-2000:]}{r.stderr[-3000:]}")
        self.token = subprocess.run([os.path.join(BUILD, "sandpipe"), "token", "--secret-file",
                                     f"{self.dir}/secret", "--sub", "swarm3", "--role", "user"],
                                    check=True, capture_output=True, text=True).stdout.strip()

    def logs(self, service, tail=30):
        return self.nodes.nodes[0].docker("service", "logs", "--tail", str(tail), f"{self.name}_{service}",
                                          check=False, timeout=60)

    def health(self, node, live, timeout=300):
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            try:
                st, h = self.api(node, "GET", "/api/v1/health", timeout=5)
                last = (st, h)
                if st == 200 and h.get("live_gateways") == live:
                    return h
            except OSError as e:
                last = e
            time.sleep(1)
        raise RuntimeError(f"{live} live gateways not seen at {node.addr}: {last}\n{self.logs('gateway')}"
                           f"\n{self.logs('front')}")

    def remove(self):
        n1 = self.nodes.nodes[0]
        try:
            n1.docker("stack", "rm", self.name, check=False, timeout=60)
        except (OSError, subprocess.SubprocessError):
            pass
        self.nodes.remove()  # the nodes' containers, sandboxes and volumes go with their data roots
        subprocess.run(["docker", "image", "rm", self.image], capture_output=True, timeout=120)
        subprocess.run(["rm", "-rf", self.dir])


def request_at(addr, method, path, body, token, timeout):
    return http_json(addr, PORT, method, path, body, token, timeout)


def answers(run, node, sid, word):
    try:
        st, ev = run.api(node, "POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                         {"action": "run", "args": {"command": f"echo {word}-$((6*7))"}}, timeout=60)
    except OSError:
        return False
    return st == 200 and f"{word}-42" in json.dumps(ev)


def events(run, node, sid, since, kind=""):
    """Every event after since (paged), or None if the API did not answer 200."""
    out = []
    while True:
        st, r = run.api(node, "GET", f"/api/v1/sessions/{sid}/events?since={since}&limit=1000&type={kind}",
                        timeout=10)
        if st != 200:
            return None
        out += r["events"]
        if not r.get("more"):
            return out
        since = r["next_since"]


STREAM_LINES = 300  # a survivor's command during the loss: one line every 0.1 s


def lose(run, lost, via, owner, gateways, what):
    """One item-3 round: lost frozen (its gateway killed meanwhile), its sessions' status, the
    others', new sessions, a survivor's running command (its first event stored after the
    freeze, its output whole), the sentinels' switch if the primary was there, then thawed and
    re-attached. Requests go through via's nginx. New sessions are added to owner."""
    victim = f"gw-{lost.hostname}"
    mine = [s for s, g in owner.items() if g == victim]
    others = [s for s, g in owner.items() if g != victim]
    print(f"swarm3: round '{what}': node {lost.index} ({len(mine)} sessions on {victim}), "
          f"requests through node {via.index}", flush=True)
    for sid in owner:
        if not answers(run, via, sid, "before"):
            raise RuntimeError(f"{sid} does not answer before the loss\n{run.logs('gateway')}")
    seq0 = {}
    for sid in mine:
        st, evs = run.api(via, "GET", f"/api/v1/sessions/{sid}/events?since=0&limit=1")
        seq0[sid] = evs["last_seq"] if st == 200 else 0
    for svc in ("redis-1", "redis-2", "redis-3", "sentinel-1", "sentinel-2", "sentinel-3"):
        n = run.node_of(svc, via)
        print(f"swarm3:   {svc} on node {n.index if n else '?'}", flush=True)
    primary_before = run.sentinel_primary()
    primary_lost = run.node_of(primary_before or "redis-1", via) is lost
    print(f"swarm3:   the sentinels name {primary_before} the primary "
          f"({'on' if primary_lost else 'not on'} the node lost)", flush=True)
    # a survivor's command streams through the loss
    streamer = others[0]
    st, queued = run.api(via, "POST", f"/api/v1/sessions/{streamer}/actions",
                         {"action": "run", "args": {"command": f"for i in $(seq 1 {STREAM_LINES}); "
                                                               "do echo l$i; sleep 0.1; done"}})
    if st != 202:
        raise RuntimeError(f"streaming command: {st} {queued}")
    action = queued["seq"]
    time.sleep(2)
    gw_pid = int(lost.docker("inspect", "-f", "{{.State.Pid}}",
                             lost.docker("ps", "-q", "--filter",
                                         f"label=com.docker.swarm.service.name={run.name}_gateway")))
    st, r = run.api(via, "GET", f"/api/v1/sessions/{streamer}/events?since=0&limit=1")
    stream_seq = r["last_seq"]
    t_loss = time.monotonic()
    lost.freeze()
    os.kill(gw_pid, 9)  # delivered at the thaw: Swarm starts the task again
    rest_at, event_at, switch_at, first_event_at = {}, {}, None, None
    deadline = time.monotonic() + 120
    while (len(event_at) < len(mine) or first_event_at is None or
           (switch_at is None and primary_lost)) and time.monotonic() < deadline:
        if switch_at is None and primary_lost:
            p = run.sentinel_primary(avoid=lost)
            if p and p != primary_before:
                switch_at = time.monotonic() - t_loss
                print(f"swarm3:   the sentinels switched to {p} at {switch_at:.1f} s", flush=True)
        if first_event_at is None:
            try:
                st, r = run.api(via, "GET", f"/api/v1/sessions/{streamer}/events?since={stream_seq}&limit=1",
                                timeout=5)
                if st == 200 and r["events"]:
                    first_event_at = time.monotonic() - t_loss
            except OSError:
                pass
        for sid in mine:
            try:
                if sid not in rest_at:
                    st, rec = run.api(via, "GET", f"/api/v1/sessions/{sid}", timeout=5)
                    if st == 200 and rec.get("status") == LOST:
                        rest_at[sid] = time.monotonic() - t_loss
                if sid not in event_at:
                    evs = events(run, via, sid, seq0[sid], "status")
                    if evs and any(e.get("status") == LOST for e in evs):
                        event_at[sid] = time.monotonic() - t_loss
            except OSError:
                pass
        time.sleep(0.2)
    rest, evt = sorted(rest_at.values()), sorted(event_at.values())
    print(f"swarm3:   node loss to {LOST}: REST {len(rest)}/{len(mine)} (first {rest[0] if rest else 0:.1f} s,"
          f" last {rest[-1] if rest else 0:.1f} s), status event {len(evt)}/{len(mine)}"
          f" (last {evt[-1] if evt else 0:.1f} s)", flush=True)
    print(f"swarm3:   a survivor's running command: its first event stored after the freeze at "
          f"{first_event_at if first_event_at is not None else -1:.1f} s"
          + (f" ({first_event_at - switch_at:.1f} s after the sentinels' switch)"
             if switch_at is not None and first_event_at is not None else ""), flush=True)
    run.check(len(rest) == len(mine) and len(evt) == len(mine), f"{what}: all {len(mine)} lost sessions {LOST}")
    run.check(first_event_at is not None, f"{what}: a survivor's output stored during the loss")
    still = sum(answers(run, via, sid, "during") for sid in others)
    run.check(still == len(others), f"{what}: other sessions answering: {still}/{len(others)}")
    landed = {}
    for _ in range(6):
        st, s = run.api(via, "POST", "/api/v1/sessions", {}, timeout=120)
        key = s.get("gateway") if st == 201 else f"error {st}"
        landed[key] = landed.get(key, 0) + 1
        if st == 201:
            owner[s["id"]] = s["gateway"]
    run.check(victim not in landed and all(g in gateways for g in landed), f"{what}: 6 new sessions landed: {landed}")
    # the survivor's command, whole: every line once, in order
    deadline = time.monotonic() + STREAM_LINES * 0.1 + 120
    text = None
    while time.monotonic() < deadline:
        evs = events(run, via, streamer, action) or []
        if any(e.get("type") == "observation" and e.get("action") == action for e in evs):
            text = "".join(e.get("data", "") for e in evs if e.get("type") == "output" and e.get("action") == action)
            break
        time.sleep(1)
    lines = text.split() if text else []
    run.check(lines == [f"l{i}" for i in range(1, STREAM_LINES + 1)],
              f"{what}: the survivor's {STREAM_LINES} lines stored whole ({len(lines)} stored, "
              f"{len(set(lines))} distinct)")

    # the node back: its gateway task starts again and re-attaches what still runs there
    t_back = time.monotonic()
    lost.freeze(False)
    run.health(via, 3)
    back, deadline = {}, time.monotonic() + 180
    while len(back) < len(mine) and time.monotonic() < deadline:
        for sid in mine:
            if sid not in back:
                st, rec = run.api(via, "GET", f"/api/v1/sessions/{sid}", timeout=10)
                if st == 200 and rec.get("status") == "READY":
                    back[sid] = time.monotonic() - t_back
        time.sleep(0.5)
    again = sum(answers(run, via, sid, "after") for sid in back)
    print(f"swarm3:   node back: READY again {len(back)}/{len(mine)} (last {max(back.values(), default=0):.1f} s),"
          f" answering {again}/{len(back)}", flush=True)
    run.check(len(back) == len(mine) and again == len(back), f"{what}: lost node's sessions re-attached")


def main():
    run = Run()
    n1 = run.nodes.nodes[0]
    try:
        t = time.monotonic()
        run.nodes.start()
        run.nodes.enter()
        run.images()
        print(f"swarm3: nodes up, images in each: {time.monotonic() - t:.0f} s", flush=True)
        run.swarm()
        t = time.monotonic()
        run.deploy()
        h = run.health(n1, 3)
        gateways = sorted(g["id"] for g in h["gateways"])
        first = None
        owner = {}
        for i in range(SESSIONS):
            st, s = run.api(n1, "POST", "/api/v1/sessions", {}, timeout=120)
            if st != 201:
                raise RuntimeError(f"session {i}: {st} {s}\n{run.logs('gateway')}")
            if first is None:
                first = time.monotonic() - t
                print(f"swarm3: stack deploy to first session served: {first:.1f} s", flush=True)
            owner[s["id"]] = s["gateway"]
        per = {g: sum(1 for o in owner.values() if o == g) for g in gateways}
        print(f"swarm3: {SESSIONS} sessions per node: {per}", flush=True)
        run.check(max(per.values()) - min(per.values()) <= 1, f"balance within one session: {per}")
        # the sentinels need their view of the replicas (INFO every 10 s) before a loss
        deadline = time.monotonic() + 60
        while run.sentinel_primary() is None and time.monotonic() < deadline:
            time.sleep(1)
        primary_node = run.node_of(run.sentinel_primary() or "redis-1")
        replica_node = next(n for n in reversed(run.nodes.nodes) if n is not primary_node)
        via = next(n for n in run.nodes.nodes if n is not replica_node)
        lose(run, replica_node, via, owner, gateways, "a Redis replica's node")
        primary_node = run.node_of(run.sentinel_primary() or "redis-1")
        via = next(n for n in run.nodes.nodes if n is not primary_node)
        lose(run, primary_node, via, owner, gateways, "the Redis primary's node")
    finally:
        run.remove()
    print("swarm3: " + ("FAILED: " + "; ".join(run.failures) if run.failures else "all item-3 outcomes as stated"))
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
