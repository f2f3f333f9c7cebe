"""Issue 17: what a real OpenHands client still saw differ from upstream's action-execution server
(OpenHands 0.62.0 openhands/runtime/action_execution_server.py, openhands-aci 0.3.2's OHEditor),
each checked through /runtime/{session}/ and through a runtime's own URL (/rt-…, the Remote
Runtime API), against bwrap sandboxes:
- file actions and the editor act on any path the sandbox user may access, never on the host's;
- legacy `edit`/`read` events that carry only `translated_ipython_code` are decoded and run, as
  upstream's event deserializer (openhands/events/serialization/action.py) does;
- a long output keeps at least the lines upstream's tmux keeps;
- what execute_action cannot decode (event_from_dict) answers 500 "Internal server error: ..."
  with upstream's exception text, and upload_file refuses a relative destination."""
import enum
import http.client
import json
import os
import re
import tempfile
import time
import unittest
import uuid
from urllib.parse import urlparse

from apistack import ModuleStack
from stack import BUILD
from test_openhands_runtime import client_action

STACK = ModuleStack(pool=2)
setUpModule, tearDownModule = STACK.start, STACK.stop


# OpenHands 0.62's ACTION_TYPE_TO_CLASS keys, in its order (openhands/events/serialization/action.py),
# as members of a str Enum like its ActionType, so that Python itself writes their repr().
ActionType = enum.Enum("ActionType", [
    ("NULL", "null"), ("RUN", "run"), ("RUN_IPYTHON", "run_ipython"), ("BROWSE", "browse"),
    ("BROWSE_INTERACTIVE", "browse_interactive"), ("READ", "read"), ("WRITE", "write"), ("EDIT", "edit"),
    ("THINK", "think"), ("FINISH", "finish"), ("REJECT", "reject"), ("DELEGATE", "delegate"),
    ("RECALL", "recall"), ("CHANGE_AGENT_STATE", "change_agent_state"), ("MESSAGE", "message"),
    ("SYSTEM", "system"), ("CONDENSATION", "condensation"), ("CONDENSATION_REQUEST", "condensation_request"),
    ("MCP", "call_tool_mcp"), ("TASK_TRACKING", "task_tracking"), ("LOOP_RECOVERY", "loop_recovery")], type=str)
ActionSecurityRisk = enum.Enum("ActionSecurityRisk", [("UNKNOWN", -1), ("LOW", 0), ("MEDIUM", 1), ("HIGH", 2)],
                               type=int)


def not_defined(action):
    """The LLMMalformedActionError upstream raises for an unknown action type."""
    keys = {t: None for t in ActionType}.keys()
    return f"'{action['action']=}' is not defined. Available actions: {keys}"


def multipart(filename, data):
    boundary = os.urandom(16).hex()
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f'Content-Type: text/plain\r\n\r\n').encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def legacy_code(**arguments):
    """What OpenHands 0.18-0.23's CodeAct agent stored (function_calling.py):
    f'print(file_editor(**{arguments}))', arguments being the tool call's JSON as a Python dict."""
    return f"print(file_editor(**{arguments}))"


