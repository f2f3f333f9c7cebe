"""Bytes that are not UTF-8 at the service's edges (issue 29), through nginx, sandpipe-api, the
gateway and a bwrap sandbox: a JSON body that is not UTF-8 is refused (REST on the gateway and
on the API, a WebSocket message); a file name the sandbox chose that is not UTF-8 is listed in
valid UTF-8 with its exact bytes in a `*_b64` field, and the file can be read, moved and
deleted through it (docs/api.md, "Names that are not UTF-8"); whatever a session's Redis stream
holds, its replay over the WebSocket and the REST events are valid UTF-8 and nothing is left
out. Every text received here is decoded strictly (Python's codec refuses overlongs and
surrogates as the gateway's check does)."""
import base64
import io
import json
import time
import unittest
import urllib.parse
import zipfile

from apistack import ClassStack, ModuleStack
from wsclient import CLOSE, TEXT

STACK = ModuleStack(pool=1)
setUpModule, tearDownModule = STACK.start, STACK.stop

BAD_NAME = b"a\xffb"  # a name of three bytes, the middle one never in UTF-8
SHOWN = "a\ufffdb"    # how it is shown: each byte that is not UTF-8 as U+FFFD


def b64(b):
    return base64.b64encode(b).decode()


def strict_json(payload):
    """The body as JSON, its bytes decoded as strict UTF-8 (raises on any invalid byte)."""
    return json.loads(payload.decode("utf-8"))


def shell_bytes(b):
    """A shell word that expands to the bytes b, written in ASCII: $(printf '\\ooo...')."""
    return "\"$(printf '" + "".join(f"\\{c:03o}" for c in b) + "')\""


def run(token, sid, command):
    st, body, _ = STACK.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                {"action": "run", "args": {"command": command}}, token=token)
    if st != 200 or body["observation"]["extras"]["metadata"]["exit_code"] != 0:
        raise AssertionError(f"{command}: {st} {body}")
    return body


def stream_top(st, sid):
    """The seq of the last event in the session's Redis stream (0: none)."""
    r = st.redis_conn()
    try:
        top = r("XREVRANGE", f"sp:session:{{{sid}}}:events", "+", "-", "COUNT", "1")
    finally:
        r.close()
    return int(top[0][0].decode().split("-")[1]) if top else 0


def replay(st, sid, token, until_seq, timeout=60):
    """Every message of the session's stream from the start through seq until_seq, as raw
    (opcode, bytes) frames."""
    ws = st.ws(f"/ws/sessions/{sid}?since=0", token)
    frames, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            op, data = ws.recv(max(0.1, deadline - time.monotonic()))
            if op == CLOSE:
                raise AssertionError(f"closed during the replay: {data!r}")
            frames.append((op, data))
            try:
                seq = json.loads(data.decode("utf-8", "replace")).get("seq", 0)
            except ValueError:
                continue
            if seq >= until_seq:
                return frames
    finally:
        ws.close()
    raise AssertionError(f"no seq {until_seq} in the replay: {frames[-3:]!r}")


