// The admin overview: every session with its status and its sandbox's CPU and memory, the warm
// pool, each gateway's health, and the service's figures (action latency, actions/s, events/s,
// bytes streamed/s) as charts with axes over the last 5 min, 30 min or 6 h: their past is the
// service's (GET /api/v1/metrics/history: the counters every 10 s, kept in Redis), so it is
// there at the first load and after a reload; the newest seconds come from /metrics, read every
// second, until the next copy of the history covers them.
import { api, q } from '../lib/rest.js';
import { h, mount, age, bytes } from '../lib/dom.js';
import { parseProm, sum, p50Between, historyRates } from '../lib/prom.js';
import { badge } from './common.js';

const WINDOW = 5;    // seconds over which the live rates and the latency median are taken
const RES_MS = 10000; // per-session CPU/memory sampling (each sample is a request to the sandbox)
const HISTORY_MS = 10000; // the history is read again this often (the gateways copy every 10 s)
const SPANS = [[300, 'last 5 min'], [1800, 'last 30 min'], [21600, 'last 6 h']];
const SVG = 'http://www.w3.org/2000/svg';

/** A round ceiling for an axis: 1, 2 or 5 times a power of ten at or above x. */
export function niceMax(x) {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= x * 0.999);
}

const spanText = (s) => (s >= 3600 ? `${s / 3600} h` : `${+(s / 60).toFixed(1)} min`);

/** A chart of {t (epoch s), v} points over the last span seconds: time on x, 0 to a round
 * maximum on y, both axes labelled. history: points from the service; live: newer ones. */
function chart(title, unit, fmt) {
  let history = [], live = [], span = 1800;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 100 30');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  const el$ = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    svg.append(e);
    return e;
  };
  for (const y of [1, 15]) el$('line', { class: 'grid', x1: 0, x2: 100, y1: y, y2: y });
  for (const x of [50]) el$('line', { class: 'grid', x1: x, x2: x, y1: 0, y2: 29 });
  el$('line', { class: 'base', x1: 0, x2: 100, y1: 29, y2: 29 });
  const fill = el$('polygon', { class: 'fill' });
  const area = el$('polyline', { class: 'line' });
  const now = h('span.value', '—');
  const yTop = h('span'), yMid = h('span'), xLeft = h('span'), xMid = h('span');
  const el = h('div.chart.card', { 'data-chart': title },
    h('div.row', h('span.muted.small', title), h('div.spacer'), now),
    h('div.plot',
      h('div.y-axis', { 'aria-hidden': 'true' }, yTop, yMid, h('span', '0')), svg,
      h('div'), h('div.x-axis', { 'aria-hidden': 'true' }, xLeft, xMid, h('span', 'now'))),
    h('div.row', h('span.muted.small.unit', unit)));

  function draw() {
    const end = Date.now() / 1000, start = end - span;
    const pts = [...history, ...live].filter((p) => p.t >= start);
    const finite = pts.map((p) => ({ t: p.t, v: Number.isFinite(p.v) ? p.v : 0 }));
    const max = niceMax(Math.max(0, ...finite.map((p) => p.v)));
    const xy = finite.map((p) => `${(((p.t - start) / span) * 100).toFixed(2)},${(29 - (p.v / max) * 28).toFixed(2)}`);
    area.setAttribute('points', xy.join(' '));
    fill.setAttribute('points', xy.length ? `${xy[0].split(',')[0]},29 ${xy.join(' ')} ${xy[xy.length - 1].split(',')[0]},29` : '');
    yTop.textContent = fmt(max);
    yMid.textContent = fmt(max / 2);
    xLeft.textContent = `−${spanText(span)}`;
    xMid.textContent = `−${spanText(span / 2)}`;
    svg.setAttribute('aria-label', `${title} over the last ${spanText(span)}, 0 to ${fmt(max)}`);
    el.dataset.samples = String(pts.length);
    el.dataset.history = String(history.filter((p) => p.t >= start).length);
    el.dataset.oldest = pts.length ? String(pts[0].t) : '';
  }
  return {
    el,
    /** The service's points (replacing the last ones); live points they cover go. */
    setHistory(points) {
      history = points;
      const last = points.length ? points[points.length - 1].t : 0;
      live = live.filter((p) => p.t > last);
      draw();
    },
    push(v) {
      live.push({ t: Date.now() / 1000, v });
      if (live.length > 600) live.shift(); // bounded: the history covers what is older
      now.textContent = Number.isFinite(v) ? fmt(v) : '—';
      draw();
    },
    setSpan(s) { span = s; draw(); },
  };
}

export function adminView(el) {
  let gone = false, timer = null, resTimer = null;
  const samples = []; // the last WINDOW + 1 /metrics samples
  const res = new Map(); // session -> {cpu, rss}
  const charts = {
    latency: chart('action latency p50', 'ms, last 5 s (histogram bucket)', (v) => `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ms`),
    actions: chart('actions/s', 'per second, last 5 s', (v) => v.toFixed(1)),
    events: chart('events/s', 'stored per second', (v) => (v < 10 ? String(+v.toFixed(1)) : v.toFixed(0))),
    output: chart('bytes streamed/s', 'output per second', (v) => `${bytes(v)}/s`),
  };
  let span = 1800, historyTimer = null;
  const spanSelect = h('select.small', {
    'aria-label': 'chart span',
    onchange: () => { span = Number(spanSelect.value); for (const c of Object.values(charts)) c.setSpan(span); readHistory(); },
  }, SPANS.map(([v, label]) => h('option', { value: v, selected: v === span }, label)));
  const sessionsBox = h('div');
  const poolBox = h('div');
  const gwBox = h('div');
  const err = h('p.error.small');
  mount(el, h('section.overview',
    h('div.row.charts-head', h('h2', 'Service'), h('div.spacer'), spanSelect),
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
        charts.events.push((sum(p, 'sandpipe_events_total') - sum(prev, 'sandpipe_events_total')) / dt);
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

  /** The charts' past, from the service (every 10 s); again every HISTORY_MS. */
  async function readHistory() {
    clearTimeout(historyTimer);
    try {
      const r = await api(`/api/v1/metrics/history?seconds=${span}`);
      const rates = historyRates(r);
      for (const [k, c] of Object.entries(charts)) c.setHistory(rates[k]);
    } catch (e) {
      err.textContent = `Cannot read the metrics' history: ${e.message}`;
    }
    if (!gone) historyTimer = setTimeout(readHistory, HISTORY_MS);
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

  readHistory();
  tick().then(() => sample());
  return () => { gone = true; clearTimeout(timer); clearTimeout(resTimer); clearTimeout(historyTimer); };
}
