// A session's file events (docs/api.md, "File events") on its event socket (lib/events.js):
// each directory watched once per page whatever asks for it, watched again after every
// reconnect; every (re)watch is handed on as a "resync" event, since what changed while no
// watch was up was not seen, and whoever listens lists again what it shows.

/** The key the gateway names a watch by: the path without trailing slashes. */
export const watchKey = (path) => path.replace(/\/+$/, '') || '/';

export class FileWatches {
  /** stream(): the session's EventStream (request, and it calls message and connected). */
  constructor(stream) {
    this.stream = stream;
    this.watches = new Map(); // key -> {key, listeners: Set, asking: bool}
  }

  /**
   * Follows directory path (and everything below it). listener({events}) gets each batch in
   * order, a {event: 'resync', path} first whenever the watch (re)starts; listener({error}) when
   * the gateway refuses or ends it ({code, message}). Returns the function that stops it.
   */
  watch(path, listener) {
    const key = watchKey(path);
    let w = this.watches.get(key);
    if (!w) {
      w = { key, listeners: new Set(), asking: false };
      this.watches.set(key, w);
    }
    w.listeners.add(listener);
    if (w.listeners.size === 1) this.ask(w);
    return () => {
      w.listeners.delete(listener);
      if (w.listeners.size || this.watches.get(key) !== w) return;
      this.watches.delete(key);
      this.stream().request('files.unwatch', { path: key }).catch(() => {}); // gone with the socket
    };
  }

  async ask(w) {
    if (w.asking) return; // one files.watch at a time: the gateway answers a second with busy
    w.asking = true;
    try {
      const ack = await this.stream().request('files.watch', { path: w.key });
      w.asking = false;
      if (this.watches.get(w.key) === w) this.emit(w, { events: [{ event: 'resync', path: ack.path || w.key }] });
    } catch (e) {
      w.asking = false;
      if (e.code === 'disconnected') return; // asked again once the socket is back (connected)
      if (this.watches.get(w.key) === w) this.emit(w, { error: { code: e.code, message: e.message } });
    }
  }

  emit(w, what) {
    for (const l of [...w.listeners]) l(what);
  }

  /** The socket is (back) up: every watch is asked for on it. */
  connected() {
    for (const w of this.watches.values()) this.ask(w);
  }

  /** A message of the socket that is not an event: a batch, or a watch that ended. */
  message(m) {
    const w = this.watches.get(m.watch);
    if (!w) return;
    if (m.type === 'files') this.emit(w, { events: m.events || [] });
    else if (m.type === 'files.ended') this.emit(w, { error: m.error || { code: 'ended', message: 'the watch ended' } });
  }
}
