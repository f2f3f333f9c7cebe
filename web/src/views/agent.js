// The agent view: what happened in this session, from its event log — each action with who
// sent it, its output streaming in as it arrives, its observation (exit code, working
// directory), file edits as diffs, status changes, what an E2B SDK ran (process_block.js); and
// a box to submit an action as an agent would. The log is read from seq 0 on every load, so a
// reload shows the same timeline, once.
// It tells the truth: an action that failed (an error observation, an editor "ERROR:", a
// non-zero exit) has a red badge and its error text, never a diff; output with escape codes is
// drawn by xterm.js as /watch draws it (lib/ansi.js); an edit's diff is the observation's own
// (extras.diff) with line numbers, and context from the editor's snippet of the file.
import { h, mount, toast } from '../lib/dom.js';
import { lineDiff, hunks, unifiedRows, catNumbered } from '../lib/diff.js';
import { needsTerminal, renderTerminalText } from '../lib/ansi.js';
import { eventText } from '../lib/events.js';
import { isPluginObservation, pluginObservation, pluginSummary } from './plugin_obs.js';
import { ProcessBlocks } from './process_block.js';

const SHOWN = 64 * 1024;       // output characters kept on screen per action (the tail)
const BATCH = 1024 * 1024;     // output characters waiting to be drawn before we stop reading

const time = (ts) => (ts ? new Date(ts * 1000).toLocaleTimeString() : '');

function summary(a) {
  const args = a?.args || {};
  switch (a?.action) {
    case 'run': return args.is_input ? `input: ${args.command}` : args.command;
    case 'read': return args.path;
    case 'write': return args.path;
    case 'edit': return `${args.command || 'edit'} ${args.path || ''}`;
    default: return pluginSummary(a) ?? JSON.stringify(args);
  }
}

// Our own line diff of old_str and new_str: only for observations without extras.diff.
function diffView(oldText, newText) {
  const rows = hunks(lineDiff(oldText, newText));
  return h('pre.diff', rows.map((d) => h('span', {
    class: d.op === '+' ? 'add' : d.op === '-' ? 'del' : d.op === '…' ? 'gap' : 'ctx',
  }, d.op === '…' ? '…\n' : `${d.op} ${d.line}\n`)));
}

const ROW_CLASS = { '+': 'add', '-': 'del', '…': 'gap', ' ': 'ctx' };
const lineNo = (n) => h('span.ln', n == null ? '' : String(n));

/** The observation's unified diff, each row with its old and new line numbers. */
function unifiedView(diff, content) {
  const rows = unifiedRows(diff, catNumbered(content));
  return h('pre.diff.numbered', rows.map((d) => h('span', { class: ROW_CLASS[d.op] },
    d.op === '…' ? '…\n' : [lineNo(d.old), lineNo(d.new), `${d.op} ${d.line}\n`])));
}

/**
 * Why the action failed, from its (non-plugin) observation: the error text, or '' when the
 * observation says so only by its exit code, or null when it did not fail.
 */
function failure(o) {
  const content = String(o.content ?? '');
  if (o.observation === 'error') return content || o.message || 'error';
  // The editor reports its refusals in a FileEditObservation, as upstream does.
  if (/^ERROR:/.test(content) && o.observation !== 'run') return content;
  const code = o.extras?.metadata?.exit_code;
  if (typeof code === 'number' && code !== 0) return '';
  return null;
}

/** The route an action came by, as the gateway recorded it (docs/api.md, "Events"). */
const ROUTES = { ws: 'WebSocket', rest: 'REST', runtime: '/runtime/' };

