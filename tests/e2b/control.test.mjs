// The real npm e2b SDK against E2B's control API beyond the lifecycle (api/e2b/): the network
// rules at create and updateNetwork on a real sandpipe-netd, metrics from the sandbox's cgroup,
// templates (runtime images) and Template.build's refusal, the sandbox log from its session's
// events, refreshes and the v1 resume, snapshots and fork refused. tests/integration/
// test_e2b.py starts the stack (with netd, users limited to allow-lists) and runs this with
// E2B_API_URL=<origin>/e2b, E2B_SANDBOX_URL=<origin> and a user token as E2B_API_KEY.
// Nothing leaves the machine: the only destinations tried are TEST-NET addresses a sandbox is
// refused (netd answers for them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Sandbox, SandboxError, SandboxNotFoundError, Template, BuildError,
} from 'e2b';
import { eventually, viaHost } from './helpers.mjs';

const SP_URL = process.env.SP_URL;
const E2B_URL = process.env.E2B_API_URL;
const KEY = process.env.E2B_API_KEY;
const ADMIN = process.env.SP_ADMIN_TOKEN;
const ALL = '0.0.0.0/0';

async function rest(path, token = process.env.SP_USER_TOKEN) {
  const res = await fetch(`${SP_URL}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, `GET ${path}: ${res.status}`);
  return res.json();
}
const session = (id) => rest(`/api/v1/sessions/${encodeURIComponent(id)}`);
const network = (id) => rest(`/api/v1/sessions/${encodeURIComponent(id)}/network`);

// E2B's control API by hand, for the routes the SDK 2.51.0 never calls.
async function e2b(method, path, body, key = KEY) {
  const res = await fetch(`${E2B_URL}${path}`, {
    method,
    headers: { 'X-API-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// The interfaces the sandbox has besides lo (what /proc/net/dev lists).
async function links(sbx) {
  const r = await sbx.commands.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | grep -vx lo || true");
  return r.stdout.split('\n').filter(Boolean);
}

// Tries a TCP connection from the sandbox to a TEST-NET address (refused by netd: it never
// leaves the machine).
async function tryConnect(sbx, addr) {
  await sbx.commands.run(`(exec 3<>/dev/tcp/${addr}/80) 2>/dev/null; true`, { timeoutMs: 30_000 });
}

test('allowInternetAccess false: network mode none, lo only, getInfo says so', async () => {
  const sbx = await Sandbox.create({ allowInternetAccess: false });
  try {
    assert.deepEqual((await session(sbx.sandboxId)).network, { mode: 'none' });
    const info = await sbx.getInfo();
    assert.equal(info.allowInternetAccess, false);
    assert.deepEqual(info.network.denyOut, [ALL]);
    assert.deepEqual(info.network.allowOut, []);
    assert.deepEqual(await links(sbx), []);
  } finally {
    await sbx.kill();
  }
});

test('allowOut with denyOut 0.0.0.0/0: an allow-list netd enforces, its refusals in the log', async () => {
  const sbx = await Sandbox.create({
    network: { allowOut: ['198.51.100.0/24', 'pypi.org'], denyOut: [ALL, '198.51.100.9'] },
  });
  try {
    assert.deepEqual((await session(sbx.sandboxId)).network,
      { mode: 'allowlist', allow: ['198.51.100.0/24', 'pypi.org'], deny: ['198.51.100.9/32'] });
    const info = await sbx.getInfo();
    assert.equal(info.allowInternetAccess, false);
    assert.deepEqual(info.network.allowOut, ['198.51.100.0/24', 'pypi.org']);
    assert.deepEqual(info.network.denyOut, [ALL, '198.51.100.9/32'], 'as sandpipe normalised it');
    assert.equal((await links(sbx)).length, 1, 'a link of its own');
    await tryConnect(sbx, '203.0.113.7');
    const refusal = await eventually(async () => (await network(sbx.sandboxId)).refusals
      .find((x) => x.dest === '203.0.113.7:80'), 'the refusal in netd\'s log');
    assert.match(refusal.rule, /not in the allow-list/);
    const logs = await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs?level=warn`);
    assert.equal(logs.status, 200);
    const entry = await eventually(async () => (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs?level=warn`))
      .body.logs.find((l) => l.fields.dest === '203.0.113.7:80'), 'the refusal in the sandbox log');
    assert.equal(entry.level, 'warn');
    assert.equal(entry.fields.logger, 'network');
    assert.match(entry.message, /^Network refused: tcp 203\.0\.113\.7:80 \(not in the allow-list/);
  } finally {
    await sbx.kill();
  }
});

test('denyOut without 0.0.0.0/0 is egress less it; true is egress; both wider than a user may', async () => {
  // this stack lets users ask for allow-lists at most (--network-roles user=allowlist)
  const widest = (e) => e instanceof SandboxError && /403: .*user may ask for network modes up to "allowlist"/.test(e.message);
  await assert.rejects(Sandbox.create({ allowInternetAccess: true }), widest);
  await assert.rejects(Sandbox.create({ network: { denyOut: ['203.0.113.0/24'] } }), widest);
  const admin = { apiKey: ADMIN };
  const a = await Sandbox.create({ ...admin, network: { denyOut: ['203.0.113.0/24'] } });
  const b = await Sandbox.create({ ...admin, allowInternetAccess: true });
  try {
    assert.deepEqual((await rest(`/api/v1/sessions/${a.sandboxId}`, ADMIN)).network,
      { mode: 'egress', deny: ['203.0.113.0/24'] });
    const ia = await a.getInfo();
    assert.equal(ia.allowInternetAccess, true);
    assert.deepEqual(ia.network, { ...ia.network, allowOut: [], denyOut: ['203.0.113.0/24'] });
    assert.deepEqual((await rest(`/api/v1/sessions/${b.sandboxId}`, ADMIN)).network, { mode: 'egress' });
    assert.equal((await b.getInfo()).allowInternetAccess, true);
  } finally {
    await a.kill();
    await b.kill();
  }
});

test('the v1 create, as the Python SDK and older JS send it (allow_internet_access: true always): the operator\'s default, not a request for egress', async () => {
  const r = await e2b('POST', '/sandboxes', {
    templateID: 'base', timeout: 60, secure: true, allow_internet_access: true, metadata: {}, envVars: {},
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  try {
    assert.equal((await session(r.body.sandboxID)).network.mode, 'none', 'this stack\'s default');
    const v2 = await e2b('POST', '/v2/sandboxes', { templateID: 'base', allow_internet_access: true });
    assert.equal(v2.status, 403, 'on v2, sent only when asked, true is egress: wider than a user may');
  } finally {
    await e2b('DELETE', `/sandboxes/${r.body.sandboxID}`);
  }
});

test('network refusals: a malformed entry in sandpipe\'s words, rules and egressProxy not served', async () => {
  await assert.rejects(Sandbox.create({ network: { allowOut: ['::1'] } }),
    (e) => e instanceof SandboxError && /^400: .*IPv6/.test(e.message));
  await assert.rejects(Sandbox.create({ network: { allowOut: ['example.com'], rules: { 'example.com': [{ transform: { headers: { A: 'b' } } }] } } }),
    (e) => e instanceof SandboxError && /^501: network rules .* not supported by sandpipe/.test(e.message));
  await assert.rejects(Sandbox.create({ network: { egressProxy: { address: 'proxy.example.com:1080' } } }),
    (e) => e instanceof SandboxError && /^501: network egressProxy is not supported/.test(e.message));
});

test('updateNetwork: none to an allow-list in place, then back to none', async () => {
  const sbx = await Sandbox.create({ allowInternetAccess: false });
  try {
    assert.equal((await network(sbx.sandboxId)).attached, false);
    await sbx.updateNetwork({ allowOut: ['198.51.100.0/24'], denyOut: [ALL] });
    let net = await network(sbx.sandboxId);
    assert.deepEqual(net.policy, { mode: 'allowlist', allow: ['198.51.100.0/24'] });
    assert.equal(net.attached, true);
    assert.equal((await links(sbx)).length, 1, 'the link netd made');
    const info = await sbx.getInfo();
    assert.deepEqual(info.network.allowOut, ['198.51.100.0/24']);
    // the new policy is the one netd holds: an address outside it is refused and logged
    await tryConnect(sbx, '203.0.113.8');
    await eventually(async () => (await network(sbx.sandboxId)).refusals
      .find((x) => x.dest === '203.0.113.8:80'), 'a refusal under the new policy');
    await sbx.updateNetwork({ allowInternetAccess: false });
    net = await network(sbx.sandboxId);
    assert.deepEqual(net.policy, { mode: 'none' });
    assert.equal(net.attached, false);
    assert.deepEqual(await links(sbx), []);
    assert.equal((await sbx.getInfo()).allowInternetAccess, false);
    const logs = (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs?search=Network%20policy`)).body.logs;
    assert.deepEqual(logs.map((l) => l.message), ['Network policy: allowlist', 'Network policy: none']);
    // an update wider than the key's role, a viewer's, an unknown sandbox's
    await assert.rejects(sbx.updateNetwork({}), (e) => e instanceof SandboxError && /^403: /.test(e.message));
    await assert.rejects(Sandbox.updateNetwork('s-nope', { allowInternetAccess: false }), SandboxNotFoundError);
    assert.deepEqual((await network(sbx.sandboxId)).policy, { mode: 'none' }, 'unchanged by the refusals');
  } finally {
    await sbx.kill();
  }
});

