// A viewer token (read-only, one session) sees no control that would change anything: no
// create form, no pause/resume/delete, no terminal; the server refuses it all the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, signedIn, shot, createSession, viewerToken, rest, USER, cleanUp } from './harness.mjs';

let browser, id, viewer;
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  viewer = await viewerToken(id);
});
after(() => cleanUp(browser, id));

test('a viewer lands on its session with no write controls', async () => {
  const page = await signedIn(browser, viewer);
  await page.waitForURL(new RegExp(`#/s/${id}`));
  assert.equal(await page.getByTestId('role').textContent(), 'viewer');
  await page.locator('.session-head [data-status=READY]').waitFor();
  for (const sel of ['[data-action=pause]', '[data-action=resume]', '[data-action=delete]',
    'button.tab.add', '[data-terminal]', 'form.create']) {
    assert.equal(await page.locator(sel).count(), 0, `${sel} is shown to a viewer`);
  }
  await page.keyboard.press('Alt+t');
  assert.equal(await page.locator('[data-terminal]').count(), 0);
  await shot(page, 'viewer-session');
  // The list is not for viewers: #/ sends them back to their session.
  await page.goto(page.url().replace(/#.*/, '') + '#/');
  await page.waitForURL(new RegExp(`#/s/${id}`));
  // And the server agrees: a viewer's writes are refused.
  assert.equal((await rest('POST', `/api/v1/sessions/${id}/pause`, { token: viewer })).status, 403);
  assert.equal((await rest('DELETE', `/api/v1/sessions/${id}`, { token: viewer })).status, 403);
  await page.context().close();
});
