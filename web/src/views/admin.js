// The admin overview: every session with its status and its sandbox's CPU and memory, the warm
// pool, each gateway's health, and the live metrics (action latency, actions/s, events/s, bytes
// streamed/s) as small charts updated every second from /metrics.
import { api, q } from '../lib/rest.js';
import { h, mount, age, bytes } from '../lib/dom.js';
import { parseProm, sum, p50Between } from '../lib/prom.js';
import { badge } from './common.js';

const POINTS = 60;
const WINDOW = 5;    // seconds over which rates and the latency median are taken
const RES_MS = 10000; // per-session CPU/memory sampling (each sample is a request to the sandbox)

function chart(title, unit, fmt) {
  const values = [];
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', `0 0 ${POINTS - 1} 30`);
  svg.setAttribute('preserveAspectRatio', 'none');
  // A baseline and faint grid over the whole window, so a chart that has only a few seconds of
  // history (drawn at the right, the newest) reads as such rather than as a broken chart.
  const el$ = (tag, attrs) => {
    const e = document.createElementNS(svg.namespaceURI, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    svg.append(e);
    return e;
  };
  for (const y of [1, 15]) el$('line', { class: 'grid', x1: 0, x2: POINTS - 1, y1: y, y2: y });
  el$('line', { class: 'base', x1: 0, x2: POINTS - 1, y1: 29, y2: 29 });
  const fill = el$('polygon', { class: 'fill' });
  const area = el$('polyline', { class: 'line' });
  const now = h('span.value', '—');
  const el = h('div.chart.card', { 'data-chart': title }, h('div.row', h('span.muted.small', title), h('div.spacer'), now), svg,
    h('div.row', h('span.muted.small.unit', unit), h('div.spacer'), h('span.muted.small', `last ${POINTS} s`)));
  return {
    el,
    push(v) {
      values.push(v);
      if (values.length > POINTS) values.shift();
      const finite = values.map((x) => (Number.isFinite(x) ? x : 0));
      const max = Math.max(1e-9, ...finite);
      const off = POINTS - finite.length;
      const pts = finite.map((x, i) => `${i + off},${(30 - (x / max) * 28 - 1).toFixed(2)}`);
      area.setAttribute('points', pts.join(' '));
      fill.setAttribute('points', `${off},29 ${pts.join(' ')} ${POINTS - 1},29`);
      now.textContent = Number.isFinite(v) ? fmt(v) : '—';
      el.dataset.samples = String(values.length);
    },
  };
}

export function adminView(el) {
  let gone = false, timer = null, resTimer = null;
  const samples = []; // the last WINDOW + 1 /metrics samples
  const res = new Map(); // session -> {cpu, rss}
  const charts = {
    latency: chart('action latency p50', 'ms, last 5 s (histogram bucket)', (v) => `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ms`),
    actions: chart('actions/s', 'per second, last 5 s', (v) => v.toFixed(1)),
    events: chart('events/s', 'stored per second', (v) => v.toFixed(0)),
    output: chart('bytes streamed/s', 'output per second', (v) => `${bytes(v)}/s`),
  };
  const sessionsBox = h('div');
  const poolBox = h('div');
  const gwBox = h('div');
  const err = h('p.error.small');
  mount(el, h('section.overview',
    h('div.charts', Object.values(charts).map((c) => c.el)),
    err,
    h('div.overview-grid',
      h('section.card', h('h2', 'Sessions'), sessionsBox),
      h('div.side-cards', h('section.card', h('h2', 'Warm pool'), poolBox), h('section.card', h('h2', 'Gateways'), gwBox)))));

  async function tick() {
    clearTimeout(timer);
    const t0 = performance.now();
    try {
      const [text, health, pool, list] = await Promise.all([
        api('/metrics'), api('/api/v1/health'), api('/api/v1/pool'), api('/api/v1/sessions?limit=200'),
      ]);
      err.textContent = '';
      const p = parseProm(String(text));
      const now = performance.now();
      // Rates over the last WINDOW samples: gateways add their counters to Redis once a second,
      // so a one-second difference would alternate between a burst and nothing.
      samples.push({ p, at: now });
      if (samples.length > WINDOW + 1) samples.shift();
      const prev = samples.length > 1 ? samples[0].p : null;
      const prevAt = samples[0].at;
      if (prev) {
        const dt = (now - prevAt) / 1000;
        const dc = sum(p, 'sandpipe_action_duration_seconds_count') - sum(prev, 'sandpipe_action_duration_seconds_count');
        const med = p50Between(prev, p);
        charts.latency.push(med === null ? NaN : med * 1000);
        charts.actions.push(dc / dt);
        charts.events.push((sum(p, 'sandpipe_events_stored') - sum(prev, 'sandpipe_events_stored')) / dt);
        charts.output.push((sum(p, 'sandpipe_output_bytes_total') - sum(prev, 'sandpipe_output_bytes_total')) / dt);
      }
      renderSessions(list.sessions || []);
      renderPool(pool);
      renderGateways(health);
    } catch (e) {
      err.textContent = `Cannot read the metrics: ${e.message}`;
    }
    if (!gone) timer = setTimeout(tick, Math.max(0, 1000 - (performance.now() - t0)));
  }

  let lastList = [];
  function renderSessions(list) {
    lastList = list;
    const live = list.filter((s) => s.status !== 'STOPPED');
    const counts = {};
    for (const s of list) counts[s.status] = (counts[s.status] || 0) + 1;
    mount(sessionsBox,
      h('p.muted.small', Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(' · ') || 'none'),
      live.length ? h('table.list',
        h('thead', h('tr', h('th', 'Session'), h('th', 'Status'), h('th', 'Owner'), h('th', 'Age'), h('th', 'Gateway'), h('th', 'CPU'), h('th', 'Memory'))),
        h('tbody', live.map((s) => {
          const r = res.get(s.id);
          return h('tr', { 'data-session': s.id },
            h('td', h('a.mono', { href: '#/s/' + s.id }, s.id)), h('td', badge(s.status)), h('td', s.owner || '—'),
            h('td', s.created ? age(s.created) : '—'), h('td.muted', s.gateway || '—'),
            h('td', { 'data-cpu': '' }, r ? `${r.cpu.toFixed(1)} %` : '—'), h('td', { 'data-mem': '' }, r ? bytes(r.rss) : '—'));
        }))) : h('div.empty', h('p', 'No running sessions.')));
  }

  // CPU and memory come from each sandbox (/runtime/{id}/server_info), sampled every 10 s.
  async function sample() {
    const ready = lastList.filter((s) => s.status === 'READY').slice(0, 50);
    await Promise.all(ready.map(async (s) => {
      try {
        const r = await api(`/runtime/${q(s.id)}/server_info`);
        res.set(s.id, { cpu: r.resources?.cpu_percent ?? 0, rss: r.resources?.memory?.rss ?? 0 });
      } catch { res.delete(s.id); }
    }));
    if (!gone) { renderSessions(lastList); resTimer = setTimeout(sample, RES_MS); }
  }

  function renderPool(pool) {
    mount(poolBox, Object.keys(pool || {}).length ? h('table.list.small',
      h('thead', h('tr', h('th', 'Profile'), h('th', 'Ready'), h('th', 'Per gateway'))),
      h('tbody', Object.entries(pool).map(([name, p]) => h('tr', { 'data-profile': name },
        h('td', name), h('td', h('strong', String(p.ready ?? 0))),
        h('td.muted', Object.entries(p.gateways || {}).map(([g, n]) => `${g}: ${n}`).join(', ') || '—')))))
      : h('p.muted', 'No warm pool.'));
  }

  function renderGateways(health) {
    const gws = health?.gateways || [];
    mount(gwBox,
      h('p.small', 'Redis ', health?.redis ? h('span.badge.b-ok', 'up') : h('span.badge.b-bad', 'down'),
        ` · ${health?.live_gateways ?? 0} live · v${health?.version || '?'}`),
      gws.length ? h('table.list.small',
        h('thead', h('tr', h('th', 'Gateway'), h('th', 'State'), h('th', 'Sessions'), h('th', 'Last beat'))),
        h('tbody', gws.map((g) => h('tr', { 'data-gateway': g.id },
          h('td.mono', g.id), h('td', g.alive ? h('span.badge.b-ok', 'alive') : h('span.badge.b-bad', 'gone')),
          h('td', String(g.sessions ?? 0)), h('td.muted', g.last_beat ? `${age(g.last_beat)} ago` : '—')))))
        : h('p.muted', 'No gateway has reported.'));
  }

  tick().then(() => sample());
  return () => { gone = true; clearTimeout(timer); clearTimeout(resTimer); };
}
