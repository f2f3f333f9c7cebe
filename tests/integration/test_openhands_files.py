"""/runtime/{session}/upload_file and /download_files as an upstream ActionExecutionClient uses
them (openhands/runtime/impl/action_execution/action_execution_client.py, 0.62.0): copy_to of a
file and of a directory (zipped with zipfile exactly as copy_to zips it), copy_from of a file and
of a directory (unzipped with zipfile and compared byte for byte), through nginx + sandpipe-api +
gateway + a bwrap sandbox. Replies and error bodies are upstream's (openhands/runtime/action_execution_server.py)."""
import hashlib
import http.client
import json
import mimetypes
import io
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import unittest
import zipfile


from apistack import ModuleStack
from stack import BUILD

STACK = ModuleStack(pool=2)
setUpModule, tearDownModule = STACK.start, STACK.stop


def form(field, filename, data):
    """A multipart/form-data body as httpx (the upstream client's HTTP library) encodes
    files={field: (filename, data)}: a random hex boundary, the type guessed from the name."""
    boundary = os.urandom(16).hex()
    ctype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
            f'filename="{filename}"\r\nContent-Type: {ctype}\r\n\r\n').encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class Reply:
    def __init__(self, status, headers, body):
        self.status_code, self.headers, self.content = status, headers, body
        self.text = body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content)


class Client:
    """The HTTP side of ActionExecutionClient.copy_to / copy_from (standard library only)."""

    def __init__(self, base, key):
        self.base = base  # /runtime/{sid}
        self.headers = {"X-Session-API-Key": key}

    def request(self, method, route, params=None, body=None, content_type=None):
        c = http.client.HTTPConnection("127.0.0.1", STACK.http_port, timeout=300)
        h = dict(self.headers)
        if content_type:
            h["Content-Type"] = content_type
        query = "?" + urllib.parse.urlencode(params) if params is not None else ""
        try:
            c.request(method, f"{self.base}/{route}{query}", body=body, headers=h)
            resp = c.getresponse()
            chunks = []
            while chunk := resp.read(65536):  # streamed, as copy_from's iter_bytes()
                chunks.append(chunk)
            return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, b"".join(chunks))
        finally:
            c.close()

    def upload(self, filename, data, params, field="file"):
        body, ctype = form(field, filename, data)
        return self.request("POST", "upload_file", params, body, ctype)

    def copy_to(self, host_src, sandbox_dest, recursive=False):
        params = {"destination": sandbox_dest, "recursive": str(recursive).lower()}
        temp_zip_path = None
        try:
            if recursive:
                with tempfile.NamedTemporaryFile(suffix=".zip", delete=False) as temp_zip:
                    temp_zip_path = temp_zip.name
                with zipfile.ZipFile(temp_zip_path, "w") as zipf:
                    for root, _, files in os.walk(host_src):
                        for file in files:
                            file_path = os.path.join(root, file)
                            arcname = os.path.relpath(file_path, os.path.dirname(host_src))
                            zipf.write(file_path, arcname)
                src = temp_zip_path
            else:
                src = host_src
            with open(src, "rb") as f:
                return self.upload(os.path.basename(src), f.read(), params)
        finally:
            if temp_zip_path:
                os.unlink(temp_zip_path)

    def copy_from(self, path):
        """(status, headers, the zip's bytes)."""
        r = self.request("GET", "download_files", {"path": path})
        return r.status_code, r.headers, r.content


def sanitized():
    api = os.path.join(BUILD, "sandpipe-api")
    out = subprocess.run(["ldd", api], capture_output=True, text=True).stdout
    return "libasan" in out


def tree_of(zip_bytes):
    z = zipfile.ZipFile(io.BytesIO(zip_bytes))
    assert z.testzip() is None
    return {i.filename: z.read(i) for i in z.infolist()}


