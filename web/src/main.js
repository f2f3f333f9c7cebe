// The IDE's entry: sign-in, then a hash router over the views (#/ sessions, #/s/{id} one
// session, #/admin the overview). Every view gets an element and returns its cleanup.
// Tokens: a #token= link (the first, or a later one opened in this tab) replaces the token held
// and is checked with the server before any view shows; a token the server refuses later (a
// 401, a 1008 close) or that reaches its exp (a timer) ends the signed-in views at once, and
// the sign-in page says why in a sentence.
import './styles/app.css';
import { takeTokenFromFragment, hasTokenFragment, token, who, signOut, when } from './lib/auth.js';
import { api, auth } from './lib/rest.js';
import { control } from './lib/control.js';
import { openSocket } from './lib/socket.js';
import { h, mount } from './lib/dom.js';
import { initTheme, toggleTheme, currentTheme, onTheme } from './lib/theme.js';
import { signInView } from './views/signin.js';
import { sessionsView } from './views/sessions.js';
import { sessionView, LEAVE_TERMINAL } from './views/session.js';

initTheme();
// ?ws=plain: WebSocket instead of WebSocketStream (comparisons, browsers without it)
if (new URLSearchParams(location.search).get('ws') === 'plain') openSocket.forcePlain = true;

const app = document.getElementById('app');
let cleanup = null;
let notice = ''; // why the sign-in page shows, for its next showing
let expiry = null; // the timer that signs out when the token expires
const MAX_DELAY = 2 ** 31 - 1; // setTimeout's limit (about 24 days): longer waits are re-armed

const SENTENCES = {
  garbage: 'This link\'s token is not valid: it is not a sandpipe token (it may have been cut short when copied). Sign in with a token below, or ask for a new link.',
  refused: 'This link\'s token is not valid: the server refused it (it was not signed by this server, or was altered). Sign in with a token below, or ask for a new link.',
  linkExpired: 'This link\'s token has expired. Sign in with a token below, or ask for a new link.',
  revoked: 'The server no longer accepts your token, so you were signed out. Sign in again with a valid token.',
};
const expiredSentence = (exp) => `Your token expired${exp ? ` at ${when(exp)}` : ''}, so you were signed out. Sign in again with a new token or link.`;

/** Signs out and shows the sign-in page with why. */
function endSignIn(why) {
  clearTimeout(expiry);
  signOut();
  control.close();
  notice = why;
  route();
}

/** Takes a #token= link from the address bar; checks its token with the server before keeping it. */
async function takeLink() {
  const got = takeTokenFromFragment();
  if (got === 'garbage') { control.close(); notice = SENTENCES.garbage; return; }
  if (!got) return;
  notice = '';
  control.close(); // the old token's connection
  mount(app, h('main.signin-page', h('p.muted', { 'data-testid': 'checking' }, 'Checking the link…')));
  try {
    await api('/api/v1/pool', { probe: true }); // any authenticated read proves the token
  } catch (e) {
    if (e.status !== 401) return; // the server is away: the views say so, and check again
    signOut();
    notice = e.code === 'token_expired' ? SENTENCES.linkExpired : SENTENCES.refused;
  }
}

/** Signs out when the token's exp is reached (re-armed for waits past setTimeout's limit). */
function armExpiry(me) {
  clearTimeout(expiry);
  if (!me.exp) return;
  const left = me.exp * 1000 - Date.now();
  expiry = setTimeout(() => (left > MAX_DELAY ? armExpiry(me) : endSignIn(expiredSentence(me.exp))),
    Math.min(Math.max(0, left), MAX_DELAY));
}

auth.onRefused = (err) => {
  if (!token()) return; // already signed out: the other views' answers say the same
  endSignIn(err.code === 'token_expired' ? expiredSentence(who()?.exp) : SENTENCES.revoked);
};

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
  [LEAVE_TERMINAL, 'leave the terminal (for its tab; Tab stays the shell\'s)'],
  ['← → Home End', 'move between tabs (on a tab)'],
  ['Alt+E', 'the file editor'], ['Escape, then Tab', 'leave the editor (Tab indents)'],
  ['Ctrl+S', 'save the file'], ['Ctrl+F', 'search in the file'], ['Delete', 'close the file (on its tab)'],
  ['↑ ↓ → ← Enter', 'the file tree: move, open or close a folder, open a file'],
  ['Space', 'open a file, staying in the tree'], ['F2 / Delete', 'rename / delete in the tree'],
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
  if (!me || me.expired) {
    clearTimeout(expiry);
    if (me) { signOut(); notice = expiredSentence(me.exp); }
    const main = h('main.signin-page');
    mount(app, main);
    cleanup = signInView(main, { notice, onSignedIn: () => { notice = ''; route(); } });
    return;
  }
  notice = '';
  armExpiry(me);
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

// a #token= link opened in this tab: its token replaces the one held
window.addEventListener('hashchange', () => (hasTokenFragment() ? takeLink().then(route) : route()));
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
  if (!up && code === 1008 && (error?.code === 'unauthorized' || error?.code === 'token_expired') && token()) {
    endSignIn(/expire/i.test(error?.message || '') ? expiredSentence(who()?.exp) : SENTENCES.revoked);
  }
});
takeLink().then(route);
