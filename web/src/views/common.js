// Pieces several views share: status badges and the session action buttons.
import { control } from '../lib/control.js';
import { h, mount, toast } from '../lib/dom.js';

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

// Sessions whose Delete was pressed and neither confirmed nor cancelled yet: the question stays
// when a view draws its buttons again (the views poll every few seconds), and so does the
// keyboard on it.
const asking = new Set();

/** Pause/Resume and Delete for one session; onDone() after a change. Empty for viewers. Delete
 * asks in place ("Delete s-…? Delete / Cancel"; Escape cancels), not with confirm(). */
export function sessionButtons(s, me, onDone, { compact = false } = {}) {
  if (!me.canWrite || s.status === 'STOPPED') return [];
  const box = h('span.session-buttons', { 'data-session-buttons': s.id });
  const focusedHere = !!document.activeElement?.closest?.(`[data-session-buttons="${s.id}"]`);
  const draw = (focus) => {
    mount(box, asking.has(s.id) ? question() : buttons());
    if (focus) box.querySelector(focus)?.focus();
  };
  function buttons() {
    const pause = s.status === 'PAUSED'
      ? h('button', { 'data-action': 'resume', title: 'Thaw the sandbox: processes continue where they were' }, 'Resume')
      : h('button', { 'data-action': 'pause', title: 'Freeze the sandbox: processes keep their state', disabled: s.status !== 'READY' }, 'Pause');
    const del = h('button.danger', { 'data-action': 'delete', title: 'Stop the session and remove its sandbox' }, compact ? 'Delete' : 'Delete session');
    pause.onclick = async () => {
      const m = s.status === 'PAUSED' ? 'session.resume' : 'session.pause';
      if (await act([pause, del], m === 'session.pause' ? 'Pause' : 'Resume', m, { session: s.id })) onDone();
    };
    del.onclick = () => { asking.add(s.id); draw('[data-action=confirm-delete]'); };
    return [pause, del];
  }
  function question() {
    const no = h('button', { 'data-action': 'cancel-delete', onclick: () => { asking.delete(s.id); draw('[data-action=delete]'); } }, 'Cancel');
    const yes = h('button.danger', {
      'data-action': 'confirm-delete',
      onclick: async () => {
        if (await act([yes, no], 'Delete', 'session.delete', { session: s.id })) { asking.delete(s.id); onDone(); }
      },
    }, 'Delete');
    return h('span.ask', {
      role: 'group', 'aria-label': `delete ${s.id}?`,
      onkeydown: (e) => { if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); no.click(); } },
    }, h('span.small', compact ? 'Delete it?' : `Delete ${s.id}? Its sandbox and everything in /workspace go away.`), yes, no);
  }
  draw();
  // drawn again by a poll while the keyboard was on it: it stays there (once this is attached)
  if (focusedHere) queueMicrotask(() => box.querySelector(asking.has(s.id) ? '[data-action=confirm-delete]' : 'button')?.focus());
  return [box];
}
