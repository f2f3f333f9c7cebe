// E2B's SDK as a deployment with TLS and a wildcard domain runs it: only E2B_API_URL and the
// key set, no E2B_SANDBOX_URL, so envd is https://49983-<id>.<domain> (the domain create
// answers) and a port is https://getHost(port). tests/integration/test_e2b.py serves the stack
// over TLS with preview domain sp.localhost and preloads localhost_dns.mjs (*.localhost →
// 127.0.0.1, the wildcard record); NODE_EXTRA_CA_CERTS trusts its certificate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from 'e2b';

const PORT = new URL(process.env.E2B_API_URL).port;

test('envd through 49983-<id>.<domain>: commands, files, a PTY; getHost with the trafficAccessToken', async () => {
  assert.equal(process.env.E2B_SANDBOX_URL, undefined);
  const sbx = await Sandbox.create();
  try {
    assert.equal(sbx.sandboxDomain, `sp.localhost:${PORT}`);
    const r = await sbx.commands.run('echo "hi from $(id -un)"; echo oops >&2');
    assert.equal(r.exitCode, 0);
    assert.match(r.stdout, /^hi from \S+\n$/);
    assert.equal(r.stderr, 'oops\n');
    await sbx.files.write('/tmp/www/index.html', '<p>served</p>\n');
    assert.equal(await sbx.files.read('/tmp/www/index.html'), '<p>served</p>\n');
    assert.ok((await sbx.files.list('/tmp/www')).some((e) => e.name === 'index.html'));
    assert.equal(await sbx.isRunning(), true);
    let out = '';
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += new TextDecoder().decode(d); } });
    await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo pty-$((6*7))\nexit\n'));
    await pty.wait();
    assert.match(out, /pty-42/);

    await sbx.commands.run('cd /tmp/www && exec python3 -m http.server 8000 --bind 127.0.0.1', { background: true });
    const url = `https://${sbx.getHost(8000)}/index.html`;
    let res;
    for (let i = 0; i < 100; i++) {
      res = await fetch(url, { headers: { 'e2b-traffic-access-token': sbx.trafficAccessToken } });
      if (res.status === 200) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '<p>served</p>\n');
    assert.equal((await fetch(url)).status, 401);

    // the envd host serves envd's routes only: not a preview of port 49983, not the API
    const other = await fetch(`https://49983-${sbx.sandboxId}.sp.localhost:${PORT}/api/v1/sessions`);
    assert.equal(other.status, 404);
    assert.match((await other.json()).message, /not an envd route/);
  } finally {
    await sbx.kill();
  }
  assert.equal(await sbx.isRunning(), false);
});
