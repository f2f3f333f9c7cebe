// The REST API on this origin (docs/api.md): JSON in and out, the bearer token in Authorization,
// every error surfaced as an ApiError with the API's code and message. A 401 means the token
// itself is refused (forged, expired, revoked): onRefused (main.js) signs out and says so, once,
// instead of every view retrying with it.
import { token } from './auth.js';

export const auth = { onRefused: null };

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || 'http_' + status;
  }
}

/**
 * One request. body: an object (sent as JSON), or a Blob/ArrayBuffer/string sent as is.
 * raw: return the Response (for downloads) instead of the parsed JSON. probe: a 401 is only
 * thrown (checking a token before keeping it), not reported to auth.onRefused.
 */
export async function api(path, { method = 'GET', body, raw = false, headers = {}, signal, probe = false } = {}) {
  const h = { Authorization: 'Bearer ' + token(), ...headers };
  let data = body;
  if (body !== undefined && !(body instanceof Blob) && !(body instanceof ArrayBuffer) && typeof body !== 'string') {
    data = JSON.stringify(body);
    h['Content-Type'] = 'application/json';
  }
  let r;
  try {
    r = await fetch(path, { method, headers: h, body: data, signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'cannot reach the server: ' + e.message);
  }
  if (!r.ok) {
    let code = '', message = '';
    try {
      const j = await r.json();
      code = j.error?.code || '';
      message = j.error?.message || j.detail || '';
    } catch { /* not JSON */ }
    const err = new ApiError(r.status, code, message);
    if (r.status === 401 && !probe) auth.onRefused?.(err);
    throw err;
  }
  if (raw) return r;
  const ct = r.headers.get('content-type') || '';
  return ct.includes('json') ? r.json() : r.text();
}

/** A path component or query value, encoded. */
export const q = encodeURIComponent;
