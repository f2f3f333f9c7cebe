// The real npm e2b SDK (package-lock.json) against a real sandpipe stack through nginx: the
// sandbox lifecycle of E2B's control API (api/e2b/). tests/integration/test_e2b.py starts the
// stack and runs this with E2B_API_URL=<origin>/e2b and E2B_API_KEY=<a user token>; SP_URL and
// SP_USER_TOKEN reach sandpipe's own API, where each sandbox is a session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox, SandboxError, SandboxNotFoundError, AuthenticationError } from 'e2b';
import { session } from './helpers.mjs';

const SP_URL = process.env.SP_URL;
const run = Math.random().toString(36).slice(2); // this run's sandboxes, for the filters

const seconds = (a, b) => (b.getTime() - a.getTime()) / 1000;

test('create with the default template: getInfo and the sandpipe session behind it', async () => {
  const before = new Date(Date.now() - 1000);
  const sbx = await Sandbox.create({ metadata: { suite: run, who: 'a b&c=d' }, envs: { GREETING: 'hi' } });
  try {
    const info = await sbx.getInfo();
    assert.equal(info.sandboxId, sbx.sandboxId);
    assert.equal(info.templateId, 'base');
    assert.deepEqual(info.metadata, { suite: run, who: 'a b&c=d' });
    assert.equal(info.state, 'running');
    assert.ok(info.startedAt >= before && info.startedAt <= new Date(), `startedAt ${info.startedAt}`);
    assert.equal(seconds(info.startedAt, info.endAt), 300, 'the default timeout is 300 s');
    const s = await session(sbx.sandboxId);
    assert.equal(s.id, sbx.sandboxId);
    assert.equal(s.status, 'READY');
    assert.equal(s.owner, 'alice');
    assert.equal(s.max_lifetime, 300);
    assert.equal(s.idle_timeout, 0, 'E2B timeout is the only deadline');
    // the filter's three layers of escaping undone: a space, '&' and '=' in a value
    const found = await Sandbox.list({ query: { metadata: { who: 'a b&c=d', suite: run } } }).nextItems();
    assert.deepEqual(found.map((x) => x.sandboxId), [sbx.sandboxId]);
  } finally {
    await sbx.kill();
  }
});

test('create with a named template: a runtime image of that name', async () => {
  const sbx = await Sandbox.create('host', { timeoutMs: 60_000 });
  try {
    const info = await Sandbox.getInfo(sbx.sandboxId);
    assert.equal(info.templateId, 'host');
    assert.equal(seconds(info.startedAt, info.endAt), 60);
    assert.equal((await session(sbx.sandboxId)).image, 'host');
  } finally {
    await sbx.kill();
  }
});

test('list filters by metadata and state', async () => {
  const a = await Sandbox.create({ metadata: { suite: run, n: '1' } });
  const b = await Sandbox.create({ metadata: { suite: run, n: '2' } });
  try {
    const two = await Sandbox.list({ query: { metadata: { suite: run, n: '2' } } }).nextItems();
    assert.deepEqual(two.map((s) => s.sandboxId), [b.sandboxId]);
    assert.equal(two[0].state, 'running');
    assert.deepEqual(two[0].metadata, { suite: run, n: '2' });
    const both = await Sandbox.list({ query: { metadata: { suite: run }, state: ['running'] } }).nextItems();
    assert.deepEqual(both.map((s) => s.sandboxId).sort(), [a.sandboxId, b.sandboxId].sort());
    const none = await Sandbox.list({ query: { metadata: { suite: run }, state: ['paused'] } }).nextItems();
    assert.deepEqual(none, []);
    // pages: one sandbox each, the next one's token in X-Next-Token
    const pages = Sandbox.list({ query: { metadata: { suite: run } }, limit: 1 });
    const first = await pages.nextItems();
    assert.equal(first.length, 1);
    assert.ok(pages.hasNext);
    const second = await pages.nextItems();
    assert.equal(second.length, 1);
    assert.notEqual(second[0].sandboxId, first[0].sandboxId);
  } finally {
    await a.kill();
    await b.kill();
  }
});

test('setTimeout moves the end: getInfo and the session show it', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 30_000 });
  try {
    const asked = Date.now();
    await sbx.setTimeout(120_000);
    const info = await sbx.getInfo();
    const fromAsk = (info.endAt.getTime() - asked) / 1000;
    assert.ok(fromAsk >= 119 && fromAsk <= 122, `endAt ${info.endAt} is ${fromAsk} s after setTimeout`);
    const s = await session(sbx.sandboxId);
    assert.equal(s.max_lifetime, seconds(info.startedAt, info.endAt));
  } finally {
    await sbx.kill();
  }
});

