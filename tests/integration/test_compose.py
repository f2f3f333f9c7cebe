"""compose.yaml with Debian's docker-compose 1.29 and a real Docker engine: the stack's image is
built here (images/stack.Dockerfile, FROM the local runtime image), `up` starts redis, the gateway
(Docker provider), the API and nginx, and the stack serves a session end to end through nginx:
a REST session, a command run in its container, its output; then `down` and no container left."""
import http.client
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


def compose(project, env, *args, timeout=1200):
    r = subprocess.run(["docker-compose", "-p", project, "-f", os.path.join(ROOT, "compose.yaml"), *args],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"docker-compose {' '.join(args)} failed: {r.stdout[-2000:]}{r.stderr[-3000:]}")
    return r.stdout


def request(port, method, path, body=None, token=None, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        hdrs = {"Content-Type": "application/json"}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        c.request(method, path, json.dumps(body) if body is not None else None, hdrs)
        r = c.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data[:1] in (b"{", b"[") else data
    finally:
        c.close()


class ComposeTest(unittest.TestCase):
    def test_stack_serves_a_session_through_nginx(self):
        if not shutil.which("docker-compose"):
            self.fail("docker-compose is not installed (scripts/install-deps.sh installs it)")
        ensure_docker_image()
        d = tempfile.mkdtemp(prefix="sp-compose-")
        subprocess.run([os.path.join(BUILD, "sandpipe"), "token", "--secret-file", f"{d}/secret", "--generate"],
                       check=True)
        port = free_port()
        project = "sptest" + uuid.uuid4().hex[:8]
        env = dict(os.environ, SANDPIPE_COMPOSE_DIR=d, SANDPIPE_PORT=str(port), SANDPIPE_POOL="1")
        compose(project, env, "build")
        try:
            compose(project, env, "up", "-d")
            deadline, st = time.monotonic() + 120, None
            while time.monotonic() < deadline:
                try:
                    st, health = request(port, "GET", "/api/v1/health", timeout=5)
                    if st == 200 and health.get("gateways"):
                        break
                except OSError:
                    pass
                time.sleep(0.5)
            self.assertEqual(st, 200, compose(project, env, "logs", "--tail", "50"))
            token = subprocess.run([os.path.join(BUILD, "sandpipe"), "token", "--secret-file", f"{d}/secret",
                                    "--sub", "compose", "--role", "user"], check=True, capture_output=True,
                                   text=True).stdout.strip()
            st, s = request(port, "POST", "/api/v1/sessions", {}, token)
            self.assertEqual(st, 201, (s, compose(project, env, "logs", "--tail", "50")))
            st, ev = request(port, "POST", f"/api/v1/sessions/{s['id']}/actions?wait=true",
                             {"action": "run", "args": {"command": "whoami; python --version; echo $HOME"}}, token)
            self.assertEqual(st, 200, ev)
            text = json.dumps(ev)
            self.assertIn("openhands", text)
            self.assertIn("Python 3.", text)
            self.assertIn("/home/openhands", text)
            st, _ = request(port, "DELETE", f"/api/v1/sessions/{s['id']}", None, token)
            self.assertIn(st, (200, 204))
        finally:
            compose(project, env, "down", "-t", "2")
            left = docker("ps", "-aq", "--filter", "label=sandpipe.gateway=gw-compose")
            if left:
                docker("rm", "-f", *left.split())
            shutil.rmtree(d, ignore_errors=True)
            shutil.rmtree("/var/lib/sandpipe/compose", ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