/** One action's card in the timeline. */
class Entry {
  constructor(ev) {
    this.seq = ev.seq;
    this.action = ev.action || {};
    this.bytes = 0;
    this.text = '';   // arrived, not drawn yet
    this.shown = '';  // on screen (the tail)
    this.dropped = 0;
    this.draws = 0;   // flushes so far: an xterm.js render that finishes late is dropped
    this.out = h('pre.output', { hidden: true });
    this.foot = h('div.foot');
    this.state = h('span.badge.b-info', 'running');
    this.el = h('article.entry', { 'data-seq': ev.seq, 'data-kind': this.action.action || 'action' },
      h('header',
        h('span.kind', this.action.action || '?'),
        h('code.what', summary(this.action)),
        h('div.spacer'),
        this.state,
        h('span.muted.small.who', { title: `event ${ev.seq}`, 'data-via': ev.via || '' },
          `${ev.origin || '?'}${ev.via ? ` via ${ROUTES[ev.via] || ev.via}` : ''} · ${time(ev.ts)}`)),
      this.action.action === 'write' && typeof this.action.args?.content === 'string'
        ? h('details', h('summary', `content (${this.action.args.content.length} characters)`),
          h('pre.output', this.action.args.content.slice(0, SHOWN)))
        : null,
      this.out, this.foot);
  }

  append(text) {
    this.text += text;
    this.bytes += text.length;
  }

  /** Draws what arrived since the last frame (only the last SHOWN characters). */
  flush() {
    if (!this.text) return;
    this.out.hidden = false;
    let all = this.shown + this.text;
    this.text = '';
    if (all.length > SHOWN) {
      this.dropped += all.length - SHOWN;
      all = all.slice(all.length - SHOWN);
      this.out.dataset.dropped = `… ${this.dropped.toLocaleString()} earlier characters not shown`;
    }
    this.shown = all;
    const draw = ++this.draws;
    if (!needsTerminal(all)) {
      this.out.textContent = all;
      this.out.scrollTop = this.out.scrollHeight;
      return;
    }
    // Colours, \r and cursor moves: through xterm.js, as /watch shows them. A later flush wins.
    renderTerminalText(all).then((frag) => {
      if (draw !== this.draws) return;
      this.out.replaceChildren(frag);
      this.out.dataset.ansi = 'true';
      this.out.scrollTop = this.out.scrollHeight;
    });
  }

  /** Marks the card failed: a red badge and left edge, the error text in the foot. */
  failed(badge) {
    this.state.className = 'badge b-bad';
    this.state.textContent = badge;
    this.el.dataset.failed = 'true';
  }

  observe(ev) {
    const o = ev.observation || {};
    if (isPluginObservation(o.observation)) return this.observePlugin(o);
    const ex = o.extras || {};
    const meta = ex.metadata || {};
    const kind = o.observation || '?';
    this.el.dataset.observed = kind;
    const error = failure(o);
    if (error !== null) {
      this.failed(typeof meta.exit_code === 'number' ? `exit ${meta.exit_code}`
        : kind === 'error' ? 'error' : `${kind} failed`);
    } else {
      this.state.className = 'badge b-ok';
      this.state.textContent = typeof meta.exit_code === 'number' ? `exit ${meta.exit_code}` : kind;
    }
    const parts = [];
    if (meta.working_dir) parts.push(h('span.muted.small', { title: 'working directory' }, `cwd ${meta.working_dir}`));
    if (kind === 'run') {
      if (!this.bytes && o.content) {
        this.append(o.content);
        this.flush();
      }
      if (o.message) parts.push(h('span.muted.small', o.message));
    } else if (error) {
      parts.push(h('pre.output.obs.error', error.slice(0, SHOWN)));
    } else if (kind === 'edit' && typeof ex.diff === 'string' && ex.diff) {
      parts.push(h('div.muted.small', ex.path || ''), unifiedView(ex.diff, o.content));
      if (o.content) parts.push(h('details', h('summary', 'editor output'), h('pre.output.obs', o.content.slice(0, SHOWN))));
    } else if (kind === 'edit' && typeof ex.new_content === 'string') {
      parts.push(h('div.muted.small', ex.path || ''), diffView(ex.old_content || '', ex.new_content));
    } else if (o.content) {
      parts.push(h('pre.output.obs', String(o.content).slice(0, SHOWN)));
    }
    mount(this.foot, parts);
  }
}

