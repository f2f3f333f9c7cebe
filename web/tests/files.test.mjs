// The Files tab: the tree follows the workspace (a file made in the terminal appears), a file
// opens in CodeMirror, is edited and saved (read back through REST), created, renamed and
// deleted from the UI (a folder too, from its row), named and confirmed in the tree itself (no
// dialog ever opens); a binary file dropped on the tree uploads byte-identical and downloads
// byte-identical; a viewer gets a read-only editor and no write buttons.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { launch, signedIn, shot, createSession, viewerToken, rest, USER, typeIn, waitScreen, sessionPage, cleanUp } from './harness.mjs';

let browser, page, id;
const dialogs = [];
const node = (path) => page.locator(`.tree [data-path="${path}"]`);
/** Types name into the tree's input row and commits it with Enter. */
async function nameIt(name) {
  const input = page.locator('.tree input.edit-name');
  await input.waitFor();
  await input.fill(name);
  await input.press('Enter');
}
/** Opens folder path in the tree unless it is open. */
async function expand(path) {
  await node(path).waitFor();
  if (await node(path).getAttribute('aria-expanded') === 'false') await node(path).click();
}
/** Answers the question asked in the tree's row for path (delete). */
const confirmDelete = (path) => page.locator(`.tree [data-confirm="${path}"] [data-action=confirm-delete]`).click();
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=src/hello.py`, { token: USER, body: 'def hello():\n    return "hi"\n' });
  page = await sessionPage(browser, id);
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
});
after(() => cleanUp(browser, id));

test('the tree shows the workspace and follows a command run in the terminal', async () => {
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
  await page.locator('[data-tab=files]').click();
  await node('/workspace/src').click();
  await node('/workspace/src/hello.py').waitFor();
  await page.keyboard.press('Alt+1').catch(() => {});
  await page.locator('[data-tab=term1]').click();
  await typeIn(page, 'mkdir -p made && echo x > made/in-terminal.txt\n');
  await page.locator('[data-tab=files]').click();
  await node('/workspace/made').waitFor({ timeout: 15000 });
});

test('open, edit, save with Ctrl+S: the REST API reads the new text', async () => {
  await node('/workspace/src/hello.py').click();
  const editor = page.locator('.cm-content');
  await editor.waitFor();
  assert.match(await editor.textContent(), /def hello/);
  await page.locator('.cm-line').nth(1).click();
  await page.keyboard.press('End');
  await page.keyboard.type('  # edited in the browser');
  await page.locator('.file-bar .dirty:not([hidden])').waitFor();
  await shot(page, 'files-editor');
  await page.keyboard.press('Control+s');
  await page.locator('.file-bar .dirty[hidden]').waitFor({ state: 'attached' });
  const r = await rest('GET', `/api/v1/sessions/${id}/files/content?path=src/hello.py`, { token: USER });
  assert.equal(r.body.content, 'def hello():\n    return "hi"  # edited in the browser\n');
});

test('create, rename and delete from the UI', async () => {
  await node('/workspace/src').click(); // selects src (and folds it)
  await page.locator('[data-action=new-file]').click();
  await nameIt('fresh.md');
  await node('/workspace/src/fresh.md').waitFor();
  await page.locator('.file-bar .path', { hasText: '/workspace/src/fresh.md' }).waitFor();
  await page.locator('.file-bar').getByRole('button', { name: 'Rename', exact: true }).click();
  await nameIt('renamed.md');
  await node('/workspace/src/renamed.md').waitFor();
  await node('/workspace/src/fresh.md').waitFor({ state: 'detached' });
  await page.locator('.file-bar').getByRole('button', { name: 'Delete', exact: true }).click();
  await confirmDelete('/workspace/src/renamed.md');
  await node('/workspace/src/renamed.md').waitFor({ state: 'detached' });
  const r = await rest('GET', `/api/v1/sessions/${id}/files/stat?path=src/renamed.md`, { token: USER });
  assert.equal(r.status, 404);
});

test('new folder and a refused rename go through the file routes, not commands', async () => {
  const actions = async () => (await rest('GET', `/api/v1/sessions/${id}/events?type=action&limit=1000`, { token: USER })).body.events.length;
  const before = await actions();
  await page.locator('[data-action=new-folder]').click();
  await nameIt('/workspace/made-here/inner');
  await node('/workspace/made-here').waitFor();
  let r = await rest('GET', `/api/v1/sessions/${id}/files/stat?path=made-here/inner`, { token: USER });
  assert.equal(r.body.type, 'directory');
  // a rename onto a file that exists is refused (409 exists), and says so; both files stay
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=made-here/a.txt`, { token: USER, body: 'A' });
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=made-here/b.txt`, { token: USER, body: 'B' });
  await expand('/workspace/made-here');
  await node('/workspace/made-here/a.txt').click();
  await page.locator('.file-bar .path', { hasText: '/workspace/made-here/a.txt' }).waitFor();
  await page.locator('.file-bar').getByRole('button', { name: 'Rename', exact: true }).click();
  await nameIt('b.txt');
  // said in the row, under the name, which stays for another try
  await page.locator('.tree .edit-error', { hasText: 'b.txt already exists' }).waitFor();
  await shot(page, 'files-rename-refused');
  await page.locator('.tree input.edit-name').press('Escape');
  await node('/workspace/made-here/a.txt').waitFor();
  r = await rest('GET', `/api/v1/sessions/${id}/files/content?path=made-here/b.txt`, { token: USER });
  assert.equal(r.body.content, 'B');
  // the open file is deleted (DELETE files?path=)
  await page.locator('.file-bar').getByRole('button', { name: 'Delete', exact: true }).click();
  await confirmDelete('/workspace/made-here/a.txt');
  await node('/workspace/made-here/a.txt').waitFor({ state: 'detached' });
  assert.equal(await actions(), before, 'the Files tab ran a command');
});

test('a folder renamed and deleted from its row: the open file follows it, then closes', async () => {
  await rest('PUT', `/api/v1/sessions/${id}/files/content?path=box/inner/note.txt`, { token: USER, body: 'N' });
  await page.locator('.tree-tools [title=Refresh]').click();
  await node('/workspace/box').click();
  await node('/workspace/box/inner').click();
  await node('/workspace/box/inner/note.txt').click();
  await page.locator('.file-bar .path', { hasText: '/workspace/box/inner/note.txt' }).waitFor();
  await node('/workspace/box').hover();
  await node('/workspace/box').locator('[data-action=rename]').click();
  await nameIt('crate');
  await node('/workspace/crate/inner/note.txt').waitFor(); // still expanded, under its new name
  await page.locator('.file-bar .path', { hasText: '/workspace/crate/inner/note.txt' }).waitFor();
  let r = await rest('GET', `/api/v1/sessions/${id}/files/content?path=crate/inner/note.txt`, { token: USER });
  assert.equal(r.body.content, 'N');
  await shot(page, 'files-folder-renamed');
  await node('/workspace/crate').hover();
  await node('/workspace/crate').locator('[data-action=delete]').click();
  await confirmDelete('/workspace/crate');
  await node('/workspace/crate').waitFor({ state: 'detached' });
  // its editor tab closed with it; the file bar shows another open file, or none
  await page.locator('.editor-tabs [data-file="/workspace/crate/inner/note.txt"]').waitFor({ state: 'detached' });
  assert.doesNotMatch(await page.locator('.file-bar .path').textContent(), /crate/);
  r = await rest('GET', `/api/v1/sessions/${id}/files/stat?path=crate`, { token: USER });
  assert.equal(r.status, 404);
});

test('drop a binary file on a folder: uploaded, then downloaded, byte-identical', async () => {
  const data = Array.from({ length: 300000 }, (_, i) => (i * 7919 + (i >> 8)) & 255);
  await page.evaluate(async (bytes) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], 'blob.bin', { type: 'application/octet-stream' }));
    const target = document.querySelector('.tree [data-path="/workspace/made"]');
    for (const type of ['dragenter', 'dragover', 'drop']) {
      target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, data);
  await node('/workspace/made/blob.bin').waitFor();
  const got = await rest('GET', `/api/v1/sessions/${id}/files/download?path=made/blob.bin`, { token: USER, raw: true });
  assert.deepEqual([...got.body], data);
  await node('/workspace/made/blob.bin').click();
  await page.getByText('This file is not text.').waitFor();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download it' }).click()]);
  assert.equal(dl.suggestedFilename(), 'blob.bin');
  assert.deepEqual([...readFileSync(await dl.path())], data);
  assert.deepEqual(dialogs, [], 'a dialog opened');
});

test('a viewer gets a read-only editor and no write buttons', async () => {
  const viewer = await viewerToken(id);
  const p = await signedIn(browser, viewer, { theme: 'light' });
  await p.waitForURL(new RegExp(`#/s/${id}`));
  await p.locator('[data-tab=files]').click();
  await p.locator('.tree [data-path="/workspace/src"]').click();
  await p.locator('.tree [data-path="/workspace/src/hello.py"]').click();
  await p.locator('.cm-content').waitFor();
  assert.equal(await p.locator('.cm-content').getAttribute('contenteditable'), 'false');
  for (const name of ['Save', 'Rename', 'Delete']) assert.equal(await p.getByRole('button', { name, exact: true }).count(), 0, name);
  assert.equal(await p.locator('[data-action=new-file], [data-action=new-folder], [data-action=rename], [data-action=delete]').count(), 0);
  await shot(p, 'files-viewer-light');
  await p.context().close();
});
