// The browser terminal: typing and reading the screen, binary-safe output, resize followed by
// `stty size`, copy and paste, several terminals in tabs (a new or selected one takes the
// keyboard focus), dropped connections healed by
// themselves (the same terminal taken back from the byte it had: no line lost or repeated), a
// reload that takes the terminal back, and a 50 MB flood that leaves the page answering clicks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, USER, typeIn, waitScreen, screen, dropConnections, sessionPage, cleanUp, terminalBuffer, themeClicks } from './harness.mjs';

let browser, page, id;
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  page = await sessionPage(browser, id);
});
after(() => cleanUp(browser, id));

const termSize = (n = 1) => page.evaluate((k) => {
  const t = window.__sandpipe.terminals.get(k).term;
  return { cols: t.cols, rows: t.rows };
}, n);

test('echo hello: typed in, read back from the screen', async () => {
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
  await typeIn(page, 'echo hello\n');
  await waitScreen(page, /^hello\s*$/m);
});

test('output is binary safe: multi-byte UTF-8 and colours arrive intact', async () => {
  await typeIn(page, "printf 'caf\\303\\251 \\342\\202\\254 \\033[32mgreen\\033[0m ok\\n'\n");
  const s = await waitScreen(page, /^café € green ok\s*$/m);
  assert.ok(!s.includes('\uFFFD'), s);
});

test('the terminal follows the window: stty size says the new size', async () => {
  const before = await termSize();
  await page.setViewportSize({ width: 900, height: 560 });
  await page.waitForFunction((c) => window.__sandpipe.terminals.get(1).term.cols !== c, before.cols);
  const { cols, rows } = await termSize();
  assert.ok(cols < before.cols && rows < before.rows, JSON.stringify({ before, cols, rows }));
  await typeIn(page, 'clear; stty size\n');
  await waitScreen(page, new RegExp(`^${rows} ${cols}\\s*$`, 'm'));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForFunction((c) => window.__sandpipe.terminals.get(1).term.cols === c, before.cols);
});

test('paste with Ctrl+Shift+V, copy the selection with Ctrl+Shift+C', async () => {
  await page.evaluate(() => navigator.clipboard.writeText('echo pasted-$((6*7))'));
  await page.locator('[data-terminal="1"] .xterm').click();
  await page.keyboard.press('Control+Shift+V');
  await page.keyboard.press('Enter');
  await waitScreen(page, /^pasted-42\s*$/m);
  await page.evaluate(() => window.__sandpipe.terminals.get(1).term.selectAll());
  await page.keyboard.press('Control+Shift+C');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(copied, /pasted-42/);
});

