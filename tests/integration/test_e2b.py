"""E2B's control API (api/e2b/) driven by the real npm e2b SDK (tests/e2b/, pinned by its
package-lock.json; `make e2b-sdk` installs it) against a real stack: redis, a gateway with bwrap
sandboxes, sandpipe-netd, sandpipe-api and nginx, E2B_API_URL=<origin>/e2b and a sandpipe user
token as E2B_API_KEY. Each test runs one file of tests/e2b/ with node's test runner."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from apistack import ApiStack
from spexec import ROOT

STACK = None
E2B = os.path.join(ROOT, "tests", "e2b")


def setUpModule():
    global STACK
    if not shutil.which("node"):
        raise AssertionError("node is needed (scripts/install-deps.sh installs it)")
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < 20:
        raise AssertionError(f"the e2b SDK needs Node.js 20 or later (it requires ES modules); node is {version}")
    if not os.path.exists(os.path.join(E2B, "node_modules", "e2b")):
        raise AssertionError("the e2b SDK is not installed (tests/e2b/node_modules): run make e2b-sdk")
    # netd (sandboxes may have a network: control's network rules), users allowed allow-lists
    # at most so that a role's refusal can be seen; no test here lets traffic leave the machine
    STACK = ApiStack(pool=2, netd={}, extra=["--network-roles", "admin=egress,user=allowlist"])


def tearDownModule():
    if STACK:
        STACK.stop()


def run_sdk_test(case, stack, name, timeout=300, **extra_env):
    origin = f"http://127.0.0.1:{stack.http_port}"
    env = dict(os.environ, SP_URL=origin, E2B_API_URL=f"{origin}/e2b", E2B_SANDBOX_URL=origin,
               E2B_API_KEY=stack.token(sub="alice", role="user"),
               SP_USER_TOKEN=stack.token(sub="alice", role="user"),
               SP_ADMIN_TOKEN=stack.token(sub="root", role="admin"), **extra_env)
    env.pop("E2B_DEBUG", None)
    env.pop("E2B_DOMAIN", None)
    r = subprocess.run(["node", "--test", "--test-reporter=spec", f"{name}.test.mjs"],
                       cwd=E2B, env=env, capture_output=True, text=True, timeout=timeout)
    out = r.stdout + r.stderr
    print(out)
    case.assertEqual(r.returncode, 0, f"tests/e2b/{name}.test.mjs failed:\n{out[-6000:]}")


class E2BSdk(unittest.TestCase):
    def run_sdk_test(self, name, timeout=300):
        run_sdk_test(self, STACK, name, timeout)

    def test_lifecycle(self):
        self.run_sdk_test("lifecycle")

    def test_persistence(self):
        """lifecycle onTimeout 'pause' and autoResume (tests/e2b/persistence.test.mjs)."""
        self.run_sdk_test("persistence")

    def test_commands(self):
        self.run_sdk_test("commands")

    def test_git(self):
        self.run_sdk_test("git")

    def test_files(self):
        self.run_sdk_test("files")

    def test_control(self):
        self.run_sdk_test("control")


class E2BTakeover(unittest.TestCase):
    """Two gateways behind one nginx: the one that owns a sandbox is killed with SIGKILL while an
    SDK's command runs (tests/e2b/takeover.test.mjs), or while sandboxes with autoResume are
    paused (tests/e2b/takeover_paused.test.mjs)."""

    def setUp(self):
        self.stack = ApiStack(pool=1, gateways=2)

    def tearDown(self):
        self.stack.stop()

    def run_with_pids(self, name):
        """The SDK test name, told the pid of each gateway ({gateway id: pid}) to kill."""
        st = self.stack
        pids = {st.gateway_id: st.gw.pid}
        pids.update({f"gw-test-{i + 2}": p.pid for i, p in enumerate(st.more_gws)})
        run_sdk_test(self, st, name, SP_GATEWAY_PIDS=json.dumps(pids))

    def test_command_outlives_its_gateway(self):
        self.run_with_pids("takeover")

    def test_paused_sandbox_auto_resumes_on_the_peer(self):
        self.run_with_pids("takeover_paused")


class E2BEnvdHosts(unittest.TestCase):
    """The SDK with E2B_API_URL and its key only (no E2B_SANDBOX_URL), as a deployment with TLS
    and a wildcard domain serves it: envd at https://49983-<id>.<domain>, ports at getHost
    (tests/e2b/hosts.test.mjs)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sp-e2b-tls-")
        self.cert, key = os.path.join(self.dir, "cert.pem"), os.path.join(self.dir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-days", "2", "-subj", "/CN=sandpipe test", "-addext",
                        "subjectAltName=IP:127.0.0.1,DNS:sp.localhost,DNS:*.sp.localhost",
                        "-keyout", key, "-out", self.cert], check=True, capture_output=True)
        self.stack = ApiStack(pool=1, tls=(self.cert, key), preview_domain="sp.localhost")

    def tearDown(self):
        self.stack.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_envd_and_ports_on_their_host_names(self):
        st = self.stack
        env = dict(os.environ, E2B_API_URL=f"https://127.0.0.1:{st.http_port}/e2b",
                   E2B_API_KEY=st.token(sub="alice", role="user"), NODE_EXTRA_CA_CERTS=self.cert,
                   NODE_OPTIONS="--import ./localhost_dns.mjs")
        for k in ("E2B_SANDBOX_URL", "E2B_DEBUG", "E2B_DOMAIN"):
            env.pop(k, None)
        r = subprocess.run(["node", "--test", "--test-reporter=spec", "hosts.test.mjs"], cwd=E2B,
                           env=env, capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        print(out)
        self.assertEqual(r.returncode, 0, f"tests/e2b/hosts.test.mjs failed:\n{out[-6000:]}")


if __name__ == "__main__":
    unittest.main()
