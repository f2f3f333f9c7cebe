// One session: a header with its live status and controls, and tabs: terminals (several, each
// its own shell), plus the panels other modules add (agent timeline, files). The session's event
// log is read once here (one EventStream from seq 0) and handed to every panel.
// Shortcuts: Alt+T new terminal, Alt+1…9 switch tabs, Alt+W close the terminal tab, Alt+E the
// editor. A new or selected terminal takes the keyboard focus (by click, shortcut or tab).
// The tab bar is an ARIA tablist (lib/tablist.js: arrows, Home, End), whatever tabs it holds;
// Ctrl+Shift+← leaves a terminal (which keeps Tab for the shell) for its tab in the bar. The
// selected tab is kept per session in sessionStorage: a reload shows the same one.
// The header says when the link to the server is down ("reconnecting…", "offline") instead of
// the last status it read, which may no longer be true.
// An ended session (STOPPED) or an unknown one (404) is one screen: polling stops, what writes or
// needs the sandbox goes (terminals, "+ Terminal", the files, the action box, the buttons), and a
// sentence says what happened and what is left to do.
import { api } from '../lib/rest.js';
import { EventStream } from '../lib/events.js';
import { FileWatches } from '../lib/file_watch.js';
import { h, mount, age } from '../lib/dom.js';
import { when } from '../lib/auth.js';
import { TerminalTab, darkTheme, lightTheme, KEEP_TYPED } from '../lib/terminal.js';
import { currentTheme, onTheme } from '../lib/theme.js';
import { tablistKeys, markSelected } from '../lib/tablist.js';
import { badge, sessionButtons } from './common.js';
import { panels } from './panels.js';

const POLL_MS = 2000;
export const LEAVE_TERMINAL = 'Ctrl+Shift+←'; // the key that takes the focus out of a terminal
const termTheme = () => (currentTheme() === 'dark' ? darkTheme : lightTheme);

