// A line diff for showing file edits: the longest common subsequence of lines, trimmed of the
// common head and tail first (an edit usually touches a few lines of a long file). Bounded: past
// MAX cells the middle is shown as removed-then-added instead of aligned.
const MAX = 4_000_000;

/** [{op: ' ' | '-' | '+', line}] turning a into b. */
export function lineDiff(a, b) {
  const x = a.split('\n'), y = b.split('\n');
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head &&
    x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail), ys = y.slice(head, y.length - tail);
  const out = x.slice(0, head).map((line) => ({ op: ' ', line }));
  if (xs.length * ys.length > MAX) {
    for (const line of xs) out.push({ op: '-', line });
    for (const line of ys) out.push({ op: '+', line });
  } else {
    const n = xs.length, m = ys.length;
    const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        L[i][j] = xs[i] === ys[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && xs[i] === ys[j]) { out.push({ op: ' ', line: xs[i] }); i++; j++; }
      else if (i < n && (j === m || L[i + 1][j] >= L[i][j + 1])) out.push({ op: '-', line: xs[i++] });
      else out.push({ op: '+', line: ys[j++] });
    }
  }
  for (const line of x.slice(x.length - tail)) out.push({ op: ' ', line });
  return out;
}

/** The diff with at most `context` unchanged lines around each change ("…" between hunks). */
export function hunks(diff, context = 3) {
  const keep = new Uint8Array(diff.length);
  diff.forEach((d, i) => {
    if (d.op === ' ') return;
    for (let k = Math.max(0, i - context); k <= Math.min(diff.length - 1, i + context); k++) keep[k] = 1;
  });
  const out = [];
  let gap = false;
  diff.forEach((d, i) => {
    if (keep[i]) { out.push(d); gap = false; } else if (!gap) { out.push({ op: '…', line: '' }); gap = true; }
  });
  return out;
}

/**
 * The rows of an observation's own unified diff (extras.diff: OpenHands' get_diff, hunks with
 * no context lines), each with its old and new line numbers, and up to `context` unchanged lines
 * around each hunk taken from `numbered`: the editor's `cat -n` snippet of the edited file
 * (Map new line number -> text). [{op: ' ' | '-' | '+' | '…', line, old, new}]
 */
export function unifiedRows(diff, numbered = new Map(), context = 3) {
  const out = [];
  let lastNew = 0, hunk = null;
  const flushAfter = () => {
    if (!hunk) return;
    for (let n = hunk.newNext; n < hunk.newNext + context && numbered.has(n); n++) {
      out.push({ op: ' ', line: numbered.get(n), old: n - hunk.shift, new: n });
      lastNew = n;
    }
  };
  for (const text of diff.split('\n')) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(text);
    if (m) {
      flushAfter();
      const oc = m[2] === undefined ? 1 : +m[2], nc = m[4] === undefined ? 1 : +m[4];
      // "-3,0" is an insertion after line 3: its lines would start at 4.
      const oldFirst = oc ? +m[1] : +m[1] + 1, newFirst = nc ? +m[3] : +m[3] + 1;
      const before = [];
      for (let n = newFirst - 1; n >= newFirst - context && n > lastNew && numbered.has(n); n--) before.unshift(n);
      if (out.length && (before[0] ?? newFirst) > lastNew + 1) out.push({ op: '…', line: '' });
      for (const n of before) out.push({ op: ' ', line: numbered.get(n), old: n - (newFirst - oldFirst), new: n });
      hunk = { old: oldFirst, new: newFirst, newNext: newFirst + nc, shift: newFirst + nc - (oldFirst + oc) };
      lastNew = newFirst + nc - 1;
      continue;
    }
    if (!hunk) continue; // the ---/+++ header
    if (text[0] === '-') out.push({ op: '-', line: text.slice(1), old: hunk.old++, new: null });
    else if (text[0] === '+') out.push({ op: '+', line: text.slice(1), old: null, new: hunk.new++ });
  }
  flushAfter();
  return out;
}

/** The numbered lines of an editor's `cat -n` output ("     7\tline"): Map number -> text. */
export function catNumbered(text) {
  const lines = new Map();
  let on = false;
  for (const l of String(text || '').split('\n')) {
    if (/Here's the result of running `cat -n` on .*:$/.test(l)) { on = true; continue; }
    const m = on && /^ *(\d+)\t(.*)$/.exec(l);
    if (m) lines.set(+m[1], m[2]);
    else if (on && lines.size) on = false;
  }
  return lines;
}
