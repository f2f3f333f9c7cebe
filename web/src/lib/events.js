// /ws/sessions/{id}?since=N: a session's event log, in order, from where we left off.
// Keeps the last sequence number it handed on; after a drop it reconnects with since=that, so
// the consumer sees every event once: none lost, none repeated (the gateway replays from its
// ring or Redis). Actions go out on the same connection and are acknowledged with their seq.
// A session no gateway holds any more (it ended) is refused on the WebSocket; its log is still
// in Redis, so the rest of it is read from the REST API (GET …/events), and a replay of an ended
// session shows what a live viewer saw.
import { openSocket, isFinal, backoff } from './socket.js';
import { api } from './rest.js';

const HISTORY_PAGE = 1000; // events per REST request when reading an ended session's log

export class EventStream {
  /**
   * opts.since: the last seq already seen (0: the whole history; null: live events only).
   * opts.onEvent(ev): each event once, in order; may return a promise (pacing: nothing more is
   *   read until it settles).
   * opts.onState({up, code, error}): connection changes.
   * opts.onOther(message): what the socket carries besides events and replies (file events:
   *   docs/api.md, "File events").
   */
  constructor(sessionId, { since = 0, onEvent, onState, onOther } = {}) {
    this.id = sessionId;
    this.lastSeq = since;
    this.onEvent = onEvent;
    this.onState = onState;
    this.onOther = onOther;
    this.sock = null;
    this.up = false;
    this.attempt = 0;
    this.stopped = false;
    this.nextId = 1;
    this.acks = new Map(); // id -> {resolve, reject}
    this.reconnects = 0;
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    const since = this.lastSeq === null ? '' : `?since=${this.lastSeq}`;
    let error = null;
    this.sock = openSocket(`/ws/sessions/${encodeURIComponent(this.id)}${since}`, {
      onOpen: () => {
        this.up = true;
        this.attempt = 0;
        this.onState?.({ up: true });
      },
      onMessage: (text) => {
        if (typeof text !== 'string') return undefined;
        let m;
        try { m = JSON.parse(text); } catch { return undefined; }
        // Replies (ack, pong, error) carry our id; an ack's seq names the action's event, which
        // comes in the stream in its turn.
        const reply = m.type === 'ack' || m.type === 'pong' || m.type === 'error';
        if (!reply && typeof m.seq === 'number') {
          if (this.lastSeq !== null && m.seq <= this.lastSeq) return undefined; // replayed: seen
          this.lastSeq = m.seq;
          return this.onEvent?.(m);
        }
        if (!reply) {
          this.onOther?.(m);
          return undefined;
        }
        const a = m.id !== undefined ? this.acks.get(m.id) : null;
        if (a) {
          this.acks.delete(m.id);
          if (m.type === 'error') a.reject(Object.assign(new Error(m.error?.message || 'refused'), { code: m.error?.code }));
          else a.resolve(m);
        } else if (m.type === 'error') {
          error = m.error;
        }
        return undefined;
      },
      onClose: ({ code, reason }) => {
        this.sock = null;
        this.up = false;
        for (const [, a] of this.acks) a.reject(Object.assign(new Error('the connection dropped'), { code: 'disconnected' }));
        this.acks.clear();
        const final = this.stopped || isFinal(code);
        if (final && !this.stopped && error?.code === 'not_found' && this.lastSeq !== null) {
          this.readHistory().then((read) => this.onState?.({
            up: false, code, reason, final, error: read ? { code: 'ended', message: 'the session has ended' } : error,
          }));
          return;
        }
        this.onState?.({ up: false, code, reason, error, final });
        if (final) return;
        this.reconnects++;
        setTimeout(() => this.connect(), backoff(this.attempt++));
      },
    });
  }

  /** The log after lastSeq from the REST API, page by page, to onEvent as the socket would;
   * resolves true once it was read to its end. */
  async readHistory() {
    try {
      while (!this.stopped) {
        const since = this.lastSeq;
        const page = await api(`/api/v1/sessions/${encodeURIComponent(this.id)}/events?since=${since}&limit=${HISTORY_PAGE}`);
        for (const ev of page.events || []) {
          if (this.stopped) return false;
          if (typeof ev.seq !== 'number' || ev.seq <= this.lastSeq) continue;
          this.lastSeq = ev.seq;
          const r = this.onEvent?.(ev);
          if (r && typeof r.then === 'function') await r;
        }
        if (!page.more || !(page.next_since > since)) return true;
        this.lastSeq = Math.max(this.lastSeq, page.next_since);
      }
    } catch {
      // an unknown session (404) or no server: the refusal stands as the reason
    }
    return false;
  }

  /** Sends {"type": type, ...body} with an id; resolves with the ack (or pong). */
  request(type, body = {}) {
    if (!this.sock) return Promise.reject(Object.assign(new Error('not connected'), { code: 'disconnected' }));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.acks.set(id, { resolve, reject });
      this.sock.send(JSON.stringify({ type, id, ...body }));
    });
  }

  /** Submits an OpenHands action ({action: 'run', args: {...}}); resolves with {seq}. */
  action(action) {
    return this.request('action', { action });
  }

  signal(sig = 'INT') {
    return this.request('signal', { signal: sig });
  }

  /** Drops the connection as a network failure would (tests, "reconnect now"). */
  drop() {
    this.sock?.close(4000, 'dropped');
  }

  close() {
    this.stopped = true;
    this.sock?.close(1000, 'closed');
  }
}

/** The text an event carries (output, process_output, terminal_input): `data`, or `data_b64`
 * decoded as UTF-8 (bytes that are not UTF-8 shown as U+FFFD); '' when it has neither. */
export function eventText(ev) {
  if (typeof ev.data === 'string') return ev.data;
  if (typeof ev.data_b64 !== 'string') return '';
  return new TextDecoder().decode(Uint8Array.from(atob(ev.data_b64), (c) => c.charCodeAt(0)));
}