export function sessionView(el, id, me) {
  let session = null, gone = false, timer = null, termCount = 0, active = null;
  let ended = null; // 'stopped' | 'unknown': nothing polls or writes any more
  // The link: terminals and the event stream retrying, and whether the last poll reached the server.
  const termsDown = new Set();
  let eventsDown = false, unreachable = false;
  const tabs = []; // {key, label, button, pane, onShow, dispose, terminal}
  const head = h('div.session-head');
  const banner = h('div.card.error.banner', { hidden: true, role: 'status' });
  const tabBar = h('div.tabs', { role: 'tablist' });
  let tabBarBox = null;
  const panes = h('div.panes');
  const newTermBtn = me.canWrite && h('button.tab.add', {
    title: 'New terminal (Alt+T)', 'aria-label': 'new terminal', onclick: () => addTerminal(),
  }, '+ Terminal');

  function link() {
    if (!navigator.onLine || unreachable) return 'offline';
    return termsDown.size || eventsDown ? 'reconnecting' : 'up';
  }

  function renderHead() {
    if (ended === 'unknown') {
      mount(head,
        me.role !== 'viewer' && h('a.back', { href: '#/', title: 'All sessions' }, '←'),
        h('h1.mono', id),
        h('span.badge.b-bad', { 'data-status': 'NOT FOUND' }, 'not found'));
      banner.hidden = false;
      mount(banner, h('strong', `No session ${id} exists (or it was removed). `),
        'Check the link you followed; ',
        me.canWrite ? [h('a', { href: '#/' }, 'the sessions list'), ' shows the sessions you can open, and creates new ones.']
          : 'ask whoever gave it to you for a new one.');
      return;
    }
    const s = session, l = ended ? 'up' : link();
    const status = l !== 'up'
      ? h('span.badge.b-warn.link', {
        'data-link': l,
        title: `The connection to the server is down; the page reconnects by itself.${s ? ` Last known status: ${s.status}.` : ''}`,
      }, l === 'offline' ? 'offline' : 'reconnecting…')
      : s ? badge(s.status) : h('span.badge.b-info', '…');
    mount(head,
      me.role !== 'viewer' && h('a.back', { href: '#/', title: 'All sessions' }, '←'),
      h('h1.mono', id),
      status,
      s && h('span.muted.small', `by ${s.owner || '?'} · ${s.created ? age(s.created) : ''} old · ${s.provider || ''}`),
      h('div.spacer'),
      s && sessionButtons(s, me, poll));
    // An ended session: say so where the work would be, what is left and what to do.
    banner.hidden = ended !== 'stopped';
    if (ended === 'stopped') {
      mount(banner, h('strong', `Session ${id} has ended${s?.ended ? ` (at ${when(s.ended)})` : ''}. `),
        'Its sandbox is gone: the terminals are closed and its files can no longer be read. ',
        'What ran in it stays readable in the Agent tab. ',
        me.canWrite && [h('a', { href: '#/' }, 'The sessions list'), ' creates a new session.']);
    }
  }

  /** The session is over (stopped) or was never there (unknown): one screen, nothing polling. */
  function end(kind) {
    if (gone || ended) return;
    ended = kind;
    clearTimeout(timer);
    newTermBtn?.remove();
    // terminals and files need the sandbox; an unknown session has nothing to show at all
    for (const t of tabs.filter((t) => kind === 'unknown' || t.closable || t.key === 'files')) closeTab(t);
    sessionStorage.removeItem(storeKey); // no terminal to take back
    if (kind === 'unknown') {
      stream.close();
      tabBarBox.remove();
      panes.remove();
    } else {
      for (const t of tabs) t.onStatus?.('STOPPED');
      if (tabs.length && !tabs.includes(active)) select(tabs[0]);
    }
    renderHead();
  }

  async function poll() {
    clearTimeout(timer);
    if (ended) return;
    try {
      // REST: it knows stopped sessions too, and sessions of every gateway.
      session = await api(`/api/v1/sessions/${encodeURIComponent(id)}`);
      unreachable = false;
    } catch (e) {
      if (gone) return;
      if (e.status === 404) { end('unknown'); return; }
      if (e.status === 401) return; // the token is refused: main.js signs out
      unreachable = e.status === 0; // not even an answer: the network or the server is away
    }
    if (gone || ended) return;
    if (session?.status === 'STOPPED') { end('stopped'); return; }
    renderHead();
    for (const t of tabs) t.onStatus?.(session?.status);
    timer = setTimeout(poll, POLL_MS);
  }

  /** Shows tab; focus false: the keyboard stays where it is (arrow keys in the tab bar). */
  function select(tab, { focus = true } = {}) {
    if (active && active !== tab) active.onHide?.();
    active = tab;
    markSelected(tabs.map((t) => t.button), tab.button);
    for (const t of tabs) t.pane.hidden = t !== tab;
    tab.onShow?.({ focus });
    remember(tab);
  }

  // The selected tab, per session, for a reload: a terminal by its gateway id (its tab's key
  // changes when tabs before it were closed), any other tab by its key.
  const tabKey = `sandpipe.tab.${id}`;
  let restoring = true; // while the view is built, selecting is not choosing
  const tabName = (t) => (t.terminal ? t.terminal.termId && `term:${t.terminal.termId}` : t.key);
  function remember(tab) {
    if (!restoring && tab === active && tabName(tab)) sessionStorage.setItem(tabKey, tabName(tab));
  }
  function restoreTab() {
    restoring = false;
    const want = sessionStorage.getItem(tabKey);
    const t = want && tabs.find((x) => tabName(x) === want);
    if (t && t !== active) select(t);
    else if (active) remember(active);
  }

  function addTab(tab) {
    tab.button = h('button.tab', {
      role: 'tab', id: `tab-${tab.key}`, 'aria-controls': `pane-${tab.key}`, tabindex: -1,
      'data-tab': tab.key, title: tab.title, onclick: () => select(tab),
    }, tab.label);
    tab.pane.id = `pane-${tab.key}`;
    tab.pane.setAttribute('role', 'tabpanel');
    tab.pane.setAttribute('aria-labelledby', tab.button.id);
    if (tab.closable) {
      tab.button.append(h('span.close', {
        title: 'Close (Alt+W)', onclick: (e) => { e.stopPropagation(); closeTab(tab); },
      }, '×'));
    }
    tabBar.append(tab.button);
    panes.append(tab.pane);
    tabs.push(tab);
    return tab;
  }

  function closeTab(tab) {
    const i = tabs.indexOf(tab);
    if (i < 0) return;
    tab.dispose?.();
    tab.button.remove();
    tab.pane.remove();
    tabs.splice(i, 1);
    if (active === tab && tabs.length) select(tabs[Math.max(0, i - 1)]);
  }

  // The terminals this tab has open, kept in sessionStorage: a reload takes them back (the
  // gateway keeps a terminal --term-grace after its connection goes, and replays the last 1 MiB
  // of its output), instead of leaving them behind and starting new shells.
  const storeKey = `sandpipe.terminals.${id}`;
  const kept = () => { try { return JSON.parse(sessionStorage.getItem(storeKey)) || []; } catch { return []; } };
  const keep = () => sessionStorage.setItem(storeKey, JSON.stringify(
    tabs.filter((t) => t.terminal?.termId).map((t) => t.terminal.termId)));

  function addTerminal(termId = null) {
    const n = ++termCount;
    const hint = h('div.pace-hint', { hidden: true, role: 'status' }, 'output paused: catching up…');
    const state = h('div.term-state');
    const box = h('div.term');
    const pane = h('div.pane.term-pane', { 'data-terminal': n }, box, hint, state);
    const tab = {
      key: 'term' + n, label: `Terminal ${n}`, pane, closable: true,
      title: `Terminal ${n}: ${LEAVE_TERMINAL} takes the keyboard out of it (Tab goes to the shell)`,
    };
    addTab(tab);
    select(tab);
    const t = new TerminalTab(id, box, {
      theme: termTheme(),
      termId,
      onTerm: () => { keep(); remember(tab); },
      onState: ({ state: st, hint: paused, error, typed }) => {
        if (paused !== undefined) hint.hidden = !paused;
        tab.button.dataset.state = st;
        const down = st === 'reconnecting';
        if (down !== termsDown.has(tab)) {
          if (down) termsDown.add(tab); else termsDown.delete(tab);
          if (down) renderHead(); else poll(); // back: the status as it is now
        }
        if (st === 'refused') {
          mount(state, h('div.card.error', error?.message || 'the terminal was refused',
            ' ', h('button', { onclick: () => { mount(state); t.connect(); } }, 'Try again')));
        } else if (st === 'reconnecting' || typed?.kept || typed?.refused) {
          // what is typed meanwhile is held for the terminal (lib/terminal.js, KEEP_TYPED)
          const note = typed?.refused
            ? `${typed.kept} bytes typed are kept for the terminal; ${typed.refused} more were not (at most ${KEEP_TYPED / 1024} KiB)`
            : typed?.kept ? `${typed.kept} bytes typed, sent when the terminal is back` : '';
          mount(state, h('div.pill', { 'data-typed': typed?.kept || 0, 'data-refused': typed?.refused || 0 },
            st === 'reconnecting' ? 'reconnecting…' : 'connecting…', note && ` · ${note}`));
        } else {
          mount(state);
        }
      },
    });
    tab.terminal = t;
    // screen readers and the curious: how to leave (xterm's own label is "Terminal input")
    box.querySelector('textarea')?.setAttribute('aria-label', `terminal ${n}; ${LEAVE_TERMINAL} leaves it`);
    tab.onShow = ({ focus = true } = {}) => { t.refit(); if (focus) t.focus(); };
    if (active === tab) t.focus(); // the new terminal takes the keyboard (not the + button)
    tab.dispose = () => t.dispose();
    const off = onTheme(() => t.setTheme(termTheme()));
    const d = tab.dispose;
    // a closed tab's terminal is hung up (a 1000 close), and so are all of them when the view is left
    tab.dispose = () => {
      off(); d(); tab.terminal = null;
      if (termsDown.delete(tab) && !gone) renderHead();
      if (gone) sessionStorage.removeItem(storeKey); else keep();
    };
    window.__sandpipe.terminals.set(n, t);
    return tab;
  }

  function onKey(e) {
    // Out of a terminal (it takes Tab for the shell) to its tab in the bar; the editor's own
    // way out is CodeMirror's (Escape then Tab), Ctrl+Shift+← selects a word there.
    if (e.ctrlKey && e.shiftKey && !e.altKey && e.code === 'ArrowLeft' &&
        document.activeElement?.closest?.('.term-pane') && active) {
      e.preventDefault();
      e.stopPropagation();
      active.button.focus();
      return;
    }
    if (!e.altKey || e.ctrlKey || e.metaKey) return;
    // Captured before the terminal or editor sees the key (Alt+T is readline's transpose).
    const stop = () => { e.preventDefault(); e.stopPropagation(); };
    if (e.code === 'KeyT' && me.canWrite && !ended) {
      stop();
      addTerminal();
    } else if (e.code === 'KeyW' && active?.closable) {
      stop();
      closeTab(active);
    } else if (e.code === 'KeyE') {
      const f = tabs.find((t) => t.key === 'files');
      if (f) { stop(); select(f); f.focusEditor?.(); }
    } else if (/^Digit[1-9]$/.test(e.code)) {
      const t = tabs[Number(e.code.slice(5)) - 1];
      if (t) { stop(); select(t); }
    }
  }

  // The event log, shared: every panel's listener sees each event once, in order; a listener's
  // promise (it is still drawing) holds the stream back (lib/socket.js, "Credit").
  const eventListeners = new Set(), stateListeners = new Set();
  let stream = null;
  const fileWatches = new FileWatches(() => stream);
  const ctx = {
    session: () => session, // the last polled session (null before the first answer)
    onEvent(cb) { eventListeners.add(cb); return () => eventListeners.delete(cb); },
    onState(cb) { stateListeners.add(cb); return () => stateListeners.delete(cb); },
    events: {
      action: (a) => stream.action(a),
      signal: (sig) => stream.signal(sig),
    },
    // file events of a directory of the sandbox (lib/file_watch.js); returns the stop function
    watchFiles: (path, listener) => fileWatches.watch(path, listener),
  };

  window.__sandpipe = { terminals: new Map(), tabs, events: () => stream };
  tabBarBox = h('div.tabbar', tabBar, newTermBtn);
  tablistKeys(tabBar, (button) => { const t = tabs.find((x) => x.button === button); if (t) select(t, { focus: false }); });
  mount(el, h('section.session', head, banner, tabBarBox, panes));
  renderHead();
  for (const make of panels) {
    const tab = make(id, me, ctx);
    if (tab) addTab(tab);
  }
  stream = new EventStream(id, {
    since: 0,
    onEvent: (ev) => {
      const waits = [];
      for (const cb of eventListeners) {
        const r = cb(ev);
        if (r && typeof r.then === 'function') waits.push(r);
      }
      return waits.length ? Promise.all(waits) : undefined;
    },
    onOther: (m) => fileWatches.message(m),
    onState: (st) => {
      if (st.up) fileWatches.connected();
      const was = eventsDown;
      eventsDown = !st.up && !st.final;
      if (was && !eventsDown) poll(); else renderHead();
      for (const cb of stateListeners) cb(st);
    },
  });
  if (me.canWrite) {
    const back = kept();
    if (back.length) for (const termId of back) addTerminal(termId);
    else addTerminal();
  }
  else if (tabs.length) select(tabs[0]);
  else panes.append(h('div.empty', h('p', 'This token can watch this session but not type in it.'),
    h('p.muted', 'Viewers cannot open terminals.')));
  restoreTab();
  poll();
  window.addEventListener('keydown', onKey, true);
  // the browser says the network went or came: the header at once, and a poll when it is back
  const onOnline = () => { if (ended) return; renderHead(); if (navigator.onLine) poll(); };
  window.addEventListener('online', onOnline);
  window.addEventListener('offline', onOnline);
  return () => {
    gone = true;
    clearTimeout(timer);
    window.removeEventListener('keydown', onKey, true);
    window.removeEventListener('online', onOnline);
    window.removeEventListener('offline', onOnline);
    stream.close();
    for (const t of tabs.splice(0)) t.dispose?.();
  };
}
