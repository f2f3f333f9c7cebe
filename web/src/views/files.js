// The Files tab: a tree of the workspace, a CodeMirror editor, save/create/rename/delete (the
// REST file routes: files/mkdir, files/move, DELETE files), upload by drag and drop (or the
// Upload button), download. The tree follows the workspace: it re-reads
// the open directories every few seconds while shown and after every finished action, so a file
// a command made in a terminal appears without a click.
import { api, q, ApiError } from '../lib/rest.js';
import { h, mount, toast, bytes } from '../lib/dom.js';
import { currentTheme, onTheme } from '../lib/theme.js';

const POLL_MS = 3000;
const join = (dir, name) => (dir.endsWith('/') ? dir + name : `${dir}/${name}`);
const parent = (p) => p.replace(/\/[^/]*$/, '') || '/';
const base = (p) => p.replace(/^.*\//, '');

export function filesPanel(id, me, ctx) {
  const S = `/api/v1/sessions/${q(id)}`;
  let root = null;              // absolute path of the workspace
  const listings = new Map();   // dir -> entries
  const open = new Set();       // expanded directories
  let file = null;              // {path, editor, dirty, readOnly}
  let selectedDir = null;
  let timer = null, shown = false, gone = false, loadingEditor = null;

  const tree = h('div.tree', { role: 'tree', tabindex: 0 });
  const crumbs = h('code.path', 'No file open');
  const dirtyMark = h('span.dirty', { hidden: true, title: 'unsaved changes' }, '●');
  const editorBox = h('div.editor', h('div.empty', h('p', 'Open a file from the tree.'),
    h('p.muted', me.canWrite ? 'Drop files on the tree to upload them. Ctrl+S saves, Ctrl+F searches.' : 'Read-only: this token cannot change files.')));
  const saveBtn = me.canWrite && h('button.primary', { disabled: true, onclick: () => save(), title: 'Save (Ctrl+S)' }, 'Save');
  const dlBtn = h('button', { disabled: true, onclick: () => download(file?.path), title: 'Download the file' }, 'Download');
  const renBtn = me.canWrite && h('button', { disabled: true, onclick: () => rename(file?.path) }, 'Rename');
  const delBtn = me.canWrite && h('button.danger', { disabled: true, onclick: () => remove(file?.path) }, 'Delete');
  const upInput = h('input', { type: 'file', multiple: true, hidden: true, onchange: (e) => upload([...e.target.files], selectedDir || root) });
  const treeTools = h('div.tree-tools',
    h('strong', 'Workspace'), h('div.spacer'),
    me.canWrite && h('button.ghost', { title: 'New file', 'data-action': 'new-file', onclick: () => newFile() }, '+ File'),
    me.canWrite && h('button.ghost', { title: 'New folder', 'data-action': 'new-folder', onclick: () => newFolder() }, '+ Folder'),
    me.canWrite && h('button.ghost', { title: 'Upload files', onclick: () => upInput.click() }, '⇪'),
    h('button.ghost', { title: 'Refresh', onclick: () => refresh(true) }, '↻'), upInput);
  const side = h('div.side', treeTools, tree);
  const pane = h('div.pane.files-pane', { 'data-panel': 'files' },
    side,
    h('div.main', h('div.file-bar', crumbs, dirtyMark, h('div.spacer'), renBtn, delBtn, dlBtn, saveBtn), editorBox));

  // ---- the tree ----
  async function list(dir) {
    const r = await api(`${S}/files?path=${q(dir)}`);
    listings.set(r.path, r.entries || []);
    return r;
  }

  function sig() {
    return [...listings].map(([d, es]) => d + ':' + es.map((e) => `${e.name}/${e.type}/${e.size}/${e.mtime}`).join(',')).join('|');
  }

  async function refresh(force = false) {
    clearTimeout(timer);
    const before = sig();
    try {
      if (!root) root = (await list('.')).path;
      else await list(root);
      for (const d of [...open]) {
        try { await list(d); } catch (e) { if (e.status === 404 || e.code === 'not_found') { open.delete(d); listings.delete(d); } }
      }
      if (force || sig() !== before) renderTree();
    } catch (e) {
      if (!root) mount(tree, h('div.error.small', `Cannot list the workspace: ${e.message}`));
    }
    if (!gone && shown) timer = setTimeout(() => refresh(), POLL_MS);
  }

  function row(entry, dir, depth) {
    const path = join(dir, entry.name);
    const isDir = entry.type === 'directory';
    const el = h('div.node', {
      role: 'treeitem', 'data-path': path, 'data-type': entry.type, tabindex: -1,
      class: (file?.path === path ? 'open' : '') + (selectedDir === path ? ' selected' : ''),
      style: { paddingLeft: `${0.6 + depth * 0.9}rem` },
      title: `${path}\n${entry.type}, ${bytes(entry.size)}`,
      onclick: () => (isDir ? toggle(path) : openFile(path)),
    }, h('span.twisty', isDir ? (open.has(path) ? '▾' : '▸') : ''), h('span.name', entry.name),
    // rename and delete any file or folder from its row (shown on hover or focus)
    me.canWrite && h('span.node-actions',
      h('button.ghost', { title: `Rename ${entry.name}`, 'aria-label': `rename ${entry.name}`, 'data-action': 'rename',
        onclick: (e) => { e.stopPropagation(); rename(path); } }, '✎'),
      h('button.ghost.danger', { title: `Delete ${entry.name}`, 'aria-label': `delete ${entry.name}`, 'data-action': 'delete',
        onclick: (e) => { e.stopPropagation(); remove(path); } }, '✕')));
    if (isDir) el.dataset.dir = path;
    return el;
  }

  function renderTree() {
    if (!root) return;
    const out = [];
    const walk = (dir, depth) => {
      const es = [...(listings.get(dir) || [])].sort((a, b) =>
        (b.type === 'directory') - (a.type === 'directory') || a.name.localeCompare(b.name));
      for (const e of es) {
        out.push(row(e, dir, depth));
        const p = join(dir, e.name);
        if (e.type === 'directory' && open.has(p)) walk(p, depth + 1);
      }
    };
    walk(root, 0);
    mount(tree, out.length ? out : h('div.muted.small.pad', 'The workspace is empty.'));
  }

  async function toggle(dir) {
    selectedDir = dir;
    if (open.has(dir)) open.delete(dir);
    else {
      open.add(dir);
      try { await list(dir); } catch (e) { toast(e.message, 'error'); }
    }
    renderTree();
  }

  // ---- the editor ----
  function setButtons() {
    const has = !!file;
    dlBtn.disabled = !has;
    if (renBtn) renBtn.disabled = !has;
    if (delBtn) delBtn.disabled = !has;
    if (saveBtn) saveBtn.disabled = !has || file.readOnly || !file.dirty;
    dirtyMark.hidden = !file?.dirty;
  }

  async function openFile(path) {
    if (file?.dirty && !confirm(`Discard the unsaved changes to ${file.path}?`)) return;
    selectedDir = parent(path);
    let r;
    try {
      r = await api(`${S}/files/content?path=${q(path)}`);
    } catch (e) {
      const binary = e instanceof ApiError && e.code === 'invalid';
      file?.editor?.destroy();
      file = { path, readOnly: true, dirty: false };
      crumbs.textContent = path;
      mount(editorBox, h('div.empty', h('p', binary ? 'This file is not text.' : `Cannot open it: ${e.message}`),
        h('p', h('button', { onclick: () => download(path) }, 'Download it'))));
      setButtons();
      renderTree();
      return;
    }
    loadingEditor ||= import('../lib/editor.js');
    const { createEditor } = await loadingEditor;
    file?.editor?.destroy();
    const readOnly = !me.canWrite || !!r.truncated;
    mount(editorBox);
    file = { path: r.path, readOnly, dirty: false };
    file.editor = createEditor(editorBox, {
      doc: r.content, path: r.path, readOnly, dark: currentTheme() === 'dark',
      onSave: () => save(),
      onChange: () => { if (file && !file.dirty) { file.dirty = true; setButtons(); } },
    });
    crumbs.textContent = r.path + (r.truncated ? '  (too large to edit here: shown in part, read-only)' : '');
    setButtons();
    renderTree();
    file.editor.focus();
  }

  async function save() {
    if (!file?.editor || file.readOnly) return;
    const text = file.editor.getText();
    try {
      const r = await api(`${S}/files/content?path=${q(file.path)}`, { method: 'PUT', body: new Blob([text]) });
      file.dirty = false;
      setButtons();
      toast(`Saved ${base(r.path)} (${bytes(r.size)})`);
      refresh();
    } catch (e) {
      toast(`Save failed: ${e.message}`, 'error');
    }
  }

  async function download(path) {
    if (!path) return;
    try {
      const r = await api(`${S}/files/download?path=${q(path)}`, { raw: true });
      const url = URL.createObjectURL(await r.blob());
      const a = h('a', { href: url, download: base(path) });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (e) {
      toast(`Download failed: ${e.message}`, 'error');
    }
  }

  async function newFile() {
    const dir = selectedDir || root;
    const name = prompt(`New file in ${dir}:`, 'untitled.txt');
    if (!name) return;
    const path = name.startsWith('/') ? name : join(dir, name);
    try {
      await api(`${S}/files/content?path=${q(path)}`, { method: 'PUT', body: new Blob([]) });
      if (!name.includes('/')) open.add(dir);
      await refresh(true);
      await openFile(path);
    } catch (e) {
      toast(`Cannot create ${path}: ${e.message}`, 'error');
    }
  }

  async function newFolder() {
    const dir = selectedDir || root;
    const name = prompt(`New folder in ${dir}:`, 'new-folder');
    if (!name) return;
    const path = name.startsWith('/') ? name : join(dir, name);
    try {
      await api(`${S}/files/mkdir`, { method: 'POST', body: { path, parents: true } });
      open.add(dir);
      await refresh(true);
    } catch (e) {
      toast(`Cannot make ${path}: ${e.message}`, 'error');
    }
  }

  async function rename(path) {
    if (!path) return;
    const name = prompt(`Rename ${path} to:`, base(path));
    if (!name || name === base(path)) return;
    const to = name.startsWith('/') ? name : join(parent(path), name);
    try {
      await api(`${S}/files/move`, { method: 'POST', body: { from: path, to, overwrite: false } });
      // the open file, expanded folders and the selection follow a renamed file or folder
      const moved = (p) => (p === path || p?.startsWith(path + '/') ? to + p.slice(path.length) : p);
      if (file && moved(file.path) !== file.path) { file.path = moved(file.path); crumbs.textContent = file.path; }
      for (const d of [...open]) if (moved(d) !== d) { open.delete(d); open.add(moved(d)); }
      selectedDir = moved(selectedDir);
      await refresh(true);
      toast(`Renamed to ${base(to)}`);
    } catch (e) {
      toast(e.code === 'exists' ? `Rename failed: ${to} already exists` : `Rename failed: ${e.message}`, 'error');
    }
  }

  async function remove(path) {
    if (!path || !confirm(`Delete ${path}?`)) return;
    try {
      await api(`${S}/files?path=${q(path)}&recursive=true`, { method: 'DELETE' });
      const under = (p) => p === path || p?.startsWith(path + '/');
      for (const d of [...open]) if (under(d)) { open.delete(d); listings.delete(d); }
      if (under(selectedDir)) selectedDir = parent(path);
      if (file && under(file.path)) {
        file.editor?.destroy();
        file = null;
        crumbs.textContent = 'No file open';
        mount(editorBox, h('div.empty', h('p', `${base(path)} was deleted.`)));
        setButtons();
      }
      await refresh(true);
    } catch (e) {
      toast(`Delete failed: ${e.message}`, 'error');
    }
  }

  async function upload(files, dir) {
    if (!files.length || !dir) return;
    for (const f of files) {
      const path = join(dir, f.name);
      try {
        const r = await api(`${S}/files/content?path=${q(path)}`, { method: 'PUT', body: f });
        toast(`Uploaded ${f.name} (${bytes(r.size)})`);
      } catch (e) {
        toast(`Upload of ${f.name} failed: ${e.message}`, 'error');
      }
    }
    if (dir !== root) open.add(dir);
    await refresh(true);
  }

  // ---- drag and drop onto the tree (onto a folder: into it) ----
  if (me.canWrite) {
    side.addEventListener('dragover', (e) => {
      if (![...(e.dataTransfer?.types || [])].includes('Files')) return;
      e.preventDefault();
      side.classList.add('drop');
    });
    side.addEventListener('dragleave', (e) => { if (!side.contains(e.relatedTarget)) side.classList.remove('drop'); });
    side.addEventListener('drop', (e) => {
      e.preventDefault();
      side.classList.remove('drop');
      const dir = e.target.closest?.('[data-dir]')?.dataset.dir || root;
      upload([...(e.dataTransfer?.files || [])], dir);
    });
  }

  const offTheme = onTheme((t) => file?.editor?.setTheme(t === 'dark'));
  let debounce = null;
  const offEvent = ctx.onEvent((ev) => {
    if (ev.type !== 'observation' || !shown) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => refresh(), 200);
  });
  window.__sandpipe_files = { open: openFile, refresh: () => refresh(true) };

  return {
    key: 'files', label: 'Files', pane,
    onShow() { shown = true; refresh(true); },
    onHide() { shown = false; clearTimeout(timer); },
    focusEditor() { file?.editor?.focus(); },
    dispose() { gone = true; clearTimeout(timer); clearTimeout(debounce); offTheme(); offEvent(); file?.editor?.destroy(); },
  };
}
