"""Fault injection for the fault suite (issue 15): the whole service (apistack.ApiStack: redis,
gateway, api, nginx, real bwrap sandboxes) with the means to kill -9 and restart its parts, find
a sandbox's processes on the host, follow a session's events across gateway restarts, and read
the stored history back. Every process is ended by its pid, every wait is bounded."""
import json
import os
import shutil
import signal
import subprocess
import time

import leftovers
from apistack import ApiStack
from stack import executor_pid, proc_tree, terminate, unmount_under
from wsclient import WS, HandshakeError


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_pids(pids, sig=signal.SIGKILL):
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:
            pass


def wait_gone(pids, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.02)
    return not any(pid_alive(p) for p in pids)


def event_obj(raw):
    try:
        return json.loads(raw)
    except (ValueError, TypeError):
        return None


class FaultStack(ApiStack):
    """ApiStack plus kill/restart of the gateway and Redis, and cleanup by pid only."""

    def __init__(self, pool=1, **kw):
        self.extra_gateways = []  # Popen of gateways started by restarts, for cleanup
        self.extra_redis = []
        self.tmp = None
        try:
            super().__init__(pool=pool, **kw)
        except BaseException:
            self.stop()  # whatever started before the failure (Stack leaves redis running)
            raise

    # ---- gateway ----
    def kill_gateway(self, sig=signal.SIGKILL):
        if self.gw and self.gw.poll() is None:
            self.gw.send_signal(sig)
            self.gw.wait(10)

    def restart_gateway(self, down_s=0.1, sig=signal.SIGKILL):
        """kill(sig) the gateway, wait down_s, start it again with the same id, Redis and state
        dir (Stack.start_gateway). Returns the seconds until it listened again."""
        self.kill_gateway(sig)
        time.sleep(down_s)
        t0 = time.monotonic()
        self.log.close()
        self.start_gateway()
        self.extra_gateways.append(self.gw)
        return time.monotonic() - t0

    def gateway_alive_key(self):
        """True when the gateway's heartbeat key exists (it runs and reaches Redis)."""
        return self.redis("EXISTS", "sp:gateway:gw-test") == "1"

    # ---- redis ----
    def kill_redis(self):
        self.redis_proc.send_signal(signal.SIGKILL)
        self.redis_proc.wait(10)
        try:  # a killed redis leaves its socket file: start_redis waits for a fresh one
            os.unlink(self.redis_sock)
        except OSError:
            pass

    def restart_redis(self):
        """Starts redis-server again on the same socket and dir (its AOF). Returns when the
        socket exists, which may be while Redis still answers LOADING."""
        self.start_redis()
        self.extra_redis.append(self.redis_proc)

    def redis_loading(self):
        r = self.redis_cli("PING", timeout=10)
        return "LOADING" in r.stdout + r.stderr

    def wait_redis_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.redis("PING") == "PONG":
                    return True
            except subprocess.SubprocessError:
                pass
            time.sleep(0.05)
        return False

    def fill_redis(self, keys, value_size=64, per=10):
        """Writes `keys` filler keys (MSETs of `per`), so the AOF is big and a restarted Redis
        answers LOADING for a while (about 2 s per million keys here). Small MSETs: Redis
        answers clients only every 1024 commands while it loads an AOF. Keys sp:fill:*."""
        r = self.redis_conn(timeout=120)
        v = b"$%d\r\n%s\r\n" % (value_size, b"x" * value_size)
        try:
            for batch in range(0, keys, per * 1000):  # 1000 commands a write, then their replies
                cmds = []
                for c in range(batch, min(keys, batch + per * 1000), per):
                    n = min(per, keys - c)
                    cmds.append(b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * n))
                    for i in range(c, c + n):
                        k = b"sp:fill:%d" % i
                        cmds.append(b"$%d\r\n%s\r\n%s" % (len(k), k, v))
                r.sock.sendall(b"".join(cmds))
                for _ in range(len(range(batch, min(keys, batch + per * 1000), per))):
                    r._read()
        finally:
            r.close()

    def stored_events(self, sid):
        """The session's stream as Redis holds it: [(id seq, event dict or None)] in order."""
        r = self.redis_conn(timeout=60)
        try:
            rows = r("XRANGE", f"sp:session:{{{sid}}}:events", "-", "+")
        finally:
            r.close()
        out = []
        for entry_id, fields in rows or []:
            seq = int(entry_id.split(b"-")[1])
            kv = dict(zip(fields[::2], fields[1::2]))
            out.append((seq, event_obj(kv.get(b"e"))))
        return out

    def rest_events(self, sid, since, token=None, pages=100):
        """The session's history through the REST API (GET .../events, paged), or None."""
        token = token or self.token()
        out = []
        for _ in range(pages):
            code, body, _ = self.request("GET", f"/api/v1/sessions/{sid}/events?since={since}&limit=10000",
                                         token=token, timeout=60)
            if code != 200:
                return None
            out += body["events"]
            if not body.get("more"):
                return out
            since = body["next_since"]
        return out

    def stored_last(self, sid):
        """The last event of the session's stream (a dict), or None."""
        r = self.redis_conn(timeout=10)
        try:
            rows = r("XREVRANGE", f"sp:session:{{{sid}}}:events", "+", "-", "COUNT", "1")
        finally:
            r.close()
        if not rows:
            return None
        kv = dict(zip(rows[0][1][::2], rows[0][1][1::2]))
        return event_obj(kv.get(b"e"))

    # ---- sessions and sandboxes ----
    def session_hash(self, sid):
        r = self.redis_conn(timeout=30)
        try:
            flat = r("HGETALL", f"sp:session:{{{sid}}}") or []
        finally:
            r.close()
        return {k.decode(): v.decode() for k, v in zip(flat[::2], flat[1::2])}

    def sandbox_pid(self, sid):
        return json.loads(self.session_hash(sid)["sandbox"])["pid"]

    def sandbox_executor_pid(self, sid):
        return executor_pid(self.sandbox_pid(sid))

    def kill_sandbox(self, sid):
        """kill -9 every process of the session's sandbox (bwrap, executor, shell), by pid."""
        pids = proc_tree(self.sandbox_pid(sid))
        kill_pids(pids)
        return wait_gone(pids)

    def delete_session(self, sid):
        try:
            c = self.control()
            try:
                self.call(c, "session.delete", {"session": sid}, timeout=20)
            finally:
                c.close()
        except (OSError, ConnectionError, TimeoutError, HandshakeError, ValueError):
            pass

    def session_ws(self, sid, since=None, timeout=10):
        path = f"/ws/sessions/{sid}" + (f"?since={since}" if since is not None else "")
        return self.ws(path, timeout=timeout)

    def connect_retry(self, sid, since, timeout=20):
        """Opens the session's event stream from `since`, retrying while the gateway restarts."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                return self.session_ws(sid, since=since)
            except (OSError, HandshakeError, ConnectionError) as e:
                last = e
                time.sleep(0.05)
        raise TimeoutError(f"no event stream for {sid} within {timeout}s: {last}")

    # ---- cleanup, by pid ----
    def stop(self):
        if self.tmp is None:
            return
        procs = [getattr(self, a, None) for a in ("nginx", "api", "gw")]
        for p in [*procs, *getattr(self, "more_gws", []), *self.extra_gateways]:
            terminate(p)
        state_dir = os.path.join(self.tmp, "sandboxes")
        leftovers.destroy(state_dir)  # sandboxes outlive the gateway by design
        for p in [getattr(self, "redis_proc", None), *self.extra_redis]:
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(5)
        for f in (getattr(self, "log", None), getattr(self, "api_log", None)):
            if f:
                f.close()
        unmount_under(self.tmp)  # whatever else is mounted below (rmtree would cross it)
        left = leftovers.left(state_dir)
        if not left:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None
        if left:
            raise AssertionError(f"left on the host by the sandboxes of {state_dir} (the "
                                 "directory is kept):\n  " + "\n  ".join(left))


class Follower:
    """A client following one session's events across disconnects: it reads every event in
    order, and when its connection drops it reconnects with since=<last seq seen>, as a real
    client does. `events` is what it received, in order (seq-carrying events only); `replies`
    the rest (acks, errors)."""

    def __init__(self, st, sid, since=0):
        self.st, self.sid = st, sid
        self.events, self.replies = [], []
        self.last_seq = since
        self.reconnects = 0
        self.resumed_at = None  # monotonic time of the first event after a reconnect
        self.ws = st.session_ws(sid, since=since)

    def send(self, obj):
        self.ws.send_json(obj)

    def _take(self, m):
        # events carry a seq; so do acks. A synthesized `truncated` event may have no ts.
        if "seq" in m and m.get("type") not in ("ack", "pong", "error", "result"):
            self.events.append(m)
            self.last_seq = max(self.last_seq, m["seq"])
            if self.reconnects and self.resumed_at is None:
                self.resumed_at = time.monotonic()
        else:
            self.replies.append(m)
        return m

    def read(self, timeout=10):
        """Next message; raises ConnectionError/OSError when the connection drops."""
        return self._take(self.ws.recv_json(timeout))

    def drain_closed(self, timeout=5):
        """After the gateway died: read what is still buffered until the connection ends."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.read(max(0.1, deadline - time.monotonic()))
            except (ConnectionError, OSError, TimeoutError, ValueError):
                break
        try:
            self.ws.sock.close()
        except OSError:
            pass

    def reconnect(self, timeout=20):
        self.ws = self.st.connect_retry(self.sid, self.last_seq, timeout)
        self.reconnects += 1

    def until(self, pred, timeout, reconnect=True):
        """Reads until pred(msg) is true (returns msg) or the deadline (returns None);
        reconnects with since= when the connection drops."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.read(max(0.05, min(5, deadline - time.monotonic())))
            except TimeoutError:
                continue
            except (ConnectionError, OSError, ValueError):
                if not reconnect:
                    return None
                try:
                    self.reconnect(max(0.1, deadline - time.monotonic()))
                except TimeoutError:
                    return None
                continue
            if pred(m):
                return m
        return None

    def close(self):
        try:
            self.ws.close()
        except OSError:
            pass


def submit_run(f, command, ident, timeout=20, **top):
    """Sends a run action through follower f; returns its seq (from the ack) or None."""
    f.send({"type": "action", "id": ident, "action": {"action": "run", "args": {"command": command}, **top}})
    ack = f.until(lambda m: m.get("type") in ("ack", "error") and m.get("id") == ident, timeout,
                  reconnect=False)
    if not ack or ack.get("type") != "ack":
        return None
    return ack["seq"]


def ws_probe(st, timeout=5):
    """A fresh control connection and `health`; True when the gateway answers."""
    try:
        c = WS("127.0.0.1", st.port, "/ws/control?token=" + st.token(), timeout=timeout)
        try:
            return st.call(c, "health", timeout=timeout).get("type") == "result"
        finally:
            c.close()
    except (OSError, ConnectionError, TimeoutError, HandshakeError, ValueError):
        return False
