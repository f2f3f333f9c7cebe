"""sandpipe-api through real nginx, real Redis and a real gateway with bwrap sandboxes: every
REST route's success and error cases, the auth matrix, bad input, limits, concurrency, and
Redis going away under a live worker."""
import base64
import hashlib
import hmac
import http.client
import json
import os
import socket
import subprocess
import threading
import time
import unittest

from apistack import ApiStack, ModuleStack
from spexec import ROOT
from wsclient import WS

STACK = ModuleStack(pool=2)
setUpModule, tearDownModule = STACK.start, STACK.stop


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def forge(header, claims, key):
    h = b64(json.dumps(header).encode())
    p = b64(json.dumps(claims).encode())
    sig = b64(hmac.new(key, f"{h}.{p}".encode(), hashlib.sha256).digest()) if key else ""
    return f"{h}.{p}.{sig}"


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.admin = STACK.token(sub="root", role="admin")
        cls.alice = STACK.token(sub="alice", role="user")
        cls.bob = STACK.token(sub="bob", role="user")

    def req(self, method, path, body=None, token=None, **kw):
        return self.s.request(method, path, body, token=token, **kw)

    def assertError(self, resp, status, code=None):
        st, body, hdrs = resp
        self.assertEqual(st, status, body)
        self.assertIn("application/json", hdrs.get("content-type", ""))
        self.assertIsInstance(body, dict, body)
        self.assertIn("error", body)
        self.assertIsInstance(body["error"].get("message"), str)
        if code:
            self.assertEqual(body["error"]["code"], code, body)

    def session(self, token=None):
        return self.s.api_create_session(token or self.alice)

    def run_wait(self, sid, command, token=None):
        st, ev, _ = self.req("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                             {"action": "run", "args": {"command": command}}, token=token or self.alice)
        self.assertEqual(st, 200, ev)
        return ev


class ServiceRoutes(Base):
    def test_health_reports_redis_gateways_and_pool_without_a_token(self):
        st, body, _ = self.req("GET", "/api/v1/health")
        self.assertEqual(st, 200)
        self.assertEqual(body["status"], "ok")
        self.assertTrue(body["redis"])
        self.assertEqual(body["live_gateways"], 1)
        self.assertEqual(body["gateways"][0]["id"], "gw-test")
        self.assertTrue(body["gateways"][0]["alive"])
        self.assertIn("default", body["pool"])

    def test_pool_lists_ready_sandboxes_per_gateway(self):
        st, body, _ = self.req("GET", "/api/v1/pool", token=self.alice)
        self.assertEqual(st, 200, body)
        self.assertIn("gw-test", body["default"]["gateways"])
        self.assertIsInstance(body["default"]["ready"], int)

    def test_metrics_is_prometheus_text_for_admins_only(self):
        st, text, hdrs = self.req("GET", "/metrics", token=self.admin)
        self.assertEqual(st, 200)
        self.assertTrue(hdrs["content-type"].startswith("text/plain"))
        for name in ("sandpipe_sessions{status=\"READY\"}", "sandpipe_events_stored",
                     "sandpipe_gateways{state=\"alive\"} 1", "sandpipe_api_actions_total",
                     "sandpipe_api_errors_total", "sandpipe_pool_ready{profile=\"default\"}"):
            self.assertIn(name, text)
        for line in text.splitlines():
            if line and not line.startswith("#"):
                float(line.rsplit(" ", 1)[1])
        self.assertError(self.req("GET", "/metrics", token=self.alice), 403, "forbidden")
        self.assertError(self.req("GET", "/metrics"), 401, "unauthorized")

    def test_metrics_count_action_latency_and_streamed_bytes(self):
        def values():
            _, text, _ = self.req("GET", "/metrics", token=self.admin)
            return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1])
                    for l in text.splitlines() if l and not l.startswith("#")}
        before = values()
        sid = self.session()
        self.run_wait(sid, "head -c 5000 /dev/zero | tr '\\0' x")
        deadline = time.monotonic() + 10  # gateways flush their counters once a second
        while time.monotonic() < deadline:
            v = values()
            if v["sandpipe_action_duration_seconds_count"] > before["sandpipe_action_duration_seconds_count"]:
                break
            time.sleep(0.2)
        self.assertGreater(v["sandpipe_action_duration_seconds_count"],
                           before["sandpipe_action_duration_seconds_count"])
        self.assertGreaterEqual(v["sandpipe_output_bytes_total"] - before["sandpipe_output_bytes_total"], 5000)
        self.assertGreater(v["sandpipe_action_duration_seconds_sum"], 0)
        buckets = [(k, n) for k, n in v.items() if k.startswith("sandpipe_action_duration_seconds_bucket")]
        self.assertEqual(buckets[-1][0], 'sandpipe_action_duration_seconds_bucket{le="+Inf"}')
        self.assertEqual(buckets[-1][1], v["sandpipe_action_duration_seconds_count"])
        self.assertEqual([n for _, n in buckets], sorted(n for _, n in buckets))  # cumulative
        self.assertIn('sandpipe_transfer_bytes_total{direction="upload"}', v)

    def test_metrics_history_keeps_the_counters_every_step_for_admins_only(self):
        """The overview's charts read their past from the service (GET /api/v1/metrics/history:
        the gateways copy sp:metrics into a capped stream every 10 s), not from the page."""
        def history():
            st, body, _ = self.req("GET", "/api/v1/metrics/history?seconds=600", token=self.admin)
            self.assertEqual(st, 200, body)
            return body
        sid = self.session()
        self.run_wait(sid, "echo history")
        # two copies at least, the second one after the action was counted (events too)
        deadline = time.monotonic() + 40
        body = history()
        while time.monotonic() < deadline and not (
                len(body["samples"]) >= 2 and body["samples"][-1]["action_count"] > 0
                and body["samples"][-1]["events"] > 0):
            time.sleep(1)
            body = history()
        self.assertEqual(body["step"], 10)
        self.assertEqual(len(body["bounds"]), 16)
        s = body["samples"]
        self.assertGreaterEqual(len(s), 2, body)
        last = s[-1]
        self.assertGreater(last["action_count"], 0)
        self.assertGreater(last["events"], 0)
        self.assertEqual(len(last["action_buckets"]), 17)
        self.assertEqual(last["action_buckets"][-1], last["action_count"])  # cumulative
        self.assertEqual(last["action_buckets"], sorted(last["action_buckets"]))
        # one history for the service: copies a step apart, oldest first, counters never back
        for a, b in zip(s, s[1:]):
            self.assertGreaterEqual(b["t"] - a["t"], 9.9, (a, b))
            self.assertGreaterEqual(b["events"], a["events"])
        _, text, _ = self.req("GET", "/metrics", token=self.admin)
        self.assertIn("sandpipe_events_total ", text)
        self.assertError(self.req("GET", "/api/v1/metrics/history", token=self.alice), 403, "forbidden")
        self.assertError(self.req("GET", "/api/v1/metrics/history"), 401, "unauthorized")
        self.assertError(self.req("GET", "/api/v1/metrics/history?seconds=5", token=self.admin),
                         400, "bad_request")

    def test_tokens_minted_by_an_admin_work_and_others_cannot_mint(self):
        st, body, _ = self.req("POST", "/api/v1/tokens", {"sub": "carol", "role": "user", "ttl": 60},
                               token=self.admin)
        self.assertEqual(st, 201, body)
        self.assertEqual(body["role"], "user")
        self.assertLessEqual(body["exp"] - time.time(), 61)
        st, lst, _ = self.req("GET", "/api/v1/sessions", token=body["token"])
        self.assertEqual(st, 200)
        self.assertEqual(lst["sessions"], [])
        self.assertError(self.req("POST", "/api/v1/tokens", {"sub": "x", "role": "admin"}, token=self.alice),
                         403, "forbidden")
        for bad in ({"sub": "x", "role": "root"}, {"role": "user"}, {"sub": "", "role": "user"},
                    {"sub": "x", "role": "viewer"}, {"sub": "x", "role": "user", "ttl": "60"},
                    {"sub": "x", "role": "user", "ttl": -5}, {"sub": 5, "role": "user"}):
            self.assertError(self.req("POST", "/api/v1/tokens", bad, token=self.admin), 400, "bad_request")

    def test_unknown_routes_and_methods_get_json_errors(self):
        self.assertError(self.req("GET", "/api/v1/nope", token=self.alice), 404, "not_found")
        self.assertError(self.req("GET", "/api/v2/sessions"), 404, "not_found")
        self.assertError(self.req("PATCH", "/api/v1/sessions", token=self.alice), 405)
        self.assertError(self.req("GET", "/api/v1/sessions/%zz", token=self.alice), 400, "bad_request")
        self.assertError(self.req("GET", "/no/such/static/file"), 404, "not_found")

    def test_static_root_and_security_headers(self):
        st, text, hdrs = self.req("GET", "/")
        self.assertEqual(st, 200)
        # the web UI (make web builds web/dist), else the page saying how to build it
        built = os.path.exists(os.path.join(ROOT, "web", "dist", "index.html"))
        self.assertIn('<div id="app">' if built else "web UI is not built yet", text)
        self.assertEqual(hdrs["cache-control"], "no-cache")
        self.assertEqual(hdrs["x-content-type-options"], "nosniff")
        self.assertIn("default-src 'self'", hdrs["content-security-policy"])
        st, _, hdrs = self.req("GET", "/api/v1/health")
        self.assertEqual(hdrs["x-frame-options"], "SAMEORIGIN")
        self.assertEqual(hdrs["cache-control"], "no-store")


