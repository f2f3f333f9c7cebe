"""File events on a session's WebSocket (docs/api.md, "File events") against a real stack (Redis,
the gateway, bwrap sandboxes, their executors' inotify): a client watching a directory sees what
a command run in the sandbox does (create, write, rename, delete, recursively into a directory
made after the watch began), a burst comes as a few bounded messages with a "many" summary, a
session holds at most 8 watches (shared between clients, each ending with its last client),
viewers may watch, the watch comes back with a "resync" after the executor link drops and
returns, and a watch does not keep a session from its idle timeout."""
import os
import signal
import time
import unittest

from stack import executor_pid
from test_gateway_limits import StackCase, run, sandbox_of

FILE_BATCH_MAX = 256  # gateway/file_batch.h
FILE_WATCH_MAX = 8    # gateway/session_file_watch.h


class Watcher:
    """A session socket watching directories: its file events (flattened, each with the key of
    its watch), the messages that carried them, and the other messages it read."""

    def __init__(self, ws):
        self.ws = ws
        self.events = []
        self.messages = []
        self.other = []
        self.n = 0

    def read(self, timeout=10):
        m = self.ws.recv_json(timeout)
        if m.get("type") == "files":
            self.messages.append(m)
            self.events += [dict(e, watch=m["watch"]) for e in m["events"]]
        else:
            self.other.append(m)
        return m

    def request(self, type_, path, timeout=30):
        """Sends files.watch or files.unwatch; returns its answer (ack or error)."""
        self.n += 1
        ident = f"w{self.n}"
        self.ws.send_json({"type": type_, "id": ident, "path": path})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.read(max(0.1, deadline - time.monotonic()))
            if m.get("id") == ident and m.get("type") in ("ack", "error"):
                return m
        raise AssertionError(f"no answer to {type_} {path}")

    def watch(self, path):
        m = self.request("files.watch", path)
        assert m["type"] == "ack", m
        return m

    def until(self, pred, timeout=30, what="an event"):
        """Reads until pred(event) holds for an event read so far; returns that event."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for e in self.events[seen:]:
                if pred(e):
                    return e
            seen = len(self.events)
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {what}; events: {self.events[-20:]}")
            try:
                self.read(max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                pass

    def saw(self, event, path, timeout=30):
        return self.until(lambda e: e["event"] == event and e.get("path") == path, timeout,
                          f"{event} {path}")


def inotify_fds(pid):
    """The inotify instances process pid holds (each executor file.watch is one)."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                n += 1
        except OSError:
            pass
    return n


def wait_for(cond, timeout=15, what="the condition"):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never held")
        time.sleep(0.02)


