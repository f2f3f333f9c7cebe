"""upload_file's zip unpacking and the gateway's other sessions (issue 21): the gateway checks
and inflates an uploaded zip off its event loop, so while one session's zip is unpacked, every
other session on the same gateway keeps answering; and an unpack cut short (the client leaves,
the executor dies, the gateway stops) leaves neither the gateway's spool nor a half-written
file behind. Real nginx, gateway, Redis and bwrap sandboxes; the zips are built here byte by
byte (zipfile cannot write the hostile ones).

How the stall is shown without a clock: the zip's second entry opens with a long run of empty
deflate blocks (valid deflate that inflates to nothing, 10 bits each), so inflating it keeps
zlib busy with no output, then 256 MiB of zeros. The test watches the sandbox's workspace from
the host: once the first entry is there and while no byte of the second is, the unpack is in
the second's empty blocks. Another session's actions sent in that window must be answered in it, many of
them: a gateway that inflates on its loop answers none until the entry is through."""
import hashlib
import http.client
import json
import os
import struct
import threading
import time
import unittest
import zlib

from apistack import ApiStack
from stack import sandbox_processes

import test_openhands_files as oh

STACK = None
MIB = 1 << 20


def setUpModule():
    global STACK
    STACK = ApiStack(pool=3)
    oh.STACK = STACK  # its Client speaks to this stack


def tearDownModule():
    if STACK:
        STACK.stop()


# ---- zips, byte by byte ----

def raw_deflate(chunks):
    """A raw deflate stream of the concatenated chunks (an iterable of bytes), level 9."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return b"".join(c.compress(x) for x in chunks) + c.flush()


def empty_blocks(nbytes):
    """nbytes of empty fixed-Huffman deflate blocks (BFINAL 0, BTYPE 01, end-of-block: 10 bits
    each, four to five bytes): valid deflate that inflates to nothing."""
    return bytes([0x02, 0x08, 0x20, 0x80, 0x00]) * (nbytes // 5)


def make_zip(entries):
    """entries: (name, method, stored data, uncompressed size, crc). The local headers, the
    data, a central directory and its end record, as zipfile writes them."""
    out, central = bytearray(), bytearray()
    for name, method, data, size, crc in entries:
        n = name.encode()
        off = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x800, method, 0, 0x21, crc,
                           len(data), size, len(n), 0) + n + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0x800, method, 0,
                               0x21, crc, len(data), size, len(n), 0, 0, 0, 0,
                               0o100644 << 16, off) + n
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central),
                      len(out), 0)
    return bytes(out + central + end)


def deflated_entry(name, chunks, prefix=b""):
    """An entry of the concatenated chunks, deflated after prefix (empty blocks)."""
    crc, size = 0, 0
    for x in chunks():
        crc, size = zlib.crc32(x, crc), size + len(x)
    return (name, 8, prefix + raw_deflate(chunks()), size, crc)


def stored_entry(name, data):
    return (name, 0, data, len(data), zlib.crc32(data))


ZEROS = 256  # MiB of zeros after the empty blocks
# MiB of empty blocks: a pool thread takes ~1.5 s through them, 20 of B's round trips far less
EMPTY = 160
TAIL = b"after the empty blocks\n"


_ZIPS = {}


def stall_zip(empty_mib):
    """first.txt; slow.bin: empty_mib MiB of empty deflate blocks, then ZEROS MiB of zeros and
    TAIL; last.txt. (Built once per size.)"""
    if empty_mib in _ZIPS:
        return _ZIPS[empty_mib]

    def slow():
        for _ in range(ZEROS):
            yield bytes(MIB)
        yield TAIL
    _ZIPS[empty_mib] = make_zip([stored_entry("d/first.txt", b"first\n"),
                                 deflated_entry("d/slow.bin", slow, empty_blocks(empty_mib * MIB)),
                                 stored_entry("d/last.txt", b"last\n")])
    return _ZIPS[empty_mib]


# ---- the sandbox and the gateway seen from the host ----

def sandbox_of(sid):
    return json.loads(STACK.redis("HGET", f"sp:session:{{{sid}}}", "sandbox"))


def host_workspace(sid, run):
    """The session's /workspace as the host sees it (through /proc/<pid>/root of one of its
    processes), found by a marker the session writes."""
    mark = "mark-" + os.urandom(6).hex()
    run(f"touch /workspace/{mark}")
    pids, _ = sandbox_processes(STACK.state_dir)
    for pid in sorted(pids):
        ws = f"/proc/{pid}/root/workspace"
        try:
            if os.path.exists(os.path.join(ws, mark)):
                return ws
        except OSError:
            continue
    raise AssertionError(f"no host view of {sid}'s workspace")


def spool_fds(pid):
    """The gateway's open upload spools (unlinked temp files)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if "sandpipe-upload-" in target:
            found.append(target)
    return found


