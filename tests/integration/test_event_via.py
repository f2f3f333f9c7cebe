"""Action events say who sent them and by which route (docs/api.md, "Events"): "ws" for the
session WebSocket, "rest" for POST /api/v1/sessions/{id}/actions, "runtime" for the OpenHands
action server (/runtime/{id}/). The submitter sets it; a client cannot claim another route by
putting "via" in what it sends."""
import unittest

from apistack import ModuleStack
from stack import run_action

STACK = ModuleStack(pool=2)
setUpModule, tearDownModule = STACK.start, STACK.stop


class EventVia(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = STACK
        cls.tok = STACK.token(sub="carol", role="user")
        cls.sid = STACK.api_create_session(cls.tok)

    def actions(self):
        st, body, _ = self.s.request("GET", f"/api/v1/sessions/{self.sid}/events?type=action&limit=1000",
                                     token=self.tok)
        self.assertEqual(st, 200, body)
        return {e["action"]["args"]["command"]: e for e in body["events"]}

    def rest(self, body):
        st, r, _ = self.s.request("POST", f"/api/v1/sessions/{self.sid}/actions?wait=true", body, token=self.tok)
        self.assertEqual(st, 200, r)

    def test_each_route_is_recorded_by_its_submitter(self):
        ws = self.s.ws(f"/ws/sessions/{self.sid}", self.tok)
        _, out, _ = run_action(ws, "echo by-ws")
        self.assertEqual(out, "by-ws\n")
        ws.close()
        self.rest({"action": "run", "args": {"command": "echo by-rest"}})
        st, obs, _ = self.s.request(
            "POST", f"/runtime/{self.sid}/execute_action",
            {"action": {"action": "run", "args": {"command": "echo by-runtime", "is_input": False,
                                                  "blocking": False}, "timeout": 60}},
            headers={"X-Session-API-Key": self.tok})
        self.assertEqual(st, 200, obs)
        got = self.actions()
        self.assertEqual({c: (got[c]["origin"], got[c]["via"]) for c in ("echo by-ws", "echo by-rest", "echo by-runtime")},
                         {"echo by-ws": ("carol", "ws"), "echo by-rest": ("carol", "rest"),
                          "echo by-runtime": ("carol", "runtime")})

    def test_a_client_cannot_claim_a_route(self):
        # "via" beside the action, and inside it: the event still says rest (the action keeps
        # what the client put in it, as submitted)
        self.rest({"action": {"action": "run", "args": {"command": "echo claim-1"}, "via": "runtime"},
                   "via": "ws", "wait": True})
        self.rest({"action": "run", "args": {"command": "echo claim-2"}, "via": "runtime", "origin": "mallory"})
        ws = self.s.ws(f"/ws/sessions/{self.sid}", self.tok)
        ws.send_json({"type": "action", "id": 1, "via": "rest", "origin": "mallory",
                      "action": {"action": "run", "args": {"command": "echo claim-3"}}})
        self.assertEqual(ws.recv_json(timeout=30)["type"], "ack")
        ws.close()
        got = self.actions()
        self.assertEqual((got["echo claim-1"]["via"], got["echo claim-1"]["origin"]), ("rest", "carol"))
        self.assertEqual((got["echo claim-2"]["via"], got["echo claim-2"]["origin"]), ("rest", "carol"))
        self.assertEqual((got["echo claim-3"]["via"], got["echo claim-3"]["origin"]), ("ws", "carol"))


if __name__ == "__main__":
    unittest.main()
