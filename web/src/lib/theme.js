// Dark and light themes: CSS variables keyed on <html data-theme>, the choice kept in
// localStorage (default: the system's preference). Listeners (terminals, editors) follow.
const KEY = 'sandpipe.theme';
const listeners = new Set();

export function currentTheme() {
  return document.documentElement.dataset.theme === 'light' ? 'light' : 'dark';
}

export function initTheme() {
  const saved = localStorage.getItem(KEY);
  const prefersLight = window.matchMedia?.('(prefers-color-scheme: light)').matches;
  document.documentElement.dataset.theme = saved || (prefersLight ? 'light' : 'dark');
}

export function setTheme(t) {
  document.documentElement.dataset.theme = t;
  localStorage.setItem(KEY, t);
  for (const cb of listeners) cb(t);
}

export function toggleTheme() {
  setTheme(currentTheme() === 'dark' ? 'light' : 'dark');
}

export function onTheme(cb) {
  listeners.add(cb);
  return () => listeners.delete(cb);
}
