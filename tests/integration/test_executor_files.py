"""Files, OpenHands file actions and confinement against a real executor."""
import hashlib
import os
import time
import unittest

from spexec import ExecutorTest


class FilesTest(ExecutorTest):
    connection = "test"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ws = os.path.realpath(cls.ex.workspace)

    def test_upload_download_large_binary_identical(self):
        data = os.urandom(20 * 1024 * 1024 + 123)
        ch = self.c.open({"op": "file.upload", "path": "up/big.bin"})
        ch.send(data)
        ch.eof()
        _, _, _, res = ch.collect(timeout=120)
        self.assertEqual(res["size"], len(data))
        self.assertEqual(res["path"], os.path.join(self.ws, "up/big.bin"))
        out, _, events, res = self.c.open({"op": "file.download", "path": "up/big.bin"}).collect(timeout=120)
        self.assertEqual(hashlib.sha256(out).hexdigest(), hashlib.sha256(data).hexdigest())
        self.assertEqual(res["bytes"], len(data))
        self.assertEqual(events[0], {"event": "size", "size": len(data), "bytes": len(data)})

    def test_download_range(self):
        with open(os.path.join(self.ws, "r.txt"), "wb") as f:
            f.write(b"0123456789")
        out, _, _, _ = self.c.open({"op": "file.download", "path": "r.txt", "offset": 3, "length": 4}).collect()
        self.assertEqual(out, b"3456")

    def test_aborted_upload_leaves_nothing(self):
        ch = self.c.open({"op": "file.upload", "path": "aborted.bin"})
        ch.send(b"x" * 1000)
        ch.close()
        time.sleep(0.2)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "aborted.bin")))
        self.assertEqual([n for n in os.listdir(self.ws) if "aborted" in n], [])

    def test_write_is_atomic_and_keeps_mode(self):
        p = os.path.join(self.ws, "mode.sh")
        with open(p, "w") as f:
            f.write("old")
        os.chmod(p, 0o751)
        r = self.c.call({"op": "file.write", "path": "mode.sh", "content": "new content"})
        self.assertNotIn("error", r)
        self.assertEqual(open(p).read(), "new content")
        self.assertEqual(os.stat(p).st_mode & 0o777, 0o751)

    def test_read_line_range_list_stat(self):
        with open(os.path.join(self.ws, "lines.txt"), "w") as f:
            f.write("a\nb\nc\nd\n")
        r = self.c.call({"op": "file.read", "path": "lines.txt", "start_line": 2, "end_line": 3})
        self.assertEqual(r["content"], "b\nc\n")
        names = [e["name"] for e in self.c.call({"op": "file.list", "path": "."})["entries"]]
        self.assertIn("lines.txt", names)
        st = self.c.call({"op": "file.stat", "path": "lines.txt"})
        self.assertEqual(st["type"], "file")
        self.assertEqual(st["size"], 8)

    def test_mkdir_move_remove(self):
        self.assertNotIn("error", self.c.call({"op": "file.mkdir", "path": "m/n/o"}))
        self.assertTrue(os.path.isdir(os.path.join(self.ws, "m/n/o")))
        self.assertNotIn("error", self.c.call({"op": "file.move", "from": "m/n", "to": "m/q"}))
        self.assertTrue(os.path.isdir(os.path.join(self.ws, "m/q/o")))
        r = self.c.call({"op": "file.remove", "path": "m"})
        self.assertIn("error", r)
        self.assertNotIn("error", self.c.call({"op": "file.remove", "path": "m", "recursive": True}))
        self.assertFalse(os.path.exists(os.path.join(self.ws, "m")))

    def test_confinement_refuses_escapes(self):
        os.symlink("/etc", os.path.join(self.ws, "etc-link"))
        for path in ["../../../../etc/passwd", "/etc/passwd", "etc-link/passwd"]:
            r = self.c.call({"op": "file.read", "path": path})
            self.assertEqual(r["error"]["code"], "path_escape", path)
            self.assertIn("outside", r["error"]["message"])
        r = self.c.open({"op": "file.download", "path": "etc-link/passwd"}).collect()[3]
        self.assertEqual(r["error"]["code"], "path_escape")
        ch = self.c.open({"op": "file.upload", "path": "../../escape.txt"})
        self.assertEqual(ch.collect()[3]["error"]["code"], "path_escape")

    def test_watch_reports_changes(self):
        os.makedirs(os.path.join(self.ws, "w"), exist_ok=True)
        ch = self.c.open({"op": "file.watch", "path": "w", "recursive": True})
        self.assertEqual(ch.next().json()["event"], "watching")
        with open(os.path.join(self.ws, "w/new.txt"), "w") as f:
            f.write("x")
        os.remove(os.path.join(self.ws, "w/new.txt"))
        seen = []
        while "deleted" not in seen:
            ev = ch.next(timeout=5).json()
            seen.append(ev["event"])
            self.assertEqual(ev["path"], os.path.join(self.ws, "w/new.txt"))
        self.assertEqual(seen[0], "created")
        ch.close()

    # ---- OpenHands actions through the executor ----

    def test_openhands_write_then_read(self):
        obs = self.c.action({"action": "write", "args": {"path": "oh.txt", "content": "x\ny"}})
        self.assertEqual(obs["observation"], "write")
        self.assertEqual(obs["extras"]["path"], os.path.join(self.ws, "oh.txt"))
        obs = self.c.action({"action": "read", "args": {"path": "oh.txt"}})
        self.assertEqual(obs["observation"], "read")
        self.assertEqual(obs["content"], "x\ny\n")

    def test_openhands_read_missing_file(self):
        obs = self.c.action({"action": "read", "args": {"path": "nope.txt"}})
        self.assertEqual(obs["observation"], "error")
        self.assertEqual(obs["content"], f"File not found: {self.ws}/nope.txt. Your current working directory is {self.ws}.")

    def test_openhands_read_relative_to_bash_cwd(self):
        os.makedirs(os.path.join(self.ws, "cwdtest"), exist_ok=True)
        with open(os.path.join(self.ws, "cwdtest/f.txt"), "w") as f:
            f.write("inside\n")
        self.c.run("cd cwdtest")
        obs = self.c.action({"action": "read", "args": {"path": "f.txt"}})
        self.assertEqual(obs["content"], "inside\n")
        self.c.run("cd " + self.ws)

    def test_openhands_editor_flow(self):
        p = os.path.join(self.ws, "ed.py")
        obs = self.c.action({"action": "edit", "args": {"command": "create", "path": p, "file_text": "a = 1\nb = 2\n",
                                                         "impl_source": "oh_aci"}})
        self.assertEqual(obs["observation"], "edit")
        self.assertEqual(obs["content"], f"File created successfully at: {p}")
        obs = self.c.action({"action": "edit", "args": {"command": "create", "path": p, "file_text": "z",
                                                         "impl_source": "oh_aci"}})
        self.assertTrue(obs["content"].startswith("ERROR:\n"))
        obs = self.c.action({"action": "edit", "args": {"command": "str_replace", "path": p, "old_str": "b = 2",
                                                         "new_str": "b = 3", "impl_source": "oh_aci"}})
        self.assertIn("has been edited", obs["content"])
        self.assertIn("     2\tb = 3", obs["content"])
        self.assertEqual(open(p).read(), "a = 1\nb = 3\n")
        obs = self.c.action({"action": "edit", "args": {"command": "undo_edit", "path": p, "impl_source": "oh_aci"}})
        self.assertEqual(open(p).read(), "a = 1\nb = 2\n")
        obs = self.c.action({"action": "read", "args": {"path": p, "impl_source": "oh_aci", "view_range": [2, 2]}})
        self.assertIn("     2\tb = 2", obs["content"])

    def test_openhands_list_files(self):
        os.makedirs(os.path.join(self.ws, "lf/Zdir"), exist_ok=True)
        for n in ["b.txt", "A.txt", ".hidden"]:
            open(os.path.join(self.ws, "lf", n), "w").close()
        r = self.c.call({"op": "oh.list_files", "path": "lf"})
        self.assertEqual(r["files"], ["Zdir/", ".hidden", "A.txt", "b.txt"])


if __name__ == "__main__":
    unittest.main()
