"""Takeover after kill -9 (issue 21): three gateways on one host (tests/integration/multigw.py,
the build in $MODE, bwrap sandboxes). A session prints numbered lines; its gateway is killed with
SIGKILL; measured from the kill to (a) the route rewritten (the session's `gateway` field names a
live peer) and (b) the first output event the new owner stored. The peer in the same run: the
same kill -9 followed by a restart of that gateway under its id (the restart path
session_restore.c had before), kill to its first stored output event."""
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from multigw import MultiStack  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_TAKEOVER_ROUNDS", "10"))
LOOP = "i=0; while true; do i=$((i+1)); echo L$i; sleep 0.01; done"


def top(r, sid):
    x = r("XREVRANGE", f"sp:session:{{{sid}}}:events", "+", "-", "COUNT", "1")
    return int(re.match(rb"0-(\d+)", x[0][0]).group(1)) if x else 0


def output_after(r, sid, seq):
    """An output event stored after seq (the new owner is streaming)?"""
    for _, fields in r("XRANGE", f"sp:session:{{{sid}}}:events", f"0-{seq + 1}", "+", "COUNT", "50"):
        if b'"type":"output"' in fields[1]:
            return True
    return False


def wait(pred, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return time.monotonic()
        time.sleep(0.002)
    raise RuntimeError("timed out")


def start_loop(ms, sid):
    i = ms.index(ms.owner(sid))
    ws = ms.ws_to(i, f"/ws/sessions/{sid}")
    ws.send_json({"type": "action", "id": "l", "action": {"action": "run", "args": {"command": LOOP}}})
    while ws.recv_json(60).get("type") != "ack":
        pass
    ws.close()


def takeovers(rounds):
    ms = MultiStack(n=3, pool=1)
    r = ms.redis_conn()
    route, first_out = [], []
    try:
        sid = ms.create_on(0)
        start_loop(ms, sid)
        for _ in range(rounds):
            victim = ms.index(ms.owner(sid))
            wait(lambda: output_after(r, sid, top(r, sid) - 5))
            seq = top(r, sid)
            t0 = ms.kill(victim)
            t_route = wait(lambda: r("HGET", f"sp:session:{{{sid}}}", "gateway") not in
                           (None, f"gw-{victim}".encode()))
            t_out = wait(lambda: output_after(r, sid, seq))
            route.append(t_route - t0)
            first_out.append(t_out - t0)
            ms.start(victim)
    finally:
        r.close()
        ms.stop()
    return route, first_out


def restarts(rounds):
    """The peer: one gateway alone (nobody to take over), killed and started again at once."""
    ms = MultiStack(n=1, pool=1)
    r = ms.redis_conn()
    out = []
    try:
        sid = ms.create_on(0)
        start_loop(ms, sid)
        for _ in range(rounds):
            wait(lambda: output_after(r, sid, top(r, sid) - 5))
            seq = top(r, sid)
            t0 = ms.kill(0)
            ms.start(0, wait=False)
            out.append(wait(lambda: output_after(r, sid, seq)) - t0)
    finally:
        r.close()
        ms.stop()
    return out


def terminal_takeovers(rounds):
    """A terminal printing lines through the same kills: from the kill to the first byte a client
    reconnecting to the new owner with term=ID&since=N receives (the executor kept the shell,
    the new owner took the terminal back)."""
    from wsclient import BINARY, HandshakeError
    ms = MultiStack(n=3, pool=1)
    out = []
    try:
        sid = ms.create_on(0)
        ws = ms.ws_to(ms.index(ms.owner(sid)), f"/ws/sessions/{sid}/terminal?cols=80&rows=24")
        tid = ws.recv_json(30)["term"]
        ws.send_binary((LOOP + "\n").encode())
        off = 0
        for _ in range(rounds):
            got = 0
            while got < 200:  # the loop is printing
                op, d = ws.recv(30)
                if op == BINARY:
                    got += len(d)
                    off += len(d)
            victim = ms.index(ms.owner(sid))
            t0 = ms.kill(victim)
            ws.sock.close()
            wait(lambda: ms.owner(sid) not in ("", f"gw-{victim}"))
            new = ms.index(ms.owner(sid))
            deadline = time.monotonic() + 60
            while True:
                try:
                    ws = ms.ws_to(new, f"/ws/sessions/{sid}/terminal?term={tid}&since={off}")
                    ws.recv_json(30)
                    break
                except (HandshakeError, OSError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.002)
            while True:
                op, d = ws.recv(30)
                if op == BINARY:
                    out.append(time.monotonic() - t0)
                    off += len(d)
                    break
            ms.start(victim)
    finally:
        ms.stop()
    return out


def main():
    route, first_out = takeovers(ROUNDS)
    restart = restarts(ROUNDS)
    term = terminal_takeovers(ROUNDS)
    med = statistics.median
    print(f"takeover after kill -9 ({ROUNDS} rounds, 3 gateways, a session printing lines): "
          f"route rewritten median {med(route) * 1e3:.0f} ms (max {max(route) * 1e3:.0f}); "
          f"first output from the new owner median {med(first_out) * 1e3:.0f} ms "
          f"(max {max(first_out) * 1e3:.0f})")
    print(f"peer, same run: kill -9 of a lone gateway restarted at once under its id, first "
          f"output median {med(restart) * 1e3:.0f} ms (max {max(restart) * 1e3:.0f}); "
          f"takeover/restart {med(first_out) / med(restart):.2f}x")
    print(f"a terminal through the same kills: kill to the first byte a client reconnecting with "
          f"term=ID&since=N gets from the new owner median {med(term) * 1e3:.0f} ms "
          f"(max {max(term) * 1e3:.0f}); terminal/action {med(term) / med(first_out):.2f}x")


if __name__ == "__main__":
    main()
