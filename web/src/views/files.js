// The Files tab: the tree of the workspace (file_tree.js: keyboard, rename, new and delete in
// the tree), find across files (file_search.js), the open files as editor tabs (editor_tabs.js),
// upload by drag and drop (or the Upload button), download. The tree follows the workspace: it
// re-reads the open folders every few seconds while shown and after every finished action, so
// a file a command made in a terminal appears without a click.
import { api, q } from '../lib/rest.js';
import { h, toast, bytes } from '../lib/dom.js';
import { onTheme } from '../lib/theme.js';
import { fileTree, join, base } from './file_tree.js';
import { editorTabs } from './editor_tabs.js';
import { fileSearch } from './file_search.js';

const POLL_MS = 3000;

export function filesPanel(id, me, ctx) {
  const S = `/api/v1/sessions/${q(id)}`;
  let timer = null, shown = false, gone = false, started = false;

  const tree = fileTree(S, me, {
    open: (path, opts) => open(path, opts),
    moved: (from, to) => editors.moved(from, to),
    removed: (path) => editors.removed(path),
    current: () => editors.shown()?.path, // (called once both exist: by a draw)
  });
  const editors = editorTabs(S, me, `sandpipe.files.${id}`, {
    changed: () => { setButtons(); tree.render(); },
    download: (path) => download(path),
    saved: () => refresh(),
  });
  const search = fileSearch(S, () => tree.root(), (path, opts) => open(path, opts));

  const crumbs = h('code.path', 'No file open');
  const dirtyMark = h('span.dirty', { hidden: true, title: 'unsaved changes' }, '●');
  const saveBtn = me.canWrite && h('button.primary', { disabled: true, onclick: () => editors.save(), title: 'Save (Ctrl+S)' }, 'Save');
  const dlBtn = h('button', { disabled: true, onclick: () => download(editors.shown()?.path), title: 'Download the file' }, 'Download');
  const renBtn = me.canWrite && h('button', { disabled: true, onclick: () => tree.startRename(editors.shown()?.path), title: 'Rename the file, in the tree (F2 there)' }, 'Rename');
  const delBtn = me.canWrite && h('button.danger', { disabled: true, onclick: () => tree.askDelete(editors.shown()?.path), title: 'Delete the file, asked in the tree (Delete there)' }, 'Delete');
  const upInput = h('input', { type: 'file', multiple: true, hidden: true, onchange: (e) => upload([...e.target.files], tree.dir()) });
  const treeTools = h('div.tree-tools',
    h('strong', 'Workspace'), h('div.spacer'),
    me.canWrite && h('button.ghost', { title: 'New file, named in the tree', 'data-action': 'new-file', onclick: () => tree.startNew('file') }, '+ File'),
    me.canWrite && h('button.ghost', { title: 'New folder, named in the tree', 'data-action': 'new-folder', onclick: () => tree.startNew('folder') }, '+ Folder'),
    me.canWrite && h('button.ghost', { title: 'Upload files', onclick: () => upInput.click() }, '⇪'),
    h('button.ghost', { title: 'Refresh', onclick: () => refresh(true) }, '↻'), upInput);
  const side = h('div.side', treeTools, me.canWrite && search.el, tree.el);
  const pane = h('div.pane.files-pane', { 'data-panel': 'files' },
    side,
    h('div.main', editors.bar, h('div.file-bar', crumbs, dirtyMark, h('div.spacer'), renBtn, delBtn, dlBtn, saveBtn), editors.view));

  async function refresh(force = false) {
    clearTimeout(timer);
    await tree.refresh(force);
    if (!gone && shown) timer = setTimeout(() => refresh(), POLL_MS);
  }

  async function open(path, opts) {
    tree.chose(path.replace(/\/[^/]*$/, '') || '/');
    const d = await editors.open(path, opts);
    if (opts?.line) tree.reveal(d.path);
  }

  function setButtons() {
    const d = editors.shown();
    dlBtn.disabled = !d;
    if (renBtn) renBtn.disabled = !d;
    if (delBtn) delBtn.disabled = !d;
    if (saveBtn) saveBtn.disabled = !d || d.readOnly || !d.dirty;
    dirtyMark.hidden = !d?.dirty;
    crumbs.textContent = d ? d.path + (d.note ? `  (${d.note})` : '') : 'No file open';
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
    if (dir !== tree.root()) tree.expand(dir);
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
      const dir = e.target.closest?.('[data-dir]')?.dataset.dir || tree.root();
      upload([...(e.dataTransfer?.files || [])], dir);
    });
  }

  const offTheme = onTheme((t) => editors.setTheme(t === 'dark'));
  let debounce = null;
  const offEvent = ctx.onEvent((ev) => {
    if (ev.type !== 'observation' || !shown) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => refresh(), 200);
  });
  window.__sandpipe_files = { open: (path, opts) => open(path, opts), refresh: () => refresh(true) };

  return {
    key: 'files', label: 'Files', pane,
    async onShow() {
      shown = true;
      await refresh(true);
      if (!started) { // the files a reload left open, and the folder of the one shown
        started = true;
        await editors.restore();
        if (editors.shown()) await tree.reveal(editors.shown().path);
      }
    },
    onHide() { shown = false; clearTimeout(timer); },
    focusEditor() { editors.focus(); },
    dispose() { gone = true; clearTimeout(timer); clearTimeout(debounce); offTheme(); offEvent(); editors.dispose(); },
  };
}
