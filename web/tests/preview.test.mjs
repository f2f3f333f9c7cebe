// The Preview tab (issue 31, item 5) against real servers in a real sandbox, through nginx and
// the gateway's preview proxy: with nothing listening it says how to start a server; python's
// http.server started in the session appears in the list by itself (the session's "port"
// event); chosen, the frame shows its directory listing, Reload shows a file made since, a page
// of the preview app in the frame opens a WebSocket to its server and gets the echo, "Open in new
// tab" opens it in a tab of its own, and the copied signed link opens it in a fresh browser
// (no token, no cookie); a port typed in that nothing listens on shows the gateway's page; Make
// public where the operator allows it; a server that stops leaves the list; a viewer sees the
// ports only; a paused session says so.
// The frame's form: the IDE at 127.0.0.1 is cross-site with the previews' own origins
// (P-S.localhost), where the cookie a link leaves cannot be set in a frame, so the frame takes
// the path form; opened as http://ide.pv.localhost (SP_IDE_URL, previews at P-S.pv.localhost:
// same-site) it takes the host form (SP_PREVIEW_FORM=host; tests/integration/test_web.py).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { launch, shot as takeShot, createSession, rest, USER, sessionPage, signedIn, viewerToken, cleanUp } from './harness.mjs';

const FORM = process.env.SP_PREVIEW_FORM || 'path';
const PUBLIC = process.env.SP_PREVIEW_PUBLIC === 'on'; // the gateway's --preview-public
const APP = new URL('../../tests/integration/preview_apps/app.py', import.meta.url);
let browser, page, id;

/** Runs command in the session's shell (REST, waiting for its observation). */
async function sh(command) {
  const r = await rest('POST', `/api/v1/sessions/${id}/actions?wait=true&timeout=60`, {
    token: USER, body: { action: 'run', args: { command } },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.observation?.content;
}

// screenshots of the host-form run are named apart
const shot = (p, name) => takeShot(p, FORM === 'path' ? name : `${name}-host`);
const port = (n) => page.locator(`.pv-port[data-port="${n}"]`);
const frame = () => page.frameLocator('iframe.pv-frame');

before(async () => {
  browser = await launch();
  id = await createSession(USER);
  const put = await rest('PUT', `/api/v1/sessions/${id}/files/content?path=/workspace/app.py`, { token: USER, body: readFileSync(APP, 'utf8') });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  page = await sessionPage(browser, id);
  await page.locator('[data-tab=preview]').click();
});
after(() => cleanUp(browser, id));

test('nothing listens yet: the tab says how to start a server', async () => {
  const empty = page.locator('.pv-view [data-state=no-ports]');
  await empty.waitFor();
  assert.match(await empty.innerText(), /python3 -m http\.server 8000/);
  await shot(page, 'preview-empty');
});

test('a server started in the session appears by itself; chosen, the frame shows it', async () => {
  await sh('cd /workspace && (nohup python3 -m http.server 8000 >/tmp/hs.log 2>&1 & echo $! >/tmp/hs.pid)');
  // no click, no reload: the port event brings it
  await port(8000).waitFor({ timeout: 30000 });
  assert.match(await port(8000).innerText(), /8000[\s\S]*http\.server 8000/);
  await port(8000).click();
  assert.equal(await port(8000).getAttribute('aria-pressed'), 'true');
  await frame().getByText('Directory listing for /').waitFor({ timeout: 20000 });
  await frame().getByRole('link', { name: 'app.py' }).waitFor();
  assert.equal(await page.locator('iframe.pv-frame').getAttribute('data-form'), FORM);
  assert.match(await page.locator('.pv-address').innerText(), FORM === 'host' ? /^http:\/\/8000-s-[^/]*\.localhost:\d+\/$/ : /\/preview\/s-[^/]+\/8000\/$/);
  assert.doesNotMatch(await page.locator('.pv-address').innerText(), /sp_token|~/, 'the address shows a credential');
  await shot(page, 'preview-http-server');
});

test('Reload opens the port again: a file made since is listed', async () => {
  await sh('echo fresh > /workspace/made-after-load.txt');
  assert.equal(await frame().getByRole('link', { name: 'made-after-load.txt' }).count(), 0);
  await page.locator('[data-action=reload]').click();
  await frame().getByRole('link', { name: 'made-after-load.txt' }).waitFor({ timeout: 20000 });
});

test('a page in the frame talks to its server over a WebSocket', async () => {
  await sh('cd /workspace && (nohup python3 app.py 8001 >/tmp/app.log 2>&1 &)');
  await port(8001).waitFor({ timeout: 30000 });
  // by the keyboard: the port is a button, the path a labelled box that Enter opens
  await port(8001).focus();
  await page.keyboard.press('Enter');
  await page.getByLabel('Path').fill('/ws-page');
  await page.getByLabel('Path').press('Enter');
  await frame().getByText('echo: hello preview').waitFor({ timeout: 20000 });
  await shot(page, 'preview-websocket');
});

test('Open in new tab: the preview in a tab of its own', async () => {
  await port(8000).click();
  await frame().getByText('Directory listing for /').waitFor({ timeout: 20000 });
  const [tab] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('button', { name: 'Open in new tab' }).click()]);
  await tab.getByText('Directory listing for /').waitFor({ timeout: 20000 });
  assert.doesNotMatch(tab.url(), /sp_token/, 'the one-time link stayed in the address bar');
  assert.match(tab.url(), /^http:\/\/8000-s-[^/]*\.localhost:\d+\/$/, 'a tab of its own takes the port\'s own origin');
  assert.equal(await tab.evaluate(() => window.opener), null);
  await shot(tab, 'preview-new-tab');
  await tab.close();
});

