// The Files tab follows the sandbox by its file events (docs/api.md, "File events"), not by
// polling: a file a command makes in an open folder appears with no click, carried by a `files`
// message on the session's socket; an open file a command changes shows its new text, and one
// with unsaved edits keeps them and says so in a bar above it (Reload takes the disk's text).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, rest, USER, sessionPage, cleanUp, waitScreen } from './harness.mjs';

let browser, page, id;
const frames = [];   // the `files` messages the page's session socket received, in order
const listings = []; // the folders the page listed, in order, each with the frames seen before it
const node = (path) => page.locator(`.tree [data-path="${path}"]`);
const shownText = () => page.locator('.editor-box:not([hidden]) .cm-content').textContent();
const command = (cmd) => rest('POST', `/api/v1/sessions/${id}/actions?wait=true`, {
  token: USER, body: { action: 'run', args: { command: cmd } },
});
/** Whether a files message received names path (or a summary over it). */
const named = (path, upTo = frames.length) => frames.slice(0, upTo).some((m) => m.events.some((e) =>
  e.path === path || ((e.event === 'many' || e.event === 'resync') && path.startsWith(e.path + '/'))));

before(async () => {
  browser = await launch();
  id = await createSession(USER);
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=src/notes.txt`, { token: USER, body: 'first\n' });
  page = await sessionPage(browser, id);
  page.on('websocket', (ws) => {
    if (!/\/ws\/sessions\/[^/]+(\?|$)/.test(ws.url())) return;
    ws.on('framereceived', ({ payload }) => {
      try {
        const m = JSON.parse(payload);
        if (m.type === 'files') frames.push(m);
      } catch { /* not JSON */ }
    });
  });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.endsWith('/files') && r.method() === 'GET') listings.push({ dir: u.searchParams.get('path'), frames: frames.length });
  });
  await page.reload(); // its session socket opens again, seen by the listeners above
  await page.locator('[data-terminal="1"] .xterm-rows').waitFor();
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
  await page.locator('[data-tab=files]').click();
});
after(() => cleanUp(browser, id));

test('a file a command makes in an open folder appears with no click, by a file event', async () => {
  await node('/workspace/src').click();
  await node('/workspace/src/notes.txt').waitFor();
  // the command runs in a terminal: no action of the session, nothing but the sandbox's word
  await page.locator('[data-tab=term1]').click();
  await page.locator('[data-terminal="1"] .xterm').click();
  await page.keyboard.type('echo made > /workspace/src/made-by-a-command.txt\n');
  await page.locator('[data-tab=files]').click();
  await node('/workspace/src/made-by-a-command.txt').waitFor({ timeout: 20000 });
  await shot(page, 'file-events-tree');
  assert.ok(named('/workspace/src/made-by-a-command.txt'), 'no files message named the new file');
  // the listing that showed it followed the event (it was not a timer that happened to run)
  const after = listings.filter((l) => l.dir === '/workspace/src' && named('/workspace/src/made-by-a-command.txt', l.frames));
  assert.ok(after.length > 0, `no listing of /workspace/src after the event: ${JSON.stringify(listings)}`);
});

test('an open file changed by a command shows its new text; with unsaved edits a bar says so', async () => {
  await node('/workspace/src/notes.txt').click();
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'first' }).waitFor();
  assert.equal((await command('echo second > /workspace/src/notes.txt')).status, 200);
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'second' }).waitFor({ timeout: 20000 });
  assert.doesNotMatch(await shownText(), /first/);
  assert.equal(await page.locator('.file-bar .dirty:not([hidden])').count(), 0, 'a reload from disk is no edit');

  // unsaved edits: kept, and the bar above the text says the file changed
  await page.locator('.editor-box:not([hidden]) .cm-line').first().click();
  await page.keyboard.press('End');
  await page.keyboard.type(' (mine)');
  await page.locator('.file-bar .dirty:not([hidden])').waitFor();
  assert.equal((await command('echo third > /workspace/src/notes.txt')).status, 200);
  const notice = page.locator('.editor-box:not([hidden]) .disk-notice[data-notice=changed]');
  await notice.waitFor({ timeout: 20000 });
  assert.match(await notice.textContent(), /notes\.txt changed on disk/);
  assert.match(await shownText(), /second \(mine\)/);
  await shot(page, 'file-events-notice');
  await notice.locator('[data-action=reload]').click();
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'third' }).waitFor();
  await notice.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.file-bar .dirty:not([hidden])').count(), 0);

  // its own save is not news: once the tab has read the file again after the save's events,
  // no bar, the text as saved
  const tab = page.locator('.editor-tabs [data-file="/workspace/src/notes.txt"]');
  const checks = async () => Number(await tab.getAttribute('data-disk-checks') || 0);
  await page.locator('.editor-box:not([hidden]) .cm-line').first().click();
  await page.keyboard.press('End');
  await page.keyboard.type(' saved here');
  const before = await checks();
  await page.keyboard.press('Control+s');
  await page.locator('.file-bar .dirty[hidden]').waitFor({ state: 'attached' });
  const r = await rest('GET', `/api/v1/sessions/${id}/files/content?path=src/notes.txt`, { token: USER });
  assert.equal(r.body.content, 'third saved here\n');
  await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel)?.dataset.diskChecks || 0) > n,
    ['.editor-tabs [data-file="/workspace/src/notes.txt"]', before], { timeout: 20000 });
  assert.equal(await page.locator('.disk-notice').count(), 0, 'the tab took its own save for a change');
  assert.match(await shownText(), /third saved here/);
  // a later change by a command still shows
  assert.equal((await command('echo fourth > /workspace/src/notes.txt')).status, 200);
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'fourth' }).waitFor({ timeout: 20000 });
});
