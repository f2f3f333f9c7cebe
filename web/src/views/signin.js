// Sign in with a token: pasted here, or arriving as #token=… from the link `make run` prints.
// notice: why this page shows (a link's token refused, a token expired), as a sentence.
import { setToken, claims, signOut } from '../lib/auth.js';
import { api } from '../lib/rest.js';
import { h, mount } from '../lib/dom.js';

export function signInView(el, { notice = '', onSignedIn }) {
  const input = h('textarea', {
    id: 'token', rows: 4, spellcheck: false, autocomplete: 'off',
    placeholder: 'eyJhbGciOiJIUzI1NiIs…', 'aria-label': 'token',
  });
  const msg = h('p.error', { role: 'alert', 'data-testid': 'signin-notice' }, notice);
  const submit = async (e) => {
    e.preventDefault();
    const t = input.value.trim().replace(/^Bearer\s+/i, '');
    msg.textContent = '';
    if (!claims(t)) {
      msg.textContent = 'That is not a sandpipe token (three base64 parts separated by dots).';
      return;
    }
    setToken(t);
    try {
      // Any authenticated read proves the token: the pool needs only a valid one.
      await api('/api/v1/pool', { probe: true });
    } catch (err) {
      signOut();
      msg.textContent = err.code === 'token_expired' ? 'This token has expired: paste a newer one.'
        : err.status === 401 ? 'The server refused this token (it is not signed by this server, or was altered).' : err.message;
      return;
    }
    onSignedIn();
  };
  mount(el, h('form.card.signin', { onsubmit: submit },
    h('h1', h('span.logo', '▚'), ' sandpipe'),
    h('p.muted', 'Sandboxes with live terminals, agent timelines and files.'),
    h('label', { for: 'token' }, 'Token'),
    input,
    msg,
    h('button.primary', { type: 'submit' }, 'Sign in'),
    h('p.hint', 'Get one from ', h('code', 'make run'), ' (it prints a link that signs you in), or ',
      h('code', 'sandpipe token --role user --sub NAME'),
      '. The token stays in this tab only (sessionStorage).')));
  input.focus();
  return () => {};
}
