// The Files tab: the tree of the workspace (file_tree.js: keyboard, rename, new and delete in
// the tree), find across files (file_search.js), the open files as editor tabs (editor_tabs.js),
// upload by drag and drop (or the Upload button), download. The tree and the open files follow
// the sandbox by its file events (docs/api.md, "File events"): once the tab is first shown the
// workspace is watched, and a folder shown or a file open is read again only when an event says
// it changed (a file a command made appears without a click; nothing polls).
import { api, q } from '../lib/rest.js';
import { h, toast, bytes } from '../lib/dom.js';
import { onTheme } from '../lib/theme.js';
import { fileTree, join, base } from './file_tree.js';
import { editorTabs } from './editor_tabs.js';
import { fileSearch } from './file_search.js';

export function filesPanel(id, me, ctx) {
  const S = `/api/v1/sessions/${q(id)}`;
  let gone = false, started = false, stopWatch = null;
  let following = false; // the watch is up: the events keep the tree current

  const tree = fileTree(S, me, {
    open: (path, opts) => open(path, opts),
    moved: (from, to) => editors.moved(from, to),
    removed: (path) => editors.removed(path),
    current: () => editors.shown()?.path, // (called once both exist: by a draw)
  });
  const editors = editorTabs(S, me, `sandpipe.files.${id}`, {
    changed: () => { setButtons(); tree.render(); },
    download: (path) => download(path),
  });
  const search = fileSearch(S, () => tree.root(), (path, opts) => open(path, opts));

  const crumbs = h('code.path', 'No file open');
  const dirtyMark = h('span.dirty', { hidden: true, title: 'unsaved changes' }, '●');
  const saveBtn = me.canWrite && h('button.primary', { disabled: true, onclick: () => editors.save(), title: 'Save (Ctrl+S)' }, 'Save');
  const dlBtn = h('button', { disabled: true, onclick: () => download(editors.shown()?.path), title: 'Download the file' }, 'Download');
  const renBtn = me.canWrite && h('button', { disabled: true, onclick: () => tree.startRename(editors.shown()?.path), title: 'Rename the file, in the tree (F2 there)' }, 'Rename');
  const delBtn = me.canWrite && h('button.danger', { disabled: true, onclick: () => tree.askDelete(editors.shown()?.path), title: 'Delete the file, asked in the tree (Delete there)' }, 'Delete');
  const upInput = h('input', { type: 'file', multiple: true, hidden: true, onchange: (e) => upload([...e.target.files], tree.dir()) });
  // said when the tree cannot follow the sandbox (the session's watches are all taken)
  const watchNote = h('div.watch-note.muted.small', { hidden: true, role: 'status' });
  const treeTools = h('div.tree-tools',
    h('strong', 'Workspace'), h('div.spacer'),
    me.canWrite && h('button.ghost', { title: 'New file, named in the tree', 'data-action': 'new-file', onclick: () => tree.startNew('file') }, '+ File'),
    me.canWrite && h('button.ghost', { title: 'New folder, named in the tree', 'data-action': 'new-folder', onclick: () => tree.startNew('folder') }, '+ Folder'),
    me.canWrite && h('button.ghost', { title: 'Upload files', onclick: () => upInput.click() }, '⇪'),
    h('button.ghost', { title: 'Refresh', onclick: () => refresh(true) }, '↻'), upInput);
  const side = h('div.side', treeTools, watchNote, me.canWrite && search.el, tree.el);
  const pane = h('div.pane.files-pane', { 'data-panel': 'files' },
    side,
    h('div.main', editors.bar, h('div.file-bar', crumbs, dirtyMark, h('div.spacer'), renBtn, delBtn, dlBtn, saveBtn), editors.view));

  async function refresh(force = false) {
    await tree.refresh(force);
  }

  // File events, one batch after the other: the folders shown and the files open that they
  // name are read again. A (re)started watch comes as a resync of the whole workspace.
  let handling = Promise.resolve();
  function onFiles({ events, error }) {
    following = !error;
    if (error) {
      watchNote.hidden = false;
      watchNote.dataset.watch = 'off';
      watchNote.textContent = `Changes in the sandbox are not followed live (${error.message}); ↻ reads the tree again.`;
      return;
    }
    watchNote.hidden = true;
    delete watchNote.dataset.watch;
    handling = handling.then(async () => {
      if (gone) return;
      await tree.changed(events);
      await editors.changedOnDisk(events);
    }).catch((e) => toast(e.message, 'error'));
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
  window.__sandpipe_files = { open: (path, opts) => open(path, opts), refresh: () => refresh(true) };

  return {
    key: 'files', label: 'Files', pane,
    async onShow() {
      if (following) return; // the events have kept it current
      await refresh(true);
      if (gone || !tree.root()) return;
      if (!stopWatch) stopWatch = ctx.watchFiles(tree.root(), onFiles);
      if (!started) { // the files a reload left open, and the folder of the one shown
        started = true;
        await editors.restore();
        if (editors.shown()) await tree.reveal(editors.shown().path);
      }
    },
    focusEditor() { editors.focus(); },
    dispose() { gone = true; stopWatch?.(); offTheme(); editors.dispose(); },
  };
}