test('getMetrics: the sandbox\'s real figures now; getInfo its limits', async () => {
  const sbx = await Sandbox.create();
  try {
    await sbx.commands.run('head -c 8000000 /dev/zero > /tmp/eight-mb');
    const before = new Date(Date.now() - 2000);
    const metrics = await sbx.getMetrics();
    assert.equal(metrics.length, 1);
    const m = metrics[0];
    assert.ok(m.timestamp >= before && m.timestamp <= new Date(Date.now() + 2000), `timestamp ${m.timestamp}`);
    assert.ok(m.memUsed > 0, `memUsed ${m.memUsed}`);
    assert.ok(m.memTotal >= m.memUsed, `memTotal ${m.memTotal}`);
    assert.ok(m.cpuCount >= 1);
    assert.ok(m.cpuUsedPct >= 0 && m.cpuUsedPct <= 100, `cpuUsedPct ${m.cpuUsedPct}`);
    assert.ok(m.diskTotal > 0 && m.diskUsed > 0, `disk ${m.diskUsed}/${m.diskTotal}`);
    const s = await session(sbx.sandboxId);
    const info = await sbx.getInfo();
    if (s.limits.memory_bytes > 0) {
      assert.equal(info.memoryMB, s.limits.memory_bytes / 2 ** 20);
      assert.equal(m.memTotal, s.limits.memory_bytes);
    }
    assert.equal(info.cpuCount, m.cpuCount);
    // a window that leaves now out has none
    assert.deepEqual(await sbx.getMetrics({ start: new Date(Date.now() + 3_600_000) }), []);
    assert.deepEqual(await sbx.getMetrics({ end: new Date(Date.now() - 3_600_000) }), []);
    // a paused sandbox is measured from its cgroup
    assert.equal(await sbx.pause(), true);
    const paused = await sbx.getMetrics();
    assert.equal(paused.length, 1);
    if (s.limits.memory_bytes > 0) assert.ok(paused[0].memUsed > 0, 'its frozen memory');
    await assert.rejects(Sandbox.getMetrics('s-nope'), SandboxNotFoundError);
  } finally {
    await sbx.kill();
  }
});

