// What a person typed into a terminal (a terminal_input event's bytes, as typed) as the lines a
// viewer would read: backspace and Ctrl+U edit the line as the shell's line editor does, Enter
// ends it, arrow keys and other keys with escape sequences show as marks (⟨↑⟩, ⟨Home⟩…),
// control keys as ^C, ^D…. The shell may have done more (history, completion): this is the
// keys, not the command line it made of them.
const KEYS = { A: '↑', B: '↓', C: '→', D: '←', H: 'Home', F: 'End' };

/** data (a string) -> [{text, ended}]: each line, and whether Enter ended it. */
export function typedLines(data) {
  const out = [];
  let line = '';
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === '\r' || c === '\n') {
      if (c === '\n' && data[i - 1] === '\r') continue; // CR LF: one Enter
      out.push({ text: line, ended: true });
      line = '';
    } else if (c === '\x7f' || c === '\b') {
      line = [...line].slice(0, -1).join('');
    } else if (c === '\x15') {
      line = ''; // Ctrl+U
    } else if (c === '\x1b') {
      // CSI (ESC [ params final) or SS3 (ESC O final): a key; anything else: ESC alone
      const m = /^\x1b(?:\[([0-9;]*)([A-Za-z~])|O([A-Za-z]))/.exec(data.slice(i));
      if (m) {
        const fin = m[2] || m[3];
        line += `⟨${KEYS[fin] || (fin === '~' ? `~${m[1]}` : fin)}⟩`;
        i += m[0].length - 1;
      } else line += '⟨Esc⟩';
    } else if (c === '\t') {
      line += '⇥';
    } else if (c < ' ') {
      line += '^' + String.fromCharCode(c.charCodeAt(0) + 64);
    } else {
      line += c;
    }
  }
  if (line) out.push({ text: line, ended: false });
  return out;
}
