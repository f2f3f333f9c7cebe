// A command started through the real npm e2b SDK outlives the gateway that started it: its
// gateway is killed with SIGKILL mid-command, a peer takes the sandbox over, and
// commands.connect(pid) takes the command up there (gateway/envd_proc.c's lookup: proc.attach by
// pid on the executor, which ran on) and sees it to its end; list still shows it while it runs,
// and the sandbox takes new commands. A PTY too: pty.connect(pid) takes it up there (the
// executor's terminal.attach by pid) with its shell's state. tests/integration/test_e2b.py
// (E2BTakeover) starts two gateways behind one nginx and names their pids in SP_GATEWAY_PIDS
// ({gateway id: pid}).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from 'e2b';
import { session } from './helpers.mjs';

const PIDS = JSON.parse(process.env.SP_GATEWAY_PIDS);

// Calls f until it resolves (the sandbox is being taken over meanwhile), at most ms.
async function retry(f, what, ms = 60_000) {
  const t0 = Date.now();
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (Date.now() - t0 > ms) throw new Error(`${what}: ${e}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test('a command and a PTY survive their gateway\'s kill -9 and are taken up by pid on the new owner', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 300_000 });
  try {
    let seen = '';
    const h = await sbx.commands.run('for i in $(seq 1 60); do echo line-$i; sleep 0.1; done; echo done-$((6*7))', {
      background: true, onStdout: (d) => { seen += d; },
    });
    await retry(async () => assert.match(seen, /line-3\n/), 'the first lines');
    // a PTY too: the executor keeps it when the gateway goes, and the new owner takes it up by
    // pid (terminal.attach) with its shell's state
    const enc = new TextEncoder(), dec = new TextDecoder();
    let ptyOut = '';
    const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { ptyOut += dec.decode(d); } });
    await sbx.pty.sendInput(pty.pid, enc.encode('kept=$((40+2)); echo set-$kept\n'));
    await retry(async () => assert.match(ptyOut, /set-42/), 'the PTY ran its first line');
    const before = await session(sbx.sandboxId);
    process.kill(PIDS[before.gateway], 'SIGKILL');
    await assert.rejects(h.wait(), 'the stream through the dead gateway breaks');
    const after = await retry(async () => {
      const s = await session(sbx.sandboxId);
      assert.notEqual(s.gateway, before.gateway);
      assert.equal(s.status, 'READY');
      return s;
    }, 'a peer takes the sandbox over');
    assert.ok(PIDS[after.gateway], `owned by ${after.gateway}`);
    const listed = await retry(() => sbx.commands.list(), 'list on the new owner');
    assert.ok(listed.some((p) => p.pid === h.pid && p.args[2]?.startsWith('for i in')), JSON.stringify(listed));
    let more = '';
    const h2 = await retry(() => sbx.commands.connect(h.pid, { onStdout: (d) => { more += d; }, timeoutMs: 60_000 }),
      'connect by pid on the new owner');
    const r = await h2.wait();
    assert.equal(r.exitCode, 0);
    assert.match(more, /done-42\n$/, 'the command ran on to its end');
    assert.equal((await sbx.commands.run('echo after')).stdout, 'after\n');
    let ptyAfter = '';
    await retry(() => sbx.pty.connect(pty.pid, { onData: (d) => { ptyAfter += dec.decode(d); } }),
      'the PTY taken up by pid on the new owner');
    await sbx.pty.sendInput(pty.pid, enc.encode('echo again-$kept\n'));
    await retry(async () => assert.match(ptyAfter, /again-42/), 'the same shell, its variable kept');
    assert.equal(await sbx.pty.kill(pty.pid), true);
  } finally {
    await sbx.kill();
  }
});
