// The keyboard alone (issue 33, item 5): out of a terminal with Ctrl+Shift+← (it keeps Tab for
// the shell), the tab bar's arrow keys (an ARIA tablist), the file tree reached by Tab and
// worked with arrows and Enter (an ARIA tree: a file opens in the editor, which takes the
// keyboard), new file, rename (F2) and delete (Delete) done in the tree's rows: an input or a
// question in the row, Enter commits, Escape cancels, a refusal said in place. No dialog opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, rest, USER, sessionPage, cleanUp, waitScreen, typeIn } from './harness.mjs';

let browser, page, id;
const dialogs = [];
const node = (path) => page.locator(`.tree [data-path="${path}"]`);
const focused = () => page.evaluate(() => {
  const a = document.activeElement;
  return { tab: a?.dataset?.tab || null, path: a?.dataset?.path || null, role: a?.getAttribute('role'),
    tag: a?.tagName, action: a?.dataset?.action || null, editor: !!a?.closest?.('.cm-editor'), cls: a?.className || '' };
});
const selectedTab = () => page.locator('.tabs [role=tab][aria-selected=true]').getAttribute('data-tab');
const stat = async (p) => (await rest('GET', `/api/v1/sessions/${id}/files/stat?path=${p}`, { token: USER })).status;

before(async () => {
  browser = await launch();
  id = await createSession(USER);
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=src/hello.py`, { token: USER, body: 'def hello():\n    return "hi"\n' });
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=notes.md`, { token: USER, body: '# notes\n' });
  page = await sessionPage(browser, id);
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
});
after(() => cleanUp(browser, id));

test('Ctrl+Shift+← takes the keyboard out of the terminal to its tab; arrows walk the tab bar', async () => {
  await typeIn(page, 'echo in-the-shell');
  assert.ok((await focused()).cls.includes('xterm-helper-textarea'), 'the terminal has the keyboard');
  await page.keyboard.press('Tab'); // the shell's (completion): the keyboard stays in the terminal
  assert.ok((await focused()).cls.includes('xterm-helper-textarea'));
  await page.keyboard.press('Control+Shift+ArrowLeft');
  assert.equal((await focused()).tab, 'term1');
  assert.match(await page.locator('[data-tab=term1]').getAttribute('title'), /Ctrl\+Shift\+←/);
  // one tab in the Tab order, the selected one; ← → Home End move and select
  const tabs = await page.locator('.tabs [role=tab]').evaluateAll((ts) => ts.map((t) => [t.dataset.tab, t.tabIndex]));
  assert.deepEqual(tabs, [['agent', -1], ['files', -1], ['preview', -1], ['term1', 0]]);
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual([(await focused()).tab, await selectedTab()], ['preview', 'preview']);
  await page.keyboard.press('ArrowLeft');
  assert.deepEqual([(await focused()).tab, await selectedTab()], ['files', 'files']);
  assert.equal(await page.locator('#pane-files').getAttribute('role'), 'tabpanel');
  assert.equal(await page.locator('#pane-files').isVisible(), true);
  await page.keyboard.press('Home');
  assert.deepEqual([(await focused()).tab, await selectedTab()], ['agent', 'agent']);
  await page.keyboard.press('End');
  assert.deepEqual([(await focused()).tab, await selectedTab()], ['term1', 'term1']);
  assert.equal((await focused()).tab, 'term1', 'an arrow key does not send the keyboard into the terminal');
  await page.keyboard.press('ArrowRight'); // wraps to the first
  assert.equal(await selectedTab(), 'agent');
  await page.keyboard.press('ArrowRight');
  assert.equal(await selectedTab(), 'files');
  await shot(page, 'keyboard-tabbar');
});

