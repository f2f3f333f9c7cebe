// The Preview tab: the ports the sandbox listens on (GET …/ports, read again on the session's
// "port" events, never polled), the chosen one in a frame, reload, open in a new tab, a signed
// link to copy, a public switch where the operator allows it (docs/api.md, "Previews").
// A browser cannot put the Bearer token on a frame or a new tab, so every opening is a fresh
// one-time link (it is taken once, leaves a credential for that session's previews and
// redirects). The frame uses the port's own origin (host_url: an app's absolute paths work)
// only when that origin is same-site with this page: a cross-site frame may not set the
// cookie the host form lives on, so there the path form (the credential in the path) is used.
// A new tab is a top-level page: the host form whenever the deployment has one.
import { api, q } from '../lib/rest.js';
import { h, mount, toast } from '../lib/dom.js';
import { when } from '../lib/auth.js';
import '../styles/preview.css';

const TTLS = [['10 minutes', 600], ['1 hour', 3600], ['1 day', 86400], ['7 days', 604800]];
const DEFAULT_TTL = 3600;

/** A host's site, roughly its registrable domain (the last two labels; an IP is its own). */
function siteOf(url) {
  const { protocol, hostname } = new URL(url, location.href);
  const host = /^[\d.]+$|:/.test(hostname) ? hostname : hostname.split('.').slice(-2).join('.');
  return `${protocol}//${host}`;
}

/** link's URL with path ("/a/b?x=1#y") inside it: the port's root plus path, its own query kept. */
function withPath(link, path) {
  const url = new URL(link, location.href);
  const p = new URL(path || '/', 'http://path.invalid');
  url.pathname = url.pathname.replace(/\/$/, '') + p.pathname;
  for (const [k, v] of p.searchParams) url.searchParams.append(k, v);
  url.hash = p.hash;
  return url.href;
}

/** What a link opens, without its credential: for the address shown above the frame. */
function shownAddress(url) {
  const u = new URL(url);
  u.searchParams.delete('sp_token');
  u.pathname = u.pathname.replace(/\/~[^/]+/, '');
  return u.href;
}

/** The listing's entries, one per port (a server on 0.0.0.0 and on :: is one port). */
function byPort(entries) {
  const out = new Map();
  for (const e of entries || []) {
    const p = out.get(e.port);
    if (p) p.addresses.push(e.address);
    else out.set(e.port, { ...e, addresses: [e.address] });
  }
  return [...out.values()].sort((a, b) => a.port - b.port);
}

