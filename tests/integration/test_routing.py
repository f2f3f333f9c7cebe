"""Several gateways behind one origin (issue 21): nginx sends every session-bound request to the
gateway that owns the session (an auth_request lookup, gateway/route.c), and that gateway serves
the action routes itself. Real nginx, real Redis, three real gateways with bwrap sandboxes."""
import hashlib
import http.client
import json
import os
import io
import random
import signal
import socket
import tempfile
import time
import unittest
import zipfile

from apistack import ApiStack
from stack import run_action
from test_openhands_files import form
from wsclient import WS, HandshakeError

def zip_tree(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


ECHO = {"action": "run", "args": {"command": "echo routed-$((6*7))"}}


class Routing(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # the third gateway is alone on its host: nobody takes its sessions over when it dies
        cls.st = ApiStack(pool=1, gateways=3, gateway_extra={3: ["--host-id", "routing-host-b"]})
        cls.alice = cls.st.token(sub="alice")
        cls.bob = cls.st.token(sub="bob")
        # created one after the other, each lands on the gateway with the fewest sessions
        cls.sessions = [cls.st.api_create_session(cls.alice) for _ in range(3)]
        cls.bobs = [cls.st.api_create_session(cls.bob) for _ in range(3)]
        cls.owner = {s: cls.st.redis("HGET", f"sp:session:{{{s}}}", "gateway")
                     for s in cls.sessions + cls.bobs}

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def api_signal(self, sig):
        """SIGSTOP / SIGCONT to sandpipe-api and its workers: stopped, nothing it serves answers."""
        for pid in [self.st.api.pid] + self.st.api_worker_pids():
            os.kill(pid, sig)

    def ws(self, path, token):
        sep = "&" if "?" in path else "?"
        return WS("127.0.0.1", self.st.http_port, f"{path}{sep}token={token}")

    def direct(self, port, method, path, body, headers):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            c.request(method, path, body=json.dumps(body), headers=headers)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    @staticmethod
    def wait_output(ws, seq, text, timeout=30):
        """Reads the session socket until the output of action seq holds text."""
        deadline, out = time.monotonic() + timeout, ""
        while text not in out:
            m = ws.recv_json(max(0.1, deadline - time.monotonic()))
            if m.get("type") == "output" and m.get("action") == seq:
                out += m.get("data", "")

    def test_1_sessions_land_on_every_gateway(self):
        self.assertEqual(sorted(set(self.owner[s] for s in self.sessions)),
                         ["gw-test", "gw-test-2", "gw-test-3"])
        for port, gw in zip(self.st.gw_ports, ("gw-test", "gw-test-2", "gw-test-3")):
            self.assertEqual(self.st.redis("HGET", f"sp:gateway:{gw}:info", "addr"), f"127.0.0.1:{port}")

    def test_2_each_session_is_served_by_its_own_gateway_from_one_origin(self):
        # Without the API in the way: what is routed never reaches it.
        self.api_signal(signal.SIGSTOP)
        try:
            for sid in self.sessions:
                with self.subTest(session=sid, gateway=self.owner[sid]):
                    st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                                ECHO, token=self.alice, timeout=30)
                    self.assertEqual(st, 200, ev)
                    self.assertEqual(ev["type"], "observation")
                    self.assertEqual(ev["observation"]["content"], "routed-42")
                    st, obs, _ = self.st.request("POST", f"/runtime/{sid}/execute_action",
                                                 {"action": ECHO}, headers={"X-Session-API-Key": self.alice},
                                                 timeout=30)
                    self.assertEqual(st, 200, obs)
                    self.assertEqual(obs["content"], "routed-42")
                    st, res, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions", ECHO,
                                                 token=self.alice, timeout=30)
                    self.assertEqual(st, 202, res)
                    self.assertGreater(res["seq"], 0)
                    st, res, _ = self.st.request("GET", f"/api/v1/sessions/{sid}/files?path=.", token=self.alice)
                    self.assertEqual(st, 200, res)
                    st, res, _ = self.st.request("GET", f"/api/v1/sessions/{sid}/files/stat?path=.",
                                                 token=self.alice)
                    self.assertEqual(st, 200, res)
                    ws = self.ws(f"/ws/sessions/{sid}", self.alice)
                    _, out, obs = run_action(ws, "echo ws-$((6*7))")
                    ws.close()
                    self.assertEqual(obs["content"], "ws-42")
                    ws = self.ws(f"/ws/sessions/{sid}/terminal", self.alice)
                    ws.send_binary(b"echo term-$((6*7))\n")
                    seen = b""
                    for _ in range(200):
                        op, data = ws.recv(30)
                        seen += data
                        if b"term-42" in seen:
                            break
                    ws.close()
                    self.assertIn(b"term-42", seen)
                    # a signal interrupts a running command, then the shell goes on. Sent once
                    # the command runs (its first output is in the history): a signal that
                    # reaches the shell before it started the command does not stop it (api.md)
                    ws = self.ws(f"/ws/sessions/{sid}", self.alice)
                    st, res, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions",
                                                 {"action": "run", "args": {"command": "echo sleeping; sleep 60"}},
                                                 token=self.alice)
                    self.assertEqual(st, 202, res)
                    self.wait_output(ws, res["seq"], "sleeping")
                    ws.close()
                    st, res, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/signal", {"signal": "INT"},
                                                 token=self.alice)
                    self.assertEqual((st, res), (200, {}))
                    st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                                {"action": "run", "args": {"command": "echo after"}},
                                                token=self.alice, timeout=60)
                    self.assertEqual(st, 200, ev)
                    self.assertEqual(ev["observation"]["content"], "after", ev)
        finally:
            self.api_signal(signal.SIGCONT)

    def test_2f_the_action_servers_routes_are_served_by_the_owner(self):
        # a runtime of the OpenHands Runtime API too: its own URL /rt-<16 hex>/… goes to its owner
        st, rt, _ = self.st.request("POST", "/openhands/start", {"image": "default", "session_id": "routing-rt"},
                                    headers={"X-API-Key": self.alice}, timeout=120)
        self.assertEqual(st, 200, rt)
        rt_path, rt_key = "/" + rt["runtime_id"], rt["session_api_key"]
        for _ in range(600):
            st, alive, _ = self.st.request("GET", rt_path + "/alive")
            if (st, alive) == (200, {"status": "ok"}):
                break
            time.sleep(0.1)
        paused = self.st.api_create_session(self.alice)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{paused}/pause", {}, token=self.alice)
        self.assertEqual(st, 200, body)
        self.api_signal(signal.SIGSTOP)
        try:
            bases = [(f"/runtime/{sid}", self.alice) for sid in self.sessions] + [(rt_path, rt_key)]
            for base, key in bases:
                with self.subTest(base=base):
                    hdr = {"X-Session-API-Key": key}
                    self.assertEqual(self.st.request("GET", base + "/alive")[:2], (200, {"status": "ok"}))
                    self.assertEqual(self.st.request("GET", base + "/health")[:2], (200, {"status": "ok"}))
                    self.assertEqual(self.st.request("GET", base + "/ready")[:2], (200, {"status": "ready"}))
                    st, info, _ = self.st.request("GET", base + "/server_info")
                    self.assertEqual(st, 200, info)
                    self.assertEqual(sorted(info), ["idle_time", "resources", "uptime"])
                    self.assertGreater(info["resources"]["memory"]["rss"], 0)
                    self.assertGreater(info["resources"]["disk"]["total"], 0)
                    st, files, _ = self.st.request("POST", base + "/list_files", {"path": "/"}, headers=hdr)
                    self.assertEqual(st, 200, files)
                    self.assertIsInstance(files, list)
                    self.assertEqual(self.st.request("GET", base + "/vscode/connection_token", headers=hdr)[:2],
                                     (200, {"token": None}))
                    # the OpenHands texts: a wrong key, a body that is no JSON, a path that is no directory
                    self.assertEqual(self.st.request("POST", base + "/list_files", {}, headers={
                        "X-Session-API-Key": self.bob})[:2], (403, {"detail": "Invalid API Key"}))
                    self.assertEqual(self.st.request("GET", base + "/vscode/connection_token")[:2],
                                     (403, {"detail": "Invalid API Key"}))
                    st, body, _ = self.st.request("POST", base + "/list_files", "not json", headers=hdr)
                    self.assertEqual((st, body["detail"], body["errors"][0]["type"]),
                                     (422, "Invalid request parameters", "json_invalid"))
                    st, body, _ = self.st.request("POST", base + "/list_files", {"path": "/nonexistent-dir"},
                                                  headers=hdr)
                    self.assertEqual((st, body), (200, []))
                    # upload_file and download_files: a file there and back, then the refusals
                    body, ctype = form("file", "note.txt", b"routed upload\n")
                    st, res, _ = self.st.request("POST", base + "/upload_file?destination=/workspace/up", body,
                                                 headers={**hdr, "Content-Type": ctype})
                    self.assertEqual((st, res), (200, {"filename": "note.txt", "destination": "/workspace/up",
                                                       "recursive": False}))
                    st, z, hd = self.st.request("GET", base + "/download_files?path=/workspace/up", headers=hdr,
                                                raw=True)
                    self.assertEqual((st, hd["content-type"]), (200, "application/zip"))
                    self.assertIn('filename="up.zip"', hd["content-disposition"])
                    self.assertEqual(zip_tree(z), {"note.txt": b"routed upload\n"})
                    st, res, _ = self.st.request("POST", base + "/upload_file?destination=/workspace",
                                                 b"--x\r\nnot a part", headers={
                                                     **hdr, "Content-Type": "multipart/form-data; boundary=x"})
                    self.assertEqual((st, res), (400, {"detail": "There was an error parsing the body"}))
                    st, res, _ = self.st.request("POST", base + "/upload_file?destination=/workspace/../../etc",
                                                 body, headers={**hdr, "Content-Type": ctype})
                    self.assertEqual(st, 500, res)
                    self.assertIn("Read-only file system", res["detail"])
                    st, res, _ = self.st.request("POST", base + "/upload_file?destination=/workspace", body,
                                                 headers={"X-Session-API-Key": self.bob, "Content-Type": ctype})
                    self.assertEqual((st, res), (403, {"detail": "Invalid API Key"}))
                    st, res, _ = self.st.request("GET", base + "/download_files?path=/workspace/up",
                                                 headers={"X-Session-API-Key": self.bob})
                    self.assertEqual((st, res), (403, {"detail": "Invalid API Key"}))
                    st, res, _ = self.st.request("GET", base + "/download_files?path=/workspace/nope", headers=hdr)
                    self.assertEqual((st, res), (500, {"detail": "404: File not found"}))
            # what the owner cannot serve is answered by a gateway too, with the action server's texts
            for path, want in ((f"/runtime/s-doesnotexist/alive", (404, {"detail": "Not Found"})),
                               (f"/runtime/{paused}/alive", (503, {"detail": "Runtime is paused"})),
                               (f"/runtime/{paused}/upload_file", (503, {"detail": "Runtime is paused"})),
                               ("/rt-0123456789abcdef/alive", (404, {"detail": "Not Found"}))):
                method = "POST" if path.endswith("upload_file") else "GET"
                self.assertEqual(self.st.request(method, path, headers={"X-Session-API-Key": self.alice})[:2],
                                 want, path)
            self.assertEqual(self.st.request("POST", f"/runtime/{self.sessions[0]}/alive")[:2],
                             (405, {"detail": "Method Not Allowed"}))
            # another session's token reaches none of them, through any gateway
            for sid in self.bobs:
                st, body, _ = self.st.request("POST", f"/runtime/{sid}/list_files", {}, headers={
                    "X-Session-API-Key": self.alice})
                self.assertEqual((st, body), (403, {"detail": "Invalid API Key"}))
                for port in self.st.gw_ports:
                    st, body = self.direct(port, "POST", f"/runtime/{sid}/list_files", {},
                                           {"X-Session-API-Key": self.alice})
                    self.assertEqual((st, json.loads(body)), (403, {"detail": "Invalid API Key"}))
        finally:
            self.api_signal(signal.SIGCONT)
        st, body, _ = self.st.request("POST", "/openhands/stop", {"runtime_id": rt["runtime_id"]},
                                      headers={"X-API-Key": self.alice})
        self.assertEqual(st, 200, body)
        self.st.request("DELETE", f"/api/v1/sessions/{paused}", token=self.alice, timeout=60)

    def put(self, sid, path, body, token=None, length=None, **query):
        """PUT …/files/content through nginx: body bytes, or an iterable (chunked unless length)."""
        q = "&".join(f"{k}={v}" for k, v in {"path": path, **query}.items())
        c = http.client.HTTPConnection("127.0.0.1", self.st.http_port, timeout=300)
        try:
            h = {"Authorization": "Bearer " + (token or self.alice)}
            if length is not None:
                h["Content-Length"] = str(length)
            c.request("PUT", f"/api/v1/sessions/{sid}/files/content?{q}", body=body, headers=h,
                      encode_chunked=length is None and not isinstance(body, bytes))
            r = c.getresponse()
            return r.status, json.loads(r.read())
        finally:
            c.close()

    def test_2b_1_gib_of_random_bytes_up_and_down_through_the_gateway_byte_identical(self):
        sid = next(s for s in self.sessions if self.owner[s] != "gw-test")
        size, sent = 1 << 30, hashlib.sha256()

        def chunks():  # never all in memory
            for _ in range(size >> 20):
                b = os.urandom(1 << 20)
                sent.update(b)
                yield b
        self.api_signal(signal.SIGSTOP)  # the API is not on the path
        try:
            st, body = self.put(sid, "big.bin", chunks(), length=size)
            self.assertEqual((st, body), (200, {"path": "/workspace/big.bin", "size": size}))
            c = http.client.HTTPConnection("127.0.0.1", self.st.http_port, timeout=120)
            c.request("GET", f"/api/v1/sessions/{sid}/files/download?path=big.bin",
                      headers={"Authorization": "Bearer " + self.alice})
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            self.assertEqual(r.getheader("Content-Length"), str(size))
            self.assertIn('filename="big.bin"', r.getheader("Content-Disposition"))
            h, n = hashlib.sha256(), 0
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
            c.close()
            self.assertEqual((n, h.hexdigest()), (size, sent.hexdigest()))
            # the sandbox holds the same bytes
            st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true", {
                "action": "run", "args": {"command": "sha256sum big.bin | cut -c1-64", "blocking": True,
                                          "timeout": 300}}, token=self.alice, timeout=320)
            self.assertEqual(st, 200, ev)
            self.assertEqual(ev["observation"]["content"].strip(), sent.hexdigest(), ev)
            # a part of it, and the API's errors, from the gateway
            st, body, hdrs = self.st.request("GET", f"/api/v1/sessions/{sid}/files/download?path=big.bin"
                                             "&offset=5&length=7", token=self.alice, raw=True)
            self.assertEqual((st, len(body)), (200, 7))
            st, body, _ = self.st.request("GET", f"/api/v1/sessions/{sid}/files/download?path=nope",
                                          token=self.alice)
            self.assertEqual(st, 404, body)
            st, body, _ = self.st.request("GET", f"/api/v1/sessions/{sid}/files/download", token=self.alice)
            self.assertEqual((st, body["error"]["message"]), (400, "query parameter path is required (URL-encoded)"))
        finally:
            self.api_signal(signal.SIGCONT)
        self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                        {"action": "run", "args": {"command": "rm -f big.bin"}}, token=self.alice)

    def test_2d_an_upload_cut_mid_way_leaves_nothing_and_limits_hold(self):
        self.api_signal(signal.SIGSTOP)  # the API is not on the path
        try:
            for sid in self.sessions:
                with self.subTest(session=sid, gateway=self.owner[sid]):
                    self.files(sid, "POST", "/mkdir", {"path": "cut"})
                    total = 64 << 20
                    sock = socket.create_connection(("127.0.0.1", self.st.http_port), timeout=60)
                    sock.sendall(f"PUT /api/v1/sessions/{sid}/files/content?path=cut/partial.bin HTTP/1.1\r\n"
                                 f"Host: x\r\nAuthorization: Bearer {self.alice}\r\n"
                                 f"Content-Length: {total}\r\n\r\n".encode())
                    chunk = os.urandom(1 << 20)
                    for _ in range(8):
                        sock.sendall(chunk)
                    sock.close()
                    # the executor's temp file goes with the cancelled channel: nothing stays
                    for _ in range(600):
                        st, body = self.files(sid, "GET", "?path=cut")
                        if st == 200 and not body["entries"]:
                            break
                        time.sleep(0.05)
                    self.assertEqual((st, body["entries"]), (200, []))
                    self.assertEqual(self.files(sid, "GET", "/stat?path=cut/partial.bin")[0], 404)
                    # over the limit: announced, or found while streaming (chunked: nginx
                    # reads it first, then sends its length)
                    st, err = self.put(sid, "cut/big.bin", b"x" * 5000, max_bytes=1000)
                    self.assertEqual((st, err["error"]), (413, {"code": "too_large",
                                                                "message": "the file is over 1000 bytes"}))
                    st, err = self.put(sid, "cut/big.bin", iter([b"x" * 65536] * 4), max_bytes=1000)
                    self.assertEqual((st, err["error"]["code"]), (413, "too_large"))
                    st, err = self.put(sid, "cut/x.bin", b"x", max_bytes="lots")
                    self.assertEqual((st, err["error"]["code"]), (400, "bad_request"))
                    self.assertEqual(self.files(sid, "GET", "?path=cut")[1]["entries"], [])
                    # the next upload on the session goes through, byte for byte, mode and all
                    st, body = self.put(sid, "cut/run.sh", chunk, mode="0755")
                    self.assertEqual((st, body), (200, {"path": "/workspace/cut/run.sh", "size": len(chunk)}))
                    st, meta = self.files(sid, "GET", "/stat?path=cut/run.sh")
                    self.assertEqual((st, meta["mode"]), (200, "0755"))
                    st, got, _ = self.st.request("GET", f"/api/v1/sessions/{sid}/files/download?path=cut/run.sh",
                                                 token=self.alice, raw=True)
                    self.assertEqual((st, got == chunk), (200, True))
                    # append: a small write
                    self.assertEqual(self.put(sid, "cut/log", b"one\n")[0], 200)
                    st, body = self.put(sid, "cut/log", b"two\n", append="true")
                    self.assertEqual(st, 200, body)
                    self.assertEqual(self.files(sid, "GET", "/content?path=cut/log")[1]["content"], "one\ntwo\n")
                    st, err = self.put(sid, "cut/log", b"x" * (600 << 10), append="true")
                    self.assertEqual((st, err["error"]["code"]), (413, "too_large"))
                    # escapes, other users' and viewers' tokens
                    st, err = self.put(sid, "../../etc/evil", b"x")
                    self.assertEqual((st, err["error"]["code"]), (403, "permission_denied"), err)
                    st, err = self.put(sid, "cut/bob.txt", b"x", token=self.bob)
                    self.assertEqual((st, err["error"]["code"]), (404, "not_found"), err)
                    viewer = self.st.token(sub="carol", role="viewer", session=sid)
                    st, err = self.put(sid, "cut/viewer.txt", b"x", token=viewer)
                    self.assertEqual((st, err["error"]["code"]), (403, "forbidden"), err)
                    st, err = self.put(self.bobs[0], "cut/viewer.txt", b"x", token=viewer)
                    self.assertEqual((st, err["error"]["code"]), (404, "not_found"), err)
                    self.assertEqual(self.files(sid, "DELETE", "?path=cut&recursive=true")[0], 200)
        finally:
            self.api_signal(signal.SIGCONT)

    def files(self, sid, method, path, body=None, token=None, **kw):
        return self.st.request(method, f"/api/v1/sessions/{sid}/files{path}", body,
                               token=token or self.alice, **kw)[:2]

    def test_2c_the_files_routes_are_served_by_the_owner_with_the_apis_answers(self):
        viewer = self.st.token(sub="carol", role="viewer", session=self.sessions[0])
        self.api_signal(signal.SIGSTOP)  # the API is not on the path
        try:
            for sid in self.sessions:
                with self.subTest(session=sid, gateway=self.owner[sid]):
                    f = lambda *a, **kw: self.files(sid, *a, **kw)  # noqa: E731
                    self.assertEqual(f("POST", "/mkdir", {"path": "fr/sub"}),
                                     (200, {"path": "/workspace/fr/sub", "created": True}))
                    st, body = f("POST", "/content", {"path": "fr/sub/a.txt", "content": "one\ntwo\n"})
                    self.assertEqual((st, body.get("size")), (200, 8), body)
                    st, body = f("GET", "/content?path=fr/sub/a.txt&start_line=2")
                    self.assertEqual((st, body.get("content")), (200, "two\n"), body)
                    self.assertEqual(f("POST", "/move", {"from": "fr/sub/a.txt", "to": "fr/b.txt"}),
                                     (200, {"from": "/workspace/fr/sub/a.txt", "to": "/workspace/fr/b.txt"}))
                    st, body = f("POST", "/move", {"from": "fr/b.txt", "to": "fr/sub"})
                    self.assertEqual((st, body["error"]["code"]), (409, "exists"), body)
                    st, body = f("GET", "?path=fr")
                    self.assertEqual(sorted(e["name"] for e in body["entries"]), ["b.txt", "sub"])
                    st, body = f("DELETE", "?path=fr")
                    self.assertEqual((st, body["error"]["code"]), (409, "not_empty"), body)
                    self.assertEqual(f("DELETE", "?path=fr&recursive=true"), (200, {"path": "/workspace/fr"}))
                    self.assertEqual(f("GET", "/stat?path=fr")[0], 404)
                    # malformed requests: the API's words
                    for method, path, body, msg in (
                            ("POST", "/mkdir", "{bad", "malformed JSON"),
                            ("POST", "/move", {"from": "x"}, "to must be a path (a non-empty string)"),
                            ("POST", "/mkdir", {"path": "x", "parents": "yes"}, "parents must be a boolean"),
                            ("POST", "/content", {"path": "x"}, "path and content must be strings"),
                            ("DELETE", "", None, "query parameter path is required (URL-encoded)"),
                            ("GET", "/content?path=x&max_bytes=0",
                             None, "query parameter max_bytes must be an integer in [1, 524288]")):
                        st, err = f(method, path, body, headers={"Content-Type": "application/json"})
                        self.assertEqual(st, 400, (path, err))
                        self.assertEqual(err["error"]["code"], "bad_request")
                        self.assertIn(msg, err["error"]["message"])
                    # outside the workspace is the sandbox's own (read-only) system
                    st, err = f("POST", "/content", {"path": "../../etc/evil", "content": "x"})
                    self.assertEqual((st, err["error"]["code"]), (403, "permission_denied"), err)
                    st, body = f("GET", "/content?path=/etc/passwd")
                    self.assertIn("sandbox user:/workspace", body["content"])
                    # another user's token, a viewer of another session: no such session
                    for token in (self.bob, self.st.token(sub="dave", role="viewer", session=self.bobs[0])):
                        for method, path, body in (("GET", "/content?path=x", None),
                                                   ("POST", "/mkdir", {"path": "x"}),
                                                   ("POST", "/move", {"from": "a", "to": "b"}),
                                                   ("DELETE", "?path=x", None)):
                            st, err = f(method, path, body, token=token)
                            self.assertEqual((st, err["error"]["code"]), (404, "not_found"), (path, err))
            # a viewer reads its session and changes nothing
            f = lambda *a, **kw: self.files(self.sessions[0], *a, **kw)  # noqa: E731
            f("POST", "/content", {"path": "seen.txt", "content": "seen"})
            self.assertEqual(f("GET", "/content?path=seen.txt", token=viewer)[1]["content"], "seen")
            for method, path, body in (("POST", "/content", {"path": "seen.txt", "content": "x"}),
                                       ("POST", "/mkdir", {"path": "v"}),
                                       ("POST", "/move", {"from": "seen.txt", "to": "v.txt"}),
                                       ("DELETE", "?path=seen.txt", None)):
                st, err = f(method, path, body, token=viewer)
                self.assertEqual((st, err["error"]["code"]), (403, "forbidden"), (path, err))
            self.assertEqual(f("GET", "/content?path=seen.txt")[1]["content"], "seen")
        finally:
            self.api_signal(signal.SIGCONT)

    def test_2e_a_1_gib_upload_file_and_download_files_byte_identical_through_the_gateway(self):
        sid = next(s for s in self.sessions if self.owner[s] != "gw-test")
        base, hdr = f"/runtime/{sid}", {"X-Session-API-Key": self.alice}
        size, block = 1 << 30, 1 << 20
        boundary = os.urandom(16).hex()
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
                'Content-Type: application/octet-stream\r\n\r\n').encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        rnd = random.Random(21)
        want = hashlib.sha256()

        def body():
            yield head
            for _ in range(size // block):
                b = rnd.randbytes(block)
                want.update(b)
                yield b
            yield tail

        self.api_signal(signal.SIGSTOP)  # the API is not on the path
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.st.http_port, timeout=300)
            c.request("POST", base + "/upload_file?destination=/workspace/bigdir", body=body(), headers={
                **hdr, "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(len(head) + size + len(tail))})
            r = c.getresponse()
            self.assertEqual((r.status, json.loads(r.read())), (200, {
                "filename": "big.bin", "destination": "/workspace/bigdir", "recursive": False}))
            c.close()
            st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true", {
                "action": "run", "args": {"command": "sha256sum /workspace/bigdir/big.bin | cut -c1-64",
                                          "blocking": True, "timeout": 120}}, token=self.alice, timeout=150)
            self.assertEqual(st, 200, ev)
            self.assertEqual(ev["observation"]["content"].strip(), want.hexdigest(), ev)
            # and back, as a zip streamed from the gateway
            c = http.client.HTTPConnection("127.0.0.1", self.st.http_port, timeout=300)
            c.request("GET", base + "/download_files?path=/workspace/bigdir", headers=hdr)
            r = c.getresponse()
            self.assertEqual((r.status, r.getheader("Content-Type")), (200, "application/zip"))
            with tempfile.TemporaryFile() as f:
                while chunk := r.read(block):
                    f.write(chunk)
                c.close()
                f.seek(0)
                with zipfile.ZipFile(f) as z:
                    self.assertEqual(z.namelist(), ["big.bin"])
                    got, n = hashlib.sha256(), 0
                    with z.open("big.bin") as e:
                        while chunk := e.read(block):
                            got.update(chunk)
                            n += len(chunk)
            self.assertEqual((n, got.hexdigest()), (size, want.hexdigest()))
        finally:
            self.api_signal(signal.SIGCONT)
        self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                        {"action": "run", "args": {"command": "rm -rf /workspace/bigdir"}}, token=self.alice)

    def test_2e_what_nginx_does_not_route_the_api_answers_without_a_gateway(self):
        sid = self.sessions[1]
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/pause", token=self.alice)
        self.assertEqual(st, 200, body)
        # a paused session's file routes: its gateway says so itself
        self.st.api.send_signal(signal.SIGSTOP)
        try:
            for method, path, body in (("GET", "/content?path=x", None), ("POST", "/mkdir", {"path": "p"}),
                                       ("GET", "?path=.", None)):
                st, err = self.files(sid, method, path, body)
                self.assertEqual((st, err["error"]), (409, {"code": "busy", "message":
                                                            "the session is PAUSED: resume it first"}))
            st, err = self.put(sid, "p.bin", b"x" * 100000)
            self.assertEqual((st, err["error"]["code"]), (409, "busy"), err)
        finally:
            self.st.api.send_signal(signal.SIGCONT)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/resume", token=self.alice)
        self.assertEqual(st, 200, body)
        self.assertEqual(self.files(sid, "GET", "/stat?path=p.bin")[0], 404)
        # no such session, a malformed request for one, a stopped one: the API, from Redis alone
        for method, path, body, want in (("GET", "/content?path=x", None, (404, "not_found")),
                                         ("DELETE", "?path=x", None, (404, "not_found")),
                                         ("GET", "/content", None, (400, "bad_request")),
                                         ("POST", "/move", {"from": "a"}, (400, "bad_request"))):
            st, err = self.files("s-nope", method, path, body)
            self.assertEqual((st, err["error"]["code"]), want, (path, err))
        st, err = self.put("s-nope", "x.bin", b"x" * (1 << 20))
        self.assertEqual((st, err["error"]["code"]), (404, "not_found"), err)
        gone = self.st.api_create_session(self.alice)
        st, body, _ = self.st.request("DELETE", f"/api/v1/sessions/{gone}", token=self.alice)
        self.assertEqual(st, 200, body)
        st, err = self.files(gone, "GET", "/content?path=x")
        self.assertEqual((st, err["error"]), (409, {"code": "session_ended", "message": "the session has stopped"}))
        st, err = self.put(gone, "x.bin", b"x" * (1 << 20))
        self.assertEqual((st, err["error"]["code"]), (409, "session_ended"), err)

    def test_3_a_token_for_one_session_reaches_no_other(self):
        viewer = self.st.token(sub="carol", role="viewer", session=self.sessions[0])
        for sid in self.bobs:
            with self.subTest(session=sid):
                st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                              ECHO, token=self.alice)
                self.assertEqual(st, 404, body)
                st, body, _ = self.st.request("POST", f"/runtime/{sid}/execute_action", {"action": ECHO},
                                              headers={"X-Session-API-Key": self.alice})
                self.assertEqual((st, body), (403, {"detail": "Invalid API Key"}))
                st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions", ECHO, token=viewer)
                self.assertEqual(st, 404, body)
                ws = self.ws(f"/ws/sessions/{sid}", self.alice)
                msg = ws.recv_json(10)
                self.assertEqual(msg["error"]["code"], "not_found", msg)
                ws.close()
                # straight to every gateway, past nginx: the same refusals
                for port in self.st.gw_ports:
                    st, body = self.direct(port, "POST", f"/runtime/{sid}/execute_action", {"action": ECHO},
                                           {"X-Session-API-Key": self.alice})
                    self.assertEqual(st, 403, body)
                    st, body = self.direct(port, "POST", f"/api/v1/sessions/{sid}/actions", ECHO,
                                           {"Authorization": "Bearer " + self.alice})
                    self.assertEqual(st, 404, body)
        # a viewer of alice's first session watches it, and cannot act on it
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{self.sessions[0]}/actions", ECHO,
                                      token=viewer)
        self.assertEqual(st, 403, body)
        ws = self.ws(f"/ws/sessions/{self.sessions[0]}?since=0", viewer)
        self.assertEqual(ws.recv_json(10)["type"], "status")
        ws.close()

    def test_4_a_session_whose_gateway_is_gone_answers_503(self):
        gw = "gw-test-3"
        sid = next(s for s in self.bobs if self.owner[s] == gw)
        procs = {"gw-test": self.st.gw, "gw-test-2": self.st.more_gws[0], "gw-test-3": self.st.more_gws[1]}
        procs[gw].send_signal(signal.SIGKILL)
        procs[gw].wait(10)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true", ECHO,
                                      token=self.bob, timeout=30)
        self.assertIn(st, (502, 503))
        self.assertIn("gateway", body["error"]["message"])
        st, body, _ = self.st.request("POST", f"/runtime/{sid}/execute_action", {"action": ECHO},
                                      headers={"X-Session-API-Key": self.bob}, timeout=30)
        self.assertIn(st, (502, 503))
        self.assertIn("Runtime disconnected", body["detail"])
        with self.assertRaises(HandshakeError) as cm:
            self.ws(f"/ws/sessions/{sid}", self.bob)
        self.assertIn(str(cm.exception), ("status 502", "status 503"))
        # the heartbeat expired: the lookup itself says so, as the API does
        self.st.redis("DEL", f"sp:gateway:{gw}")
        for sid2 in (s for s in self.bobs if self.owner[s] == gw):
            st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid2}/actions", ECHO,
                                          token=self.bob, timeout=30)
            self.assertEqual(st, 503, body)
            self.assertEqual(body["error"]["code"], "gateway_down")
        # sessions of the other gateways go on
        other = next(s for s in self.bobs if self.owner[s] != gw)
        st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{other}/actions?wait=true", ECHO,
                                    token=self.bob, timeout=30)
        self.assertEqual(st, 200, ev)


if __name__ == "__main__":
    unittest.main()