test('the tree is reached by Tab and opens a file with arrows and Enter alone', async () => {
  // from the Files tab, Tab goes through the tree's tools into the tree: one row is a stop
  for (let i = 0; i < 12 && (await focused()).role !== 'treeitem'; i++) await page.keyboard.press('Tab');
  const first = await focused();
  assert.equal(first.role, 'treeitem', 'Tab never reached the tree');
  assert.equal(await page.locator('.tree').getAttribute('role'), 'tree');
  assert.equal(await page.locator('.tree [role=treeitem][tabindex="0"]').count(), 1);
  assert.equal(first.path, '/workspace/src'); // folders first
  assert.equal(await node('/workspace/src').getAttribute('aria-expanded'), 'false');
  await page.keyboard.press('ArrowRight'); // opens the folder, stays on it
  await node('/workspace/src/hello.py').waitFor();
  assert.equal(await node('/workspace/src').getAttribute('aria-expanded'), 'true');
  assert.equal((await focused()).path, '/workspace/src');
  await page.keyboard.press('ArrowRight'); // its first child
  assert.equal((await focused()).path, '/workspace/src/hello.py');
  assert.equal(await node('/workspace/src/hello.py').getAttribute('aria-level'), '2');
  await page.keyboard.press('ArrowDown');
  assert.equal((await focused()).path, '/workspace/notes.md');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowLeft'); // to the parent
  assert.equal((await focused()).path, '/workspace/src');
  await page.keyboard.press('ArrowLeft'); // closes it
  await node('/workspace/src/hello.py').waitFor({ state: 'detached' });
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter'); // opens the file; the editor takes the keyboard
  await page.locator('.cm-content', { hasText: 'def hello' }).waitFor();
  await page.waitForFunction(() => !!document.activeElement?.closest('.cm-editor'));
  assert.equal(await node('/workspace/src/hello.py').getAttribute('aria-selected'), 'true');
  await page.keyboard.press('Control+End');
  await page.keyboard.type('# typed without a mouse\n');
  await page.locator('.file-bar .dirty:not([hidden])').waitFor();
  await page.keyboard.press('Control+s');
  await page.locator('.file-bar .dirty[hidden]').waitFor({ state: 'attached' });
  const r = await rest('GET', `/api/v1/sessions/${id}/files/content?path=src/hello.py`, { token: USER });
  assert.match(r.body.content, /# typed without a mouse/);
  await shot(page, 'keyboard-tree-open');
});

test('a new file is named in the tree: Enter makes it, Escape leaves none', async () => {
  await node('/workspace/src').focus();
  for (let i = 0; i < 12 && (await focused()).action !== 'new-file'; i++) await page.keyboard.press('Shift+Tab');
  assert.equal((await focused()).action, 'new-file');
  await page.keyboard.press('Enter');
  const input = page.locator('.tree [data-edit=file] input');
  await input.waitFor();
  assert.equal((await focused()).tag, 'INPUT');
  await page.keyboard.type('never.txt');
  await page.keyboard.press('Escape');
  await input.waitFor({ state: 'detached' });
  assert.equal(await stat('src/never.txt'), 404);
  await page.keyboard.press('Shift+Tab'); // back on "+ File" (the tree gave the row back)
  for (let i = 0; i < 12 && (await focused()).action !== 'new-file'; i++) await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await input.waitFor();
  await page.keyboard.type('hello.py'); // taken: said under the name, which stays
  await page.keyboard.press('Enter');
  await page.locator('.tree [data-edit=file] .edit-error', { hasText: 'hello.py already exists' }).waitFor();
  await shot(page, 'keyboard-new-file-refused');
  await input.fill('kb.txt');
  await page.keyboard.press('Enter');
  await node('/workspace/src/kb.txt').waitFor();
  await page.locator('.editor-tabs [data-file="/workspace/src/kb.txt"][aria-selected=true]').waitFor();
  assert.equal(await stat('src/kb.txt'), 200);
});

test('F2 renames in the row, Delete asks in the row', async () => {
  await node('/workspace/src/kb.txt').focus();
  await page.keyboard.press('F2');
  const input = page.locator('.tree [data-edit=rename] input');
  await input.waitFor();
  // the name without its extension is selected: typing replaces it
  await page.keyboard.type('notes');
  await page.keyboard.press('Escape');
  await input.waitFor({ state: 'detached' });
  assert.equal((await focused()).path, '/workspace/src/kb.txt');
  await page.keyboard.press('F2');
  await input.waitFor();
  await page.keyboard.type('renamed');
  await page.keyboard.press('Enter');
  await node('/workspace/src/renamed.txt').waitFor();
  await page.waitForFunction(() => document.activeElement?.dataset?.path === '/workspace/src/renamed.txt');
  assert.equal(await stat('src/kb.txt'), 404);
  // the open file followed it
  await page.locator('.editor-tabs [data-file="/workspace/src/renamed.txt"]').waitFor();
  await page.keyboard.press('Delete');
  const ask = page.locator('.tree [data-confirm="/workspace/src/renamed.txt"]');
  await ask.waitFor();
  assert.equal((await focused()).action, 'confirm-delete');
  await shot(page, 'keyboard-delete-asked');
  await page.keyboard.press('Escape');
  await ask.waitFor({ state: 'detached' });
  assert.equal(await stat('src/renamed.txt'), 200);
  assert.equal((await focused()).path, '/workspace/src/renamed.txt');
  await page.keyboard.press('Delete');
  await ask.waitFor();
  await page.keyboard.press('Enter');
  await ask.waitFor({ state: 'detached' });
  assert.equal(await node('/workspace/src/renamed.txt').count(), 0);
  assert.equal(await stat('src/renamed.txt'), 404);
  // the keyboard stays in the tree, on the row after the one deleted
  await page.waitForFunction(() => document.activeElement?.dataset?.path === '/workspace/notes.md');
  assert.deepEqual(dialogs, [], 'a dialog opened');
});

test('the shortcuts list says how to leave a terminal and the editor', async () => {
  await page.keyboard.press('Alt+k');
  const list = page.locator('dialog.shortcuts');
  await list.waitFor();
  assert.match(await list.textContent(), /Ctrl\+Shift\+←.*terminal/);
  assert.match(await list.textContent(), /Escape, then Tab/);
  await shot(page, 'keyboard-shortcuts');
  await page.keyboard.press('Escape');
});