class Parity(unittest.TestCase):
    """Every check runs against both URLs of an action-execution server: /runtime/{session} (a
    session of the sandpipe API) and /rt-… (a runtime started through /openhands/start)."""

    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        owner = STACK.token(sub=f"agent-{uuid.uuid4().hex[:6]}", role="user")
        sid = STACK.api_create_session(owner)
        st, rt, _ = STACK.request("POST", "/openhands/start", {"image": "default", "session_id": uuid.uuid4().hex},
                                  headers={"X-API-Key": owner}, timeout=120)
        assert st == 200, rt
        rt_base = urlparse(rt["url"]).path
        rt_key = {"X-Session-API-Key": rt["session_api_key"]}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            st, alive, _ = STACK.request("GET", rt_base + "/alive", headers=rt_key, timeout=10)
            if st == 200 and alive == {"status": "ok"}:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"runtime {rt['runtime_id']} never came alive")
        cls.bases = [(f"/runtime/{sid}", {"X-Session-API-Key": owner}), (rt_base, rt_key)]
        cls.host = tempfile.mkdtemp(prefix="sp-oh17-host-")

    def each(self, check):
        """Runs check(base, key, tag) against each URL form, as a subtest; tag keeps the two
        sandboxes' paths apart in messages."""
        for base, key in self.bases:
            with self.subTest(url=base):
                check(base, key, "rt" if base.startswith("/rt-") else "runtime")

    def execute(self, base, key, action, **args):
        st, obs, _ = self.s.request("POST", f"{base}/execute_action", client_action(action, **args),
                                    headers=key, timeout=150)
        self.assertEqual(st, 200, obs)
        return obs

    def run_cmd(self, base, key, command):
        obs = self.execute(base, key, "run", command=command)
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0, obs)
        return obs["content"]

    def edit(self, base, key, **args):
        return self.execute(base, key, "edit", impl_source="oh_aci", **args)

    # ---- 1. paths outside /workspace: the sandbox is the boundary ----

    def test_editor_and_file_actions_work_outside_the_workspace(self):
        def check(base, key, tag):
            d = f"/tmp/oh17-{tag}"
            self.run_cmd(base, key, f"mkdir -p {d}")  # upstream's create makes no directories either
            obs = self.edit(base, key, command="create", path=f"{d}/a.py", file_text="x = 1\n")
            self.assertEqual(obs["content"], f"File created successfully at: {d}/a.py")
            obs = self.edit(base, key, command="str_replace", path=f"{d}/a.py", old_str="x = 1", new_str="x = 2")
            self.assertTrue(obs["content"].startswith(f"The file {d}/a.py has been edited."), obs["content"])
            obs = self.execute(base, key, "read", path=f"{d}/a.py", impl_source="oh_aci", view_range=None)
            self.assertEqual(obs["content"],
                             f"Here's the result of running `cat -n` on {d}/a.py:\n     1\tx = 2\n     2\t\n")
            obs = self.edit(base, key, command="view", path=d)
            self.assertIn(f"{d}/a.py", obs["content"])
            obs = self.execute(base, key, "write", path="/var/tmp/oh17/w.txt", content="one\ntwo", start=0, end=-1)
            self.assertEqual((obs["observation"], obs["extras"]["path"]), ("write", "/var/tmp/oh17/w.txt"), obs)
            obs = self.execute(base, key, "read", path="/var/tmp/oh17/w.txt", start=0, end=-1, impl_source="default",
                               view_range=None)
            self.assertEqual((obs["observation"], obs["content"]), ("read", "one\ntwo\n"), obs)
            # What the sandbox itself sees, and the sandbox's own files outside the workspace.
            self.assertEqual(self.run_cmd(base, key, f"cat {d}/a.py /var/tmp/oh17/w.txt"), "x = 2\none\ntwo")
            obs = self.execute(base, key, "read", path="/etc/hostname", start=0, end=-1, impl_source="default",
                               view_range=None)
            self.assertEqual(obs["content"], "sandbox\n")
            # Relative paths keep their meaning: the working directory.
            self.run_cmd(base, key, "cd /tmp")
            obs = self.execute(base, key, "read", path=f"oh17-{tag}/a.py", start=0, end=-1, impl_source="default",
                               view_range=None)
            self.assertEqual((obs["extras"]["path"], obs["content"]), (f"{d}/a.py", "x = 2\n"))
            self.run_cmd(base, key, "cd /workspace")
        self.each(check)

    def test_missing_and_refused_paths_get_upstream_texts(self):
        def check(base, key, tag):
            missing = f"/opt/oh17-{tag}/none.py"
            obs = self.edit(base, key, command="view", path=missing)
            self.assertEqual(obs["content"], f"ERROR:\nInvalid `path` parameter: {missing}. The path {missing} "
                                             "does not exist. Please provide a valid path.")
            obs = self.edit(base, key, command="str_replace", path=missing, old_str="a", new_str="b")
            self.assertEqual(obs["content"], f"ERROR:\nInvalid `path` parameter: {missing}. The path {missing} "
                                             "does not exist. Please provide a valid path.")
            obs = self.execute(base, key, "read", path=missing, start=0, end=-1, impl_source="default",
                               view_range=None)
            self.assertEqual((obs["observation"], obs["content"]),
                             ("error", f"File not found: {missing}. Your current working directory is /workspace."))
            # Permission denied, in Python's words (upstream's open() raising PermissionError/OSError).
            self.run_cmd(base, key, "echo s > /tmp/locked && chmod 000 /tmp/locked")
            obs = self.execute(base, key, "read", path="/tmp/locked", start=0, end=-1, impl_source="default",
                               view_range=None)
            self.assertEqual((obs["observation"], obs["content"]),
                             ("error", "[Errno 13] Permission denied: '/tmp/locked'"))
            obs = self.edit(base, key, command="view", path="/tmp/locked")
            self.assertEqual(obs["content"], "ERROR:\nRan into [Errno 13] Permission denied: '/tmp/locked' "
                                             "while trying to read /tmp/locked")
            obs = self.edit(base, key, command="create", path="/usr/oh17.txt", file_text="x")
            self.assertEqual(obs["content"], "ERROR:\nRan into [Errno 30] Read-only file system: '/usr/oh17.txt' "
                                             "while trying to write to /usr/oh17.txt")
            obs = self.execute(base, key, "write", path="/usr/oh17.txt", content="x", start=0, end=-1)
            self.assertEqual((obs["observation"], obs["content"]),
                             ("error", "[Errno 30] Read-only file system: '/usr/oh17.txt'"))
            self.assertNotIn("not allowed", obs["content"])
        self.each(check)

    def test_host_files_stay_out_of_reach(self):
        """The sandbox is the boundary: a host file (in a host temp directory, and next to the
        build) is neither read nor written through the actions, whatever path names it."""
        secrets = [os.path.join(self.host, "secret.txt"), os.path.join(BUILD, f"oh17-secret-{os.getpid()}.txt")]
        try:
            for p in secrets:
                with open(p, "w") as f:
                    f.write("host secret\n")

            def check(base, key, _):
                for p in secrets:
                    obs = self.execute(base, key, "read", path=p, start=0, end=-1, impl_source="default",
                                       view_range=None)
                    self.assertEqual(obs["content"], f"File not found: {p}. Your current working directory is "
                                                     "/workspace.")
                    obs = self.edit(base, key, command="view", path=p)
                    self.assertIn("does not exist", obs["content"])
                    self.execute(base, key, "write", path=p, content="pwned", start=0, end=-1)
                    self.edit(base, key, command="create", path=p + ".new", file_text="pwned")
                    self.edit(base, key, command="str_replace", path=p, old_str="host", new_str="pwned")
                    self.assertNotIn("host secret", self.execute(base, key, "run", command=f"cat {p}")["content"])

            self.each(check)
            for p in secrets:
                with open(p) as f:
                    self.assertEqual(f.read(), "host secret\n")
                self.assertFalse(os.path.exists(p + ".new"))
        finally:
            for p in secrets:
                for q in (p, p + ".new"):
                    if os.path.exists(q):
                        os.unlink(q)

    # ---- 2. legacy events: translated_ipython_code ----

    def test_legacy_edit_with_only_translated_ipython_code_runs(self):
        def check(base, key, tag):
            path = f"/workspace/legacy-{tag}.py"
            code = legacy_code(command="create", path=path, file_text="hello")
            obs = self.execute(base, key, "edit", impl_source="oh_aci", translated_ipython_code=code)
            self.assertEqual(obs["content"], f"File created successfully at: {path}")
            self.assertEqual(obs["extras"]["path"], path)
            self.assertEqual(self.run_cmd(base, key, f"cat {path}"), "hello")
            # As stored by OpenHands 0.20 (function_calling.py): path and a dummy content beside the code;
            # strings with quotes, backslashes, newlines and non-ASCII text, as repr() writes them.
            new = "it's \"quoted\"\n\tback\\slash é\u2603"
            code = legacy_code(command="str_replace", path=path, old_str="hello", new_str=new)
            obs = self.execute(base, key, "edit", path=path, content="", start=1, end=-1, impl_source="oh_aci",
                               translated_ipython_code=code)
            self.assertTrue(obs["content"].startswith(f"The file {path} has been edited."), obs["content"])
            self.assertEqual((obs["extras"]["old_content"], obs["extras"]["new_content"]), ("hello", new))
            code = legacy_code(command="insert", path=path, insert_line=0, new_str="# head")
            obs = self.execute(base, key, "edit", path=path, content="", impl_source="oh_aci",
                               translated_ipython_code=code)
            self.assertIn("has been edited", obs["content"])
            self.assertEqual(self.run_cmd(base, key, f"cat {path}"), "# head\n" + new.replace("\t", "\t"))
            # A legacy view is a read action (its "command": "view" dropped, as upstream does).
            code = legacy_code(command="view", path=path, view_range=[1, 1])
            obs = self.execute(base, key, "read", path=path, impl_source="oh_aci", translated_ipython_code=code)
            self.assertEqual(obs["content"], f"Here's the result of running `cat -n` on {path}:\n     1\t# head\n")
            # An empty translated_ipython_code (every 0.18-0.23 event had the field) changes nothing.
            obs = self.edit(base, key, command="undo_edit", path=path, translated_ipython_code="")
            self.assertIn("undone successfully", obs["content"])
        self.each(check)

    def test_legacy_code_outside_the_one_call_shape_is_refused_clearly(self):
        def check(base, key, tag):
            path = f"/workspace/refused-{tag}.py"
            for code in ("print(file_editor(**{'command': 'create', 'path': f'" + path + "', 'file_text': 'x'}))",
                         "print(file_editor(**{'command': 'create', 'path': __import__('os').getcwd()}))",
                         "print(file_editor(**{'command': 'create', 'path': '" + path + "'))",
                         "import os; os.remove('/workspace/x')"):
                obs = self.execute(base, key, "edit", impl_source="oh_aci", translated_ipython_code=code)
                self.assertEqual(obs["observation"], "error", obs)
                self.assertTrue(obs["content"].startswith("Cannot decode translated_ipython_code: "), obs["content"])
            self.assertEqual(self.run_cmd(base, key, f"ls {path} 2>/dev/null; true"), "")
        self.each(check)

    # ---- 4. what execute_action cannot decode, and upload_file's destination ----

    def fails(self, base, key, action):
        """POSTs {"action": action}; returns the detail of the 500 it must get."""
        st, reply, _ = self.s.request("POST", f"{base}/execute_action", {"action": action}, headers=key,
                                      timeout=60)
        self.assertEqual(st, 500, reply)
        self.assertEqual(list(reply), ["detail"], reply)
        self.assertTrue(reply["detail"].startswith("Internal server error: "), reply)
        return reply["detail"][len("Internal server error: "):]

    def test_unknown_action_type_is_upstreams_500(self):
        def check(base, key, _):
            for action in ({"action": "teleport", "args": {"command": "true"}},
                           {"action": 5, "args": {}}, {"action": None}):
                self.assertEqual(self.fails(base, key, action), not_defined(action))
            # every type upstream knows decodes: those sandpipe does not run still get an observation
            st, obs, _ = self.s.request("POST", f"{base}/execute_action", {"action": {"action": "think"}},
                                        headers=key, timeout=60)
            self.assertEqual(st, 200, obs)
        self.each(check)

    def test_wrong_arguments_are_upstreams_500(self):
        def check(base, key, tag):
            a = client_action("run", command="x")["action"]
            del a["args"]["command"]
            args = dict(a["args"], security_risk=ActionSecurityRisk(-1))
            self.assertEqual(self.fails(base, key, a),
                             f"action={dict(a, args=args)} has the wrong arguments: CmdRunAction.__init__() "
                             "missing 1 required positional argument: 'command'")
            # upstream's own edits show: timestamp and keep_prompt dropped, is_confirmed renamed,
            # an invalid security_risk dropped; an unknown argument is refused and nothing runs
            mark = f"/tmp/oh17-wrong-{tag}"
            a = {"action": "run", "args": {"command": f"touch {mark}", "timestamp": "2025", "keep_prompt": False,
                                           "is_confirmed": "confirmed", "security_risk": "high", "colour": "red"}}
            self.assertEqual(self.fails(base, key, a),
                             "action={'action': 'run', 'args': {'command': 'touch " + mark + "', "
                             "'colour': 'red', 'confirmation_state': 'confirmed'}} has the wrong arguments: "
                             "CmdRunAction.__init__() got an unexpected keyword argument 'colour'")
            a = {"action": "write", "args": {"thought": "it's"}, "timeout": 1e15}
            self.assertEqual(self.fails(base, key, a),
                             f"action={a} has the wrong arguments: FileWriteAction.__init__() missing 2 required "
                             "positional arguments: 'path' and 'content'")
            self.assertEqual(self.fails(base, key, {"action": "run", "args": ["ls"]}),
                             "pop expected at most 1 argument, got 2")
            self.assertEqual(self.run_cmd(base, key, f"ls {mark} 2>/dev/null; true"), "")
        self.each(check)

    def test_observation_sent_as_action_is_upstreams_500(self):
        def check(base, key, _):
            obs = self.execute(base, key, "run", command="echo hi")
            self.assertEqual(self.fails(base, key, obs), "400: Invalid action type")
            self.assertEqual(self.fails(base, key, {"observation": "error", "content": "x", "extras": {}}),
                             "400: Invalid action type")
            self.assertEqual(self.fails(base, key, {"args": {"command": "ls"}}),
                             "Unknown event type: {'args': {'command': 'ls'}}")
        self.each(check)

    def test_upload_to_a_relative_destination_is_refused(self):
        def check(base, key, tag):
            body, ctype = multipart("rel.txt", b"rel")
            dest = f"oh17-rel-{tag}"
            c = http.client.HTTPConnection("127.0.0.1", self.s.http_port, timeout=60)
            try:
                c.request("POST", f"{base}/upload_file?destination={dest}", body=body,
                          headers=dict(key, **{"Content-Type": ctype}))
                resp = c.getresponse()
                st, reply = resp.status, resp.read()
            finally:
                c.close()
            # upstream raises HTTPException(400) inside its try; its except re-raises it as a 500
            self.assertEqual((st, json.loads(reply)), (500, {"detail": "400: Destination must be an absolute path"}))
            self.assertEqual(self.run_cmd(base, key, f"ls /workspace/{dest} 2>/dev/null; true"), "")
        self.each(check)

    # ---- 3. long outputs ----

    def test_long_output_keeps_at_least_what_upstream_shows(self):
        """Upstream (tmux 3.3a, 1000x1000 pane, history-limit 10000) shows this command's output
        from "Line 39989" with the prefix "... Showing the last 10013 lines ..." (measured)."""
        def check(base, key, _):
            obs = self.execute(base, key, "run", command='for i in {1..50000}; do echo "Line $i"; done')
            prefix = obs["extras"]["metadata"]["prefix"]
            m = re.fullmatch(r"\[Previous command outputs are truncated\. Showing the last (\d+) lines of the "
                             r"output below\.\]\n", prefix)
            self.assertIsNotNone(m, prefix)
            self.assertGreaterEqual(int(m.group(1)), 10013)
            content = obs["content"]
            first = int(re.match(r"Line (\d+)\n", content).group(1))
            self.assertLessEqual(first, 39989)
            self.assertEqual(int(m.group(1)), 50000 - first + 2)  # the lines shown and the last, empty one
            self.assertIn("\nLine 40000\n", content)
            self.assertIn("\n[... Observation truncated due to length ...]\n", content)
            self.assertTrue(content.endswith("\nLine 50000"), content[-40:])
        self.each(check)


if __name__ == "__main__":
    unittest.main()
