// A browser terminal: xterm.js on /ws/sessions/{id}/terminal (a login shell on its own PTY).
// Bytes both ways are binary frames, so anything the program prints arrives intact (UTF-8 split
// across frames, colours, binary noise); a resize is a text frame {"resize":{cols,rows}}.
//
// Re-attaching (docs/api.md): the gateway numbers the terminal's output by byte offset and keeps
// the terminal for a while after its connection drops. We count the bytes we were given and ack
// those xterm has drawn ({"ack":N}, ?ack=1); a reconnect names the terminal and our count
// (?term=ID&since=N), so the scrollback stays and no byte comes twice or goes missing. Bytes the
// gateway no longer holds are reported ({"type":"truncated"}) and shown as a marker line.
//
// Typing while the terminal is away (connecting, or reconnecting after a drop): the keystrokes
// are held here, up to KEEP_TYPED bytes, and sent once the gateway's hello says the same
// terminal is back. Only what was never handed to a socket is held, so nothing is sent twice;
// past the bound the rest is refused and the page says so. A terminal that ended meanwhile does
// not get them (a new shell would run half a command): they are dropped with a marker line.
//
// Pacing: every chunk goes to xterm with a callback; while more than HIGH bytes wait to be
// parsed and drawn, the message handler returns a promise, so the socket is not read (see
// socket.js) and the gateway stops granting the PTY credit: `yes` or a 200 MB cat runs at the
// speed the tab draws, and the tab keeps answering clicks. The hint shows while that happens.
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { openSocket, isFinal, backoff } from './socket.js';

const HIGH = 128 * 1024; // bytes handed to xterm and not yet drawn: stop reading above this
const LOW = 16 * 1024;   // ... and read again below this
const ACK_STEP = 32 * 1024; // drawn bytes between acks
export const KEEP_TYPED = 4096; // bytes typed while away, held until the terminal is back

export const darkTheme = {
  background: '#111418', foreground: '#d6dbe1', cursor: '#7cc4ff', selectionBackground: '#335577',
};
export const lightTheme = {
  background: '#fbfbfa', foreground: '#1d2125', cursor: '#0a5fb4', selectionBackground: '#b7d4f5',
  black: '#1d2125', brightBlack: '#5c6670', white: '#c4c8cc', brightWhite: '#8a9199',
  yellow: '#8a6d00', brightYellow: '#a07f00', green: '#1f7a35', brightGreen: '#218a3c',
};

