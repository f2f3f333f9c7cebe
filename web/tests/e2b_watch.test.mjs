// An E2B SDK agent watched by people: the real npm e2b SDK (tests/e2b's, pinned by its lock)
// drives a sandbox through the stack's E2B API while /watch/{sandboxId} is open in Chromium. Each
// command shows live in a block of its own, keyed by its pid (a background command keeps its
// block while another runs), stdout and stderr apart, its cwd, its exit code or signal; a PTY's
// output is drawn by xterm.js; output is text, never HTML; a command still running when the
// sandbox is killed does not stay "running". The IDE's agent view shows the same, and so does a
// reload (the replay), also once the session has ended (its log read back from the REST API).
// tests/integration/test_web.py sets E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { launch, signedIn, sessionPage, shot, rest, USER } from './harness.mjs';

// The SDK lives in tests/e2b/node_modules (make e2b-sdk), not in web's packages.
const { Sandbox, CommandExitError } = createRequire(new URL('../../tests/e2b/package.json', import.meta.url))('e2b');

let browser, sbx, page, watch; // watch: /watch's process column
before(async () => {
  browser = await launch();
  sbx = await Sandbox.create();
  page = await signedIn(browser, USER, { path: `/watch/${sbx.sandboxId}` });
  await page.locator('.watch-head .conn[data-up=true]').waitFor();
  watch = page.locator('.watch-procs');
});
after(async () => {
  await sbx?.kill();
  await browser?.close();
});

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const procs = (root) => root.locator('article.proc');
/** A command's block, by its command line exactly as shown. */
const byCommand = (root, cmd) => procs(root).filter({ has: root.page().locator('code.what', { hasText: new RegExp(`^${escapeRe(cmd)}$`) }) });
const byPid = (root, pid) => root.locator(`article.proc[data-pid="${pid}"]`);
/** Waits until the block shows its end: state 'exited', 'signalled', or either (null). */
const ended = (block, state) => block.and(block.page().locator(state ? `[data-state=${state}]` : '[data-state]:not([data-state=running])')).waitFor();
/** The process's end event as the session's log holds it. */
async function endInLog(pid) {
  const r = await rest('GET', `/api/v1/sessions/${sbx.sandboxId}/events?type=process&limit=10000`, { token: USER });
  return r.body.events.find((e) => e.event === 'end' && e.pid === pid);
}

/** A block's plain output, taken apart: text nodes are stdout, span.stderr stderr. */
const streams = (block) => block.locator('pre.output').evaluate((pre) => {
  const r = { stdout: '', stderr: '' };
  for (const n of pre.childNodes) {
    if (n.nodeType === Node.TEXT_NODE) r.stdout += n.textContent;
    else if (n.classList.contains('stderr')) r.stderr += n.textContent;
  }
  return r;
});

// What every view must show once the commands are done: checked live on /watch, then on the
// IDE's agent view and on a reload of /watch (the replay).
const finalChecks = [];

test('a command\'s stdout and stderr, apart, in its block on /watch as it runs', async () => {
  const cmd = 'echo out-1; echo err-1 >&2';
  const r = await sbx.commands.run(cmd);
  assert.equal(r.exitCode, 0);
  const check = async (root) => {
    const b = byCommand(root, cmd);
    await ended(b, 'exited');
    assert.equal(await b.locator('.badge').textContent(), 'exit 0');
    assert.deepEqual(await streams(b), { stdout: 'out-1\n', stderr: 'err-1\n' });
    assert.match(await b.locator('header .who').textContent(), /^via E2B SDK · pid \d+ · /);
    assert.equal(await b.getAttribute('data-kind'), 'command');
  };
  await check(watch);
  finalChecks.push(check);
  // the terminal tells the story in order: the command, then its end
  const pid = await byCommand(watch, cmd).getAttribute('data-pid');
  await page.waitForFunction(([c, p]) => {
    const t = document.querySelector('.watch-term .xterm-rows')?.innerText || '';
    return t.includes(`E2B $ ${c} (pid ${p})`) && t.includes(`[pid ${p} exit 0]`);
  }, [cmd, pid]);
});

