"""pip that installs (issue 30, item 2): the runtime image's Python is an environment of the
agent's own (images/setup.sh's venv, first on PATH, the IPython kernel's interpreter), so
`pip install` works where Debian's python answers "externally-managed-environment" (PEP 668), and
what `pip install` puts there, `import` finds in bash and in the jupyter plugin's kernel, and
the other way round with `%pip install`.

Run as OpenHands runs a runtime: its V0 start command through the Remote Runtime API's /start,
actions through /runtime/{id}/execute_action. The packages come from a PEP 503 index in the
test's outside world (networld.py: TEST-NET addresses in a namespace the test builds), reached
through the gateway's default network (egress: /start asks for none), with wheels the test
builds itself: no PyPI."""
import os
import unittest
import uuid

from networld import FILES_NAME, close_world_and_stack, world_and_api_stack
from providers import this_build_image
from test_oh_remote_runtime import V0RemoteRuntime, url_path

PYTHON_ENV = "/opt/sandpipe/venv"  # images/setup.sh's PYTHON_ENV
INDEX = f"--index-url http://{FILES_NAME}/simple/ --trusted-host {FILES_NAME}"  # plain HTTP: trusted
DEMO_TEXT = b'GREETING = "hello from sp_demo"\n'
KERNEL_TEXT = b'GREETING = "hello from sp_kernel_demo"\n'


def cell(code):
    return {"action": {"action": "run_ipython", "args": {
        "code": code, "thought": "", "include_extra": False, "confirmation_state": "confirmed",
        "security_risk": -1}, "timeout": 120.0}}


class PipInstalls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # this tree's setup.sh, by its tag; SANDPIPE_TEST_IMAGE (which Stack gives the gateway)
        # names another
        image = [] if os.environ.get("SANDPIPE_TEST_IMAGE") else ["--image", this_build_image()]
        def serve(world):
            world.add_wheel("sp_demo", "1.0", DEMO_TEXT)
            world.add_wheel("sp_kernel_demo", "1.0", KERNEL_TEXT)
        cls.world, cls.s = world_and_api_stack(serve, image)

    @classmethod
    def tearDownClass(cls):
        close_world_and_stack(cls.world, cls.s)

    def ipython(self, v0, code):
        st, obs, _ = self.s.request("POST", url_path(v0.runtime_url) + "/execute_action", cell(code),
                                    headers=v0.headers, timeout=180)
        self.assertEqual(st, 200, obs)
        self.assertEqual(obs["observation"], "run_ipython", obs)
        return obs["content"]

    def run_ok(self, v0, command):
        st, obs = v0.execute(command)
        self.assertEqual((st, obs["extras"]["metadata"]["exit_code"]), (200, 0), obs)
        return obs["content"]

    def test_pip_install_from_an_index_then_import_in_bash_and_ipython(self):
        v0 = V0RemoteRuntime(self, self.s, self.s.token(sub=f"u-{uuid.uuid4().hex[:8]}"), uuid.uuid4().hex)
        v0.connect()
        # the kernel runs before the install, as an agent's would: it must see what comes later
        self.assertEqual(self.ipython(v0, "import sys; print(sys.executable)"), f"{PYTHON_ENV}/bin/python3")
        self.assertEqual(self.run_ok(v0, "which python python3 pip pip3").split(),
                         [f"{PYTHON_ENV}/bin/{n}" for n in ("python", "python3", "pip", "pip3")])

        out = self.run_ok(v0, f"pip install --disable-pip-version-check {INDEX} sp-demo 2>&1")
        self.assertIn("Successfully installed sp-demo-1.0", out)
        self.assertNotIn("externally-managed-environment", out)
        self.assertEqual(self.run_ok(v0, "python -c 'import sp_demo; print(sp_demo.GREETING)'"),
                         "hello from sp_demo")
        self.assertEqual(self.ipython(v0, "import sp_demo; print(sp_demo.GREETING)"), "hello from sp_demo")

        out = self.ipython(v0, f"%pip install --disable-pip-version-check {INDEX} sp-kernel-demo")
        self.assertIn("Successfully installed sp-kernel-demo-1.0", out)
        self.assertEqual(self.ipython(v0, "import sp_kernel_demo; print(sp_kernel_demo.GREETING)"),
                         "hello from sp_kernel_demo")
        self.assertEqual(self.run_ok(v0, "python3 -c 'import sp_kernel_demo; print(sp_kernel_demo.GREETING)'"),
                         "hello from sp_kernel_demo")

        # both went into the image's environment, the agent's own (not ~/.local)
        where = self.run_ok(v0, "python -c 'import sp_demo, sp_kernel_demo; "
                                "print(sp_demo.__file__); print(sp_kernel_demo.__file__)'")
        site = f"{PYTHON_ENV}/lib/python3.11/site-packages"
        self.assertEqual(where.split("\n"), [f"{site}/sp_demo/__init__.py", f"{site}/sp_kernel_demo/__init__.py"])
        v0.close()


if __name__ == "__main__":
    unittest.main()
