// The agent view shows the plugins' observations (issue 20): a run_ipython cell with its output
// and the PNG it displayed, and a browse with the page's url, its screenshot and its text.
// Actions come through REST, as an agent's would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, rest, USER, sessionPage, cleanUp } from './harness.mjs';

let browser, page, id;
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  page = await sessionPage(browser, id, { tab: 'agent' });
});
after(() => cleanUp(browser, id));

const entries = () => page.locator('[data-panel=agent] article.entry');
const act = (action) => rest('POST', `/api/v1/sessions/${id}/actions?wait=true`, { token: USER, body: action });

test('a run_ipython cell shows its output and its image', async () => {
  const n = await entries().count();
  const r = await act({
    action: 'run_ipython', args: {
      code: "print('hello from the kernel')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()",
    },
    timeout: 120,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const e = entries().nth(n);
  await e.and(page.locator('[data-observed=run_ipython]')).waitFor({ timeout: 30000 });
  assert.equal(await e.locator('header .kind').textContent(), 'run_ipython');
  assert.equal(await e.locator('header .what').textContent(), "print('hello from the kernel') …");
  assert.match(await e.locator('pre.output').first().textContent(), /hello from the kernel/);
  assert.equal(await e.locator('.badge').textContent(), 'ipython');
  const img = e.locator('img.cell-image');
  assert.equal(await img.count(), 1);
  assert.ok(await img.evaluate((el) => el.complete && el.naturalWidth > 100), 'the PNG is drawn');
  assert.match(await e.locator('.foot').textContent(), /\[Jupyter current working directory: \/workspace\]/);
  await shot(page, 'agent-ipython');
});

test('a browse shows the url, the screenshot and the page text', async () => {
  const w = await act({ action: 'write', args: { path: '/workspace/page.html',
    content: '<html><head><title>T</title></head><body><h1>Seen by the browser</h1><p>plain words</p></body></html>' } });
  assert.equal(w.status, 200);
  const n = await entries().count();
  const r = await act({ action: 'browse', args: { url: 'file:///workspace/page.html' }, timeout: 120 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const e = entries().nth(n);
  await e.and(page.locator('[data-observed=browse]')).waitFor({ timeout: 30000 });
  assert.equal(await e.locator('header .what').textContent(), 'file:///workspace/page.html');
  assert.equal(await e.locator('.badge').textContent(), 'page');
  assert.equal(await e.locator('.browse-url code').textContent(), 'file:///workspace/page.html');
  const img = e.locator('img.screenshot');
  assert.ok(await img.evaluate((el) => el.complete && el.naturalWidth === 1280), 'the screenshot is drawn');
  assert.match(await e.locator('pre.page').textContent(), /# Seen by the browser\n\nplain words/);
  await shot(page, 'agent-browse');
});

test('a browser error shows as one', async () => {
  const n = await entries().count();
  const r = await act({ action: 'browse_interactive', args: { browser_actions: 'click("no-such-bid")' }, timeout: 120 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const e = entries().nth(n);
  await e.and(page.locator('[data-observed=browse]')).waitFor({ timeout: 30000 });
  assert.equal(await e.locator('header .kind').textContent(), 'browse_interactive');
  assert.equal(await e.locator('.badge').textContent(), 'browse error');
  assert.match(await e.locator('pre.error').textContent(), /Could not find element with bid "no-such-bid"/);
  assert.equal(await e.locator('details summary').textContent(), 'accessibility tree');
});
