"""OpenHands bash behaviours against a real executor and real bash (plain process)."""
import os
import time
import unittest

from spexec import ExecutorTest


class BashTest(ExecutorTest):
    executor_args = {"extra_args": ["--no-change-timeout", "2"]}
    connection = "test"

    def setUp(self):
        super().setUp()
        self.session = self.id().rsplit(".", 1)[-1][:60]

    def run_cmd(self, command, **kw):
        return self.c.run(command, session=self.session, **kw)

    def meta(self, obs):
        return obs["extras"]["metadata"]

    def test_echo_observation_shape_and_texts(self):
        out, obs = self.run_cmd("echo hello")
        self.assertEqual(out, b"hello\n")
        self.assertEqual(obs["observation"], "run")
        self.assertEqual(obs["content"], "hello")
        self.assertEqual(obs["message"], "Command `echo hello` executed with exit code 0.")
        self.assertTrue(obs["success"])
        m = self.meta(obs)
        self.assertEqual(sorted(m), sorted(["exit_code", "pid", "username", "hostname", "working_dir",
                                            "py_interpreter_path", "prefix", "suffix"]))
        self.assertEqual(m["exit_code"], 0)
        self.assertEqual(m["pid"], -1)
        self.assertEqual(m["suffix"], "\n[The command completed with exit code 0.]")
        self.assertEqual(m["working_dir"], self.ex.ws_inside)

    def test_python_installed_later_shows_in_metadata(self):
        # py_interpreter_path is `which python` after each command, as upstream's PS1 has it:
        # a python that appears in PATH later is reported, with PATH itself unchanged.
        bindir = os.path.join(self.ex.ws_inside, "later-bin")
        _, obs = self.run_cmd(f"mkdir -p {bindir} && export PATH={bindir}:$PATH")
        self.assertNotEqual(self.meta(obs)["py_interpreter_path"], f"{bindir}/python")
        self.run_cmd(f"printf '#!/bin/sh\\n' > {bindir}/python && chmod +x {bindir}/python")
        seen = None
        deadline = time.monotonic() + 20
        while seen != f"{bindir}/python" and time.monotonic() < deadline:
            seen = self.meta(self.run_cmd("true")[1])["py_interpreter_path"]
            time.sleep(0.1)
        self.assertEqual(seen, f"{bindir}/python")

    def test_exit_codes(self):
        _, obs = self.run_cmd("false")
        self.assertEqual(self.meta(obs)["exit_code"], 1)
        self.assertFalse(obs["success"])
        _, obs = self.run_cmd("(exit 42)")
        self.assertEqual(self.meta(obs)["exit_code"], 42)
        self.assertEqual(self.meta(obs)["suffix"], "\n[The command completed with exit code 42.]")

    def test_previous_exit_status_visible(self):
        self.run_cmd("false")
        _, obs = self.run_cmd("echo $?")
        self.assertEqual(obs["content"], "1")

    def test_cwd_persists(self):
        self.run_cmd("mkdir -p sub/dir && cd sub/dir")
        out, obs = self.run_cmd("pwd")
        want = os.path.join(self.ex.ws_inside, "sub/dir")
        self.assertEqual(obs["content"], want)
        self.assertEqual(self.meta(obs)["working_dir"], want)

    def test_env_functions_aliases_persist(self):
        self.run_cmd("export FOO=bar-baz")
        self.run_cmd("greet() { echo \"hi $1\"; }")
        self.run_cmd("shopt -s expand_aliases; alias ll='echo aliased'")
        self.assertEqual(self.run_cmd("echo $FOO")[1]["content"], "bar-baz")
        self.assertEqual(self.run_cmd("greet you")[1]["content"], "hi you")
        self.assertEqual(self.run_cmd("ll")[1]["content"], "aliased")

    def test_multiline_and_heredoc(self):
        cmd = "cat <<'EOF' > h.txt\nline one\n  $NOT_EXPANDED\nEOF"
        _, obs = self.run_cmd(cmd)
        self.assertEqual(self.meta(obs)["exit_code"], 0)
        self.assertEqual(self.run_cmd("cat h.txt")[1]["content"], "line one\n  $NOT_EXPANDED")
        _, obs = self.run_cmd("for i in 1 2 3; do\n  echo n$i\ndone")
        self.assertEqual(obs["content"], "n1\nn2\nn3")

    def test_find_exec_escaped_semicolon(self):
        self.run_cmd("mkdir -p fe && touch fe/a fe/b")
        _, obs = self.run_cmd("find fe -type f -exec echo found {} \\; | sort")
        self.assertEqual(obs["content"], "found fe/a\nfound fe/b")

    def test_multiple_commands_refused(self):
        _, obs = self.run_cmd("echo a\necho b")
        self.assertEqual(obs["observation"], "error")
        self.assertTrue(obs["content"].startswith("ERROR: Cannot execute multiple commands at once."))
        self.assertIn("(1) echo a", obs["content"])
        self.assertIn("(2) echo b", obs["content"])

    def test_chained_commands_allowed(self):
        _, obs = self.run_cmd("echo a && echo b; echo c")
        self.assertEqual(obs["content"], "a\nb\nc")

    def test_hard_timeout_keeps_command_running(self):
        _, obs = self.run_cmd("echo start; sleep 3; echo end", timeout=1, blocking=True)
        m = self.meta(obs)
        self.assertEqual(m["exit_code"], -1)
        self.assertTrue(m["suffix"].startswith("\n[The command timed out after 1.0 seconds. "))
        self.assertEqual(obs["content"], "start")
        # the command is still running: an empty command fetches the rest
        out, obs = self.run_cmd("", timeout=10, blocking=True)
        self.assertEqual(obs["content"], "end")
        self.assertEqual(self.meta(obs)["exit_code"], 0)

    def test_no_change_timeout(self):
        _, obs = self.run_cmd("echo waiting; sleep 4; echo done")
        m = self.meta(obs)
        self.assertEqual(m["exit_code"], -1)
        self.assertTrue(m["suffix"].startswith("\n[The command has no new output after 2 seconds. "))
        self.assertEqual(m["prefix"], "")
        _, obs = self.run_cmd("echo new")
        self.assertIn("is NOT executed", self.meta(obs)["suffix"])
        time.sleep(2.5)
        _, obs = self.run_cmd("")
        self.assertIn("done", obs["content"])
        self.assertEqual(self.meta(obs)["exit_code"], 0)

    def test_empty_command_with_nothing_running(self):
        _, obs = self.run_cmd("")
        self.assertEqual(obs["content"], "ERROR: No previous running command to retrieve logs from.")
        _, obs = self.run_cmd("hello", is_input=True)
        self.assertEqual(obs["content"], "ERROR: No previous running command to interact with.")

    def test_input_to_running_program(self):
        _, obs = self.run_cmd("read -p 'name? ' NAME && echo \"got $NAME\"")
        self.assertEqual(self.meta(obs)["exit_code"], -1)
        self.assertIn("name?", obs["content"])
        _, obs = self.run_cmd("John", is_input=True)
        self.assertIn("got John", obs["content"])
        self.assertEqual(self.meta(obs)["exit_code"], 0)

    def test_python_repl_interactive(self):
        _, obs = self.run_cmd("python3 -q")
        self.assertEqual(self.meta(obs)["exit_code"], -1)
        _, obs = self.run_cmd("print(6*7)", is_input=True)
        self.assertIn("42", obs["content"])
        _, obs = self.run_cmd("exit()", is_input=True)
        self.assertEqual(self.meta(obs)["exit_code"], 0)

    def test_ctrl_c_interrupts(self):
        _, obs = self.run_cmd("sleep 100")
        self.assertEqual(self.meta(obs)["exit_code"], -1)
        _, obs = self.run_cmd("C-c", is_input=True)
        m = self.meta(obs)
        self.assertEqual(m["exit_code"], 130)
        self.assertIn("CTRL+C was sent.", m["suffix"])
        self.assertEqual(self.run_cmd("echo alive")[1]["content"], "alive")

    def test_background_job(self):
        _, obs = self.run_cmd("sleep 30 &")
        self.assertRegex(obs["content"], r"^\[1\] \d+$")
        pid = self.meta(obs)["pid"]
        self.assertGreater(pid, 0)
        _, obs = self.run_cmd("kill %1; wait; echo ok")
        self.assertIn("ok", obs["content"])

    def test_pkill_does_not_kill_shell(self):
        self.run_cmd("python3 -c 'import time; time.sleep(60)' &")
        self.run_cmd("pkill -f time.sleep; sleep 0.2")
        self.assertEqual(self.run_cmd("echo still")[1]["content"], "still")

    def test_unicode_and_colours(self):
        out, obs = self.run_cmd("printf 'h\\xc3\\xa9llo \\xe2\\x9c\\x93 \\033[31mred\\033[0m\\n'")
        self.assertEqual(out, "héllo ✓ \x1b[31mred\x1b[0m\n".encode())
        self.assertIn("héllo ✓", obs["content"])

    def test_binary_output_byte_for_byte(self):
        data = bytes(range(256)) * 64
        path = os.path.join(self.ex.workspace, "bin.dat")
        with open(path, "wb") as f:
            f.write(data)
        out, obs = self.run_cmd("cat bin.dat")
        self.assertEqual(out, data)
        self.assertEqual(self.meta(obs)["exit_code"], 0)

    def test_large_output_stream_complete_observation_truncated(self):
        out, obs = self.run_cmd("seq 1 300000", timeout=60)
        want = "".join(f"{i}\n" for i in range(1, 300001)).encode()
        self.assertEqual(len(out), len(want))
        self.assertEqual(out, want)
        self.assertIn("[... Observation truncated due to length ...]", obs["content"])
        self.assertTrue(obs["content"].endswith("300000"))
        self.assertEqual(self.meta(obs)["exit_code"], 0)

    def test_long_lines_keep_as_many_lines_as_upstreams_tmux(self):
        """17,000 lines of 999 characters (17 MB, past the executor's byte bound): the observation
        still holds the last 11,000 lines, at least the rows of upstream's 1000x1000 tmux pane with
        its 10,000-row history, behind upstream's prefix."""
        out, obs = self.run_cmd("for i in $(seq 1 17000); do printf '%05d%0994d\\n' $i 0; done", timeout=120)
        self.assertEqual(len(out), 17000 * 1000)
        self.assertEqual(self.meta(obs)["prefix"], "[Previous command outputs are truncated. Showing the last "
                                                   "11000 lines of the output below.]\n")
        self.assertTrue(obs["content"].startswith("06002" + "0" * 994 + "\n06003"), obs["content"][:20])
        self.assertTrue(obs["content"].endswith("17000" + "0" * 994))

    def test_shell_exit_respawns(self):
        _, obs = self.run_cmd("exit 3")
        self.assertEqual(self.meta(obs)["exit_code"], 3)
        self.assertEqual(self.run_cmd("echo back")[1]["content"], "back")

    def test_add_env_vars(self):
        r = self.c.call({"op": "bash.env", "session": self.session, "env": {"SP_A": "x y'z", "SP_B": "2"}})
        self.assertNotIn("error", r)
        self.assertEqual(self.run_cmd("echo \"$SP_A|$SP_B\"")[1]["content"], "x y'z|2")

    def test_signal_foreground(self):
        _, obs = self.run_cmd("sleep 100")
        r = self.c.call({"op": "bash.signal", "session": self.session, "signal": "TERM"})
        self.assertNotIn("error", r)
        _, obs = self.run_cmd("")
        self.assertEqual(self.meta(obs)["exit_code"], 143)

    def test_signal_to_idle_shell_does_not_shift_outputs(self):
        self.run_cmd("true")  # the session exists and its shell is idle
        r = self.c.call({"op": "bash.signal", "session": self.session, "signal": "INT"})
        self.assertNotIn("error", r)
        import time as _t
        _t.sleep(0.3)
        for word in ("alpha", "beta", "gamma"):
            _, obs = self.run_cmd(f"echo {word}")
            self.assertEqual(obs["content"], word)

    def test_sessions_are_independent(self):
        self.c.run("cd /tmp", session="s-one")
        _, obs = self.c.run("pwd", session="s-two")
        self.assertEqual(obs["content"], self.ex.ws_inside)
        names = [s["name"] for s in self.c.call({"op": "bash.list"})["sessions"]]
        self.assertIn("s-one", names)
        self.assertIn("s-two", names)


class BashUnderBwrapTest(BashTest):
    """The same behaviours with the executor inside a bubblewrap sandbox (user, pid, net, ipc,
    uts namespaces; uid 1000; workspace at /workspace)."""
    executor_args = dict(BashTest.executor_args, bwrap=True)

    def test_sandbox_identity(self):
        _, obs = self.run_cmd("id -u; hostname; ls /root 2>&1 | head -1")
        lines = obs["content"].splitlines()
        self.assertEqual(lines[0], "1000")
        self.assertEqual(lines[1], "sandbox")
        self.assertEqual(self.meta(obs)["hostname"], "sandbox")

    def test_no_network(self):
        _, obs = self.run_cmd("python3 -c 'import socket; print([n for _, n in socket.if_nameindex()])'")
        self.assertEqual(obs["content"], "['lo']")


if __name__ == "__main__":
    unittest.main()
