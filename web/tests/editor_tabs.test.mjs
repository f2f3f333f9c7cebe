// Editing like an IDE (issue 33, item 6): several open files as editor tabs (each keeps its text
// and unsaved changes while another is shown, a ● marks the unsaved ones, closing one asks in
// the page: Cancel, Discard, Save); find across files (the sandbox's grep as a command of the
// session: file:line:text results, Enter or a click opens the file at the line); a reload shows
// the tab that was selected (a terminal among several, or Files with its open files).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, rest, USER, sessionPage, cleanUp, waitScreen } from './harness.mjs';

let browser, page, id;
const dialogs = [];
const node = (path) => page.locator(`.tree [data-path="${path}"]`);
const fileTab = (path) => page.locator(`.editor-tabs [data-file="${path}"]`);
const read = async (p) => (await rest('GET', `/api/v1/sessions/${id}/files/content?path=${p}`, { token: USER })).body.content;
const lines = Array.from({ length: 60 }, (_, i) => (i === 39 ? 'the NEEDLE is on line 40' : `line ${i + 1}`)).join('\n') + '\n';

before(async () => {
  browser = await launch();
  id = await createSession(USER);
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=a.txt`, { token: USER, body: 'alpha\nNEEDLE in a\n' });
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=deep/b.txt`, { token: USER, body: lines });
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=deep/c.md`, { token: USER, body: 'no match here\n' });
  page = await sessionPage(browser, id);
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
  await page.locator('[data-tab=files]').click();
});
after(() => cleanUp(browser, id));

test('open files are tabs: switch, a dot for unsaved changes, each keeps its own text', async () => {
  await node('/workspace/a.txt').click();
  await node('/workspace/deep').click();
  await node('/workspace/deep/b.txt').click();
  await fileTab('/workspace/deep/b.txt').and(page.locator('[aria-selected=true]')).waitFor();
  assert.equal(await page.locator('.editor-tabs [role=tab]').count(), 2);
  await fileTab('/workspace/a.txt').click();
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'alpha' }).waitFor();
  await page.locator('.editor-box:not([hidden]) .cm-line').first().click();
  await page.keyboard.press('End');
  await page.keyboard.type(' edited');
  await fileTab('/workspace/a.txt').and(page.locator('[data-dirty=true]')).waitFor();
  // another tab: its own text; back: the unsaved edit is still there
  await fileTab('/workspace/deep/b.txt').click();
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'line 1' }).waitFor();
  assert.equal(await fileTab('/workspace/a.txt').getAttribute('data-dirty'), 'true');
  await fileTab('/workspace/deep/b.txt').focus(); // (a click sends the keyboard to the editor)
  await page.keyboard.press('ArrowLeft'); // the tabs are a tablist: the arrow selects a.txt
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'alpha edited' }).waitFor();
  await shot(page, 'editor-tabs-dirty');
});

test('closing a tab with unsaved changes asks in the page: Cancel keeps, Discard drops, Save saves', async () => {
  const bar = page.locator('.confirm-bar:not([hidden])');
  await fileTab('/workspace/a.txt').locator('.close').click();
  await bar.waitFor();
  assert.match(await bar.textContent(), /a\.txt has unsaved changes/);
  await shot(page, 'editor-tabs-close-asked');
  await bar.getByRole('button', { name: 'Cancel' }).click();
  await bar.waitFor({ state: 'detached' });
  assert.equal(await fileTab('/workspace/a.txt').count(), 1);
  // Escape on the question cancels too; Delete on a tab closes it (and asks)
  await fileTab('/workspace/a.txt').focus();
  await page.keyboard.press('Delete');
  await bar.waitFor();
  await page.keyboard.press('Escape');
  await bar.waitFor({ state: 'detached' });
  await fileTab('/workspace/a.txt').locator('.close').click();
  await bar.getByRole('button', { name: 'Discard' }).click();
  await fileTab('/workspace/a.txt').waitFor({ state: 'detached' });
  assert.equal(await read('a.txt'), 'alpha\nNEEDLE in a\n');
  // again, and Save
  await node('/workspace/a.txt').click();
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'alpha' }).waitFor();
  await page.locator('.editor-box:not([hidden]) .cm-line').first().click();
  await page.keyboard.press('End');
  await page.keyboard.type(' kept');
  await fileTab('/workspace/a.txt').locator('.close').click();
  await bar.getByRole('button', { name: 'Save' }).click();
  await fileTab('/workspace/a.txt').waitFor({ state: 'detached' });
  assert.equal(await read('a.txt'), 'alpha kept\nNEEDLE in a\n');
  assert.deepEqual(dialogs, [], 'a dialog opened');
});

test('find across files: file:line:text from the sandbox, Enter opens the file at the line', async () => {
  const box = page.getByRole('searchbox', { name: 'find in files' });
  await box.fill('NEEDLE');
  await box.press('Enter');
  const hits = page.locator('.search-results [role=option]');
  await hits.first().waitFor({ timeout: 30000 });
  const found = await hits.evaluateAll((xs) => xs.map((x) => `${x.dataset.path}:${x.dataset.line}`).sort());
  assert.deepEqual(found, ['/workspace/a.txt:2', '/workspace/deep/b.txt:40']);
  assert.match(await page.locator('.search-status').textContent(), /2 lines with “NEEDLE”/);
  assert.match(await page.locator('.search-hit[data-line="40"]').textContent(), /deep\/b\.txt:40.*the NEEDLE is on line 40/);
  await shot(page, 'editor-search-results');
  // keyboard: ↓ from the box to the results, Enter opens
  await box.focus();
  await page.keyboard.press('ArrowDown');
  if (await page.evaluate(() => document.activeElement?.dataset.line) !== '40') await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await fileTab('/workspace/deep/b.txt').and(page.locator('[aria-selected=true]')).waitFor();
  await page.waitForFunction(() => /NEEDLE is on line 40/.test(document.querySelector('.editor-box:not([hidden]) .cm-activeLine')?.textContent || ''));
  await page.waitForFunction(() => !!document.activeElement?.closest('.cm-editor'));
  // nothing found: said so
  await box.fill('no such words anywhere');
  await box.press('Enter');
  await page.locator('.search-status', { hasText: 'No file holds' }).waitFor({ timeout: 30000 });
  await shot(page, 'editor-search-line');
});

test('a reload shows the tab that was selected: Files with its open files', async () => {
  await node('/workspace/deep/c.md').click();
  await fileTab('/workspace/deep/b.txt').click(); // b.txt shown, c.md open behind it
  await page.reload();
  await page.locator('.tabs [data-tab=files][aria-selected=true]').waitFor();
  await fileTab('/workspace/deep/c.md').waitFor();
  await fileTab('/workspace/deep/b.txt').and(page.locator('[aria-selected=true]')).waitFor();
  await page.locator('.editor-box:not([hidden]) .cm-content', { hasText: 'line 1' }).waitFor();
  assert.equal(await page.locator('[data-terminal]').count(), 1, 'the terminal was taken back, not a new one made');
  await shot(page, 'editor-tabs-restored');
});

test('a reload shows the terminal that was selected, not the last one', async () => {
  await page.locator('[data-tab=term1]').click();
  await page.keyboard.press('Alt+t');
  await page.locator('[data-terminal="2"] .xterm-rows').waitFor();
  await page.locator('[data-tab=term1]').click(); // the first of two
  await page.reload();
  await page.locator('[data-terminal="2"] .xterm-rows').waitFor({ state: 'attached' });
  await page.locator('.tabs [data-tab=term1][aria-selected=true]').waitFor();
  assert.equal(await page.locator('[data-terminal="2"]').isVisible(), false);
  assert.equal(await page.locator('[data-terminal="1"]').isVisible(), true);
  await page.waitForFunction(() => document.activeElement?.closest('[data-terminal="1"]'));
});
