// The sessions list: live status badges (the REST list, polled: it spans every gateway and
// keeps stopped sessions), who created each, its age and limits; create, pause, resume, delete
// (over /ws/control), open.
import { control } from '../lib/control.js';
import { api } from '../lib/rest.js';
import { h, mount, age, bytes, toast } from '../lib/dom.js';
import { badge, sessionButtons } from './common.js';

const POLL_MS = 2000;

function parseEnv(text) {
  const env = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const i = line.indexOf('=');
    if (i <= 0) throw new Error(`"${line}" is not NAME=value`);
    env[line.slice(0, i).trim()] = line.slice(i + 1);
  }
  return env;
}

function createForm(me, onCreated) {
  const env = h('textarea', { name: 'env', rows: 3, placeholder: 'FOO=1\nDEBUG=true', spellcheck: false });
  const mem = h('input', { name: 'memory', type: 'number', min: 16, placeholder: 'default', title: 'MiB' });
  const pids = h('input', { name: 'pids', type: 'number', min: 8, placeholder: 'default' });
  const idle = h('input', { name: 'idle_timeout', type: 'number', min: 0, placeholder: 'default', title: 'seconds' });
  const go = h('button.primary', { type: 'submit' }, 'Create session');
  const status = h('span.muted');
  const form = h('form.card.create', {
    onsubmit: async (e) => {
      e.preventDefault();
      const params = {};
      try {
        const e2 = parseEnv(env.value);
        if (Object.keys(e2).length) params.env = e2;
      } catch (err) {
        toast(err.message, 'error');
        return;
      }
      if (mem.value) params.memory = Number(mem.value) * 1024 * 1024;
      if (pids.value) params.pids = Number(pids.value);
      if (idle.value) params.idle_timeout = Number(idle.value);
      go.disabled = true;
      status.textContent = params.memory || params.pids ? 'Starting a fresh sandbox…' : 'Creating…';
      try {
        const s = await control.call('session.create', params);
        toast(`Created ${s.id}`);
        form.reset();
        onCreated(s);
      } catch (err) {
        toast(`Create failed: ${err.message}`, 'error');
      } finally {
        go.disabled = false;
        status.textContent = '';
      }
    },
  },
  h('h2', 'New session'),
  h('div.grid',
    h('label', 'Environment', h('small', 'one NAME=value a line'), env),
    h('div.limits',
      h('label', 'Memory (MiB)', mem),
      h('label', 'Processes', pids),
      h('label', 'Idle timeout (s)', idle))),
  h('div.row', go, status,
    h('small.muted', 'Default limits come from the warm pool, in milliseconds.')));
  return me.canWrite ? form : null;
}

function limits(s) {
  const parts = [];
  parts.push(s.idle_timeout ? `idle ${s.idle_timeout} s → ${s.idle_action || 'stop'}` : 'no idle timeout');
  if (s.max_lifetime) parts.push(`lifetime ${s.max_lifetime} s`);
  if (s.memory) parts.push(`mem ${bytes(s.memory)}`);
  if (s.pids) parts.push(`${s.pids} pids`);
  return parts.join(' · ');
}

export function sessionsView(el, me) {
  let showStopped = false, timer = null, gone = false, list = null, err = null;
  const body = h('div.sessions');
  const stoppedToggle = h('label.check', h('input', {
    type: 'checkbox', onchange: (e) => { showStopped = e.target.checked; render(); },
  }), 'Show stopped');
  const refresh = async () => {
    clearTimeout(timer);
    try {
      const r = await api('/api/v1/sessions?limit=200');
      list = r.sessions || [];
      err = null;
    } catch (e) {
      err = e;
    }
    if (gone) return;
    render();
    timer = setTimeout(refresh, POLL_MS);
  };

  function row(s) {
    return h('tr', { 'data-session': s.id },
      h('td', h('a.mono', { href: '#/s/' + s.id }, s.id), s.warning && h('span.warn-dot', { title: s.warning }, ' ⚠')),
      h('td', badge(s.status)),
      h('td', s.owner || '—'),
      h('td', { title: s.created ? new Date(s.created * 1000).toLocaleString() : '' }, s.created ? age(s.created) : '—'),
      h('td.muted.small', limits(s)),
      h('td.actions',
        s.status !== 'STOPPED' && h('a.button', { href: '#/s/' + s.id, 'data-action': 'open' }, 'Open'),
        sessionButtons(s, me, refresh, { compact: true })));
  }

  function render() {
    if (list === null && !err) {
      mount(body, h('p.muted', 'Loading sessions…'));
      return;
    }
    if (err && list === null) {
      mount(body, h('div.card.error', h('strong', 'Cannot list sessions. '), err.message,
        h('p.muted', 'Retrying every few seconds. Is the gateway running (make run)?')));
      return;
    }
    const shown = list.filter((s) => showStopped || s.status !== 'STOPPED')
      .sort((a, b) => (b.created || 0) - (a.created || 0));
    if (!shown.length) {
      mount(body, h('div.empty',
        h('p', list.length ? 'No running sessions.' : 'No sessions yet.'),
        h('p.muted', me.canWrite ? 'Create one above: it is ready in milliseconds from the warm pool.'
          : 'Sessions appear here when someone creates one.')));
      return;
    }
    mount(body, err && h('p.error.small', `Live updates paused: ${err.message}`),
      h('table.list',
        h('thead', h('tr', h('th', 'Session'), h('th', 'Status'), h('th', 'Created by'), h('th', 'Age'),
          h('th', 'Limits'), h('th', ''))),
        h('tbody', shown.map(row))));
  }

  mount(el,
    createForm(me, (s) => { location.hash = '#/s/' + s.id; }),
    h('section.card',
      h('div.row.head', h('h2', 'Sessions'), h('div.spacer'), stoppedToggle,
        h('button.ghost', { onclick: refresh, title: 'Refresh now' }, '↻')),
      body));
  render();
  refresh();
  return () => { gone = true; clearTimeout(timer); };
}
