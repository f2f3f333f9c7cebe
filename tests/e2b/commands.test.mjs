// The real npm e2b SDK's commands and PTY against sandpipe's envd (gateway/envd_*.c), through
// nginx with E2B_SANDBOX_URL=<origin>: stdout and stderr apart, exit codes, streaming, cwd and
// envs, background commands that outlive their stream and are taken up from a second client,
// stdin, kill, list, a PTY; and each command in the sandpipe session's own event stream.
// tests/integration/test_e2b.py starts the stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox, CommandExitError, InvalidArgumentError, TimeoutError } from 'e2b';

const SP_URL = process.env.SP_URL;
const SP_USER_TOKEN = process.env.SP_USER_TOKEN;
let sbx;

before(async () => {
  sbx = await Sandbox.create({ envs: { GREETING: 'hello from create' } });
});
after(async () => {
  await sbx?.kill();
});

// Resolves once pred(value()) holds, checking as events arrive (no sleeps in assertions).
function until(pred, what, ms = 20_000) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      if (pred()) return resolve();
      if (Date.now() - t0 > ms) return reject(new Error(`never happened: ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

test('run: stdout and stderr apart, exit code 0', async () => {
  const r = await sbx.commands.run('echo out; echo err >&2');
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\n');
});

test('run: a failing command throws CommandExitError with its code and output', async () => {
  await assert.rejects(sbx.commands.run('echo partial; exit 3'), (e) => {
    assert.ok(e instanceof CommandExitError, `${e}`);
    assert.equal(e.exitCode, 3);
    assert.equal(e.stdout, 'partial\n');
    assert.equal(e.message, 'exit status 3');
    return true;
  });
});

test('run: cwd, envs, and the sandbox envVars of create', async () => {
  const r = await sbx.commands.run('pwd; echo "$FOO"; echo "$GREETING"', { cwd: '/tmp', envs: { FOO: 'b a r' } });
  assert.equal(r.stdout, '/tmp\nb a r\nhello from create\n');
});

test('run: a cwd that is not there is envd\'s invalid_argument; user root is refused plainly where the executor is not root', async () => {
  await assert.rejects(sbx.commands.run('pwd', { cwd: '/no/such/dir' }), (e) => {
    assert.ok(e instanceof InvalidArgumentError, `${e}`);
    assert.match(e.message, /cwd '\/no\/such\/dir' does not exist/);
    return true;
  });
  assert.equal((await sbx.commands.run('id -u')).stdout, '1000\n', 'the sandbox user of this stack');
  await assert.rejects(sbx.commands.run('id -u', { user: 'root' }), /permission_denied.*only when the executor runs as root/);
  assert.equal((await sbx.commands.run('id -u', { user: 'user' })).stdout, '1000\n', 'E2B\'s default user is the sandbox user');
});

test('run: output streams to onStdout while the command still runs', async () => {
  const seen = [];
  const h = await sbx.commands.run('echo ready; sleep 60', { background: true, onStdout: (d) => seen.push(d) });
  await until(() => seen.join('') === 'ready\n', 'the first line before the command ended');
  assert.equal(await sbx.commands.kill(h.pid), true);
  await assert.rejects(h.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1 && e.error === 'signal: killed');
});

test('run: binary-safe, large output arrives whole and in order', async () => {
  const r = await sbx.commands.run('seq 1 200000');
  const lines = r.stdout.split('\n');
  assert.equal(lines.length, 200001);
  assert.equal(lines[0], '1');
  assert.equal(lines[199999], '200000');
});

test('background: a second client connects by pid and feeds stdin from the first', async () => {
  const h = await sbx.commands.run('read line; echo "got:$line"', { background: true, stdin: true });
  const other = await Sandbox.connect(sbx.sandboxId);
  const out = [];
  const h2 = await other.commands.connect(h.pid, { onStdout: (d) => out.push(d) });
  await sbx.commands.sendStdin(h.pid, 'x y\n');
  const r = await h2.wait();
  assert.equal(r.exitCode, 0);
  assert.equal(out.join(''), 'got:x y\n');
});

test('background: the command outlives its stream deadline (e2b #1074) and is taken up later', async () => {
  const h = await sbx.commands.run('sleep 2; echo late', { background: true, timeoutMs: 1000 });
  await assert.rejects(h.wait()); // the SDK gives up at its 1 s deadline
  const h2 = await sbx.commands.connect(h.pid, { timeoutMs: 20_000 });
  const r = await h2.wait();
  assert.equal(r.stdout, 'late\n');
});

test('list, kill, closeStdin, and a pid that is not there', async () => {
  const h = await sbx.commands.run('sleep 60', { background: true });
  const all = await sbx.commands.list();
  const mine = all.find((p) => p.pid === h.pid);
  assert.ok(mine, `pid ${h.pid} in ${JSON.stringify(all)}`);
  assert.equal(mine.cmd, '/bin/bash');
  assert.deepEqual(mine.args, ['-l', '-c', 'sleep 60']);
  assert.equal(await sbx.commands.kill(h.pid), true);
  await assert.rejects(h.wait());
  assert.equal(await sbx.commands.kill(h.pid + 100000), false);
  const cat = await sbx.commands.run('cat', { background: true, stdin: true });
  await sbx.commands.sendStdin(cat.pid, 'to cat\n');
  await sbx.commands.closeStdin(cat.pid);
  assert.equal((await cat.wait()).stdout, 'to cat\n');
});

test('pty: create, input, resize, output as it comes, kill', async () => {
  let out = '';
  const dec = new TextDecoder();
  const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += dec.decode(d); } });
  await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo pty-$((40+2))\n'));
  await until(() => out.includes('pty-42'), 'the PTY echoed its command');
  await sbx.pty.resize(pty.pid, { cols: 100, rows: 30 });
  await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('stty size\n'));
  await until(() => out.includes('30 100'), 'the new size');
  assert.equal(await sbx.pty.kill(pty.pid), true);
  await assert.rejects(pty.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1 && e.error === 'signal: killed');
});

// The envdAccessToken the control API answers on connect (what the SDK sends as X-Access-Token).
async function accessToken(id) {
  const res = await fetch(`${process.env.E2B_API_URL}/v2/sandboxes/${id}/connect`, {
    method: 'POST', headers: { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' }, body: '{}',
  });
  return (await res.json()).envdAccessToken;
}

function envelope(obj, flags = 0) {
  const m = Buffer.from(JSON.stringify(obj));
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(m.length, 1);
  return Buffer.concat([h, m]);
}

test('StreamInput, the client stream no JS SDK call makes: input in order, then an end', async () => {
  const cat = await sbx.commands.run('cat', { background: true, stdin: true });
  const body = Buffer.concat([
    envelope({ start: { process: { pid: cat.pid } } }),
    envelope({ data: { input: { stdin: Buffer.from('one\n').toString('base64') } } }),
    envelope({ keepalive: {} }),
    envelope({ data: { input: { stdin: Buffer.from('two\n').toString('base64') } } }),
  ]);
  const res = await fetch(`${SP_URL}/process.Process/StreamInput`, {
    method: 'POST', body,
    headers: { 'Content-Type': 'application/connect+json', 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': await accessToken(sbx.sandboxId) },
  });
  assert.equal(res.status, 200);
  const raw = Buffer.from(await res.arrayBuffer());
  assert.equal(raw[0], 0);
  assert.deepEqual(JSON.parse(raw.subarray(5, 5 + raw.readUInt32BE(1))), {});
  const end = raw.subarray(5 + raw.readUInt32BE(1));
  assert.equal(end[0], 2, 'an end-of-stream envelope last');
  assert.deepEqual(JSON.parse(end.subarray(5)), {});
  await sbx.commands.closeStdin(cat.pid);
  assert.equal((await cat.wait()).stdout, 'one\ntwo\n');
});

test('a quiet stream carries keepalives at the interval the client asks (Keepalive-Ping-Interval)', async () => {
  const res = await fetch(`${SP_URL}/process.Process/Start`, {
    method: 'POST',
    body: envelope({ process: { cmd: '/bin/bash', args: ['-c', 'sleep 3.5; echo woke'] } }),
    headers: {
      'Content-Type': 'application/connect+json', 'Keepalive-Ping-Interval': '1',
      'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': await accessToken(sbx.sandboxId),
    },
  });
  const raw = Buffer.from(await res.arrayBuffer());
  const msgs = [];
  for (let o = 0; o < raw.length;) {
    const n = raw.readUInt32BE(o + 1);
    msgs.push({ flags: raw[o], m: JSON.parse(raw.subarray(o + 5, o + 5 + n)) });
    o += 5 + n;
  }
  assert.ok(msgs[0].m.event.start.pid > 0, 'start first');
  const kinds = msgs.slice(1, -1).map((x) => Object.keys(x.m.event)[0]);
  assert.ok(kinds.filter((k) => k === 'keepalive').length >= 2, kinds.join());
  assert.equal(kinds.at(-1), 'end');
  assert.equal(msgs.at(-1).flags, 2);
});

test('pty: a second client connects to it by pid and sees what it prints next', async () => {
  const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} });
  const other = await Sandbox.connect(sbx.sandboxId);
  let seen = '';
  const dec = new TextDecoder();
  await other.pty.connect(pty.pid, { onData: (d) => { seen += dec.decode(d); } });
  await sbx.pty.sendInput(pty.pid, new TextEncoder().encode('echo from-$((1+2))-first\n'));
  await until(() => seen.includes('from-3-first'), 'the second client hears the PTY');
  await other.pty.kill(pty.pid);
});

test('a sandbox killed while a command runs: the command fails, it does not hang', async () => {
  const s2 = await Sandbox.create();
  let started = false;
  const failed = s2.commands.run('echo started; sleep 60', { onStdout: () => { started = true; } })
    .then(() => null, (e) => e);
  await until(() => started, 'the command runs');
  await Sandbox.kill(s2.sandboxId);
  const e = await failed;
  assert.ok(e instanceof TimeoutError, `${e}`); // E2B's class for a sandbox that went away
  assert.match(e.message, /\[unavailable\] the session was stopped/);
  assert.equal(await s2.isRunning(), false);
});

test('isRunning: true while it runs', async () => {
  assert.equal(await sbx.isRunning(), true);
});

test('envd without the sandbox\'s access token is refused', async () => {
  const res = await fetch(`${SP_URL}/process.Process/List`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': 'not-it' },
    body: '{}',
  });
  assert.equal(res.status, 401);
  assert.equal((await res.json()).code, 'unauthenticated');
  const other = await Sandbox.connect(sbx.sandboxId);
  assert.ok(other.envdAccessToken === undefined || typeof other.envdAccessToken === 'string');
});

test('each command is in the sandpipe session\'s events: start, output, end', async () => {
  await sbx.commands.run('echo recorded-$((6*7))');
  const res = await fetch(`${SP_URL}/api/v1/sessions/${sbx.sandboxId}/events?limit=10000`, {
    headers: { Authorization: `Bearer ${SP_USER_TOKEN}` },
  });
  const { events } = await res.json();
  const start = events.find((e) => e.type === 'process' && e.event === 'start' && (e.args || []).includes('echo recorded-$((6*7))'));
  assert.ok(start, 'a process start event');
  assert.equal(start.via, 'e2b');
  const outs = events.filter((e) => e.type === 'process_output' && e.pid === start.pid);
  assert.equal(outs.map((e) => e.data).join(''), 'recorded-42\n');
  const end = events.find((e) => e.type === 'process' && e.event === 'end' && e.pid === start.pid);
  assert.equal(end.exit_code, 0);
});

test('a killed sandbox: isRunning false, commands fail', async () => {
  const s2 = await Sandbox.create();
  await s2.kill();
  assert.equal(await s2.isRunning(), false);
  await assert.rejects(s2.commands.run('true'));
});
