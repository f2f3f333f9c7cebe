// What an E2B SDK runs in a session (the gateway's envd, gateway/envd_proc.c: events `process`
// start/end and `process_output`), one block per process. Processes run at once (background
// commands, PTYs) and their output interleaves in the event log, so a block is found by its pid
// and updated in place. A block shows the command as the SDK gave it (`/bin/bash -l -c X`: X),
// "via E2B SDK", its cwd, stdout and stderr apart (stderr in the error colour), a PTY's output
// drawn by xterm.js as terminal output is everywhere (lib/ansi.js), output the log could not keep
// as a count, and the end: the exit code or the signal. The agent view and /watch share it, so a
// live session and its replay (the log read from seq 0) look the same.
import { h, mount } from '../lib/dom.js';
import { eventText } from '../lib/events.js';
import { needsTerminal, renderTerminalText } from '../lib/ansi.js';

const SHOWN = 64 * 1024;   // output characters kept on screen per process (the tail)
const BATCH = 1024 * 1024; // output characters waiting to be drawn before the stream is held back

const SHELLS = /(^|\/)(ba|da|z)?sh$/;
const BARE = /^[\w@%+=:,./-]+$/;

/** A word as a shell would take it: bare when nothing in it is special, else single-quoted. */
const quote = (w) => (BARE.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

/** The command line a person reads: X for `/bin/bash -l -c X` (what commands.run sends), else
 * the program and its arguments as typed at a shell. */
export function commandLine(cmd, args = []) {
  const c = args.indexOf('-c');
  if (SHELLS.test(cmd || '') && c >= 0 && c === args.length - 2 && args.slice(0, c).every((a) => a.startsWith('-')))
    return args[c + 1];
  return [cmd || '?', ...args].map(quote).join(' ');
}

const time = (ts) => (ts ? new Date(ts * 1000).toLocaleTimeString() : '');
const gapText = (n) => `[${n.toLocaleString()} bytes of output not recorded here: the event log was behind]`;

/** One process's block: its header, its output (the last SHOWN characters) and its end. */
class ProcessBlock {
  /** start: the process's start event, or null when the log does not hold it (trimmed). */
  constructor(pid, start, ev) {
    this.pid = pid;
    this.pty = Boolean(start?.pty);
    this.runs = [];    // [{stream: 'stdout'|'stderr'|'pty'|'gap', text}], the tail on screen
    this.chars = 0;
    this.dropped = 0;
    this.draws = 0;    // a late xterm.js render of an older flush is dropped
    this.ended = null; // its end event, shown once the output before it is drawn
    this.out = h('pre.output', { hidden: true });
    this.state = h('span.badge.b-info', 'running');
    const line = start ? commandLine(start.cmd, start.args || []) : `pid ${pid}`;
    const meta = [
      start?.cwd && h('span', { title: 'working directory' }, `cwd ${start.cwd}`),
      start?.tag && h('span', `tag ${start.tag}`),
      !start && h('span', 'its start is not in the log'),
    ].filter(Boolean);
    this.el = h('article.entry.proc', {
      'data-pid': pid, 'data-via': 'e2b', 'data-kind': this.pty ? 'pty' : 'command', 'data-state': 'running',
    },
    h('header',
      h('span.kind', this.pty ? 'pty' : 'command'),
      h('code.what', line),
      h('div.spacer'),
      this.state,
      h('span.muted.small.who', { title: `event ${ev.seq}` }, `via E2B SDK · pid ${pid} · ${time(ev.ts)}`)),
    meta.length ? h('div.proc-meta.muted.small', meta) : null,
    this.out);
  }

  /** Queues text of a stream; returns how many characters it added. */
  add(stream, text) {
    if (!text) return 0;
    const last = this.runs[this.runs.length - 1];
    if (last && last.stream === stream) last.text += text;
    else this.runs.push({ stream, text });
    this.chars += text.length;
    while (this.chars > SHOWN && this.runs.length) {
      const first = this.runs[0], cut = Math.min(first.text.length, this.chars - SHOWN);
      first.text = first.text.slice(cut);
      if (!first.text) this.runs.shift();
      this.chars -= cut;
      this.dropped += cut;
    }
    return text.length;
  }

  /** Says, where it happened, that n bytes of output were not recorded. */
  unrecorded(n) {
    this.el.dataset.unrecorded = String(Number(this.el.dataset.unrecorded || 0) + n);
    const before = this.runs[this.runs.length - 1]?.text || '';
    return this.add('gap', `${before && !before.endsWith('\n') ? '\n' : ''}${gapText(n)}\n`);
  }

  /** Its end: shown once the output before it is drawn (flush). */
  end(ev) {
    if (ev.unrecorded) this.unrecorded(ev.unrecorded);
    this.ended = ev;
  }

  showEnd() {
    const ev = this.ended;
    if (!ev) return;
    const status = String(ev.status || '');
    const signal = /^signal: /.test(status) ? status : null;
    const code = Number(ev.exit_code);
    this.state.title = status;
    this.state.textContent = signal || `exit ${code}`;
    this.state.className = `badge ${signal ? 'b-warn' : code === 0 ? 'b-ok' : 'b-bad'}`;
    if (!signal && code !== 0) this.el.dataset.failed = 'true';
    this.el.dataset.exit = String(code);
    this.el.dataset.state = signal ? 'signalled' : 'exited';
  }

  /** The session ended with no end of this process in the log (its sandbox went first). */
  sessionEnded() {
    if (this.ended || this.el.dataset.state !== 'running') return;
    this.el.dataset.state = 'unended';
    this.state.className = 'badge b-off';
    this.state.textContent = 'no end recorded';
    this.state.title = 'The session ended before this process\'s end was recorded';
  }

  /** Draws the output as it is now, then the end if it came; a promise when xterm.js draws it
   * (escape codes, a PTY). */
  flush() {
    if (!this.runs.length) return this.showEnd();
    this.out.hidden = false;
    if (this.dropped) this.out.dataset.dropped = `… ${this.dropped.toLocaleString()} earlier characters not shown`;
    const draw = ++this.draws;
    if (!this.runs.some((r) => needsTerminal(r.text))) {
      mount(this.out, this.runs.map((r) => (r.stream === 'stderr' ? h('span.stderr', r.text)
        : r.stream === 'gap' ? h('span.gap', r.text) : r.text)));
      this.out.scrollTop = this.out.scrollHeight;
      return this.showEnd();
    }
    // stderr and the unrecorded counts keep their colours in the terminal's palette
    const text = this.runs.map((r) => (r.stream === 'stderr' ? `\x1b[31m${r.text}\x1b[39m`
      : r.stream === 'gap' ? `\x1b[33m${r.text}\x1b[39m` : r.text)).join('');
    return renderTerminalText(text).then((frag) => {
      if (draw !== this.draws) return;
      this.out.replaceChildren(frag);
      this.out.dataset.ansi = 'true';
      this.out.scrollTop = this.out.scrollHeight;
      this.showEnd();
    });
  }
}

/** The blocks of a session's E2B processes, drawn once per animation frame. */
export class ProcessBlocks {
  /** place(el): puts a new block where the view wants it; onDraw(): after a frame's drawing
   * (the view keeps its scroll at the bottom). */
  constructor({ place, onDraw = () => {} }) {
    this.place = place;
    this.onDraw = onDraw;
    this.byPid = new Map();
    this.dirty = new Set();
    this.pending = 0;
    this.frame = 0;
    this.waiters = [];
  }

  static handles(ev) {
    return ev.type === 'process' || ev.type === 'process_output';
  }

  block(pid, start, ev) {
    let b = this.byPid.get(pid);
    if (!b || start) { // a start names a new process, even on a pid seen before
      b = new ProcessBlock(pid, start, ev);
      this.byPid.set(pid, b);
      this.place(b.el);
    }
    return b;
  }

  /** One process or process_output event; a promise while too much waits to be drawn. */
  onEvent(ev) {
    const pid = Number(ev.pid);
    if (ev.type === 'process' && ev.event === 'start') {
      this.block(pid, ev, ev);
    } else if (ev.type === 'process' && ev.event === 'end') {
      const b = this.block(pid, null, ev);
      b.end(ev);
      this.dirty.add(b);
    } else if (ev.type === 'process_output') {
      const b = this.block(pid, null, ev);
      if (ev.unrecorded_before) this.pending += b.unrecorded(ev.unrecorded_before);
      this.pending += b.add(ev.stream === 'stderr' ? 'stderr' : ev.stream === 'pty' ? 'pty' : 'stdout', eventText(ev));
      this.dirty.add(b);
    }
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
    if (this.pending > BATCH) return new Promise((r) => this.waiters.push(r));
    return undefined;
  }

  /** The session stopped: a process still running in the log has no end to wait for. */
  sessionEnded() {
    for (const b of this.byPid.values()) b.sessionEnded();
  }

  draw() {
    this.frame = 0;
    for (const b of this.dirty) b.flush()?.then(() => this.onDraw());
    this.dirty.clear();
    this.pending = 0;
    this.onDraw();
    for (const w of this.waiters.splice(0)) w();
  }

  dispose() {
    if (this.frame) cancelAnimationFrame(this.frame);
    for (const w of this.waiters.splice(0)) w();
  }
}