test('templates: base and the runtime images exist, others not; Template.build refused with how', async () => {
  assert.equal(await Template.exists('base'), true);
  assert.equal(await Template.exists('host'), true);
  assert.equal(await Template.exists('no-such-template-here'), false);
  const list = await e2b('GET', '/templates');
  assert.equal(list.status, 200);
  assert.equal(list.body[0].templateID, 'base');
  assert.ok(list.body.every((t) => t.buildStatus === 'ready' && t.names.length === 1));
  // every name without a '/' (a path segment cannot hold one: the store's tag names have one)
  const plain = list.body.filter((t) => !t.templateID.includes('/'));
  for (const t of plain) assert.equal(await Template.exists(t.templateID), true, t.templateID);
  const slashed = await e2b('GET', '/templates/aliases/sandpipe%2Fruntime%3Ax');
  assert.deepEqual(slashed.body, { code: 400, message: 'malformed path segment' }, 'E2B\'s shape');
  await assert.rejects(Template.build(Template().fromImage('debian:bookworm'), 'mine:v1'),
    (e) => e instanceof BuildError && /^501: Template\.build is not supported by sandpipe: .*sandpipe image build/.test(e.message));
  assert.equal(await Sandbox.deleteSnapshot('no-such-template-here'), false);
  await assert.rejects(Sandbox.deleteSnapshot('base'),
    (e) => e instanceof SandboxError && /^501: .*sandpipe image rm/.test(e.message));
});

