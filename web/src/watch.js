// /watch/{id}: a session's read-only dashboard for a wall screen or an embed: its status, large,
// and the output of what runs in it, live (the event log from seq 0, drawn by a read-only
// xterm.js so colours show), and what people type into its terminals (terminal_input events:
// "alice ⌨ t1 ls -la", lib/typed.js). What an E2B SDK runs has a column of its own, one block
// per process with its output (views/process_block.js; processes run at once, so their output
// cannot share one terminal), and a line in the terminal when each starts and ends. Works with a
// viewer token (#token=… once, then sessionStorage). Other origins may frame it where the operator allows (render.sh
// --frame-ancestors).
import './styles/app.css';
import '@xterm/xterm/css/xterm.css';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { takeTokenFromFragment, token, who } from './lib/auth.js';
import { api, q } from './lib/rest.js';
import { EventStream, eventText } from './lib/events.js';
import { h, mount, age } from './lib/dom.js';
import { initTheme, currentTheme, toggleTheme } from './lib/theme.js';
import { darkTheme, lightTheme } from './lib/terminal.js';
import { typedLines } from './lib/typed.js';
import { badge } from './views/common.js';
import { ProcessBlocks, commandLine } from './views/process_block.js';

const HIGH = 256 * 1024;

initTheme();
takeTokenFromFragment();
const app = document.getElementById('app');
const id = decodeURIComponent(location.pathname.replace(/^\/watch\/?/, '').split('/')[0] || '');
const me = token() ? who() : null;

function fail(title, text) {
  mount(app, h('main.signin-page', h('div.card.signin', h('h1', h('span.logo', '▚'), ' ', title), h('p', text))));
}

if (!id) fail('No session', 'Open /watch/<session id>#token=<a viewer token for it>.');
else if (!me) fail('Not signed in', 'This dashboard needs a token: open it as /watch/' + id + '#token=<token> (a viewer token is enough: sandpipe token --role viewer --session ' + id + ').');
else start();

