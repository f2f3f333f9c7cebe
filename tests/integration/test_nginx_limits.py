"""nginx's rate limits are each caller's, not each address's (issue 30): one OpenHands server runs
all its conversations' runtimes from one address. A request with a credential counts against the
session its path names together with that credential, else against the credential; one without counts against its address;
every address has a ceiling besides. Real nginx, API, gateway and bwrap sandboxes.

The limits are scaled down (render.sh --rate 10 --burst 15, --addr-rate 20 --addr-burst 1200) so
that counts prove the point, not timing: nginx lets a budget's burst + 1 requests through back to
back whatever the clock says, and a loop that sends far more than that as fast as it can meets a
429. Each test sends from its own loopback address (127.0.0.N), so their budgets stay apart."""
import http.client
import json
import queue
import threading
import unittest

from apistack import ApiStack

RATE, BURST = 10, 15            # each caller's; and each address's without a credential
ADDR_RATE, ADDR_BURST = 20, 1200  # each address's ceiling
SESSIONS = 60
MANY = 3000                     # a loop that looks for a 429 stops after this many requests


class Client:
    """Requests through nginx over one kept connection, sent from the loopback address addr."""

    def __init__(self, port, addr):
        self.port, self.addr, self.conn = port, addr, None

    def get(self, path, headers=None):
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60,
                                                       source_address=(self.addr, 0))
            try:
                self.conn.request("GET", path, headers=headers or {})
                r = self.conn.getresponse()
                return r.status, r.read(), r.getheader("Content-Type")
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None  # nginx closed a kept connection: once more on a new one
                if attempt:
                    raise

    def until_429(self, path, headers=None):
        """GETs path until the first 429 or MANY requests; returns (requests sent, the 429's
        (status, body, content type) or None)."""
        for n in range(1, MANY + 1):
            got = self.get(path, headers(n) if callable(headers) else headers)
            if got[0] == 429:
                return n, got
        return MANY, None

    def close(self):
        if self.conn:
            self.conn.close()