export class TerminalTab {
  /**
   * el: the element to draw in. opts.termId: a terminal of the gateway's to take back (after a
   * reload: all the output it kept is replayed); opts.onTerm(id|null) says which terminal this is.
   * opts.onState({state, hint}) reports connection and pacing:
   * state 'connecting' | 'live' | 'reconnecting' | 'exited' | 'refused'; hint true while paused;
   * typed {kept, refused}: bytes typed while away, held for the terminal and refused (past
   * KEEP_TYPED).
   */
  constructor(sessionId, el, { theme = darkTheme, readOnly = false, onState, onTerm, termId = null } = {}) {
    this.id = sessionId;
    this.onState = onState || (() => {});
    this.onTerm = onTerm || (() => {}); // the gateway named (or renamed) our terminal
    this.term = new Terminal({
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
      fontSize: 14,
      cursorBlink: true,
      scrollback: 5000,
      theme,
      disableStdin: readOnly,
      allowProposedApi: false,
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
    this.term.open(el);
    this.el = el;
    this.pending = 0;
    this.waiters = [];
    this.attempt = 0;
    this.closed = false;
    this.sock = null;
    this.bytesIn = 0;
    this.paused = false;
    this.termId = termId; // the gateway's id of our terminal (given: take it back, all it kept)
    this.replay = !!termId;
    this.offset = 0;    // output offset of the next byte we will be given
    this.acked = 0;     // ... and the offset we last acked
    this.drawn = 0;     // ... and up to which xterm has drawn
    this.live = false;  // the gateway said which terminal this is: input goes straight out
    this.holding = true; // away but coming back: input is held (see KEEP_TYPED)
    this.away = 'connecting'; // ... and the state reported meanwhile
    this.typed = [];    // ... the chunks held
    this.kept = 0;      // ... their bytes
    this.refused = 0;   // ... and the bytes refused past the bound
    this.term.onData((s) => this.sendBytes(new TextEncoder().encode(s)));
    this.term.onBinary((s) => this.sendBytes(Uint8Array.from(s, (c) => c.charCodeAt(0) & 255)));
    this.term.onResize(({ cols, rows }) => this.sock?.send(JSON.stringify({ resize: { cols, rows } })));
    // Copy and paste: Ctrl+Shift+C / Ctrl+Shift+V (Ctrl+C stays the shell's interrupt).
    this.term.attachCustomKeyEventHandler((e) => {
      if (e.type !== 'keydown' || !e.ctrlKey || !e.shiftKey) return true;
      if (e.code === 'KeyC' && this.term.hasSelection()) {
        e.preventDefault();
        navigator.clipboard?.writeText(this.term.getSelection()).catch(() => {});
        return false;
      }
      if (e.code === 'KeyV') return false; // the browser's own paste event follows: xterm takes it
      return true;
    });
    this.resizeObserver = new ResizeObserver(() => this.refit());
    this.resizeObserver.observe(el);
    this.refit();
    this.connect();
  }

  refit() {
    if (this.closed || !this.el.offsetParent) return; // hidden tab: fit when shown
    try { this.fit.fit(); } catch { /* not laid out yet */ }
  }

  sendBytes(b) {
    if (this.live) {
      this.sock.send(b);
      return;
    }
    if (!this.holding) return; // exited or refused: there is no terminal to send it to
    // Whole chunks only (a paste or an escape sequence is not cut), and nothing after a refusal:
    // what reaches the shell is a prefix of what was typed.
    if (this.refused || this.kept + b.length > KEEP_TYPED) this.refused += b.length;
    else {
      this.typed.push(b);
      this.kept += b.length;
    }
    this.onState({ state: this.away, typed: this.typedState() });
  }

  typedState() {
    return { kept: this.kept, refused: this.refused };
  }

  /** The terminal is back (sendTo: its socket) or gone (null): held input goes out or away. */
  settleTyped(sendTo) {
    const kept = this.kept, refused = this.refused;
    for (const b of this.typed.splice(0)) sendTo?.send(b);
    this.kept = this.refused = 0;
    if (!sendTo && kept + refused) {
      this.term.write(`\r\n\x1b[33m[${kept + refused} bytes typed while disconnected were not sent: the terminal they were for is gone]\x1b[0m\r\n`);
    } else if (refused) {
      this.term.write(`\r\n\x1b[33m[${refused} bytes typed while disconnected were not sent: at most ${KEEP_TYPED} are kept]\x1b[0m\r\n`);
    }
  }

  connect() {
    if (this.closed) return;
    this.refit();
    const { cols, rows } = this.term;
    this.holding = true;
    this.away = this.attempt ? 'reconnecting' : 'connecting';
    this.onState({ state: this.away, typed: this.typedState() });
    let error = null, exited = null;
    // a terminal taken back after a reload: everything the gateway kept (no since)
    const since = this.replay ? '' : `&since=${this.offset}`;
    const back = this.termId ? `&term=${encodeURIComponent(this.termId)}${since}` : '';
    this.sock = openSocket(`/ws/sessions/${encodeURIComponent(this.id)}/terminal?cols=${cols}&rows=${rows}&ack=1${back}`, {
      onOpen: () => {
        this.attempt = 0;
      },
      onMessage: (d) => {
        if (typeof d !== 'string') return this.write(d);
        let m = null;
        try { m = JSON.parse(d); } catch { return undefined; /* not ours */ }
        if (m.type === 'terminal') {
          if (m.term !== this.termId || this.replay) this.offset = this.acked = this.drawn = m.offset;
          const changed = m.term !== this.termId;
          // held input is for the terminal we named (a new one if we named none)
          this.settleTyped(!this.termId || !changed ? this.sock : null);
          this.termId = m.term;
          this.replay = false;
          this.live = true;
          this.onState({ state: 'live' });
          if (changed) this.onTerm(m.term);
        } else if (m.type === 'truncated') {
          this.term.write(`\r\n\x1b[33m[${m.bytes} bytes of output were lost while disconnected: the last 1 MiB is kept]\x1b[0m\r\n`);
          this.offset = this.acked = this.drawn = m.lost_to;
        } else if (m.type === 'exit') {
          exited = m.exit_code;
        } else if (m.type === 'error') {
          error = m.error;
        }
        return undefined;
      },
      onClose: ({ code }) => {
        this.sock = null;
        this.live = false;
        this.release();
        if (this.closed) return;
        if (exited !== null) {
          this.holding = false;
          this.settleTyped(null);
          this.termId = null;
          this.onTerm(null);
          this.term.write(`\r\n\x1b[2m[the shell exited with code ${exited}; press Enter for a new one]\x1b[0m\r\n`);
          this.onState({ state: 'exited', exitCode: exited });
          const d = this.term.onKey(({ domEvent }) => {
            if (domEvent.key === 'Enter') { d.dispose(); this.connect(); }
          });
          return;
        }
        if (this.termId && error?.code === 'not_found') {
          // our terminal is gone (its grace ran out while we were away): a new shell
          this.termId = null;
          this.onTerm(null);
          this.settleTyped(null);
          this.term.write('\r\n\x1b[2m[the terminal ended while disconnected: a new shell; the scrollback above is kept]\x1b[0m\r\n');
          this.connect();
          return;
        }
        if (isFinal(code)) {
          this.holding = false;
          this.settleTyped(null);
          const why = error?.message || `closed (${code})`;
          this.term.write(`\r\n\x1b[31m[${why}]\x1b[0m\r\n`);
          this.onState({ state: 'refused', error: error || { code: 'closed', message: why } });
          return;
        }
        this.away = 'reconnecting';
        this.onState({ state: this.away, typed: this.typedState() });
        setTimeout(() => this.connect(), backoff(this.attempt++));
      },
    });
  }

  /** Hands bytes to xterm; returns a promise (stop reading) while too much waits to be drawn. */
  write(bytes) {
    const n = bytes.length, sock = this.sock;
    this.pending += n;
    this.bytesIn += n;
    this.offset += n;
    const upTo = this.offset;
    this.term.write(bytes, () => {
      this.pending -= n;
      this.drawn = Math.max(this.drawn, upTo);
      // ack what is drawn: in 32 KiB steps, and whenever xterm has caught up
      if (sock === this.sock && (this.drawn - this.acked >= ACK_STEP || this.pending === 0) && this.drawn > this.acked) {
        this.acked = this.drawn;
        sock?.send(JSON.stringify({ ack: this.acked }));
      }
      if (this.pending <= LOW) this.release();
    });
    if (this.pending <= HIGH) return undefined;
    if (!this.paused) {
      this.paused = true;
      this.onState({ state: 'live', hint: true });
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release() {
    if (this.paused) {
      this.paused = false;
      this.onState({ state: this.live ? 'live' : 'reconnecting', hint: false });
    }
    for (const w of this.waiters.splice(0)) w();
  }

  setTheme(theme) {
    this.term.options.theme = theme;
  }

  focus() {
    this.term.focus();
  }

  /** Drops the connection as a network failure would (tests). */
  drop() {
    this.sock?.close(4000, 'dropped');
  }

  dispose() {
    this.closed = true;
    this.resizeObserver.disconnect();
    this.sock?.close(1000, 'tab closed');
    this.release();
    this.term.dispose();
  }
}
