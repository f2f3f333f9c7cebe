"""Redis behind passwords (issue 28, item 4): the stack's real redis-server runs with the ACL
make run uses (redis/users.acl rendered by `sandpipe redis-acl`): a connection without
credentials can do nothing, wrong passwords are refused, the gateway's and the API's users may
not run dangerous commands nor write each other's keys, and the whole service works through
those users. A gateway or API given a wrong password says so in its log, stays up, retries at a
slow pace, and picks the password up from its file once it is right; the API answers 503 with
why meanwhile."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from apistack import ApiStack, ModuleStack
from redis_relay import RedisRelay
from resp import Redis
from stack import BUILD, REDIS_ADMIN, free_port, terminate
from spexec import ROOT

STACK = ModuleStack(pool=1, workers=2)
setUpModule, tearDownModule = STACK.start, STACK.stop


def refusal(conn, *cmd):
    """The error Redis answers cmd with on conn ("" if it ran)."""
    try:
        conn(*cmd)
    except RuntimeError as e:
        return str(e)
    return ""


def denied(why):
    """Whether an error is the ACL's refusal (a command's NOPERM, or a script's redis.call)."""
    return why.startswith("NOPERM") or "can't run this command" in why or "can't access" in why


def wait_for(cond, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def read_text(path):
    with open(path) as f:
        return f.read()


def write_private(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK

    def conn(self, user=None, password=None):
        c = Redis(self.s.redis_sock, 10, user=user, password=password)
        self.addCleanup(c.close)
        return c

    def as_user(self, user):
        return self.conn(user, self.s.redis_password(user))

    def session(self):
        """A session made through nginx and the API, which asked the gateway for it."""
        return self.s.api_create_session(self.s.token(sub="alice", role="user"))


class NoCredentials(Base):
    def test_unauthenticated_connection_can_do_nothing(self):
        sid = self.session()
        c = self.conn()
        for cmd in (("PING",), ("KEYS", "*"), ("GET", "sp:metrics"), ("HGETALL", f"sp:session:{{{sid}}}"),
                    ("XREVRANGE", f"sp:session:{{{sid}}}:events", "+", "-", "COUNT", "1"),
                    ("SCAN", "0"), ("CONFIG", "GET", "*"), ("FLUSHALL",), ("PUBLISH", "sp:status", "x"),
                    ("SUBSCRIBE", "sp:status"), ("EVAL", "return 1", "0")):
            self.assertTrue(refusal(c, *cmd).startswith("NOAUTH"), cmd)
        # the session is still there, as the gateway wrote it
        self.assertEqual(self.s.redis("HGET", f"sp:session:{{{sid}}}", "status"), "READY")

    def test_redis_cli_without_a_password_is_refused(self):
        r = subprocess.run(["redis-cli", "-s", self.s.redis_sock, "KEYS", "*"], capture_output=True,
                           text=True, timeout=10)
        self.assertIn("NOAUTH", r.stdout + r.stderr)

    def test_default_user_is_off_whatever_the_password(self):
        c = self.conn()
        for args in (("AUTH", ""), ("AUTH", "nopass"), ("AUTH", "default", ""),
                     ("AUTH", "default", self.s.redis_password("gateway"))):
            self.assertTrue(refusal(c, *args).startswith("WRONGPASS"), args)
        self.assertTrue(refusal(c, "GET", "sp:metrics").startswith("NOAUTH"))

    def test_wrong_passwords_are_refused(self):
        c = self.conn()
        gw, api = self.s.redis_password("gateway"), self.s.redis_password("api")
        for args in (("gateway", "wrong"), ("gateway", gw + "x"), ("gateway", gw[:-1]), ("api", gw),
                     ("gateway", api), ("admin", gw), ("api", "")):
            self.assertTrue(refusal(c, "AUTH", *args).startswith("WRONGPASS"), args)
        self.assertTrue(refusal(c, "KEYS", "*").startswith("NOAUTH"))
        with self.assertRaises(RuntimeError):
            Redis(self.s.redis_sock, 10, user="api", password="wrong")

    def test_no_tcp_port(self):
        out = self.s.redis("CONFIG", "GET", "port")
        self.assertEqual(out.split(), ["port", "0"])


class Permissions(Base):
    DANGEROUS = (("CONFIG", "GET", "*"), ("CONFIG", "SET", "appendonly", "no"), ("FLUSHALL",),
                 ("FLUSHDB",), ("ACL", "LIST"), ("ACL", "SETUSER", "x", "on", ">x", "+@all"),
                 ("DEBUG", "SLEEP", "0"), ("KEYS", "*"), ("SHUTDOWN", "NOSAVE"), ("SAVE",),
                 ("BGREWRITEAOF",), ("REPLICAOF", "127.0.0.1", "1"), ("MODULE", "LIST"),
                 ("SCRIPT", "FLUSH"), ("FUNCTION", "FLUSH"), ("INFO",), ("MONITOR",),
                 ("SUBSCRIBE", "sp:status"), ("PSUBSCRIBE", "*"), ("SELECT", "1"), ("SWAPDB", "0", "1"),
                 ("MIGRATE", "127.0.0.1", "1", "k", "0", "1"), ("RENAME", "sp:metrics", "x"),
                 ("OBJECT", "ENCODING", "sp:metrics"), ("CLIENT", "PAUSE", "1000"),
                 ("EVAL", "return redis.call('FLUSHALL')", "0"),
                 ("EVAL", "return redis.call('KEYS', '*')", "0"))

    def check_refused(self, user, cmds):
        """Each of cmds refused to user when sent, and by the ACL itself (ACL DRYRUN: whatever
        else the configuration refuses, e.g. DEBUG, which Redis 7 disables by default)."""
        c = self.as_user(user)
        admin = self.s.redis_conn(10)
        self.addCleanup(admin.close)
        for cmd in cmds:
            why = refusal(c, *cmd)
            self.assertTrue(denied(why) or (cmd[0] == "DEBUG" and "DEBUG command not allowed" in why),
                            (user, cmd, why))
            if cmd[0] != "EVAL":  # DRYRUN checks EVAL, not what the script calls
                self.assertNotEqual(admin("ACL", "DRYRUN", user, *cmd), "OK", (user, cmd))
        return c

    def test_gateway_user_may_not_run_dangerous_commands(self):
        c = self.check_refused("gateway", self.DANGEROUS)
        self.assertEqual(c("PING"), "PONG")  # the connection lives on

    def test_api_user_may_not_run_dangerous_commands(self):
        self.check_refused("api", self.DANGEROUS + (("CLIENT", "LIST"), ("CLIENT", "KILL", "ID", "1"),
                                                    ("PUBLISH", "sp:status", "x")))

    def test_keys_outside_sp_and_of_the_other_program_are_refused(self):
        sid = self.session()
        gw, api = self.as_user("gateway"), self.as_user("api")
        for c in (gw, api):
            self.assertTrue(denied(refusal(c, "SET", "other", "x")))
            self.assertTrue(denied(refusal(c, "GET", "other")))
            self.assertTrue(denied(refusal(c, "EVAL", "return redis.call('GET', 'other')", "0")))
        # the API reads sessions but never writes what the gateway owns (routing, status, pool)
        self.assertTrue(denied(refusal(api, "HSET", f"sp:session:{{{sid}}}", "gateway", "evil")))
        self.assertTrue(denied(refusal(api, "SET", "sp:gateway:gw-test", "x")))
        self.assertTrue(denied(refusal(api, "DEL", "sp:pool:{default}:gw-test")))
        self.assertTrue(denied(refusal(api, "EVAL", "return redis.call('DEL', KEYS[1])", "1",
                                        f"sp:session:{{{sid}}}:events")))
        self.assertEqual(api("HGET", f"sp:session:{{{sid}}}", "gateway"), b"gw-test")
        # the gateway reads the OpenHands runtime records (routing) but never writes them
        self.assertTrue(denied(refusal(gw, "HSET", "sp:oh:session:{x}", "runtime_id", "rt-1")))
        self.assertIsNone(gw("HGET", "sp:oh:session:{x}", "runtime_id"))
        self.assertTrue(denied(refusal(gw, "HSET", "sp:e2b:{x}", "template", "base")))
        self.assertTrue(denied(refusal(gw, "PUBLISH", "other", "x")))
        self.assertEqual(self.s.redis("HGET", f"sp:session:{{{sid}}}", "gateway"), "gw-test")

    def test_each_user_may_run_what_its_program_sends(self):
        """ACL DRYRUN of the commands gateway/*.c and api/*.c send (and their Lua scripts call):
        the rules are not narrower than the programs (the other tests run the programs)."""
        s = "sp:session:{s-1}"
        gateway = (("PING",), ("CLIENT", "SETNAME", "sp-gw:x"), ("CLIENT", "LIST", "TYPE", "normal"),
                   ("CLIENT", "KILL", "ID", "1"), ("EVAL", "return 1", "0"), ("XADD", s + ":events", "0-1", "e", "{}"),
                   ("XRANGE", s + ":events", "-", "+"), ("XREVRANGE", s + ":events", "+", "-"),
                   ("XTRIM", s + ":events", "MINID", "0-1"), ("HSET", s, "status", "READY"),
                   ("HGETALL", s), ("HMGET", s, "a"), ("HDEL", s, "env_pending"), ("HGET", "sp:oh:session:{x}", "a"),
                   ("GET", "sp:oh:runtime:{rt-1}"), ("HSET", s + ":runtime", "a", "1"), ("EXPIRE", s, "1"),
                   ("SADD", "sp:gateway:g:sessions", "s-1"), ("SREM", "sp:gateway:g:sessions", "s-1"),
                   ("SMEMBERS", "sp:gateways"), ("SCARD", "sp:gateway:g:sessions"), ("SET", "sp:gateway:g", "1"),
                   ("SET", "sp:create:k", "s-1"), ("EXISTS", "sp:gateway:g"), ("DEL", "sp:gateway:g:taken"),
                   ("ZADD", "sp:sessions", "1", "s-1"), ("ZREM", "sp:sessions:ended", "s-1"),
                   ("ZRANGEBYSCORE", "sp:sessions:ended", "-inf", "1"), ("RPUSH", "sp:pool:{default}:g", "x"),
                   ("LPOP", "sp:pool:{default}:g"), ("LLEN", "sp:pool:{default}:g"),
                   ("LRANGE", "sp:pool:{default}:g", "0", "-1"), ("SCAN", "0"), ("PUBLISH", "sp:status", "x"),
                   ("HINCRBY", "sp:metrics", "x", "1"), ("TIME",),
                   ("XADD", "sp:metrics:history", "MAXLEN", "~", "10", "*", "t", "1"),
                   ("XREVRANGE", "sp:metrics:history", "+", "-", "COUNT", "1"),
                   # with Sentinel: the primary checked, an event held until a replica has it
                   ("ROLE",), ("WAIT", "1", "100"))
        api = (("EVAL", "return 1", "1", "sp:oh:session:{x}"), ("WATCH", "sp:oh:session:{x}"), ("UNWATCH",),
               ("MULTI",), ("EXEC",), ("DISCARD",), ("HSET", "sp:oh:session:{x}", "a", "b"),
               ("DEL", "sp:oh:runtime:{rt-1}"), ("SET", "sp:oh:runtime:{rt-1}", "x"),
               ("EXPIRE", "sp:oh:session:{x}", "1"), ("ZADD", "sp:oh:sessions", "1", "x"),
               ("ZREM", "sp:oh:sessions", "x"), ("ZREVRANGE", "sp:oh:sessions", "0", "1"),
               ("SADD", "sp:oh:active", "x"), ("SREM", "sp:oh:active", "x"), ("SCARD", "sp:oh:active"),
               ("SRANDMEMBER", "sp:oh:active", "2"), ("HINCRBY", "sp:metrics", "x", "1"),
               ("HGETALL", s), ("HGET", s, "status"), ("HMGET", s, "status"),
               ("XREAD", "COUNT", "1", "BLOCK", "1", "STREAMS", s + ":events", "0"),
               ("XRANGE", s + ":events", "-", "+"), ("XREVRANGE", s + ":events", "+", "-"),
               ("XLEN", s + ":events"), ("ZREVRANGEBYSCORE", "sp:sessions", "+inf", "-inf"),
               ("ZREVRANGE", "sp:sessions", "0", "1"), ("SMEMBERS", "sp:gateways"),
               ("SCARD", "sp:gateway:g:sessions"), ("EXISTS", "sp:gateway:g"), ("GET", "sp:gateway:g"),
               ("HGET", "sp:gateway:g:info", "addr"), ("GET", "sp:create:k"), ("SCAN", "0"),
               ("LLEN", "sp:pool:{default}:g"), ("XRANGE", "sp:metrics:history", "0", "+"),
               # the E2B API's records (api/e2b/)
               ("HSET", "sp:e2b:{s-1}", "template", "base"), ("HGETALL", "sp:e2b:{s-1}"),
               ("DEL", "sp:e2b:{s-1}"), ("ZADD", "sp:e2b:sandboxes", "1", "s-1"),
               ("ZREM", "sp:e2b:sandboxes", "s-1"), ("ZRANGE", "sp:e2b:sandboxes", "0", "1"),
               ("ZREVRANGE", "sp:e2b:sandboxes", "0", "1"),
               # an E2B sandbox's log: a read-only script over its session's events
               ("EVAL_RO", "return 1", "1", s + ":events"),
               # with Sentinel: the primary checked
               ("ROLE",))
        # what a replica and the sentinels send to the Redis servers (redis/users.acl)
        replica = (("PSYNC", "?", "-1"), ("REPLCONF", "listening-port", "1"), ("PING",))
        sentinel = (("PING",), ("INFO",), ("ROLE",), ("SLAVEOF", "NO", "ONE"), ("MULTI",), ("EXEC",),
                    ("CONFIG", "REWRITE"), ("CLIENT", "SETNAME", "sentinel-x"), ("CLIENT", "KILL", "TYPE", "normal"),
                    ("SUBSCRIBE", "__sentinel__:hello"), ("PUBLISH", "__sentinel__:hello", "x"),
                    ("SCRIPT", "KILL"))
        admin = self.s.redis_conn(10)
        self.addCleanup(admin.close)
        for user, cmds in (("gateway", gateway), ("api", api), ("replica", replica), ("sentinel", sentinel)):
            for cmd in cmds:
                self.assertEqual(admin("ACL", "DRYRUN", user, *cmd), "OK", (user, cmd))

    def test_the_programs_connect_as_their_users(self):
        self.session()  # the API has used its connection, the gateway its
        clients = self.s.redis("CLIENT", "LIST").splitlines()
        users = {}
        for line in clients:
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            users.setdefault(f.get("user"), []).append(f.get("name", ""))
        self.assertIn("sp-gw:gw-test", users.get("gateway", []), clients)
        self.assertIn("api", users, clients)
        self.assertEqual(set(users) - {"gateway", "api", REDIS_ADMIN}, set(), clients)


class ThroughTheUsers(Base):
    def test_session_and_command_through_nginx_api_gateway(self):
        tok = self.s.token(sub="alice", role="user")
        sid = self.s.api_create_session(tok)
        st, ev, _ = self.s.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                   {"action": "run", "args": {"command": "echo through-$((6*7))"}}, token=tok)
        self.assertEqual(st, 200, ev)
        self.assertIn("through-42", json.dumps(ev))
        st, body, _ = self.s.request("GET", f"/api/v1/sessions/{sid}/events?since=0", token=tok)
        self.assertEqual(st, 200, body)
        self.assertTrue(any(e["type"] == "observation" for e in body["events"]), body)
        st, body, _ = self.s.request("GET", "/api/v1/health")
        self.assertEqual(st, 200, body)
        self.assertTrue(body["redis"])
        self.assertEqual(body["live_gateways"], 1)

    def test_openhands_runtime_records_written_by_the_api_user(self):
        """/start writes sp:oh:* with WATCH/MULTI and a Lua compare-and-set, as the api user."""
        key = self.s.token(sub="oh-user", role="user")
        sid = "redis-auth-" + os.urandom(4).hex()
        st, rt, _ = self.s.request("POST", "/openhands/start", {"image": "default", "session_id": sid},
                                   headers={"X-API-Key": key}, timeout=120)
        self.assertEqual(st, 200, rt)
        self.assertEqual(self.s.redis("HGET", f"sp:oh:session:{{{sid}}}", "runtime_id"), rt["runtime_id"])
        st, body, _ = self.s.request("POST", "/openhands/stop", {"runtime_id": rt["runtime_id"]},
                                     headers={"X-API-Key": key}, timeout=120)
        self.assertEqual(st, 200, body)
        self.assertNotEqual(self.s.redis("HGET", f"sp:oh:session:{{{sid}}}", "stopped"), "")


class RestartUnderTheApi(unittest.TestCase):
    """Redis restarted under running API workers (issue 29): Redis closed every worker's
    connection, and the first request each worker served afterwards, however long after, got
    503 "Redis is not reachable" (it wrote its command on the dead connection). A worker now
    sees the closed connection before it uses it and connects again, authenticating as the api
    user from its password file: no request fails once Redis is back. Its own stack: four
    workers, no warm pool (a create then holds its worker long enough that concurrent ones
    reach every worker)."""
    WORKERS = 4

    def clients(self, s, user):
        """The connections of Redis user `user` (CLIENT LIST, as the test's admin)."""
        out = s.redis("CLIENT", "LIST")
        return [line for line in out.splitlines() if f" user={user} " in f" {line} "]

    def round(self, s, tok):
        """Concurrent session creates (each holds a worker while its sandbox starts) then reads
        of each, and the listing routes: every (route, status) seen."""
        seen, lock = [], threading.Lock()

        def note(route, st):
            with lock:
                seen.append((route, st))

        def one():
            st, b, _ = s.request("POST", "/api/v1/sessions", {}, token=tok, timeout=90)
            note("create", st)
            if st != 201:
                return
            for route in (f"/api/v1/sessions/{b['id']}", f"/api/v1/sessions/{b['id']}/events?since=0"):
                note(route, s.request("GET", route, token=tok)[0])

        threads = [threading.Thread(target=one) for _ in range(2 * self.WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for route in ("/api/v1/sessions", "/api/v1/health", "/api/v1/pool"):
            note(route, s.request("GET", route, token=tok)[0])
        note("/openhands/list", s.request("GET", "/openhands/list", headers={"X-API-Key": tok})[0])
        return seen

    def test_no_request_fails_once_redis_is_back(self):
        s = ApiStack(pool=0, workers=self.WORKERS)
        try:
            tok = s.token(sub="alice", role="user")
            # Every worker holds a connection (as user api) before Redis goes.
            for _ in range(5):
                if len(self.clients(s, "api")) == self.WORKERS:
                    break
                self.round(s, tok)
            self.assertEqual(len(self.clients(s, "api")), self.WORKERS, s.redis("CLIENT", "LIST"))
            s.redis_proc.terminate()
            s.redis_proc.wait(10)
            s.start_redis()
            self.assertTrue(wait_for(lambda: s.redis_cli("PING").stdout.strip() == "PONG", 30))
            # The gateway is back too (it reconnects by itself): creates need it.
            self.assertTrue(wait_for(lambda: self.clients(s, "gateway"), 30), s.redis("CLIENT", "LIST"))
            self.assertEqual(self.clients(s, "api"), [])  # no request since: no worker reconnected
            seen = []
            for _ in range(5):  # until every worker has served a request on a new connection
                seen += self.round(s, tok)
                self.assertEqual([x for x in seen if x[1] >= 300], [], seen)
                if len(self.clients(s, "api")) == self.WORKERS:
                    break
            self.assertEqual(len(self.clients(s, "api")), self.WORKERS, s.redis("CLIENT", "LIST"))
        finally:
            s.stop()


class BrokenUnderACommand(unittest.TestCase):
    """A connection that breaks under a command, after the worker's check and before the reply
    (closed or reset in between): a read is sent once more on a new connection and its request
    succeeds; a write, which Redis may have run, is never sent twice, nor a read inside a
    WATCH (its watch died with the connection). One API worker, behind a relay that breaks the
    connection at a chosen command (redis_relay.py) in front of the stack's real Redis."""

    def test_a_read_is_sent_again_never_a_write(self):
        d = tempfile.mkdtemp(prefix="sp-relay-")
        relay = RedisRelay(os.path.join(d, "redis.sock"))
        s = None
        try:
            s = ApiStack(pool=1, workers=1, api_extra=["--redis", "unix:" + relay.path])
            relay.upstream = s.redis_sock
            tok = s.token(sub="alice", role="user")
            sid = s.api_create_session(tok)
            relay.break_at("HGETALL")
            st, b, _ = s.request("GET", f"/api/v1/sessions/{sid}", token=tok)
            self.assertEqual((st, b.get("id")), (200, sid), b)
            self.assertEqual(relay.sent_again(), 1)
            # /openhands/start: WATCH, HGET, MULTI ... EXEC, then SET and ZADD
            for name, after in (("HGET", "WATCH"), ("EXEC", None), ("ZADD", None)):
                relay.break_at(name, after)
                st, b, _ = s.request("POST", "/openhands/start", {"image": "default", "session_id": f"relay-{name}"},
                                     headers={"X-API-Key": tok}, timeout=120)
                self.assertEqual(relay.sent_again(), 0, (name, st, b))
            st, b, _ = s.request("GET", "/api/v1/health")  # and the worker carries on
            self.assertEqual(st, 200, b)
        finally:
            if s:
                s.stop()
            relay.close()
            os.rmdir(d)


class WrongPassword(Base):
    def gateway(self, *redis_opts, gid):
        """A second gateway on the stack's Redis (its own id, port, state directory; no pool),
        with these Redis options; its log's path."""
        d = tempfile.mkdtemp(prefix="gw-", dir=self.s.tmp)
        log_path = os.path.join(d, "gateway.log")
        port = free_port()
        with open(log_path, "w") as log:
            gw = subprocess.Popen([os.path.join(BUILD, "sandpipe-gateway"), "--listen", f"127.0.0.1:{port}",
                                   "--redis", "unix:" + self.s.redis_sock, *redis_opts, "--id", gid,
                                   "--provider", self.s.provider, "--state-dir", os.path.join(d, "sb"),
                                   "--secret-file", self.s.secret_file, "--pool", "0"],
                                  stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(terminate, gw)
        return gw, port, log_path

    def test_gateway_with_a_wrong_password_says_so_stays_up_and_recovers(self):
        pw_file = os.path.join(self.s.tmp, "wrong-gateway.password")
        write_private(pw_file, "not-the-password\n")
        gw, port, log = self.gateway("--redis-user", "gateway", "--redis-password-file", pw_file, gid="gw-wrongpw")
        said = wait_for(lambda: "authentication as gateway refused: WRONGPASS" in read_text(log), 10)
        self.assertTrue(said, read_text(log))
        self.assertIn("--redis-password-file", read_text(log))
        time.sleep(7)  # > LISTEN_WAIT (5 s): it listens without Redis; retries every 5 s
        self.assertIsNone(gw.poll(), read_text(log))
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        # no retry storm: one line said it, not one per try (the next reminder is a minute away)
        self.assertEqual(read_text(log).count("WRONGPASS"), 1, read_text(log))
        self.assertEqual(self.s.redis("EXISTS", "sp:gateway:gw-wrongpw"), "0")
        # the right password in the file: taken at the next try, no restart
        write_private(pw_file, self.s.redis_password("gateway") + "\n")
        self.assertTrue(wait_for(lambda: self.s.redis("EXISTS", "sp:gateway:gw-wrongpw") == "1", 15),
                        read_text(log))
        self.assertIn("authenticated as gateway after", read_text(log))
        gw.send_signal(signal.SIGTERM)
        self.assertEqual(gw.wait(20), 0, read_text(log))

    def test_gateway_without_credentials_is_told_redis_wants_a_password(self):
        gw, _, log = self.gateway(gid="gw-nopw")
        said = wait_for(lambda: "NOAUTH" in read_text(log), 10)
        self.assertTrue(said, read_text(log))
        self.assertIn("this Redis wants a password: give --redis-user and --redis-password-file", read_text(log))
        time.sleep(1)
        self.assertIsNone(gw.poll(), read_text(log))

    def test_unsafe_password_file_is_refused_at_start_with_why(self):
        pw_file = os.path.join(self.s.tmp, "open.password")
        write_private(pw_file, self.s.redis_password("gateway") + "\n")
        os.chmod(pw_file, 0o640)
        r = subprocess.run([os.path.join(BUILD, "sandpipe-gateway"), "--redis", "unix:" + self.s.redis_sock,
                            "--redis-user", "gateway", "--redis-password-file", pw_file,
                            "--secret-file", self.s.secret_file], capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("open to group or others (mode 0640): chmod 600", r.stderr)
        r = subprocess.run([os.path.join(BUILD, "sandpipe-api"), "--socket", "unix:" + pw_file + ".sock",
                            "--redis", "unix:" + self.s.redis_sock, "--redis-user", "api",
                            "--redis-password-file", pw_file, "--secret-file", self.s.secret_file],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("open to group or others (mode 0640)", r.stderr)
        r = subprocess.run([os.path.join(BUILD, "sandpipe-gateway"), "--redis-user", "gateway",
                            "--secret-file", self.s.secret_file], capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("--redis-user needs --redis-password-file", r.stderr)

    def test_api_with_a_wrong_password_answers_503_with_why_then_recovers(self):
        pw_file = self.s.redis_password_file("api")
        good = self.s.redis_password("api")
        terminate(self.s.api)
        self.s.api_log.close()
        try:
            write_private(pw_file, "not-the-password\n")
            self.s.start_api()
            for path in ("/api/v1/health", "/api/v1/sessions", "/api/v1/sessions/s-1"):
                for _ in range(5):
                    st, body, _ = self.s.request("GET", path, token=self.s.token(sub="root", role="admin"))
                    self.assertEqual(st, 503, (path, body))
                    self.assertEqual(body["error"]["code"], "unavailable", body)
                    self.assertIn("Redis refused the API's credentials: WRONGPASS", body["error"]["message"])
                    self.assertNotIn("not-the-password", json.dumps(body))
            log = read_text(os.path.join(self.s.tmp, "api.log"))
            self.assertIn("Redis refused user api: WRONGPASS", log)
            # said once per worker (2), not once per request (15)
            self.assertLessEqual(log.count("Redis refused user api"), 2, log)
            self.assertNotIn("exited", log)
            write_private(pw_file, good + "\n")
            # the workers read the file again at their next connection (after a 2 s pause)
            ok = wait_for(lambda: self.s.request("GET", "/api/v1/health")[0] == 200, 10)
            self.assertTrue(ok, read_text(os.path.join(self.s.tmp, "api.log")))
            self.s.api_create_session(self.s.token(sub="alice", role="user"))
        finally:
            write_private(pw_file, good + "\n")
            if self.s.api.poll() is not None:
                self.s.start_api()


class AofReplay(Base):
    def test_a_scripts_writes_survive_kill9_and_restart(self):
        """Redis logs a script's writes as a MULTI/EXEC block and replays its AOF at start as the
        default user: that user is off (nobody can be it) but keeps its rights, or Redis 7.0
        drops every such block at each restart (redis/redis#14541): a warm sandbox's claim
        undone, the sandbox given to a second session. A Redis of its own, with the stack's
        ACL file."""
        d = tempfile.mkdtemp(prefix="aof-", dir=self.s.tmp)
        sock = os.path.join(d, "redis.sock")

        def start():
            p = subprocess.Popen(["redis-server", os.path.join(ROOT, "redis", "redis.conf"), "--port", "0",
                                  "--unixsocket", sock, "--dir", d, "--aclfile", self.s.redis_acl,
                                  "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.addCleanup(terminate, p)
            self.assertTrue(wait_for(lambda: os.path.exists(sock), 10))
            return p

        def gateway():
            c = Redis(sock, 10, user="gateway", password=self.s.redis_password("gateway"))
            self.addCleanup(c.close)
            return c

        p = start()
        gw = gateway()
        pool = "sp:pool:{default}:gw-aof"
        gw("RPUSH", pool, "sb-1", "sb-2")
        claim = ("local v = redis.call('LPOP', ARGV[1])\n"
                 "redis.call('HSET', 'sp:session:{' .. ARGV[2] .. '}', 'sandbox', v)\nreturn v")
        self.assertEqual(gw("EVAL", claim, "0", pool, "s-1"), b"sb-1")
        time.sleep(1.2)  # appendfsync everysec
        p.kill()
        p.wait(10)
        os.unlink(sock)
        start()
        gw = gateway()
        self.assertTrue(wait_for(lambda: refusal(gw, "PING") == "", 30))  # not LOADING any more
        self.assertEqual(gw("LRANGE", pool, "0", "-1"), [b"sb-2"])
        self.assertEqual(gw("HGET", "sp:session:{s-1}", "sandbox"), b"sb-1")


class AclTool(unittest.TestCase):
    """`sandpipe redis-acl`, which make run, compose.yaml and the stacks use."""

    def run_tool(self, *args):
        return subprocess.run([os.path.join(BUILD, "sandpipe"), "redis-acl", *args], capture_output=True,
                              text=True, timeout=20)

    def test_generates_private_passwords_once_and_renders_hashes_only(self):
        d = os.path.join(tempfile.mkdtemp(prefix="sp-acl-"), "auth")
        self.addCleanup(subprocess.run, ["rm", "-rf", os.path.dirname(d)])
        tmpl = os.path.join(ROOT, "redis", "users.acl")
        r = self.run_tool("--generate", "--dir", d, "--template", tmpl)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")  # --generate alone writes no ACL
        self.assertEqual(os.stat(d).st_mode & 0o777, 0o700)
        pws = {}
        for user in ("gateway", "api"):
            p = os.path.join(d, f"redis-{user}.password")
            self.assertEqual(os.stat(p).st_mode & 0o777, 0o600)
            pws[user] = read_text(p)
            self.assertRegex(pws[user], r"^[0-9a-f]{64}\n$")
        self.assertNotEqual(pws["gateway"], pws["api"])
        self.assertEqual(self.run_tool("--generate", "--dir", d, "--template", tmpl).returncode, 0)
        self.assertEqual(read_text(os.path.join(d, "redis-api.password")), pws["api"])  # kept
        out = os.path.join(d, "users.acl")
        r = self.run_tool("--dir", d, "--template", tmpl, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.stat(out).st_mode & 0o777, 0o600)
        acl = read_text(out)
        self.assertTrue(acl.startswith("user default off "), acl)
        for pw in pws.values():
            self.assertNotIn(pw.strip(), acl)
        self.assertEqual(len(acl.splitlines()), 5)  # default, gateway, api, replica, sentinel

    def test_refuses_an_open_password_file_and_writes_nothing(self):
        d = tempfile.mkdtemp(prefix="sp-acl-")
        self.addCleanup(subprocess.run, ["rm", "-rf", d])
        tmpl = os.path.join(ROOT, "redis", "users.acl")
        self.assertEqual(self.run_tool("--generate", "--dir", d, "--template", tmpl).returncode, 0)
        os.chmod(os.path.join(d, "redis-api.password"), 0o644)
        r = self.run_tool("--dir", d, "--template", tmpl, "--out", os.path.join(d, "users.acl"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("redis-api.password: open to group or others (mode 0644)", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(d, "users.acl")))


if __name__ == "__main__":
    unittest.main()
