// The signed-in token: taken from a pasted value or from a #token=… link (make run prints one),
// kept in sessionStorage (this tab only, gone when it closes) and never put in a URL the server
// sees: the fragment is stripped from the address bar as soon as it is read.
const KEY = 'sandpipe.token';

/** Moves #token=… (or #…&token=…) from the address bar into sessionStorage. */
export function takeTokenFromFragment() {
  const m = /(?:^#|[#&])token=([A-Za-z0-9_.-]+)/.exec(location.hash);
  if (!m) return false;
  sessionStorage.setItem(KEY, m[1]);
  const rest = location.hash.replace(m[0], '').replace(/^#&/, '#');
  history.replaceState(null, '', location.pathname + location.search + (rest === '#' ? '' : rest));
  return true;
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
    isAdmin: c.role === 'admin',
  };
}