export function previewPanel(id, me, ctx) {
  const S = `/api/v1/sessions/${q(id)}`;
  let ports = [], publicAllowed = false;
  let listed = false, stale = true, shown = false, gone = false, status = null, listError = null;
  let chosen = null; // the port in the frame
  let debounce = null;

  const list = h('ul.pv-ports', { 'aria-label': 'listening ports' });
  const listNote = h('div.pv-note', { role: 'status' });
  const otherPort = h('input', { type: 'number', min: 1, max: 65535, required: true, placeholder: '3000', name: 'port' });
  const other = h('form.pv-other', {
    onsubmit: (e) => { e.preventDefault(); if (other.reportValidity()) choose(Number(otherPort.value)); },
  }, h('label', 'A port not listed yet', h('div.row', otherPort, h('button', { type: 'submit' }, 'Open'))));
  const refreshBtn = h('button.ghost', { type: 'button', title: 'Read the ports again', 'aria-label': 'refresh the ports', onclick: () => refresh() }, '↻');
  const side = h('aside.pv-side', h('div.pv-side-head', h('strong', 'Ports'), h('div.spacer'), refreshBtn), listNote, list, me.canWrite && other);

  const address = h('code.pv-address', { title: 'What the frame shows (without its credential)' });
  const closedMark = h('span.badge.b-warn', { 'data-closed': '', hidden: true, title: 'The sandbox lists no listener on this port now' }, 'not listening');
  const pathInput = h('input.pv-path', { type: 'text', value: '/', name: 'path', spellcheck: false });
  const reloadBtn = h('button', { type: 'button', 'data-action': 'reload', title: 'Open the port again at this path (a fresh link)', onclick: () => show() }, '↻ Reload');
  const tabBtn = h('button', { type: 'button', 'data-action': 'new-tab', title: 'Open the preview in a tab of its own', onclick: () => openInTab() }, 'Open in new tab');
  const publicBtn = h('button', { type: 'button', 'data-action': 'public', hidden: true, onclick: () => togglePublic() });
  const ttl = h('select', { name: 'ttl' }, TTLS.map(([label, s]) => h('option', { value: s, selected: s === DEFAULT_TTL }, label)));
  const copyBtn = h('button', { type: 'button', 'data-action': 'copy-link', title: 'Make a signed link to this port that anyone may open until it expires', onclick: () => copyLink() }, 'Copy signed link');
  const shared = h('input.pv-shared-url', { type: 'text', readOnly: true, 'aria-label': 'signed link', onfocus: (e) => e.target.select() });
  const sharedNote = h('span.muted.small');
  const sharedBox = h('div.pv-shared', { hidden: true }, sharedNote, shared);
  const bar = h('form.pv-bar', {
    onsubmit: (e) => { e.preventDefault(); show(); },
  }, address, closedMark, h('label.pv-inline', 'Path', pathInput), reloadBtn, tabBtn, publicBtn,
  h('label.pv-inline', 'Link valid', ttl), copyBtn);
  const view = h('div.pv-view');
  const main = h('div.pv-main', bar, sharedBox, view);
  const pane = h('div.pane.preview-pane', { 'data-panel': 'preview' }, side, main);

  const ready = () => status === 'READY';
  const controls = [reloadBtn, tabBtn, copyBtn, publicBtn, pathInput, ttl];

  // ---- what the tab says ----

  /** A sentence where the frame would be (kind: a data attribute for tests and styles). */
  function say(kind, ...children) {
    mount(view, h('div.empty.pv-state', { 'data-state': kind }, children));
  }

  /** Why nothing can be listed or opened now (the session's status), or null. */
  function notReady() {
    if (!status) return ['starting', 'Reading the session…'];
    if (status === 'READY') return null;
    if (status === 'PAUSED') return ['paused', `Session ${id} is paused: its ports answer again once it is resumed.`];
    if (status === 'STOPPED') return ['stopped', 'Nothing listens here any more: the session has ended.'];
    if (status.startsWith('ERROR')) return ['error', `Session ${id} is in error (${status.replace(/_/g, ' ')}): its ports cannot be reached.`];
    return ['starting', `Session ${id} is ${status.replace(/_/g, ' ').toLowerCase()}: its ports are listed once it is READY.`];
  }

  function render() {
    const why = notReady();
    bar.hidden = !chosen;
    for (const c of controls) c.disabled = !!why || !me.canWrite;
    refreshBtn.disabled = !!why;
    for (const c of other.elements) c.disabled = !!why;
    publicBtn.hidden = !(publicAllowed && me.canWrite);
    const p = ports.find((x) => x.port === chosen);
    publicBtn.textContent = p?.public ? 'Make private' : 'Make public';
    publicBtn.title = p?.public ? 'Only you and signed links may open it' : 'Anyone with the address may open it, without a credential';

    // the list (drawn again: the keyboard's focus stays on the port it was on)
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.port : null;
    // (for a viewer, who cannot open one, a row to read, not a button)
    mount(list, ports.map((x) => h('li', h(me.canWrite ? 'button.pv-port' : 'div.pv-port', {
      type: me.canWrite && 'button', 'data-port': x.port, 'aria-pressed': me.canWrite && String(x.port === chosen),
      title: `${x.command || 'a process'} (pid ${x.pid ?? '?'}) on ${x.addresses.join(', ')}`,
      onclick: me.canWrite && (() => choose(x.port)),
    }, h('span.mono.pv-num', String(x.port)),
    x.public && h('span.badge.b-warn', { 'data-public': '' }, 'public'),
    h('span.pv-cmd.muted.small', x.command || '')))));
    if (focused) list.querySelector(`[data-port="${focused}"]`)?.focus();
    const retry = () => h('button', { type: 'button', onclick: () => refresh() }, 'Try again');
    if (why || (listError && !chosen)) mount(listNote); // the view says it
    else if (listError) mount(listNote, h('div.error.small', { 'data-state': 'list-error' }, `The ports could not be read: ${listError}`, ' ', retry()));
    else if (!listed) mount(listNote, h('div.muted.small', 'Reading the ports…'));
    else if (!ports.length) mount(listNote, h('div.muted.small', { 'data-state': 'no-ports' }, 'Nothing listens yet.'));
    else mount(listNote);

    // where the frame goes
    if (why) {
      say(...why);
    } else if (!chosen) {
      if (listError) {
        say('list-error', h('p.error', `The ports could not be read: ${listError}`), retry(),
          me.canWrite && h('p.muted', 'A port can still be opened by its number (below the list).'));
      } else if (!me.canWrite) {
        say('viewer', h('p', 'This token can see the ports but not open them.'), h('p.muted', 'Ask the session\'s owner for a signed link.'));
      } else if (listed && !ports.length) {
        say('no-ports', h('p', 'Nothing listens in the sandbox yet.'),
          h('p', 'Start a server in a terminal, e.g. ', h('code', 'python3 -m http.server 8000'), ', and its port appears here.'),
          h('p.muted', 'A port opened but not listed (on another address, or just now) can be opened by its number.'));
      } else if (listed) {
        say('choose', h('p', 'Choose a port to preview it.'));
      } else {
        say('reading', 'Reading the ports…');
      }
    }
    // the port in the frame stopped listening (or was opened by its number, never listed)
    closedMark.hidden = !(chosen && !p && listed && !listError);
  }

  // ---- the ports ----

  async function refresh() {
    clearTimeout(debounce);
    if (gone || !ready()) return;
    stale = false;
    try {
      const r = await api(`${S}/ports`);
      ports = byPort(r.ports);
      publicAllowed = !!r.public_allowed;
      listError = null;
    } catch (e) {
      if (e.status === 401) return; // main.js signs out
      listError = e.message;
    }
    listed = true;
    if (!gone) render();
  }

  // a port opened or closed: read the list again (one read for a burst, e.g. the log's replay)
  const offEvent = ctx.onEvent((ev) => {
    if (ev.type !== 'port') return;
    stale = true;
    if (!shown) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => refresh(), 150);
  });

  // ---- the frame ----

  /** A fresh one-time link to port, at the path in the box: {url, form} ('host' or 'path'). */
  async function link(port, { frame }) {
    const l = await api(`${S}/ports/${port}/link`, { method: 'POST' });
    const host = l.host_url && (!frame || siteOf(l.host_url) === siteOf(location.href));
    return { url: withPath(host ? l.host_url : l.path_url, pathInput.value.trim() || '/'), form: host ? 'host' : 'path' };
  }

  function choose(port) {
    if (chosen !== port) {
      pathInput.value = '/';
      sharedBox.hidden = true; // the link made for the port shown before
    }
    chosen = port;
    show();
  }

  /** (Re)opens the chosen port in the frame, at the path in the box. */
  async function show() {
    if (!chosen || !ready() || !me.canWrite) return;
    const port = chosen;
    render();
    say('opening', `Opening port ${port}…`);
    let url, form;
    try {
      ({ url, form } = await link(port, { frame: true }));
    } catch (e) {
      if (gone || chosen !== port) return;
      say('link-error', h('p.error', `Port ${port} could not be opened: ${e.message}`));
      return;
    }
    if (gone || chosen !== port) return;
    address.textContent = shownAddress(url);
    const frame = h('iframe.pv-frame', {
      title: `Preview of port ${port}`, src: url, referrerPolicy: 'no-referrer',
      'data-port': port, 'data-form': form,
    });
    mount(view, frame);
    render();
  }

  async function openInTab() {
    if (!chosen) return;
    // opened now, while the click counts as the user's (a window opened after an await may be
    // blocked), and cut from this page before it goes anywhere
    const w = window.open('', '_blank');
    if (w) w.opener = null;
    try {
      const { url } = await link(chosen, { frame: false });
      if (w) w.location.href = url; else window.open(url, '_blank', 'noopener');
    } catch (e) {
      w?.close();
      toast(`Port ${chosen} could not be opened: ${e.message}`, 'error');
    }
  }

  async function copyLink() {
    if (!chosen) return;
    const port = chosen, seconds = Number(ttl.value);
    copyBtn.disabled = true;
    try {
      const t = await api(`${S}/ports/${port}/token`, { method: 'POST', body: { ttl: seconds } });
      const url = withPath(t.host_url || location.origin + t.path_url, pathInput.value.trim() || '/');
      shared.value = url;
      mount(sharedNote, `Signed link to port ${port}, valid until ${when(t.expires_at)}: `);
      sharedBox.hidden = false;
      try {
        await navigator.clipboard.writeText(url);
        toast('Signed link copied');
      } catch {
        shared.focus(); // no clipboard here (a page over plain http): selected, for Ctrl+C
        toast('The link is selected below: copy it with Ctrl+C');
      }
    } catch (e) {
      toast(`No signed link for port ${port}: ${e.message}`, 'error');
    } finally {
      copyBtn.disabled = !ready();
    }
  }

  async function togglePublic() {
    const p = ports.find((x) => x.port === chosen);
    const port = chosen, on = !p?.public;
    publicBtn.disabled = true;
    try {
      await api(`${S}/ports/${port}`, { method: 'PUT', body: { public: on } });
      toast(on ? `Port ${port} is public: anyone with its address may open it` : `Port ${port} is private again`);
    } catch (e) {
      toast(`Port ${port} could not be made ${on ? 'public' : 'private'}: ${e.message}`, 'error');
    }
    publicBtn.disabled = false;
    await refresh();
  }

  render();
  return {
    key: 'preview', label: 'Preview', pane,
    onShow() { shown = true; if (stale || !listed) refresh(); },
    onHide() { shown = false; },
    onStatus(st) {
      if (st === status) return;
      const was = ready();
      status = st;
      // nothing of the sandbox can be reached now: the list and the frame go, read again when READY
      if (!ready()) { listed = false; stale = true; ports = []; listError = null; chosen = null; }
      render();
      if (ready() && !was && shown) refresh();
    },
    dispose() { gone = true; clearTimeout(debounce); offEvent(); },
  };
}
