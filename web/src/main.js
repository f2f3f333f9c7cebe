// The IDE's entry: sign-in, then a hash router over the views (#/ sessions, #/s/{id} one
// session, #/admin the overview). Every view gets an element and returns its cleanup.
import './styles/app.css';
import { takeTokenFromFragment, token, who, signOut } from './lib/auth.js';
import { control } from './lib/control.js';
import { openSocket } from './lib/socket.js';
import { h, mount } from './lib/dom.js';
import { initTheme, toggleTheme, currentTheme, onTheme } from './lib/theme.js';
import { signInView } from './views/signin.js';
import { sessionsView } from './views/sessions.js';
import { sessionView } from './views/session.js';

initTheme();
takeTokenFromFragment();
// ?ws=plain: WebSocket instead of WebSocketStream (comparisons, browsers without it)
if (new URLSearchParams(location.search).get('ws') === 'plain') openSocket.forcePlain = true;

const app = document.getElementById('app');
let cleanup = null;

function themeButton() {
  const b = h('button.ghost.icon', {
    title: 'Switch between the dark and the light theme (Alt+L)',
    'aria-label': 'toggle theme',
    onclick: () => toggleTheme(),
  });
  const label = () => { b.textContent = currentTheme() === 'dark' ? '☀ Light' : '☾ Dark'; };
  label();
  onTheme(label);
  return b;
}

const SHORTCUTS = [
  ['Alt+T', 'new terminal'], ['Alt+1…9', 'switch tabs'], ['Alt+W', 'close the terminal tab'],
  ['Alt+E', 'the file editor'], ['Ctrl+S', 'save the file'], ['Ctrl+F', 'search in the file'],
  ['Ctrl+Shift+C / V', 'copy / paste in a terminal'], ['Alt+L', 'dark / light theme'], ['Alt+K', 'this list'],
];

function shortcutsButton() {
  const dlg = h('dialog.card.shortcuts', { 'aria-label': 'keyboard shortcuts' },
    h('h2', 'Keyboard shortcuts'),
    h('table', SHORTCUTS.map(([k, what]) => h('tr', h('td', h('kbd', k)), h('td', what)))),
    h('form', { method: 'dialog' }, h('button', 'Close')));
  document.body.append(dlg);
  const show = () => (dlg.open ? dlg.close() : dlg.showModal());
  window.__sandpipe_shortcuts = show;
  return h('button.ghost', { title: 'Keyboard shortcuts (Alt+K)', 'aria-label': 'keyboard shortcuts', onclick: show }, '⌨');
}

function topBar(me) {
  return h('header.topbar',
    h('a.brand', { href: '#/' }, h('span.logo', '▚'), 'sandpipe'),
    h('nav',
      me.role !== 'viewer' && h('a', { href: '#/' }, 'Sessions'),
      me.isAdmin && h('a', { href: '#/admin' }, 'Overview')),
    h('div.spacer'),
    h('span.who', { title: me.exp ? `token expires ${new Date(me.exp * 1000).toLocaleString()}` : '' },
      me.sub, ' ', h('span.role', { class: 'role-' + me.role, 'data-testid': 'role' }, me.role)),
    shortcutsButton(),
    themeButton(),
    h('button.ghost', {
      onclick: () => { signOut(); control.close(); location.hash = ''; route(); },
      title: 'Forget the token in this tab',
    }, 'Sign out'));
}

export function route() {
  cleanup?.();
  cleanup = null;
  for (const d of document.querySelectorAll('dialog.shortcuts')) d.remove();
  window.__sandpipe_shortcuts = null;
  const me = token() ? who() : null;
  if (!me || (me.exp && me.exp * 1000 < Date.now())) {
    const expired = !!me;
    if (me) signOut();
    const main = h('main.signin-page');
    mount(app, main);
    cleanup = signInView(main, { expired, onSignedIn: () => route() });
    return;
  }
  const hash = location.hash || '#/';
  const main = h('main.content');
  mount(app, topBar(me), main);
  let m;
  if ((m = /^#\/s\/([A-Za-z0-9._:@+-]+)/.exec(hash))) {
    cleanup = sessionView(main, m[1], me);
  } else if (me.role === 'viewer') {
    location.replace('#/s/' + (me.session || ''));
    return;
  } else if (hash.startsWith('#/admin') && me.isAdmin) {
    import('./views/admin.js').then(({ adminView }) => { cleanup = adminView(main, me); });
  } else {
    cleanup = sessionsView(main, me);
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('keydown', (e) => {
  if (!e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.code === 'KeyL') {
    e.preventDefault();
    e.stopPropagation();
    toggleTheme();
  } else if (e.code === 'KeyK' && window.__sandpipe_shortcuts) {
    e.preventDefault();
    e.stopPropagation();
    window.__sandpipe_shortcuts();
  }
}, true);
control.onState(({ up, code, error }) => {
  if (!up && code === 1008 && error?.code === 'unauthorized') {
    signOut();
    route();
  }
});
route();
