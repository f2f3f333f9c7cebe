// The sessions list: create one with env and limits from the form, live status badges (a
// change made elsewhere shows up without a reload), pause, resume, delete; both themes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, signedIn, shot, rest, createSession, USER } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const row = (page, id) => page.locator(`tr[data-session="${id}"]`);
const status = (page, id) => row(page, id).locator('[data-status]');

test('create from the form, then pause, resume and delete from the list', async () => {
  const page = await signedIn(browser, USER);
  await page.getByRole('heading', { name: 'New session' }).waitFor();
  await page.locator('textarea[name=env]').fill('GREETING=hi from the form');
  await page.locator('input[name=idle_timeout]').fill('900');
  await page.getByRole('button', { name: 'Create session' }).click();
  await page.waitForURL(/#\/s\/s-/, { timeout: 60000 });
  const id = /#\/s\/(s-[0-9a-f]+)/.exec(page.url())[1];
  const r = await rest('GET', `/api/v1/sessions/${id}`, { token: USER });
  assert.equal(r.status, 200);
  assert.equal(r.body.status, 'READY');
  assert.equal(r.body.idle_timeout, 900);
  const env = await rest('POST', `/api/v1/sessions/${id}/actions?wait=true`, {
    token: USER, body: { action: 'run', args: { command: 'echo "$GREETING"' } },
  });
  assert.equal(env.body.observation.content.trim(), 'hi from the form');

  await page.goto(page.url().replace(/#.*/, '#/'));
  await status(page, id).filter({ hasText: 'READY' }).waitFor();
  await row(page, id).locator('[data-action=pause]').click();
  await status(page, id).and(page.locator('[data-status=PAUSED]')).waitFor();
  assert.equal((await rest('GET', `/api/v1/sessions/${id}`, { token: USER })).body.status, 'PAUSED');
  await row(page, id).locator('[data-action=resume]').click();
  await status(page, id).and(page.locator('[data-status=READY]')).waitFor();
  // Delete asks in the row (no dialog): Cancel keeps it, Delete stops it
  page.on('dialog', (d) => { d.dismiss(); assert.fail(`a dialog opened: ${d.message()}`); });
  await row(page, id).locator('[data-action=delete]').click();
  await row(page, id).locator('[data-action=cancel-delete]').click();
  await row(page, id).locator('[data-action=delete]').click();
  await row(page, id).getByText('Delete it?').waitFor();
  await shot(page, 'sessions-delete-asked');
  await row(page, id).locator('[data-action=confirm-delete]').click();
  await row(page, id).waitFor({ state: 'detached' });
  assert.equal((await rest('GET', `/api/v1/sessions/${id}`, { token: USER })).body.status, 'STOPPED');
  // Its page says it has ended and what to do.
  await page.goto(page.url().replace(/#.*/, '') + '#/s/' + id);
  await page.getByText(`Session ${id} has ended`).waitFor();
  await page.getByRole('link', { name: 'The sessions list' }).waitFor();
  await page.context().close();
});

test('status badges follow changes made elsewhere, live', async () => {
  const page = await signedIn(browser, USER);
  const a = await createSession(USER), b = await createSession(USER);
  await status(page, a).and(page.locator('[data-status=READY]')).waitFor();
  await status(page, b).and(page.locator('[data-status=READY]')).waitFor();
  assert.equal(await row(page, a).locator('td').nth(2).textContent(), 'alice');
  await rest('POST', `/api/v1/sessions/${a}/pause`, { token: USER });
  await status(page, a).and(page.locator('[data-status=PAUSED]')).waitFor();
  await shot(page, 'sessions-dark');
  await page.keyboard.press('Alt+k');
  await page.getByRole('heading', { name: 'Keyboard shortcuts' }).waitFor();
  await shot(page, 'shortcuts');
  await page.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('button', { name: 'toggle theme' }).click();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
  await shot(page, 'sessions-light');
  await rest('POST', `/api/v1/sessions/${a}/resume`, { token: USER });
  await rest('DELETE', `/api/v1/sessions/${a}`, { token: USER });
  await row(page, a).waitFor({ state: 'detached' });
  await page.getByLabel('Show stopped').check();
  await status(page, a).and(page.locator('[data-status=STOPPED]')).waitFor();
  await rest('DELETE', `/api/v1/sessions/${b}`, { token: USER });
  await page.context().close();
});