class AuthMatrix(Base):
    ROUTES = [("GET", "/api/v1/sessions"), ("POST", "/api/v1/sessions"), ("GET", "/api/v1/sessions/s-x"),
              ("DELETE", "/api/v1/sessions/s-x"), ("POST", "/api/v1/sessions/s-x/actions"),
              ("GET", "/api/v1/sessions/s-x/events"), ("GET", "/api/v1/sessions/s-x/files"),
              ("GET", "/api/v1/pool"), ("POST", "/api/v1/tokens"), ("GET", "/metrics")]

    def test_missing_expired_forged_and_alg_none_tokens_get_401(self):
        secret = bytes.fromhex(self.s.secret)
        now = int(time.time())
        claims = {"sub": "root", "role": "admin", "exp": now + 600}
        bad = {
            "none": None,
            "expired": self.s.token(sub="root", role="admin", exp_in=-10),
            "forged": forge({"alg": "HS256", "typ": "JWT"}, claims, os.urandom(32)),
            "alg_none": forge({"alg": "none", "typ": "JWT"}, claims, None),
            "alg_hs512": forge({"alg": "HS512", "typ": "JWT"}, claims, secret),
            "garbage": "not.a.token",
        }
        for name, tok in bad.items():
            for method, path in self.ROUTES:
                with self.subTest(token=name, route=path, method=method):
                    body = {} if method in ("POST",) else None
                    st, b, _ = self.req(method, path, body, token=tok)
                    self.assertEqual(st, 401, (name, path, b))
                    self.assertIn(b["error"]["code"], ("unauthorized", "token_expired"))
                    if name == "expired":
                        self.assertEqual(b["error"]["code"], "token_expired")
        st, b, _ = self.req("GET", "/api/v1/sessions", headers={"Authorization": "Basic Zm9vOmJhcg=="})
        self.assertError((st, b, {"content-type": "application/json"}), 401, "unauthorized")

    def test_roles_on_one_session(self):
        sid = self.session(self.alice)
        viewer = self.s.token(sub="dash", role="viewer", session=sid)
        other_viewer = self.s.token(sub="dash", role="viewer", session="s-other")
        for tok, see in ((self.admin, True), (self.alice, True), (viewer, True), (self.bob, False),
                         (other_viewer, False)):
            st, _, _ = self.req("GET", f"/api/v1/sessions/{sid}", token=tok)
            self.assertEqual(st, 200 if see else 404)
            st, _, _ = self.req("GET", f"/api/v1/sessions/{sid}/events", token=tok)
            self.assertEqual(st, 200 if see else 404)
        act = {"action": "run", "args": {"command": "true"}}
        self.assertError(self.req("POST", f"/api/v1/sessions/{sid}/actions", act, token=viewer), 403, "forbidden")
        self.assertError(self.req("DELETE", f"/api/v1/sessions/{sid}", token=viewer), 403, "forbidden")
        self.assertError(self.req("POST", "/api/v1/sessions", {}, token=viewer), 403, "forbidden")
        self.assertError(self.req("POST", f"/api/v1/sessions/{sid}/actions", act, token=self.bob), 404)
        self.assertError(self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.bob), 404)
        self.assertError(self.req("GET", f"/api/v1/sessions/{sid}/files", token=self.bob), 404)
        st, _, _ = self.req("POST", f"/api/v1/sessions/{sid}/actions", act, token=self.admin)
        self.assertEqual(st, 202)
        st, lst, _ = self.req("GET", "/api/v1/sessions", token=viewer)
        self.assertEqual([x["id"] for x in lst["sessions"]], [sid])
        st, lst, _ = self.req("GET", "/api/v1/sessions?limit=500", token=self.bob)
        self.assertNotIn(sid, [x["id"] for x in lst["sessions"]])
        self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)