Entry.prototype.observePlugin = function observePlugin(o) {
  const r = pluginObservation(o, this.bytes, SHOWN);
  if (r.bad) this.failed(r.badge);
  else {
    this.state.className = 'badge b-ok';
    this.state.textContent = r.badge;
  }
  this.el.dataset.observed = o.observation;
  if (r.output) {
    this.append(r.output);
    this.flush();
  }
  mount(this.foot, r.parts);
};

// The plugin each action kind needs (docs/api.md, session.create "plugins").
const NEEDS = { ipython: ['jupyter', 'IPython cells run in the session\'s Jupyter kernel'],
  browse: ['browser', 'Browsing runs in the session\'s headless Chromium'] };

/** The box to submit an action. session(): the last polled session (its plugins list). */
function submitBox(stream, session) {
  const kind = h('select', { name: 'kind', 'aria-label': 'action' },
    h('option', { value: 'run' }, 'Command'), h('option', { value: 'read' }, 'Read file'),
    h('option', { value: 'write' }, 'Write file'), h('option', { value: 'edit' }, 'Edit (str_replace)'),
    h('option', { value: 'ipython' }, 'IPython cell'), h('option', { value: 'browse' }, 'Browse (url)'));
  const command = h('input.mono', { name: 'command', placeholder: 'ls -la', autocomplete: 'off' });
  const path = h('input.mono', { name: 'path', placeholder: '/workspace/notes.txt' });
  const content = h('textarea', { name: 'content', rows: 4, placeholder: 'file content' });
  const oldStr = h('textarea', { name: 'old_str', rows: 3, placeholder: 'old text (must occur once)' });
  const newStr = h('textarea', { name: 'new_str', rows: 3, placeholder: 'new text' });
  const code = h('textarea.mono', { name: 'code', rows: 4, placeholder: 'print(1 + 1)' });
  const url = h('input.mono', { name: 'url', placeholder: 'http://127.0.0.1:8000/ or /workspace/page.html', autocomplete: 'off' });
  const note = h('p.plugin-note', { hidden: true, role: 'status' });
  const send = h('button.primary', { type: 'submit' }, 'Submit');
  const interrupt = h('button', { type: 'button', title: 'Send Ctrl-C to the running command',
    onclick: () => stream.signal('INT').catch((e) => toast(`Interrupt failed: ${e.message}`, 'error')) }, 'Interrupt');
  const fields = h('div.fields');
  // An action whose plugin the session does not allow would only come back as an error: say so
  // before, and do not offer to send it.
  const checkPlugin = () => {
    const need = NEEDS[kind.value];
    const allowed = session()?.plugins;
    const refused = need && Array.isArray(allowed) && !allowed.includes(need[0]);
    note.hidden = !refused;
    note.textContent = refused ? `${need[1]}, and this session's plugins (${allowed.join(', ') || 'none'}) ` +
      `do not include ${need[0]}: create a session with "${need[0]}" in its plugins to use it.` : '';
    send.disabled = Boolean(refused);
  };
  const show = () => {
    const k = kind.value;
    mount(fields,
      k === 'run' ? command : k === 'ipython' ? code : k === 'browse' ? url : path,
      k === 'write' ? content : null,
      k === 'edit' ? h('div.pair', oldStr, newStr) : null,
      note);
    checkPlugin();
  };
  kind.onchange = show;
  show();
  const form = h('form.submit', {
    onsubmit: async (e) => {
      e.preventDefault();
      const k = kind.value;
      const action = k === 'run' ? { action: 'run', args: { command: command.value, is_input: false } }
        : k === 'read' ? { action: 'read', args: { path: path.value } }
          : k === 'write' ? { action: 'write', args: { path: path.value, content: content.value } }
            : k === 'ipython' ? { action: 'run_ipython', args: { code: code.value, include_extra: true } }
              : k === 'browse' ? { action: 'browse', args: { url: url.value } }
                : { action: 'edit', args: { command: 'str_replace', path: path.value, old_str: oldStr.value, new_str: newStr.value } };
      send.disabled = true;
      try {
        await stream.action(action);
        if (k === 'run') command.value = '';
      } catch (err) {
        toast(`Not submitted: ${err.message}`, 'error');
      } finally {
        checkPlugin();
      }
    },
  }, h('div.row', kind, h('div.spacer'), interrupt, send), fields);
  return { form, checkPlugin };
}

