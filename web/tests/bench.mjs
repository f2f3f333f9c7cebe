// make bench's web figures (bench/bench_web.py starts the stack and runs this): bundle size, first
// paint of the IDE, time to an interactive terminal, keystroke echo in the browser terminal (key
// event to the glyph drawn) next to a raw WebSocket echo on the same endpoint (the peer: no
// xterm.js, no page), and the output rate the page sustains while answering clicks. Markdown out.
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, createSession, rest, BASE, USER } from './harness.mjs';

const DIST = process.env.SP_DIST || join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const ROUNDS = Number(process.env.BENCH_WEB_ROUNDS || 10);
const KEYS = Number(process.env.BENCH_WEB_KEYS || 200);
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const ms = (x) => `${x.toFixed(1)} ms`;

function bundle() {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const first = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]);
  // the entry's static imports (chunks) load with it; dynamic ones (the editor) do not
  const js = readFileSync(join(DIST, first.find((f) => f.endsWith('.js'))), 'utf8');
  const chunks = [...js.matchAll(/from"\.\/(chunk-[A-Z0-9]+\.js)"/g)].map((m) => 'assets/' + m[1]);
  const size = (files) => files.reduce((a, f) => { const b = readFileSync(join(DIST, f)); return [a[0] + b.length, a[1] + gzipSync(b, { level: 6 }).length]; }, [0, 0]);
  const all = readdirSync(join(DIST, 'assets')).filter((f) => /\.(js|css)$/.test(f)).map((f) => 'assets/' + f);
  const [ib, ig] = size([...new Set([...first, ...chunks])]);
  const [ab, ag] = size(all);
  return { ib, ig, ab, ag };
}

async function firstPaint(browser, path, ready) {
  const fcp = [], done = [];
  for (let i = 0; i < ROUNDS; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    const t0 = Date.now();
    await page.goto(`${BASE}${path}#token=${USER}`);
    await ready(page);
    done.push(Date.now() - t0);
    fcp.push(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN));
    await ctx.close();
  }
  return { fcp, done };
}

async function keystrokes(page) {
  // In the page: a key event (keydown + keypress, dispatched on xterm's input element the way
  // the browser does: CDP-injected input would add the automation's own input pipeline) to the
  // glyph in xterm's buffer (written and parsed) and to the next drawn frame after xterm's render.
  // Then the peer: the same byte over a raw WebSocket to a second terminal (no xterm.js).
  const id = await page.evaluate(() => location.hash.split('/')[2]);
  const browserLat = await page.evaluate(async (n) => {
    const t = window.__sandpipe.terminals.get(1), term = t.term;
    const ta = document.querySelector('[data-terminal="1"] textarea');
    const out = [];
    for (let i = 0; i < n; i++) {
      if (i % 50 === 0) { t.sendBytes(new Uint8Array([21])); await new Promise((r) => setTimeout(r, 80)); }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 17)); // not in step with frames
      const want = (() => { const b = term.buffer.active; return (b.getLine(b.cursorY + b.viewportY)?.translateToString(true).match(/x/g) || []).length + 1; })();
      const r = {};
      const got = new Promise((resolve) => {
        const d1 = term.onWriteParsed(() => {
          const b = term.buffer.active;
          if ((b.getLine(b.cursorY + b.viewportY)?.translateToString(true).match(/x/g) || []).length < want) return;
          r.parsed = performance.now();
          d1.dispose();
          const d2 = term.onRender(() => { d2.dispose(); requestAnimationFrame(() => { r.painted = performance.now(); resolve(); }); });
        });
      });
      r.t0 = performance.now();
      ta.dispatchEvent(new KeyboardEvent('keydown', { key: 'x', code: 'KeyX', keyCode: 88, bubbles: true, cancelable: true }));
      ta.dispatchEvent(new KeyboardEvent('keypress', { key: 'x', code: 'KeyX', charCode: 120, keyCode: 120, bubbles: true, cancelable: true }));
      await Promise.race([got, new Promise((res) => setTimeout(res, 3000))]);
      if (r.painted) out.push([r.parsed - r.t0, r.painted - r.t0]);
    }
    return out;
  }, KEYS);
  const raw = await page.evaluate(async ({ id, token, n }) => {
    const ws = new WebSocket(`ws://${location.host}/ws/sessions/${id}/terminal?cols=80&rows=24`, ['sandpipe.v1', 'bearer.' + token]);
    ws.binaryType = 'arraybuffer';
    let waiting = null;
    ws.onmessage = (e) => { if (waiting && typeof e.data !== 'string' && new Uint8Array(e.data).includes(120)) { const w = waiting; waiting = null; w(); } };
    await new Promise((r) => { ws.onopen = r; });
    await new Promise((r) => setTimeout(r, 800)); // the prompt
    const out = [];
    for (let i = 0; i < n; i++) {
      if (i % 50 === 0) { ws.send(new Uint8Array([21])); await new Promise((r) => setTimeout(r, 80)); }
      await new Promise((r) => setTimeout(r, 20));
      const t0 = performance.now();
      await new Promise((r) => { waiting = r; ws.send(new Uint8Array([120])); });
      out.push(performance.now() - t0);
    }
    ws.close();
    return out;
  }, { id, token: USER, n: KEYS });
  return { parsed: browserLat.map((x) => x[0]), painted: browserLat.map((x) => x[1]), raw };
}