test('output and the command line are text, never HTML', async () => {
  const cmd = "echo '<img src=x onerror=window.__pwned=1><b>not bold</b>'";
  await sbx.commands.run(cmd);
  const check = async (root) => {
    const b = byCommand(root, cmd);
    await ended(b, 'exited');
    assert.deepEqual(await streams(b), { stdout: '<img src=x onerror=window.__pwned=1><b>not bold</b>\n', stderr: '' });
    assert.equal(await root.locator('img, b').count(), 0);
    assert.equal(await root.page().evaluate(() => window.__pwned), undefined);
  };
  await check(watch);
  finalChecks.push(check);
});

test('a background command keeps its own block, updated in place, while another runs with a cwd', async () => {
  const bgCmd = 'echo bg-ready; read line; echo "bg-got:$line"';
  const bg = await sbx.commands.run(bgCmd, { background: true, stdin: true });
  const bgBlock = byPid(watch, bg.pid);
  await bgBlock.locator('pre.output', { hasText: 'bg-ready' }).waitFor();
  assert.equal(await bgBlock.getAttribute('data-state'), 'running');
  assert.equal(await bgBlock.locator('.badge').textContent(), 'running');

  const fgCmd = 'echo fg-meanwhile; pwd';
  await sbx.commands.run(fgCmd, { cwd: '/tmp' });
  const fgBlock = byCommand(watch, fgCmd);
  await ended(fgBlock, 'exited');
  assert.equal(await bgBlock.getAttribute('data-state'), 'running', 'the background command is still running');

  await sbx.commands.sendStdin(bg.pid, 'x y\n');
  assert.equal((await bg.wait()).exitCode, 0);
  const check = async (root) => {
    const b = byPid(root, bg.pid), f = byCommand(root, fgCmd);
    await ended(b, 'exited');
    await ended(f, 'exited');
    assert.equal(await b.count(), 1, 'one block per pid');
    assert.equal(await b.locator('code.what').textContent(), bgCmd);
    assert.deepEqual(await streams(b), { stdout: 'bg-ready\nbg-got:x y\n', stderr: '' });
    assert.deepEqual(await streams(f), { stdout: 'fg-meanwhile\n/tmp\n', stderr: '' });
    assert.equal(await f.locator('.proc-meta').textContent(), 'cwd /tmp');
    assert.equal(await b.locator('.proc-meta').count(), 0, 'no cwd was asked for the background command');
    // the background command's block came first and stayed where it was
    const order = await procs(root).evaluateAll((els, p) => els.map((e) => e.dataset.pid === String(p)), bg.pid);
    assert.ok(order.indexOf(true) < order.lastIndexOf(false));
  };
  await check(watch);
  finalChecks.push(check);
});

test('a failing command: its exit code, in red, with what it printed', async () => {
  const cmd = 'echo partial; echo oops >&2; exit 3';
  await assert.rejects(sbx.commands.run(cmd), (e) => e instanceof CommandExitError && e.exitCode === 3);
  const check = async (root) => {
    const b = byCommand(root, cmd);
    await ended(b, 'exited');
    assert.equal(await b.locator('.badge').textContent(), 'exit 3');
    assert.equal(await b.locator('.badge').getAttribute('class'), 'badge b-bad');
    assert.equal(await b.getAttribute('data-failed'), 'true');
    assert.deepEqual(await streams(b), { stdout: 'partial\n', stderr: 'oops\n' });
  };
  await check(watch);
  finalChecks.push(check);
});

test('a killed background command: the signal, not an exit code', async () => {
  const h = await sbx.commands.run('echo sleeping; sleep 60', { background: true });
  await byPid(watch, h.pid).locator('pre.output', { hasText: 'sleeping' }).waitFor();
  assert.equal(await sbx.commands.kill(h.pid), true);
  await assert.rejects(h.wait());
  const check = async (root) => {
    const b = byPid(root, h.pid);
    await ended(b, 'signalled');
    assert.equal(await b.locator('.badge').textContent(), 'signal: killed');
    assert.equal(await b.getAttribute('data-failed'), null);
  };
  await check(watch);
  finalChecks.push(check);
});

