// The agent view: a command submitted from it streams its output before the observation; a
// reload shows the same timeline once; file write and str_replace edit show as a diff; actions
// sent through REST and /runtime/ appear live with who sent them and by which route; a dropped connection resumes from the last
// seq with no line lost or repeated; a viewer has no submit box.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, signedIn, shot, createSession, viewerToken, rest, USER, BASE, dropConnections, sessionPage, cleanUp, themeClicks } from './harness.mjs';

let browser, page, id;
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  page = await sessionPage(browser, id, { tab: 'agent' });
});
after(() => cleanUp(browser, id));

const entries = () => page.locator('[data-panel=agent] article.entry');
const last = () => entries().last();

async function submit(kind, fields) {
  await page.locator('form.submit select[name=kind]').selectOption(kind);
  for (const [name, value] of Object.entries(fields)) await page.locator(`form.submit [name=${name}]`).fill(value);
  await page.locator('form.submit button[type=submit]').click();
}

test('a command from the agent view streams its output before the observation', async () => {
  const n = await entries().count();
  await submit('run', { command: 'for i in 1 2 3; do echo line$i; sleep 0.7; done; cd /tmp' });
  await entries().nth(n).waitFor();
  const e = entries().nth(n);
  await e.locator('pre.output', { hasText: 'line1' }).waitFor();
  assert.equal(await e.getAttribute('data-observed'), null, 'the observation came before the streamed output');
  await e.and(page.locator('[data-observed=run]')).waitFor({ timeout: 20000 });
  assert.equal(await e.locator('.badge').textContent(), 'exit 0');
  assert.match(await e.locator('.foot').textContent(), /cwd \/tmp/);
  assert.equal(await e.locator('pre.output').first().textContent(), 'line1\nline2\nline3\n');
  assert.match(await e.locator('header .who').textContent(), /^alice via WebSocket · /);
});

test('write and str_replace edit from the box; the edit shows as a diff', async () => {
  await submit('write', { path: '/workspace/notes.txt', content: 'one\ntwo\nthree\n' });
  await last().and(page.locator('[data-observed=write]')).waitFor();
  await submit('edit', { path: '/workspace/notes.txt', old_str: 'two', new_str: 'TWO, edited' });
  await last().and(page.locator('[data-observed=edit]')).waitFor();
  const diff = last().locator('pre.diff');
  // Old and new line numbers, then the line (the observation's extras.diff).
  assert.equal(await diff.locator('.del').textContent(), '2- two\n');
  assert.equal(await diff.locator('.add').textContent(), '2+ TWO, edited\n');
  await submit('read', { path: '/workspace/notes.txt' });
  await last().and(page.locator('[data-observed=read]')).waitFor();
  assert.match(await last().locator('.foot').textContent(), /TWO, edited/);
  const r = await rest('GET', `/api/v1/sessions/${id}/files/content?path=notes.txt`, { token: USER });
  assert.match(r.body.content, /^one\nTWO, edited\nthree\n/);
});

test('actions sent through REST show up live, with who sent them', async () => {
  const n = await entries().count();
  const admin = (await import('./harness.mjs')).ADMIN;
  const r = await rest('POST', `/api/v1/sessions/${id}/actions?wait=true`, {
    token: admin, body: { action: 'run', args: { command: 'echo from-rest' } },
  });
  assert.equal(r.status, 200);
  await entries().nth(n).and(page.locator('[data-observed=run]')).waitFor();
  assert.match(await entries().nth(n).locator('header .who').textContent(), /^root via REST · /);
  assert.match(await entries().nth(n).locator('pre.output').first().textContent(), /from-rest/);
});

test('actions through the OpenHands action server (/runtime/{id}/) say so', async () => {
  const n = await entries().count();
  const r = await fetch(`${BASE}/runtime/${id}/execute_action`, {
    method: 'POST',
    headers: { 'X-Session-API-Key': USER, 'Content-Type': 'application/json' },
    body: JSON.stringify({ action: { action: 'run', args: { command: 'echo from-runtime' }, timeout: 60 } }),
  });
  assert.equal(r.status, 200, await r.text());
  await entries().nth(n).and(page.locator('[data-observed=run]')).waitFor();
  assert.match(await entries().nth(n).locator('header .who').textContent(), /^alice via \/runtime\/ · /);
  await shot(page, 'agent-view');
});

test('a reload shows the same timeline once', async () => {
  const seqs = async () => page.locator('[data-panel=agent] [data-seq]').evaluateAll((els) => els.map((e) => e.dataset.seq));
  const before = await seqs();
  await page.reload();
  await page.locator('[data-tab=agent]').click();
  await page.locator('[data-panel=agent] .conn[data-up=true]').waitFor();
  await page.waitForFunction((n) => document.querySelectorAll('[data-panel=agent] [data-seq]').length >= n, before.length);
  const after = await seqs();
  assert.deepEqual(after, before);
  assert.equal(new Set(after).size, after.length, 'an event is shown twice');
});

test('a dropped connection resumes from the last seq: no line lost, none repeated', async () => {
  const n = await entries().count();
  await submit('run', { command: 'for i in $(seq 1 12); do echo tick$i; sleep 0.25; done' });
  const e = entries().nth(n);
  await e.locator('pre.output', { hasText: 'tick2' }).waitFor();
  assert.ok(await dropConnections() > 0);
  await page.locator('[data-panel=agent] .conn[data-up=false]').waitFor().catch(() => {});
  await e.and(page.locator('[data-observed=run]')).waitFor({ timeout: 30000 });
  const want = Array.from({ length: 12 }, (_, i) => `tick${i + 1}\n`).join('');
  assert.equal(await e.locator('pre.output').first().textContent(), want);
  assert.ok(await page.evaluate(() => window.__sandpipe.events().reconnects) >= 1, 'it never reconnected');
});

test('an action streaming 50 MB: the page answers clicks within 1 s, the timeline keeps the tail', async () => {
  const n = await entries().count();
  await submit('run', { command: 'yes agent-flood-line | head -c 50000000; echo; echo AGENT-FLOOD-DONE' });
  const e = entries().nth(n);
  await e.locator('pre.output', { hasText: 'agent-flood-line' }).waitFor();
  const { took, median, worst } = await themeClicks(page);
  console.log(`click-to-repaint while the agent view streams: median ${median} ms, worst ${worst} ms`);
  assert.ok(median < 1000, `clicks took ${took.join(', ')} ms`);
  await e.and(page.locator('[data-observed=run]')).waitFor({ timeout: 240000 });
  const out = await e.locator('pre.output').first().textContent();
  assert.match(out, /AGENT-FLOOD-DONE\n$/);
  assert.match(await e.locator('pre.output').first().getAttribute('data-dropped'), /earlier characters not shown/);
});

test('a viewer sees the timeline but has no submit box', async () => {
  const viewer = await viewerToken(id);
  const p = await signedIn(browser, viewer);
  await p.waitForURL(new RegExp(`#/s/${id}`));
  await p.locator('[data-panel=agent] article.entry').first().waitFor();
  assert.equal(await p.locator('form.submit').count(), 0);
  assert.equal(await p.locator('[data-panel=agent] button').count(), 0);
  await shot(p, 'agent-viewer');
  await p.context().close();
});
