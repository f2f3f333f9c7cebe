// Pieces several views share: status badges and the session action buttons.
import { control } from '../lib/control.js';
import { h, toast } from '../lib/dom.js';

const KIND = {
  READY: 'ok', RUNNING: 'ok', PAUSED: 'warn', STARTING: 'info', CREATING: 'info',
  STOPPED: 'off', ERROR: 'bad', ERROR_RUNTIME_DISCONNECTED: 'bad',
};

export function badge(status) {
  const s = String(status || 'UNKNOWN');
  return h('span.badge', { class: 'b-' + (KIND[s] || 'info'), 'data-status': s, title: s }, s.replace(/_/g, ' '));
}

/** Runs a control call with the buttons disabled, reporting a failure as a toast. */
export async function act(buttons, what, method, params) {
  for (const b of buttons) b.disabled = true;
  try {
    return await control.call(method, params);
  } catch (e) {
    toast(`${what} failed: ${e.message}`, 'error');
    return null;
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

/** Pause/Resume and Delete for one session; onDone() after a change. Empty for viewers. */
export function sessionButtons(s, me, onDone, { compact = false } = {}) {
  if (!me.canWrite || s.status === 'STOPPED') return [];
  const out = [];
  const pause = s.status === 'PAUSED'
    ? h('button', { 'data-action': 'resume', title: 'Thaw the sandbox: processes continue where they were' }, 'Resume')
    : h('button', { 'data-action': 'pause', title: 'Freeze the sandbox: processes keep their state', disabled: s.status !== 'READY' }, 'Pause');
  const del = h('button.danger', { 'data-action': 'delete', title: 'Stop the session and remove its sandbox' }, compact ? 'Delete' : 'Delete session');
  pause.onclick = async () => {
    const m = s.status === 'PAUSED' ? 'session.resume' : 'session.pause';
    if (await act([pause, del], m === 'session.pause' ? 'Pause' : 'Resume', m, { session: s.id })) onDone();
  };
  del.onclick = async () => {
    if (!confirm(`Delete ${s.id}? Its sandbox and everything in /workspace go away.`)) return;
    if (await act([pause, del], 'Delete', 'session.delete', { session: s.id })) onDone();
  };
  out.push(pause, del);
  return out;
}