class Files(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.owner = STACK.token(sub="agent", role="user")
        cls.sid = STACK.api_create_session(cls.owner)
        cls.base = f"/runtime/{cls.sid}"
        cls.c = Client(cls.base, cls.owner)
        cls.host = tempfile.mkdtemp(prefix="sp-oh-files-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.host, ignore_errors=True)

    def run_cmd(self, command):
        body = {"action": {"action": "run", "args": {"command": command, "is_input": False,
                                                      "blocking": False}, "timeout": 120.0}}
        st, obs, _ = self.s.request("POST", f"/runtime/{self.sid}/execute_action", body,
                                    headers=self.c.headers, timeout=150)
        self.assertEqual(st, 200, obs)
        return obs["content"]

    def host_file(self, rel, data):
        path = os.path.join(self.host, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_copy_to_a_file(self):
        src = self.host_file("notes.txt", b"one\ntwo\n")
        r = self.c.copy_to(src, "/workspace/up/new/dir")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json(), {"filename": "notes.txt", "destination": "/workspace/up/new/dir",
                                    "recursive": False})
        self.assertEqual(self.run_cmd("cat /workspace/up/new/dir/notes.txt"), "one\ntwo")
        # An existing file is replaced.
        self.host_file("notes.txt", b"three\n")
        self.assertEqual(self.c.copy_to(src, "/workspace/up/new/dir").status_code, 200)
        self.assertEqual(self.run_cmd("cat /workspace/up/new/dir/notes.txt"), "three")
        # An empty file is a file too.
        r = self.c.copy_to(self.host_file("empty", b""), "/workspace/up")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(self.run_cmd("stat -c %s /workspace/up/empty"), "0")

    def test_copy_to_relative_destination_is_refused(self):
        """Upstream checks os.path.isabs first: its HTTPException(400) is re-raised as a 500."""
        src = self.host_file("rel.txt", b"rel")
        r = self.c.copy_to(src, "relup")
        self.assertEqual(r.status_code, 500, r.text)
        self.assertEqual(r.json(), {"detail": "400: Destination must be an absolute path"})
        self.assertEqual(self.run_cmd("ls /workspace/relup 2>/dev/null; true"), "")

    def test_copy_from_relative_path_is_refused(self):
        """As upstream's download_files (os.path.isabs, a 400 re-raised as a 500) and as
        upload_file above: a relative path is not resolved against the working directory."""
        self.run_cmd("mkdir -p /workspace/reldown && echo x > /workspace/reldown/f")
        for rel in ("reldown", "reldown/f", "./reldown", ""):
            st, _, body = self.c.copy_from(rel)
            self.assertEqual((st, json.loads(body)),
                             (500, {"detail": "400: Path must be an absolute path"}), rel)

    def test_copy_to_a_binary_file_of_a_few_megabytes(self):
        data = os.urandom(5 * 1024 * 1024 + 123)
        src = self.host_file("big.bin", data)
        r = self.c.copy_to(src, "/workspace/bin")
        self.assertEqual(r.status_code, 200, r.text)
        out = self.run_cmd("sha256sum /workspace/bin/big.bin")
        self.assertEqual(out.split()[0], hashlib.sha256(data).hexdigest())
        st, hdrs, z = self.c.copy_from("/workspace/bin/big.bin")
        self.assertEqual(st, 200)
        self.assertEqual(tree_of(z), {"big.bin": data})

    def test_copy_to_recursive_then_copy_from_round_trips(self):
        files = {"proj/a.txt": b"alpha\n", "proj/src/main.py": b"print('hi')\n",
                 "proj/src/deep/er/x.bin": bytes(range(256)) * 300, "proj/.hidden": b"h",
                 "proj/empty.txt": b"", "proj/\u00e9t\u00e9.txt": "caf\u00e9".encode(),
                 "proj/data/blob.bin": os.urandom(3 * 1024 * 1024)}
        root = os.path.join(self.host, "rec")
        for rel, data in files.items():
            self.host_file(os.path.join("rec", rel), data)
        os.chmod(os.path.join(root, "proj/src/main.py"), 0o755)
        r = self.c.copy_to(os.path.join(root, "proj"), "/workspace/rec", recursive=True)
        self.assertEqual(r.status_code, 200, r.text)
        body = r.json()
        self.assertEqual(body["destination"], "/workspace/rec")
        self.assertIs(body["recursive"], True)
        self.assertTrue(body["filename"].endswith(".zip"))
        # Unpacked, and the zip itself is gone (upstream deletes it).
        self.assertEqual(self.run_cmd("ls -A /workspace/rec"), "proj")
        self.assertEqual(self.run_cmd("stat -c %a /workspace/rec/proj/src/main.py"), "755")
        st, hdrs, z = self.c.copy_from("/workspace/rec/proj")
        self.assertEqual(st, 200)
        self.assertEqual(hdrs["content-type"], "application/zip")
        self.assertIn('filename="proj.zip"', hdrs["content-disposition"])
        self.assertEqual(tree_of(z), {rel[len("proj/"):]: data for rel, data in files.items()})
        # A directory given with a trailing slash, as a client may.
        st, _, z = self.c.copy_from("/workspace/rec/proj/src/")
        self.assertEqual(set(tree_of(z)), {"main.py", "deep/er/x.bin"})

    def test_a_zip_is_unpacked_even_without_recursive(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("inner/z.txt", "zipped " * 1000)
            z.writestr("inner/sub/", "")
        src = self.host_file("bundle.zip", buf.getvalue())
        r = self.c.copy_to(src, "/workspace/unz")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json(), {"filename": "bundle.zip", "destination": "/workspace/unz",
                                    "recursive": False})
        self.assertEqual(self.run_cmd("cd /workspace/unz && find . | sort"),
                         ".\n./inner\n./inner/sub\n./inner/z.txt")

    def test_copy_from_a_large_file_streams(self):
        self.run_cmd("head -c 100000000 /dev/urandom > /workspace/large.bin")
        digest = self.run_cmd("sha256sum /workspace/large.bin").split()[0]
        st, _, z = self.c.copy_from("/workspace/large.bin")
        self.assertEqual(st, 200)
        data = tree_of(z)["large.bin"]
        self.assertEqual(len(data), 100000000)
        self.assertEqual(hashlib.sha256(data).hexdigest(), digest)
        # Streamed: no API worker ever held more than a few chunks of it (ASan's allocator keeps
        # freed memory, so only an uninstrumented build says so).
        for pid in STACK.api_worker_pids() if not sanitized() else ():
            with open(f"/proc/{pid}/status") as f:
                hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
            self.assertLess(hwm, 32 * 1024, f"worker {pid} peaked at {hwm} kB")

    def test_copy_from_an_empty_directory_is_an_empty_zip(self):
        self.run_cmd("mkdir -p /workspace/emptydir/sub")
        st, _, z = self.c.copy_from("/workspace/emptydir")
        self.assertEqual(st, 200)
        self.assertEqual(tree_of(z), {})

    def test_missing_paths(self):
        st, _, body = self.c.copy_from("/workspace/does/not/exist")
        self.assertEqual(st, 500)
        self.assertEqual(json.loads(body), {"detail": "404: File not found"})
        r = self.c.request("GET", "download_files")
        self.assertEqual(r.status_code, 422)
        self.assertEqual(r.json()["detail"], "Invalid request parameters")
        r = self.c.upload("x.txt", b"x", {"destination": "/workspace"}, field="other")
        self.assertEqual(r.status_code, 422)
        self.assertEqual(r.json()["errors"][0]["loc"], ["body", "file"])
        r = self.c.request("POST", "upload_file", {"destination": "/workspace"}, b"not a form",
                           "application/octet-stream")
        self.assertEqual(r.status_code, 422)

    def test_paths_outside_the_workspace_reach_the_sandbox_only(self):
        """As upstream, any path the sandbox user may access; the sandbox keeps the host out."""
        src = self.host_file("esc.txt", b"x")
        for dest in ("/etc", "/workspace/../../etc"):
            r = self.c.copy_to(src, dest)
            self.assertEqual(r.status_code, 500, r.text)
            self.assertIn("Read-only file system", r.json()["detail"])
        self.assertEqual(self.c.copy_to(src, "/tmp/up").status_code, 200)
        self.assertEqual(self.run_cmd("cat /tmp/up/esc.txt"), "x")
        st, _, z = self.c.copy_from("/etc/passwd")
        self.assertEqual(st, 200)
        self.assertIn(b"user:x:1000:1000:sandbox user:/workspace:/bin/bash", tree_of(z)["passwd"])
        # In a downloaded tree, a symlink to a sandbox file is read; one to a host path (which
        # the sandbox does not have) is dangling there, and left out.
        self.run_cmd("mkdir -p /workspace/lnk && echo in > /workspace/lnk/in.txt && "
                     f"ln -sf /etc/hostname /workspace/lnk/out && ln -sf {src} /workspace/lnk/host && "
                     "ln -sf in.txt /workspace/lnk/alias")
        st, _, z = self.c.copy_from("/workspace/lnk")
        self.assertEqual(st, 200)
        self.assertEqual(tree_of(z), {"in.txt": b"in\n", "alias": b"in\n", "out": b"sandbox\n"})

    def test_unsafe_or_broken_zips_are_refused_whole(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("ok.txt", "fine")
            z.writestr("../../evil.txt", "bad")
        src = self.host_file("evil.zip", buf.getvalue())
        r = self.c.copy_to(src, "/workspace/evil")  # a .zip is unpacked, recursive or not
        self.assertEqual(r.status_code, 500)
        self.assertIn("'..'", r.json()["detail"])
        self.assertEqual(self.run_cmd("ls -A /workspace/evil"), "")  # nothing unpacked
        src = self.host_file("broken.zip", b"PK\x03\x04 this is not really a zip")
        r = self.c.copy_to(src, "/workspace/evil")
        self.assertEqual(r.status_code, 500)
        self.assertIn("broken.zip is not a valid zip file", r.json()["detail"])
        r = self.c.upload("plain.txt", b"p", {"destination": "/workspace/evil", "recursive": "true"})
        self.assertEqual((r.status_code, r.json()), (500, {"detail": "400: Recursive uploads must be zip files"}))

    def test_bad_key_is_403(self):
        src = self.host_file("k.txt", b"k")
        self.run_cmd("mkdir -p /workspace/keyed && echo k > /workspace/keyed/k.txt")
        other = self.s.token(sub="someone-else", role="user")
        viewer = self.s.token(sub="v", role="viewer", session=self.sid)
        for key in (None, "nope", other, viewer):
            c = Client(self.base, key) if key else Client(self.base, "")
            if key is None:
                c.headers = {}
            r = c.copy_to(src, "/workspace")
            self.assertEqual((r.status_code, r.json()), (403, {"detail": "Invalid API Key"}))
            if key != viewer:
                st, _, body = c.copy_from("/workspace")
                self.assertEqual(st, 403)
        st, _, z = Client(self.base, viewer).copy_from("/workspace/keyed")  # read-only is fine
        self.assertEqual((st, tree_of(z)), (200, {"k.txt": b"k\n"}))

    def test_unknown_and_paused_sessions(self):
        src = self.host_file("p.txt", b"p")
        for sid, status in (("s-doesnotexist", 404), (STACK.api_create_session(self.owner), 503)):
            if status == 503:  # paused for real: its gateway, which serves the routes, knows
                st, body, _ = STACK.request("POST", f"/api/v1/sessions/{sid}/pause", {}, token=self.owner)
                self.assertEqual(st, 200, body)
            c = Client(f"/runtime/{sid}", self.owner)
            r = c.copy_to(src, "/workspace")
            self.assertEqual(r.status_code, status, r.text)
            self.assertIn("detail", r.json())
            st, _, _ = c.copy_from("/workspace")
            self.assertEqual(st, status)


if __name__ == "__main__":
    unittest.main()
