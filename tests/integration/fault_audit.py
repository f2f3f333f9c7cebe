"""Audits for the fault suite: what a client received and what Redis stored, compared with what
the command printed. Counts, never a single pass/fail, so a soak can report figures:

  lost      expected output lines missing (not covered by a truncated event giving a byte count)
  dup       output lines seen more than once, and lines nobody printed (garbled by a byte gap)
  disorder  output lines out of order
  seq_gap   sequence numbers skipped (live stream, stored history)
  seq_dup   sequence numbers seen twice or going back (live stream)
  reused    one sequence number with two different contents (live vs stored/replayed)
  wrong_exit  observation missing, wrong exit code, or without the command text
  stuck     no observation within the bound (a client would wait forever)
  lies      a session's status disagrees between places, or says READY while actions are
            refused (or not READY while they run)
  extra_status  status events beyond the one a dead sandbox deserves after gateway restarts
  truncated bytes a `truncated` event declared dropped (visible, not lost)
"""
import base64
import json

COUNTS = ("lost", "dup", "disorder", "seq_gap", "seq_dup", "reused", "wrong_exit", "stuck", "lies",
          "extra_status")


def new_counts():
    return {k: 0 for k in COUNTS + ("truncated",)}


def add(total, part):
    for k, v in part.items():
        if isinstance(v, int):
            total[k] = total.get(k, 0) + v
    return total


def failures(c):
    """The counts that must be 0."""
    return {k: c[k] for k in COUNTS if c.get(k)}


def output_bytes(events, action):
    out = bytearray()
    for e in events:
        if e.get("type") == "output" and e.get("action") == action:
            if "data_b64" in e:
                out += base64.b64decode(e["data_b64"])
            else:
                out += e.get("data", "").encode()
    return bytes(out)


def offset_gaps(events, action):
    """Where output events carry `offset` (the byte offset of their first byte in the action's
    output): [(seq, expected offset, offset)] for each event that does not start where the one
    before ended. Diagnosis only: the lines say what was lost."""
    gaps, want = [], None
    for e in events:
        if e.get("type") != "output" or e.get("action") != action or "offset" not in e:
            continue
        n = len(base64.b64decode(e["data_b64"])) if "data_b64" in e else len(e.get("data", "").encode())
        if want is not None and e["offset"] != want:
            gaps.append((e["seq"], want, e["offset"]))
        want = e["offset"] + n
    return gaps


def declared_truncation(events, action, obs_seq):
    """Bytes dropped as declared by truncated events of this action's span. A truncated event
    without a byte count (`bytes` or `dropped_bytes`) declares nothing: what it hid is lost."""
    n = 0
    for e in events:
        if e.get("type") != "truncated" or not (action < e.get("seq", 0) < (obs_seq or 1 << 62)):
            continue
        for k in ("bytes", "dropped_bytes"):
            if isinstance(e.get(k), int):
                n += e[k]
                break
    return n


def audit_lines(data, expected, truncated_bytes=0):
    """Compares printed lines with the expected ones (distinct lines, in order)."""
    c = new_counts()
    index = {line: i for i, line in enumerate(expected)}
    got = data.decode("utf-8", "replace").split("\n")
    if got and got[-1] == "":
        got.pop()
    seen, last = {}, -1
    for line in got:
        i = index.get(line)
        if i is None:
            c["dup"] += 1  # a line nobody printed: bytes lost mid-line, or garbage
            continue
        seen[i] = seen.get(i, 0) + 1
        if seen[i] > 1:
            c["dup"] += 1
        elif i < last:
            c["disorder"] += 1
        last = max(last, i)
    missing = [expected[i] for i in range(len(expected)) if i not in seen]
    missing_bytes = sum(len(m) + 1 for m in missing)
    if missing and truncated_bytes and missing_bytes <= truncated_bytes + 4096:
        c["truncated"] = truncated_bytes  # declared, visible: not lost
    else:
        c["lost"] = len(missing)
        c["truncated"] = truncated_bytes
    return c


def audit_seqs(events):
    """Sequence numbers of events in the order a client received them: +1 each time."""
    c = new_counts()
    prev = None
    for e in events:
        s = e.get("seq")
        if prev is not None:
            if s <= prev:
                c["seq_dup"] += 1
                continue
            c["seq_gap"] += s - prev - 1
        prev = s
    return c


