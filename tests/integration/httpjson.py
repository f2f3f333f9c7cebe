"""One JSON request over plain HTTP, for the tests that talk to a stack's nginx from outside
(compose, the Swarm stack, the three-node soak): the status and the parsed body (bytes when the
body is not JSON)."""
import http.client
import json


def http_json(host, port, method, path, body=None, token=None, timeout=60):
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        hdrs = {"Content-Type": "application/json"}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        c.request(method, path, json.dumps(body) if body is not None else None, hdrs)
        r = c.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data[:1] in (b"{", b"[") else data
    finally:
        c.close()