test('several terminals in tabs, each its own shell; Alt+T opens one, Alt+N switches', async () => {
  await page.keyboard.press('Alt+t');
  await page.locator('[data-terminal="2"] .xterm-rows').waitFor();
  await waitScreen(page, /[$#][\s\u00a0]*$/m, 2);
  await typeIn(page, 'echo "second shell $$"\n', 2);
  await waitScreen(page, /^second shell \d+\s*$/m, 2);
  await shot(page, 'terminal-tabs');
  const n = await page.evaluate(() => window.__sandpipe.tabs.findIndex((t) => t.key === 'term1') + 1);
  await page.keyboard.press(`Alt+${n}`);
  await page.locator('[data-terminal="1"]').waitFor({ state: 'visible' });
  assert.match(await screen(page, 1), /^pasted-42\s*$/m);
  await page.locator('[data-tab="term2"] .close').click();
  await page.locator('[data-terminal="2"]').waitFor({ state: 'detached' });
});

// The terminal pane (its data-terminal number) that holds the keyboard focus, or null.
const focusedTerminal = () => page.evaluate(() => {
  const a = document.activeElement;
  return a?.classList.contains('xterm-helper-textarea') ? Number(a.closest('[data-terminal]')?.dataset.terminal) : null;
});
const terminalCount = () => page.locator('[data-terminal]').count();

test('a new or selected terminal takes the keyboard: typing after "+ Terminal", Alt+T or a tab click goes to its shell', async () => {
  const before = await terminalCount();
  const n = await page.evaluate(() => Math.max(...window.__sandpipe.terminals.keys()) + 1); // the next tab's number
  // "+ Terminal" clicked, then typed at once: Enter must not click the button again
  await page.getByRole('button', { name: 'new terminal' }).click();
  await page.locator(`[data-terminal="${n}"] .xterm-rows`).waitFor();
  assert.equal(await focusedTerminal(), n, 'the new terminal has the focus');
  await waitScreen(page, /[$#][\s\u00a0]*$/m, n);
  await page.keyboard.type('echo "clicked-in $((6*7))"\n');
  await waitScreen(page, /^clicked-in 42\s*$/m, n);
  assert.equal(await terminalCount(), before + 1, 'Enter opened another terminal');
  await shot(page, 'terminal-focused');
  // Alt+T: the same
  await page.keyboard.press('Alt+t');
  await page.locator(`[data-terminal="${n + 1}"] .xterm-rows`).waitFor();
  assert.equal(await focusedTerminal(), n + 1);
  await waitScreen(page, /[$#][\s\u00a0]*$/m, n + 1);
  await page.keyboard.type('echo "alt-t $((6*7))"\n');
  await waitScreen(page, /^alt-t 42\s*$/m, n + 1);
  assert.equal(await terminalCount(), before + 2);
  // a terminal's tab clicked: its terminal takes the keyboard
  await page.locator(`[data-tab="term${n}"]`).click();
  assert.equal(await focusedTerminal(), n);
  await page.keyboard.type('echo "tab-click $((6*7))"\n');
  await waitScreen(page, /^tab-click 42\s*$/m, n);
  for (const k of [n + 1, n]) {
    await page.locator(`[data-tab="term${k}"] .close`).click();
    await page.locator(`[data-terminal="${k}"]`).waitFor({ state: 'detached' });
  }
  assert.equal(await focusedTerminal(), 1, 'closing a tab hands the keyboard to the one shown');
});

test('dropped connections are taken back: output flowing through them arrives once, in order, the scrollback kept', async () => {
  await typeIn(page, 'clear; echo before-the-drop; for i in $(seq 1 30); do seq -f "row-$i-%g" 1 100; sleep 0.1; done; echo ROWS-$((6*7))\n');
  await waitScreen(page, /^row-5-\d+\s*$/m);
  const termId = await page.evaluate(() => window.__sandpipe.terminals.get(1).termId);
  assert.ok(await dropConnections() > 0); // nginx's workers killed mid-output: no close frames
  // (the whole buffer, not the screen: output may race past a line between two looks)
  await page.waitForFunction(() => {
    const t = window.__sandpipe.terminals.get(1), b = t.term.buffer.active;
    for (let i = 0; i < b.length; i++) if (b.getLine(i).translateToString(true).startsWith('row-15-')) return true;
    return false;
  }, null, { timeout: 60000, polling: 50 });
  await page.evaluate(() => window.__sandpipe.terminals.get(1).drop()); // and closed from the page
  await waitScreen(page, /^ROWS-42\s*$/m, 1, 60000);
  await shot(page, 'terminal-reconnected');
  const { id: after, lines } = await terminalBuffer(page);
  assert.equal(after, termId, 'the same terminal (and shell) was taken back');
  const rows = lines.map((l) => l.trim()).filter((l) => /^row-\d+-\d+$/.test(l));
  const want = [];
  for (let i = 1; i <= 30; i++) for (let j = 1; j <= 100; j++) want.push(`row-${i}-${j}`);
  assert.deepEqual(rows, want, 'every line once, in order');
  assert.equal(lines.filter((l) => l.trim() === 'before-the-drop').length, 1);
  assert.ok(!lines.some((l) => /bytes of output were lost|new shell/.test(l)), 'no gap, no new shell');
  await typeIn(page, 'echo after-the-drop\n');
  await waitScreen(page, /^after-the-drop\s*$/m);
});

test('a reload takes the terminal back: the same shell, its output replayed', async () => {
  await typeIn(page, 'clear; echo "before-reload $$"\n');
  const s = await waitScreen(page, /^before-reload \d+\s*$/m);
  const pid = s.match(/^before-reload (\d+)\s*$/m)[1];
  const termId = await page.evaluate(() => window.__sandpipe.terminals.get(1).termId);
  await page.reload();
  await page.locator('[data-terminal="1"] .xterm-rows').waitFor();
  await waitScreen(page, /^before-reload \d+\s*$/m);
  assert.equal(await page.evaluate(() => window.__sandpipe.terminals.get(1).termId), termId);
  await typeIn(page, 'echo "after-reload $$"\n');
  await waitScreen(page, new RegExp(`^after-reload ${pid}\\s*$`, 'm'));
  assert.equal(await page.locator('[data-terminal="2"]').count(), 0, 'a closed tab came back');
});

test('50 MB of output: the tab keeps answering clicks within 1 s, and all of it arrives', async () => {
  await typeIn(page, 'clear; yes sandpipe-flood-line | head -c 50000000; echo; echo FLOOD-DONE\n');
  await waitScreen(page, /sandpipe-flood-line/);
  const t0 = await page.evaluate(() => window.__sandpipe.terminals.get(1).bytesIn);
  const { took, median, worst } = await themeClicks(page);
  console.log(`click-to-repaint during the flood: median ${median} ms, worst ${worst} ms`);
  assert.ok(median < 1000, `clicks took ${took.join(', ')} ms`);
  await shot(page, 'terminal-flood');
  const start = Date.now();
  await waitScreen(page, /^FLOOD-DONE\s*$/m, 1, 240000);
  const bytes = await page.evaluate(() => window.__sandpipe.terminals.get(1).bytesIn) - t0;
  console.log(`flood: ${(bytes / 1e6).toFixed(1)} MB received, ${((Date.now() - start) / 1000).toFixed(1)} s after the clicks`);
  assert.ok(bytes >= 45e6, `only ${bytes} bytes arrived`);
});
