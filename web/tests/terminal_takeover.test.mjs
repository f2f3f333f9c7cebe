// The browser terminal over a gateway's death (tests/integration/test_web.py's TakeoverBrowser:
// two gateways of one host behind nginx): the session's gateway is killed with SIGKILL while
// numbered lines flow; the page reconnects by itself, nginx sends it to the peer that took the
// session over, and the same terminal (the same shell) goes on: every line once, in order, no
// gap, typing works. The Files tab, shown before, follows the sandbox after it: the page
// watches the workspace again on its new socket (docs/api.md, "File events").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, shot, createSession, rest, USER, ADMIN, typeIn, waitScreen, sessionPage, cleanUp, terminalBuffer } from './harness.mjs';

let browser, page, id;
const files = []; // the `files` messages of the session sockets opened after the first
before(async () => {
  browser = await launch();
  id = await createSession(USER);
  page = await sessionPage(browser, id);
  page.on('websocket', (ws) => {
    if (!/\/ws\/sessions\/[^/]+(\?|$)/.test(ws.url())) return;
    ws.on('framereceived', ({ payload }) => {
      try {
        const m = JSON.parse(payload);
        if (m.type === 'files') files.push(m);
      } catch { /* not JSON */ }
    });
  });
  // the Files tab once: its tree watches the workspace from now on
  await page.locator('[data-tab=files]').click();
  await page.locator('.tree [role=treeitem], .tree .muted').first().waitFor();
  await page.locator('[data-tab=term1]').click();
});
after(() => cleanUp(browser, id));

const owner = async () => (await rest('GET', `/api/v1/sessions/${id}`, { token: ADMIN })).body.gateway;

test('the gateway killed mid-output: the page takes the same shell back from its peer, every line once', async () => {
  const pids = JSON.parse(process.env.SP_GATEWAY_PIDS || '{}');
  await waitScreen(page, /[$#][\s\u00a0]*$/m);
  await typeIn(page, 'clear; cd /tmp; KEPT=kept-$((6*7)); echo "before $$"\n');
  const s = await waitScreen(page, /^before \d+\s*$/m);
  const pid = s.match(/^before (\d+)\s*$/m)[1];
  await typeIn(page, 'clear; for i in $(seq 1 30); do seq -f "row-$i-%g" 1 100; sleep 0.1; done; echo ROWS-$((6*7))\n');
  await waitScreen(page, /^row-5-\d+\s*$/m);
  const termId = await page.evaluate(() => window.__sandpipe.terminals.get(1).termId);
  const victim = await owner();
  assert.ok(pids[victim], `no pid for the owner ${victim}`);
  process.kill(pids[victim], 'SIGKILL');
  await waitScreen(page, /^ROWS-42\s*$/m, 1, 90000);
  await shot(page, 'terminal-after-takeover');
  const now = await owner();
  assert.notEqual(now, victim, 'the session was taken over');
  const { id: after, lines } = await terminalBuffer(page);
  assert.equal(after, termId, 'the same terminal was taken back');
  const rows = lines.map((l) => l.trim()).filter((l) => /^row-\d+-\d+$/.test(l));
  const want = [];
  for (let i = 1; i <= 30; i++) for (let j = 1; j <= 100; j++) want.push(`row-${i}-${j}`);
  assert.deepEqual(rows, want, 'every line once, in order');
  assert.ok(!lines.some((l) => /bytes of output were lost|new shell|exited/.test(l)), 'no gap, no new shell');
  await typeIn(page, 'echo "after $$ $KEPT $(pwd)"\n');
  await waitScreen(page, new RegExp(`^after ${pid} kept-42 /tmp\\s*$`, 'm'));
});

test('the Files tab follows the sandbox after the takeover, by the new gateway\'s file events', async () => {
  await typeIn(page, 'echo made > /workspace/after-the-takeover.txt\n');
  await page.locator('[data-tab=files]').click();
  await page.locator('.tree [data-path="/workspace/after-the-takeover.txt"]').waitFor({ timeout: 20000 });
  assert.ok(files.some((m) => m.events.some((e) => e.path === '/workspace/after-the-takeover.txt')),
    'no files message of the new socket named the file');
});
