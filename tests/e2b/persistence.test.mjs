// The real npm e2b SDK against E2B's sandbox persistence on sandpipe (api/e2b/sandboxes.c,
// gateway/session_lifecycle.c): lifecycle onTimeout 'pause' (the sandbox is paused at its
// timeout, its processes and files kept, until connect() resumes it) and autoResume (the SDK's
// next call, or a request to getHost(port), resumes it, for max(5 min, its timeout)); the v1
// resume's autoPause; what is refused. tests/integration/test_e2b.py runs this with
// E2B_API_URL=<origin>/e2b, E2B_SANDBOX_URL=<origin> and a user token as E2B_API_KEY.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from 'e2b';
import { eventually, session, viaHost } from './helpers.mjs';

const SP_URL = process.env.SP_URL;
const E2B_URL = process.env.E2B_API_URL;
const KEY = process.env.E2B_API_KEY;
const TOKEN = process.env.SP_USER_TOKEN;

async function post(url, headers, body) {
  const res = await fetch(url, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// Until the gateway has paused the sandbox at its timeout (it looks once a second).
const pausedAtTimeout = (sbx) => eventually(async () => (await sbx.getInfo()).state === 'paused',
  `${sbx.sandboxId} paused at its timeout`, 30_000);

test('onTimeout pause: paused at its timeout with its processes and files; calls refused; connect resumes it', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 3_000, lifecycle: { onTimeout: 'pause' } });
  try {
    assert.deepEqual((await sbx.getInfo()).lifecycle, { onTimeout: 'pause', autoResume: false });
    await sbx.files.write('/tmp/kept.txt', 'kept across the pause\n');
    const sleeper = await sbx.commands.run('sleep 600', { background: true });
    await pausedAtTimeout(sbx);
    const s = await session(sbx.sandboxId);
    assert.deepEqual([s.status, s.lifetime_action, s.auto_resume, s.max_lifetime], ['PAUSED', 'pause', 0, 0],
      'paused, with no end while paused');
    await assert.rejects(sbx.files.read('/tmp/kept.txt'), /paused: connect to it/,
      'without autoResume a call does not resume it');
    assert.equal((await sbx.getInfo()).state, 'paused');
    const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 60_000 });
    assert.equal((await again.getInfo()).state, 'running');
    assert.equal(await again.files.read('/tmp/kept.txt'), 'kept across the pause\n');
    const pids = (await again.commands.list()).map((p) => p.pid);
    assert.ok(pids.includes(sleeper.pid), `the process started before the pause runs on: ${pids}`);
  } finally {
    await sbx.kill();
  }
});

test('autoResume: the next SDK call resumes it for max(5 min, its timeout); so does traffic to getHost', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 2_000, lifecycle: { onTimeout: 'pause', autoResume: true } });
  try {
    assert.deepEqual((await sbx.getInfo()).lifecycle, { onTimeout: 'pause', autoResume: true });
    await sbx.files.write('/tmp/www/hello.txt', 'hello after a pause\n');
    const server = await sbx.commands.run('cd /tmp/www && exec python3 -m http.server 8000 --bind 127.0.0.1',
      { background: true });
    const host = sbx.getHost(8000);
    const headers = { 'e2b-traffic-access-token': sbx.trafficAccessToken };
    await eventually(async () => (await viaHost(host, '/hello.txt', headers)).status === 200, 'the server up');
    await pausedAtTimeout(sbx);

    const asked = Date.now();
    assert.equal(await sbx.files.read('/tmp/www/hello.txt'), 'hello after a pause\n', 'read resumes it');
    const info = await sbx.getInfo();
    assert.equal(info.state, 'running');
    const fromAsk = (info.endAt.getTime() - asked) / 1000;
    assert.ok(fromAsk >= 299 && fromAsk <= 305, `endAt ${info.endAt} is ${fromAsk} s after the read (5 min)`);
    assert.equal((await session(sbx.sandboxId)).status, 'READY');

    assert.equal(await sbx.pause(), true);
    const r = await viaHost(host, '/hello.txt', headers);
    assert.deepEqual([r.status, r.body], [200, 'hello after a pause\n'], 'a request to getHost resumes it');
    assert.equal((await sbx.getInfo()).state, 'running');
    const pids = (await sbx.commands.list()).map((p) => p.pid);
    assert.ok(pids.includes(server.pid), 'the server kept running through both pauses');
    assert.equal((await viaHost(host, '/hello.txt')).status, 401, 'a request without the token resumes nothing it may not see');
  } finally {
    await sbx.kill();
  }
});

test('a paused sandbox without the token is not resumed by a stranger; a longer timeout carries over', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 600_000, lifecycle: { onTimeout: 'pause', autoResume: true } });
  try {
    assert.equal(await sbx.pause(), true);
    const host = sbx.getHost(8000);
    assert.equal((await viaHost(host, '/')).status, 401);
    assert.equal((await sbx.getInfo()).state, 'paused', 'a refused request does not resume it');
    const asked = Date.now();
    assert.equal((await sbx.commands.run('echo back')).stdout, 'back\n');
    const fromAsk = ((await sbx.getInfo()).endAt.getTime() - asked) / 1000;
    assert.ok(fromAsk >= 599 && fromAsk <= 605, `endAt is ${fromAsk} s after the run: its own 10 min`);
  } finally {
    await sbx.kill();
  }
});

test('the v1 resume with autoPause pauses the resumed sandbox at its timeout; refusals name why', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 60_000 });
  try {
    assert.deepEqual((await sbx.getInfo()).lifecycle, { onTimeout: 'kill', autoResume: false });
    assert.equal(await sbx.pause(), true);
    const resumed = await post(`${E2B_URL}/sandboxes/${sbx.sandboxId}/resume`, { 'X-API-Key': KEY },
      { timeout: 2, autoPause: true });
    assert.equal(resumed.status, 201);
    assert.equal((await session(sbx.sandboxId)).lifetime_action, 'pause');
    await pausedAtTimeout(sbx);
    assert.equal((await session(sbx.sandboxId)).status, 'PAUSED', 'paused at the end, not killed');
  } finally {
    await sbx.kill();
  }
  // what the SDK checks itself, refused by the API too (another client may send it)
  const bad = await post(`${E2B_URL}/v2/sandboxes`, { 'X-API-Key': KEY }, { templateID: 'base', autoResume: { enabled: true } });
  assert.deepEqual([bad.status, bad.body.message], [400, "autoResume can only be enabled when onTimeout is 'pause'"]);
  const sp = await post(`${SP_URL}/api/v1/sessions`, { Authorization: `Bearer ${TOKEN}` }, { lifetime_action: 'sleep' });
  assert.equal(sp.status, 400);
  assert.match(JSON.stringify(sp.body), /lifetime_action must be \\"stop\\" or \\"pause\\"/);
});
