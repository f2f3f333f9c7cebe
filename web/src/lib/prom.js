// Prometheus text (GET /metrics) into {name: [{labels, value}]}, and the rates between two
// samples that the overview charts; the same rates from the service's history of its counters
// (GET /api/v1/metrics/history).
export function parseProm(text) {
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[3] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    (out[m[1]] ||= []).push({ labels, value: Number(m[4]) });
  }
  return out;
}

export function sum(p, name, filter = () => true) {
  return (p[name] || []).filter((s) => filter(s.labels)).reduce((a, s) => a + s.value, 0);
}

/** The median of the action latencies observed between two samples, from the histogram's
 * bucket deltas (the upper bound of the bucket holding the middle one), in seconds. */
export function p50Between(a, b) {
  const buckets = (p) => new Map((p.sandpipe_action_duration_seconds_bucket || []).map((s) => [s.labels.le, s.value]));
  const ba = buckets(a), bb = buckets(b);
  const les = [...bb.keys()].sort((x, y) => (x === '+Inf') - (y === '+Inf') || Number(x) - Number(y));
  const total = (bb.get('+Inf') ?? 0) - (ba.get('+Inf') ?? 0);
  if (total <= 0) return null;
  for (const le of les) {
    if ((bb.get(le) ?? 0) - (ba.get(le) ?? 0) >= total / 2) return le === '+Inf' ? null : Number(le);
  }
  return null;
}

/** The history's samples ({step, bounds, samples: [{t, action_count, action_buckets, events,
 * output_bytes}]}) as the charts' points, between neighbours: {latency (ms), actions, events,
 * output} each [{t, v}]. A counter that went down (Redis lost it) is a gap (NaN), not a rate. */
export function historyRates({ bounds = [], samples = [] }) {
  const out = { latency: [], actions: [], events: [], output: [] };
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1], b = samples[i], dt = b.t - a.t;
    if (!(dt > 0)) continue;
    const rate = (k) => (b[k] >= a[k] ? (b[k] - a[k]) / dt : NaN);
    const n = b.action_count - a.action_count;
    let p50 = NaN;
    if (n > 0) {
      const k = b.action_buckets.findIndex((c, j) => c - (a.action_buckets[j] ?? 0) >= n / 2);
      if (k >= 0 && k < bounds.length) p50 = bounds[k] * 1000;
    }
    out.latency.push({ t: b.t, v: p50 });
    out.actions.push({ t: b.t, v: rate('action_count') });
    out.events.push({ t: b.t, v: rate('events') });
    out.output.push({ t: b.t, v: rate('output_bytes') });
  }
  return out;
}
