"""The API's control requests to the gateways over HTTP (issue 21; docs/protocol.md "Control
requests"): session create, pause, resume and delete go from sandpipe-api straight to the
session's gateway (POST /_sp/op on its advertised address, with a control token), not through
Redis. Real nginx, real Redis, three real gateways (each its own host: nobody takes another's
sessions over) with bwrap sandboxes."""
import base64
import hashlib
import hmac
import http.client
import json
import signal
import time
import unittest

from apistack import ApiStack

GWS = ("gw-test", "gw-test-2", "gw-test-3")


def control_token(secret_hex, sub="sandpipe-api", exp_in=60):
    """A token signed with the control key (common/ctl_token.c): HMAC-SHA256(secret, label)."""
    key = hmac.new(bytes.fromhex(secret_hex), b"sandpipe control v1", hashlib.sha256).digest()

    def b64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": sub, "role": "admin", "exp": int(time.time()) + exp_in}
    payload = b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(sig)}"


class Control(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.st = ApiStack(pool=1, gateways=3,
                          gateway_extra={2: ["--host-id", "ctl-host-b"], 3: ["--host-id", "ctl-host-c"]})
        cls.alice = cls.st.token(sub="alice")

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    def api(self, method, path, body=None, token=None, timeout=60):
        st, b, _ = self.st.request(method, "/api/v1" + path, body, token=token or self.alice,
                                   timeout=timeout)
        return st, b

    def direct(self, port, body, headers, path="/_sp/op"):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            c.request("POST", path, body=json.dumps(body),
                      headers={"Content-Type": "application/json", **headers})
            r = c.getresponse()
            return r.status, json.loads(r.read() or b"null")
        finally:
            c.close()

    def gateway_sessions(self):
        return {gw: set(self.st.redis("SMEMBERS", f"sp:gateway:{gw}:sessions").split()) for gw in GWS}

    def oh(self, path, body, key):
        st, b, _ = self.st.request("POST", "/openhands" + path, body, headers={"X-API-Key": key},
                                   timeout=60)
        return st, b

    def test_0_openhands_runtimes_start_pause_resume_stop_on_every_gateway(self):
        key = self.st.token(sub="oh-user")
        rts = []
        for i in range(len(GWS)):  # each start goes to the gateway with the fewest sessions
            st, rt = self.oh("/start", {"image": "default", "session_id": f"ctl-{i}"}, key)
            self.assertEqual((st, rt["status"], rt["pod_status"]), (200, "running", "ready"), rt)
            rts.append(rt)
        on = {rt["runtime_id"]: self.st.redis("HGET", f"sp:session:{{{rt['sandpipe']['session']}}}", "gateway")
              for rt in rts}
        self.assertEqual(sorted(on.values()), list(GWS))
        for rt in rts:
            rid, sid = rt["runtime_id"], rt["sandpipe"]["session"]
            with self.subTest(gateway=on[rid]):
                for verb, status, session_status in (("/pause", "paused", "PAUSED"),
                                                     ("/resume", "running", "READY")):
                    st, b = self.oh(verb, {"runtime_id": rid}, key)
                    self.assertEqual((st, b["status"]), (200, status), b)
                    self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), session_status)
                st, b = self.oh("/stop", {"runtime_id": rid}, key)
                self.assertEqual((st, b["status"]), (200, "stopped"), b)
                self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "STOPPED")

    def test_1_create_pause_resume_delete_land_on_and_act_on_every_gateway(self):
        made = [self.api("POST", "/sessions", {})[1] for _ in GWS]
        self.assertEqual(sorted(s["gateway"] for s in made), list(GWS), made)
        for s in made:
            sid, gw = s["id"], s["gateway"]
            with self.subTest(gateway=gw):
                self.assertEqual(s["status"], "READY")
                self.assertIn(sid, self.gateway_sessions()[gw])
                for verb, status in (("pause", "PAUSED"), ("resume", "READY")):
                    st, b = self.api("POST", f"/sessions/{sid}/{verb}")
                    self.assertEqual((st, b["status"]), (200, status), b)
                    self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), status)
                st, ev, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true",
                                            {"action": "run", "args": {"command": "echo ctl-$((6*7))"}},
                                            token=self.alice, timeout=60)
                self.assertEqual((st, ev["observation"]["content"]), (200, "ctl-42"), ev)
                st, b = self.api("DELETE", f"/sessions/{sid}")
                self.assertEqual((st, b["status"]), (200, "STOPPED"), b)
                self.assertNotIn(sid, self.gateway_sessions()[gw])
                self.assertEqual(self.st.redis("HGET", f"sp:session:{{{sid}}}", "status"), "STOPPED")
        # nothing was asked through Redis (the inbox of earlier versions)
        for gw in GWS:
            self.assertEqual(self.st.redis("XLEN", f"sp:gateway:{gw}:inbox"), "0")

    def test_2_a_forged_control_request_is_refused(self):
        before = self.gateway_sessions()
        create = {"op": "session.create", "owner": "mallory", "role": "admin", "viewer_session": "",
                  "params": {}}
        admin = self.st.token(sub="mallory", role="admin")
        # through nginx: never routed to a gateway, whatever the token
        for tok in (None, admin, control_token(self.st.secret)):
            with self.subTest(via="nginx", token=bool(tok)):
                hdrs = {"Authorization": "Bearer " + tok} if tok else {}
                st, body = self.direct(self.st.http_port, create, hdrs)
                self.assertEqual(st, 404, body)
                st, body = self.direct(self.st.http_port, create, hdrs, path="/_sp/op?to=gw-test")
                self.assertEqual(st, 404, body)
        # straight to each gateway's port without the control key
        forged = {
            "none": {},
            "client admin token": {"Authorization": "Bearer " + admin},
            "secret-signed, the API's sub": {"Authorization": "Bearer " + self.st.token(sub="sandpipe-api",
                                                                                        role="admin")},
            "control key, another sub": {"Authorization": "Bearer " + control_token(self.st.secret, sub="x")},
            "control key, long-lived": {"Authorization": "Bearer " + control_token(self.st.secret,
                                                                                  exp_in=3600)},
            "control key, expired": {"Authorization": "Bearer " + control_token(self.st.secret, exp_in=-5)},
            "another secret": {"Authorization": "Bearer " + control_token("ab" * 32)},
        }
        for port in self.st.gw_ports:
            for what, hdrs in forged.items():
                with self.subTest(port=port, credential=what):
                    st, body = self.direct(port, create, hdrs)
                    self.assertEqual(st, 401, body)
                    self.assertEqual((body["ok"], body["error"]["code"]), (False, "unauthorized"))
        self.assertEqual(self.gateway_sessions(), before)
        # the real credential is what makes the difference (the request meant for one gateway
        # is not served by another)
        tok = {"Authorization": "Bearer " + control_token(self.st.secret)}
        st, body = self.direct(self.st.gw_ports[1], {"op": "session.get", "role": "admin", "session": "s-x"},
                               tok, path="/_sp/op?to=gw-test")
        self.assertEqual((st, body["error"]["code"]), (421, "gateway_down"), body)
        st, body = self.direct(self.st.gw_ports[1], {"op": "session.get", "role": "admin", "session": "s-x"},
                               tok, path="/_sp/op?to=gw-test-2")
        self.assertEqual((st, body), (200, {"ok": False, "error": {"code": "not_found",
                                                                   "message": "no such session on this gateway"}}))
        st, body = self.direct(self.st.gw_ports[1], {"op": "session.get"}, tok)
        self.assertEqual((st, body["error"]["code"]), (400, "bad_request"), body)

    def test_3_a_killed_gateway_is_passed_over_and_its_sessions_answer_503(self):
        gw, proc = "gw-test-3", self.st.more_gws[1]
        sid = None
        for _ in range(4):  # the one with the fewest sessions takes the next: gw-test-3 within 3
            st, s = self.api("POST", "/sessions", {})
            self.assertEqual(st, 201, s)
            if s["gateway"] == gw:
                sid = s["id"]
                break
        self.assertIsNotNone(sid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # killed a moment ago: its heartbeat is still there (held here, so the test does not
        # race its expiry), its address refuses connections, and it owns the fewest sessions,
        # so every create picks it first
        self.st.redis("SET", f"sp:gateway:{gw}", "1", "EX", "120")
        self.st.redis("DEL", f"sp:gateway:{gw}:sessions")
        def live_counts():
            return [int(self.st.redis("SCARD", f"sp:gateway:{o}:sessions")) for o in ("gw-test", "gw-test-2")]
        for _ in range(2):  # each create fills an empty live one: two at most
            if min(live_counts()) == 0:
                st, s = self.api("POST", "/sessions", {})
                self.assertEqual(st, 201, s)
        self.assertGreater(min(live_counts()), 0)
        for _ in range(3):
            st, s2 = self.api("POST", "/sessions", {})
            self.assertEqual(st, 201, s2)
            self.assertIn(s2["gateway"], ("gw-test", "gw-test-2"))
        for method, path in (("DELETE", f"/sessions/{sid}"), ("POST", f"/sessions/{sid}/pause"),
                             ("POST", f"/sessions/{sid}/resume")):
            with self.subTest(request=method + " " + path, heartbeat=True):
                st, b = self.api(method, path)
                self.assertEqual((st, b["error"]["code"]), (503, "gateway_down"), b)
                self.assertIn(gw, b["error"]["message"])
        self.st.redis("DEL", f"sp:gateway:{gw}")  # the heartbeat expired
        for method, path in (("DELETE", f"/sessions/{sid}"), ("POST", f"/sessions/{sid}/pause")):
            with self.subTest(request=method + " " + path, heartbeat=False):
                st, b = self.api(method, path)
                self.assertEqual((st, b["error"]["code"]), (503, "gateway_down"), b)
                self.assertEqual(b["error"]["message"], f"the session's gateway {gw} is not running")
        # every gateway gone but the first: creates go there
        st, s3 = self.api("POST", "/sessions", {})
        self.assertEqual(st, 201, s3)
        self.api("DELETE", f"/sessions/{s3['id']}")


if __name__ == "__main__":
    unittest.main()
