// /ws/control: JSON-RPC-like calls (session.create/list/get/pause/resume/delete, pool, health)
// on one shared connection that reconnects by itself. A call made while disconnected waits for
// the connection; a call in flight when it drops fails (the caller decides whether to retry:
// session.create is not idempotent).
import { openSocket, isFinal, backoff } from './socket.js';

export class RpcError extends Error {
  constructor(code, message) {
    super(message || code);
    this.code = code;
  }
}

class Control {
  constructor() {
    this.sock = null;
    this.up = false;
    this.nextId = 1;
    this.calls = new Map(); // id -> {resolve, reject, msg}
    this.waiting = [];      // ids of calls to send once connected
    this.attempt = 0;
    this.listeners = new Set();
    this.stopped = false;
  }

  /** cb({up, error}) on every connection change; returns an unsubscribe function. */
  onState(cb) {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  emit(state) {
    for (const cb of this.listeners) cb(state);
  }

  connect() {
    if (this.sock || this.stopped) return;
    this.sock = openSocket('/ws/control', {
      onOpen: () => {
        this.up = true;
        this.lastError = null;
        this.attempt = 0;
        for (const id of this.waiting.splice(0)) {
          const c = this.calls.get(id);
          if (c) { c.sent = true; this.sock.send(c.msg); }
        }
        this.emit({ up: true });
      },
      onMessage: (text) => this.receive(text),
      onClose: ({ code, reason }) => {
        this.sock = null;
        this.up = false;
        const final = isFinal(code) || this.stopped;
        const why = this.lastError?.message || 'the connection to the server dropped';
        for (const [id, c] of this.calls) {
          if (!c.sent && !final) continue; // sent once the connection is back
          c.reject(new RpcError(this.lastError?.code || 'disconnected', why));
          this.calls.delete(id);
        }
        if (final) this.waiting = [];
        this.emit({ up: false, code, reason, error: this.lastError });
        if (final) return;
        setTimeout(() => this.connect(), backoff(this.attempt++));
      },
    });
  }

  receive(text) {
    if (typeof text !== 'string') return;
    let m;
    try { m = JSON.parse(text); } catch { return; }
    const c = this.calls.get(m.id);
    if (m.type === 'error' && !c) this.lastError = m.error; // e.g. unauthorized, before 1008
    if (!c) return;
    this.calls.delete(m.id);
    if (m.type === 'result') c.resolve(m.result);
    else c.reject(new RpcError(m.error?.code || 'error', m.error?.message));
  }

  call(method, params = {}) {
    this.stopped = false;
    this.connect();
    const id = this.nextId++;
    const msg = JSON.stringify({ id, method, params });
    return new Promise((resolve, reject) => {
      const c = { resolve, reject, msg, sent: this.up };
      this.calls.set(id, c);
      if (this.up) this.sock.send(msg);
      else this.waiting.push(id);
    });
  }

  close() {
    this.stopped = true;
    this.waiting = [];
    this.sock?.close(1000, 'signed out');
  }
}

export const control = new Control();
