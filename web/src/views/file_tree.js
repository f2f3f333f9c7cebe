// The Files tab's tree of the workspace (REST: files, files/mkdir, files/move, DELETE files): an
// ARIA tree the keyboard works as it does in a desktop IDE, and its edits made in the tree itself.
//
// Keyboard: one row is in the page's Tab order (roving tabindex: the last one focused); ↑/↓ the
// previous/next row, → opens a folder or goes to its first child, ← closes it or goes to the
// parent, Home/End, Enter opens a file in the editor (the keyboard goes there) or opens/closes
// a folder, Space opens a file and stays in the tree, F2 renames, Delete deletes.
// Edits: rename, new file and new folder are an input in the row (Enter commits, Escape cancels,
// a refusal is said under it and the input stays); delete asks in the row. No prompt() or
// confirm(): they stop the page and cannot show why something failed.
import { api, q } from '../lib/rest.js';
import { h, mount, toast, bytes } from '../lib/dom.js';

export const join = (dir, name) => (dir.endsWith('/') ? dir + name : `${dir}/${name}`);
export const parent = (p) => p.replace(/\/[^/]*$/, '') || '/';
export const base = (p) => p.replace(/^.*\//, '');

/**
 * S: the session's REST prefix. me: the token's rights. cb.open(path, {focus}) opens a file;
 * cb.moved(from, to) and cb.removed(path) tell the editor what happened to paths under them;
 * cb.current() is the path of the file the editor shows (marked in the tree).
 */
export function fileTree(S, me, cb) {
  let root = null;              // absolute path of the workspace
  const listings = new Map();   // dir -> entries
  const expanded = new Set();   // folders shown open
  let selectedDir = null;       // where new files go (the last folder chosen, or a file's)
  let focusPath = null;         // the row in the Tab order
  let edit = null;              // {kind: 'rename'|'file'|'folder', path|dir, input, error, row}
  let confirming = null;        // {path, row}: a delete asked about in its row

  const tree = h('div.tree', { role: 'tree', 'aria-label': 'workspace files' });

  async function list(dir) {
    const r = await api(`${S}/files?path=${q(dir)}`);
    listings.set(r.path, r.entries || []);
    return r;
  }

  const sig = () => [...listings].map(([d, es]) => d + ':' + es.map((e) => `${e.name}/${e.type}/${e.size}/${e.mtime}`).join(',')).join('|');

  /** Reads folders again (a folder that is gone closes); draws the tree when something changed. */
  async function relist(dirs, force = false) {
    const before = sig();
    for (const d of dirs) {
      try { await list(d); } catch (e) {
        if (d !== root && (e.status === 404 || e.code === 'not_found')) { expanded.delete(d); listings.delete(d); } else if (d === root) throw e;
      }
    }
    if (force || sig() !== before) render();
  }

  /** Re-reads the open folders; draws the tree again when something changed (or force). */
  async function refresh(force = false) {
    try {
      if (!root) root = (await list('.')).path;
      await relist([root, ...expanded], force);
    } catch (e) {
      if (!root) mount(tree, h('div.error.small', `Cannot list the workspace: ${e.message}`));
    }
  }

  const isUnder = (p, dir) => p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');

  /**
   * File events (docs/api.md, "File events"): reads again the folders shown that they name, the
   * folder of each path that changed; a "many" or "resync" names a directory to read again
   * with every folder shown below it.
   */
  async function changed(events) {
    if (!root) return;
    const shown = new Set([root, ...expanded]), dirs = new Set();
    for (const ev of events) {
      if (ev.event === 'many' || ev.event === 'resync') {
        for (const d of shown) if (isUnder(d, ev.path)) dirs.add(d);
        continue;
      }
      const d = parent(ev.path);
      if (shown.has(d)) dirs.add(d);
      if (ev.is_dir && (ev.event === 'deleted' || ev.event === 'moved_from')) {
        // an open folder that went: closed (one made again under its name starts closed)
        for (const x of [...expanded]) if (isUnder(x, ev.path)) { expanded.delete(x); listings.delete(x); dirs.delete(x); }
      }
    }
    if (!dirs.size) return;
    try {
      await relist([...dirs]);
    } catch (e) {
      toast(`Cannot list the workspace: ${e.message}`, 'error');
    }
  }

  // ---- rows ----
  function fileRow(entry, dir, depth, pos, size) {
    const path = join(dir, entry.name);
    const isDir = entry.type === 'directory';
    if (edit?.kind === 'rename' && edit.path === path) return edit.row;
    if (confirming?.path === path) return confirming.row;
    const el = h('div.node', {
      role: 'treeitem', 'data-path': path, 'data-type': entry.type, tabindex: -1,
      'aria-level': depth + 1, 'aria-setsize': size, 'aria-posinset': pos,
      'aria-expanded': isDir ? String(expanded.has(path)) : undefined,
      'aria-selected': String(cb.current() === path),
      class: (cb.current() === path ? 'open' : '') + (selectedDir === path ? ' selected' : ''),
      style: { paddingLeft: `${0.6 + depth * 0.9}rem` },
      title: `${path}\n${entry.type}, ${bytes(entry.size)}`,
      onclick: () => { focusPath = path; if (isDir) toggle(path); else cb.open(path, { focus: true }); },
    }, h('span.twisty', { 'aria-hidden': 'true' }, isDir ? (expanded.has(path) ? '▾' : '▸') : ''), h('span.name', entry.name),
    // rename and delete from the row, by mouse (the keyboard has F2 and Delete)
    me.canWrite && h('span.node-actions',
      h('button.ghost', { tabindex: -1, title: `Rename ${entry.name} (F2)`, 'aria-label': `rename ${entry.name}`, 'data-action': 'rename',
        onclick: (e) => { e.stopPropagation(); startRename(path); } }, '✎'),
      h('button.ghost.danger', { tabindex: -1, title: `Delete ${entry.name} (Delete)`, 'aria-label': `delete ${entry.name}`, 'data-action': 'delete',
        onclick: (e) => { e.stopPropagation(); askDelete(path); } }, '✕')));
    if (isDir) el.dataset.dir = path;
    return el;
  }

  function render() {
    if (!root) return;
    const focused = document.activeElement;
    const hadFocus = tree.contains(focused);
    const caret = focused?.tagName === 'INPUT' ? [focused.selectionStart, focused.selectionEnd] : null;
    const out = [];
    const walk = (dir, depth) => {
      const es = [...(listings.get(dir) || [])].sort((a, b) =>
        (b.type === 'directory') - (a.type === 'directory') || a.name.localeCompare(b.name));
      if ((edit?.kind === 'file' || edit?.kind === 'folder') && edit.dir === dir) {
        edit.row.style.paddingLeft = `${0.6 + depth * 0.9}rem`;
        out.push(edit.row);
      }
      es.forEach((e, i) => {
        out.push(fileRow(e, dir, depth, i + 1, es.length));
        const p = join(dir, e.name);
        if (e.type === 'directory' && expanded.has(p)) walk(p, depth + 1);
      });
    };
    walk(root, 0);
    mount(tree, out.length ? out : h('div.muted.small.pad', 'The workspace is empty.'));
    const rows = nodes();
    if (!rows.some((r) => r.dataset.path === focusPath)) focusPath = rows[0]?.dataset.path ?? null;
    for (const r of rows) r.tabIndex = r.dataset.path === focusPath ? 0 : -1;
    // drawing again must not take the keyboard away from the tree (file events re-read it)
    if (hadFocus && tree.contains(focused)) {
      focused.focus();
      if (caret) focused.setSelectionRange(...caret);
    } else if (hadFocus) rowOf(focusPath)?.focus();
  }

  const nodes = () => [...tree.querySelectorAll('.node[role=treeitem]')];
  const rowOf = (path) => nodes().find((r) => r.dataset.path === path);

  function focusRow(path) {
    const r = rowOf(path);
    if (!r) return;
    focusPath = path;
    for (const x of nodes()) x.tabIndex = x === r ? 0 : -1;
    r.focus();
    r.scrollIntoView({ block: 'nearest' });
  }

  async function toggle(dir, want = !expanded.has(dir)) {
    selectedDir = dir;
    if (!want) expanded.delete(dir);
    else {
      expanded.add(dir);
      try { await list(dir); } catch (e) { toast(e.message, 'error'); }
    }
    render();
  }

  /** Opens the folders down to path and draws it (the editor's file, a search result). */
  async function reveal(path) {
    if (!root || !path.startsWith(root + '/')) return;
    for (let d = parent(path); d.length > root.length; d = parent(d)) expanded.add(d);
    await refresh(true);
  }

  // ---- keyboard ----
  // Keys act in order: a folder being opened (a request) finishes before the next key looks at
  // the rows, so → → Enter typed fast opens the folder, goes into it and opens its first file.
  // Each key acts on the row the keys before it left focused (not the one focused when it was
  // pressed: that may be before the folder had opened).
  let keys = Promise.resolve();
  const TREE_KEYS = new Set(['ArrowDown', 'ArrowUp', 'Home', 'End', 'ArrowRight', 'ArrowLeft', 'Enter', ' ', 'F2', 'Delete']);
  tree.addEventListener('keydown', (e) => {
    const row = e.target.closest?.('.node[role=treeitem]');
    if (!row || e.target !== row || e.altKey || e.ctrlKey || e.metaKey || !TREE_KEYS.has(e.key)) return;
    if ((e.key === 'F2' || e.key === 'Delete') && !me.canWrite) return;
    e.preventDefault();
    e.stopPropagation();
    const path = row.dataset.path;
    keys = keys.then(() => onKey(e.key, focusPath || path)).catch((err) => toast(err.message, 'error'));
  });

  async function onKey(key, path) {
    const rows = nodes(), i = rows.findIndex((r) => r.dataset.path === path), row = rows[i];
    if (!row) return;
    const isDir = row.dataset.type === 'directory';
    const go = (r) => { if (r) focusRow(r.dataset.path); };
    const level = (r) => Number(r.getAttribute('aria-level'));
    switch (key) {
      case 'ArrowDown': go(rows[i + 1]); break;
      case 'ArrowUp': go(rows[i - 1]); break;
      case 'Home': go(rows[0]); break;
      case 'End': go(rows[rows.length - 1]); break;
      case 'ArrowRight':
        if (isDir && !expanded.has(path)) { await toggle(path, true); focusRow(path); }
        else if (isDir && rows[i + 1] && level(rows[i + 1]) > level(row)) go(rows[i + 1]);
        break;
      case 'ArrowLeft':
        if (isDir && expanded.has(path)) { await toggle(path, false); focusRow(path); }
        else go(rows.slice(0, i).reverse().find((r) => level(r) < level(row)));
        break;
      case 'Enter':
      case ' ':
        if (isDir) { await toggle(path); focusRow(path); }
        else { selectedDir = parent(path); await cb.open(path, { focus: key === 'Enter' }); }
        break;
      case 'F2': startRename(path); break;
      case 'Delete': askDelete(path); break;
      default:
    }
  }
  tree.addEventListener('focusin', (e) => {
    const row = e.target.closest?.('.node[role=treeitem]');
    if (row && e.target === row && focusPath !== row.dataset.path) focusRow(row.dataset.path);
  });

  // ---- edits in the tree ----
  /** An input row: Enter commits (commit(value) resolves, or throws to say why), Escape cancels. */
  function inputRow(kind, { value, label, commit, depth = 0 }) {
    const error = h('div.edit-error', { role: 'alert', hidden: true });
    const input = h('input.edit-name', { value, 'aria-label': label, spellcheck: false, autocomplete: 'off' });
    const row = h('div.node.editing', { 'data-edit': kind, style: { paddingLeft: `${0.6 + depth * 0.9}rem` } },
      h('span.twisty', kind === 'folder' ? '▸' : ''), h('div.edit-box', input, error));
    let busy = false;
    input.addEventListener('keydown', async (e) => {
      e.stopPropagation(); // the tree's keys and the page's shortcuts are not for this input
      if (e.key === 'Escape') { e.preventDefault(); endEdit(); return; }
      if (e.key !== 'Enter' || busy) return;
      e.preventDefault();
      const name = input.value.trim();
      if (!name) { showError('A name is needed.'); return; }
      busy = true;
      try {
        await commit(name);
      } catch (err) {
        showError(err.message);
      } finally { busy = false; }
    });
    function showError(text) {
      error.textContent = text;
      error.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
    return { kind, row, input, showError };
  }

  function endEdit(focusOn) {
    const back = focusOn || edit?.path || edit?.dir;
    edit = null;
    confirming = null;
    render();
    if (back) focusRow(back);
  }

  function startRename(path) {
    if (!me.canWrite) return;
    const name = base(path);
    const depth = rowOf(path) ? Number(rowOf(path).getAttribute('aria-level')) - 1 : 0;
    confirming = null;
    edit = inputRow('rename', {
      value: name, label: `new name for ${name}`, depth,
      commit: async (to) => {
        if (to === name) { endEdit(path); return; }
        const dest = to.startsWith('/') ? to : join(parent(path), to);
        try {
          await api(`${S}/files/move`, { method: 'POST', body: { from: path, to: dest, overwrite: false } });
        } catch (e) {
          throw new Error(e.code === 'exists' ? `${base(dest)} already exists` : e.message);
        }
        // the editor, expanded folders and the selection follow a renamed file or folder
        const moved = (p) => (p === path || p?.startsWith(path + '/') ? dest + p.slice(path.length) : p);
        for (const d of [...expanded]) if (moved(d) !== d) { expanded.delete(d); expanded.add(moved(d)); }
        selectedDir = moved(selectedDir);
        cb.moved(path, dest);
        edit = null;
        await refresh(true);
        focusRow(dest);
      },
    });
    edit.path = path;
    render();
    edit.input.focus();
    // the name without its extension selected, as desktop file managers do
    const dot = name.lastIndexOf('.');
    edit.input.setSelectionRange(0, dot > 0 ? dot : name.length);
  }

  /** A new file or folder (kind 'file' | 'folder') in the chosen folder, named in the tree. */
  async function startNew(kind) {
    if (!me.canWrite || !root) return;
    const dir = selectedDir && listings.has(selectedDir) ? selectedDir : root;
    if (dir !== root && !expanded.has(dir)) await toggle(dir, true);
    confirming = null;
    edit = inputRow(kind, {
      value: '', label: `name of the new ${kind} in ${dir}`,
      commit: async (name) => {
        const path = name.startsWith('/') ? name : join(dir, name);
        try {
          if (kind === 'folder') await api(`${S}/files/mkdir`, { method: 'POST', body: { path, parents: true } });
          else {
            // never over a file that exists: the tree shows it, the person may not have looked
            const there = await api(`${S}/files/stat?path=${q(path)}`).then(() => true, (e) => (e.status === 404 ? false : Promise.reject(e)));
            if (there) throw Object.assign(new Error(`${base(path)} already exists`), { code: 'exists' });
            await api(`${S}/files/content?path=${q(path)}`, { method: 'PUT', body: new Blob([]) });
          }
        } catch (e) {
          throw new Error(e.code === 'exists' ? e.message : `Cannot make ${base(path)}: ${e.message}`);
        }
        edit = null;
        if (kind === 'folder') { expanded.add(path); selectedDir = path; }
        await reveal(path);
        focusRow(path);
        if (kind === 'file') cb.open(path, { focus: true });
      },
    });
    edit.dir = dir;
    render();
    edit.input.placeholder = kind === 'folder' ? 'folder name' : 'file name';
    edit.input.focus();
  }

  function askDelete(path) {
    if (!me.canWrite) return;
    const row0 = rowOf(path);
    const depth = row0 ? Number(row0.getAttribute('aria-level')) - 1 : 0;
    const isDir = row0?.dataset.type === 'directory';
    const error = h('div.edit-error', { role: 'alert', hidden: true });
    const yes = h('button.danger', { 'data-action': 'confirm-delete', onclick: () => doDelete() }, 'Delete');
    const no = h('button', { onclick: () => endEdit(path) }, 'Cancel');
    const row = h('div.node.confirming', { 'data-confirm': path, role: 'group', 'aria-label': `delete ${base(path)}?`, style: { paddingLeft: `${0.6 + depth * 0.9}rem` } },
      h('span.twisty'), h('div.edit-box', h('span', `Delete ${base(path)}${isDir ? ' and all it holds' : ''}?`), h('span.confirm-buttons', yes, no), error));
    row.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Escape') { e.preventDefault(); endEdit(path); }
    });
    async function doDelete() {
      try {
        await api(`${S}/files?path=${q(path)}&recursive=true`, { method: 'DELETE' });
      } catch (e) {
        error.textContent = `Delete failed: ${e.message}`;
        error.hidden = false;
        return;
      }
      const under = (p) => p === path || p?.startsWith(path + '/');
      for (const d of [...expanded]) if (under(d)) { expanded.delete(d); listings.delete(d); }
      if (under(selectedDir)) selectedDir = parent(path);
      cb.removed(path);
      // the keyboard goes to the row after it (else before it) once it is gone
      const all = [...tree.children], k = all.indexOf(row);
      const stays = (r) => r.getAttribute?.('role') === 'treeitem' && !under(r.dataset.path);
      const next = (all.slice(k + 1).find(stays) || all.slice(0, k).reverse().find(stays))?.dataset.path;
      edit = null;
      confirming = null;
      await refresh(true);
      if (next) focusRow(next);
    }
    edit = null;
    confirming = { path, row };
    render();
    yes.focus();
  }

  return {
    el: tree,
    refresh,
    changed,
    reveal,
    render,
    startRename: async (path) => { await reveal(path); startRename(path); },
    askDelete: async (path) => { await reveal(path); askDelete(path); },
    startNew,
    /** Where uploads and new files go: the chosen folder, or the workspace. */
    dir: () => selectedDir || root,
    root: () => root,
    chose: (dir) => { selectedDir = dir; },
    /** Holds an edit (an input or a question in a row): drawing again keeps it. */
    editing: () => !!(edit || confirming),
    expand: (dir) => expanded.add(dir),
  };
}
