"""Streamed file transfers through the whole service: HTTP client -> real nginx -> the session's
gateway (its HTTP side) -> bwrap executor, and back. Uploads (PUT .../files/content) and
downloads (GET .../files/download) of binary files up to 100 MB byte for byte, limits, errors,
the auth matrix, and clients that go away in the middle of a transfer."""
import hashlib
import http.client
import json
import os
import random
import socket
import sys
import time
import unittest
import urllib.parse

from apistack import ModuleStack

LIMIT = 120 << 20  # sandpipe-api --max-upload for this module: above the 100 MB test file
BIG = 100 * 1000 * 1000
STACK = ModuleStack(pool=2, api_extra=["--max-upload", str(LIMIT)], extra=["--max-upload", str(LIMIT)])
setUpModule, tearDownModule = STACK.start, STACK.stop


def random_chunks(total, seed, chunk=1 << 20):
    """total pseudo-random bytes in pieces (never all in memory), and their running sha256."""
    rng = random.Random(seed)
    digest = hashlib.sha256()
    left = total
    while left:
        b = rng.randbytes(min(chunk, left))
        digest.update(b)
        left -= len(b)
        yield b
    random_chunks.digest = digest.hexdigest()


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.alice = STACK.token(sub="alice", role="user")
        cls.bob = STACK.token(sub="bob", role="user")
        cls.sid = STACK.api_create_session(cls.alice)

    def url(self, kind, path, **query):
        q = urllib.parse.urlencode({"path": path, **query})
        return f"/api/v1/sessions/{self.sid}/files/{kind}?{q}"

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.s.http_port, timeout=120)

    def upload(self, path, body, token=None, length=None, **query):
        """PUT body (bytes or an iterable of bytes: chunked unless length is given)."""
        c = self.conn()
        try:
            h = {"Authorization": "Bearer " + (token or self.alice),
                 "Content-Type": "application/octet-stream"}
            if length is not None:
                h["Content-Length"] = str(length)
            c.request("PUT", self.url("content", path, **query), body=body, headers=h,
                      encode_chunked=length is None and not isinstance(body, bytes))
            r = c.getresponse()
            payload = r.read()
            self.assertIn("application/json", r.getheader("Content-Type", ""), payload)
            return r.status, json.loads(payload)
        finally:
            c.close()

    def download(self, path, token=None, **query):
        """GET the file: (status, headers, sha256 hex or the JSON error, byte count)."""
        c = self.conn()
        try:
            c.request("GET", self.url("download", path, **query),
                      headers={"Authorization": "Bearer " + (token or self.alice)})
            r = c.getresponse()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
            if r.status != 200:
                return r.status, hdrs, json.loads(r.read()), 0
            digest, n = hashlib.sha256(), 0
            while True:
                b = r.read(1 << 20)
                if not b:
                    break
                digest.update(b)
                n += len(b)
            return r.status, hdrs, digest.hexdigest(), n
        finally:
            c.close()

    def download_bytes(self, path, **query):
        c = self.conn()
        try:
            c.request("GET", self.url("download", path, **query),
                      headers={"Authorization": "Bearer " + self.alice})
            r = c.getresponse()
            body = r.read()
            self.assertEqual(r.status, 200, body)
            return body
        finally:
            c.close()

    def stat(self, path):
        return self.s.request("GET", self.url("stat", path), token=self.alice)

    def listing(self, path):
        st, body, _ = self.s.request("GET", f"/api/v1/sessions/{self.sid}/files?path={path}",
                                     token=self.alice)
        self.assertEqual(st, 200, body)
        return sorted(e["name"] for e in body["entries"])

    def assertApiError(self, status, body, want, code=None):
        self.assertEqual(status, want, body)
        self.assertIsInstance(body.get("error", {}).get("message"), str, body)
        if code:
            self.assertEqual(body["error"]["code"], code, body)

    def wait_for(self, what, cond, deadline_s=30):
        """Polls cond until true (the deadline only bounds the test; nothing is timed)."""
        end = time.monotonic() + deadline_s
        while not cond():
            if time.monotonic() > end:
                self.fail(f"never happened: {what}")
            time.sleep(0.05)

    def xfer_keys(self):
        return [k for k in self.s.redis("--scan", "--pattern", "sp:xfer:*").split() if k]