def wait_for(cond, what, tries=1200, step=0.05):
    """Polls cond (bounded): the test's bound, not an assertion about speed."""
    for _ in range(tries):
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"never: {what}")


def leftovers(d):
    """Upload temp files (".<name>.spXXXXXX") under d."""
    return [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs
            if f.startswith(".") and ".sp" in f]


def slow_written(d):
    """Whether any byte of slow.bin reached the sandbox: the file, or its temp file not empty."""
    try:
        names = os.listdir(d)
    except OSError:
        return False
    for f in names:
        if f == "slow.bin":
            return True
        if f.startswith(".slow.bin.sp"):
            try:
                if os.stat(os.path.join(d, f)).st_size:
                    return True
            except OSError:
                return True  # renamed meanwhile
    return False


class Upload(threading.Thread):
    """One upload_file request in its own thread; .reply once answered, .error if it failed."""

    def __init__(self, sid, key, data, dest):
        super().__init__(daemon=True)
        self.body, self.ctype = oh.form("file", "big.zip", data)
        self.path = f"/runtime/{sid}/upload_file?destination={dest}"
        self.key, self.reply, self.error, self.conn = key, None, None, None
        self.done = threading.Event()

    def run(self):
        try:
            self.conn = http.client.HTTPConnection("127.0.0.1", STACK.http_port, timeout=300)
            self.conn.request("POST", self.path, body=self.body, headers={
                "X-Session-API-Key": self.key, "Content-Type": self.ctype})
            r = self.conn.getresponse()
            self.reply = (r.status, r.read())
        except Exception as e:  # the client's own leaving ends it too
            self.error = e
        finally:
            self.done.set()


