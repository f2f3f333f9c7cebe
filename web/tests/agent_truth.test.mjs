// The agent timeline tells the truth (issue 33, item 2): a str_replace the real executor refused
// looks failed (red badge, its error text, no diff), as does a failed read; output with colours
// is drawn as /watch draws it (no escape characters, coloured spans); an edit's diff is the
// observation's extras.diff with line numbers and context; IPython and Browse are in the action
// menu, and a session without the plugin says so before anything is sent.
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

const last = () => page.locator('[data-panel=agent] article.entry').last();
const observed = (kind) => last().and(page.locator(`[data-observed="${kind}"]`)).waitFor({ timeout: 60000 });

async function submit(kind, fields) {
  await page.locator('form.submit select[name=kind]').selectOption(kind);
  for (const [name, value] of Object.entries(fields)) await page.locator(`form.submit [name=${name}]`).fill(value);
  await page.locator('form.submit button[type=submit]').click();
}

test('a str_replace the executor refused shows as failed, with its error and no diff', async () => {
  const w = await rest('POST', `/api/v1/sessions/${id}/actions?wait=true`, {
    token: USER, body: { action: 'write', args: { path: '/workspace/f.txt', content: 'alpha\nbeta\n' } },
  });
  assert.equal(w.status, 200, JSON.stringify(w.body));
  await submit('edit', { path: '/workspace/f.txt', old_str: 'not in the file', new_str: 'x' });
  await observed('edit');
  const e = last();
  assert.equal(await e.locator('.badge').textContent(), 'edit failed');
  assert.match(await e.locator('.badge').getAttribute('class'), /\bb-bad\b/);
  assert.equal(await e.getAttribute('data-failed'), 'true');
  assert.equal(await e.locator('pre.diff').count(), 0, 'a refused edit has no diff');
  assert.match(await e.locator('pre.error').textContent(), /^ERROR:\nNo replacement was performed, old_str `not in the file` did not appear verbatim/);
  await shot(page, 'agent-failed-edit');

  await submit('read', { path: '/workspace/missing.txt' });
  await observed('error');
  assert.equal(await last().locator('.badge').textContent(), 'error');
  assert.equal(await last().getAttribute('data-failed'), 'true');
  assert.match(await last().locator('pre.error').textContent(), /File not found: \/workspace\/missing.txt/);
});

test('coloured output is drawn as /watch draws it, without escape characters', async () => {
  await submit('run', { command: "mkdir -p /tmp/c/dir && ls --color=always /tmp/c; printf '\\033[31mred\\033[0m plain\\n'" });
  await observed('run');
  const out = last().locator('pre.output').first();
  await out.and(page.locator('[data-ansi=true]')).waitFor();
  const text = await out.textContent();
  assert.equal(text, 'dir\nred plain\n');
  assert.ok(!/\x1b|\[0m|\[01;34m/.test(text), `escape codes left: ${JSON.stringify(text)}`);
  const dir = out.locator('span', { hasText: 'dir' });
  assert.equal(await dir.evaluate((s) => getComputedStyle(s).fontWeight), '700');
  assert.equal(await dir.evaluate((s) => getComputedStyle(s).color), 'rgb(52, 101, 164)'); // xterm's blue
  assert.equal(await out.locator('span', { hasText: 'red' }).evaluate((s) => getComputedStyle(s).color), 'rgb(204, 0, 0)');
  await shot(page, 'agent-ansi-output');
});

test("an edit's diff is the observation's own, with line numbers and context", async () => {
  const content = Array.from({ length: 12 }, (_, i) => `line${i + 1}`).join('\n') + '\n';
  await submit('write', { path: '/workspace/n.txt', content });
  await observed('write');
  await submit('edit', { path: '/workspace/n.txt', old_str: 'line5\n', new_str: 'line5a\nline5b\n' });
  await observed('edit');
  const rows = await last().locator('pre.diff > span').evaluateAll((spans) => spans.map((s) => {
    const ln = [...s.querySelectorAll('.ln')].map((l) => l.textContent);
    return `${s.className}|${ln.join(',')}|${s.lastChild.textContent}`;
  }));
  assert.deepEqual(rows, [
    'ctx|2,2|  line2\n', 'ctx|3,3|  line3\n', 'ctx|4,4|  line4\n',
    'del|5,|- line5\n', 'add|,5|+ line5a\n', 'add|,6|+ line5b\n',
    'ctx|6,7|  line6\n', 'ctx|7,8|  line7\n', 'ctx|8,9|  line8\n',
  ]);
  assert.equal(await last().locator('.badge').textContent(), 'edit');
  await last().locator('pre.diff').scrollIntoViewIfNeeded();
  await shot(page, 'agent-numbered-diff');
});

test('IPython and Browse from the action menu', async () => {
  await submit('ipython', { code: 'print(6 * 7)' });
  await observed('run_ipython');
  assert.match(await last().locator('pre.output').first().textContent(), /^42/);
  assert.equal(await last().locator('.badge').textContent(), 'ipython');

  await submit('write', { path: '/workspace/p.html', content: '<html><body><h1>From the menu</h1></body></html>' });
  await observed('write');
  await submit('browse', { url: 'file:///workspace/p.html' });
  await observed('browse');
  assert.equal(await last().locator('.badge').textContent(), 'page');
  assert.match(await last().locator('pre.page').textContent(), /# From the menu/);
});

test('a session without the plugin says so and sends nothing', async () => {
  const bare = await createSession(USER, { plugins: ['agent_skills'] });
  const p = await sessionPage(browser, bare, { tab: 'agent' });
  try {
    await p.locator('form.submit select[name=kind]').selectOption('ipython');
    const note = p.locator('form.submit .plugin-note');
    await note.waitFor();
    assert.match(await note.textContent(), /plugins \(agent_skills\) do not include jupyter/);
    assert.ok(await p.locator('form.submit button[type=submit]').isDisabled());
    await p.locator('form.submit select[name=kind]').selectOption('browse');
    assert.match(await note.textContent(), /do not include browser/);
    await p.locator('form.submit select[name=kind]').selectOption('run');
    assert.ok(await note.isHidden());
    assert.ok(await p.locator('form.submit button[type=submit]').isEnabled());
  } finally {
    await p.context().close();
    await rest('DELETE', `/api/v1/sessions/${bare}`, { token: USER });
  }
});
