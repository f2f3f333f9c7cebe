"""The executor's plugins table (executor/plugins.c) through the `plugins` op: the session's list
gates the actions with upstream's texts, and each plugin's state (not_started, starting, running,
exited with a reason, disabled, unavailable) with its pid and memory is told to watchers as it
changes, and in health. Real kernel, real Chromium, one executor per case."""
import os
import signal
import unittest

from spexec import CLOSE, JSON, Executor

JUPYTER_MISSING = "JupyterRequirement not found. Unable to run IPython action."
BROWSER_MISSING = "Browser functionality is not supported or disabled."


def error_obs(text):
    return {"observation": "error", "content": text, "extras": {"error_id": ""}, "message": text}


def cell(code):
    return {"action": "run_ipython", "args": {"code": code, "include_extra": False}}


class Watch:
    """A `plugins` channel: its events, in order."""

    def __init__(self, client, allowed=None):
        req = {"op": "plugins"}
        if allowed is not None:
            req["allowed"] = allowed
        self.ch = client.open(req)

    def next(self, timeout=60):
        f = self.ch.next(timeout)
        if f.type == CLOSE:
            raise AssertionError(f"the plugins channel closed: {f.json()}")
        assert f.type == JSON, f
        ev = f.json()
        assert ev["event"] == "plugins", ev
        return ev["plugins"]

    def until(self, plugin, state, timeout=90, limit=40):
        """Events up to the first with plugin in state (bounded); returns them all."""
        seen = []
        for _ in range(limit):
            st = self.next(timeout)
            seen.append(st)
            if st[plugin]["state"] == state:
                return seen
        raise AssertionError(f"{plugin} never {state}: {seen}")


class GatingTest(unittest.TestCase):
    def setUp(self):
        self.ex = Executor()
        self.c = self.ex.connect()

    def tearDown(self):
        self.c.close()
        self.ex.stop()

    def test_session_without_jupyter_and_browser_gets_upstream_texts(self):
        w = Watch(self.c, ["agent_skills"])
        first = w.next()
        self.assertEqual({k: v["state"] for k, v in first.items()},
                         {"agent_skills": "unavailable", "jupyter": "disabled",
                          "browser": "disabled", "vscode": "disabled"})
        self.assertIn("must include jupyter", first["agent_skills"]["reason"])
        self.assertEqual(self.c.action(cell("1+1")), error_obs(JUPYTER_MISSING))
        self.assertEqual(self.c.action({"action": "browse", "args": {"url": "about:blank"}}),
                         error_obs(BROWSER_MISSING))
        self.assertEqual(self.c.action({"action": "browse_interactive",
                                        "args": {"browser_actions": "noop()"}}),
                         error_obs(BROWSER_MISSING))
        # nothing started: no process, no kernel
        health = self.c.call({"op": "health"})
        self.assertEqual(health["plugins"]["jupyter"], {"state": "disabled", "cells": 0, "restarts": 0})
        self.assertEqual(health["plugins"]["vscode"], {"state": "disabled"})

    def test_jupyter_without_agent_skills_has_no_helpers_in_the_kernel(self):
        Watch(self.c, ["jupyter"]).next()
        obs = self.c.action(cell("'open_file' in globals()"), 120)
        self.assertEqual(obs["content"], "False")

    def test_vscode_is_unavailable_and_bad_lists_are_refused(self):
        st = Watch(self.c, ["vscode"]).next()
        self.assertEqual(st["vscode"]["state"], "unavailable")
        self.assertIn("code-server is not installed", st["vscode"]["reason"])
        for bad in (["emacs"], "jupyter", [1]):
            res = self.c.call({"op": "plugins", "allowed": bad})
            self.assertEqual(res["error"]["code"], "bad_request", bad)

    def test_bare_executor_allows_every_plugin(self):
        st = Watch(self.c).next()
        self.assertEqual({k: v["state"] for k, v in st.items()},
                         {"agent_skills": "not_started", "jupyter": "not_started",
                          "browser": "not_started", "vscode": "unavailable"})


class StateEventsTest(unittest.TestCase):
    """States as a watcher hears them: starting, running (pid, memory), exited (reason), and
    running again after the next use."""

    def setUp(self):
        self.ex = Executor(bwrap=True)
        self.c = self.ex.connect()
        self.w = Watch(self.c, ["agent_skills", "jupyter", "browser"])
        self.assertEqual(self.w.next()["jupyter"]["state"], "not_started")

    def tearDown(self):
        self.c.close()
        self.ex.stop()

    def test_jupyter_states(self):
        ch = self.c.open({"op": "action", "action": cell("1+1")})
        seen = self.w.until("jupyter", "running")
        self.assertEqual(seen[0]["jupyter"]["state"], "starting")
        run = seen[-1]["jupyter"]
        self.assertGreater(run["pid"], 1)
        self.assertGreater(run["rss_bytes"], 10 << 20)  # helper + kernel: a Python with IPython
        self.assertEqual(seen[-1]["agent_skills"]["state"], "running")
        self.assertEqual(ch.collect(120)[3]["content"], "2")
        # the kernel runs as the pid told, inside this sandbox's pid namespace
        obs = self.c.action(cell("import os; os.getpid()"), 120)
        self.assertEqual(int(obs["content"]), run["pid"])
        health = self.c.call({"op": "health"})
        self.assertEqual(health["plugins"]["jupyter"]["state"], "running")
        self.assertEqual(health["plugins"]["jupyter"]["pid"], run["pid"])
        # death: exited with a reason; the next cell: starting, then running with a new pid
        self.c.action(cell("import os; os.kill(os.getpid(), 9)"), 120)
        seen = self.w.until("jupyter", "exited")
        self.assertTrue(seen[-1]["jupyter"]["reason"])
        self.assertNotIn("pid", seen[-1]["jupyter"])
        self.c.action(cell("2+2"), 120)
        seen = self.w.until("jupyter", "running")
        self.assertNotEqual(seen[-1]["jupyter"]["pid"], run["pid"])

    def test_browser_states_and_chromium_exit(self):
        ch = self.c.open({"op": "action", "action": {"action": "browse", "args": {"url": "about:blank"}}})
        seen = self.w.until("browser", "running")
        self.assertEqual(seen[0]["browser"]["state"], "starting")
        run = seen[-1]["browser"]
        self.assertGreater(run["rss_bytes"], 50 << 20)  # Chromium's processes together
        obs = ch.collect(120)[3]
        self.assertEqual(obs["observation"], "browse")
        # Chromium killed between actions: the helper notices its pipe close, the watcher hears it
        out = self.c.run(f"kill -9 {run['pid']}")[1]
        self.assertEqual(out["extras"]["metadata"]["exit_code"], 0, out)
        seen = self.w.until("browser", "exited")
        self.assertEqual(seen[-1]["browser"]["reason"], "Chromium exited")
        obs = self.c.action({"action": "browse", "args": {"url": "about:blank"}}, 120)
        self.assertFalse(obs["extras"]["error"], obs["content"])
        self.assertEqual(self.w.until("browser", "running")[-1]["browser"]["state"], "running")


if __name__ == "__main__":
    unittest.main()
