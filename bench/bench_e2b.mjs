// E2B's SDK against sandpipe, with its peers measured in the same run and process
// (bench/bench_e2b.py starts the stack and sets E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY, SP_URL):
//   1. commands.run('echo hi') through the SDK (envd: nginx -> gateway -> executor, Connect
//      stream; a new `bash -l -c` each time, as E2B) against the same command as an action on
//      sandpipe's own session WebSocket (its running shell), and `bash -l -c 'echo hi'` there;
//   2. Sandbox.create() to the end of a first command, from the warm pool;
//   3. 256 MiB of stdout streamed to the SDK against the same stream read raw (fetch, no
//      decoding: what the server side delivers) and the same bytes through a pipe inside the
//      sandbox (the floor);
//   4. files.read of a paused sandbox with autoResume (the read resumes it) against the same
//      read of it running.
// Prints JSON.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'tests', 'e2b', 'package.json'));
const { Sandbox } = require('e2b');
const { WebSocket } = require('undici');

const N_ECHO = Number(process.env.N_ECHO || 300);
const N_CREATE = Number(process.env.N_CREATE || 10);
const N_RESUME = Number(process.env.N_RESUME || 50);
const STREAM = 256 * 1024 * 1024;
const ms = () => Number(process.hrtime.bigint()) / 1e6;
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p99: s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)], n: s.length };
};
const sleep = (t) => new Promise((r) => setTimeout(r, t));

async function wsRun(sid, n, command) {
  const url = `${process.env.SP_URL.replace('http', 'ws')}/ws/sessions/${sid}?token=${process.env.E2B_API_KEY}`;
  const ws = new WebSocket(url, ['sandpipe.v1']);
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = rej; });
  let waiting = null;
  ws.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === 'observation' && waiting) { const w = waiting; waiting = null; w(ev); }
  };
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = ms();
    const done = new Promise((r) => { waiting = r; });
    ws.send(JSON.stringify({ type: 'action', id: i + 1, action: { action: 'run', args: { command, blocking: true }, timeout: 60 } }));
    const ev = await done;
    if (!String(ev.observation?.content).includes('hi')) throw new Error(`ws echo: ${JSON.stringify(ev).slice(0, 200)}`);
    times.push(ms() - t0);
  }
  ws.close();
  return times;
}

const out = {};
{
  const sbx = await Sandbox.create();
  await sbx.commands.run('true'); // warm
  const sdk = [];
  for (let i = 0; i < N_ECHO; i++) {
    const t0 = ms();
    const r = await sbx.commands.run('echo hi');
    if (r.stdout !== 'hi\n') throw new Error(`echo: ${r.stdout}`);
    sdk.push(ms() - t0);
  }
  out.echo_sdk = stats(sdk);
  out.echo_ws = stats(await wsRun(sbx.sandboxId, N_ECHO, 'echo hi'));
  // the SDK's command is a new login shell (bash -l -c): the same work as an action
  out.echo_ws_login = stats(await wsRun(sbx.sandboxId, N_ECHO, "bash -l -c 'echo hi'"));

  // the same stream read raw: the Start RPC by hand, its body counted, not decoded
  const created = await (await fetch(`${process.env.E2B_API_URL}/v2/sandboxes`, {
    method: 'POST', headers: { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' }, body: '{}',
  })).json();
  const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-c', `head -c ${STREAM} /dev/zero`] } }));
  const env = Buffer.concat([Buffer.from([0, msg.length >>> 24, (msg.length >>> 16) & 255, (msg.length >>> 8) & 255, msg.length & 255]), msg]);
  const r0 = ms();
  const res = await fetch(`${process.env.E2B_SANDBOX_URL}/process.Process/Start`, {
    method: 'POST', body: env,
    headers: { 'Content-Type': 'application/connect+json', 'E2b-Sandbox-Id': created.sandboxID, 'X-Access-Token': created.envdAccessToken },
  });
  let raw = 0;
  for await (const chunk of res.body) raw += chunk.length;
  out.stream_raw_mbs = STREAM / 1e6 / ((ms() - r0) / 1000);
  if (raw < STREAM * 4 / 3) throw new Error(`raw stream: ${raw} bytes`);
  await Sandbox.kill(created.sandboxID);

  let got = 0;
  const t0 = ms();
  await sbx.commands.run(`head -c ${STREAM} /dev/zero`, { onStdout: (d) => { got += Buffer.byteLength(d); }, timeoutMs: 0 });
  const dt = ms() - t0;
  if (got !== STREAM) throw new Error(`stream: ${got} of ${STREAM} bytes`);
  out.stream_sdk_mbs = STREAM / 1e6 / (dt / 1000);
  const floor = await sbx.commands.run(`s=$(date +%s%N); head -c ${STREAM} /dev/zero | cat >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000 ))`);
  out.stream_pipe_mbs = STREAM / 1e6 / (Number(floor.stdout.trim()) / 1e6);
  await sbx.kill();
}
{
  const total = [], create = [];
  for (let i = 0; i < N_CREATE; i++) {
    await sleep(1500); // the pool refills between rounds
    const t0 = ms();
    const sbx = await Sandbox.create();
    const t1 = ms();
    await sbx.commands.run('true');
    const t2 = ms();
    create.push(t1 - t0);
    total.push(t2 - t0);
    await sbx.kill();
  }
  out.create = stats(create);
  out.create_to_first_command = stats(total);
}
{
  // 4. autoResume: files.read of a paused sandbox (the call resumes it: a cgroup thaw, then the
  //    read) against the same read of it running, alternated in one loop
  const sbx = await Sandbox.create({ lifecycle: { onTimeout: 'pause', autoResume: true } });
  await sbx.files.write('/tmp/r.txt', 'r');
  const paused = [], running = [];
  for (let i = 0; i < N_RESUME; i++) {
    await sbx.pause();
    let t0 = ms();
    if (await sbx.files.read('/tmp/r.txt') !== 'r') throw new Error('read after the pause');
    paused.push(ms() - t0);
    t0 = ms();
    await sbx.files.read('/tmp/r.txt');
    running.push(ms() - t0);
  }
  out.read_resuming = stats(paused);
  out.read_running = stats(running);
  await sbx.kill();
}
console.log(JSON.stringify(out));
