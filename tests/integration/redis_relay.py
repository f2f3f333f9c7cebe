"""A unix socket in front of a real Redis that relays every connection, and can break one under
a chosen command: the connection closes after the command reached Redis (forward) or before,
without its reply. For the client's side of a connection lost mid-command (test_redis_auth)."""
import collections
import os
import socket
import threading


def split_command(buf):
    """The first whole command (a RESP array of bulk strings, as hiredis sends) at the start of
    buf: (its length in bytes, its name upper-cased), or None while incomplete."""
    end = buf.find(b"\r\n")
    if end < 0:
        return None
    if buf[:1] != b"*":
        raise ValueError(f"not a RESP array: {buf[:40]!r}")
    pos, name = end + 2, None
    for i in range(int(buf[1:end])):
        e = buf.find(b"\r\n", pos)
        if e < 0:
            return None
        start = e + 2
        stop = start + int(buf[pos + 1:e])
        if len(buf) < stop + 2:
            return None
        if i == 0:
            name = buf[start:stop].decode().upper()
        pos = stop + 2
    return pos, name


class RedisRelay:
    def __init__(self, path):
        """Listens on path; self.upstream (the real Redis' socket) must be set before the first
        connection."""
        self.path, self.upstream = path, None
        self.lock = threading.Lock()
        self.seen = collections.Counter()  # each command's exact bytes, how many times sent
        self.rule = None                   # (name, after, forward) of the next break
        self.broken = None                 # the bytes of the command the last break ended on
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        threading.Thread(target=self.accept, daemon=True).start()

    def break_at(self, name, after=None, forward=True):
        """The next `name` command (sent right after an `after` command on its connection, when
        given) ends its connection before its reply; it reaches Redis first when forward."""
        with self.lock:
            self.rule, self.broken = (name, after, forward), None

    def sent_again(self):
        """How many more times the command a break ended on has been sent since."""
        with self.lock:
            return self.seen[self.broken] - 1 if self.broken else None

    def close(self):
        self.listener.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            up.connect(self.upstream)
            state = {"breaking": False}
            threading.Thread(target=self.requests, args=(client, up, state), daemon=True).start()
            threading.Thread(target=self.replies, args=(client, up, state), daemon=True).start()

    @staticmethod
    def end(client, up):
        for s in (client, up):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def requests(self, client, up, state):
        buf, last = b"", None
        while True:
            try:
                chunk = client.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                return self.end(client, up)
            buf += chunk
            while (cmd := split_command(buf)) is not None:
                n, name = cmd
                raw, buf = buf[:n], buf[n:]
                with self.lock:
                    self.seen[raw] += 1
                    rule = self.rule
                    hit = rule and rule[0] == name and (rule[1] is None or rule[1] == last)
                    if hit:
                        self.rule, self.broken = None, raw
                last = name
                if hit and not rule[2]:
                    return self.end(client, up)
                if hit:
                    state["breaking"] = True  # replies() ends the connection on its reply
                try:
                    up.sendall(raw)
                except OSError:
                    return self.end(client, up)

    def replies(self, client, up, state):
        while True:
            try:
                chunk = up.recv(65536)
            except OSError:
                chunk = b""
            if not chunk or state["breaking"]:  # the broken command's reply: Redis ran it
                return self.end(client, up)
            try:
                client.sendall(chunk)
            except OSError:
                return self.end(client, up)
