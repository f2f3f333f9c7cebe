"""The gateway side of streamed transfers (redis/README.md, "Streamed transfers"), driven through
Redis exactly as the REST API drives it: real Redis, gateway, bwrap sandboxes and executors."""
import hashlib
import json
import os
import secrets
import time
import unittest

from resp import Redis
from test_gateway_limits import StackCase, sandbox_of

CHUNK = 256 * 1024
WINDOW = 8


class Transfer:
    """One transfer, as the API runs it."""

    def __init__(self, st, sid, op, **fields):
        self.r = Redis(st.redis_sock)
        self.id = secrets.token_hex(12)
        self.reply = f"sp:reply:{self.id}"
        self.data = f"sp:xfer:{{{self.id}}}:data"
        self.ack = f"sp:xfer:{{{self.id}}}:ack"
        gw = st.redis("HGET", f"sp:session:{{{sid}}}", "gateway")
        req = {"id": self.id, "op": op, "reply": self.reply, "owner": "alice", "role": "user",
               "session": sid, "data": self.data, "ack": self.ack, **fields}
        self.r("XADD", f"sp:gateway:{gw}:inbox", "*", "r", json.dumps(req))

    def reply_json(self, timeout=60):
        got = self.r("BLPOP", self.reply, timeout)
        if got is None:
            raise TimeoutError("no reply")
        return json.loads(got[1])

    def upload(self, source, abort_after=None):
        """Pushes chunks from source (bytes iterator) within the window; returns the reply."""
        unacked, sent = 0, 0
        for chunk in source:
            while unacked >= WINDOW:
                key, item = self.r("BLPOP", self.ack, self.reply, 60)
                if key.decode() == self.reply:
                    return json.loads(item)
                unacked -= 1
            if abort_after is not None and sent >= abort_after:
                self.r("RPUSH", self.data, b"Aclient went away")
                return self.reply_json()
            self.r("RPUSH", self.data, b"D" + chunk)
            self.r("EXPIRE", self.data, 120)
            unacked += 1
            sent += len(chunk)
        self.r("RPUSH", self.data, b"E")
        return self.reply_json()

    def download(self, stop_after=None):
        """Returns (header, bytes, reply); stops acknowledging after stop_after chunks."""
        header, parts, n = None, [], 0
        while True:
            key, item = self.r("BLPOP", self.data, self.reply, 60)
            if key.decode() == self.reply:
                return header, b"".join(parts), json.loads(item)
            tag, body = item[:1], item[1:]
            if tag == b"H":
                header = json.loads(body)
            elif tag == b"D":
                parts.append(body)
                n += 1
                if stop_after is not None and n >= stop_after:
                    return header, b"".join(parts), None
                self.r("RPUSH", self.ack, b"K")
            else:
                raise AssertionError(f"unexpected item {item[:20]!r}")


def chunks_of(data):
    for i in range(0, len(data), CHUNK):
        yield data[i:i + CHUNK]


class XferTest(StackCase):
    stack_args = {"pool": 1}

    def setUp(self):
        super().setUp()
        self.sid = self.st.create_session()
        self.ws_dir = sandbox_of(self.st, self.sid)["workspace"]

    def test_upload_then_download_byte_identical(self):
        data = os.urandom(20 * 1024 * 1024 + 12345)
        t = Transfer(self.st, self.sid, "file.upload", path="big/x.bin", parents=True)
        rep = t.upload(chunks_of(data))
        self.assertTrue(rep["ok"], rep)
        self.assertEqual(rep["result"]["size"], len(data))
        with open(os.path.join(self.ws_dir, "big", "x.bin"), "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).digest(), hashlib.sha256(data).digest())
        self.assertEqual(t.r("EXISTS", t.data, t.ack), 0)  # cleaned up
        d = Transfer(self.st, self.sid, "file.download", path="big/x.bin")
        header, got, rep = d.download()
        self.assertTrue(rep["ok"], rep)
        self.assertEqual(header["size"], len(data))
        self.assertEqual(rep["result"]["bytes"], len(data))
        self.assertEqual(hashlib.sha256(got).digest(), hashlib.sha256(data).digest())

    def test_empty_and_every_byte(self):
        for name, data in (("empty", b""), ("bytes", bytes(range(256)) * 3)):
            t = Transfer(self.st, self.sid, "file.upload", path=name)
            self.assertTrue(t.upload(chunks_of(data))["ok"])
            _, got, rep = Transfer(self.st, self.sid, "file.download", path=name).download()
            self.assertTrue(rep["ok"], rep)
            self.assertEqual(got, data)

    def test_download_is_paced_by_the_api(self):
        data = os.urandom(12 * 1024 * 1024)
        with open(os.path.join(self.ws_dir, "paced.bin"), "wb") as f:
            f.write(data)
        d = Transfer(self.st, self.sid, "file.download", path="paced.bin")
        _, got, rep = d.download(stop_after=1)
        self.assertIsNone(rep)
        time.sleep(1)  # give the gateway every chance to overrun the window
        queued = d.r("LLEN", d.data)
        self.assertLessEqual(queued, WINDOW + 1, "the gateway pushed past the window")
        # resume: every byte arrives, in order
        d.r("RPUSH", d.ack, b"K")
        _, rest, rep = d.download()
        self.assertTrue(rep["ok"], rep)
        self.assertEqual(got + rest, data)

    def test_abort_mid_upload_leaves_nothing(self):
        data = os.urandom(4 * 1024 * 1024)
        t = Transfer(self.st, self.sid, "file.upload", path="half.bin")
        rep = t.upload(chunks_of(data), abort_after=CHUNK * 3)
        self.assertFalse(rep["ok"])
        self.assertIn("aborted", rep["error"]["message"])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and [n for n in os.listdir(self.ws_dir) if "half" in n]:
            time.sleep(0.05)
        self.assertEqual([n for n in os.listdir(self.ws_dir) if "half" in n], [])
        # the session still works
        t = Transfer(self.st, self.sid, "file.upload", path="after.txt")
        self.assertTrue(t.upload(iter([b"fine"]))["ok"])

    def test_errors_reach_the_api(self):
        t = Transfer(self.st, self.sid, "file.download", path="missing.bin")
        _, _, rep = t.download()
        self.assertEqual(rep["error"]["code"], "not_found")
        t = Transfer(self.st, self.sid, "file.upload", path="../../etc/evil")
        rep = t.upload(iter([b"x"]))
        self.assertEqual(rep["error"]["code"], "permission_denied")  # the sandbox's /etc is read-only
        t = Transfer(self.st, self.sid, "file.upload", path="small", max_bytes=10)
        rep = t.upload(chunks_of(b"y" * 100))
        self.assertEqual(rep["error"]["code"], "too_large")
        self.assertFalse(os.path.exists(os.path.join(self.ws_dir, "small")))
        t = Transfer(self.st, self.sid, "file.upload", path="x", data="not-a-key")
        self.assertEqual(t.reply_json()["error"]["code"], "bad_request")


if __name__ == "__main__":
    unittest.main()
