// /watch/{id} in another origin's page: embedded only where the operator allows it (render.sh
// --frame-ancestors), and the IDE itself never. Two embedding pages on loopback ports of the
// test's own: SP_FRAME_PORT's origin, which the stack names when SP_FRAME_NAMED=1 (else the
// stack is rendered without the option: the default), and another one it never names.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { launch, shot, createSession, viewerToken, BASE, USER, cleanUp } from './harness.mjs';

const NAMED = process.env.SP_FRAME_NAMED === '1';
let browser, id, viewer;
const servers = [];

/** An embedding page on 127.0.0.1:port (0: any free port): /watch and the IDE in frames. */
function embedder(port) {
  const page = () => `<!doctype html><title>wall</title>
<iframe name="watch" src="${BASE}/watch/${id}#token=${viewer}" width="900" height="400"></iframe>
<iframe name="ide" src="${BASE}/#token=${viewer}" width="900" height="300"></iframe>`;
  const srv = http.createServer((req, res) => { res.setHeader('content-type', 'text/html'); res.end(page()); });
  servers.push(srv);
  return new Promise((resolve) => srv.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${srv.address().port}`)));
}

before(async () => {
  browser = await launch();
  id = await createSession(USER);
  viewer = await viewerToken(id, 'wall');
});
after(async () => {
  for (const s of servers) s.close();
  await cleanUp(browser, id);
});

/** Opens origin's embedding page; returns, per frame name, whether the page loaded in it. */
async function framed(origin, name) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 760 } });
  await page.goto(origin + '/');
  const loaded = {};
  for (const f of ['watch', 'ide']) {
    const frame = page.frame({ name: f });
    await frame.waitForLoadState('load');
    // a frame the headers refuse shows Chromium's error page in place of the document
    loaded[f] = !frame.url().startsWith('chrome-error:');
  }
  if (loaded.watch) await page.frame({ name: 'watch' }).locator('.watch-head .conn[data-up=true]').waitFor();
  await shot(page, name);
  await page.close();
  return loaded;
}

test('the headers: /watch/ names the origins the operator allows, every other page this one only', async () => {
  const origin = `http://127.0.0.1:${process.env.SP_FRAME_PORT}`;
  const watch = await fetch(`${BASE}/watch/${id}`);
  const csp = watch.headers.get('content-security-policy');
  if (NAMED) {
    assert.match(csp, new RegExp(`frame-ancestors 'self' ${origin.replace(/[.]/g, '\\.')}"?$`));
    assert.equal(watch.headers.get('x-frame-options'), null);
  } else {
    assert.match(csp, /frame-ancestors 'self'$/);
    assert.equal(watch.headers.get('x-frame-options'), 'SAMEORIGIN');
  }
  for (const path of ['/', '/index.html']) {
    const r = await fetch(BASE + path);
    assert.match(r.headers.get('content-security-policy'), /frame-ancestors 'self'$/, path);
    assert.equal(r.headers.get('x-frame-options'), 'SAMEORIGIN', path);
  }
});

test(`/watch/ in a frame of the ${NAMED ? 'allowed' : 'default-refused'} origin; the IDE never`, async () => {
  const origin = await embedder(Number(process.env.SP_FRAME_PORT));
  const got = await framed(origin, NAMED ? 'watch-embed-allowed' : 'watch-embed-default');
  assert.deepEqual(got, { watch: NAMED, ide: false });
});

test('another origin cannot frame /watch/ or the IDE', async () => {
  const origin = await embedder(0);
  assert.deepEqual(await framed(origin, 'watch-embed-other-origin'), { watch: false, ide: false });
});
