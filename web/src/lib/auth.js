// The signed-in token: taken from a pasted value or from a #token=… link (make run prints one),
// kept in sessionStorage (this tab only, gone when it closes) and never put in a URL the server
// sees: the fragment is stripped from the address bar as soon as it is read.
const KEY = 'sandpipe.token';

const FRAGMENT = /(?:^#|[#&])token=([^&]*)/;

/** Whether the address bar holds a #token=… link (the first one, or one opened in this tab). */
export function hasTokenFragment() {
  return FRAGMENT.test(location.hash);
}

/**
 * Moves #token=… (or #…&token=…) from the address bar into sessionStorage, replacing the token
 * held before. Returns null when there is none, 'garbage' when it is not a JWT (then nothing is
 * kept, and the old token is forgotten too: the link meant to sign someone else in), else 'taken'.
 */
export function takeTokenFromFragment() {
  const m = FRAGMENT.exec(location.hash);
  if (!m) return null;
  const rest = location.hash.replace(m[0], '').replace(/^#&/, '#');
  history.replaceState(null, '', location.pathname + location.search + (rest === '#' ? '' : rest));
  let t = '';
  try { t = decodeURIComponent(m[1]).trim(); } catch { /* not even an encoding */ }
  if (!/^[A-Za-z0-9_.-]+$/.test(t) || !claims(t)) {
    signOut();
    return 'garbage';
  }
  sessionStorage.setItem(KEY, t);
  return 'taken';
}

export function token() {
  return sessionStorage.getItem(KEY) || '';
}

export function setToken(t) {
  sessionStorage.setItem(KEY, t.trim());
}

export function signOut() {
  sessionStorage.removeItem(KEY);
}

/** The token's claims ({sub, role, session, exp}), or null when it is not a JWT. */
export function claims(t = token()) {
  const parts = t.split('.');
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
    const c = JSON.parse(json);
    return c && typeof c === 'object' ? c : null;
  } catch {
    return null;
  }
}

/** What the UI needs to know about who is signed in. */
export function who() {
  const c = claims();
  if (!c) return null;
  return {
    sub: String(c.sub ?? '?'),
    role: c.role === 'admin' || c.role === 'viewer' ? c.role : 'user',
    session: typeof c.session === 'string' ? c.session : null,
    exp: typeof c.exp === 'number' ? c.exp : 0,
    canWrite: c.role !== 'viewer',
    expired: typeof c.exp === 'number' && c.exp * 1000 <= Date.now(),
    isAdmin: c.role === 'admin',
  };
}

/** "14:05:12" (today) or "3 May, 14:05" : when a token expires, for a sentence. */
export function when(epochSeconds) {
  const d = new Date(epochSeconds * 1000);
  return d.toDateString() === new Date().toDateString()
    ? d.toLocaleTimeString()
    : d.toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
}
