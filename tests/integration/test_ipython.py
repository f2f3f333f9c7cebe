"""IPython cells (run_ipython) through the executor: a real Jupyter kernel started by
sandpipe-jupyter on the first cell. One executor (one kernel) per class keeps the suite lean."""
import json
import os
import unittest

from spexec import DATA, Executor, ExecutorTest

EXTRA = "\n[Jupyter current working directory: {cwd}]\n[Jupyter Python interpreter: /usr/bin/python3]"


def cell(code, **args):
    return {"action": "run_ipython", "args": dict(code=code, **args)}


class IPythonTest(ExecutorTest):
    connection = "class"

    def run_cell(self, code, timeout=None, **args):
        a = cell(code, **args)
        if timeout is not None:
            a["timeout"] = timeout
        out, _, _, obs = self.c.open({"op": "action", "action": a}).collect(120)
        return out.decode(), obs

    def cwd(self):
        return self.c.run("pwd")[1]["extras"]["metadata"]["working_dir"]

    def test_state_persists_and_exact_json(self):
        self.run_cell("x = 40")
        out, obs = self.run_cell("x + 2")
        self.assertEqual(obs, {
            "message": "Code executed in IPython cell.", "observation": "run_ipython",
            "content": "42" + EXTRA.format(cwd=self.cwd()),
            "extras": {"code": "x + 2", "image_urls": None}, "success": True})
        self.assertEqual(out, "42")

    def test_no_output_and_include_extra_false(self):
        _, obs = self.run_cell("y = 1", include_extra=False)
        self.assertEqual(obs["content"], "[Code executed successfully with no output]")

    def test_stream_arrives_before_the_cell_ends(self):
        ch = self.c.open({"op": "action", "action": cell(
            "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.3)")})
        first = ch.next(60)
        self.assertEqual(first.type, DATA)  # output before the observation
        self.assertIn(b"tick 0", first.payload)
        out, _, _, obs = ch.collect(60)
        self.assertTrue(obs["content"].startswith("tick 0\ntick 1\ntick 2\n[Jupyter"), obs)

    def test_traceback_without_ansi(self):
        _, obs = self.run_cell("1/0", include_extra=False)
        self.assertNotIn("\x1b", obs["content"])
        self.assertIn("ZeroDivisionError", obs["content"])
        self.assertTrue(obs["content"].endswith("ZeroDivisionError: division by zero"), obs["content"])
        self.assertTrue(obs["success"])

    def test_matplotlib_png(self):
        _, obs = self.run_cell(
            "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()", include_extra=False)
        urls = obs["extras"]["image_urls"]
        self.assertEqual(len(urls), 1)
        self.assertTrue(urls[0].startswith("data:image/png;base64,iVBOR"))

    def test_timeout_interrupts_then_next_cell_works(self):
        _, obs = self.run_cell("while True: pass", timeout=2.0, include_extra=False)
        self.assertEqual(obs["content"], "[Execution timed out (2.0 seconds).]")
        _, obs = self.run_cell("'alive'", include_extra=False)
        self.assertEqual(obs["content"], "'alive'")

    def test_cwd_follows_bash(self):
        d = os.path.join(self.ex.workspace, "sub")
        os.makedirs(d, exist_ok=True)
        self.c.run("cd " + d)
        try:
            _, obs = self.run_cell("import os; print(os.getcwd())", include_extra=False)
            self.assertEqual(obs["content"], os.path.realpath(d))
        finally:
            self.c.run("cd " + self.ex.workspace)

    def test_agent_skills_open_file_and_search_dir(self):
        d = os.path.realpath(os.path.join(self.ex.workspace, "skills"))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f.txt"), "w") as f:
            f.write("alpha\nbeta\ngamma\n")
        _, obs = self.run_cell(f"open_file({d + '/f.txt'!r})", include_extra=False)
        self.assertEqual(obs["content"], f"[File: {d}/f.txt (3 lines total)]\n"
                         "(this is the beginning of the file)\n1|alpha\n2|beta\n3|gamma\n"
                         "(this is the end of the file)")
        _, obs = self.run_cell(f"search_dir('beta', {d!r})", include_extra=False)
        self.assertEqual(obs["content"], f'[Found 1 matches for "beta" in {d}]\n'
                         f'{d}/f.txt (Line 2): beta\n[End of matches for "beta" in {d}]')
        _, obs = self.run_cell(f"print(file_editor('str_replace', {d + '/f.txt'!r}, old_str='beta', new_str='BETA'))",
                               include_extra=False)
        # openhands-aci wraps the result in <oh_aci_output_ID> markers around its JSON
        body = json.loads(obs["content"].split(">\n", 1)[1].rsplit("\n</oh_aci_output_", 1)[0])
        self.assertEqual(body["formatted_output_and_error"],
                         f"The file {d}/f.txt has been edited. Here's the result of running `cat -n` on a "
                         f"snippet of {d}/f.txt:\n     1\talpha\n     2\tBETA\n     3\tgamma\n     4\t\n"
                         "Review the changes and make sure they are as expected. Edit the file again if necessary.")
        with open(os.path.join(d, "f.txt")) as f:
            self.assertEqual(f.read(), "alpha\nBETA\ngamma\n")

    def test_zz_restart_after_kernel_death(self):
        self.run_cell("z = 5")
        _, obs = self.run_cell("import os; os.kill(os.getpid(), 9)", include_extra=False)
        self.assertIn("The IPython kernel died", obs["content"])
        _, obs = self.run_cell("'z' in globals()", include_extra=False)
        self.assertEqual(obs["content"], "False")
        health = self.c.call({"op": "health"})
        self.assertEqual(health["plugins"]["jupyter"]["state"], "running")
        self.assertGreaterEqual(health["plugins"]["jupyter"]["restarts"], 1)


class IPythonSandboxTest(unittest.TestCase):
    """Under bwrap: the kernel runs as the sandbox user, as bash does; %pip without network (and
    on Debian's externally managed Python) ends with pip's own error, not a hang."""

    def test_same_user_as_bash_and_pip_fails_fast(self):
        ex = Executor(bwrap=True)
        c = ex.connect()
        try:
            uid = c.run("id -u")[1]["content"].strip()
            obs = c.action(cell("import os; print(os.getuid())", include_extra=False), 120)
            self.assertEqual(obs["content"], uid)
            a = cell("%pip install sandpipe-no-such-package", include_extra=False)
            a["timeout"] = 60.0
            obs = c.action(a, 120)
            self.assertIn("error", obs["content"].lower())
            self.assertNotIn("Execution timed out", obs["content"])
        finally:
            c.close()
            ex.stop()


if __name__ == "__main__":
    unittest.main()