class RoundTrips(Base):
    def test_100_mb_of_random_bytes_come_back_byte_identical(self):
        t0 = time.monotonic()
        st, body = self.upload("big/random.bin", random_chunks(BIG, seed=5), length=BIG)
        t_up = time.monotonic() - t0
        self.assertEqual(st, 200, body)
        self.assertEqual(body, {"path": "/workspace/big/random.bin", "size": BIG})
        sent = random_chunks.digest
        t0 = time.monotonic()
        st, hdrs, got, n = self.download("big/random.bin")
        t_down = time.monotonic() - t0
        self.assertEqual(st, 200, got)
        self.assertEqual(n, BIG)
        self.assertEqual(got, sent)
        self.assertEqual(hdrs["content-type"], "application/octet-stream")
        self.assertEqual(hdrs["content-length"], str(BIG))
        self.assertIn('attachment; filename="random.bin"', hdrs["content-disposition"])
        print(f"\n100 MB through nginx: upload {BIG / t_up / 1e6:.0f} MB/s, "
              f"download {BIG / t_down / 1e6:.0f} MB/s", file=sys.stderr)

    def test_an_empty_file(self):
        st, body = self.upload("empty.bin", b"")
        self.assertEqual((st, body["size"]), (200, 0), body)
        st, hdrs, got, n = self.download("empty.bin")
        self.assertEqual((st, n, hdrs["content-length"]), (200, 0, "0"))
        self.assertEqual(got, hashlib.sha256(b"").hexdigest())

    def test_every_byte_value_chunked_upload_and_ranges(self):
        data = bytes(range(256)) * 1024 + b"\r\n0\r\n\r\n\x00"
        st, body = self.upload("bytes.bin", iter([data[:1000], data[1000:]]))  # chunked
        self.assertEqual((st, body["size"]), (200, len(data)), body)
        self.assertEqual(self.download_bytes("bytes.bin"), data)
        self.assertEqual(self.download_bytes("bytes.bin", offset=10, length=300), data[10:310])
        self.assertEqual(self.download_bytes("bytes.bin", offset=len(data) - 5), data[-5:])

    def test_mode_parents_and_replacing_a_file(self):
        st, body = self.upload("a/b/c/run.sh", b"#!/bin/sh\necho hi\n", mode="0755")
        self.assertEqual(st, 200, body)
        st, s, _ = self.stat("a/b/c/run.sh")
        self.assertEqual((st, s["mode"]), (200, "0755"), s)
        st, body = self.upload("a/b/c/run.sh", b"echo bye\n")
        self.assertEqual(st, 200, body)
        self.assertEqual(self.download_bytes("a/b/c/run.sh"), b"echo bye\n")
        st, body = self.upload("nodir/x.bin", b"x", parents="false")
        self.assertEqual(st, 404, body)

    def test_append_goes_through_small_writes(self):
        self.assertEqual(self.upload("log.txt", b"one\n")[0], 200)
        st, body = self.upload("log.txt", b"two\n", append="true")
        self.assertEqual(st, 200, body)
        self.assertEqual(self.download_bytes("log.txt"), b"one\ntwo\n")
        st, body = self.upload("log.txt", b"x" * (600 << 10), append="true")
        self.assertApiError(st, body, 413, "too_large")


class Limits(Base):
    def test_over_max_bytes_is_413_and_leaves_no_file(self):
        st, body = self.upload("limited.bin", iter([b"x" * 65536] * 16), max_bytes=1000)
        self.assertApiError(st, body, 413, "too_large")
        st, body = self.upload("limited.bin", b"x" * 5000, max_bytes=1000)  # announced length
        self.assertApiError(st, body, 413, "too_large")
        st, s, _ = self.stat("limited.bin")
        self.assertEqual(st, 404, s)
        self.assertNotIn("limited.bin", " ".join(self.listing(".")))
        self.assertEqual(self.xfer_keys(), [])  # the gateway streams it: no Redis transfer lists

    def test_a_body_over_the_server_limit_is_refused_before_it_is_sent(self):
        c = self.conn()
        try:
            c.putrequest("PUT", self.url("content", "huge.bin"))
            c.putheader("Authorization", "Bearer " + self.alice)
            c.putheader("Content-Length", str(LIMIT + 1))
            c.endheaders()
            r = c.getresponse()
            body = json.loads(r.read())
        finally:
            c.close()
        self.assertApiError(r.status, body, 413, "too_large")
        self.assertEqual(self.stat("huge.bin")[0], 404)

    def test_bad_query_values(self):
        st, body = self.upload("q.bin", b"x", max_bytes="lots")
        self.assertApiError(st, body, 400, "bad_request")
        st, _, body, _ = self.download("q.bin", offset="-1")
        self.assertApiError(st, body, 400, "bad_request")
        c = self.conn()
        c.request("GET", f"/api/v1/sessions/{self.sid}/files/download",
                  headers={"Authorization": "Bearer " + self.alice})
        r = c.getresponse()
        self.assertApiError(r.status, json.loads(r.read()), 400, "bad_request")
        c.close()


