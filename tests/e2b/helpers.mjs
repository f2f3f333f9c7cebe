// What several of the SDK's test files share: a sandbox's session, waiting (bounded) and
// reaching a sandbox's port the way getHost names it.
import http from 'node:http';
import assert from 'node:assert/strict';

const SP_URL = process.env.SP_URL;

// The sandpipe session behind sandbox id, from sandpipe's own REST API (the user's token).
export async function session(id) {
  const res = await fetch(`${SP_URL}/api/v1/sessions/${encodeURIComponent(id)}`, {
    headers: { Authorization: `Bearer ${process.env.SP_USER_TOKEN}` },
  });
  assert.equal(res.status, 200, `GET /api/v1/sessions/${id}: ${res.status}`);
  return res.json();
}

// Resolves once check() returns a value, trying again while it does not (bounded, no timing
// assertion: only how long to keep looking).
export async function eventually(check, what, ms = 20_000) {
  const t0 = Date.now();
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// GET of path on the host the SDK names (getHost: "<port>-<id>.<domain>", the stack's preview
// host names), sent to the stack's nginx on loopback with that Host (*.localhost does not
// resolve here); headers added as given.
export function viaHost(host, path, headers = {}) {
  const origin = new URL(SP_URL);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: origin.hostname, port: origin.port, path, headers: { Host: host, ...headers },
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
