"""Runtime images (images/sandpipe-image) and sandboxes that run them: the bwrap provider with an
image's root filesystem looks like OpenHands' runtime (python, sudo, a home of its own, input to a
running program, a server on loopback), unknown images are refused, the host-/usr profile stays,
and a build reuses the most specific tag that exists. Real debootstrap (the first build of the
default image takes a few minutes and is cached in the store), real bwrap, real Redis."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from spexec import ROOT
from stack import BUILD
from test_gateway_limits import StackCase, act, exit_code, run

IMAGE_TOOL = os.path.join(ROOT, "images", "sandpipe-image")
PROVIDER = os.environ.get("SANDPIPE_TEST_PROVIDER", "bwrap")


def image_tool(*args, executor=None, check=True):
    env = dict(os.environ, SANDPIPE_EXECUTOR=executor or os.path.join(BUILD, "sandpipe-executor"))
    r = subprocess.run([IMAGE_TOOL, *args], capture_output=True, text=True, env=env, timeout=1800)
    if check and r.returncode != 0:
        raise RuntimeError(f"sandpipe-image {' '.join(args)} failed ({r.returncode}): {r.stderr[-3000:]}")
    return r


def ensure_default_image():
    """Builds the default image unless the store has it (a failed build fails the tests: no
    silent skip). Docker's form too where a Docker daemon answers."""
    if image_tool("resolve", "default", check=False).returncode != 0:
        image_tool("build")
    return image_tool("resolve", "default").stdout.strip()


class ImageSandboxTest(StackCase):
    stack_args = {"pool": 1, "extra": ["--image", "default"]}
    inside_uid = "1000"  # bwrap maps the sandbox's host uid to 1000; Docker runs it as itself

    @classmethod
    def setUpClass(cls):
        ensure_default_image()
        super().setUpClass()

    def sh(self, ws, command, **kw):
        _, out, obs = run(ws, command, **kw)
        return out, obs

    def test_openhands_behaviours(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        out, obs = self.sh(ws, "python --version")
        self.assertEqual(exit_code(obs), 0, out)
        self.assertIn("Python 3.", obs["content"])
        out, obs = self.sh(ws, "echo $HOME; whoami; id -u; pwd")
        home, user, uid, pwd = obs["content"].split()
        self.assertEqual((home, user, pwd), ("/home/openhands", "openhands", "/workspace"))
        self.assertEqual(uid, self.inside_uid or uid)
        out, obs = self.sh(ws, "sudo chown -R openhands:openhands /workspace && sudo touch /workspace/s "
                               "&& ls -l /workspace/s | awk '{print $3}'")
        self.assertEqual(exit_code(obs), 0, obs)
        self.assertEqual(obs["content"].strip(), "openhands")
        # A home of its own, seeded from the image's /etc/skel, writable; the root is not.
        out, obs = self.sh(ws, "cd ~ && test -f .bashrc && echo hi > note && cat note && cd /workspace")
        self.assertEqual(obs["content"].strip(), "hi", obs)
        out, obs = self.sh(ws, "touch /usr/x 2>&1; echo rc=$?")
        self.assertIn("rc=1", obs["content"])
        self.assertIn("Read-only", obs["content"])
        out, obs = self.sh(ws, "pip --version && git --version && rg --version | head -1 && curl --version | head -1")
        self.assertEqual(exit_code(obs), 0, obs)

    def test_input_to_python(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        _, _, obs = act(ws, {"action": "run", "args": {"command": "python -c 'print(\"got\", input())'"}})
        self.assertEqual(exit_code(obs), -1, obs)
        _, _, obs = act(ws, {"action": "run", "args": {"command": "hello", "is_input": True}}, ident="y")
        self.assertIn("got hello", obs["content"])
        self.assertEqual(exit_code(obs), 0, obs)

    def test_http_server_on_loopback(self):
        sid = self.st.create_session()
        ws = self.session_ws(sid)
        out, obs = self.sh(ws, "echo served > page.txt && (python3 -m http.server 8000 > /tmp/srv.log 2>&1 &) "
                               "&& for i in $(seq 100); do curl -sf localhost:8000/page.txt && break; sleep 0.1; done")
        self.assertEqual(obs["content"].strip(), "served", obs)

    def test_session_reports_its_image(self):
        c = self.ws("/ws/control")
        sid = self.st.create_session()
        r = self.st.call(c, "session.get", {"session": sid})
        self.assertEqual(r["result"]["image"], "default", r)

    def test_unknown_image_is_refused(self):
        c = self.ws("/ws/control")
        r = self.st.call(c, "session.create", {"image": "nosuch:image"})
        self.assertEqual(r.get("type"), "error", r)
        self.assertEqual(r["error"]["code"], "not_found", r)
        self.assertIn("no image \"nosuch:image\"", r["error"]["message"])
        r = self.st.call(c, "session.create", {"image": "../etc"})
        self.assertEqual(r["error"]["code"], "bad_request", r)
        r = self.st.call(c, "session.create", {"image": 7})
        self.assertEqual(r["error"]["code"], "bad_request", r)

    def test_host_profile_is_kept(self):
        sid = self.st.create_session(params={"image": "host"})
        ws = self.session_ws(sid)
        out, obs = self.sh(ws, "echo $HOME; test -e /home/openhands && echo image || echo host")
        self.assertEqual(obs["content"].split(), ["/workspace", "host"], obs)


class ImageBuildTest(unittest.TestCase):
    """Tags: a second build is a no-op; another executor changes the source tag only."""

    def test_rebuild_is_noop_and_executor_change_only_changes_source_tag(self):
        ensure_default_image()
        first = image_tool("build", "--no-docker")
        second = image_tool("build", "--no-docker")
        self.assertEqual(first.stdout, second.stdout)
        self.assertIn("nothing to build", second.stderr)
        tag = first.stdout.strip()
        lock = tag.rsplit("_", 1)[0]
        tmp = tempfile.mkdtemp(prefix="sp-img-")
        try:
            exe = os.path.join(tmp, "sandpipe-executor")
            shutil.copy(os.path.join(BUILD, "sandpipe-executor"), exe)
            with open(exe, "ab") as f:
                f.write(b"\0changed")
            other = image_tool("build", "--no-docker", executor=exe)
            new_tag = other.stdout.strip()
            self.assertNotEqual(new_tag, tag)
            self.assertEqual(new_tag.rsplit("_", 1)[0], lock)  # same lock tag: base reused
            self.assertIn("reusing its base", other.stderr)
            listed = json.loads(image_tool("ls", "--json").stdout)
            self.assertIn(new_tag, [i["name"] for i in listed])
        finally:
            image_tool("build", "--no-docker")  # "default" back to this build's executor
            store = os.environ.get("SANDPIPE_IMAGE_DIR", "/var/lib/sandpipe/images")
            if "new_tag" in locals():
                short = new_tag.split(":", 1)[1]
                shutil.rmtree(os.path.join(store, "rootfs", short), ignore_errors=True)
                os.unlink(os.path.join(store, "names", new_tag.replace("/", "+")))
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