class Errors(Base):
    def test_paths_outside_the_workspace_reach_the_sandbox_only(self):
        """The sandbox is the boundary (bwrap): /etc is the sandbox's, read-only."""
        st, body = self.upload("../../etc/evil", b"x")
        self.assertApiError(st, body, 403, "permission_denied")
        self.assertIn("Read-only file system", body["error"]["message"])
        passwd = self.download_bytes("/etc/passwd")
        self.assertIn(b"user:x:1000:1000:sandbox user:/workspace:/bin/bash", passwd)  # generated, not the host's

    def test_missing_file_is_404(self):
        st, hdrs, body, _ = self.download("no/such.bin")
        self.assertApiError(st, body, 404, "not_found")
        self.assertIn("application/json", hdrs["content-type"])

    def test_directory_is_400(self):
        self.upload("adir/f.txt", b"f")
        st, _, body, _ = self.download("adir")
        self.assertApiError(st, body, 400, "is_directory")
        st, _, body, _ = self.download("adir/f.txt", offset=5)
        self.assertApiError(st, body, 400, "bad_request")

    def test_viewer_may_download_but_not_upload(self):
        self.assertEqual(self.upload("shared.txt", b"shared")[0], 200)
        viewer = self.s.token(sub="dash", role="viewer", session=self.sid)
        st, _, got, _ = self.download("shared.txt", token=viewer)
        self.assertEqual((st, got), (200, hashlib.sha256(b"shared").hexdigest()))
        st, body = self.upload("shared.txt", b"changed", token=viewer)
        self.assertApiError(st, body, 403, "forbidden")
        self.assertEqual(self.download_bytes("shared.txt"), b"shared")

    def test_another_users_session_is_404(self):
        self.upload("private.txt", b"mine")
        st, body = self.upload("private.txt", b"bob's", token=self.bob)
        self.assertApiError(st, body, 404, "not_found")
        st, _, body, _ = self.download("private.txt", token=self.bob)
        self.assertApiError(st, body, 404, "not_found")
        self.assertEqual(self.download_bytes("private.txt"), b"mine")

    def test_no_token_is_401(self):
        c = self.conn()
        c.request("GET", self.url("download", "private.txt"))
        r = c.getresponse()
        self.assertApiError(r.status, json.loads(r.read()), 401, "unauthorized")
        c.close()


class ClientsGoingAway(Base):
    def raw(self, head, body=b""):
        sock = socket.create_connection(("127.0.0.1", self.s.http_port), timeout=60)
        sock.sendall(head.encode() + body)
        return sock

    def test_a_client_gone_mid_upload_leaves_no_file_and_the_session_works(self):
        self.assertEqual(self.upload("dc/keep.txt", b"keep")[0], 200)
        total = 40 << 20
        sock = self.raw(f"PUT {self.url('content', 'dc/partial.bin')} HTTP/1.1\r\n"
                        f"Host: x\r\nAuthorization: Bearer {self.alice}\r\n"
                        f"Content-Length: {total}\r\n\r\n")
        chunk = os.urandom(1 << 20)
        for _ in range(6):
            sock.sendall(chunk)
        sock.close()
        self.assertEqual(self.xfer_keys(), [])
        self.wait_for("no partial file left", lambda: self.listing("dc") == ["keep.txt"])
        self.assertEqual(self.stat("dc/partial.bin")[0], 404)
        self.assertEqual(self.upload("dc/after.bin", chunk)[0], 200)
        self.assertEqual(self.download_bytes("dc/after.bin"), chunk)

    def test_a_download_dropped_mid_stream_leaves_the_gateway_working(self):
        size = 30 << 20
        st, body = self.upload("drop/src.bin", random_chunks(size, seed=9), length=size)
        self.assertEqual(st, 200, body)
        digest = random_chunks.digest
        for _ in range(3):
            sock = self.raw(f"GET {self.url('download', 'drop/src.bin')} HTTP/1.1\r\n"
                            f"Host: x\r\nAuthorization: Bearer {self.alice}\r\n\r\n")
            got = b""
            while len(got) < (2 << 20):
                b = sock.recv(1 << 16)
                self.assertTrue(b, "the download ended early")
                got += b
            self.assertIn(b"200 OK", got.split(b"\r\n", 1)[0])
            sock.close()
        self.assertEqual(self.xfer_keys(), [])
        st, _, got, n = self.download("drop/src.bin")
        self.assertEqual((st, n, got), (200, size, digest))
        ev = self.s.request("POST", f"/api/v1/sessions/{self.sid}/actions?wait=true",
                            {"action": "run", "args": {"command": "echo alive"}}, token=self.alice)
        self.assertEqual(ev[0], 200, ev[1])
        self.assertIn("alive", ev[1]["observation"]["content"])

    def test_a_download_slower_than_the_gateways_30_s_timeouts_comes_whole(self):
        """lws gives a request 30 s unless told otherwise: a slow reader must still get it all."""
        size = 64 << 20
        st, body = self.upload("slow/src.bin", random_chunks(size, seed=11), length=size)
        self.assertEqual(st, 200, body)
        digest = random_chunks.digest
        c = self.conn()
        try:
            c.request("GET", self.url("download", "slow/src.bin"),
                      headers={"Authorization": "Bearer " + self.alice})
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            h, n = hashlib.sha256(), 0
            for _ in range(size // (2 << 20) + 2):  # 2 MiB a second: over 30 s in all
                b = r.read(2 << 20)
                if not b:
                    break
                h.update(b)
                n += len(b)
                time.sleep(1)
        finally:
            c.close()
        self.assertEqual((n, h.hexdigest()), (size, digest))


if __name__ == "__main__":
    unittest.main()
