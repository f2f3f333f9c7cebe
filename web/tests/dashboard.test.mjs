// The dashboards: /watch/{id} with a viewer token shows, live, output another client produces
// (and survives a dropped connection without repeating a line) and what people type into the
// session's terminals; the admin overview shows the sessions with CPU and memory, the warm
// pool, the gateways and metrics charts that move, with axes and a past older than the page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, viewerToken, rest, BASE, USER, ADMIN, signedIn, dropConnections, cleanUp, sessionPage, typeIn, waitScreen } from './harness.mjs';

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

test('/watch/{id} shows what a person types into a terminal, read-only', async () => {
  const viewer = await viewerToken(id, 'wall-screen');
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const wall = await ctx.newPage();
  await wall.goto(`${BASE}/watch/${id}#token=${viewer}`);
  await wall.locator('.watch-head .conn[data-up=true]').waitFor();
  const ide = await sessionPage(browser, id);
  await waitScreen(ide, /[$#][\s\u00a0]*$/m);
  // typed as a person does: a slip corrected with Backspace, then Enter
  await typeIn(ide, 'echo hand-typo');
  for (let i = 0; i < 4; i++) await ide.keyboard.press('Backspace');
  await ide.keyboard.type('made');
  await ide.keyboard.press('Enter');
  await waitScreen(ide, /^hand-made\s*$/m);
  await wall.waitForFunction(() => /alice ⌨ t\d+ echo hand-made\s*$/m.test(document.querySelector('.watch-term .xterm-rows')?.innerText || ''));
  const text = await watchText(wall);
  assert.doesNotMatch(text, /hand-typo/, 'the line as the shell got it, not each key');
  assert.match(await wall.locator('.watch-cmd').textContent(), /echo hand-made/);
  // read-only: the wall's terminal takes no input
  await wall.locator('.watch-term').click();
  await wall.keyboard.type('echo from-the-wall\n');
  assert.doesNotMatch(await ide.locator('[data-terminal="1"] .xterm-rows').innerText(), /from-the-wall/);
  await shot(wall, 'watch-typed');
  await ide.context().close();
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

test('the admin charts: a past older than the page, from the service, with axes', async () => {
  // the service's history: the gateways copy their counters every 10 s (three copies: 20 s+)
  for (let i = 0; i < 60; i++) {
    const r = await rest('GET', '/api/v1/metrics/history?seconds=600');
    if (r.body.samples?.length >= 3) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  const page = await signedIn(browser, ADMIN, { path: '/' });
  await page.getByTestId('role').waitFor();
  const opened = Date.now() / 1000;
  await page.goto(page.url().replace(/#.*/, '') + '#/admin');
  const chart = page.locator('[data-chart="events/s"]');
  await page.waitForFunction(() => Number(document.querySelector('[data-chart="events/s"]')?.dataset.history) >= 2);
  // points from before the page existed: not page memory
  assert.ok(Number(await chart.getAttribute('data-oldest')) < opened - 5, 'the oldest point is not older than the page');
  assert.deepEqual(await chart.locator('.x-axis span').allTextContents(), ['−30 min', '−15 min', 'now']);
  const y = await chart.locator('.y-axis span').allTextContents();
  assert.equal(y.length, 3);
  assert.equal(y[2], '0');
  assert.notEqual(y[0], y[2]);
  await page.getByRole('combobox', { name: 'chart span' }).selectOption({ label: 'last 5 min' });
  assert.deepEqual(await chart.locator('.x-axis span').allTextContents(), ['−5 min', '−2.5 min', 'now']);
  await page.getByRole('combobox', { name: 'chart span' }).selectOption({ label: 'last 30 min' });
  await shot(page, 'admin-charts-history');
  await page.context().close();
});
