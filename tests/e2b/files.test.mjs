// The real npm e2b SDK's sbx.files against sandpipe's envd filesystem (gateway/envd_fs.c,
// envd_watch.c, envd_files.c, envd_upload.c), through nginx with E2B_SANDBOX_URL=<origin>: read
// and write as text, bytes, blob and stream, a 50 MiB round trip, several files in one write,
// list with depth, exists and getInfo (a symlink too), makeDir, rename, remove, the
// FileNotFoundError texts, a recursive watch seeing what a command does, and signed
// upload/download URLs. tests/integration/test_e2b.py starts the stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Sandbox, FileType, FilesystemEventType, FileNotFoundError, NotFoundError } from 'e2b';

const SP_URL = process.env.SP_URL;
let sbx, home, me;

before(async () => {
  sbx = await Sandbox.create();
  const r = await sbx.commands.run('echo "$HOME"; id -un; id -gn');
  [home, me] = r.stdout.trim().split('\n');
});
after(async () => {
  await sbx?.kill();
});

// Resolves once pred() holds, checking as events arrive (no sleeps in assertions).
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

const sha = (b) => createHash('sha256').update(b).digest('hex');

test('write and read text, bytes, blob and stream', async () => {
  const info = await sbx.files.write('/tmp/f/text.txt', 'héllo\nworld\n');
  assert.deepEqual({ ...info, metadata: undefined }, { path: '/tmp/f/text.txt', name: 'text.txt', type: 'file', metadata: undefined });
  assert.equal(await sbx.files.read('/tmp/f/text.txt'), 'héllo\nworld\n');
  const bytes = new Uint8Array(256).map((_, i) => i);
  await sbx.files.write('/tmp/f/bytes.bin', bytes.buffer);
  assert.deepEqual(await sbx.files.read('/tmp/f/bytes.bin', { format: 'bytes' }), bytes);
  await sbx.files.write('/tmp/f/blob.bin', new Blob([bytes, bytes]));
  const blob = await sbx.files.read('/tmp/f/blob.bin', { format: 'blob' });
  assert.equal(blob.size, 512);
  assert.deepEqual(new Uint8Array(await blob.arrayBuffer()).subarray(256), bytes);
  // a ReadableStream goes up as a raw octet-stream body, and comes back as a stream
  const parts = ['one,', 'two,', 'three'];
  const up = new ReadableStream({ pull(c) { parts.length ? c.enqueue(new TextEncoder().encode(parts.shift())) : c.close(); } });
  await sbx.files.write('/tmp/f/stream.txt', up);
  const down = await sbx.files.read('/tmp/f/stream.txt', { format: 'stream' });
  let text = '';
  for await (const chunk of down) text += new TextDecoder().decode(chunk);
  assert.equal(text, 'one,two,three');
  // empty files: Content-Length 0 is what the SDK reads
  await sbx.files.write('/tmp/f/empty', '');
  assert.equal(await sbx.files.read('/tmp/f/empty'), '');
  assert.equal((await sbx.files.read('/tmp/f/empty', { format: 'bytes' })).length, 0);
  // gzip: the body is inflated on its way in
  await sbx.files.write('/tmp/f/gz.txt', 'zipped '.repeat(10000), { gzip: true });
  assert.equal(await sbx.files.read('/tmp/f/gz.txt'), 'zipped '.repeat(10000));
  // what the sandbox itself sees
  const r = await sbx.commands.run('cat /tmp/f/text.txt; wc -c < /tmp/f/blob.bin');
  assert.equal(r.stdout, 'héllo\nworld\n512\n');
});

test('a 50 MiB file goes up and comes back whole', async () => {
  const big = new Uint8Array(50 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) & 0xff;
  big[big.length - 1] = 7;
  await sbx.files.write('/tmp/big/50m.bin', big);
  const r = await sbx.commands.run('sha256sum /tmp/big/50m.bin');
  assert.equal(r.stdout.split(' ')[0], sha(big));
  const back = await sbx.files.read('/tmp/big/50m.bin', { format: 'bytes' });
  assert.equal(back.length, big.length);
  assert.equal(sha(back), sha(big));
});

test('a download the client drops halfway: the sandbox goes on serving', async () => {
  await sbx.files.write('/tmp/drop/big', new Uint8Array(20 * 1024 * 1024));
  const stream = await sbx.files.read('/tmp/drop/big', { format: 'stream' });
  const reader = stream.getReader();
  assert.ok((await reader.read()).value.length > 0);
  await reader.cancel();
  await sbx.files.write('/tmp/drop/small', 'still here');
  assert.equal(await sbx.files.read('/tmp/drop/small'), 'still here');
});