class FileEventsTest(StackCase):
    stack_args = {"pool": 2}

    def watcher(self, sid, token=None):
        return Watcher(self.session_ws(sid, token=token))

    def test_create_write_rename_delete_and_a_new_subdirectory(self):
        sid = self.st.create_session()
        cmd = self.session_ws(sid)
        w = self.watcher(sid)
        ack = w.watch("/workspace/")
        self.assertEqual(ack["watch"], "/workspace")  # its key: trailing slashes dropped
        self.assertEqual(ack["path"], "/workspace")
        self.assertGreaterEqual(ack["directories"], 1)

        run(cmd, "echo one > /workspace/a.txt")
        e = w.saw("created", "/workspace/a.txt")
        self.assertEqual(e["watch"], "/workspace")
        self.assertFalse(e["is_dir"])
        w.saw("closed_write", "/workspace/a.txt")
        run(cmd, "echo two >> /workspace/a.txt")
        w.saw("modified", "/workspace/a.txt")
        run(cmd, "mv /workspace/a.txt /workspace/b.txt")
        w.saw("moved_from", "/workspace/a.txt")
        w.saw("moved_to", "/workspace/b.txt")
        run(cmd, "rm /workspace/b.txt")
        w.saw("deleted", "/workspace/b.txt")

        # a directory made after the watch began is watched too
        run(cmd, "mkdir /workspace/sub")
        self.assertTrue(w.saw("created", "/workspace/sub")["is_dir"])
        run(cmd, "echo deep > /workspace/sub/inner.txt")
        w.saw("created", "/workspace/sub/inner.txt")
        for m in w.messages:
            self.assertLessEqual(len(m["events"]), FILE_BATCH_MAX)

        # what is not a directory is refused, by the executor's word
        bad = w.request("files.watch", "/workspace/sub/inner.txt")
        self.assertEqual(bad["type"], "error", bad)
        self.assertEqual(bad["error"]["code"], "not_directory", bad)
        bad = w.request("files.watch", "")
        self.assertEqual(bad["error"]["code"], "bad_request", bad)
        # unwatched: nothing more comes for it
        self.assertEqual(w.request("files.unwatch", "/workspace")["type"], "ack")
        self.assertEqual(w.request("files.unwatch", "/workspace")["error"]["code"], "not_found")

    def test_a_burst_comes_as_few_bounded_messages_with_a_summary(self):
        sid = self.st.create_session()
        cmd = self.session_ws(sid)
        w = self.watcher(sid)
        w.watch("/workspace")
        run(cmd, "mkdir /workspace/burst")
        w.saw("created", "/workspace/burst")  # watched from now on
        # 5000 files by one process: some 15000 inotify events (create, attrib, close)
        _, out, _ = run(cmd, "cd /workspace/burst && seq 1 5000 | xargs touch && ls | wc -l",
                        timeout=120)
        self.assertEqual(out.strip(), "5000")
        many = w.until(lambda e: e["event"] == "many", what="a many event")
        self.assertEqual(many["path"], "/workspace/burst", many)
        self.assertGreater(many["count"], FILE_BATCH_MAX)
        # after it, one more file: seen as itself, or in a summary under a directory of it
        after = "/workspace/after-the-burst"
        run(cmd, f"touch {after}")
        w.until(lambda e: (e["event"], e["path"]) == ("created", after) or
                (e["event"] == "many" and after.startswith(e["path"] + "/")),
                what=f"{after} made")
        self.assertTrue(all(len(m["events"]) <= FILE_BATCH_MAX for m in w.messages),
                        [len(m["events"]) for m in w.messages])
        shown = sum(1 for e in w.events if e["event"] != "many")
        self.assertLess(shown, 5000, "the burst was sent event by event")
        self.assertLess(len(w.messages), 200, f"{len(w.messages)} messages for one burst")

    def test_watches_are_shared_capped_and_end_with_their_clients(self):
        sid = self.st.create_session()
        cmd = self.session_ws(sid)
        exe = executor_pid(sandbox_of(self.st, sid)["pid"])
        dirs = [f"/workspace/w{i}" for i in range(FILE_WATCH_MAX)]
        run(cmd, "mkdir -p " + " ".join(dirs))
        base = inotify_fds(exe)
        a, b = self.watcher(sid), self.watcher(sid)
        a.watch("/workspace")
        b.watch("/workspace")  # the same directory: one executor watch for both
        self.assertEqual(inotify_fds(exe), base + 1)
        run(cmd, "touch /workspace/shared")
        a.saw("created", "/workspace/shared")
        b.saw("created", "/workspace/shared")

        for d in dirs[:FILE_WATCH_MAX - 1]:
            a.watch(d)
        self.assertEqual(inotify_fds(exe), base + FILE_WATCH_MAX)
        refused = b.request("files.watch", dirs[-1])  # a ninth: refused, saying the cap
        self.assertEqual(refused["type"], "error", refused)
        self.assertEqual(refused["error"]["code"], "at_capacity", refused)
        self.assertIn(f"at most {FILE_WATCH_MAX} file watches", refused["error"]["message"])
        b.watch(dirs[0])  # one the session holds already is no new watch
        self.assertEqual(inotify_fds(exe), base + FILE_WATCH_MAX)

        self.assertEqual(a.request("files.unwatch", dirs[1])["type"], "ack")
        wait_for(lambda: inotify_fds(exe) == base + FILE_WATCH_MAX - 1, what="the watch closing")
        b.watch(dirs[-1])  # room again
        # a's connection goes: the watches only it held go with it, b's stay
        a.ws.close()
        wait_for(lambda: inotify_fds(exe) == base + 3, what="a's watches closing")
        run(cmd, f"touch {dirs[0]}/still")
        b.saw("created", f"{dirs[0]}/still")
        b.ws.close()
        wait_for(lambda: inotify_fds(exe) == base, what="b's watches closing")

    def test_a_viewer_may_watch(self):
        sid = self.st.create_session()
        cmd = self.session_ws(sid)
        viewer = self.st.token(sub="dash", role="viewer", session=sid)
        v = self.watcher(sid, token=viewer)
        v.watch("/workspace")
        run(cmd, "mkdir /workspace/for-viewers")
        v.saw("created", "/workspace/for-viewers")
        run(cmd, "echo hi > /workspace/for-viewers/note")
        v.saw("created", "/workspace/for-viewers/note")
        # watching is a read: writing is still refused
        v.ws.send_json({"type": "action", "id": "no", "action": {"action": "run", "args": {"command": "true"}}})
        m, deadline = None, time.monotonic() + 10
        while m is None or m.get("id") != "no":
            self.assertLess(time.monotonic(), deadline, "no answer to the viewer's action")
            m = v.read()
        self.assertEqual(m["error"]["code"], "forbidden", m)

    def test_the_watch_comes_back_with_a_resync_after_the_executor_link_returns(self):
        sid = self.st.create_session()
        cmd = self.session_ws(sid)
        w = self.watcher(sid)
        w.watch("/workspace")
        run(cmd, "touch /workspace/before")
        w.saw("created", "/workspace/before")
        exe = executor_pid(sandbox_of(self.st, sid)["pid"])
        marker = f"session {sid}: executor link down"
        downs = self.st.gateway_log().count(marker)
        # The executor stops answering: the gateway's heartbeat gives up on the link (6 s),
        # and it reconnects once the executor runs again.
        os.kill(exe, signal.SIGSTOP)
        try:
            wait_for(lambda: self.st.gateway_log().count(marker) > downs, timeout=30,
                     what="the executor link going down")
        finally:
            os.kill(exe, signal.SIGCONT)
        e = w.until(lambda e: e["event"] == "resync", what="a resync event")
        self.assertEqual(e["path"], "/workspace")
        self.assertIn("reconnected", e["reason"])
        run(cmd, "touch /workspace/after")  # the watch is open again
        w.saw("created", "/workspace/after")

    def test_a_watch_does_not_keep_its_session_from_idling(self):
        sid = self.st.create_session(params={"idle_timeout": 2})
        w = self.watcher(sid)
        w.watch("/workspace")
        # The session's own stream says when it stops; the watch is no use of it.
        deadline = time.monotonic() + 30
        while True:
            self.assertLess(time.monotonic(), deadline, "the watched session never idled out")
            try:
                m = w.read(timeout=1)
            except TimeoutError:
                continue
            except ConnectionError:
                break
            if m.get("type") == "status" and m.get("status") == "STOPPED":
                self.assertEqual(m.get("message"), "idle timeout", m)
                break


if __name__ == "__main__":
    unittest.main()