test('connect to a running sandbox; only ever extends its life', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 600_000 });
  try {
    const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 10_000 });
    assert.equal(again.sandboxId, sbx.sandboxId);
    const info = await sbx.getInfo();
    assert.equal(seconds(info.startedAt, info.endAt), 600, 'a shorter timeout does not shorten it');
  } finally {
    await sbx.kill();
  }
});

test('pause, then connect resumes it', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 60_000, metadata: { suite: run, paused: 'yes' } });
  try {
    assert.equal(await sbx.pause(), true);
    assert.equal(await sbx.pause(), false, 'already paused');
    assert.equal((await sbx.getInfo()).state, 'paused');
    assert.equal((await session(sbx.sandboxId)).status, 'PAUSED');
    assert.equal((await session(sbx.sandboxId)).max_lifetime, 0, 'no end while paused');
    const paused = await Sandbox.list({ query: { metadata: { suite: run, paused: 'yes' }, state: ['paused'] } }).nextItems();
    assert.deepEqual(paused.map((s) => s.sandboxId), [sbx.sandboxId]);
    const asked = Date.now();
    const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 120_000 });
    assert.equal(again.sandboxId, sbx.sandboxId);
    const info = await sbx.getInfo();
    assert.equal(info.state, 'running');
    assert.equal((await session(sbx.sandboxId)).status, 'READY');
    const fromAsk = (info.endAt.getTime() - asked) / 1000;
    assert.ok(fromAsk >= 119 && fromAsk <= 122, `endAt ${info.endAt} is ${fromAsk} s after connect`);
  } finally {
    await sbx.kill();
  }
});

test('kill: then getInfo is SandboxNotFoundError, kill again false, the session stopped', async () => {
  const sbx = await Sandbox.create();
  assert.equal(await sbx.kill(), true);
  await assert.rejects(sbx.getInfo(), (e) => e instanceof SandboxNotFoundError && /not found/.test(e.message));
  assert.equal(await Sandbox.kill(sbx.sandboxId), false);
  await assert.rejects(sbx.setTimeout(10_000), SandboxNotFoundError);
  await assert.rejects(Sandbox.connect(sbx.sandboxId), SandboxNotFoundError);
  assert.equal((await session(sbx.sandboxId)).status, 'STOPPED');
});

test('a bad API key is AuthenticationError', async () => {
  await assert.rejects(Sandbox.create({ apiKey: 'not-a-token' }), AuthenticationError);
  await assert.rejects(Sandbox.list({ apiKey: 'e2b_nope' }).nextItems(), AuthenticationError);
});

test('a viewer token reads but is refused every write', async () => {
  const sbx = await Sandbox.create();
  try {
    const res = await fetch(`${SP_URL}/api/v1/tokens`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${process.env.SP_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sub: 'dash', role: 'viewer', session: sbx.sandboxId }),
    });
    assert.equal(res.status, 201);
    const viewer = { apiKey: (await res.json()).token };
    assert.equal((await Sandbox.getInfo(sbx.sandboxId, viewer)).sandboxId, sbx.sandboxId);
    assert.equal((await Sandbox.getInfo(sbx.sandboxId, { apiKey: process.env.SP_ADMIN_TOKEN })).sandboxId, sbx.sandboxId);
    const readOnly = (e) => e instanceof SandboxError && /403: this API key is read-only/.test(e.message);
    await assert.rejects(Sandbox.create(viewer), readOnly);
    await assert.rejects(Sandbox.setTimeout(sbx.sandboxId, 10_000, viewer), readOnly);
    await assert.rejects(Sandbox.kill(sbx.sandboxId, viewer), readOnly);
    assert.equal((await sbx.getInfo()).state, 'running');
  } finally {
    await sbx.kill();
  }
});

test('a sandbox ends at its timeout', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 2_000, metadata: { suite: run, short: 'yes' } });
  // bounded wait for the gateway to end it (it looks once a second)
  let gone = false;
  for (let i = 0; i < 60 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 500));
    gone = await sbx.getInfo().then(() => false, (e) => {
      if (e instanceof SandboxNotFoundError) return true;
      throw e;
    });
  }
  assert.ok(gone, 'still there 30 s after a 2 s timeout');
  const s = await session(sbx.sandboxId);
  assert.equal(s.status, 'STOPPED');
  const listed = await Sandbox.list({ query: { metadata: { suite: run, short: 'yes' } } }).nextItems();
  assert.deepEqual(listed, []);
});