test('several files in one write, parents made; relative and ~ paths are the home\'s', async () => {
  const infos = await sbx.files.write([
    { path: '/tmp/multi/a.txt', data: 'A' },
    { path: '/tmp/multi/deep/er/b.txt', data: new Blob(['B']) },
    { path: 'rel/c.txt', data: 'C' },
  ]);
  assert.deepEqual(infos.map((i) => i.path), ['/tmp/multi/a.txt', '/tmp/multi/deep/er/b.txt', `${home}/rel/c.txt`]);
  assert.deepEqual(infos.map((i) => i.name), ['a.txt', 'b.txt', 'c.txt']);
  assert.equal(await sbx.files.read('/tmp/multi/deep/er/b.txt'), 'B');
  assert.equal(await sbx.files.read('~/rel/c.txt'), 'C');
  assert.equal((await sbx.files.getInfo('rel/../rel/c.txt')).path, `${home}/rel/c.txt`);
});

test('list: depth 1 and 2, types, sizes, permissions, owner', async () => {
  await sbx.commands.run(
    'mkdir -p /tmp/l/sub/inner && printf 12345 > /tmp/l/five && chmod 640 /tmp/l/five && ' +
    'printf x > /tmp/l/sub/x && ln -s /tmp/l/sub /tmp/l/link && ln -s five /tmp/l/flink');
  const one = await sbx.files.list('/tmp/l');
  assert.deepEqual(one.map((e) => e.name), ['five', 'flink', 'link', 'sub']);
  const by = Object.fromEntries(one.map((e) => [e.name, e]));
  assert.equal(by.five.type, FileType.FILE);
  assert.equal(by.five.size, 5);
  assert.equal(by.five.mode, 0o640);
  assert.equal(by.five.permissions, '-rw-r-----');
  assert.equal(by.five.owner, me);
  assert.equal(by.five.path, '/tmp/l/five');
  assert.ok(by.five.modifiedTime instanceof Date && Math.abs(by.five.modifiedTime - Date.now()) < 600_000);
  assert.equal(by.sub.type, FileType.DIR);
  assert.equal(by.sub.permissions.slice(0, 1), 'd');
  // a symlink is typed as its target, its permissions its own
  assert.equal(by.link.type, FileType.DIR);
  assert.equal(by.link.permissions, 'Lrwxrwxrwx');
  assert.equal(by.link.symlinkTarget, '/tmp/l/sub');
  assert.equal(by.flink.type, FileType.FILE);
  assert.equal(by.flink.mode, 0o640);
  const two = await sbx.files.list('/tmp/l', { depth: 2 });
  assert.deepEqual(two.map((e) => e.path), ['/tmp/l/five', '/tmp/l/flink', '/tmp/l/link', '/tmp/l/sub', '/tmp/l/sub/inner', '/tmp/l/sub/x']);
  assert.equal(two.find((e) => e.name === 'x').size, 1);
  await assert.rejects(sbx.files.list('/tmp/l/five'), (e) => e.message.includes('not a directory'));
  await assert.rejects(sbx.files.list('/tmp/none'), FileNotFoundError);
});

test('exists and getInfo, a symlink too', async () => {
  await sbx.commands.run('mkdir -p /tmp/i && printf abc > /tmp/i/f && ln -sf /tmp/i/f /tmp/i/l && ln -sf /tmp/i/gone /tmp/i/dangling');
  assert.equal(await sbx.files.exists('/tmp/i/f'), true);
  assert.equal(await sbx.files.exists('/tmp/i/nope'), false);
  const f = await sbx.files.getInfo('/tmp/i/f');
  assert.equal(f.type, FileType.FILE);
  assert.equal(f.size, 3);
  assert.equal(f.name, 'f');
  assert.equal(f.group.length > 0, true);
  assert.equal(f.symlinkTarget, undefined);
  const l = await sbx.files.getInfo('/tmp/i/l');
  assert.equal(l.type, FileType.FILE);
  assert.equal(l.symlinkTarget, '/tmp/i/f');
  assert.equal(l.path, '/tmp/i/l');
  assert.equal(l.permissions, 'Lrwxrwxrwx');
  const d = await sbx.files.getInfo('/tmp/i/dangling');
  assert.equal(d.type, undefined);
  const dir = await sbx.files.getInfo('/tmp/i');
  assert.equal(dir.type, FileType.DIR);
  assert.match(dir.permissions, /^drwx/);
});