test('a PTY: its output drawn by xterm.js, colours and all, no escape codes left', async () => {
  const pty = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} });
  const b = byPid(watch, pty.pid);
  await b.waitFor();
  await sbx.pty.sendInput(pty.pid, new TextEncoder().encode("printf '\\033[32mgreen-%s\\033[0m\\n' pty\n"));
  await b.locator('pre.output span', { hasText: /^green-pty$/ }).waitFor();
  assert.equal(await sbx.pty.kill(pty.pid), true);
  await assert.rejects(pty.wait());
  const check = async (root) => {
    const p = byPid(root, pty.pid);
    await ended(p);
    // a killed PTY's end is what its shell reported (the gateway's word): the badge says it
    const end = await endInLog(pty.pid);
    assert.equal(await p.locator('.badge').textContent(), /^signal: /.test(end.status) ? end.status : `exit ${end.exit_code}`);
    assert.equal(await p.getAttribute('data-kind'), 'pty');
    assert.equal(await p.locator('code.what').textContent(), '/bin/bash -i -l');
    const out = p.locator('pre.output');
    assert.equal(await out.getAttribute('data-ansi'), 'true');
    assert.match(await out.locator('span', { hasText: /^green-pty$/ }).getAttribute('style'), /color:var\(--ansi-2\)/);
    assert.doesNotMatch(await out.textContent(), /\x1b/);
  };
  await check(watch);
  finalChecks.push(check);
  await shot(page, 'watch-e2b-live');
});

/** Every block as shown: pid, kind, state, badge, command, cwd, output (for comparing views). */
const snapshot = (root) => procs(root).evaluateAll((els) => els.map((e) => [e.dataset.pid, e.dataset.kind,
  e.dataset.state, e.querySelector('.badge').textContent, e.querySelector('code.what').textContent,
  e.querySelector('.proc-meta')?.textContent || '', e.querySelector('pre.output').textContent].join('|')));

test('the IDE\'s agent view shows the same processes', async () => {
  const live = await snapshot(watch);
  assert.equal(live.length, 7, live.join('\n'));
  const ide = await sessionPage(browser, sbx.sandboxId, { tab: 'agent' });
  const agent = ide.locator('[data-panel=agent]');
  for (const check of finalChecks) await check(agent);
  assert.deepEqual(await snapshot(agent), live);
  await shot(ide, 'agent-e2b');
  await ide.context().close();
});

test('a reload of /watch replays the same blocks', async () => {
  const live = await snapshot(watch);
  assert.equal(live.length, 7, live.join('\n'));
  assert.equal(finalChecks.length, 6);
  await page.reload();
  await page.locator('.watch-head .conn[data-up=true]').waitFor();
  for (const check of finalChecks) await check(watch);
  assert.deepEqual(await snapshot(watch), live);
  await shot(page, 'watch-e2b-replay');
});

test('the sandbox killed while a command runs: its block does not stay "running"', async () => {
  const h = await sbx.commands.run('echo long; sleep 600', { background: true });
  const b = byPid(watch, h.pid);
  await b.locator('pre.output', { hasText: 'long' }).waitFor();
  await sbx.kill();
  await page.locator('.watch-status [data-status=STOPPED]').waitFor();
  // what the log says: an end (the signal) if the gateway recorded one, else none, and then
  // the block says so instead of running on
  const end = await endInLog(h.pid);
  await ended(b);
  assert.equal(await b.locator('.badge').textContent(), end ? end.status : 'no end recorded');
  finalChecks.push(async (root) => {
    await ended(byPid(root, h.pid));
    assert.equal(await byPid(root, h.pid).locator('.badge').textContent(), end ? end.status : 'no end recorded');
  });
});

test('the ended sandbox replayed: /watch and the IDE read its log back, the same blocks', async () => {
  const live = await snapshot(watch);
  assert.equal(live.length, 8, live.join('\n'));
  // no gateway holds the session any more: the log comes from the REST API
  await page.reload();
  await page.locator('.watch-head .conn', { hasText: 'closed: the session has ended' }).waitFor();
  for (const check of finalChecks) await check(watch);
  assert.deepEqual(await snapshot(watch), live);
  await shot(page, 'watch-e2b-ended');

  const ide = await signedIn(browser, USER);
  await ide.goto(ide.url().replace(/#.*/, '') + '#/s/' + sbx.sandboxId);
  await ide.locator('.banner', { hasText: 'has ended' }).waitFor();
  await ide.locator('[data-tab=agent]').click();
  const agent = ide.locator('[data-panel=agent]');
  for (const check of finalChecks) await check(agent);
  assert.deepEqual(await snapshot(agent), live);
  await ide.context().close();
});
