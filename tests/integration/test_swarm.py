"""deploy/swarm/ on a real single-node Docker Swarm (issue 34): `docker swarm init` on loopback
(unless this Docker is a manager already; the swarm is left as it was found), the stack's image
built here (deploy/swarm/images.sh), `deploy.sh` (`docker stack deploy`) brings up the front
(nginx + the API), the gateway (global, the node's Docker), Redis primary + replica and three
sentinels, through which the gateway and the API find the primary; a session end to end through the stack's nginx: created over REST, a command's output
read on its WebSocket stream; the gateway task's container killed: Swarm starts another task on
the node, the same gateway (its id from the node), which re-attaches the session: a second
command over REST, the stream read again from where it was, nothing lost or repeated. Then
`docker stack rm` and everything the stack made is removed (containers, sandboxes, volumes,
state directory, the test's image tag)."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import uuid

from spexec import ROOT
from stack import BUILD, free_port
from providers import docker, ensure_docker_image
from wsclient import WS, HandshakeError
from httpjson import http_json

SWARM = os.path.join(ROOT, "deploy", "swarm")


def request(port, method, path, body=None, token=None, timeout=60):
    return http_json("127.0.0.1", port, method, path, body, token, timeout)


def swarm_state():
    """(local node state, is a manager) of this Docker."""
    out = docker("info", "--format", "{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}")
    state, manager = out.split()
    return state, manager == "true"


class SwarmStack:
    """One deployment of deploy/swarm/stack.yml under a name of its own."""

    def __init__(self, fronts=1, pool=1):
        self.name = "spt" + uuid.uuid4().hex[:8]
        self.dir = tempfile.mkdtemp(prefix="sp-swarm-")
        self.port = free_port()
        self.gateway_prefix = self.name
        self.state_dir = f"/var/lib/sandpipe/{self.name}"
        self.image = f"sandpipe/stack:{self.name}"
        self.env = dict(os.environ, SANDPIPE_SWARM_DIR=self.dir, SANDPIPE_PORT=str(self.port),
                        SANDPIPE_STACK_IMAGE=self.image, SANDPIPE_FRONTS=str(fronts),
                        SANDPIPE_POOL=str(pool), SANDPIPE_GATEWAY_PREFIX=self.gateway_prefix,
                        SANDPIPE_STATE_DIR=self.state_dir,
                        SANDPIPE=os.path.join(BUILD, "sandpipe"))

    def run(self, *cmd, timeout=600):
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {r.stdout[-2000:]}{r.stderr[-3000:]}")
        return r.stdout

    def deploy(self):
        self.run(os.path.join(SWARM, "images.sh"), timeout=1200)
        self.run(os.path.join(SWARM, "deploy.sh"), self.name)

    def logs(self, service, tail=40):
        r = subprocess.run(["docker", "service", "logs", "--tail", str(tail), f"{self.name}_{service}"],
                           capture_output=True, text=True, timeout=60)
        return r.stdout[-4000:] + r.stderr[-2000:]

    def containers(self, service):
        return docker("ps", "-q", "--filter", f"label=com.docker.swarm.service.name={self.name}_{service}").split()

    def token(self, sub="swarm"):
        return subprocess.run([os.path.join(BUILD, "sandpipe"), "token", "--secret-file", f"{self.dir}/secret",
                               "--sub", sub, "--role", "user"], check=True, capture_output=True,
                              text=True).stdout.strip()

    def wait_gateways(self, n, timeout=180):
        """Until the API sees n live gateways through nginx; returns the health answer."""
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            try:
                st, health = request(self.port, "GET", "/api/v1/health", timeout=5)
                last = (st, health)
                if st == 200 and health.get("live_gateways") == n:
                    return health
            except OSError as e:
                last = e
            time.sleep(0.5)
        raise AssertionError(f"{n} live gateways not seen: {last}\n{self.logs('gateway')}\n{self.logs('front')}")

    def remove(self):
        subprocess.run(["docker", "stack", "rm", self.name], capture_output=True, timeout=120)
        label = f"label=com.docker.stack.namespace={self.name}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            left = docker("ps", "-aq", "--filter", label, check=False)
            nets = docker("network", "ls", "-q", "--filter", label, check=False)
            if not left and not nets:
                break
            time.sleep(0.5)
        for vol in docker("volume", "ls", "-q", "--filter", label, check=False).split():
            docker("volume", "rm", "-f", vol, check=False)
        # the sandboxes are the node's Docker's containers, not the stack's
        sandboxes = docker("ps", "-aq", "--filter", f"label=sandpipe.gateway", check=False).split()
        for c in sandboxes:
            gw = docker("inspect", "-f", '{{index .Config.Labels "sandpipe.gateway"}}', c, check=False)
            if gw.startswith(self.gateway_prefix + "-"):
                docker("rm", "-f", c, check=False)
        docker("image", "rm", self.image, check=False)
        shutil.rmtree(self.state_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def read_until(ws, pred, timeout=60):
    """Events of the stream until pred(event) holds; returns them all."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ev = ws.recv_json(timeout=max(0.1, deadline - time.monotonic()))
        if ev is None:
            break
        seen.append(ev)
        if pred(ev):
            return seen
    raise AssertionError(f"not seen on the stream: {seen[-10:]}")


class SwarmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("docker"):
            raise AssertionError("docker is not installed (scripts/install-deps.sh installs docker.io)")
        ensure_docker_image()
        state, manager = swarm_state()
        cls.initialised = False
        if state == "inactive":
            docker("swarm", "init", "--advertise-addr", "127.0.0.1")
            cls.initialised = True
        elif not (state == "active" and manager):
            raise AssertionError(f"this Docker is in a swarm as a worker ({state}): the test needs a manager")

    @classmethod
    def tearDownClass(cls):
        if cls.initialised:
            docker("swarm", "leave", "--force", check=False)

    def test_session_through_nginx_and_gateway_task_restarted(self):
        s = SwarmStack()
        try:
            t0 = time.monotonic()
            s.deploy()
            health = s.wait_gateways(1)
            gw = health["gateways"][0]["id"]
            self.assertTrue(gw.startswith(s.gateway_prefix + "-"), health)
            # the gateway and the API found the primary through the sentinels, which know it
            # and its two replicas
            sentinel = s.containers("sentinel-1")[0]
            with open(f"{s.dir}/sentinel.password") as f:
                auth = "REDISCLI_AUTH=" + f.read().strip()
            deadline = time.monotonic() + 60  # a sentinel learns of the replica from INFO (10 s)
            while True:
                info = docker("exec", "-e", auth, sentinel, "redis-cli", "-p", "26379", "--raw",
                              "SENTINEL", "master", "sandpipe")
                fields = dict(zip(info.split("\n")[::2], info.split("\n")[1::2]))
                if fields.get("num-slaves") == "2" or time.monotonic() > deadline:
                    break
                time.sleep(1)
            self.assertEqual((fields["ip"], fields["num-slaves"]), ("redis-1", "2"), info)
            self.assertIn("sentinel://", s.logs("gateway", tail=200))
            token = s.token()
            st, sess = request(s.port, "POST", "/api/v1/sessions", {}, token)
            self.assertEqual(st, 201, (sess, s.logs("gateway"), s.logs("front")))
            print(f"\n  deploy to first session READY: {time.monotonic() - t0:.1f} s", flush=True)
            sid = sess["id"]
            self.assertEqual(sess["gateway"], gw)

            # a command sent on the session's WebSocket (nginx routes it to the owner), its output
            # and observation read there
            ws = WS("127.0.0.1", s.port, f"/ws/sessions/{sid}?since=0&token={token}")
            ws.send_json({"type": "action", "id": "one",
                          "action": {"action": "run", "args": {"command": "echo one-$((6*7)); whoami"}}})
            before = read_until(ws, lambda e: e.get("type") == "observation")
            ws.close()
            obs = before[-1]["observation"]
            self.assertIn("one-42", obs["content"])
            self.assertIn("openhands", obs["content"])
            last = max(e["seq"] for e in before if "seq" in e)

            # the gateway task's container killed: Swarm starts a new task on this node, the same
            # gateway id, which re-attaches the session (its sandbox lives on)
            old = s.containers("gateway")
            self.assertEqual(len(old), 1, old)
            t_kill = time.monotonic()
            docker("kill", old[0])
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                now = s.containers("gateway")
                if now and now != old:
                    break
                time.sleep(0.5)
            self.assertNotEqual(s.containers("gateway"), old, s.logs("gateway"))
            health = s.wait_gateways(1)
            self.assertEqual(health["gateways"][0]["id"], gw)
            deadline, ev = time.monotonic() + 60, None
            while time.monotonic() < deadline:  # nginx follows the new task's address
                st, ev = request(s.port, "POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                 {"action": "run", "args": {"command": "echo two-$((6*7))"}}, token)
                if st == 200:
                    break
                time.sleep(0.5)
            self.assertEqual(st, 200, (ev, s.logs("gateway"), s.logs("front")))
            print(f"  gateway task killed to the next command answered: {time.monotonic() - t_kill:.1f} s",
                  flush=True)
            self.assertIn("two-42", ev["observation"]["content"])
            st, rec = request(s.port, "GET", f"/api/v1/sessions/{sid}", None, token)
            self.assertEqual((st, rec["status"], rec["gateway"]), (200, "READY", gw), rec)

            # the stream again from where it was read: the second command, each seq once
            # REST reached the new task through the API's fallback; a WebSocket needs nginx's own
            # route lookup, which follows once front.sh has seen the task's address (about a
            # second): a client reconnecting before that is refused and tries again
            deadline = time.monotonic() + 60
            while True:
                try:
                    ws = WS("127.0.0.1", s.port, f"/ws/sessions/{sid}?since={last}&token={token}")
                    break
                except (OSError, HandshakeError) as e:
                    if time.monotonic() > deadline:
                        raise AssertionError((e, s.logs("gateway", 60), s.logs("front", 60))) from e
                    time.sleep(0.5)
            after = read_until(ws, lambda e: e.get("type") == "observation" and "two-42" in
                               e["observation"].get("content", ""))
            ws.close()
            seqs = [e["seq"] for e in after if "seq" in e]
            self.assertEqual(seqs, list(range(last + 1, last + 1 + len(seqs))), after)
            self.assertNotIn("one-42", json.dumps(after))
        finally:
            s.remove()


if __name__ == "__main__":
    unittest.main()