test('makeDir, rename, remove', async () => {
  assert.equal(await sbx.files.makeDir('/tmp/mk/a/b'), true);
  assert.equal(await sbx.files.makeDir('/tmp/mk/a/b'), false);
  await sbx.files.write('/tmp/mk/file', 'f');
  await assert.rejects(sbx.files.makeDir('/tmp/mk/file'), (e) => e.message.includes('not a directory'));
  const moved = await sbx.files.rename('/tmp/mk/file', '/tmp/mk/new/place/file2');
  assert.equal(moved.path, '/tmp/mk/new/place/file2');
  assert.equal(moved.type, FileType.FILE);
  assert.equal(await sbx.files.exists('/tmp/mk/file'), false);
  assert.equal(await sbx.files.read('/tmp/mk/new/place/file2'), 'f');
  await assert.rejects(sbx.files.rename('/tmp/mk/none', '/tmp/mk/x'), FileNotFoundError);
  await sbx.files.remove('/tmp/mk');
  assert.equal(await sbx.files.exists('/tmp/mk'), false);
  await sbx.files.remove('/tmp/mk'); // a missing path is removed already
});

test('FileNotFoundError with envd\'s texts', async () => {
  await assert.rejects(sbx.files.read('/tmp/nope/x'), (e) => {
    assert.ok(e instanceof FileNotFoundError && e instanceof NotFoundError, `${e}`);
    assert.equal(e.message, "path '/tmp/nope/x' does not exist");
    return true;
  });
  await assert.rejects(sbx.files.getInfo('/tmp/nope/x'), (e) => {
    assert.ok(e instanceof FileNotFoundError, `${e}`);
    assert.equal(e.message, '[not_found] file not found: lstat /tmp/nope/x: no such file or directory');
    return true;
  });
  await assert.rejects(sbx.files.read('/tmp'), (e) => e.message === "path '/tmp' is a directory");
});

test('watchDir: a recursive watch sees what a command does, then onExit', async () => {
  await sbx.files.makeDir('/tmp/w/sub');
  const events = [];
  let exited = false;
  const h = await sbx.files.watchDir('/tmp/w', (e) => events.push(e), {
    recursive: true, includeEntry: true, timeoutMs: 0, onExit: () => { exited = true; },
  });
  await sbx.commands.run('echo hi > /tmp/w/sub/new.txt && mv /tmp/w/sub/new.txt /tmp/w/sub/moved.txt && rm /tmp/w/sub/moved.txt && echo top > /tmp/w/top');
  const seen = (type, name) => events.some((e) => e.type === type && e.name === name);
  await until(() => seen(FilesystemEventType.CREATE, 'sub/new.txt') && seen(FilesystemEventType.WRITE, 'sub/new.txt') &&
    seen(FilesystemEventType.RENAME, 'sub/new.txt') && seen(FilesystemEventType.CREATE, 'sub/moved.txt') &&
    seen(FilesystemEventType.REMOVE, 'sub/moved.txt') && seen(FilesystemEventType.WRITE, 'top'), `the events, got ${JSON.stringify(events)}`);
  const created = events.find((e) => e.type === FilesystemEventType.CREATE && e.name === 'top');
  assert.equal(created.entry.path, '/tmp/w/top');
  assert.equal(created.entry.type, FileType.FILE);
  await h.stop();
  await until(() => exited, 'onExit after stop');
  // a missing directory and a file are refused as envd refuses them
  await assert.rejects(sbx.files.watchDir('/tmp/w/none', () => {}), FileNotFoundError);
  await assert.rejects(sbx.files.watchDir('/tmp/w/top', () => {}), (e) => e.message.includes('not a directory'));
  // the deadline ends the stream, and onExit hears why
  let why;
  await sbx.files.watchDir('/tmp/w', () => {}, { timeoutMs: 500, onExit: (err) => { why = err ?? 'clean'; } });
  await until(() => why !== undefined, 'onExit at the deadline');
  assert.ok(why instanceof Error, `${why}`);
});

test('a sandbox killed while watched: the watch ends and onExit hears why', async () => {
  const s2 = await Sandbox.create();
  let why;
  await s2.files.watchDir('/tmp', () => {}, { timeoutMs: 0, onExit: (err) => { why = err ?? 'clean'; } });
  await s2.kill();
  await until(() => why !== undefined, 'onExit once the sandbox is gone');
  assert.ok(why instanceof Error, `${why}`);
});