test('Copy signed link: the link opens the port in a fresh browser, without a token', async () => {
  assert.equal(await page.getByLabel('Link valid').inputValue(), '3600');
  await page.getByRole('button', { name: 'Copy signed link' }).click();
  await page.locator('.pv-shared:not([hidden])').waitFor();
  const url = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(url, await page.locator('.pv-shared-url').inputValue());
  assert.match(url, /^http:\/\/8000-s-[^/]*\.localhost:\d+\/\?sp_token=/);
  await shot(page, 'preview-signed-link');
  const stranger = await browser.newContext();
  try {
    const p = await stranger.newPage();
    await p.goto(url);
    await p.getByText('Directory listing for /').waitFor({ timeout: 20000 });
    await p.getByRole('link', { name: 'app.py' }).waitFor();
    await shot(p, 'preview-signed-link-opened');
  } finally {
    await stranger.close();
  }
});

test('a port typed in that nothing listens on: the frame shows the gateway\'s page', async () => {
  await page.getByLabel('A port not listed yet').fill('8009');
  await page.getByLabel('A port not listed yet').press('Enter');
  await frame().getByText('Nothing listens on port 8009').waitFor({ timeout: 20000 });
  assert.ok(await page.locator('.pv-shared').isHidden(), 'the signed link of port 8000 is still shown');
  await page.locator('.pv-bar [data-closed]:not([hidden])').waitFor(); // not listed as listening
  await shot(page, 'preview-nothing-listens');
  await port(8000).click();
  await frame().getByText('Directory listing for /').waitFor({ timeout: 20000 });
});

test('Make public is offered only where the operator allows it; public, the port opens without a credential', async () => {
  if (!PUBLIC) {
    await page.locator('[data-action=public]').waitFor({ state: 'hidden' });
    assert.equal(await page.getByRole('button', { name: 'Make public' }).count(), 0, 'offered where public ports are off');
    return;
  }
  await page.getByRole('button', { name: 'Make public' }).click();
  await port(8000).locator('[data-public]').waitFor();
  await page.getByRole('button', { name: 'Make private' }).waitFor();
  const open = (await page.locator('.pv-address').innerText()).trim(); // no credential in it
  const stranger = await browser.newContext();
  try {
    const p = await stranger.newPage();
    await p.goto(open);
    await p.getByText('Directory listing for /').waitFor({ timeout: 20000 });
    await shot(page, 'preview-public');
    await page.getByRole('button', { name: 'Make private' }).click();
    await port(8000).locator('[data-public]').waitFor({ state: 'detached' });
    const r = await p.goto(open);
    assert.equal(r.status(), 401, 'a private port opened without a credential');
  } finally {
    await stranger.close();
  }
});

test('a server that stops leaves the list', async () => {
  await sh('kill $(cat /tmp/hs.pid)');
  await port(8000).waitFor({ state: 'detached', timeout: 30000 });
  await page.locator('.pv-bar [data-closed]:not([hidden])').waitFor(); // the frame's port stopped listening
  await port(8001).waitFor();
});

test('a viewer sees the ports but has nothing to open them with', async () => {
  const v = await signedIn(browser, await viewerToken(id));
  try {
    await v.waitForURL(new RegExp(`#/s/${id}`));
    await v.locator('[data-tab=preview]').click();
    await v.locator('.pv-port[data-port="8001"]').waitFor();
    await v.locator('.pv-view [data-state=viewer]').waitFor();
    assert.equal(await v.locator('.pv-other').count(), 0);
    assert.equal(await v.locator('button.pv-port').count(), 0);
    await shot(v, 'preview-viewer');
  } finally {
    await v.context().close();
  }
});

test('a paused session says so; resumed, its ports are back', async () => {
  assert.equal((await rest('POST', `/api/v1/sessions/${id}/pause`, { token: USER })).status, 200);
  await page.locator('.pv-view [data-state=paused]').waitFor({ timeout: 20000 });
  assert.equal(await page.locator('iframe.pv-frame').count(), 0);
  await shot(page, 'preview-paused');
  assert.equal((await rest('POST', `/api/v1/sessions/${id}/resume`, { token: USER })).status, 200);
  await port(8001).waitFor({ timeout: 20000 });
  await page.locator('.pv-view [data-state=choose]').waitFor();
});
