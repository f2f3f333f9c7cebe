// Ended, unknown and unauthorised states (issue 33, item 3): each is one screen with a sentence
// saying what happened and what to do, no control that writes, and nothing polling the server
// afterwards: an unknown session id, a stopped session, a garbage and a forged #token= link, a
// token reaching its exp while the page is open, a second #token= link opened in the same tab.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, signedIn, shot, rest, createSession, BASE, USER, ADMIN } from './harness.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const QUIET_MS = 5000; // more than two of the views' poll periods (2 s)

/** Counts the page's requests to the server (REST and WebSockets) from now on. */
function countRequests(page) {
  const seen = [];
  page.on('request', (r) => { if (/\/(api|ws|runtime)\//.test(r.url())) seen.push(r.url()); });
  page.on('websocket', (w) => seen.push(w.url()));
  return seen;
}

/** The page sends nothing more to the server over QUIET_MS. */
async function staysQuiet(page, seen) {
  const before = seen.length;
  await page.waitForTimeout(QUIET_MS);
  assert.deepEqual(seen.slice(before), [], 'the page kept asking the server');
}

/** Nothing on the page that changes a session. */
async function noWriteControls(page) {
  for (const sel of ['[data-action=delete]', '[data-action=pause]', '[data-action=resume]', 'button.tab.add',
    '.xterm', '[data-panel=files]', '[data-panel=agent] form']) {
    assert.equal(await page.locator(sel).count(), 0, `${sel} is still there`);
  }
}

test('an unknown session id: a sentence, no write controls, no polling', async () => {
  const page = await signedIn(browser, USER, { path: '/' });
  await page.getByTestId('role').waitFor();
  const seen = countRequests(page);
  await page.evaluate(() => { location.hash = '#/s/s-00000000deadbeef'; });
  const banner = page.locator('.banner');
  await banner.getByText('No session s-00000000deadbeef exists (or it was removed)').waitFor();
  await noWriteControls(page);
  const head = await page.locator('.session-head').innerText();
  assert.doesNotMatch(head, /by \?|old ·/, head);
  assert.doesNotMatch(await page.locator('main').innerText(), /on this gateway/);
  await shot(page, 'state-unknown-session');
  await staysQuiet(page, seen);
  await page.context().close();
});

test('a stopped session: what is left said plainly, no write controls, no polling', async () => {
  const id = await createSession(USER);
  const page = await signedIn(browser, USER, { path: '/' });
  await page.getByTestId('role').waitFor();
  await page.evaluate((sid) => { location.hash = '#/s/' + sid; }, id);
  await page.locator('[data-terminal="1"] .xterm-rows').waitFor();
  const seen = countRequests(page);
  assert.equal((await rest('DELETE', `/api/v1/sessions/${id}`, { token: USER })).status, 200);
  const banner = page.locator('.banner');
  await banner.getByText(`Session ${id} has ended`).waitFor();
  assert.match(await banner.innerText(), /files can no longer be read/);
  await noWriteControls(page);
  assert.doesNotMatch(await page.locator('main').innerText(), /press Enter for a new one|Cannot list the workspace/);
  await shot(page, 'state-stopped-session');
  await staysQuiet(page, seen);
  // opened afresh, it is the same screen
  await page.reload();
  await banner.getByText(`Session ${id} has ended`).waitFor();
  await noWriteControls(page);
  await page.context().close();
});

test('a garbage #token= link says so on the sign-in page', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(`${BASE}/#token=garbage%20from%20a%20chat`);
  await page.getByTestId('signin-notice').getByText("This link's token is not valid").waitFor();
  await page.getByLabel('token').waitFor();
  assert.ok(!page.url().includes('token'), page.url());
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sandpipe.token')), null);
  await shot(page, 'state-garbage-token');
  await ctx.close();
});

test('a forged #token= link shows no admin interface and polls nothing', async () => {
  const [hdr, body] = ADMIN.split('.');
  const forged = `${hdr}.${body}.${'A'.repeat(43)}`;
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  const seen = countRequests(page);
  await page.goto(`${BASE}/#token=${forged}`);
  await page.getByTestId('signin-notice').getByText("This link's token is not valid").waitFor();
  assert.equal(await page.getByTestId('role').count(), 0);
  assert.equal(await page.getByRole('link', { name: 'Overview' }).count(), 0);
  assert.ok(!page.url().includes('token'), page.url());
  await shot(page, 'state-forged-token');
  assert.equal(seen.length, 1, `one request checks the link: ${seen}`);
  await staysQuiet(page, seen);
  await ctx.close();
});

test('a token that expires is noticed when it does, in a sentence', async () => {
  const r = await rest('POST', '/api/v1/tokens', { body: { sub: 'brief', role: 'user', ttl: 3 } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const page = await signedIn(browser, r.body.token);
  await page.getByTestId('role').waitFor();
  const seen = countRequests(page);
  // nothing clicked: the page's own timer signs out at exp
  const notice = page.getByTestId('signin-notice');
  await notice.getByText(/Your token expired at .+, so you were signed out/).waitFor({ timeout: 10000 });
  assert.doesNotMatch(await page.locator('body').innerText(), /\d{9,}/, 'raw epoch numbers');
  assert.equal(await page.getByTestId('role').count(), 0);
  await shot(page, 'state-expired-token');
  await staysQuiet(page, seen);
  await page.context().close();
});

test('a second #token= link in an open tab replaces the token and leaves the address bar', async () => {
  const page = await signedIn(browser, USER);
  await page.getByTestId('role').waitFor();
  assert.equal(await page.getByTestId('role').textContent(), 'user');
  await page.goto(`${BASE}/#token=${ADMIN}`); // same document: only the fragment changes
  await page.waitForFunction(() => document.querySelector('[data-testid=role]')?.textContent === 'admin');
  assert.ok(!page.url().includes('token'), page.url());
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sandpipe.token')), ADMIN);
  await shot(page, 'state-second-link');
  // a forged second link signs the first token out too, and says why
  await page.goto(`${BASE}/#token=${ADMIN.replace(/\.[^.]+$/, '.' + 'B'.repeat(43))}`);
  await page.getByTestId('signin-notice').getByText("This link's token is not valid").waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sandpipe.token')), null);
  await page.context().close();
});