test('the polling watcher (E2B\'s Python SDK): create, events, remove', async () => {
  const rpc = async (method, body) => {
    const res = await fetch(`${SP_URL}/filesystem.Filesystem/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  await sbx.files.makeDir('/tmp/pw/sub');
  const made = await rpc('CreateWatcher', { path: '/tmp/pw', recursive: true, includeEntry: true });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const id = made.body.watcherId;
  assert.match(id, /^w[0-9a-f]+$/);
  let events = [];
  // polls until an event of type shows (bounded); the file is removed only once its write was
  // seen, so its create's entry is read while the file is there
  const pollFor = async (type) => {
    for (let i = 0; i < 200 && !events.some((e) => e.type === type); i++) {
      const got = await rpc('GetWatcherEvents', { watcherId: id });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      events = events.concat(got.body.events || []);
      if (!events.some((e) => e.type === type)) await new Promise((r) => setTimeout(r, 25));
    }
  };
  await sbx.commands.run('printf x > /tmp/pw/sub/a');
  await pollFor('EVENT_TYPE_WRITE');
  await sbx.commands.run('rm /tmp/pw/sub/a');
  await pollFor('EVENT_TYPE_REMOVE');
  assert.deepEqual(events.filter((e) => e.name === 'sub/a').map((e) => e.type).filter((t, i, a) => a.indexOf(t) === i),
    ['EVENT_TYPE_CREATE', 'EVENT_TYPE_WRITE', 'EVENT_TYPE_REMOVE']);
  assert.equal(events.find((e) => e.type === 'EVENT_TYPE_CREATE').entry.path, '/tmp/pw/sub/a');
  assert.equal((await rpc('RemoveWatcher', { watcherId: id })).status, 200);
  const gone = await rpc('GetWatcherEvents', { watcherId: id });
  assert.equal(gone.status, 404);
  assert.equal(gone.body.code, 'not_found');
  const missing = await rpc('CreateWatcher', { path: '/tmp/pw/none' });
  assert.equal(missing.status, 404);
});

test('signed upload and download URLs', async () => {
  assert.equal(typeof sbx.envdAccessToken, 'string');
  const headers = { 'E2b-Sandbox-Id': sbx.sandboxId };
  const upUrl = await sbx.uploadUrl('/tmp/signed/up.txt', { useSignatureExpiration: 60 });
  assert.match(upUrl, /signature=v1_/);
  const form = new FormData();
  form.append('file', new Blob(['signed body']), 'ignored-name');
  const up = await fetch(upUrl, { method: 'POST', body: form, headers });
  assert.equal(up.status, 200, await up.clone().text());
  assert.deepEqual(await up.json(), [{ path: '/tmp/signed/up.txt', name: 'up.txt', type: 'file' }]);
  const downUrl = await sbx.downloadUrl('/tmp/signed/up.txt');
  const down = await fetch(downUrl, { headers });
  assert.equal(down.status, 200);
  assert.equal(await down.text(), 'signed body');
  // a URL signed for another path, or tampered with, is refused
  const other = new URL(downUrl);
  other.searchParams.set('path', '/etc/passwd');
  const bad = await fetch(other, { headers });
  assert.equal(bad.status, 401);
  assert.equal((await bad.json()).message, 'invalid signature');
  const none = await fetch(`${SP_URL}/files?path=/tmp/signed/up.txt`, { headers });
  assert.equal(none.status, 401);
  // an expired signature
  const old = await sbx.downloadUrl('/tmp/signed/up.txt', { useSignatureExpiration: -10 });
  const expired = await fetch(old, { headers });
  assert.equal(expired.status, 401);
  assert.equal((await expired.json()).message, 'signature is already expired');
});

test('one upload of more files than a request may write is refused, saying the cap', async () => {
  const form = new FormData();
  for (let i = 0; i <= 10000; i++)
    form.append('file', new Blob(['']), `/tmp/many/f${i}`);
  const res = await fetch(`${SP_URL}/files`, {
    method: 'POST', body: form,
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken },
  });
  assert.equal(res.status, 413);
  assert.match((await res.json()).message, /at most 10000 files/);
  const written = Number((await sbx.commands.run('ls /tmp/many 2>/dev/null | wc -l')).stdout.trim());
  assert.ok(written <= 10000, `${written} files written`);
});
