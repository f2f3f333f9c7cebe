// The Files tab's open files, as tabs above the editor: open (or switch to) a file, each with
// its own CodeMirror (its undo history and scroll stay while another is shown), a ● on a tab
// with unsaved changes, close (×, or Delete on the tab); closing one with unsaved changes asks
// in a bar above it (Save, Discard, Cancel), never with confirm(). The tabs are an ARIA tablist
// (lib/tablist.js). Which files are open, and the one shown, are kept per session in
// sessionStorage: a reload opens them again. A file that changes on disk (file events:
// changedOnDisk) is read again: a tab without unsaved changes shows the new text, one with them
// keeps them and says so in a bar above its text (Reload takes the disk's; Save writes over it).
import { api, q, ApiError } from '../lib/rest.js';
import { h, mount, toast, bytes } from '../lib/dom.js';
import { currentTheme } from '../lib/theme.js';
import { tablistKeys, markSelected } from '../lib/tablist.js';
import { base } from './file_tree.js';

/**
 * S: the session's REST prefix; store: its sessionStorage key. cb.changed() after anything the
 * file bar shows changed (the file shown, its dirty mark); cb.download(path).
 */
export function editorTabs(S, me, store, cb) {
  const docs = [];  // {path, readOnly, dirty, editor, box, tab, note, disk, notice}
  let shown = null;
  let loadingEditor = null;
  const bar = h('div.editor-tabs', { role: 'tablist', 'aria-label': 'open files' });
  const confirmBar = h('div.confirm-bar', { hidden: true, role: 'alertdialog' });
  const boxes = h('div.editor-boxes');
  const empty = h('div.empty', h('p', 'Open a file from the tree.'),
    h('p.muted', me.canWrite ? 'Drop files on the tree to upload them. Ctrl+S saves, Ctrl+F searches the file, Escape then Tab leaves the editor.'
      : 'Read-only: this token cannot change files.'));
  const view = h('div.editor', confirmBar, boxes, empty);

  tablistKeys(bar, (button) => show(docs.find((d) => d.tab === button), { focus: false }));
  bar.addEventListener('keydown', (e) => {
    const d = docs.find((x) => x.tab === e.target.closest?.('[role=tab]'));
    if (d && e.key === 'Delete' && !e.altKey && !e.ctrlKey && !e.metaKey) { e.preventDefault(); close(d); }
  });

  const keep = () => sessionStorage.setItem(store, JSON.stringify({ paths: docs.map((d) => d.path), shown: shown?.path || null }));

  function tabFor(d) {
    const dirty = h('span.dirty', { hidden: true, title: 'unsaved changes', 'aria-label': 'unsaved changes' }, ' ●');
    d.dirtyMark = dirty;
    d.tab = h('button.tab.file-tab', {
      role: 'tab', tabindex: -1, 'data-file': d.path, title: `${d.path} (Delete closes the tab)`,
      onclick: () => show(d),
    }, h('span.name', base(d.path)), dirty,
    h('span.close', { 'aria-hidden': 'true', title: 'Close', onclick: (e) => { e.stopPropagation(); close(d); } }, '×'));
    return d.tab;
  }

  function setDirty(d, dirty) {
    d.dirty = dirty;
    d.dirtyMark.hidden = !dirty;
    d.tab.dataset.dirty = String(dirty);
    cb.changed();
  }

  function show(d, { focus = true } = {}) {
    if (!d) return;
    shown = d;
    markSelected(docs.map((x) => x.tab), d.tab);
    for (const x of docs) x.box.hidden = x !== d;
    empty.hidden = true;
    if (!confirmBar.hidden && confirmBar.dataset.path !== d.path) hideConfirm();
    keep();
    cb.changed();
    if (focus) d.editor?.focus();
  }

  /** Reads path and shows it in a tab of its own (the one it has, if open); line: go there. */
  async function open(path, { focus = true, line = 0 } = {}) {
    let d = docs.find((x) => x.path === path);
    if (!d) {
      let r, failed = null;
      try {
        r = await api(`${S}/files/content?path=${q(path)}`);
      } catch (e) {
        failed = e;
      }
      d = docs.find((x) => x.path === path); // opened meanwhile (two clicks)
      if (!d) {
        d = { path: r?.path || path, readOnly: true, dirty: false, box: h('div.editor-box', { 'data-file': r?.path || path }) };
        docs.push(d);
        bar.append(tabFor(d));
        boxes.append(d.box);
        if (failed) {
          const binary = failed instanceof ApiError && failed.code === 'invalid';
          mount(d.box, h('div.empty', h('p', binary ? 'This file is not text.' : `Cannot open it: ${failed.message}`),
            h('p', h('button', { onclick: () => cb.download(d.path) }, 'Download it'))));
        } else {
          loadingEditor ||= import('../lib/editor.js');
          const { createEditor } = await loadingEditor;
          d.disk = r.content; // the text on disk as last read or written here
          d.readOnly = !me.canWrite || !!r.truncated;
          d.note = r.truncated ? 'too large to edit here: shown in part, read-only' : '';
          d.editor = createEditor(d.box, {
            doc: r.content, path: d.path, readOnly: d.readOnly, dark: currentTheme() === 'dark',
            onSave: () => save(d),
            onChange: () => { if (!d.dirty) setDirty(d, true); },
          });
        }
      }
    }
    show(d, { focus });
    if (line && d.editor) d.editor.gotoLine(line);
    return d;
  }

  async function save(d = shown) {
    if (!d?.editor || d.readOnly) return;
    const text = d.editor.getText();
    d.saving = text; // its file events may come before the answer: not news to this tab
    try {
      const r = await api(`${S}/files/content?path=${q(d.path)}`, { method: 'PUT', body: new Blob([text]) });
      d.disk = text;
      setDirty(d, false);
      setNotice(d, null);
      toast(`Saved ${base(r.path)} (${bytes(r.size)})`);
      return true;
    } catch (e) {
      toast(`Save failed: ${e.message}`, 'error');
      return false;
    } finally { d.saving = null; }
  }

  function drop(d) {
    const i = docs.indexOf(d);
    if (i < 0) return;
    d.editor?.destroy();
    d.tab.remove();
    d.box.remove();
    docs.splice(i, 1);
    if (confirmBar.dataset.path === d.path) hideConfirm();
    if (shown === d) {
      shown = null;
      const next = docs[Math.max(0, i - 1)];
      if (next) show(next, { focus: false });
      else { empty.hidden = false; keep(); cb.changed(); }
    } else keep();
  }

  function hideConfirm() {
    confirmBar.hidden = true;
    delete confirmBar.dataset.path;
    mount(confirmBar);
  }

  /** Closes d; with unsaved changes, asks first (in the bar above it). */
  function close(d) {
    if (!d) return;
    if (!d.dirty) { const tabbed = document.activeElement === d.tab; drop(d); if (tabbed) shown?.tab.focus(); return; }
    show(d, { focus: false });
    const cancel = () => { hideConfirm(); d.tab.focus(); };
    const saveBtn = h('button.primary', { onclick: async () => { if (await save(d)) { hideConfirm(); drop(d); shown?.tab.focus(); } } }, 'Save');
    mount(confirmBar,
      h('span', h('strong', base(d.path)), ' has unsaved changes. Save them before closing?'),
      h('span.spacer'),
      saveBtn,
      h('button.danger', { 'data-action': 'discard', onclick: () => { hideConfirm(); drop(d); shown?.tab.focus(); } }, 'Discard'),
      h('button', { onclick: cancel }, 'Cancel'));
    confirmBar.dataset.path = d.path;
    confirmBar.setAttribute('aria-label', `unsaved changes in ${base(d.path)}`);
    confirmBar.hidden = false;
    confirmBar.onkeydown = (e) => { if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); cancel(); } };
    saveBtn.focus();
  }

  /** A file or folder was renamed: its open files follow it. */
  function moved(from, to) {
    for (const d of docs) {
      if (d.path !== from && !d.path.startsWith(from + '/')) continue;
      d.path = to + d.path.slice(from.length);
      d.tab.dataset.file = d.path;
      d.tab.title = d.path;
      d.tab.querySelector('.name').textContent = base(d.path);
      d.box.dataset.file = d.path;
    }
    keep();
    cb.changed();
  }

  /** A file or folder was deleted: its open files close (their unsaved changes with them). */
  function removed(path) {
    const gone = docs.filter((d) => d.path === path || d.path.startsWith(path + '/'));
    const lost = gone.filter((d) => d.dirty).map((d) => base(d.path));
    for (const d of gone) drop(d);
    if (lost.length) toast(`${lost.join(', ')} deleted: its unsaved changes are gone`, 'error');
  }

  /** The bar above d's text saying it changed on disk (kind 'changed' | 'deleted'), or none. */
  function setNotice(d, kind) {
    d.notice?.remove();
    d.notice = null;
    d.tab.dataset.disk = kind || '';
    if (!kind) return;
    const name = base(d.path);
    const reload = h('button', { 'data-action': 'reload', onclick: () => check(d, { take: true }) }, 'Reload');
    const keep = h('button', { 'data-action': 'keep', onclick: () => setNotice(d, null) }, 'Keep mine');
    d.notice = kind === 'changed'
      ? h('div.disk-notice', { role: 'status', 'data-notice': kind },
        h('span', h('strong', name), ' changed on disk. Your unsaved changes are kept: Save writes them over it, Reload takes the version on disk.'),
        h('span.spacer'), reload, keep)
      : h('div.disk-notice', { role: 'status', 'data-notice': kind },
        h('span', h('strong', name), ' was deleted on disk. ', d.dirty ? 'Your unsaved changes are kept: Save writes it again.' : 'Save writes it again.'),
        h('span.spacer'), keep);
    d.box.prepend(d.notice);
  }

  /** Reads d from disk again: the new text shown when d has no unsaved changes (or take), else
   * said. Its tab counts the reads done (data-disk-checks: what the tests wait for). */
  async function check(d, opts) {
    try {
      await recheck(d, opts);
    } finally {
      d.tab.dataset.diskChecks = String(Number(d.tab.dataset.diskChecks || 0) + 1);
    }
  }

  async function recheck(d, { take = false } = {}) {
    if (!d.editor) return;
    let r;
    try {
      r = await api(`${S}/files/content?path=${q(d.path)}`);
    } catch (e) {
      if (e.status === 404 || e.code === 'not_found') setNotice(d, 'deleted');
      return;
    }
    if (!docs.includes(d)) return; // closed meanwhile
    if ((r.content === d.disk || r.content === d.saving) && !take) { // nothing new, or its own save
      if (d.notice?.dataset.notice === 'deleted') setNotice(d, null);
      return;
    }
    d.disk = r.content;
    if (d.dirty && !take) { setNotice(d, 'changed'); return; }
    d.editor.setText(r.content);
    setDirty(d, false);
    setNotice(d, null);
  }

  /** File events (docs/api.md, "File events"): the open files they name are read again. */
  async function changedOnDisk(events) {
    const hit = new Set();
    for (const ev of events) {
      for (const d of docs) {
        if (!d.editor) continue;
        const whole = ev.event === 'many' || ev.event === 'resync';
        if (whole ? d.path.startsWith(ev.path === '/' ? '/' : ev.path + '/') : ev.path === d.path && ev.event !== 'attrib') hit.add(d);
      }
    }
    for (const d of hit) await check(d);
  }

  /** Opens again the files a reload left open (sessionStorage), the one shown last on top. */
  async function restore() {
    let kept;
    try { kept = JSON.parse(sessionStorage.getItem(store)); } catch { kept = null; }
    if (!kept?.paths?.length) return;
    for (const p of kept.paths) await open(p, { focus: false });
    const d = docs.find((x) => x.path === kept.shown);
    if (d) show(d, { focus: false });
  }

  return {
    bar, view, open, save, close, moved, removed, restore, changedOnDisk,
    shown: () => shown,
    setTheme: (dark) => { for (const d of docs) d.editor?.setTheme(dark); },
    focus: () => shown?.editor?.focus(),
    dispose: () => { for (const d of docs) d.editor?.destroy(); },
  };
}