class RefusedBodies(unittest.TestCase):
    """A JSON body with bytes that are not UTF-8 is a 400 (a bad_request message on the
    WebSocket), wherever it is parsed: nothing is queued, stored or run."""

    @classmethod
    def setUpClass(cls):
        cls.alice = STACK.token(sub="alice", role="user")
        cls.sid = STACK.api_create_session(cls.alice)

    def post(self, path, raw):
        return STACK.request("POST", path, raw, token=self.alice,
                             headers={"Content-Type": "application/json"})

    def assertRefused(self, st, body):
        self.assertEqual(st, 400, body)
        self.assertEqual(body["error"]["code"], "bad_request", body)
        self.assertIn("not valid UTF-8", body["error"]["message"])

    def last_seq(self):
        return stream_top(STACK, self.sid)

    def test_an_action_body_with_invalid_utf8_is_refused_by_the_gateway(self):
        before = self.last_seq()
        st, body, _ = self.post(f"/api/v1/sessions/{self.sid}/actions",
                                b'{"action":"run","args":{"command":"echo \xff\xfe"}}')
        self.assertRefused(st, body)
        self.assertEqual(body["error"]["message"], "the body is not valid UTF-8 (byte 40)")
        self.assertEqual(self.last_seq(), before)  # nothing was stored
        # overlongs and surrogates are not UTF-8 either
        for bad in (b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"):
            st, body, _ = self.post(f"/api/v1/sessions/{self.sid}/actions",
                                    b'{"action":"run","args":{"command":"echo ' + bad + b'"}}')
            self.assertRefused(st, body)

    def test_a_files_body_with_invalid_utf8_is_refused_by_the_gateway(self):
        st, body, _ = self.post(f"/api/v1/sessions/{self.sid}/files/mkdir", b'{"path":"d\xff"}')
        self.assertRefused(st, body)

    def test_a_body_the_api_reads_with_invalid_utf8_is_refused(self):
        st, body, _ = self.post("/api/v1/sessions", b'{"env":{"GREETING":"h\xffi"}}')
        self.assertRefused(st, body)
        self.assertEqual(body["error"]["message"], "the body is not valid UTF-8 (byte 21)")

    def test_an_openhands_action_with_invalid_utf8_is_refused(self):
        st, body, _ = STACK.request(
            "POST", f"/runtime/{self.sid}/execute_action",
            b'{"action":{"action":"run","args":{"command":"echo \xff"}}}',
            headers={"X-Session-API-Key": self.alice, "Content-Type": "application/json"})
        self.assertEqual(st, 400, body)
        self.assertEqual(body, {"detail": "There was an error parsing the body"})

    def test_a_binary_websocket_message_with_invalid_utf8_is_refused(self):
        """Text frames are checked as they come (1007); a binary frame holding JSON is checked
        when it is parsed: an error, the connection lives on."""
        before = self.last_seq()
        ws = STACK.ws(f"/ws/sessions/{self.sid}", self.alice)
        try:
            ws.send_binary(b'{"type":"action","id":"bad","action":{"action":"run",'
                           b'"args":{"command":"echo \xff\xfe"}}}')
            op, data = ws.recv(30)
            self.assertEqual(op, TEXT)
            m = strict_json(data)
            self.assertEqual(m.get("type"), "error", m)
            self.assertEqual(m["error"]["code"], "bad_request", m)
            self.assertIn("not valid UTF-8", m["error"]["message"])
            ws.send_json({"type": "ping", "id": "p"})
            self.assertEqual(ws.recv_json(30), {"type": "pong", "id": "p"})
        finally:
            ws.close()
        self.assertEqual(self.last_seq(), before)


class NonUtf8Names(unittest.TestCase):
    """A file the sandbox named with bytes that are not UTF-8: every reply that names it is
    valid UTF-8 (the name shown with U+FFFD), the exact bytes are in the `_b64` field beside
    it, and the file routes take them back (a percent-encoded query, or `*_b64` in a body)."""

    @classmethod
    def setUpClass(cls):
        cls.alice = STACK.token(sub="alice", role="user")
        cls.sid = STACK.api_create_session(cls.alice)

    def make(self, folder, name=BAD_NAME, content="exact\n"):
        run(self.alice, self.sid, f"rm -rf /workspace/{folder} && mkdir -p /workspace/{folder} && "
            f"printf %s '{content}' > /workspace/{folder}/{shell_bytes(name)}")

    def get(self, path, method="GET"):
        st, payload, _ = STACK.request(method, path, token=self.alice, raw=True)
        return st, strict_json(payload)

    def files(self, route, path, **query):
        q = urllib.parse.urlencode({"path": path, **query})
        return f"/api/v1/sessions/{self.sid}/files{route}?{q}"

    def test_a_listing_shows_the_name_in_utf8_with_its_exact_bytes(self):
        self.make("l1")
        st, body = self.get(self.files("", "l1"))
        self.assertEqual(st, 200, body)
        (e,) = body["entries"]
        self.assertEqual(e["name"], SHOWN)
        self.assertEqual(base64.b64decode(e["name_b64"]), BAD_NAME)
        self.assertEqual(body["path"], "/workspace/l1")
        self.assertNotIn("path_b64", body)  # only names that need it carry it

    def test_the_exact_bytes_read_stat_download_and_delete_the_file(self):
        self.make("l2")
        exact = "l2/" + urllib.parse.quote_from_bytes(BAD_NAME)  # l2/a%FFb
        q = f"/api/v1/sessions/{self.sid}/files"
        st, body = self.get(f"{q}/content?path={exact}")
        self.assertEqual(st, 200, body)
        self.assertEqual(body["content"], "exact\n")
        self.assertEqual(body["path"], "/workspace/l2/" + SHOWN)
        self.assertEqual(base64.b64decode(body["path_b64"]), b"/workspace/l2/" + BAD_NAME)
        st, body = self.get(f"{q}/stat?path={exact}")
        self.assertEqual((st, body["type"], body["size"]), (200, "file", 6), body)
        st, payload, hdrs = STACK.request("GET", f"{q}/download?path={exact}", token=self.alice,
                                          raw=True)
        self.assertEqual((st, payload), (200, b"exact\n"))
        hdrs["content-disposition"].encode("ascii")  # the header names it in ASCII
        st, body = self.get(f"{q}?path={exact}", "DELETE")
        self.assertEqual(st, 200, body)
        self.assertEqual(base64.b64decode(body["path_b64"]), b"/workspace/l2/" + BAD_NAME)
        self.assertEqual(self.get(self.files("", "l2"))[1]["entries"], [])

    def test_a_body_names_the_file_by_its_exact_bytes(self):
        self.make("l3")
        st, body, _ = STACK.request(
            "POST", f"/api/v1/sessions/{self.sid}/files/move",
            {"from_b64": b64(b"l3/" + BAD_NAME), "to": "l3/fixed"}, token=self.alice, raw=True)
        body = strict_json(body)
        self.assertEqual(st, 200, body)
        self.assertEqual(base64.b64decode(body["from_b64"]), b"/workspace/l3/" + BAD_NAME)
        self.assertEqual(body["to"], "/workspace/l3/fixed")
        self.assertEqual([e["name"] for e in self.get(self.files("", "l3"))[1]["entries"]], ["fixed"])
        # and back, into a name that is not UTF-8, with a directory made the same way
        st, body, _ = STACK.request(
            "POST", f"/api/v1/sessions/{self.sid}/files/mkdir",
            {"path_b64": b64(b"l3/d\xfe")}, token=self.alice, raw=True)
        self.assertEqual(st, 200, body)
        st, body, _ = STACK.request(
            "POST", f"/api/v1/sessions/{self.sid}/files/move",
            {"from": "l3/fixed", "to_b64": b64(b"l3/d\xfe/" + BAD_NAME)}, token=self.alice, raw=True)
        self.assertEqual(st, 200, body)
        run(self.alice, self.sid, f"test -f /workspace/l3/{shell_bytes(b'd' + bytes([0xfe]))}/{shell_bytes(BAD_NAME)}")
        # a name given as a listing shows it (both fields) is its exact bytes
        entry = {k: v for k, v in self.get(self.files("", "l3"))[1]["entries"][0].items()
                 if k in ("name", "name_b64")}
        self.assertEqual(entry, {"name": "d\ufffd", "name_b64": b64(b"d\xfe")})
        st, body, _ = STACK.request(
            "POST", f"/api/v1/sessions/{self.sid}/files/move",
            {"from": "l3/d\ufffd", "from_b64": b64(b"l3/d\xfe"), "to": "l3/e"}, token=self.alice)
        self.assertEqual(st, 200, body)
        # base64 that is not, or a name with NUL, is refused
        for bad in ({"from_b64": "%%%", "to": "l3/z"}, {"from_b64": b64(b"a\0b"), "to": "l3/z"}):
            st, body, _ = STACK.request("POST", f"/api/v1/sessions/{self.sid}/files/move", bad,
                                        token=self.alice)
            self.assertEqual((st, body["error"]["code"]), (400, "bad_request"), (bad, body))

    def test_openhands_list_files_is_utf8(self):
        self.make("l4")
        st, payload, _ = STACK.request("POST", f"/runtime/{self.sid}/list_files",
                                       {"path": "/workspace/l4"}, raw=True,
                                       headers={"X-Session-API-Key": self.alice})
        self.assertEqual(st, 200, payload)
        self.assertEqual(strict_json(payload), [SHOWN])

    def test_openhands_download_files_keeps_the_exact_name_in_the_zip(self):
        self.make("l5")
        st, payload, _ = STACK.request("GET", f"/runtime/{self.sid}/download_files?path=/workspace/l5",
                                       raw=True, headers={"X-Session-API-Key": self.alice})
        self.assertEqual(st, 200, payload[:300])
        with zipfile.ZipFile(io.BytesIO(payload)) as z:
            (info,) = z.infolist()
            # not marked UTF-8 (bit 11): zipfile reads the name as cp437, which gives the bytes back
            self.assertEqual(info.flag_bits & 0x800, 0)
            self.assertEqual(info.filename.encode("cp437"), BAD_NAME)
            self.assertEqual(z.read(info), b"exact\n")

    def test_the_session_stream_stays_utf8_when_commands_meet_such_names(self):
        """A working directory, an editor view and command output naming the file: each event
        of the replay is valid UTF-8."""
        self.make("l6")
        d = shell_bytes(b"/workspace/l6/dir\xff")
        body = run(self.alice, self.sid, f"mkdir -p {d} && cd {d} && ls /workspace/l6")
        self.assertEqual(body["observation"]["extras"]["metadata"]["working_dir"],
                         "/workspace/l6/dir\ufffd")
        st, body, _ = STACK.request("POST", f"/api/v1/sessions/{self.sid}/actions?wait=true",
                                    {"action": "read", "args": {"path": "/workspace/l6"}},
                                    token=self.alice)
        self.assertEqual(st, 200, body)
        run(self.alice, self.sid, "cd /workspace")
        last = stream_top(STACK, self.sid)
        for op, data in replay(STACK, self.sid, self.alice, last):
            self.assertEqual(op, TEXT)
            strict_json(data)


class HostileRedisEntry(ClassStack, unittest.TestCase):
    """An entry in a session's stream that is not UTF-8 (written by anyone holding a Redis
    password) reaches readers as valid UTF-8, its bad bytes as U+FFFD: not dropped, and not
    breaking the replay of what follows."""
    STACK_KW = dict(pool=1)

    def test_the_replay_and_the_rest_events_are_utf8_whatever_redis_holds(self):
        st = self.st
        alice = st.token(sub="alice", role="user")
        sid = st.api_create_session(alice)
        code, body, _ = st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                   {"action": "run", "args": {"command": "echo before"}}, token=alice)
        self.assertEqual(code, 200, body)
        key = f"sp:session:{{{sid}}}:events"
        top = stream_top(st, sid)
        r = st.redis_conn()
        try:
            st.kill_gateway()
            hostile = (b'{"seq":%d,"ts":1.5,"type":"note","text":"x\xff\xfe y \xc0\xaf z \xed\xa0\x80 end"}'
                       % (top + 1))
            r("XADD", key, f"0-{top + 1}", "e", hostile)
        finally:
            r.close()
        st.log.close()
        st.start_gateway()
        deadline = time.monotonic() + 60
        while st.redis("HGET", f"sp:session:{{{sid}}}", "status") != "READY":
            self.assertLess(time.monotonic(), deadline, "the session was not restored")
            time.sleep(0.1)
        # the stream goes on after the entry
        code, body, _ = st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                   {"action": "run", "args": {"command": "echo after"}}, token=alice)
        self.assertEqual(code, 200, body)
        last = body["seq"]
        seen = {}
        for op, data in replay(st, sid, alice, last):
            self.assertEqual(op, TEXT)
            m = strict_json(data)
            seen[m["seq"]] = m
        self.assertEqual(sorted(seen), list(range(1, last + 1)))  # no gap, none dropped
        self.assertEqual(seen[top + 1]["type"], "note")
        self.assertEqual(seen[top + 1]["text"], "x\ufffd\ufffd y \ufffd\ufffd z \ufffd\ufffd\ufffd end")
        # the REST events, read by sandpipe-api from Redis, likewise
        code, payload, _ = st.request("GET", f"/api/v1/sessions/{sid}/events?since={top}&limit=1",
                                      token=alice, raw=True)
        self.assertEqual(code, 200, payload)
        (ev,) = strict_json(payload)["events"]
        self.assertEqual(ev["text"], seen[top + 1]["text"])


if __name__ == "__main__":
    unittest.main()
