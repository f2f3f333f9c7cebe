"""RFC 6455 conformance of the gateway's WebSocket server against a hostile client, on the wire:
raw frames built by hand against the real gateway (stack.py). Each rule broken gets its close
code in a close frame, at once, and leaves the gateway and its other clients working; a large
message within the bound still works (docs/api.md, "Closing")."""
import json
import os
import struct
import time
import unittest

from stack import Stack
from wsclient import CLOSE, PING, PONG, TEXT, BINARY, WS

CONT = 0
MAX_MSG = 1 << 20  # the gateway's bound on one client message


def header(b0, length, form=None, masked=True):
    """A frame header by hand: first byte b0, the length in the form asked (7, 16 or 64 bits,
    default the shortest), and a mask key."""
    mbit = 0x80 if masked else 0
    form = form or (7 if length < 126 else 16 if length < 65536 else 64)
    if form == 7:
        h = bytes([b0, mbit | length])
    elif form == 16:
        h = bytes([b0, mbit | 126]) + struct.pack(">H", length)
    else:
        h = bytes([b0, mbit | 127]) + struct.pack(">Q", length)
    return h + (os.urandom(4) if masked else b"")


def read_close(ws, timeout=10):
    """Reads up to the server's close frame: (code, reason, the JSON messages before it)."""
    msgs = []
    deadline = time.monotonic() + timeout
    while True:
        op, data = ws.recv(max(0.1, deadline - time.monotonic()))
        if op == CLOSE:
            code = struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None
            return code, data[2:].decode(), msgs
        msgs.append(json.loads(data))


def expect_end_of_connection(ws, timeout=10):
    """After the client's close reply: the server ends the TCP connection without sending
    anything more (no second close frame)."""
    try:
        frame = ws.recv_frame(timeout)
    except ConnectionError:
        return
    raise AssertionError(f"frame after the close handshake: {frame!r}")