async function flood(page) {
  await page.locator('[data-terminal="1"] .xterm').click();
  await page.keyboard.type('clear; yes sandpipe-bench-line | head -c 100000000; echo; echo BENCH-DONE\n');
  const term = () => page.evaluate(() => window.__sandpipe.terminals.get(1).bytesIn);
  const b0 = await term(), t0 = Date.now();
  let worst = 0;
  for (let i = 0; i < 10; i++) {
    await page.waitForTimeout(300);
    const was = await page.evaluate(() => document.documentElement.dataset.theme);
    const box = await page.getByRole('button', { name: 'toggle theme' }).boundingBox();
    const s = Date.now();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForFunction((w) => document.documentElement.dataset.theme !== w, was, { polling: 'raf' });
    worst = Math.max(worst, Date.now() - s);
  }
  await page.waitForFunction(() => /BENCH-DONE/.test(document.querySelector('[data-terminal="1"] .xterm-rows')?.innerText || ''), null, { timeout: 600000, polling: 200 });
  const bytes = (await term()) - b0, secs = (Date.now() - t0) / 1000;
  return { rate: bytes / secs / 1e6, worst, bytes };
}

const b = bundle();
const browser = await launch();
const id = await createSession(USER);
try {
  const list = await firstPaint(browser, '/', (p) => p.locator('table.list, .sessions .empty').first().waitFor());
  const termReady = await firstPaint(browser, `/`, async (p) => {
    await p.evaluate((sid) => { location.hash = '#/s/' + sid; }, id);
    await p.waitForFunction(() => /[$#]\s*$/m.test(document.querySelector('[data-terminal="1"] .xterm-rows')?.innerText || ''), null, { polling: 'raf' });
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${BASE}/#token=${USER}`);
  await page.evaluate((sid) => { location.hash = '#/s/' + sid; }, id);
  await page.waitForFunction(() => /[$#]\s*$/m.test(document.querySelector('[data-terminal="1"] .xterm-rows')?.innerText || ''));
  const k = await keystrokes(page);
  const f = await flood(page);
  console.log(`### web IDE (Chromium ${browser.version()}, headless, loopback through nginx)`);
  console.log('```');
  console.log(`bundle: first load ${(b.ib / 1024).toFixed(0)} KiB (${(b.ig / 1024).toFixed(0)} KiB gzip); everything incl. the editor loaded on demand ${(b.ab / 1024).toFixed(0)} KiB (${(b.ag / 1024).toFixed(0)} KiB gzip)`);
  console.log(`first contentful paint of the IDE: p50 ${ms(pct(list.fcp, 0.5))} (${ROUNDS} fresh loads); sessions list shown: p50 ${ms(pct(list.done, 0.5))}`);
  console.log(`time to an interactive terminal (load, sign in, open the session, prompt drawn): p50 ${ms(pct(termReady.done, 0.5))}, max ${ms(Math.max(...termReady.done))}`);
  console.log(`keystroke echo, key event to the glyph in the terminal (${k.parsed.length} keys): p50 ${ms(pct(k.parsed, 0.5))}, p95 ${ms(pct(k.parsed, 0.95))}`);
  console.log(`  ... to the next frame drawn after xterm.js renders it: p50 ${ms(pct(k.painted, 0.5))}, p95 ${ms(pct(k.painted, 0.95))}`);
  console.log(`  peer, raw WebSocket in the same page (send to echo, no xterm.js): p50 ${ms(pct(k.raw, 0.5))}, p95 ${ms(pct(k.raw, 0.95))}`);
  console.log(`terminal flood (yes | head -c 100 MB): ${f.rate.toFixed(1)} MB/s drawn by the page, worst click-to-repaint meanwhile ${f.worst} ms (10 clicks)`);
  console.log('```');
} finally {
  await browser.close();
  await rest('DELETE', `/api/v1/sessions/${id}`, { token: USER });
}
