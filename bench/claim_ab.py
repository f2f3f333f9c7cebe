"""A/B of warm claims (issue 35): Redis and one gateway per binary given (the same Redis, each its
own state directory, --pool 2, bwrap sandboxes, this tree's executor), warm claims alternating
between them, 0.5 s apart. usage: bench/claim_ab.py ROUNDS GATEWAY_BINARY...
Prints per gateway the claim (session.create sent on an open /ws/control to its READY answer) and
claim -> first command (a /ws/sessions/{id} opened and `true` run): p10, p25, median, min.
STRACE=1 also writes `strace -f -tt` of the first gateway around three claims to claim-strace.txt
in the current directory."""
import os
import statistics
import subprocess
import sys
import time

from ab_stack import AbStack

from wsclient import WS, jwt  # noqa: E402 (ab_stack put tests/integration on the path)


def claim_once(port, token):
    """(ms to READY, ms to the first command's observation)"""
    c = WS("127.0.0.1", port, f"/ws/control?token={token}")
    t1 = time.perf_counter()
    c.send_json({"id": 1, "method": "session.create", "params": {}})
    r = c.recv_json(60)
    t2 = time.perf_counter()
    sid = r["result"]["id"]
    s = WS("127.0.0.1", port, f"/ws/sessions/{sid}?token={token}")
    s.send_json({"type": "action", "id": 1,
                 "action": {"action": "run", "args": {"command": "true", "blocking": True}, "timeout": 60}})
    while s.recv_json(60).get("type") != "observation":
        pass
    t3 = time.perf_counter()
    s.close()
    c.send_json({"id": 2, "method": "session.delete", "params": {"session": sid}})
    c.recv_json(30)
    c.close()
    return (t2 - t1) * 1000, (t3 - t1) * 1000


def main():
    rounds, bins = int(sys.argv[1]), sys.argv[2:]
    st = AbStack("sp-claim-ab-")
    try:
        ports = [st.gateway(b, f"gw-ab{i}", 2) for i, b in enumerate(bins)]
        time.sleep(3)  # the pools fill
        token = jwt(st.secret, sub="bench", role="admin")
        if os.environ.get("STRACE"):
            tr = subprocess.Popen(["strace", "-f", "-tt", "-o", "claim-strace.txt", "-p", str(st.procs[1].pid)])
            time.sleep(1)
            for _ in range(3):
                time.sleep(0.7)
                claim_once(ports[0], token)
            tr.terminate()
            tr.wait()
        res = [([], []) for _ in bins]
        for _ in range(rounds):
            for i, p in enumerate(ports):
                time.sleep(0.5)  # its pool refills 100 ms after a claim
                a, b = claim_once(p, token)
                res[i][0].append(a)
                res[i][1].append(b)

        def q(xs, f):
            return sorted(xs)[int(len(xs) * f)]
        for b, (cl, cm) in zip(bins, res):
            print(f"{b}: n={len(cl)} claim p10 {q(cl, .1):.2f} p25 {q(cl, .25):.2f} median "
                  f"{statistics.median(cl):.2f} ms (min {min(cl):.2f}); claim->first command p10 {q(cm, .1):.2f} "
                  f"p25 {q(cm, .25):.2f} median {statistics.median(cm):.2f} (min {min(cm):.2f})")
    finally:
        st.stop()


main()
