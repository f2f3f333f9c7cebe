"""Runtime images (images/sandpipe-image): sessions name them (unknown images are refused, the
host-/usr profile stays) and a build reuses the most specific tag that exists. What a sandbox of
an image looks like inside (OpenHands' runtime: python, sudo, a home of its own, input to a
running program, the plugins) is test_scenarios', run under bwrap and Docker alike. Real
debootstrap (the first build of the default image takes a few minutes and is cached in the
store), real bwrap, real Redis."""
import json
import os
import shutil
import tempfile
import unittest

from providers import ensure_default_image, image_tool
from stack import BUILD
from test_gateway_limits import StackCase, run


class ImageSandboxTest(StackCase):
    """Naming images in sessions. What a sandbox of an image does (python, sudo, HOME, input,
    plugins, limits) is test_scenarios', for every provider."""
    stack_args = {"pool": 1, "extra": ["--image", "default"]}

    @classmethod
    def setUpClass(cls):
        ensure_default_image()
        super().setUpClass()

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
        _, _, obs = run(ws, "echo $HOME; test -e /home/openhands && echo image || echo host")
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