class Sessions(Base):
    def test_create_get_list_delete(self):
        st, s, _ = self.req("POST", "/api/v1/sessions", {"idle_timeout": 600}, token=self.alice, timeout=90)
        self.assertEqual(st, 201, s)
        sid = s["id"]
        self.assertEqual(s["status"], "READY")
        self.assertEqual(s["owner"], "alice")
        self.assertEqual(s["idle_timeout"], 600)
        st, g, _ = self.req("GET", f"/api/v1/sessions/{sid}", token=self.alice)
        self.assertEqual(st, 200)
        for k in ("id", "owner", "status", "profile", "gateway", "provider", "created", "last_seq",
                  "idle_timeout", "max_lifetime"):
            self.assertIn(k, g)
        self.assertEqual(g["gateway"], "gw-test")
        st, lst, _ = self.req("GET", "/api/v1/sessions", token=self.alice)
        self.assertIn(sid, [x["id"] for x in lst["sessions"]])
        st, d, _ = self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)
        self.assertEqual(st, 200, d)
        self.assertEqual(d["status"], "STOPPED")
        deadline = time.time() + 5
        while time.time() < deadline:
            st, g, _ = self.req("GET", f"/api/v1/sessions/{sid}", token=self.alice)
            if g["status"] == "STOPPED":
                break
            time.sleep(0.05)
        self.assertEqual(g["status"], "STOPPED")
        st, d, _ = self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)
        self.assertEqual(st, 200)  # idempotent
        self.assertError(self.req("POST", f"/api/v1/sessions/{sid}/actions",
                                  {"action": "run", "args": {"command": "true"}}, token=self.alice),
                         409, "session_ended")
        st, st_lst, _ = self.req("GET", "/api/v1/sessions?status=STOPPED&limit=500", token=self.alice)
        self.assertIn(sid, [x["id"] for x in st_lst["sessions"]])

    def test_create_refuses_bad_bodies(self):
        self.assertError(self.req("POST", "/api/v1/sessions", "{nope", token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", "/api/v1/sessions", "[1,2]", token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", "/api/v1/sessions?timeout=0", {}, token=self.alice), 400)

    def test_get_unknown_session_is_404(self):
        self.assertError(self.req("GET", "/api/v1/sessions/s-0000000000000000", token=self.admin), 404)
        self.assertError(self.req("GET", "/api/v1/sessions/%7Bx%7D", token=self.admin), 404)

    def test_list_pages_with_cursor_newest_first(self):
        tok = self.s.token(sub="pager", role="user")
        ids = [self.session(tok) for _ in range(3)]
        seen, cursor = [], None
        for _ in range(10):
            q = "/api/v1/sessions?limit=1" + (f"&cursor={cursor}" if cursor else "")
            st, page, _ = self.req("GET", q, token=tok)
            self.assertEqual(st, 200, page)
            self.assertLessEqual(len(page["sessions"]), 1)
            seen += [x["id"] for x in page["sessions"]]
            cursor = page["next_cursor"]
            if not cursor:
                break
        self.assertEqual(seen, list(reversed(ids)))
        self.assertError(self.req("GET", "/api/v1/sessions?limit=0", token=tok), 400)
        self.assertError(self.req("GET", "/api/v1/sessions?limit=abc", token=tok), 400)
        self.assertError(self.req("GET", "/api/v1/sessions?cursor=garbage", token=tok), 400)
        for sid in ids:
            self.req("DELETE", f"/api/v1/sessions/{sid}", token=tok)

    def test_pause_and_resume(self):
        sid = self.session()
        for verb, status in (("pause", "PAUSED"), ("pause", "PAUSED"), ("resume", "READY")):
            st, b, _ = self.req("POST", f"/api/v1/sessions/{sid}/{verb}", token=self.alice)
            self.assertEqual((st, b["status"]), (200, status), b)
        self.assertError(self.req("POST", "/api/v1/sessions/s-nope/pause", token=self.alice), 404)
        self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)
        self.assertError(self.req("POST", f"/api/v1/sessions/{sid}/resume", token=self.alice), 409)


