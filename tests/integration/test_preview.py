"""Previews (issue 31, docs/api.md "Previews"): a port a process listens on inside a sandbox,
reached through the real nginx, the session's gateway and its executor, at /preview/S/P/… and at
P-S.localhost (its own origin), per provider (a bwrap sandbox of the runtime image, a Docker
container of it). Real servers in the sandbox: python's http.server (100 MB down, checked by
hash), an app of the standard library (an upload, a server-sent stream, a WebSocket echo); who
may open what (every refusal, with its words); ports and their events; the faults (nothing
listening, a paused or deleted session)."""
import hashlib
import http.client
import json
import os
import time
import unittest
import urllib.parse
import uuid

from apistack import ApiStack
from providers import PROVIDERS
from test_oh_remote_runtime import V0RemoteRuntime
from wsclient import WS

APP = os.path.join(os.path.dirname(__file__), "preview_apps", "app.py")
BIG = 100 * 1000 * 1000


class Previews:
    PROVIDER = None

    @classmethod
    def setUpClass(cls):
        image = PROVIDERS[cls.PROVIDER].prepare()
        cls.st = ApiStack(provider=cls.PROVIDER, pool=1,
                          extra=["--image", image, "--preview-public", "on"])
        cls.alice = cls.st.token(sub="alice", role="user")
        cls.bob = cls.st.token(sub="bob", role="user")
        cls.sid = cls.st.api_create_session(cls.alice)
        with open(APP, "rb") as f:
            st, body, _ = cls.st.request("PUT", f"/api/v1/sessions/{cls.sid}/files/content?path=/workspace/app.py",
                                         f.read(), token=cls.alice)
        assert st == 200, (st, body)
        cls.sh(cls.sid, "cd /workspace && head -c %d /dev/urandom > big.bin && "
                        "(nohup python3 -m http.server 8000 >/tmp/hs.log 2>&1 &) && "
                        "(nohup python3 app.py 8001 >/tmp/app.log 2>&1 &)" % BIG)
        cls.big_sha = cls.sh(cls.sid, "sha256sum /workspace/big.bin | cut -d' ' -f1").strip()
        cls.wait_listening(cls.sid, {8000, 8001})
        cls.tok8000 = cls.mint(cls.sid, 8000)["token"]
        cls.tok8001 = cls.mint(cls.sid, 8001)["token"]

    @classmethod
    def tearDownClass(cls):
        cls.st.stop()

    # ---- helpers ----

    @classmethod
    def sh(cls, sid, command, token=None):
        st, ev, _ = cls.st.request("POST", f"/api/v1/sessions/{sid}/actions?wait=true&timeout=120",
                                   {"action": "run", "args": {"command": command}},
                                   token=token or cls.alice, timeout=150)
        assert st == 200, (st, ev)
        return ev["observation"]["content"]

    @classmethod
    def ports(cls, sid, token=None):
        st, body, _ = cls.st.request("GET", f"/api/v1/sessions/{sid}/ports", token=token or cls.alice)
        assert st == 200, (st, body)
        return body

    @classmethod
    def wait_listening(cls, sid, want, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if want <= {p["port"] for p in cls.ports(sid)["ports"]}:
                return
            time.sleep(0.1)
        raise AssertionError(f"ports {want} never listened: {cls.ports(sid)}")

    @classmethod
    def mint(cls, sid, port, kind="token", token=None, ttl=None):
        st, body, _ = cls.st.request("POST", f"/api/v1/sessions/{sid}/ports/{port}/{kind}",
                                     {"ttl": ttl} if ttl else None, token=token or cls.alice)
        assert st == 200, (st, body)
        return body

    def get(self, path, host=None, headers=None, method="GET", body=None, stream=False):
        """One request through nginx (host: a P-S.localhost name). (status, headers, body or
        the response object when stream)."""
        c = http.client.HTTPConnection("127.0.0.1", self.st.http_port, timeout=120)
        h = dict(headers or {})
        h["Host"] = f"{host}:{self.st.http_port}" if host else f"127.0.0.1:{self.st.http_port}"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        if stream:
            return r.status, hdrs, r
        data = r.read()
        c.close()
        return r.status, hdrs, data

    def path(self, port, rest="/", token=None):
        return f"/preview/{self.sid}/{port}/~{token or (self.tok8000 if port == 8000 else self.tok8001)}{rest}"

    def host(self, port, sid=None):
        return f"{port}-{sid or self.sid}.localhost"

    # ---- reachable ----

    def test_http_server_serves_100_mb_byte_for_byte(self):
        st, hdrs, r = self.get(self.path(8000, "/big.bin"), stream=True)
        self.assertEqual(st, 200)
        self.assertEqual(int(hdrs["content-length"]), BIG)
        h, n = hashlib.sha256(), 0
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
        self.assertEqual((n, h.hexdigest()), (BIG, self.big_sha))

    def test_an_upload_reaches_the_app_whole(self):
        body = os.urandom(20 << 20)
        st, _, data = self.get(self.path(8001, "/upload"), method="POST", body=body,
                               headers={"Content-Type": "application/octet-stream"})
        self.assertEqual(st, 200, data[:300])
        self.assertEqual(json.loads(data), {"sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)})

    def test_a_server_sent_stream_arrives_as_it_is_made(self):
        st, hdrs, r = self.get(self.path(8001, "/events"), stream=True)
        self.assertEqual(st, 200)
        self.assertIn("text/event-stream", hdrs["content-type"])
        first = r.readline()
        t_first = time.monotonic()
        self.assertTrue(first.startswith(b"data: tick 0"), first)
        rest = r.read()
        r.close()
        self.assertGreater(time.monotonic() - t_first, 0.9, "the stream came all at once, not as made")
        self.assertEqual(rest.count(b"data: tick"), 4, rest)

    def test_a_websocket_echoes_through_the_path_and_the_host(self):
        for path, host in ((self.path(8001, "/ws"), "127.0.0.1"), (f"/ws?sp_token={self.tok8001}", None)):
            if host is None:  # the host form: a cookie first, as a browser gets it
                st, hdrs, _ = self.get(f"/?sp_token={self.tok8001}", host=self.host(8001))
                self.assertEqual(st, 302)
                cookie = hdrs["set-cookie"].split(";")[0]
                ws = WS("127.0.0.1", self.st.http_port, "/ws", host_header=f"{self.host(8001)}:{self.st.http_port}",
                        headers={"Cookie": cookie})
            else:
                ws = WS("127.0.0.1", self.st.http_port, path)
            ws.send_frame(1, b"hello preview")
            self.assertEqual(ws.recv(), (1, b"hello preview"))
            big = os.urandom(300 * 1024)
            ws.send_binary(big)
            self.assertEqual(ws.recv(timeout=30), (2, big))
            ws.sock.close()

    def test_the_host_form_keeps_absolute_paths_and_strips_sandpipe_credentials(self):
        st, hdrs, _ = self.get(f"/headers?a=1&sp_token={self.tok8001}&b=2", host=self.host(8001))
        self.assertEqual(st, 302)
        self.assertEqual(hdrs["location"], "/headers?a=1&b=2")
        cookie = hdrs["set-cookie"]
        self.assertIn("HttpOnly", cookie)
        self.assertIn("SameSite=Lax", cookie)
        st, _, data = self.get("/headers?a=1&b=2", host=self.host(8001),
                               headers={"Cookie": "theirs=1; " + cookie.split(";")[0] + "; more=2"})
        self.assertEqual(st, 200, data[:300])
        got = json.loads(data)
        self.assertEqual(got["line"], "GET /headers?a=1&b=2 HTTP/1.1")
        sent = {k.lower(): v for k, v in got["headers"].items()}
        self.assertEqual(sent["cookie"], "theirs=1; more=2")
        self.assertFalse([k for k in sent if k.startswith("x-sp-")], sent)
        self.assertEqual(sent["host"], f"{self.host(8001)}:{self.st.http_port}")

    def test_the_path_form_strips_its_prefix_and_says_it(self):
        st, hdrs, data = self.get(self.path(8001, "/headers?q=%0Aline"))
        self.assertEqual(st, 200, data[:300])
        got = json.loads(data)
        self.assertEqual(got["line"], "GET /headers?q=%0Aline HTTP/1.1")
        sent = {k.lower(): v for k, v in got["headers"].items()}
        self.assertEqual(sent["x-forwarded-prefix"], f"/preview/{self.sid}/8001/~{self.tok8001}")
        # the app's page runs sandboxed (an opaque origin): it cannot reach the IDE's origin
        self.assertIn("sandbox allow-scripts", hdrs["content-security-policy"])
        self.assertNotIn("allow-same-origin", hdrs["content-security-policy"])

    def test_the_port_without_its_slash_is_redirected(self):
        st, hdrs, _ = self.get(f"/preview/{self.sid}/8000/~{self.tok8000}")
        self.assertEqual(st, 308)
        self.assertEqual(hdrs["location"], f"/preview/{self.sid}/8000/~{self.tok8000}/")

    # ---- who may open it ----

    def assertPage(self, got, status, *words):
        st, hdrs, data = got
        self.assertEqual(st, status, data[:400])
        self.assertIn("text/html", hdrs["content-type"])
        text = data.decode()
        for w in words:
            self.assertIn(w, text)

    def test_refusals_say_why(self):
        other = self.st.api_create_session(self.alice)
        try:
            foreign = self.mint(other, 8000)["token"]
            self.assertPage(self.get(f"/preview/{self.sid}/8000/"), 401, "no preview credential")
            self.assertPage(self.get(self.path(8000, "/", token=foreign)), 403,
                            f"not one of session {self.sid}")
            self.assertPage(self.get(self.path(8000, "/", token=self.tok8001)), 403,
                            f"for port 8001 of session {self.sid}, not port 8000")
            short = self.mint(self.sid, 8000, ttl=1)["token"]
            time.sleep(2.1)
            self.assertPage(self.get(self.path(8000, "/", token=short)), 403, "expired at")
            altered = self.tok8000[:-1] + ("A" if self.tok8000[-1] != "A" else "B")
            self.assertPage(self.get(self.path(8000, "/", token=altered)), 403, "not one of session")
            # the host form too, with a cookie of another port's token
            st, hdrs, _ = self.get(f"/?sp_token={self.tok8001}", host=self.host(8001))
            cookie = hdrs["set-cookie"].split(";")[0]
            self.assertPage(self.get("/", host=self.host(8000), headers={"Cookie": cookie}), 403,
                            "for port 8001")
        finally:
            self.st.request("DELETE", f"/api/v1/sessions/{other}", token=self.alice)

    def test_who_may_mint(self):
        viewer = self.st.token(sub="carol", role="viewer", session=self.sid)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{self.sid}/ports/8000/token", token=viewer)
        self.assertEqual(st, 403, body)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{self.sid}/ports/8000/token", token=self.bob)
        self.assertEqual(st, 404, body)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{self.sid}/ports/8000/token",
                                      {"ttl": 0}, token=self.alice)
        self.assertEqual(st, 400, body)
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{self.sid}/ports/70000/token", token=self.alice)
        self.assertEqual(st, 404, body)

    def test_a_one_time_link_opens_once_and_leaves_a_credential(self):
        link = self.mint(self.sid, 8001, kind="link")
        self.assertNotIn("token", link)
        st, hdrs, _ = self.get(link["path_url"])
        self.assertEqual(st, 302)
        loc = hdrs["location"]
        self.assertTrue(loc.startswith(f"/preview/{self.sid}/8001/~o0."), loc)
        st, _, data = self.get(loc + "headers")
        self.assertEqual(st, 200, data[:300])
        # the owner's credential opens every port of the session
        st, _, _ = self.get(loc.replace("/8001/", "/8000/") + "big.bin", method="HEAD")
        self.assertEqual(st, 200)
        self.assertPage(self.get(link["path_url"]), 403, "already opened")
        host = self.mint(self.sid, 8001, kind="link")["host_url"]
        self.assertTrue(host.startswith(f"http://{self.host(8001)}:{self.st.http_port}/?sp_token=1"), host)

    def test_a_public_port_needs_no_credential(self):
        st, body, _ = self.st.request("PUT", f"/api/v1/sessions/{self.sid}/ports/8000", {"public": True},
                                      token=self.alice)
        self.assertEqual((st, body["public"]), (200, True), body)
        try:
            st, _, _ = self.get(f"/preview/{self.sid}/8000/", method="HEAD")
            self.assertEqual(st, 200)
            self.assertTrue([p for p in self.ports(self.sid)["ports"] if p["port"] == 8000 and p["public"]])
        finally:
            self.st.request("PUT", f"/api/v1/sessions/{self.sid}/ports/8000", {"public": False}, token=self.alice)
        self.assertPage(self.get(f"/preview/{self.sid}/8000/"), 401, "no preview credential")

    # ---- discovery ----

    def test_ports_and_their_events(self):
        listed = {p["port"]: p for p in self.ports(self.sid)["ports"]}
        self.assertIn("http.server", listed[8000].get("command", ""))
        self.assertEqual(listed[8000]["path_url"], f"/preview/{self.sid}/8000/")
        self.assertEqual(listed[8000]["host_url"], f"http://{self.host(8000)}:{self.st.http_port}/")
        self.sh(self.sid, "(nohup python3 -m http.server 8123 >/dev/null 2>&1 &); sleep 0.2")
        self.assertEqual(self.port_events(8123, "open"), [(8123, "open")])
        self.sh(self.sid, "pkill -f 'http.server 8123'; true")
        self.assertEqual(self.port_events(8123, "closed"), [(8123, "open"), (8123, "closed")])

    def port_events(self, port, until):
        """The session's port events of port, once one says until (the executor looks every
        second: a server must live that long to be seen)."""
        deadline, seen = time.monotonic() + 20, []
        while time.monotonic() < deadline:
            st, evs, _ = self.st.request("GET", f"/api/v1/sessions/{self.sid}/events?type=port",
                                         token=self.alice)
            seen = [(e["port"], e["state"]) for e in evs["events"] if e.get("port") == port]
            if (port, until) in seen:
                break
            time.sleep(0.2)
        return seen

    # ---- OpenHands ----

    def test_openhands_work_hosts_are_previews_the_user_opens(self):
        v0 = V0RemoteRuntime(self, self.st, self.st.token(sub=f"oh-{uuid.uuid4().hex[:6]}"), uuid.uuid4().hex)
        v0.connect()
        self.addCleanup(v0.close)
        hosts = v0.available_hosts
        self.assertEqual(sorted(hosts.values()), [12000, 12001], hosts)
        st, obs = v0.execute("mkdir -p /tmp/site && echo from-12000 > /tmp/site/index.html && "
                             "(cd /tmp/site && nohup python3 -m http.server 12000 >/dev/null 2>&1 &) ; sleep 1")
        self.assertEqual(st, 200, obs)
        url = next(u for u, p in hosts.items() if p == 12000)
        u = urllib.parse.urlsplit(url)
        self.assertEqual(u.port, self.st.http_port)
        self.assertTrue(u.hostname.startswith("12000-s-") and u.hostname.endswith(".localhost"), url)
        st, hdrs, _ = self.get(f"{u.path}?{u.query}", host=u.hostname)
        self.assertEqual(st, 302)
        st, _, data = self.get(hdrs["location"], host=u.hostname,
                               headers={"Cookie": hdrs["set-cookie"].split(";")[0]})
        self.assertEqual((st, data), (200, b"from-12000\n"))

    # ---- faults ----

    def test_nothing_listening_is_a_page_that_says_so(self):
        tok = self.mint(self.sid, 8999)["token"]
        self.assertPage(self.get(f"/preview/{self.sid}/8999/~{tok}/"), 502,
                        f"Nothing listens on port 8999 in session {self.sid}")

    def test_a_paused_then_deleted_session_is_a_page(self):
        sid = self.st.api_create_session(self.alice)
        tok = self.mint(sid, 8000)["token"]
        st, body, _ = self.st.request("POST", f"/api/v1/sessions/{sid}/pause", token=self.alice)
        self.assertEqual(st, 200, body)
        self.assertPage(self.get(f"/preview/{sid}/8000/~{tok}/"), 409, "is paused")
        self.st.request("DELETE", f"/api/v1/sessions/{sid}", token=self.alice)
        self.assertPage(self.get(f"/preview/{sid}/8000/~{tok}/"), 404, "does not exist or has ended")


class BwrapPreviews(Previews, unittest.TestCase):
    PROVIDER = "bwrap"


if __name__ == "__main__":
    unittest.main()
