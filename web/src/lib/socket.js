// One WebSocket to the gateway, through nginx on this origin, paced by its consumer.
//
// Auth: the token rides in the subprotocol offer `sandpipe.v1, bearer.<token>`; nginx moves it
// into Authorization and answers `sandpipe.v1`, so it never appears in a URL or a log.
//
// Credit: the gateway grants its executor credit only as our socket drains (docs/api.md: "a
// client that stops reading pauses only its own PTY"). With WebSocketStream (Chromium) a message
// is read only once the previous one's handler has settled, so a consumer that returns a
// promise (e.g. "resolved once xterm has drawn it") stops the browser reading the socket; TCP
// then pushes back to the gateway, which stops granting credit, and the program in the sandbox
// blocks on its write. Plain WebSocket (other browsers) cannot stop reading: messages are
// handled one at a time all the same, but they queue in memory.
import { token } from './auth.js';

export const hasStreams = typeof globalThis.WebSocketStream === 'function';

function wsUrl(path) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}${path}`;
}

/**
 * Opens path ("/ws/control", "/ws/sessions/s-…?since=4"). handlers:
 *   onOpen()                    connected
 *   onMessage(data)             string (text frame) or Uint8Array (binary); may return a promise:
 *                               nothing more is read until it settles
 *   onClose({code, reason})     once, however it ended (code 1006: never connected or dropped)
 * Returns {send(data), close(code, reason)}.
 */
export function openSocket(path, handlers) {
  const protocols = ['sandpipe.v1', 'bearer.' + token()];
  return hasStreams && !openSocket.forcePlain
    ? openStream(wsUrl(path), protocols, handlers)
    : openPlain(wsUrl(path), protocols, handlers);
}
openSocket.forcePlain = false;

function once(fn) {
  let done = false;
  return (...a) => { if (!done) { done = true; fn(...a); } };
}

function openStream(url, protocols, { onOpen, onMessage, onClose }) {
  const ws = new globalThis.WebSocketStream(url, { protocols });
  const closed = once((c) => onClose?.(c));
  let writer = null, ended = false;
  const pending = [];
  ws.opened.then(async ({ readable, writable }) => {
    writer = writable.getWriter();
    for (const m of pending.splice(0)) writer.write(m).catch(() => {});
    onOpen?.();
    const reader = readable.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done || ended) break;
      const r = onMessage?.(value instanceof ArrayBuffer ? new Uint8Array(value) : value);
      if (r && typeof r.then === 'function') await r;
    }
  }).catch(() => {});
  ws.closed.then((c) => closed({ code: c.closeCode ?? 1005, reason: c.reason || '' }),
    () => closed({ code: 1006, reason: '' }));
  return {
    send(m) {
      if (ended) return;
      if (writer) writer.write(m).catch(() => {});
      else pending.push(m);
    },
    close(code = 1000, reason = '') {
      if (ended) return;
      ended = true;
      try { ws.close({ closeCode: code, reason }); } catch { /* already closing */ }
      closed({ code, reason });
    },
  };
}

function openPlain(url, protocols, { onOpen, onMessage, onClose }) {
  const ws = new WebSocket(url, protocols);
  ws.binaryType = 'arraybuffer';
  const closed = once((c) => onClose?.(c));
  const pending = [];
  let queue = Promise.resolve(), ended = false;
  ws.onopen = () => {
    for (const m of pending.splice(0)) ws.send(m);
    onOpen?.();
  };
  ws.onmessage = (e) => {
    const d = typeof e.data === 'string' ? e.data : new Uint8Array(e.data);
    queue = queue.then(() => (ended ? null : onMessage?.(d)));
  };
  ws.onclose = (e) => queue.then(() => closed({ code: e.code, reason: e.reason }));
  return {
    send(m) {
      if (ended) return;
      if (ws.readyState === WebSocket.OPEN) ws.send(m);
      else pending.push(m);
    },
    close(code = 1000, reason = '') {
      if (ended) return;
      ended = true;
      try { ws.close(code, reason); } catch { /* already closing */ }
      closed({ code, reason });
    },
  };
}

/** Close codes after which reconnecting cannot help (docs/api.md "Closing"). */
export function isFinal(code) {
  return code === 1000 || code === 1002 || code === 1007 || code === 1008 || code === 1009;
}

/** Backoff for the n-th reconnect attempt, ms: quick at first, at most 5 s. */
export function backoff(n) {
  return Math.min(5000, 150 * 2 ** Math.min(n, 6)) * (0.75 + Math.random() * 0.5);
}