function start() {
  const status = h('span.watch-status', badge('…'));
  const meta = h('span.muted');
  const conn = h('span.conn.muted', 'connecting…');
  const current = h('code.watch-cmd');
  const box = h('div.watch-term');
  const procsBox = h('section.watch-procs', { hidden: true, 'aria-label': 'E2B processes' });
  mount(app, h('main.watch',
    h('header.watch-head',
      h('span.logo', '▚'), h('h1.mono', id), status, meta, h('div.spacer'), current, conn,
      h('button.ghost', { onclick: () => toggleTheme(), 'aria-label': 'toggle theme', title: 'Dark / light' }, '◐')),
    h('div.watch-body', box, procsBox)));
  const term = new Terminal({
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
    fontSize: Number(new URLSearchParams(location.search).get('font')) || 18,
    disableStdin: true, cursorBlink: false, scrollback: 10000, convertEol: true,
    theme: currentTheme() === 'dark' ? darkTheme : lightTheme,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(box);
  new ResizeObserver(() => { try { fit.fit(); } catch { /* hidden */ } }).observe(box);
  new MutationObserver(() => { term.options.theme = currentTheme() === 'dark' ? darkTheme : lightTheme; })
    .observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });

  let pending = 0, waiters = [];
  const write = (s) => {
    pending += s.length;
    term.write(s, () => {
      pending -= s.length;
      if (pending < HIGH / 4) for (const w of waiters.splice(0)) w();
    });
    return pending > HIGH ? new Promise((r) => waiters.push(r)) : undefined;
  };
  const actions = new Map();
  let stick = true; // the process column follows what arrives unless scrolled back
  procsBox.addEventListener('scroll', () => {
    stick = procsBox.scrollTop + procsBox.clientHeight >= procsBox.scrollHeight - 40;
  });
  const procs = new ProcessBlocks({
    place: (el) => { procsBox.hidden = false; procsBox.append(el); },
    onDraw: () => { if (stick) procsBox.scrollTop = procsBox.scrollHeight; },
  });
  let currentPid = null;
  // A process's start and end as a line of the terminal's story; its output is in its block.
  const processLine = (ev) => {
    if (ev.type !== 'process') return '';
    if (ev.event === 'start') {
      const cmd = commandLine(ev.cmd, ev.args || []).replace(/[\x00-\x09\x0b-\x1f\x7f]/g, '\ufffd');
      current.textContent = cmd;
      currentPid = ev.pid;
      return `\x1b[1;36mE2B ${ev.pty ? 'pty' : '$'}\x1b[0m \x1b[1m${cmd}\x1b[0m \x1b[2m(pid ${ev.pid})\x1b[0m\n`;
    }
    if (ev.pid === currentPid) current.textContent = '';
    const signal = /^signal: /.test(ev.status || '');
    return `\x1b[${signal ? '33' : ev.exit_code === 0 ? '32' : '31'}m[pid ${ev.pid} ${signal ? ev.status : `exit ${ev.exit_code}`}]\x1b[0m\n`;
  };
  const stream = new EventStream(id, {
    since: 0,
    onEvent: (ev) => {
      if (ProcessBlocks.handles(ev)) {
        const line = processLine(ev);
        const waits = [procs.onEvent(ev), line && write(line)].filter(Boolean);
        return waits.length ? Promise.all(waits) : undefined;
      }
      if (ev.type === 'action') {
        const a = ev.action || {};
        const cmd = a.action === 'run' ? a.args?.command : `${a.action} ${a.args?.path || ''}`;
        actions.set(ev.seq, cmd);
        current.textContent = cmd;
        return write(`\x1b[1;36m${ev.origin || '?'} $\x1b[0m \x1b[1m${cmd}\x1b[0m\n`);
      }
      if (ev.type === 'output') return write(eventText(ev));
      if (ev.type === 'terminal_input') {
        // typed by hand: one line per Enter, marked apart from the agent's actions
        let out = ev.unrecorded ? `\x1b[33m[${ev.unrecorded} bytes typed into ${ev.term} were not recorded]\x1b[0m\n` : '';
        for (const l of typedLines(eventText(ev))) {
          out += `\x1b[1;35m${ev.origin || '?'} ⌨ ${ev.term}\x1b[0m ${l.text}${l.ended ? '' : ' \x1b[2m(no Enter yet)\x1b[0m'}\n`;
          if (l.ended && l.text) current.textContent = l.text;
        }
        return write(out);
      }
      if (ev.type === 'observation') {
        const code = ev.observation?.extras?.metadata?.exit_code;
        current.textContent = '';
        return write(typeof code === 'number'
          ? `\x1b[${code === 0 ? '32' : '31'}m[exit ${code}]\x1b[0m\n` : `\x1b[2m[${ev.observation?.observation || 'done'}]\x1b[0m\n`);
      }
      if (ev.type === 'status') {
        mount(status, badge(ev.status));
        if (ev.status === 'STOPPED') { // nothing runs any more
          procs.sessionEnded();
          current.textContent = '';
        }
        return write(`\x1b[2m[status ${ev.status}]\x1b[0m\n`);
      }
      if (ev.type === 'truncated') return write(`\x1b[33m[events ${ev.from}–${ev.to} are gone]\x1b[0m\n`);
      return undefined;
    },
    onState: ({ up, final, error }) => {
      conn.textContent = up ? '● live' : final ? `closed${error ? ': ' + error.message : ''}` : 'reconnecting…';
      conn.dataset.up = String(up);
    },
  });
  const poll = async () => {
    try {
      const s = await api(`/api/v1/sessions/${q(id)}`);
      mount(status, badge(s.status));
      meta.textContent = `by ${s.owner} · ${age(s.created)} old`;
    } catch (e) {
      meta.textContent = e.message;
    }
  };
  poll();
  setInterval(poll, 3000);
  window.__sandpipe = { term, stream: () => stream };
}
