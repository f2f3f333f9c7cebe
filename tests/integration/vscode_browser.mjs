// code-server in Chromium, for test_vscode_image.py. With SOCKET PREFIX: serves
// http://127.0.0.1:PORT/PREFIX/... from code-server's unix socket with the prefix stripped
// (HTTP and WebSocket upgrades) and opens the workspace there; with --url URL: opens URL (a
// runtime's /vscode?tkn=…, which redirects to the session's preview). Then, in Debian's Chromium
// (playwright-core of web/), checks the explorer lists FILE, opens a terminal, waits for its
// prompt, types COMMAND and waits for EXPECT on the screen; SCREENSHOT (optional) is a PNG of
// the window at the end. Prints one line per step reached (the first: the page's address once
// the workbench is up, with --url); exits non-zero with what it waited for when a step does not
// come.
//
//   node vscode_browser.mjs SOCKET PREFIX FILE COMMAND EXPECT [SCREENSHOT]
//   node vscode_browser.mjs --url URL FILE COMMAND EXPECT [SCREENSHOT]
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';

const byUrl = process.argv[2] === '--url';
const [socketPath, prefix, file, command, expect, screenshot] = byUrl
  ? [null, null, ...process.argv.slice(4)]
  : process.argv.slice(2);
const web = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const { chromium } = createRequire(join(web, 'package.json'))('playwright-core');

let proxy = null;
let url = process.argv[3];
if (!byUrl) ({ proxy, url } = await serveSocket());

async function serveSocket() {
  const strip = (url) => (url.startsWith(prefix + '/') ? url.slice(prefix.length) : null);
  const proxy = http.createServer((req, res) => {
    const path = strip(req.url);
    if (path === null) return res.writeHead(404).end();
    const up = http.request({ socketPath, path, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => res.writeHead(502).end(String(e)));
    req.pipe(up);
  });
  proxy.on('upgrade', (req, sock, head) => {
    const path = strip(req.url);
    if (path === null) return sock.destroy();
    const up = net.connect(socketPath, () => {
      let h = `${req.method} ${path} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) h += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      up.write(h + '\r\n');
      up.write(head);
      sock.pipe(up).pipe(sock);
    });
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  return { proxy, url: `http://127.0.0.1:${proxy.address().port}${prefix}/?folder=/workspace` };
}

const browser = await chromium.launch({
  executablePath: process.env.SP_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const step = async (what, fn) => {
  try {
    await fn();
    console.log(what);
  } catch (e) {
    console.log(`FAILED: ${what}: ${e.message.split('\n')[0]}`);
    await browser.close();
    process.exit(1);
  }
};
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
await step('workbench', async () => {
  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60000 });
});
if (byUrl) console.log(`at ${page.url()}`);
await step(`explorer lists ${file}`, () =>
  page.locator('.explorer-folders-view', { hasText: file }).waitFor({ timeout: 60000 }));
// The screen's text is in the DOM with the DOM renderer (the test's settings.json turns GPU
// acceleration off), so the prompt and the command's output can be waited for.
const rows = page.locator('.terminal-wrapper .xterm-rows').first();
await step('prompt', async () => {
  await page.keyboard.press('Control+Shift+Backquote');
  await rows.filter({ hasText: /\$/ }).waitFor({ timeout: 60000 });
});
await step(`output ${expect}`, async () => {
  await page.locator('.terminal-wrapper .xterm-screen').first().click();
  await page.keyboard.type(command);
  await page.keyboard.press('Enter');
  await rows.filter({ hasText: expect }).waitFor({ timeout: 60000 });
});
if (screenshot) await page.screenshot({ path: screenshot });
await browser.close();
if (proxy) proxy.close();