test('logs: the sandbox\'s status, its processes and how they ended, v1 and v2, after the kill too', async () => {
  const sbx = await Sandbox.create();
  const t0 = Date.now();
  await sbx.commands.run('echo fine');
  await assert.rejects(sbx.commands.run('exit 3'));
  const v2 = (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs`)).body.logs;
  const messages = v2.map((l) => l.message);
  assert.ok(messages.includes('Sandbox READY'), messages.join('\n'));
  const started = v2.filter((l) => /^Process \d+ started: /.test(l.message));
  assert.deepEqual(started.map((l) => l.message.replace(/^Process \d+/, 'P')),
    ['P started: /bin/bash -l -c echo fine', 'P started: /bin/bash -l -c exit 3']);
  const ended = v2.filter((l) => /^Process \d+ ended: /.test(l.message));
  assert.deepEqual(ended.map((l) => [l.level, l.message.replace(/^Process \d+/, 'P')]),
    [['info', 'P ended: exit status 0'], ['warn', 'P ended: exit status 3']]);
  assert.equal(ended[1].fields.exit_code, '3');
  assert.equal(ended[1].fields.logger, 'process');
  // backward: newest first; level: warn and above; a cursor: from then on
  const back = (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs?direction=backward&limit=1`)).body.logs;
  assert.deepEqual(back.map((l) => l.message), [v2[v2.length - 1].message]);
  const warn = (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs?level=warn`)).body.logs;
  assert.deepEqual(warn.map((l) => l.message.replace(/^Process \d+/, 'P')), ['P ended: exit status 3']);
  const later = (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs?cursor=${Date.now() + 60_000}`)).body.logs;
  assert.deepEqual(later, []);
  // v1: lines E2B's CLI parses, from start on
  const v1 = (await e2b('GET', `/sandboxes/${sbx.sandboxId}/logs?start=${t0 - 60_000}`)).body;
  assert.equal(v1.logs.length, v1.logEntries.length);
  const line = JSON.parse(v1.logs.find((l) => /exit status 3/.test(l.line)).line);
  assert.equal(line.level, 'warn');
  assert.equal(line.logger, 'process');
  assert.equal(line.exit_code, '3');
  await sbx.kill();
  const after = (await e2b('GET', `/v2/sandboxes/${sbx.sandboxId}/logs`)).body.logs;
  assert.ok(after.some((l) => l.message === 'Sandbox STOPPED: deleted by the API' || /^Sandbox STOPPED/.test(l.message)),
    after.map((l) => l.message).join('\n'));
  assert.equal((await e2b('GET', '/v2/sandboxes/s-nope/logs')).body.code, 404);
});

