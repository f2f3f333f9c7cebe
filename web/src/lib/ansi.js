// Terminal output as styled text, rendered the way /watch and the terminal tabs render it: the
// bytes go through xterm.js itself (one offscreen Terminal, never opened, shared by every caller),
// and the cells it leaves are read back as spans. So colours, bold, `\r` progress lines, cursor
// moves and erases come out as they do in a terminal, and no second escape-code parser exists.
// Palette colours are CSS variables (--ansi-0 … --ansi-15) set from the terminal themes
// (lib/terminal.js) over xterm's own defaults, so the theme toggle recolours without a redraw.
import { Terminal } from '@xterm/xterm';
import { darkTheme, lightTheme } from './terminal.js';

const COLS = 160;        // wrapped lines are joined again: the width only bounds memory
const LINES = 5000;      // lines kept (the tail), as the terminal tab's scrollback

/** Whether text needs a terminal to be shown right (escape codes, a lone carriage return). */
export const needsTerminal = (s) => /\x1b|\r(?!\n)|[\b]/.test(s);

// xterm.js's default ANSI colours (its ThemeService), which our themes override in part.
const NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];
const XTERM = ['#2e3436', '#cc0000', '#4e9a06', '#c4a000', '#3465a4', '#75507b', '#06989a', '#d3d7cf',
  '#555753', '#ef2929', '#8ae234', '#fce94f', '#729fcf', '#ad7fa8', '#34e2e2', '#eeeeec'];
const palette = (theme) => XTERM.map((c, i) => {
  const name = i < 8 ? NAMES[i] : 'bright' + NAMES[i - 8][0].toUpperCase() + NAMES[i - 8].slice(1);
  return `--ansi-${i}:${theme[name] || c}`;
}).join(';');

let term = null;
function terminal() {
  if (term) return term;
  const style = document.createElement('style');
  style.textContent = `:root{${palette(darkTheme)}}:root[data-theme=light]{${palette(lightTheme)}}`;
  document.head.append(style);
  term = new Terminal({ cols: COLS, rows: 1, scrollback: LINES, convertEol: true, allowProposedApi: false });
  return term;
}

// Colours 16–255 of the 256-colour table: a 6×6×6 cube, then 24 greys.
function xterm256(n) {
  if (n >= 232) { const v = 8 + (n - 232) * 10; return `rgb(${v},${v},${v})`; }
  const k = n - 16, c = (v) => (v ? 55 + v * 40 : 0);
  return `rgb(${c(Math.floor(k / 36))},${c(Math.floor(k / 6) % 6)},${c(k % 6)})`;
}
function colour(cell, fg) {
  if (fg ? cell.isFgDefault() : cell.isBgDefault()) return '';
  const v = fg ? cell.getFgColor() : cell.getBgColor();
  if (fg ? cell.isFgRGB() : cell.isBgRGB()) return `#${v.toString(16).padStart(6, '0')}`;
  return v < 16 ? `var(--ansi-${v})` : xterm256(v);
}
function styleOf(cell) {
  let fg = colour(cell, true), bg = colour(cell, false);
  if (cell.isInverse()) [fg, bg] = [bg || 'var(--bg)', fg || 'var(--fg)'];
  const s = [];
  if (fg) s.push(`color:${fg}`);
  if (bg) s.push(`background:${bg}`);
  if (cell.isBold()) s.push('font-weight:bold');
  if (cell.isDim()) s.push('opacity:.6');
  if (cell.isItalic()) s.push('font-style:italic');
  const lines = [cell.isUnderline() && 'underline', cell.isStrikethrough() && 'line-through'].filter(Boolean);
  if (lines.length) s.push(`text-decoration:${lines.join(' ')}`);
  if (cell.isInvisible()) s.push('visibility:hidden');
  return s.join(';');
}

/** The screen xterm.js left after `text`, as a fragment of text and styled spans. */
function readBack(t) {
  const frag = document.createDocumentFragment();
  const buf = t.buffer.active;
  const cell = buf.getNullCell();
  let run = '', runStyle = '', pendingNewlines = '';
  const emit = () => {
    if (!run) return;
    if (runStyle) {
      const s = document.createElement('span');
      s.setAttribute('style', runStyle);
      s.textContent = run;
      frag.append(s);
    } else {
      frag.append(run);
    }
    run = '';
  };
  const add = (text, st) => {
    if (st !== runStyle) { emit(); runStyle = st; }
    run += text;
  };
  for (let y = 0; y < buf.length; y++) {
    const line = buf.getLine(y);
    if (y > 0 && !line.isWrapped) pendingNewlines += '\n';
    const want = line.translateToString(true).length;
    let got = 0;
    for (let x = 0; x < COLS && got < want; x++) {
      line.getCell(x, cell);
      const chars = cell.getChars();
      if (!cell.getWidth()) continue; // the right half of a wide character
      if (pendingNewlines) { add(pendingNewlines, ''); pendingNewlines = ''; }
      add(chars || ' ', styleOf(cell));
      got += (chars || ' ').length;
    }
  }
  emit();
  if (pendingNewlines) frag.append('\n'); // output that ended with a newline keeps it
  return frag;
}

// Renders are serialised: each is "reset, write, read back" on the one terminal, and xterm.js
// calls write callbacks in order, right after that write was parsed.
/**
 * Resolves to a DocumentFragment showing `text` as a terminal would (the last LINES lines).
 * The text is the program's output as received (UTF-8 decoded); `\n` starts a new line.
 */
export function renderTerminalText(text) {
  const t = terminal();
  return new Promise((resolve) => {
    t.write('\x1bc' + text, () => resolve(readBack(t)));
  });
}