def audit_consistency(live, *others):
    """Events seen live against the same seqs elsewhere (stored, replayed): same content.
    Returns (counts, the first differing pair)."""
    c, first = new_counts(), None
    for other in others:
        by_seq = {e["seq"]: e for e in other if e}
        for e in live:
            o = by_seq.get(e["seq"])
            if o is not None and o != e:
                c["reused"] += 1
                first = first or (e, o)
    return c, first


def find(events, type_, action):
    for e in events:
        if e.get("type") == type_ and e.get("action") == action:
            return e
    return None


def audit_observation(obs_event, command, exit_code):
    c = new_counts()
    if obs_event is None:
        c["stuck"] = 1
        c["wrong_exit"] = 1
        return c
    o = obs_event.get("observation", {})
    extras = o.get("extras", {})
    code = extras.get("metadata", {}).get("exit_code")
    if code != exit_code or extras.get("command") != command:
        c["wrong_exit"] = 1
    return c


def audit_run(live, stored, action, command, expected, exit_code=0, replay=None, rest=None):
    """Everything about one action: lines in the live view and in the stored history (and the
    REST history when given), seqs of both, same content everywhere (live, stored, replayed on
    a fresh WebSocket, REST), the observation. Returns (counts, notes)."""
    notes = []
    c = new_counts()
    obs = find(live, "observation", action)
    add(c, audit_observation(obs, command, exit_code))
    if obs is not None and c["wrong_exit"]:
        o = obs["observation"]
        notes.append("observation: exit %r command %r content %r" % (
            o.get("extras", {}).get("metadata", {}).get("exit_code"), o.get("extras", {}).get("command"),
            str(o.get("content", ""))[:120]))
    obs_seq = obs["seq"] if obs else None
    live_lines = audit_lines(output_bytes(live, action), expected,
                             declared_truncation(live, action, obs_seq))
    stored_events = [e for _, e in stored if e]
    stored_obs = find(stored_events, "observation", action)
    stored_lines = audit_lines(output_bytes(stored_events, action), expected,
                               declared_truncation(stored_events, action, stored_obs and stored_obs["seq"]))
    rest_lines = new_counts()
    if rest is None:
        notes.append("REST history unavailable")
        rest_lines["lost"] = len(expected)
    else:
        rest_obs = find(rest, "observation", action)
        rest_lines = audit_lines(output_bytes(rest, action), expected,
                                 declared_truncation(rest, action, rest_obs and rest_obs["seq"]))
    # the worst view: a line a client got but Redis lost is lost all the same
    for k in ("lost", "dup", "disorder", "truncated"):
        c[k] += max(live_lines[k], stored_lines[k], rest_lines[k])
    if live_lines["lost"] or stored_lines["lost"] or rest_lines["lost"]:
        notes.append(f"lines lost: live {live_lines['lost']}, stored {stored_lines['lost']}, "
                     f"REST {rest_lines['lost']} of {len(expected)}")
    if c["lost"] or c["dup"] or c["disorder"]:  # where: offsets and truncated events, for the fix
        for name, view in (("live", live), ("stored", stored_events)):
            gaps = offset_gaps(view, action)
            if gaps:
                notes.append(f"{name} offset gaps (seq, expected, got): {gaps[:5]}")
        trunc = [e for e in stored_events if e.get("type") == "truncated"]
        if trunc:
            notes.append(f"truncated events: {json.dumps(trunc[:3])[:300]}")
    if stored_obs is None and obs is not None:
        notes.append("observation missing from the stored history")
        c["lost"] += 1
    add(c, audit_seqs(live))
    stored_seq = new_counts()
    ids = [s for s, _ in stored]
    for a, b in zip(ids, ids[1:]):
        stored_seq["seq_gap"] += max(0, b - a - 1)
    for s, e in stored:
        if e is None or e.get("seq") != s:
            stored_seq["reused"] += 1  # an entry whose id and content disagree
    c["seq_gap"] = max(c["seq_gap"], stored_seq["seq_gap"])
    c["reused"] += stored_seq["reused"]
    cc, first = audit_consistency(live, stored_events, *[v for v in (replay, rest) if v])
    add(c, cc)
    if first:
        a, b = (json.dumps(x)[:160] for x in first)
        notes.append(f"{cc['reused']} seqs differ, e.g. live {a} vs {b}")
    return c, notes


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def fmt_times(values):
    if not values:
        return "-"
    return f"p50 {pct(values, 50):.2f}s max {max(values):.2f}s (n={len(values)})"


def dumps(c):
    return json.dumps({k: v for k, v in c.items() if v}, sort_keys=True)


def numbered(n, fmt="{}"):
    return [fmt.format(i) for i in range(1, n + 1)]