class Unzip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.key = STACK.token(sub="agent", role="user")
        cls.a = STACK.api_create_session(cls.key)
        cls.b = STACK.api_create_session(cls.key)
        cls.ws_a = host_workspace(cls.a, lambda c: cls.run_in(cls.a, c))

    @classmethod
    def run_in(cls, sid, command):
        body = {"action": {"action": "run", "args": {"command": command, "is_input": False,
                                                      "blocking": True}, "timeout": 120.0}}
        st, obs, _ = STACK.request("POST", f"/runtime/{sid}/execute_action", body,
                                   headers={"X-Session-API-Key": cls.key}, timeout=150)
        assert st == 200, (st, obs)
        return obs["content"]

    def start(self, dest, empty_mib=EMPTY):
        self.run_in(self.a, f"rm -rf /workspace/{dest}")
        up = Upload(self.a, self.key, stall_zip(empty_mib), f"/workspace/{dest}")
        up.start()
        d = os.path.join(self.ws_a, dest, "d")
        # the first entry is written: the unpack is on the second one
        wait_for(lambda: os.path.exists(os.path.join(d, "first.txt")) or up.done.is_set(),
                 "the first entry")
        self.assertFalse(up.done.is_set(), up.reply)
        return up, d

    def test_another_session_answers_while_a_zip_is_inflated(self):
        up, d = self.start("stall")
        answered, n = 0, 0
        while answered < 20 and n < 100000 and not up.done.is_set() and not slow_written(d):
            n += 1
            out = self.run_in(self.b, f"echo b{n}")
            self.assertEqual(out.strip(), f"b{n}")
            # answered while the gateway was still in slow.bin's empty blocks
            if not up.done.is_set() and not slow_written(d):
                answered += 1
        up.join(300)
        self.assertEqual(up.reply and up.reply[0], 200, up.reply)
        self.assertEqual(json.loads(up.reply[1]), {"filename": "big.zip",
                                                   "destination": "/workspace/stall",
                                                   "recursive": False})
        print(f"\n  {answered} of {n} answers of the other session came during the empty blocks")
        self.assertGreaterEqual(answered, 20, "the other session waited for the zip's inflating")
        # and the zip came out whole
        self.assertEqual(self.run_in(self.a, "cd /workspace/stall/d && cat first.txt last.txt "
                                             "&& stat -c %s slow.bin && tail -c 23 slow.bin "
                                             f"&& head -c {ZEROS * MIB} slow.bin | cmp - "
                                             f"<(head -c {ZEROS * MIB} /dev/zero) && echo same"),
                         f"first\nlast\n{ZEROS * MIB + len(TAIL)}\n{TAIL.decode()}same")
        self.assertEqual(leftovers(os.path.join(self.ws_a, "stall")), [])
        self.assertEqual(spool_fds(STACK.gw.pid), [])

    def test_a_client_leaving_mid_unpack_leaves_nothing_behind(self):
        up, d = self.start("gone")
        up.conn.sock.shutdown(2)  # the client leaves while slow.bin is inflated
        up.join(60)
        wait_for(lambda: not spool_fds(STACK.gw.pid), "the spool closed")
        wait_for(lambda: not leftovers(d), "no temp file left")
        self.assertFalse(os.path.exists(os.path.join(d, "slow.bin")))
        self.assertFalse(os.path.exists(os.path.join(d, "last.txt")))
        self.assertEqual(self.run_in(self.b, "echo still"), "still")

    def test_a_session_deleted_mid_unpack_answers_and_leaves_nothing_behind(self):
        sid = STACK.api_create_session(self.key)
        ws = host_workspace(sid, lambda c: self.run_in(sid, c))
        up = Upload(sid, self.key, stall_zip(EMPTY), "/workspace/del")
        up.start()
        d = os.path.join(ws, "del", "d")
        wait_for(lambda: os.path.exists(os.path.join(d, "first.txt")) or up.done.is_set(),
                 "the first entry")
        st, body, _ = STACK.request("DELETE", f"/api/v1/sessions/{sid}", token=self.key, timeout=60)
        self.assertIn(st, (200, 204), body)
        up.join(120)
        self.assertTrue(up.done.is_set())
        self.assertEqual(up.reply and up.reply[0], 500, (up.reply, up.error))
        self.assertIn("detail", json.loads(up.reply[1]))
        wait_for(lambda: not spool_fds(STACK.gw.pid), "the spool closed")
        self.assertEqual(self.run_in(self.b, "echo still"), "still")

    def test_z_gateway_stop_mid_unpack_ends_the_upload(self):
        """Last: it stops the class's gateway (the module's stack ends after it)."""
        up, d = self.start("stop")
        gw = STACK.gw
        gw.terminate()
        gw.wait(60)
        up.join(60)
        self.assertTrue(up.done.is_set())
        self.assertNotEqual(up.reply and up.reply[0], 200, up.reply)
        # the executor drops the half-written entry once its gateway is gone
        wait_for(lambda: not leftovers(d), "no temp file left")
        self.assertFalse(os.path.exists(os.path.join(d, "slow.bin")))
        log = STACK.gateway_log()
        self.assertIn("stopped", log)


if __name__ == "__main__":
    unittest.main()