class CallerLimits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.st = ApiStack(pool=2, rate=RATE, burst=BURST, addr_rate=ADDR_RATE,
                          addr_burst=ADDR_BURST)
        try:
            # one user (token) per session: creating them is one request per budget. The first
            # SESSIONS are the sixty's alone, the others the tests' that spend their budgets.
            cls.tokens = [cls.st.token(sub=f"limits-{i}") for i in range(SESSIONS + 7)]
            cls.sids = [cls.st.api_create_session(t) for t in cls.tokens]
        except Exception:
            cls.st.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def client(self, host):
        c = Client(self.st.http_port, f"127.0.0.{host}")
        self.addCleanup(c.close)
        return c

    def assert_rate_limited(self, got):
        self.assertIsNotNone(got, f"no 429 in {MANY} requests")
        status, body, ctype = got
        self.assertEqual(status, 429)
        self.assertEqual(ctype, "application/json")
        self.assertEqual(json.loads(body)["error"]["code"], "rate_limited")

    def test_sixty_sessions_of_one_address_are_not_limited_together(self):
        # BURST requests to each session (the action server's alive with the session's key, the
        # REST record with a bearer token): 900 from one address, which the old limit of 10/s
        # and a burst of 15 per address refused after the 16th
        work = queue.Queue()
        for n in range(BURST):
            for sid, tok in zip(self.sids[:SESSIONS], self.tokens):
                if n % 2:
                    work.put((f"/api/v1/sessions/{sid}", {"Authorization": "Bearer " + tok}))
                else:
                    work.put((f"/runtime/{sid}/alive", {"X-Session-API-Key": tok}))
        statuses, lock = {}, threading.Lock()

        def send():
            c = Client(self.st.http_port, "127.0.0.31")
            try:
                while True:
                    try:
                        path, headers = work.get_nowait()
                    except queue.Empty:
                        return
                    st = c.get(path, headers)[0]
                    with lock:
                        statuses[st] = statuses.get(st, 0) + 1
            finally:
                c.close()

        threads = [threading.Thread(target=send) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(statuses, {200: BURST * SESSIONS})

    def test_one_session_past_its_limit_gets_429_and_the_others_do_not(self):
        c = self.client(32)
        noisy = SESSIONS
        n, got = c.until_429(f"/runtime/{self.sids[noisy]}/alive",
                             {"X-Session-API-Key": self.tokens[noisy]})
        self.assert_rate_limited(got)
        self.assertGreater(n, BURST)
        # the other sessions, from the same address, with the same kind of key
        for sid, tok in zip(self.sids[noisy + 1:], self.tokens[noisy + 1:]):
            self.assertEqual(c.get(f"/runtime/{sid}/alive", {"X-Session-API-Key": tok})[0], 200)
            self.assertEqual(c.get(f"/api/v1/sessions/{sid}",
                                   {"Authorization": "Bearer " + tok})[0], 200)

    def test_a_websockets_upgrade_counts_against_its_session(self):
        # GETs without Upgrade (the gateway answers 404): nginx counts them as it counts upgrades
        c = self.client(38)
        noisy, other = SESSIONS + 4, SESSIONS + 5
        n, got = c.until_429(f"/ws/sessions/{self.sids[noisy]}?token={self.tokens[noisy]}")
        self.assert_rate_limited(got)
        self.assertGreater(n, BURST)
        st = c.get(f"/ws/sessions/{self.sids[other]}?token={self.tokens[other]}")[0]
        self.assertNotEqual(st, 429)

    def test_one_token_past_its_limit_gets_429_and_other_tokens_do_not(self):
        # a path that names no session: the token's own budget
        c = self.client(33)
        n, got = c.until_429("/api/v1/sessions", {"Authorization": "Bearer " + self.tokens[4]})
        self.assert_rate_limited(got)
        self.assertGreater(n, BURST)
        for tok in self.tokens[5:8]:
            self.assertEqual(c.get("/api/v1/sessions", {"Authorization": "Bearer " + tok})[0], 200)

    def test_requests_without_a_credential_are_limited_per_address(self):
        c = self.client(34)
        n, got = c.until_429("/api/v1/health")
        self.assert_rate_limited(got)
        self.assertGreater(n, BURST)
        # another address without a credential, and a caller from the same address, go on
        self.assertEqual(self.client(35).get("/api/v1/health")[0], 200)
        self.assertEqual(c.get("/api/v1/sessions",
                               {"Authorization": "Bearer " + self.tokens[8]})[0], 200)

    def test_an_address_has_a_ceiling_whatever_credentials_it_makes_up(self):
        # each made-up token is a budget of its own: the address's ceiling stops it all the same
        c = self.client(36)
        n, got = c.until_429("/api/v1/health", lambda i: {"Authorization": f"Bearer made-up-{i}"})
        self.assert_rate_limited(got)
        self.assertGreater(n, ADDR_BURST)
        self.assertEqual(self.client(37).get("/api/v1/health",
                                             {"Authorization": "Bearer made-up"})[0], 200)

    def test_made_up_keys_on_a_sessions_path_do_not_spend_its_budget(self):
        # whoever knows a session's id but not its key: each made-up key is a budget of its own
        # (only the address's ceiling stops them), and the session's own key still answers
        victim = SESSIONS + 6
        n, got = self.client(39).until_429(f"/runtime/{self.sids[victim]}/alive",
                                           lambda i: {"X-Session-API-Key": f"made-up-{i}"})
        self.assert_rate_limited(got)
        self.assertGreater(n, ADDR_BURST)
        st = self.client(40).get(f"/runtime/{self.sids[victim]}/alive",
                                 {"X-Session-API-Key": self.tokens[victim]})[0]
        self.assertEqual(st, 200)


if __name__ == "__main__":
    unittest.main()