test('refreshes extend a running sandbox (never shorten it); the v1 resume resumes a paused one', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 60_000 });
  try {
    const asked = Date.now();
    assert.equal((await e2b('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, { duration: 600 })).status, 204);
    let info = await sbx.getInfo();
    const fromAsk = (info.endAt.getTime() - asked) / 1000;
    assert.ok(fromAsk >= 599 && fromAsk <= 602, `endAt ${info.endAt} is ${fromAsk} s after the refresh`);
    assert.equal((await e2b('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, {})).status, 204);
    assert.equal((await sbx.getInfo()).endAt.getTime(), info.endAt.getTime(), 'the default 15 s is sooner');
    assert.equal(await sbx.pause(), true);
    assert.equal((await e2b('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, {})).status, 409);
    const resumed = await e2b('POST', `/sandboxes/${sbx.sandboxId}/resume`, { timeout: 120 });
    assert.equal(resumed.status, 201);
    assert.equal(resumed.body.sandboxID, sbx.sandboxId);
    info = await sbx.getInfo();
    assert.equal(info.state, 'running');
    assert.equal((await session(sbx.sandboxId)).status, 'READY');
    const again = await e2b('POST', `/sandboxes/${sbx.sandboxId}/resume`, {});
    assert.deepEqual([again.status, again.body.code], [409, 409]);
    assert.match(again.body.message, /already running/);
    assert.equal((await e2b('POST', '/sandboxes/s-nope/refreshes', {})).body.code, 404);
  } finally {
    await sbx.kill();
  }
});

test('snapshots and fork: refused, naming what sandpipe has instead; none to list', async () => {
  const sbx = await Sandbox.create();
  try {
    const refused = (e) => e instanceof SandboxError && /^501: .* not supported: sandpipe keeps no snapshots/.test(e.message);
    await assert.rejects(sbx.createSnapshot(), refused);
    await assert.rejects(Sandbox.fork(sbx.sandboxId, { count: 1 }), refused);
    await assert.rejects(Sandbox.createSnapshot('s-nope'), SandboxNotFoundError);
    await assert.rejects(Sandbox.fork('s-nope'), SandboxNotFoundError);
    assert.deepEqual(await Sandbox.listSnapshots().nextItems(), []);
  } finally {
    await sbx.kill();
  }
});


test('getHost(port) with trafficAccessToken: the sandbox\'s server answers; no token or another sandbox\'s is refused', async () => {
  const sbx = await Sandbox.create();
  const other = await Sandbox.create();
  try {
    assert.match(sbx.trafficAccessToken ?? '', /^o0\./, 'create answers a trafficAccessToken');
    await sbx.files.write('/tmp/www/hello.txt', 'hello from the sandbox\n');
    await sbx.commands.run('cd /tmp/www && exec python3 -m http.server 8000 --bind 127.0.0.1', { background: true });
    const host = sbx.getHost(8000);
    assert.equal(host, `8000-${sbx.sandboxId}.localhost:${new URL(SP_URL).port}`, 'the stack\'s preview domain');
    const ok = await eventually(async () => {
      const r = await viaHost(host, '/hello.txt', { 'e2b-traffic-access-token': sbx.trafficAccessToken });
      return r.status === 200 ? r : null;
    }, 'the sandbox\'s server answering through getHost(8000)');
    assert.equal(ok.body, 'hello from the sandbox\n');
    const none = await viaHost(host, '/hello.txt');
    assert.equal(none.status, 401, 'no credential');
    const theirs = await viaHost(host, '/hello.txt', { 'e2b-traffic-access-token': other.trafficAccessToken });
    assert.equal(theirs.status, 403, 'another sandbox\'s token');
    const again = await Sandbox.connect(sbx.sandboxId);
    assert.match(again.trafficAccessToken ?? '', /^o0\./, 'connect answers one too');
    assert.equal((await viaHost(host, '/hello.txt', { 'e2b-traffic-access-token': again.trafficAccessToken })).status, 200);
  } finally {
    await sbx.kill();
    await other.kill();
  }
});
