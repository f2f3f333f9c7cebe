"""The Docker provider against a real Docker engine (.ci/run starts dockerd): the image's
OpenHands behaviours (the test_images cases, run on Docker), the container's confinement (no
network, caps, read-only root, limits, its own uid), a container killed from outside, a gateway
restart re-attaching, pause/resume and the clean-up of containers a crashed gateway left.
No Docker daemon answering is a failure, never a skip."""
import json
import os
import signal
import subprocess
import time
import unittest

from stack import BUILD, Stack, containers_under
from test_gateway_limits import StackCase, exit_code, run
import test_images  # not its classes by name: discovery would run them here again

DOCKER_IMAGE = "sandpipe/runtime:default"


def docker(*args, check=True):
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {r.stderr}")
    return r.stdout.strip()


def ensure_docker_image():
    """The default image in both forms, with this build's executor (a no-op when it exists)."""
    r = subprocess.run(["docker", "version"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError("no Docker daemon answers (is dockerd running?): " + r.stderr[-500:])
    test_images.image_tool("build", "--docker")


def container_of(st, sid):
    sb = json.loads(st.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))
    return "sandpipe-" + sb["id"], sb


class DockerImageTest(test_images.ImageSandboxTest):
    """python, sudo, HOME, input(), http.server, unknown images: as with bwrap."""
    stack_args = {"pool": 1, "provider": "docker", "extra": ["--image", "default"]}
    inside_uid = None  # its own host uid (test_confinement_and_limits)

    @classmethod
    def setUpClass(cls):
        ensure_docker_image()
        StackCase.setUpClass.__func__(cls)

    def test_host_profile_is_kept(self):
        c = self.ws("/ws/control")
        r = self.st.call(c, "session.create", {"image": "host"})
        self.assertEqual(r.get("type"), "error", r)
        self.assertIn("runs images", r["error"]["message"])


class DockerContainerTest(StackCase):
    stack_args = {"pool": 0, "provider": "docker",
                  "extra": ["--image", "default", "--memory", str(256 << 20), "--pids", "200"]}

    @classmethod
    def setUpClass(cls):
        ensure_docker_image()
        super().setUpClass()

    def wait_status(self, ws, status, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = ws.recv_json(timeout=max(0.1, deadline - time.monotonic()))
            if m.get("type") == "status" and m.get("status") == status:
                return m
        self.fail(f"no {status} status within {timeout} s" + self.log_tail())

    def test_confinement_and_limits(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        name, sb = container_of(self.st, sid)
        info = json.loads(docker("inspect", name))[0]
        hc = info["HostConfig"]
        self.assertEqual(hc["NetworkMode"], "none")
        self.assertEqual(hc["CapDrop"], ["ALL"])
        self.assertIn("no-new-privileges", hc["SecurityOpt"])
        self.assertTrue(hc["ReadonlyRootfs"])
        self.assertEqual((hc["Memory"], hc["PidsLimit"]), (256 << 20, 200))
        self.assertEqual(info["Config"]["Labels"]["sandpipe.sandbox"], sb["id"])
        self.assertEqual(info["Config"]["Labels"]["sandpipe.gateway"], "gw-test")
        _, _, obs = run(ws, "id -u; grep -c . /proc/net/dev; grep CapEff /proc/self/status; "
                            "curl -s -m 2 http://1.1.1.1 >/dev/null; echo net=$?")
        uid, ndev, cap, net = obs["content"].split("\n")
        self.assertEqual(int(uid), sb["uid"])  # its own host uid, never root
        self.assertGreaterEqual(sb["uid"], 1900000000)
        self.assertEqual(ndev, "3")  # the two header lines and lo
        self.assertTrue(cap.endswith("0000000000000000"), cap)
        self.assertNotEqual(net, "net=0")
        # memory: a process past the limit is killed, the sandbox lives on
        _, _, obs = run(ws, "python3 -c 'x = bytearray(400 << 20)'; echo rc=$?", timeout=60)
        self.assertIn("rc=137", obs["content"])
        _, _, obs = run(ws, "echo still")
        self.assertEqual(obs["content"], "still")
        usage = self.st.call(self.ws("/ws/control"), "session.get", {"session": sid})
        self.assertEqual(usage["result"]["provider"], "docker", usage)

    def test_killed_container_disconnects_only_its_session(self):
        a, b = self.st.create_session(), self.st.create_session()
        wa, wb = self.session_ws(a), self.session_ws(b)
        run(wa, "echo up")
        name, _ = container_of(self.st, a)
        docker("kill", name)
        m = self.wait_status(wa, "ERROR_RUNTIME_DISCONNECTED", 3)
        self.assertTrue(m.get("message"), m)
        _, _, obs = run(wb, "echo fine")
        self.assertEqual(obs["content"], "fine")

    def test_pause_and_resume(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        run(ws, "x=41")
        name, _ = container_of(self.st, sid)
        c = self.ws("/ws/control")
        r = self.st.call(c, "session.pause", {"session": sid})
        self.assertEqual(r["result"]["status"], "PAUSED", r)
        self.assertEqual(docker("inspect", "-f", "{{.State.Paused}}", name), "true")
        r = self.st.call(c, "session.resume", {"session": sid})
        self.assertEqual(r["result"]["status"], "READY", r)
        _, _, obs = run(ws, "echo $((x+1))")
        self.assertEqual(obs["content"], "42")

    def test_delete_removes_the_container(self):
        sid = self.st.create_session()
        name, sb = container_of(self.st, sid)
        c = self.ws("/ws/control")
        self.st.call(c, "session.delete", {"session": sid})
        for _ in range(100):
            if not docker("ps", "-aq", "--filter", f"name={name}") and not os.path.exists(sb["dir"]):
                break
            time.sleep(0.1)
        self.assertEqual(docker("ps", "-aq", "--filter", f"name={name}"), "")
        self.assertFalse(os.path.exists(sb["dir"]))


class DockerRestartTest(unittest.TestCase):
    """A gateway restart re-attaches to running containers; stopped ones are cleaned up."""

    def test_restart_reattaches_and_cleans_orphans(self):
        ensure_docker_image()
        st = Stack(provider="docker", pool=0, extra=["--image", "default"])
        try:
            live, dead = st.create_session(), st.create_session()
            ws = st.ws(f"/ws/sessions/{live}")
            run(ws, "cd /tmp && y=7")
            ws.close()
            dead_name, dead_sb = container_of(st, dead)
            st.kill_gateway(signal.SIGKILL)
            docker("stop", "-t", "0", dead_name)
            st.start_gateway()
            ws = st.ws(f"/ws/sessions/{live}")
            _, _, obs = run(ws, "pwd; echo $y")
            self.assertEqual(obs["content"], "/tmp\n7")
            for _ in range(100):
                if not docker("ps", "-aq", "--filter", f"name={dead_name}"):
                    break
                time.sleep(0.1)
            self.assertEqual(docker("ps", "-aq", "--filter", f"name={dead_name}"), "", st.gateway_log())
            self.assertIn("left by an earlier run", st.gateway_log())
        finally:
            st.stop()
        self.assertEqual(containers_under(st.state_dir), [])


if __name__ == "__main__":
    unittest.main()
