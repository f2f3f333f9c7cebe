"""The integration scenarios every provider must pass, one test body each, run once per provider
(providers.py): a bwrap sandbox of the default runtime image and a Docker container of the same
image, each behind a real gateway and Redis. Streaming and exit codes, the shell's state across
commands, file actions and streamed transfers, durable actions across a gateway restart and
interrupts, memory and pids limits, no network, a sandbox killed from outside, OpenHands'
runtime behaviours (python, sudo, HOME, input(), a server on loopback), and the plugins (an
IPython cell, a browse of a page served inside the sandbox). One stack per provider."""
import hashlib
import http.client
import json
import os
import signal
import time
import unittest

from providers import PROVIDERS
from test_gateway_limits import StackCase, act, exit_code, run
from test_sandbox_security import SECCOMP_PROBE

# executor/net_hint.h's NET_HINT_NOTE
NO_NETWORK_NOTE = ("\n[This session has no network access: names do not resolve and nothing outside the "
                   "sandbox can be reached, so downloads and installs (pip, apt-get, git clone, curl) cannot "
                   "work here; retrying will not help.]")
PAGE = "<html><head><title>Inside</title></head><body><h1>Served inside</h1><p>from the sandbox</p></body></html>"


class Scenarios:
    """The shared test bodies; a subclass names the provider (PROVIDER) and is a StackCase."""
    PROVIDER = None

    @classmethod
    def setUpClass(cls):
        cls.prov = PROVIDERS[cls.PROVIDER]
        image = cls.prov.prepare()  # this tree's image, by its tag (see providers.py)
        cls.stack_args = {"provider": cls.PROVIDER, "pool": 1, "extra": ["--image", image]}
        StackCase.setUpClass.__func__(cls)

    def session(self, **params):
        sid = self.st.create_session(params=params or None)
        return sid, self.session_ws(sid)

    def wait_status(self, ws, status, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = ws.recv_json(timeout=max(0.1, deadline - time.monotonic()))
            if m.get("type") == "status" and m.get("status") == status:
                return m
        self.fail(f"no {status} status within {timeout} s" + self.log_tail())

    # ---- commands ----

    def test_output_streams_in_order_and_exit_codes_come_back(self):
        _, ws = self.session()
        ws.send_json({"type": "action", "id": "s", "action": {"action": "run", "args": {
            "command": "for i in 1 2 3; do echo line$i; sleep 0.3; done"}}})
        outputs, obs = [], None
        while obs is None:
            m = ws.recv_json(30)
            if m.get("type") == "output":
                outputs.append(m["data"])
            elif m.get("type") == "observation":
                obs = m["observation"]
        self.assertEqual("".join(outputs), "line1\nline2\nline3\n")
        self.assertGreater(len(outputs), 1, "the output came in one piece, not as it was made")
        self.assertEqual(exit_code(obs), 0)
        for cmd, code in (("false", 1), ("(exit 7)", 7), ("nosuchcommand", 127)):
            _, _, obs = run(ws, cmd)
            self.assertEqual(exit_code(obs), code, (cmd, obs))

    def test_cwd_and_env_persist_across_commands(self):
        _, ws = self.session()
        run(ws, "mkdir -p /tmp/d/e && cd /tmp/d/e && export SP_X=forty-two && y=local")
        _, out, obs = run(ws, "pwd; echo $SP_X $y; bash -c 'echo $SP_X'")
        self.assertEqual(obs["content"], "/tmp/d/e\nforty-two local\nforty-two")
        self.assertEqual(obs["extras"]["metadata"]["working_dir"], "/tmp/d/e")

    def test_interrupt_stops_the_running_command(self):
        _, ws = self.session()
        ws.send_json({"type": "action", "id": "long", "action": {"action": "run", "args": {
            # the output comes from the process to interrupt, so it runs when the signal is sent
            "command": "python3 -c \"import time; print('started', flush=True); time.sleep(600)\""}}})
        while ws.recv_json(30).get("type") != "output":
            pass
        ws.send_json({"type": "signal", "id": "sig", "signal": "INT"})
        while True:
            m = ws.recv_json(30)
            if m.get("type") == "observation":
                break
        self.assertEqual(exit_code(m["observation"]), 130, m)
        _, out, _ = run(ws, "echo next")
        self.assertEqual(out, "next\n")

    def test_a_command_past_its_timeout_keeps_running_and_takes_input(self):
        _, ws = self.session()
        _, _, obs = run(ws, "read -p 'name? ' n; echo hello $n", action_timeout=1)
        self.assertEqual(exit_code(obs), -1, obs)
        _, _, obs = act(ws, {"action": "run", "args": {"command": "sandpipe", "is_input": True}}, ident="i")
        self.assertIn("hello sandpipe", obs["content"])
        self.assertEqual(exit_code(obs), 0, obs)

    # ---- files ----

    def test_file_write_read_and_str_replace(self):
        _, ws = self.session()
        _, _, obs = act(ws, {"action": "write", "args": {"path": "/workspace/f.py", "content": "a = 1\nb = 2\n"}})
        self.assertEqual(obs["observation"], "write", obs)
        _, _, obs = act(ws, {"action": "edit", "args": {"path": "/workspace/f.py", "command": "str_replace",
                                                         "old_str": "b = 2", "new_str": "b = 3",
                                                         "impl_source": "oh_aci"}})
        self.assertIn("has been edited", obs["content"])
        _, _, obs = act(ws, {"action": "read", "args": {"path": "/workspace/f.py"}})
        self.assertEqual(obs["observation"], "read")
        self.assertIn("b = 3", obs["content"])
        _, _, obs = run(ws, "python -c 'import f; print(\"b =\", f.b)' && stat -c %U f.py")
        self.assertEqual(obs["content"], "b = 3\nopenhands")

    def http(self, method, path, body=None):
        """A REST files route straight to the session's gateway (it serves them itself)."""
        c = http.client.HTTPConnection("127.0.0.1", self.st.port, timeout=120)
        try:
            c.request(method, path, body=body, headers={"Authorization": "Bearer " + self.st.token()})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def test_upload_then_download_byte_identical(self):
        sid, ws = self.session()
        data = os.urandom(3 * 1024 * 1024 + 77)
        run(ws, "mkdir -p /workspace/up")
        st, body = self.http("PUT", f"/api/v1/sessions/{sid}/files/content?path=up/x.bin", data)
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body)["size"], len(data))
        _, _, obs = run(ws, "sha256sum /workspace/up/x.bin | cut -d' ' -f1")
        self.assertEqual(obs["content"], hashlib.sha256(data).hexdigest())
        run(ws, "head -c 1000000 /workspace/up/x.bin > /workspace/up/y.bin")
        st, got = self.http("GET", f"/api/v1/sessions/{sid}/files/download?path=up/y.bin")
        self.assertEqual(st, 200, got[:200])
        self.assertEqual(got, data[:1000000])

    # ---- limits and confinement ----

    def test_memory_limit_kills_the_hog_visibly_not_the_session(self):
        _, ws = self.session(memory=256 << 20)
        _, out, obs = run(ws, "python3 -c 'x = bytearray(600 << 20); x[::4096] = b\"y\" * len(x[::4096])'",
                          timeout=90)
        self.assertEqual(exit_code(obs), 137, (out, obs))  # SIGKILL by the OOM killer, seen as such
        _, out, obs = run(ws, "echo still")
        self.assertEqual(out, "still\n")

    def test_pids_limit_is_enforced(self):
        _, ws = self.session(pids=64)
        script = ("import os, signal\n"
                  "kids, err = [], None\n"
                  "try:\n"
                  "    for _ in range(200):\n"
                  "        p = os.fork()\n"
                  "        if p == 0:\n"
                  "            signal.pause()\n"
                  "        kids.append(p)\n"
                  "except OSError as e:\n"
                  "    err = e.errno\n"
                  "for p in kids:\n"
                  "    os.kill(p, signal.SIGKILL)\n"
                  "    os.waitpid(p, 0)\n"
                  "print(len(kids), err)\n")
        run(ws, f"cat > /tmp/forks.py <<'EOF'\n{script}EOF")
        _, _, obs = run(ws, "python3 /tmp/forks.py", timeout=60)
        n, err = obs["content"].split()
        self.assertEqual(err, "11", obs)  # EAGAIN: the limit, not the loop's end
        self.assertLess(int(n), 64)
        _, _, obs = run(ws, "/bin/echo forks again")
        self.assertEqual(obs["content"], "forks again")

    def test_no_network_by_default(self):
        _, ws = self.session()
        _, _, obs = run(ws, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; "
                            "curl -s -m 3 http://1.1.1.1 >/dev/null; echo rc=$?")
        self.assertEqual(obs["content"].split("\n"), ["lo", "rc=7"], obs)  # 7: cannot connect

    def test_a_failed_name_resolution_without_network_says_there_is_none(self):
        """With no network, a run whose output shows a name that did not resolve ends its
        suffix (shown after the content, as OpenHands' own notes) with a note saying so; a run
        that shows none has no note."""
        _, ws = self.session()
        for cmd in ("python3 -c \"import socket; socket.getaddrinfo('example.com', 80)\"",
                    "curl -sS http://example.com/ 2>&1", "git ls-remote https://example.com/x.git 2>&1"):
            _, _, obs = run(ws, cmd)
            self.assertNotEqual(exit_code(obs), 0, obs)
            self.assertTrue(obs["extras"]["metadata"]["suffix"].endswith(NO_NETWORK_NOTE), (cmd, obs))
            self.assertNotIn(NO_NETWORK_NOTE, obs["content"])
        _, _, obs = run(ws, "getent hosts example.com || echo not found")
        self.assertEqual(obs["content"], "not found")  # getent says nothing: no note to give
        self.assertEqual(obs["extras"]["metadata"]["suffix"], "\n[The command completed with exit code 0.]")

    def test_a_failed_name_resolution_in_ipython_without_network_says_there_is_none(self):
        """The same note in a run_ipython observation (which has no suffix: it ends the cell's
        output, before include_extra's lines): urllib's URLError and %pip's retries show the
        resolver's failure; a cell that shows none has no note."""
        _, ws = self.session()
        cells = ("import urllib.request\nurllib.request.urlopen('http://example.com/', timeout=5)",
                 "%pip install --disable-pip-version-check --retries 1 --timeout 3 --index-url "
                 "http://example.com/simple/ --trusted-host example.com sp-nothing")
        for code in cells:
            _, _, obs = act(ws, {"action": "run_ipython", "args": {"code": code}}, timeout=120)
            text = obs["content"]
            self.assertIn("Temporary failure in name resolution", text, (code, obs))
            cut = text.index("\n[Jupyter current working directory:")
            self.assertTrue(text[:cut].endswith(NO_NETWORK_NOTE), (code, obs))
        _, _, obs = act(ws, {"action": "run_ipython", "args": {"code": "print('no names here')",
                                                                "include_extra": False}}, timeout=120)
        self.assertEqual(obs["content"], "no names here")

    def test_seccomp_refuses_namespaces_keyrings_bpf_mounts_io_uring(self):
        # The same rules in both (gateway/sandbox/seccomp.c): io_uring_setup is what tells
        # sandpipe's profile from Docker's default, which allows it.
        _, ws = self.session()
        act(ws, {"action": "write", "args": {"path": "/workspace/probe.py", "content": SECCOMP_PROBE}})
        _, out, _ = run(ws, "python3 /workspace/probe.py; unshare -U true 2>/dev/null; echo unshare-U $?; "
                            "grep '^Seccomp:' /proc/self/status | tr -d '\\t'")
        self.assertEqual(out, "unshare EPERM\nsetns EPERM\nmount EPERM\nkeyctl EPERM\n"
                              "bpf EPERM\nperf_event_open EPERM\nclone3 ENOSYS\n"
                              "io_uring_setup ENOSYS\nptrace 0\nunshare-U 1\nSeccomp:2\n")

    def test_killed_from_outside_disconnects_only_its_session(self):
        a, wa = self.session()
        b, wb = self.session()
        run(wa, "echo up")
        self.prov.kill_from_outside(self.st, a)
        m = self.wait_status(wa, "ERROR_RUNTIME_DISCONNECTED", 3)
        self.assertTrue(m.get("message"), m)
        _, out, _ = run(wb, "echo fine")
        self.assertEqual(out, "fine\n")

    def test_gateway_restart_reattaches_mid_command(self):
        sid, ws = self.session()
        run(ws, "cd /tmp && export SP_KEPT=yes")
        ws.send_json({"type": "action", "id": "k", "action": {"action": "run", "args": {
            "command": "for i in $(seq 1 15); do echo k$i; sleep 0.1; done"}}})
        got = []
        while len([m for m in got if m.get("type") == "output"]) < 2:
            got.append(ws.recv_json(30))
        self.st.kill_gateway(signal.SIGKILL)
        time.sleep(1.0)  # the command goes on producing output while no gateway listens
        self.st.start_gateway()
        last = max(m["seq"] for m in got if "ts" in m)
        ws2 = self.session_ws(sid, since=last)
        while got[-1].get("type") != "observation":
            got.append(ws2.recv_json(30))
        text = "".join(m.get("data", "") for m in got if m.get("type") == "output")
        self.assertEqual(text, "".join(f"k{i}\n" for i in range(1, 16)))
        _, _, obs = run(ws2, "pwd; echo $SP_KEPT")
        self.assertEqual(obs["content"], "/tmp\nyes")

    # ---- OpenHands' runtime behaviours ----

    def test_openhands_behaviours(self):
        _, ws = self.session()
        _, out, obs = run(ws, "python --version")
        self.assertEqual(exit_code(obs), 0, out)
        self.assertTrue(obs["content"].startswith("Python 3."), obs)
        _, _, obs = run(ws, "echo $HOME; whoami; id -u; pwd")
        home, user, uid, pwd = obs["content"].split()
        self.assertEqual((home, user, pwd), ("/home/openhands", "openhands", "/workspace"))
        if self.prov.inside_uid:
            self.assertEqual(uid, self.prov.inside_uid)
        _, _, obs = run(ws, "sudo chown -R openhands:openhands /workspace && sudo touch /workspace/s "
                            "&& stat -c %U /workspace/s")
        # real sudo makes root's files; with one uid there is no one else to be
        self.assertEqual((exit_code(obs), obs["content"]),
                         (0, "root" if self.prov.root_inside else "openhands"), obs)
        _, _, obs = run(ws, "cd ~ && test -f .bashrc && echo hi > note && cat note && cd /workspace")
        self.assertEqual(obs["content"], "hi", obs)
        _, _, obs = run(ws, "touch /usr/x 2>&1; echo rc=$?")
        # the user may not write the image's files: a writable root is still root's
        self.assertIn("Permission denied" if self.prov.root_inside else "Read-only", obs["content"])
        _, _, obs = run(ws, "pip --version && git --version && rg --version | head -1")
        self.assertEqual(exit_code(obs), 0, obs)

    def test_user_and_logname_as_a_login_sets_them(self):
        """USER and LOGNAME name the sandbox user (whoami) in bash and in the IPython kernel; a
        session's env that sets them wins."""
        cell = {"action": "run_ipython", "args": {
            "code": "import os; print(os.environ['USER'], os.environ['LOGNAME'])", "include_extra": False}}
        for env, want in (({}, "openhands"), ({"USER": "agent", "LOGNAME": "agent"}, "agent")):
            _, ws = self.session(**({"env": env} if env else {}))
            _, _, obs = run(ws, 'whoami; echo "$USER $LOGNAME"')
            self.assertEqual(obs["content"], f"openhands\n{want} {want}", (env, obs))
            _, _, obs = act(ws, cell, timeout=120)
            self.assertEqual(obs["content"], f"{want} {want}", (env, obs))

    def test_input_to_python(self):
        _, ws = self.session()
        _, _, obs = act(ws, {"action": "run", "args": {"command": "python -c 'print(\"got\", input())'"}})
        self.assertEqual(exit_code(obs), -1, obs)
        _, _, obs = act(ws, {"action": "run", "args": {"command": "hello", "is_input": True}}, ident="y")
        self.assertIn("got hello", obs["content"])
        self.assertEqual(exit_code(obs), 0, obs)

    # ---- plugins, from the image ----

    def serve_page(self, ws, port):
        run(ws, f"mkdir -p /workspace/site && cat > /workspace/site/index.html <<'EOF'\n{PAGE}\nEOF")
        _, _, obs = run(ws, f"cd /workspace/site && (python3 -m http.server {port} --bind 127.0.0.1 "
                            f">/tmp/srv.log 2>&1 &) && cd /workspace && for i in $(seq 100); do "
                            f"curl -sf localhost:{port}/ >/dev/null && echo up && break; sleep 0.1; done")
        self.assertEqual(obs["content"], "up", obs)

    def test_ipython_cell_and_browse_run_in_the_image(self):
        _, ws = self.session()
        _, _, obs = act(ws, {"action": "run_ipython", "args": {"code": "import matplotlib, sys\n"
                                                                       "print(6 * 7, sys.executable)"}},
                        timeout=120)
        self.assertEqual(obs["observation"], "run_ipython", obs)
        self.assertIn("42 /opt/sandpipe/venv/bin/python3", obs["content"])  # the image's env
        self.serve_page(ws, 8765)
        _, _, obs = act(ws, {"action": "browse", "args": {"url": "http://127.0.0.1:8765/"}}, timeout=120)
        self.assertEqual(obs["observation"], "browse", obs)
        self.assertFalse(obs["extras"]["error"], obs["content"][:2000])
        self.assertIn("# Served inside", obs["content"])
        self.assertIn("from the sandbox", obs["content"])
        self.assertTrue(obs["extras"]["screenshot"].startswith("data:image/png;base64,"))


class BwrapScenarios(Scenarios, StackCase):
    PROVIDER = "bwrap"


class DockerScenarios(Scenarios, StackCase):
    PROVIDER = "docker"


if __name__ == "__main__":
    unittest.main()
