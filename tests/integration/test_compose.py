"""compose.yaml with Debian's docker-compose 1.29 and a real Docker engine: the stack's image is
built here (images/stack.Dockerfile, FROM the local runtime image), `up` starts redis, the gateway
(Docker provider), the API and nginx, and the stack serves a session end to end through nginx:
a REST session, a command run in its container, its output; then `down` and no container left."""
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
from httpjson import http_json


def compose(project, env, *args, timeout=1200):
    r = subprocess.run(["docker-compose", "-p", project, "-f", os.path.join(ROOT, "compose.yaml"), *args],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"docker-compose {' '.join(args)} failed: {r.stdout[-2000:]}{r.stderr[-3000:]}")
    return r.stdout


def request(port, method, path, body=None, token=None, timeout=120):
    return http_json("127.0.0.1", port, method, path, body, token, timeout)


class ComposeTest(unittest.TestCase):
    def test_stack_serves_a_session_through_nginx(self):
        if not shutil.which("docker-compose"):
            self.fail("docker-compose is not installed (scripts/install-deps.sh installs it)")
        ensure_docker_image()
        d = tempfile.mkdtemp(prefix="sp-compose-")
        subprocess.run([os.path.join(BUILD, "sandpipe"), "token", "--secret-file", f"{d}/secret", "--generate"],
                       check=True)
        # Redis' passwords (compose.yaml's redis renders its ACL from them; no port published)
        subprocess.run([os.path.join(BUILD, "sandpipe"), "redis-acl", "--generate", "--dir", f"{d}/redis-auth",
                        "--template", os.path.join(ROOT, "redis", "users.acl")], check=True)
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
            # where its sandbox lives on the host: the source of its /workspace bind
            st, ev = request(port, "POST", f"/api/v1/sessions/{s['id']}/actions?wait=true",
                             {"action": "run", "args": {"command": "grep ' /workspace ' /proc/self/mountinfo"}},
                             token)
            self.assertEqual(st, 200, ev)
            src = ev["observation"]["content"].split()[3]
            sb_dir = os.path.dirname(src)
            self.assertTrue(sb_dir.startswith("/var/lib/sandpipe/compose/") and os.path.isdir(sb_dir), src)
            st, body = request(port, "DELETE", f"/api/v1/sessions/{s['id']}", None, token)
            self.assertIn(st, (200, 204), (body, compose(project, env, "logs", "--tail", "50", "gateway")))
            # answered once its container and its directory are gone (the gateway runs without
            # CAP_SYS_ADMIN: its destroy must not stop at an unmount it cannot make)
            self.assertFalse(os.path.exists(sb_dir), "the deleted session's sandbox directory is left on the host")
            # a session with a network: netd's link into its container (never a Docker bridge),
            # and neither Redis on the compose network nor the host's Docker bridge answers it
            rid = compose(project, env, "ps", "-q", "redis").strip()
            redis_ip = docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
                              rid).split()[0]
            st, s = request(port, "POST", "/api/v1/sessions", {"network": True}, token)
            self.assertEqual(st, 201, (s, compose(project, env, "logs", "--tail", "80")))
            probe = ("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '; "
                     f"for t in {redis_ip}/6379 172.17.0.1/{port}; do "
                     "(exec 3<>/dev/tcp/$t) 2>/dev/null && echo \"$t OPEN\" || echo \"$t refused\"; done")
            st, ev = request(port, "POST", f"/api/v1/sessions/{s['id']}/actions?wait=true",
                             {"action": "run", "args": {"command": probe}}, token)
            self.assertEqual(st, 200, ev)
            out = ev["observation"]["content"]
            self.assertIn("eth0 lo", out)
            self.assertIn(f"{redis_ip}/6379 refused", out)
            self.assertNotIn("OPEN", out)
            st, net = request(port, "GET", f"/api/v1/sessions/{s['id']}/network", None, token)
            self.assertEqual(st, 200, net)
            self.assertTrue(net["attached"], net)
            self.assertIn(f"{redis_ip}:6379", [r.get("dest") for r in net["refusals"]], net)
            request(port, "DELETE", f"/api/v1/sessions/{s['id']}", None, token)
            # Redis: no port on the host, and nothing for a client without a password (even on
            # the compose network); the gateway and the API got in as their users
            rid = compose(project, env, "ps", "-q", "redis").strip()
            bound = json.loads(docker("inspect", "-f", "{{json .NetworkSettings.Ports}}", rid)) or {}
            self.assertFalse(any(bound.values()), bound)
            out = compose(project, env, "exec", "-T", "redis", "redis-cli", "-h", "redis", "KEYS", "*")
            self.assertIn("NOAUTH", out)
            with open(f"{d}/redis-auth/redis-gateway.password") as f:
                auth = "REDISCLI_AUTH=" + f.read().strip()
            clients = compose(project, env, "exec", "-T", "-e", auth, "redis", "redis-cli", "-h", "redis",
                              "--user", "gateway", "CLIENT", "LIST")
            self.assertIn("user=gateway", clients)
            self.assertIn("user=api", clients)
        finally:
            compose(project, env, "down", "-t", "2")
            left = docker("ps", "-aq", "--filter", "label=sandpipe.gateway=gw-compose")
            if left:
                docker("rm", "-f", *left.split())
            shutil.rmtree(d, ignore_errors=True)
            # netd keeps its table while a sandbox's link lives; the containers are gone now
            subprocess.run(["nft", "delete", "table", "inet", env.get("SANDPIPE_NETD_TABLE", "sandpipe_compose")],
                           capture_output=True)
            shutil.rmtree("/var/lib/sandpipe/compose", ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
