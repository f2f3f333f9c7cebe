"""File management through the REST API (docs/api.md, "Files"): mkdir, move (rename) and delete
under /api/v1/sessions/{id}/files, through nginx, the session's own gateway and a real
bwrap executor; the executor's semantics (docs/protocol.md file.mkdir/move/remove) seen over
HTTP, bad requests, and who may do it (a viewer may not; another user's session is not found)."""
import unittest
import urllib.parse

from apistack import ModuleStack

STACK = ModuleStack(pool=2)
setUpModule, tearDownModule = STACK.start, STACK.stop


def q(path):
    return urllib.parse.quote(path, safe="")


class FileOps(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.tok = STACK.token(sub="dora", role="user")
        cls.sid = STACK.api_create_session(cls.tok)
        cls.base = f"/api/v1/sessions/{cls.sid}/files"

    def call(self, method, route, body=None, token=None):
        st, r, _ = self.s.request(method, self.base + route, body, token=token or self.tok)
        return st, r

    def write(self, path, content):
        st, r = self.call("POST", "/content", {"path": path, "content": content})
        self.assertEqual(st, 200, r)

    def read(self, path):
        return self.call("GET", f"/content?path={q(path)}")

    def stat(self, path):
        return self.call("GET", f"/stat?path={q(path)}")

    def test_mkdir(self):
        st, r = self.call("POST", "/mkdir", {"path": "mk/a/b"})
        self.assertEqual((st, r), (200, {"path": "/workspace/mk/a/b", "created": True}))
        st, r = self.call("POST", "/mkdir", {"path": "mk/a/b"})  # mkdir -p: not an error
        self.assertEqual((st, r["created"]), (200, False))
        st, r = self.call("POST", "/mkdir", {"path": "mk/a/b", "parents": False})
        self.assertEqual((st, r["error"]["code"]), (409, "exists"))
        st, r = self.call("POST", "/mkdir", {"path": "mk/none/c", "parents": False})
        self.assertEqual((st, r["error"]["code"]), (404, "not_found"))
        st, r = self.call("POST", "/mkdir", {"path": "mk/private", "mode": "0700"})
        self.assertEqual(st, 200, r)
        self.assertEqual(self.stat("mk/private")[1]["mode"], "0700")
        self.write("mk/file", "x")
        st, r = self.call("POST", "/mkdir", {"path": "mk/file/sub"})
        self.assertIn(st, (400, 409), r)  # a file in the way

    def test_move_renames(self):
        self.write("mv-a.txt", "alpha\n")
        st, r = self.call("POST", "/move", {"from": "mv-a.txt", "to": "mv-b.txt"})
        self.assertEqual((st, r), (200, {"from": "/workspace/mv-a.txt", "to": "/workspace/mv-b.txt"}))
        self.assertEqual(self.stat("mv-a.txt")[0], 404)
        self.assertEqual(self.read("mv-b.txt")[1]["content"], "alpha\n")
        # onto an existing name: refused unless overwrite
        self.write("mv-c.txt", "gamma\n")
        st, r = self.call("POST", "/move", {"from": "mv-c.txt", "to": "mv-b.txt"})
        self.assertEqual((st, r["error"]["code"]), (409, "exists"))
        self.assertEqual(self.read("mv-b.txt")[1]["content"], "alpha\n")
        st, r = self.call("POST", "/move", {"from": "mv-c.txt", "to": "mv-b.txt", "overwrite": True})
        self.assertEqual(st, 200, r)
        self.assertEqual(self.read("mv-b.txt")[1]["content"], "gamma\n")
        # into another directory, a whole directory too
        self.call("POST", "/mkdir", {"path": "mv-dir/sub"})
        st, r = self.call("POST", "/move", {"from": "mv-b.txt", "to": "mv-dir/sub/b.txt"})
        self.assertEqual(st, 200, r)
        st, r = self.call("POST", "/move", {"from": "mv-dir", "to": "mv-dir2"})
        self.assertEqual(st, 200, r)
        self.assertEqual(self.read("mv-dir2/sub/b.txt")[1]["content"], "gamma\n")
        st, r = self.call("POST", "/move", {"from": "mv-nothing", "to": "x"})
        self.assertEqual((st, r["error"]["code"]), (404, "not_found"))

    def test_delete(self):
        self.write("rm-one.txt", "1")
        st, r = self.call("DELETE", f"?path={q('rm-one.txt')}")
        self.assertEqual((st, r), (200, {"path": "/workspace/rm-one.txt"}))
        self.assertEqual(self.stat("rm-one.txt")[0], 404)
        self.write("rm-tree/a/b.txt", "b")
        st, r = self.call("DELETE", "?path=rm-tree")
        self.assertEqual((st, r["error"]["code"]), (409, "not_empty"))
        st, r = self.call("DELETE", "?path=rm-tree&recursive=true")
        self.assertEqual(st, 200, r)
        self.assertEqual(self.stat("rm-tree")[0], 404)
        st, r = self.call("DELETE", "?path=rm-never")
        self.assertEqual((st, r["error"]["code"]), (404, "not_found"))

    def test_delete_does_not_follow_a_link(self):
        self.write("keep/inside.txt", "kept")
        st, r, _ = self.s.request("POST", f"/api/v1/sessions/{self.sid}/actions?wait=true",
                                  {"action": "run", "args": {"command": "ln -s keep link && echo ok"}}, token=self.tok)
        self.assertEqual(st, 200, r)
        st, r = self.call("DELETE", "?path=link&recursive=true")
        self.assertEqual(st, 200, r)
        self.assertEqual(self.stat("link")[0], 404)
        self.assertEqual(self.read("keep/inside.txt")[1]["content"], "kept")

    def test_bad_requests(self):
        for route, body in (("/mkdir", {}), ("/mkdir", {"path": ""}), ("/mkdir", {"path": 7}),
                            ("/mkdir", {"path": "d", "parents": "yes"}), ("/mkdir", {"path": "d", "mode": 755}),
                            ("/move", {"from": "a"}), ("/move", {"to": "b"}),
                            ("/move", {"from": "a", "to": "b", "overwrite": 1}), ("/move", "[1]")):
            st, r = self.call("POST", route, body)
            self.assertEqual((st, r["error"]["code"]), (400, "bad_request"), (route, body))
        st, r = self.call("DELETE", "")
        self.assertEqual((st, r["error"]["code"]), (400, "bad_request"))

    def test_who_may(self):
        self.write("guarded.txt", "g")
        viewer = self.s.token(sub="watcher", role="viewer", session=self.sid)
        other = self.s.token(sub="eve", role="user")
        for tok, want in ((viewer, (403, "forbidden")), (other, (404, "not_found"))):
            for method, route, body in (("POST", "/mkdir", {"path": "v-dir"}),
                                        ("POST", "/move", {"from": "guarded.txt", "to": "v.txt"}),
                                        ("DELETE", "?path=guarded.txt", None)):
                st, r = self.call(method, route, body, token=tok)
                self.assertEqual((st, r["error"]["code"]), want, (method, route))
        self.assertEqual(self.read("guarded.txt")[1]["content"], "g")
        self.assertEqual(self.stat("v-dir")[0], 404)
        admin = self.s.token(sub="root", role="admin")
        st, r = self.call("POST", "/move", {"from": "guarded.txt", "to": "by-admin.txt"}, token=admin)
        self.assertEqual(st, 200, r)


if __name__ == "__main__":
    unittest.main()
