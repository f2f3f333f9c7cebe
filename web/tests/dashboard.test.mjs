// The dashboards: /watch/{id} with a viewer token shows, live, output another client produces
// (and survives a dropped connection without repeating a line); the admin overview shows the
// sessions with CPU and memory, the warm pool, the gateways and metrics charts that move.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, viewerToken, rest, BASE, USER, ADMIN, signedIn, dropConnections, cleanUp } from './harness.mjs';

let browser, id;
before(async () => {
  browser = await launch();
  id = await createSession(USER);
});
after(() => cleanUp(browser, id));

const watchText = (page) => page.locator('.watch-term .xterm-rows').innerText();

test('/watch/{id} with a viewer token shows another client\'s output live', async () => {
  const viewer = await viewerToken(id, 'wall-screen');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await ctx.newPage();
  await page.goto(`${BASE}/watch/${id}#token=${viewer}`);
  await page.locator('.watch-head .conn[data-up=true]').waitFor();
  assert.ok(!page.url().includes('token'));
  await page.locator('.watch-status [data-status=READY]').waitFor();
  const r = await rest('POST', `/api/v1/sessions/${id}/actions`, {
    token: USER, body: { action: 'run', args: { command: 'for i in 1 2 3 4; do echo "wall $i"; sleep 0.5; done' } },
  });
  assert.equal(r.status, 202);
  await page.waitForFunction(() => /wall 1/.test(document.querySelector('.watch-term .xterm-rows')?.innerText || ''));
  assert.doesNotMatch(await watchText(page), /exit 0/, 'the output came only with the observation');
  assert.ok(await dropConnections() > 0);
  await page.waitForFunction(() => /\[exit 0\]/.test(document.querySelector('.watch-term .xterm-rows')?.innerText || ''), null, { timeout: 30000 });
  const text = await watchText(page);
  for (let i = 1; i <= 4; i++) {
    assert.equal(text.match(new RegExp(`^wall ${i}\\s*$`, 'gm'))?.length, 1, `"wall ${i}" not once in:\n${text}`);
  }
  assert.match(text, /alice \$ for i in/);
  await shot(page, 'watch-dashboard');
  await ctx.close();
});

test('/watch/ without a token says what to do', async () => {
  const page = await browser.newPage();
  await page.goto(`${BASE}/watch/${id}`);
  await page.getByText('This dashboard needs a token').waitFor();
  await page.close();
});

test('the admin overview: sessions with CPU and memory, pool, gateways, live charts', async () => {
  const page = await signedIn(browser, ADMIN, { path: '/' });
  await page.getByTestId('role').waitFor();
  await page.goto(page.url().replace(/#.*/, '') + '#/admin');
  const row = page.locator(`tr[data-session="${id}"]`);
  await row.waitFor();
  await row.locator('[data-status=READY]').waitFor();
  await page.waitForFunction((sid) => /%/.test(document.querySelector(`tr[data-session="${sid}"] [data-cpu]`)?.textContent || ''), id, { timeout: 20000 });
  assert.match(await row.locator('[data-mem]').textContent(), /iB/);
  await page.locator('[data-profile=default]').waitFor();
  await page.locator('tr[data-gateway] .b-ok').first().waitFor();
  // Work for the charts: a few actions, then the latency and rate charts have samples.
  for (let i = 0; i < 5; i++) {
    await rest('POST', `/api/v1/sessions/${id}/actions?wait=true`, { token: USER, body: { action: 'run', args: { command: `echo chart-${i}` } } });
  }
  await page.waitForFunction(() => Number(document.querySelector('[data-chart="actions/s"]')?.dataset.samples) >= 4, null, { timeout: 20000 });
  const latency = await page.locator('[data-chart="action latency p50"] .value').textContent();
  assert.match(latency, /ms|—/);
  await shot(page, 'admin-overview');
  await page.context().close();
});