class WebSocketProtocol(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.st = Stack(pool=0)  # no sandbox needed: the control endpoint suffices

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def setUp(self):
        self.socks = []
        # A client that is already connected when the hostile one misbehaves.
        self.bystander = self.open()

    def tearDown(self):
        for ws in self.socks:
            try:
                ws.sock.close()
            except OSError:
                pass

    def open(self, path="/ws/control", **kw):
        ws = self.st.ws(path, **kw)
        self.socks.append(ws)
        return ws

    def health(self, ws):
        ws.send_json({"id": "h", "method": "health", "params": {}})
        m = ws.recv_json(10)
        self.assertEqual(m.get("type"), "result", m)
        return m["result"]

    def assert_closed_with(self, ws, code, reason_part=None, error=None):
        """The server closes ws with code (after an error message with code `error`, if given),
        answers the client's close by ending the connection, and the others keep working."""
        got, reason, msgs = read_close(ws)
        self.assertEqual(got, code, f"reason {reason!r}, messages {msgs}")
        self.assertLessEqual(len(reason.encode()), 123)
        if reason_part:
            self.assertIn(reason_part, reason)
        if error:
            self.assertIn(error, [m.get("error", {}).get("code") for m in msgs], msgs)
        ws.send_frame(CLOSE, struct.pack(">H", code))
        expect_end_of_connection(ws)
        self.assertIsNone(self.st.gw.poll(), "the gateway died")
        self.health(self.bystander)
        self.health(self.open())

    # ---- what libwebsockets 4.1.6 did not enforce (ws_guard.c, RECEIVE) ----

    def test_invalid_utf8_in_a_text_frame_closes_1007(self):
        ws = self.open()
        ws.send_frame(TEXT, b'{"id":1,"method":"health","x":"\xff\xfe"}')
        self.assert_closed_with(ws, 1007, "UTF-8", error="bad_request")

    def test_utf8_is_checked_across_fragments(self):
        # U+D800 (a surrogate) split over two fragments: each fragment alone could be valid.
        ws = self.open()
        ws.send_frame(TEXT, b'{"id":1,"method":"health","x":"\xed', fin=False)
        ws.send_frame(CONT, b'\xa0\x80"}')
        self.assert_closed_with(ws, 1007)
        # A message that ends inside a character, with an empty last fragment.
        ws = self.open()
        ws.send_frame(TEXT, b'{"id":1,"method":"health"}\xe2\x82', fin=False)
        ws.send_frame(CONT, b"")
        self.assert_closed_with(ws, 1007)

    def test_a_character_split_across_fragments_is_fine(self):
        ws = self.open()
        euro = "\u20ac".encode()
        ws.send_frame(TEXT, b'{"id":1,"method":"health","x":"' + euro[:1], fin=False)
        ws.send_frame(PING, b"between")  # a control frame between fragments
        ws.send_frame(CONT, euro[1:2], fin=False)
        ws.send_frame(CONT, euro[2:] + b'"}')
        got = {}
        while len(got) < 2:  # the pong and the result, in either order
            op, _, payload = ws.recv_frame(10)
            got[op] = payload
        self.assertEqual(got[PONG], b"between")
        self.assertEqual(json.loads(got[TEXT])["type"], "result")
        # binary messages are not text: any bytes are fine (a JSON parse error, not a close)
        ws.send_frame(BINARY, b"\xff\xfe")
        self.assertEqual(ws.recv_json(10)["error"]["code"], "bad_request")
        self.health(ws)

    def test_no_upgrade_behind_a_plain_request_on_one_connection(self):
        # The frame watch starts with a connection's first request; a plain HTTP request first
        # (as nginx's route lookups send) would leave an upgrade behind it unwatched: refused.
        import socket
        sock = socket.create_connection(("127.0.0.1", self.st.port), timeout=10)
        self.socks.append(type("S", (), {"sock": sock})())
        sock.sendall(b"GET /_sp/route HTTP/1.1\r\nHost: x\r\n\r\n")
        first = sock.recv(65536)
        self.assertTrue(first.startswith(b"HTTP/1.1 "), first)
        path = f"/ws/control?token={self.st.token()}"
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        rest = b""
        try:
            while True:
                b = sock.recv(65536)
                if not b:
                    break
                rest += b
        except (ConnectionError, socket.timeout):
            pass
        self.assertNotIn(b"101 Switching Protocols", rest, rest)
        self.assertIsNone(self.st.gw.poll(), "the gateway died")
        self.health(self.bystander)

    def test_an_unmasked_frame_closes_1002(self):
        ws = self.open()
        ws.send_frame(TEXT, b'{"id":1,"method":"health"}', mask=False)
        self.assert_closed_with(ws, 1002, "masked")

    def test_an_unmasked_frame_right_behind_the_request_closes_1002(self):
        # Sent in the same write as the upgrade request: lws reads both at once.
        frame = bytes([0x81, 26]) + b'{"id":1,"method":"health"}'
        ws = self.open(early=frame)
        self.assert_closed_with(ws, 1002, "masked")

    def test_a_2_to_the_63_byte_length_closes_1009_at_once(self):
        ws = self.open()
        ws.sock.sendall(header(0x82, 1 << 63, form=64))  # no payload follows
        self.assert_closed_with(ws, 1009, error="too_large")

    def test_a_huge_announced_length_closes_1009_without_waiting_for_the_payload(self):
        ws = self.open()
        ws.sock.sendall(header(0x81, (1 << 62) + 5, form=64) + b"abc")
        self.assert_closed_with(ws, 1009, error="too_large")

    def test_fragments_adding_up_past_the_bound_close_1009(self):
        ws = self.open()
        half = b"x" * (MAX_MSG // 2 + 1)
        ws.send_frame(TEXT, b'{"pad":"' + half, fin=False)
        ws.sock.sendall(header(0x00, MAX_MSG // 2, form=64))  # header only: it is enough
        self.assert_closed_with(ws, 1009, error="too_large")

    def test_a_control_frame_over_125_bytes_closes_1002(self):
        ws = self.open()
        ws.sock.sendall(header(0x89, 200, form=16) + b"p" * 200)
        self.assert_closed_with(ws, 1002, "125")

    # ---- what libwebsockets enforces itself (checked here so it stays so) ----

    def test_reserved_bits_close_1002(self):
        for rsv in (0x40, 0x20, 0x10):
            ws = self.open()
            ws.send_frame(TEXT | rsv, b'{"id":1,"method":"health"}')
            self.assert_closed_with(ws, 1002)

    def test_unknown_opcodes_close_1002(self):
        for opcode in (3, 7, 0xB, 0xF):
            ws = self.open()
            ws.send_frame(opcode, b"{}")
            self.assert_closed_with(ws, 1002)

    def test_a_fragmented_control_frame_closes_1002(self):
        ws = self.open()
        ws.send_frame(PING, b"x", fin=False)
        self.assert_closed_with(ws, 1002)

    def test_a_continuation_without_a_start_closes_1002(self):
        ws = self.open()
        ws.send_frame(CONT, b"{}")
        self.assert_closed_with(ws, 1002)

    def test_a_new_message_inside_a_fragmented_one_closes_1002(self):
        ws = self.open()
        ws.send_frame(TEXT, b'{"id":1,', fin=False)
        ws.send_frame(TEXT, b'{"id":2,"method":"health"}')
        self.assert_closed_with(ws, 1002)

    # ---- refusals by the gateway ----

    def test_an_auth_failure_is_an_error_then_close_1008(self):
        for tok in ("", "garbage", self.st.token(exp_in=-10), self.st.token()[:-4] + "AAAA"):
            ws = self.open(token=tok) if tok else WS("127.0.0.1", self.st.port, "/ws/control")
            self.socks.append(ws)
            self.assert_closed_with(ws, 1008, "unauthorized", error="unauthorized")

    def test_an_unknown_endpoint_is_an_error_then_close_1008(self):
        ws = self.open("/ws/nothing-here")
        self.assert_closed_with(ws, 1008, "not_found", error="not_found")
        ws = self.open("/ws/sessions/s-doesnotexist")
        self.assert_closed_with(ws, 1008, "not_found", error="not_found")

    # ---- what must keep working ----

    def test_a_large_message_within_the_bound_works(self):
        ws = self.open()
        msg = json.dumps({"id": "big", "method": "health", "params": {}, "pad": ""}).encode()
        pad = b"y" * (MAX_MSG - len(msg))
        body = msg[:-2] + pad + msg[-2:]
        self.assertEqual(len(body), MAX_MSG)
        ws.send_frame(TEXT, body)  # one frame of exactly 1 MiB
        self.assertEqual(ws.recv_json(10)["id"], "big")
        parts = [body[i:i + 300000] for i in range(0, len(body), 300000)]
        for i, part in enumerate(parts):  # the same in four fragments
            ws.send_frame(TEXT if i == 0 else CONT, part, fin=i == len(parts) - 1)
        self.assertEqual(ws.recv_json(10)["id"], "big")
        ws.send_frame(PING, b"p" * 125)  # the largest control frame
        op, _, payload = ws.recv_frame(10)
        self.assertEqual((op, payload), (PONG, b"p" * 125))

    def test_a_normal_close_is_answered(self):
        ws = self.open()
        ws.send_frame(CLOSE, struct.pack(">H", 1000) + b"bye")
        code, reason, _ = read_close(ws)
        self.assertEqual(code, 1000)
        expect_end_of_connection(ws)
        self.health(self.bystander)


if __name__ == "__main__":
    unittest.main()
