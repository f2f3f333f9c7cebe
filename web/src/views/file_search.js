// Find across files: the words typed in the Files tab's search box, looked for in every text
// file of the workspace by the sandbox's own grep, run as a `run` action of the session through
// the REST actions route (it is a command of the session, so it shows in the Agent tab and
// waits while another command runs there; no server route does this). Results are file:line:
// text; a click, or Enter on one (↑/↓ between them), opens the file at that line.
import { api } from '../lib/rest.js';
import { h, mount } from '../lib/dom.js';
import { base } from './file_tree.js';

export const SEARCH_MAX = 200; // result lines read back (the first ones grep finds)
const LINE_MAX = 300;          // characters kept of each

const shellQuote = (s) => `'${s.replace(/'/g, "'\\''")}'`;

/** The command: literal text (-F), text files only (-I), .git and node_modules skipped; at most
 * SEARCH_MAX + 1 lines (so "more" shows), each cut to LINE_MAX. */
export function grepCommand(root, text, { ignoreCase = false } = {}) {
  return `grep -rnIF${ignoreCase ? 'i' : ''} --color=never --exclude-dir=.git --exclude-dir=node_modules -e ${shellQuote(text)} -- ${shellQuote(root)} 2>/dev/null` +
    ` | head -n ${SEARCH_MAX + 1} | cut -c1-${LINE_MAX}`;
}

/** grep -n's lines (path:line:text) into {path, line, text}; other lines are skipped. */
export function parseGrep(out, root) {
  const hits = [];
  for (const l of out.split('\n')) {
    const m = /^(.+?):(\d+):(.*)$/.exec(l);
    if (m && m[1].startsWith(root)) hits.push({ path: m[1], line: Number(m[2]), text: m[3] });
  }
  return hits;
}

/** S: the session's REST prefix; root() the workspace; open(path, {line, focus}). */
export function fileSearch(S, root, open) {
  const input = h('input.search-input', {
    type: 'search', placeholder: 'Find in files', 'aria-label': 'find in files', spellcheck: false,
  });
  const caseBox = h('input', { type: 'checkbox', 'aria-label': 'ignore case' });
  const status = h('div.search-status.muted.small', { role: 'status', hidden: true });
  const results = h('ul.search-results', { role: 'listbox', 'aria-label': 'search results', hidden: true });
  const clear = h('button.ghost', { title: 'Clear the results', 'aria-label': 'clear the search', hidden: true, onclick: () => reset() }, '×');
  const el = h('div.search', { role: 'search' },
    h('div.search-row', input, h('label.check.small', { title: 'Ignore case' }, caseBox, 'Aa'), clear), status, results);
  let running = 0;

  function reset() {
    running++;
    input.value = '';
    status.hidden = results.hidden = clear.hidden = true;
    mount(results);
  }

  async function run(text) {
    const dir = root();
    if (!text || !dir) return;
    const mine = ++running;
    status.hidden = false;
    clear.hidden = false;
    results.hidden = true;
    status.textContent = `Searching for “${text}”…`;
    let obs;
    try {
      const r = await api(`${S}/actions?wait=true&timeout=60`, {
        method: 'POST',
        body: { action: 'run', args: { command: grepCommand(dir, text, { ignoreCase: caseBox.checked }), hidden: true } },
      });
      obs = r.observation || {};
    } catch (e) {
      if (mine === running) status.textContent = `The search could not run: ${e.message}`;
      return;
    }
    if (mine !== running) return; // a newer search, or cleared
    const meta = obs.extras?.metadata || {}, code = meta.exit_code ?? 0;
    if (obs.observation === 'error' || code > 1 || code < 0) {
      // the session's shell is busy (a command still runs there), timed out, or refused
      status.textContent = /NOT executed/.test(meta.suffix || '')
        ? 'The search did not run: a command still runs in the session\'s shell. Let it finish (or interrupt it in the Agent tab), then search again.'
        : `The search could not run: ${(meta.suffix || obs.message || obs.content || 'no answer').trim()}`;
      return;
    }
    const hits = parseGrep(obs.content || '', dir);
    const more = hits.length > SEARCH_MAX;
    status.textContent = hits.length
      ? `${more ? `The first ${SEARCH_MAX}` : hits.length} ${hits.length === 1 ? 'line' : 'lines'} with “${text}”`
      : `No file holds “${text}”.`;
    mount(results, hits.slice(0, SEARCH_MAX).map((hit, i) => h('li.search-hit', {
      role: 'option', tabindex: i === 0 ? 0 : -1, 'data-path': hit.path, 'data-line': hit.line,
      title: `${hit.path}:${hit.line}`,
      onclick: () => open(hit.path, { line: hit.line, focus: true }),
    }, h('span.where', `${hit.path.slice(dir.length + 1) || base(hit.path)}:${hit.line}`), h('code.text', hit.text.trim()))));
    results.hidden = !hits.length;
  }

  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); run(input.value.trim()); }
    else if (e.key === 'Escape' && input.value) { e.preventDefault(); reset(); }
    else if (e.key === 'ArrowDown' && !results.hidden) { e.preventDefault(); results.querySelector('[role=option]')?.focus(); }
  });
  results.addEventListener('keydown', (e) => {
    const items = [...results.querySelectorAll('[role=option]')];
    const i = items.indexOf(e.target);
    if (i < 0) return;
    const go = (j) => { if (items[j]) { for (const x of items) x.tabIndex = x === items[j] ? 0 : -1; items[j].focus(); } };
    if (e.key === 'ArrowDown') { e.preventDefault(); go(i + 1); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); if (i) go(i - 1); else input.focus(); }
    else if (e.key === 'Enter') { e.preventDefault(); items[i].click(); }
  });

  return { el, run, focus: () => input.focus() };
}
