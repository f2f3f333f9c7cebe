// The browser terminal through an outage (tests/integration/test_web.py passes the gateway's
// pid): the gateway stopped (SIGSTOP) and nginx's workers killed, so every WebSocket of the page
// drops and the retries hang until the gateway is continued. Meanwhile the header says
// "reconnecting…" (not the READY it read last), what is typed is held and sent once the terminal
// is back (the command runs once), past 4 KiB the rest is refused and the page says so; a
// browser with no network says "offline".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, USER, typeIn, waitScreen, screen, dropConnections, sessionPage, cleanUp, terminalBuffer } from './harness.mjs';

let browser, page, id;
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  page = await sessionPage(browser, id);
});
after(async () => {
  gateway('SIGCONT'); // never leave the stack's gateway stopped
  await cleanUp(browser, id);
});

function gateway(signal) {
  const pid = Number(process.env.SP_GATEWAY_PID);
  if (!pid) throw new Error('SP_GATEWAY_PID is not set');
  process.kill(pid, signal);
}

const header = (sel) => page.locator(`.session-head ${sel}`);
const pill = () => page.locator('[data-terminal="1"] .term-state .pill');

/** Stops the gateway and drops the page's connections; resolves once the header says so. */
async function outage() {
  gateway('SIGSTOP');
  assert.ok(await dropConnections() > 0);
  await header('[data-link="reconnecting"]').waitFor();
}

/** Continues the gateway; resolves once the terminal is live and the header shows the status. */
async function recover() {
  gateway('SIGCONT');
  await page.locator('[data-tab="term1"][data-state="live"]').waitFor({ timeout: 30000 });
  await header('[data-status="READY"]').waitFor({ timeout: 30000 });
  assert.equal(await header('[data-link]').count(), 0, 'the header still says the link is down');
}

test('the gateway away: the header says reconnecting…, what is typed meanwhile runs once when it is back', async () => {
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
  await typeIn(page, 'clear; echo "before $$"\n');
  const pid = (await waitScreen(page, /^before \d+\s*$/m)).match(/^before (\d+)\s*$/m)[1];
  await header('[data-status="READY"]').waitFor();
  await outage();
  assert.equal(await header('[data-status="READY"]').count(), 0, 'READY shown during the outage');
  // typed as a person would, the terminal still focused: held, not echoed (nothing reached the shell)
  await page.keyboard.type('echo "typed-away $$ $((6*7))"\n');
  await page.locator('[data-terminal="1"] .term-state .pill[data-typed]:not([data-typed="0"])').waitFor();
  assert.match(await pill().innerText(), /reconnecting….*bytes typed, sent when the terminal is back/);
  assert.doesNotMatch(await screen(page), /typed-away/);
  await shot(page, 'terminal-outage');
  await recover();
  await waitScreen(page, new RegExp(`^typed-away ${pid} 42\\s*$`, 'm'));
  await typeIn(page, 'echo AFTER-$((6*7))\n');
  await waitScreen(page, /^AFTER-42\s*$/m);
  const { lines } = await terminalBuffer(page);
  assert.equal(lines.filter((l) => l.includes('echo "typed-away')).length, 1, 'the command line once');
  assert.equal(lines.filter((l) => /^typed-away \d+ 42\s*$/.test(l)).length, 1, 'its output once');
  assert.equal(await pill().count(), 0);
});

test('past 4 KiB typed while away the rest is refused, and the page says so', async () => {
  await typeIn(page, 'clear; echo CLEARED\n');
  await waitScreen(page, /^CLEARED\s*$/m);
  await outage();
  await page.keyboard.type('echo kept-$((6*7))\n');
  await page.keyboard.insertText('x'.repeat(5000)); // a paste too big to hold
  await page.locator('[data-terminal="1"] .term-state .pill[data-refused="5000"]').waitFor();
  assert.match(await pill().innerText(), /bytes typed are kept for the terminal; 5000 more were not \(at most 4 KiB\)/);
  await shot(page, 'terminal-outage-refused');
  await recover();
  await waitScreen(page, /^kept-42\s*$/m);
  await waitScreen(page, /\[5000 bytes typed while disconnected were not sent: at most 4096 are kept\]/);
  assert.doesNotMatch(await screen(page), /xxxxx/);
});

test('the browser offline: the header says offline, and the status once the network is back', async () => {
  const ctx = page.context();
  await ctx.setOffline(true);
  try {
    await header('[data-link="offline"]').waitFor();
    await shot(page, 'session-offline');
  } finally {
    await ctx.setOffline(false);
  }
  await header('[data-status="READY"]').waitFor({ timeout: 30000 });
  await typeIn(page, 'echo ONLINE-$((6*7))\n');
  await waitScreen(page, /^ONLINE-42\s*$/m);
});
