// A paused sandbox with E2B's autoResume outlives its gateway: the owner is killed with SIGKILL
// while the sandbox is paused, a peer takes it over (it stays paused there: its executor link is
// only made once it is thawed), and the next SDK call resumes it and waits for that link, so the
// call itself is served: a write (a streamed upload), a command (a stream) and a read.
// tests/integration/test_e2b.py (E2BTakeover) starts two gateways behind one nginx and names
// their pids in SP_GATEWAY_PIDS ({gateway id: pid}).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from 'e2b';
import { eventually, session } from './helpers.mjs';

const SP_URL = process.env.SP_URL;
const PIDS = JSON.parse(process.env.SP_GATEWAY_PIDS);

test('paused sandboxes with autoResume, taken over after a kill -9, are resumed by the next call, which is served', async () => {
  const lifecycle = { onTimeout: 'pause', autoResume: true };
  const all = [];
  try {
    // three sandboxes over two gateways: two of them share one
    for (let i = 0; i < 3; i++) all.push(await Sandbox.create({ timeoutMs: 300_000, lifecycle }));
    const owners = await Promise.all(all.map(async (s) => (await session(s.sandboxId)).gateway));
    const victim = owners.find((g, i) => owners.indexOf(g, i + 1) >= 0);
    const [a, b] = all.filter((s, i) => owners[i] === victim);
    await a.files.write('/tmp/before.txt', 'written before\n');
    await b.commands.run('x=1; echo $x > /tmp/b.txt');
    assert.equal(await a.pause(), true);
    assert.equal(await b.pause(), true);
    process.kill(PIDS[victim], 'SIGKILL');
    // taken over, still paused, and nginx routes to the new owner (its route cache is a
    // second): envd's /health, which resumes nothing, answers from there that it is paused
    for (const s of [a, b])
      await eventually(async () => {
        const r = await session(s.sandboxId);
        const health = await fetch(`${SP_URL}/health`, { headers: { 'E2b-Sandbox-Id': s.sandboxId } });
        return r.gateway !== victim && r.status === 'PAUSED' && /is paused/.test(await health.text());
      }, `${s.sandboxId} taken over, still paused`, 60_000);

    await a.files.write('/tmp/after.txt', 'written after the takeover\n');
    assert.equal(await a.files.read('/tmp/before.txt'), 'written before\n');
    assert.equal(await a.files.read('/tmp/after.txt'), 'written after the takeover\n');
    assert.equal((await b.commands.run('cat /tmp/b.txt')).stdout, '1\n');
    for (const s of [a, b]) {
      assert.equal((await s.getInfo()).state, 'running');
      assert.equal((await session(s.sandboxId)).status, 'READY');
    }
  } finally {
    for (const s of all) await s.kill().catch(() => {});
  }
});
