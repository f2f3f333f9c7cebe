"""What is Docker's own in the Docker provider, against a real Docker engine (.ci/run starts
dockerd): the container's configuration (no network, caps, no-new-privileges, sandpipe's seccomp
profile, read-only root, limits, labels, its own uid), image names, pause/resume with docker
pause, removal, and a gateway restart: running containers re-attached, the warm pool's kept,
the ones nothing owns (stopped, or running without a session) removed, another gateway's left
alone. The scenarios every provider passes (commands, files, limits, kill from outside, restart
mid-command, OpenHands behaviours, plugins) are test_scenarios'. No Docker daemon answering is a
failure, never a skip."""
import json
import os
import signal
import time
import unittest

import shutil
import tempfile
import uuid

from apistack import ApiStack
from providers import container_of, docker, ensure_docker_image, image_tool
from stack import Stack, containers_under
from test_gateway_limits import StackCase, run
from test_oh_remote_runtime import API, build_request, run_action, url_path
import test_images  # not its classes by name: discovery would run them here again


class DockerImageTest(test_images.ImageSandboxTest):
    """Image names in sessions: as with bwrap, but "host" is refused."""
    stack_args = {"pool": 1, "provider": "docker", "extra": ["--image", "default"]}

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

    def test_container_configuration(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        name, sb = container_of(self.st, sid)
        info = json.loads(docker("inspect", name))[0]
        hc = info["HostConfig"]
        self.assertEqual(hc["NetworkMode"], "none")
        self.assertEqual(hc["CapDrop"], ["ALL"])
        self.assertTrue(hc["ReadonlyRootfs"])
        self.assertEqual((hc["Memory"], hc["PidsLimit"]), (256 << 20, 200))
        self.assertEqual(info["Config"]["Labels"]["sandpipe.sandbox"], sb["id"])
        self.assertEqual(info["Config"]["Labels"]["sandpipe.gateway"], "gw-test")
        # sandpipe's seccomp profile (the bwrap rules), not Docker's default
        self.assertEqual(hc["SecurityOpt"][0], "no-new-privileges")
        self.assertTrue(hc["SecurityOpt"][1].startswith("seccomp="), hc["SecurityOpt"])
        profile = json.loads(hc["SecurityOpt"][1][len("seccomp="):])
        self.assertEqual(profile["defaultAction"], "SCMP_ACT_ALLOW")
        denied = {n: r["errnoRet"] for r in profile["syscalls"] for n in r["names"]}
        self.assertEqual((denied["io_uring_setup"], denied["mount"], denied["clone3"]), (38, 1, 38))
        self.assertEqual([r["args"][0]["value"] for r in profile["syscalls"] if r["names"] == ["unshare"]],
                         [0x10000000])  # CLONE_NEWUSER only
        _, _, obs = run(ws, "id -u; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status")
        uid, cap, nnp = obs["content"].split("\n")
        self.assertEqual(int(uid), sb["uid"])  # its own host uid, never root
        self.assertGreaterEqual(sb["uid"], 1 << 30)
        self.assertTrue(cap.endswith("0000000000000000"), cap)
        self.assertEqual(nnp.split(), ["NoNewPrivs:", "1"])
        usage = self.st.call(self.ws("/ws/control"), "session.get", {"session": sid})
        self.assertEqual(usage["result"]["provider"], "docker", usage)

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


def container_state(name):
    """"running", "exited", ... or "" when there is no such container."""
    return docker("ps", "-a", "--filter", f"name=^{name}$", "--format", "{{.State}}")


def wait_gone(name, timeout=20):
    deadline = time.monotonic() + timeout
    while container_state(name) and time.monotonic() < deadline:
        time.sleep(0.1)
    return container_state(name) == ""


def pool_ids(st):
    key = f"sp:pool:{{default}}:{st.gateway_id}"
    return [json.loads(x)["id"] for x in st.redis("LRANGE", key, "0", "-1").split("\n") if x]


def wait_pool(st, n, timeout=60):
    deadline = time.monotonic() + timeout
    while len(pool_ids(st)) < n and time.monotonic() < deadline:
        time.sleep(0.1)
    return pool_ids(st)


class DockerRestartTest(unittest.TestCase):
    """A gateway restart re-attaches what it owns and removes the containers nothing owns; a
    container a peer's session holds (after a takeover it keeps our label) stays."""

    def test_restart_reattaches_keeps_pool_and_removes_orphans(self):
        ensure_docker_image()
        st = Stack(provider="docker", pool=1, extra=["--image", "default"])
        other = Stack(provider="docker", pool=0, extra=["--image", "default"], gateway_id="gw-other")
        try:
            live, dead, dropped, moved = (st.create_session() for _ in range(4))
            theirs = other.create_session()
            ws = st.ws(f"/ws/sessions/{live}")
            run(ws, "cd /tmp && y=7")
            ws.close()
            pool = wait_pool(st, 1, timeout=180)  # refilled after the claims, and started
            self.assertEqual(len(pool), 1, (pool, st.gateway_log()[-3000:]))
            pooled = pool[0]
            names = {k: container_of(st, s)[0] for k, s in
                     (("live", live), ("dead", dead), ("dropped", dropped), ("moved", moved))}
            names["pooled"] = "sandpipe-" + pooled
            names["theirs"] = container_of(other, theirs)[0]
            st.kill_gateway(signal.SIGKILL)
            docker("stop", "-t", "0", names["dead"])
            # "dropped" runs on, but no session holds it any more (deleted while the gateway
            # was down): its record is gone from this gateway's set
            st.redis("SREM", f"sp:gateway:{st.gateway_id}:sessions", dropped)
            self.assertEqual(container_state(names["dropped"]), "running")
            # "moved" is a peer's now (as a takeover leaves it): labelled ours, held by another
            st.redis("SMOVE", f"sp:gateway:{st.gateway_id}:sessions", "sp:gateway:gw-other:sessions", moved)
            st.start_gateway()
            ws = st.ws(f"/ws/sessions/{live}")
            _, _, obs = run(ws, "pwd; echo $y")
            self.assertEqual(obs["content"], "/tmp\n7")
            ws.close()
            log = st.gateway_log()
            self.assertTrue(wait_gone(names["dead"]), log)
            self.assertTrue(wait_gone(names["dropped"]), log)
            self.assertIn(f"sandbox {names['dropped'][len('sandpipe-'):]}, running), left by an earlier run", log)
            for kept in ("live", "pooled", "theirs", "moved"):
                self.assertEqual(container_state(names[kept]), "running", (kept, st.gateway_log()))
            self.assertEqual(pool_ids(st), [pooled])
            # the kept pool sandbox serves the next session
            sid = st.create_session()
            self.assertEqual(container_of(st, sid)[1]["id"], pooled)
            ows = other.ws(f"/ws/sessions/{theirs}")
            _, _, obs = run(ows, "echo theirs")
            self.assertEqual(obs["content"], "theirs")
            ows.close()
        finally:
            other.stop()
            st.stop()
        self.assertEqual(containers_under(st.state_dir), [])
        self.assertEqual(containers_under(other.state_dir), [])


class DockerBaseBuildTest(unittest.TestCase):
    """The Runtime API's /build from a local Docker image named in the context's FROM line: a
    real build (export, setup, the executor, docker import: about a minute and a half), one at a
    time, then the same base again reusing its lock tag; the built image runs a session."""

    def setUp(self):
        ensure_docker_image()
        self.tag = uuid.uuid4().hex[:8]
        self.base = f"sp-test-base:{self.tag}"
        ctx = tempfile.mkdtemp(prefix="sp-base-")
        try:
            with open(os.path.join(ctx, "marker"), "w") as f:
                f.write("from-the-base\n")
            with open(os.path.join(ctx, "Dockerfile"), "w") as f:
                f.write("FROM sandpipe/runtime:default\nCOPY marker /etc/sp-base-marker\n")
            docker("build", "-q", "-t", self.base, ctx, timeout=300)
        finally:
            shutil.rmtree(ctx)
        self.s = ApiStack(pool=0)
        self.key = self.s.token(sub="builder")
        self.built = []

    def tearDown(self):
        self.s.stop()
        if self.built:
            image_tool("rm", self.built[0], check=False)
        docker("rmi", self.base, check=False)

    def status(self, build_id):
        st, b, _ = self.s.request("GET", f"{API}/build_status?build_id={build_id}", headers={"X-API-Key": self.key})
        self.assertEqual(st, 200, b)
        return b

    def wait_build(self, build_id, limit=900):
        deadline, seen = time.monotonic() + limit, set()
        while time.monotonic() < deadline:
            b = self.status(build_id)
            seen.add(b["status"])
            if b["status"] != "BUILDING":
                return b, seen
            time.sleep(1)
        self.fail(f"build {build_id} still running after {limit} s")

    def test_build_from_a_local_docker_image_then_reuse_its_tags(self):
        target, again = f"sp-test/oh-built:{self.tag}", f"sp-test/oh-again:{self.tag}"
        st, b = build_request(self.s, self.key, f"FROM {self.base}\nRUN pip install openhands\n", target,
                              [f"{target}-alias"])
        self.assertEqual(st, 202, b)
        self.built += [target, f"{target}-alias"]
        first = b["build_id"]
        self.assertEqual(self.status(first)["status"], "BUILDING")
        st, b = build_request(self.s, self.key, f"FROM {self.base}\n", again)
        self.assertEqual(st, 409, b)  # one build at a time
        self.assertIn("one at a time", b["detail"])
        b, seen = self.wait_build(first)
        self.assertEqual((b["status"], b["image"]), ("SUCCESS", target), b)
        self.assertEqual(seen, {"BUILDING", "SUCCESS"})
        rootfs = image_tool("resolve", target).stdout.strip()
        self.assertEqual(image_tool("resolve", f"{target}-alias").stdout.strip(), rootfs)
        self.assertNotEqual(rootfs, image_tool("resolve", "default").stdout.strip())
        docker("image", "inspect", target)  # the Docker form too
        # the same base again: its lock and source tags exist, nothing is built
        st, b = build_request(self.s, self.key, f"FROM {self.base}\n", again)
        self.assertEqual(st, 202, b)
        self.built.append(again)
        b, _ = self.wait_build(b["build_id"], limit=120)
        self.assertEqual(b["status"], "SUCCESS", b)
        self.assertEqual(image_tool("resolve", again).stdout.strip(), rootfs)
        with open(os.path.join(self.s_store(), "builds", "b-" + again.encode().hex() + ".log")) as f:
            self.assertIn("nothing to build", f.read())
        # a session of the built image: the base's files, the runtime's user and executor
        st, rt = self.s.request("POST", API + "/start", {"image": target, "session_id": uuid.uuid4().hex},
                                headers={"X-API-Key": self.key})[:2]
        self.assertEqual(st, 200, rt)
        st, obs, _ = self.s.request("POST", url_path(rt["url"]) + "/execute_action",
                                    run_action("cat /etc/sp-base-marker; whoami"),
                                    headers={"X-Session-API-Key": rt["session_api_key"]}, timeout=120)
        self.assertEqual((st, obs["content"]), (200, "from-the-base\nopenhands"), obs)

    def test_a_failing_build_reports_failure_with_the_builders_error(self):
        # a base without /bin/sh: the builder refuses it after export, asynchronously
        bare = f"sp-test-bare:{self.tag}"
        ctx = tempfile.mkdtemp(prefix="sp-bare-")
        try:
            with open(os.path.join(ctx, "Dockerfile"), "w") as f:
                f.write("FROM scratch\nCOPY Dockerfile /nothing\n")
            docker("build", "-q", "-t", bare, ctx, timeout=300)
            st, b = build_request(self.s, self.key, f"FROM {bare}\n", f"sp-test/never:{self.tag}")
            self.assertEqual(st, 202, b)
            b, _ = self.wait_build(b["build_id"], limit=120)
            self.assertEqual(b["status"], "FAILURE", b)
            self.assertIn("no /bin/sh", b["error"])
            st, b, _ = self.s.request("GET", f"{API}/image_exists?image=sp-test/never:{self.tag}",
                                      headers={"X-API-Key": self.key})
            self.assertIs(b["exists"], False, b)
        finally:
            shutil.rmtree(ctx)
            docker("rmi", bare, check=False)

    def s_store(self):
        return os.environ.get("SANDPIPE_IMAGE_DIR", "/var/lib/sandpipe/images")


if __name__ == "__main__":
    unittest.main()
