// What every browser test needs: Debian's Chromium driven by playwright-core (no browser
// download), the stack's URL and tokens (tests/integration/test_web.py starts the stack and
// passes them in the environment), REST calls, screenshots, and reading the terminal's screen.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const BASE = process.env.SP_URL || 'http://127.0.0.1:8080';
// Where the browser opens the IDE: BASE, or another name of the same nginx (SP_IDE_URL, e.g.
// http://ide.pv.localhost:PORT, same-site with previews at P-S.pv.localhost).
export const IDE = process.env.SP_IDE_URL || BASE;
export const ADMIN = process.env.SP_ADMIN_TOKEN;
export const USER = process.env.SP_USER_TOKEN;
export const SHOTS = process.env.SP_SHOTS || 'screenshots';
mkdirSync(SHOTS, { recursive: true });

export async function launch() {
  return chromium.launch({
    executablePath: process.env.SP_CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** A page signed in with token through the #token= link, at path (default the sessions list). */
export async function signedIn(browser, token, { path = '/', theme = 'dark', viewport = { width: 1280, height: 800 } } = {}) {
  const ctx = await browser.newContext({ viewport });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: IDE });
  // every frame runs it: a sandboxed one (a preview's path form) has no storage
  await ctx.addInitScript((t) => { try { localStorage.setItem('sandpipe.theme', t); } catch { /* none */ } }, theme);
  const page = await ctx.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(`${IDE}${path}#token=${token}`);
  return page;
}

export async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, name + '.png') });
}

/** One REST call; returns {status, body}. */
export async function rest(method, path, { body, token = ADMIN, raw = false } = {}) {
  const headers = { Authorization: 'Bearer ' + token };
  let data = body;
  if (body !== undefined && !(body instanceof Uint8Array) && typeof body !== 'string') {
    data = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  const r = await fetch(BASE + path, { method, headers, body: data });
  if (raw) return { status: r.status, body: new Uint8Array(await r.arrayBuffer()) };
  const text = await r.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* text */ }
  return { status: r.status, body: parsed };
}

export async function createSession(token = USER, params = {}) {
  const r = await rest('POST', '/api/v1/sessions', { body: params, token });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

export async function viewerToken(session, sub = 'watcher') {
  const r = await rest('POST', '/api/v1/tokens', { body: { sub, role: 'viewer', session, ttl: 3600 } });
  if (r.status !== 201) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.token;
}

/** A page signed in as token on session id's view, once its tab has loaded: 'terminal' (the
 * first terminal's screen) or 'agent' (the agent view, connected). */
export async function sessionPage(browser, id, { tab = 'terminal', token = USER } = {}) {
  const page = await signedIn(browser, token);
  await page.goto(page.url().replace(/#.*/, '') + '#/s/' + id);
  if (tab === 'agent') {
    await page.locator('[data-tab=agent]').click();
    await page.locator('[data-panel=agent] .conn[data-up=true]').waitFor();
  } else {
    await page.locator('[data-terminal="1"] .xterm-rows').waitFor();
  }
  return page;
}

/** What a test file's after() does: the browser closed, the session it made deleted. */
export async function cleanUp(browser, id, token = USER) {
  await browser?.close();
  if (id) await rest('DELETE', `/api/v1/sessions/${id}`, { token });
}

/** The text on the screen of terminal tab n (xterm's rendered rows), lines joined by \n. */
export async function screen(page, n = 1) {
  return page.locator(`[data-terminal="${n}"] .xterm-rows`).innerText();
}

/** Waits until terminal n's screen matches re (a RegExp); returns the screen text. */
export async function waitScreen(page, re, n = 1, timeout = 20000) {
  const src = re.source, flags = re.flags;
  try {
    await page.waitForFunction(([sel, s, f]) => {
      const el = document.querySelector(sel);
      return el && new RegExp(s, f).test(el.innerText);
    }, [`[data-terminal="${n}"] .xterm-rows`, src, flags], { timeout, polling: 50 });
  } catch (e) {
    const text = await screen(page, n).catch(() => '(no screen)');
    throw new Error(`terminal ${n} never showed ${re}; its screen:\n${text}`);
  }
  return screen(page, n);
}

/** Terminal n's whole buffer (scrollback included): its terminal id and its lines. */
export async function terminalBuffer(page, n = 1) {
  const { id, lines } = await page.evaluate((k) => {
    const t = window.__sandpipe.terminals.get(k), b = t.term.buffer.active, out = [];
    for (let i = 0; i < b.length; i++) out.push(b.getLine(i).translateToString(true));
    return { id: t.termId, lines: out };
  }, n);
  return { id, lines };
}

/** Clicks the theme toggle as a person would (the mouse pressed and released on it, nothing
 * waited for) n times, each until the page repainted; returns the times taken in ms with their
 * median and worst. */
export async function themeClicks(page, n = 5) {
  const took = [];
  for (let i = 0; i < n; i++) {
    const was = await page.evaluate(() => document.documentElement.dataset.theme);
    const box = await page.getByRole('button', { name: 'toggle theme' }).boundingBox();
    const start = Date.now();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForFunction((w) => document.documentElement.dataset.theme !== w, was, { timeout: 5000, polling: 'raf' });
    took.push(Date.now() - start);
  }
  // The median click: one click can wait behind whatever else the (shared, loaded) machine runs.
  const median = [...took].sort((a, b) => a - b)[Math.floor(n / 2)], worst = Math.max(...took);
  return { took, median, worst };
}

/** Types into terminal n as a person would (focus, then key presses). */
export async function typeIn(page, text, n = 1) {
  await page.locator(`[data-terminal="${n}"] .xterm`).click();
  await page.keyboard.type(text);
}

/** Drops every connection through nginx as a network failure would: its workers are killed
 * (SIGKILL: no close frames) and the master starts new ones on the same listening socket. */
export async function dropConnections() {
  const { execFileSync } = await import('node:child_process');
  const master = process.env.SP_NGINX_PID;
  if (!master) throw new Error('SP_NGINX_PID is not set');
  const workers = execFileSync('pgrep', ['-P', master], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
  for (const w of workers) process.kill(Number(w), 'SIGKILL');
  return workers.length;
}
