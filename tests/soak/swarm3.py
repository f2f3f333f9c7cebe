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
    the gateway live again, its sessions whose sandboxes still run READY again and answering.
Prints each count and time; exits 1 if an item-3 outcome is not what operations.md states.
Everything made is removed (stack, nodes, namespaces, bridge, directories, image tag)."""
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


def main():
    run = Run()
    n1, lost = run.nodes.nodes[0], run.nodes.nodes[2]
    try:
        t = time.monotonic()
        run.nodes.start()
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
        victim = f"gw-{lost.hostname}"
        mine = [s for s, g in owner.items() if g == victim]
        others = [s for s, g in owner.items() if g != victim]
        for sid in owner:
            if not answers(run, n1, sid, "before"):
                raise RuntimeError(f"{sid} does not answer before the loss\n{run.logs('gateway')}")
        seq0 = {}
        for sid in mine:
            st, evs = run.api(n1, "GET", f"/api/v1/sessions/{sid}/events?since=0&limit=1")
            seq0[sid] = evs["last_seq"] if st == 200 else 0

        # where Redis and the sentinels run: a node's loss that takes the primary or its only
        # replica holds every write (Sentinel mode's WAIT 1) until a replica is back
        for svc in ("redis-1", "redis-2", "sentinel-1", "sentinel-2", "sentinel-3"):
            where = n1.docker("service", "ps", "--filter", "desired-state=running",
                              "--format", "{{.Node}}", f"{run.name}_{svc}", check=False)
            print(f"swarm3: {svc} on {where.strip() or '?'}", flush=True)
        # the node hangs; its gateway killed (delivered when it thaws) so Swarm starts it again
        gw_pid = int(lost.docker("inspect", "-f", "{{.State.Pid}}",
                                 lost.docker("ps", "-q", "--filter",
                                             f"label=com.docker.swarm.service.name={run.name}_gateway")))
        t_loss = time.monotonic()
        lost.freeze()
        os.kill(gw_pid, 9)
        print(f"swarm3: node 3 frozen ({len(mine)} sessions on {victim})", flush=True)
        rest_at, event_at, deadline = {}, {}, time.monotonic() + 120
        while len(event_at) < len(mine) and time.monotonic() < deadline:
            for sid in mine:
                if sid not in rest_at:
                    st, rec = run.api(n1, "GET", f"/api/v1/sessions/{sid}", timeout=10)
                    if st == 200 and rec.get("status") == LOST:
                        rest_at[sid] = time.monotonic() - t_loss
                if sid not in event_at:
                    st, evs = run.api(n1, "GET", f"/api/v1/sessions/{sid}/events?since={seq0[sid]}&type=status",
                                      timeout=10)
                    if st == 200 and any(e.get("status") == LOST for e in evs["events"]):
                        event_at[sid] = time.monotonic() - t_loss
            time.sleep(0.2)
        rest, evt = sorted(rest_at.values()), sorted(event_at.values())
        print(f"swarm3: node loss to {LOST}: REST {len(rest)}/{len(mine)} (first {rest[0] if rest else 0:.1f} s,"
              f" last {rest[-1] if rest else 0:.1f} s), status event {len(evt)}/{len(mine)}"
              f" (last {evt[-1] if evt else 0:.1f} s)", flush=True)
        run.check(len(rest) == len(mine) and len(evt) == len(mine), f"all {len(mine)} lost sessions {LOST}")
        still = sum(answers(run, n1, sid, "during") for sid in others)
        run.check(still == len(others), f"other sessions answering: {still}/{len(others)}")
        landed = {}
        for _ in range(6):
            st, s = run.api(n1, "POST", "/api/v1/sessions", {}, timeout=120)
            landed[s.get("gateway") if st == 201 else f"error {st}"] = landed.get(
                s.get("gateway") if st == 201 else f"error {st}", 0) + 1
        run.check(victim not in landed and all(g in gateways for g in landed), f"6 new sessions landed: {landed}")

        # the node back: its gateway task starts again and re-attaches what still runs there
        t_back = time.monotonic()
        lost.freeze(False)
        run.health(n1, 3)
        back, deadline = {}, time.monotonic() + 180
        while len(back) < len(mine) and time.monotonic() < deadline:
            for sid in mine:
                if sid not in back:
                    st, rec = run.api(n1, "GET", f"/api/v1/sessions/{sid}", timeout=10)
                    if st == 200 and rec.get("status") == "READY":
                        back[sid] = time.monotonic() - t_back
            time.sleep(0.5)
        again = sum(answers(run, n1, sid, "after") for sid in back)
        print(f"swarm3: node back: READY again {len(back)}/{len(mine)} (last {max(back.values(), default=0):.1f} s),"
              f" answering {again}/{len(back)}", flush=True)
        run.check(len(back) == len(mine) and again == len(back), "lost node's sessions re-attached")
    finally:
        run.remove()
    print("swarm3: " + ("FAILED: " + "; ".join(run.failures) if run.failures else "all item-3 outcomes as stated"))
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