/** The Agent tab. ctx.events: the session's EventStream hub (session.js). */
export function agentPanel(id, me, ctx) {
  const list = h('div.timeline', { 'aria-live': 'off' });
  const empty = h('div.empty', h('p', 'Nothing has happened in this session yet.'),
    h('p.muted', me.canWrite ? 'Submit a command below, or call the REST or WebSocket API: it shows here as it runs.'
      : 'Actions show here as they run.'));
  const conn = h('span.muted.small.conn', 'connecting…');
  const box = me.canWrite ? submitBox(ctx.events, () => ctx.session?.()) : null;
  const pane = h('div.pane.agent-pane', { 'data-panel': 'agent' },
    h('div.agent-head', h('strong', 'Timeline'), h('div.spacer'), conn),
    h('div.scroll', empty, list),
    box?.form);
  const scroller = pane.querySelector('.scroll');
  const entries = new Map();
  const dirty = new Set();
  let pendingChars = 0, frame = 0, waiters = [];
  let stick = true;
  scroller.addEventListener('scroll', () => {
    stick = scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 40;
  });

  const draw = () => {
    frame = 0;
    for (const e of dirty) e.flush();
    dirty.clear();
    pendingChars = 0;
    if (stick) scroller.scrollTop = scroller.scrollHeight;
    for (const w of waiters.splice(0)) w();
  };
  const schedule = () => { if (!frame) frame = requestAnimationFrame(draw); };

  const line = (ev, text, cls = '') => {
    empty.remove();
    list.append(h('div.event', { class: cls, 'data-seq': ev.seq }, h('span.muted.small', time(ev.ts)), ' ', text));
  };

  // What an E2B SDK runs: one block per process in the same timeline (views/process_block.js).
  const procs = new ProcessBlocks({
    place: (el) => { empty.remove(); list.append(el); },
    onDraw: () => { if (stick) scroller.scrollTop = scroller.scrollHeight; },
  });

  const onEvent = (ev) => {
    if (ProcessBlocks.handles(ev)) return procs.onEvent(ev);
    switch (ev.type) {
      case 'action': {
        empty.remove();
        const e = new Entry(ev);
        entries.set(ev.seq, e);
        list.append(e.el);
        break;
      }
      case 'output': {
        const e = entries.get(ev.action);
        if (!e) break;
        const t = eventText(ev);
        e.append(t);
        dirty.add(e);
        pendingChars += t.length;
        break;
      }
      case 'observation': {
        const e = entries.get(ev.action);
        if (!e) break;
        e.flush();
        dirty.delete(e);
        e.observe(ev);
        break;
      }
      case 'status':
        line(ev, h('span', 'status ', h('strong', ev.status), ev.message ? ` — ${ev.message}` : ''), 'status');
        if (ev.status === 'STOPPED') procs.sessionEnded();
        break;
      case 'signal':
        line(ev, `signal ${ev.signal} sent`, 'signal');
        break;
      case 'truncated':
        line(ev, `events ${ev.from}–${ev.to} are gone (${ev.reason || 'trimmed'})`, 'truncated');
        break;
      default:
        break;
    }
    schedule();
    // Pacing: past BATCH characters not yet drawn, stop reading until the next frame.
    if (pendingChars > BATCH) return new Promise((r) => waiters.push(r));
    return undefined;
  };

  const offEvent = ctx.onEvent(onEvent);
  const offState = ctx.onState(({ up, final, error }) => {
    conn.textContent = up ? 'live' : final ? `closed${error ? ': ' + error.message : ''}` : 'reconnecting…';
    conn.dataset.up = String(up);
  });
  return {
    key: 'agent', label: 'Agent', pane,
    onStatus(status) { // the session's plugins are known from its first poll; a stopped one takes no actions
      if (status === 'STOPPED') box?.form.remove(); else box?.checkPlugin();
    },
    dispose() { offEvent(); offState(); procs.dispose(); if (frame) cancelAnimationFrame(frame); for (const w of waiters.splice(0)) w(); },
  };
}
