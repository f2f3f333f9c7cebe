#!/usr/bin/env python3
"""Runs one command in a new sandpipe session over the WebSocket API and streams its output:
    scripts/ws-run.py TOKEN 'ls -la /workspace' [--url ws://127.0.0.1:8081] [--keep]
Exits with the command's exit code. (`make run` prints the token.)"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
from wsclient import WS  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("token")
ap.add_argument("command")
ap.add_argument("--url", default="ws://127.0.0.1:8081")
ap.add_argument("--keep", action="store_true", help="keep the session (print its id)")
a = ap.parse_args()
host, port = a.url.split("//", 1)[1].split(":")
ctl = WS(host, int(port), f"/ws/control?token={a.token}")
ctl.send_json({"id": 1, "method": "session.create", "params": {}})
r = ctl.recv_json(120)
if r.get("type") != "result":
    sys.exit(f"session.create failed: {r}")
sid = r["result"]["id"]
s = WS(host, int(port), f"/ws/sessions/{sid}?token={a.token}")
s.send_json({"type": "action", "id": 1, "action": {"action": "run", "args": {"command": a.command, "blocking": True}, "timeout": 600}})
code = 1
while True:
    m = s.recv_json(700)
    if m.get("type") == "output":
        sys.stdout.write(m.get("data", ""))
        sys.stdout.flush()
    elif m.get("type") == "observation":
        code = m["observation"].get("extras", {}).get("metadata", {}).get("exit_code", 1)
        break
    elif m.get("type") == "error":
        sys.exit(f"error: {m['error']}")
if a.keep:
    print(f"session: {sid}", file=sys.stderr)
else:
    ctl.send_json({"id": 2, "method": "session.delete", "params": {"session": sid}})
    ctl.recv_json(30)
sys.exit(code if 0 <= code < 256 else 1)