class IdleWhileWatched(Base):
    def test_reads_do_not_keep_an_idle_session_alive_and_actions_do(self):
        """A dashboard or a file tree polling a session (file list, stat, read, its sandbox's
        health) is no use of it: its idle timeout still ends it. An action is use."""
        st, s, _ = self.req("POST", "/api/v1/sessions", {"idle_timeout": 2}, token=self.alice, timeout=90)
        self.assertEqual(st, 201, s)
        sid = s["id"]
        self.run_wait(sid, "echo x > /workspace/watched.txt")
        deadline = time.monotonic() + 30
        status = "READY"
        while time.monotonic() < deadline and status == "READY":
            for path in (f"/api/v1/sessions/{sid}/files?path=.", f"/api/v1/sessions/{sid}/files/stat?path=watched.txt",
                         f"/api/v1/sessions/{sid}/files/content?path=watched.txt"):
                self.req("GET", path, token=self.alice)
            st, body, _ = self.req("GET", f"/api/v1/sessions/{sid}", token=self.alice)
            self.assertEqual(st, 200, body)
            status = body["status"]
            time.sleep(0.3)
        self.assertEqual(status, "STOPPED")  # it idled out although it was read all along


class Actions(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sid = STACK.api_create_session(cls.alice)

    def test_wait_returns_the_observation_event(self):
        ev = self.run_wait(self.sid, "echo hello-api")
        self.assertEqual(ev["type"], "observation")
        obs = ev["observation"]
        self.assertEqual(obs["observation"], "run")
        self.assertEqual(obs["content"], "hello-api")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0)
        # the wrapped form, wait in the body
        st, ev2, _ = self.req("POST", f"/api/v1/sessions/{self.sid}/actions",
                              {"action": {"action": "run", "args": {"command": "echo two"}}, "wait": True},
                              token=self.alice)
        self.assertEqual(st, 200)
        self.assertEqual(ev2["observation"]["content"], "two")
        self.assertGreater(ev2["action"], ev["action"])

    def test_without_wait_202_then_the_observation_is_in_the_events(self):
        st, b, _ = self.req("POST", f"/api/v1/sessions/{self.sid}/actions",
                            {"action": "run", "args": {"command": "echo later"}}, token=self.alice)
        self.assertEqual(st, 202, b)
        seq = b["seq"]
        deadline = time.time() + 20
        found = None
        while time.time() < deadline and not found:
            st, evs, _ = self.req("GET", f"/api/v1/sessions/{self.sid}/events?since={seq}&type=observation",
                                  token=self.alice)
            found = [e for e in evs["events"] if e.get("action") == seq]
            time.sleep(0.05)
        self.assertTrue(found)
        self.assertEqual(found[0]["observation"]["content"], "later")

    def test_wait_times_out_with_504(self):
        st, b, _ = self.req("POST", f"/api/v1/sessions/{self.sid}/actions?wait=true&timeout=1",
                            {"action": "run", "args": {"command": "sleep 3"}}, token=self.alice)
        self.assertError((st, b, {"content-type": "application/json"}), 504, "timeout")
        self.run_wait(self.sid, "echo after")  # queued behind the sleep, answered

    def test_bad_action_bodies(self):
        p = f"/api/v1/sessions/{self.sid}/actions"
        self.assertError(self.req("POST", p, "{bad json", token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", p, "", token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", p, "[]", token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", p, {"args": {}}, token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", p, {"action": 5}, token=self.alice), 400, "bad_request")
        self.assertError(self.req("POST", p, {"action": "run", "args": "ls"}, token=self.alice), 400)
        self.assertError(self.req("POST", p, {"action": {"action": "run"}, "wait": "yes"}, token=self.alice), 400)
        self.assertError(self.req("POST", p + "?timeout=-1", {"action": "run"}, token=self.alice), 400)
        self.assertError(self.req("POST", p, "\x00{}", token=self.alice), 400)
        self.assertError(self.req("POST", "/api/v1/sessions/s-nope/actions", {"action": "run"},
                                  token=self.alice), 404)

    def test_oversized_bodies_get_413_json(self):
        p = f"/api/v1/sessions/{self.sid}/actions"
        big = json.dumps({"action": "run", "args": {"command": "x" * (2 << 20)}})
        self.assertError(self.req("POST", p, big, token=self.alice), 413, "too_large")
        huge = b"x" * (17 << 20)  # over nginx's client_max_body_size
        self.assertError(self.req("POST", p, huge, token=self.alice), 413, "too_large")

    def test_signal_interrupts_a_running_command(self):
        sid = self.session()
        st, b, _ = self.req("POST", f"/api/v1/sessions/{sid}/actions",
                            {"action": "run", "args": {"command": "sleep 30"}}, token=self.alice)
        self.assertEqual(st, 202)
        time.sleep(0.5)
        st, r, _ = self.req("POST", f"/api/v1/sessions/{sid}/signal", {"signal": "INT"}, token=self.alice)
        self.assertEqual(st, 200, r)
        st, evs, _ = self.req("GET", f"/api/v1/sessions/{sid}/events?since={b['seq']}&type=signal",
                              token=self.alice)
        self.assertEqual(evs["events"][0]["signal"], "INT")
        self.assertError(self.req("POST", f"/api/v1/sessions/{sid}/signal", {"signal": 2},
                                  token=self.alice), 400)
        self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)

    def test_fifty_concurrent_submits_from_fifty_threads_are_all_answered(self):
        results = [None] * 50

        def one(i):
            try:
                results[i] = self.req("POST", f"/api/v1/sessions/{self.sid}/actions",
                                      {"action": "run", "args": {"command": f"echo c{i}"}},
                                      token=self.alice, timeout=60)
            except Exception as e:  # noqa: BLE001 - reported below
                results[i] = e
        threads = [threading.Thread(target=one, args=(i,)) for i in range(50)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        elapsed = time.monotonic() - t0
        statuses = [r[0] if isinstance(r, tuple) else r for r in results]
        self.assertEqual(statuses, [202] * 50, statuses)
        seqs = {r[1]["seq"] for r in results}
        self.assertEqual(len(seqs), 50)
        # every one gets its observation
        last = max(seqs)
        ev = None
        deadline = time.time() + 60
        while time.time() < deadline:
            st, evs, _ = self.req("GET", f"/api/v1/sessions/{self.sid}/events?since={last}&type=observation",
                                  token=self.alice)
            if any(e.get("action") == last for e in evs["events"]):
                ev = True
                break
            time.sleep(0.1)
        self.assertTrue(ev)
        print(f"\n50 concurrent submits answered in {elapsed:.2f}s", end=" ")


class Events(Base):
    def test_since_limit_and_type(self):
        sid = self.session()
        ev = self.run_wait(sid, "echo e1")
        st, b, _ = self.req("GET", f"/api/v1/sessions/{sid}/events", token=self.alice)
        self.assertEqual(st, 200)
        seqs = [e["seq"] for e in b["events"]]
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)))
        self.assertEqual(b["last_seq"], seqs[-1])
        st, b, _ = self.req("GET", f"/api/v1/sessions/{sid}/events?since=1&limit=2", token=self.alice)
        self.assertEqual([e["seq"] for e in b["events"]], [2, 3])
        self.assertEqual(b["next_since"], 3)
        self.assertTrue(b["more"])
        st, b, _ = self.req("GET", f"/api/v1/sessions/{sid}/events?type=action", token=self.alice)
        self.assertEqual([e["type"] for e in b["events"]], ["action"])
        self.assertEqual(b["events"][0]["seq"], ev["action"])
        st, b, _ = self.req("GET", f"/api/v1/sessions/{sid}/events?since=100000", token=self.alice)
        self.assertEqual(b["events"], [])
        for q in ("since=-1", "since=x", "limit=0", "limit=100000"):
            self.assertError(self.req("GET", f"/api/v1/sessions/{sid}/events?{q}", token=self.alice), 400)
        self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)

    def test_trimmed_events_are_announced_by_a_truncated_marker(self):
        sid = self.session()
        for i in range(3):
            self.run_wait(sid, f"echo t{i}")
        key = "sp:session:{%s}:events" % sid
        last = int(self.s.redis("XLEN", key))
        self.s.redis("XTRIM", key, "MAXLEN", "3")
        st, b, _ = self.req("GET", f"/api/v1/sessions/{sid}/events?since=0", token=self.alice)
        first = b["events"][0]
        self.assertEqual(first["type"], "truncated")
        self.assertEqual(first["from"], 1)
        self.assertEqual(first["to"], last - 3)
        self.assertEqual(b["events"][1]["seq"], last - 2)
        self.req("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)


class Files(Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sid = STACK.api_create_session(cls.alice)

    def test_write_read_list_stat(self):
        base = f"/api/v1/sessions/{self.sid}/files"
        st, w, _ = self.req("PUT", base + "/content?path=dir%2Fnotes.txt", b"one\ntwo\n", token=self.alice)
        self.assertEqual(st, 200, w)
        self.assertEqual(w, {"path": "/workspace/dir/notes.txt", "size": 8})
        st, r, _ = self.req("GET", base + "/content?path=dir/notes.txt", token=self.alice)
        self.assertEqual(st, 200)
        self.assertEqual(r["content"], "one\ntwo\n")
        self.assertEqual(r["total_lines"], 2)
        st, r, _ = self.req("GET", base + "/content?path=dir/notes.txt&start_line=2", token=self.alice)
        self.assertEqual(r["content"], "two\n")
        st, l, _ = self.req("GET", base + "?path=dir", token=self.alice)
        self.assertEqual(st, 200)
        self.assertEqual([e["name"] for e in l["entries"]], ["notes.txt"])
        st, l, _ = self.req("GET", base, token=self.alice)
        self.assertIn("dir", [e["name"] for e in l["entries"]])
        st, s, _ = self.req("GET", base + "/stat?path=dir/notes.txt", token=self.alice)
        self.assertEqual((s["type"], s["size"]), ("file", 8))
        st, w, _ = self.req("POST", base + "/content", {"path": "j.txt", "content": "héllo"}, token=self.alice)
        self.assertEqual(st, 200, w)
        st, r, _ = self.req("GET", base + "/content?path=j.txt", token=self.alice)
        self.assertEqual(r["content"], "héllo")
        st, w, _ = self.req("PUT", base + "/content?path=bin.dat", bytes(range(256)), token=self.alice)
        self.assertEqual(w["size"], 256)  # binary safe write

    def test_file_errors(self):
        base = f"/api/v1/sessions/{self.sid}/files"
        self.assertError(self.req("GET", base + "/content?path=missing.txt", token=self.alice), 404, "not_found")
        self.assertError(self.req("GET", base + "/content", token=self.alice), 400, "bad_request")
        self.assertError(self.req("GET", base + "/content?path=x&start_line=zero", token=self.alice), 400)
        # The sandbox is the boundary: its own /etc is listed, and read-only.
        st, r, _ = self.req("GET", base + "?path=../../etc", token=self.alice)
        self.assertEqual((st, r["path"]), (200, "/etc"), r)
        self.assertError(self.req("PUT", base + "/content?path=/etc/x", b"x", token=self.alice), 403,
                         "permission_denied")
        self.assertError(self.req("PUT", base + "/content?path=big&append=true", b"x" * (600 << 10),
                                  token=self.alice),
                         413, "too_large")
        self.assertError(self.req("POST", base + "/content", {"path": 1, "content": "x"}, token=self.alice), 400)
        viewer = self.s.token(sub="v", role="viewer", session=self.sid)
        st, _, _ = self.req("GET", base, token=viewer)
        self.assertEqual(st, 200)
        self.assertError(self.req("PUT", base + "/content?path=v.txt", b"x", token=viewer), 403)


class Robustness(Base):
    def test_websocket_through_nginx_with_a_subprotocol_token(self):
        ws = WS("127.0.0.1", self.s.http_port, "/ws/control", protocols=["sandpipe.v1", "bearer." + self.alice])
        self.assertEqual(ws.headers.get("sec-websocket-protocol"), "sandpipe.v1")
        ws.send_json({"id": 1, "method": "session.list", "params": {}})
        self.assertEqual(ws.recv_json(10)["type"], "result")
        ws.close()
        ws = WS("127.0.0.1", self.s.http_port, "/ws/control",
                protocols=["sandpipe.v1", "bearer." + self.alice + "x"])
        msg = ws.recv_json(10)
        self.assertEqual(msg["type"], "error")
        ws.close()

    def test_unread_bodies_do_not_poison_kept_fastcgi_connections(self):
        # nginx keeps FastCGI connections to the API (render.sh --api-keepalive): a body the API
        # refuses unread (413) must not be taken for the next request on that connection.
        for i in range(30):
            st, b, _ = self.req("POST", "/api/v1/sessions/s-x/actions", b"x" * (2 * 1024 * 1024),
                                token=self.alice)
            self.assertEqual(st, 413, b)
            st, b, _ = self.req("GET", "/api/v1/health")
            self.assertEqual(st, 200, (i, b))

    def test_a_worker_survives_ten_thousand_malformed_requests(self):
        pids = self.s.api_worker_pids()
        bad = [
            ("POST", "/api/v1/sessions/s-x/actions", b"{\"action\":", {"Authorization": "Bearer " + self.alice}),
            ("POST", "/api/v1/sessions", b"\xff\xfe\x00garbage", {"Authorization": "Bearer " + self.alice}),
            ("GET", "/api/v1/sessions?limit=%%%&cursor=%ZZ", None, {"Authorization": "Bearer " + self.alice}),
            ("GET", "/api/v1/sessions/" + "a" * 3000, None, {"Authorization": "Bearer " + self.alice}),
            ("GET", "/api/v1/sessions", None, {"Authorization": "Bearer " + "x." * 5000}),
            ("POST", "/api/v1/tokens", b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", {"Authorization": "Bearer " + self.admin}),
            ("GET", "/runtime/%00/alive", None, {}),
            ("POST", "/runtime/s-x/execute_action", b"{}", {"X-Session-API-Key": "\x01"}),
            ("DELETE", "/api/v1/sessions/%2F..%2F", None, {"Authorization": "Bearer " + self.alice}),
            ("GET", "/api/v1/sessions/s-x/events?since=99999999999999999999999", None,
             {"Authorization": "Bearer " + self.alice}),
        ]
        c = http.client.HTTPConnection("127.0.0.1", self.s.http_port, timeout=30)
        statuses = {}
        for i in range(10000):
            method, path, body, hdrs = bad[i % len(bad)]
            try:
                c.request(method, path, body=body, headers=hdrs)
                r = c.getresponse()
                r.read()
                statuses[r.status] = statuses.get(r.status, 0) + 1
                if r.getheader("connection", "").lower() == "close":
                    c.close()
                    c = http.client.HTTPConnection("127.0.0.1", self.s.http_port, timeout=30)
            except (http.client.HTTPException, OSError):
                c.close()
                c = http.client.HTTPConnection("127.0.0.1", self.s.http_port, timeout=30)
        c.close()
        self.assertFalse([s for s in statuses if s >= 500], statuses)
        self.assertEqual(self.s.api_worker_pids(), pids)  # no worker died and was replaced
        st, b, _ = self.req("GET", "/api/v1/health")
        self.assertEqual(st, 200)


class RedisDown(unittest.TestCase):
    """Its own stack: Redis is stopped under running workers."""

    def test_redis_down_gives_503_json_and_workers_recover(self):
        s = ApiStack(pool=0, workers=2)
        try:
            tok = s.token(sub="root", role="admin")
            self.assertEqual(s.request("GET", "/api/v1/sessions", token=tok)[0], 200)
            pids = s.api_worker_pids()
            s.redis_proc.terminate()
            s.redis_proc.wait(5)
            for path in ("/api/v1/sessions", "/api/v1/health", "/api/v1/sessions/s-1", "/api/v1/pool",
                         "/metrics"):
                for _ in range(3):
                    st, b, h = s.request("GET", path, token=tok)
                    self.assertEqual(st, 503, (path, b))
                    self.assertEqual(b["error"]["code"], "unavailable")
            st, b, _ = s.request("POST", "/api/v1/sessions/s-1/actions", {"action": "run"}, token=tok)
            self.assertEqual(st, 503)
            st, b, _ = s.request("GET", "/runtime/s-1/alive")
            self.assertEqual(st, 503)
            self.assertIn("detail", b)
            self.assertEqual(s.api_worker_pids(), pids)
            s.start_redis()
            deadline = time.time() + 10
            while time.time() < deadline:
                if s.request("GET", "/api/v1/sessions", token=tok)[0] == 200:
                    break
                time.sleep(0.1)
            self.assertEqual(s.request("GET", "/api/v1/sessions", token=tok)[0], 200)
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
