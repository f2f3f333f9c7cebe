// The session view's panels besides terminals, in tab order: each (id, me, ctx) -> a tab
// {key, label, pane, onShow, onStatus, dispose} or null. ctx: the session's event log
// (onEvent, onState), events.action/signal to submit, session() the last polled session,
// watchFiles(path, listener) the sandbox's file events (session.js).
import { agentPanel } from './agent.js';
import { filesPanel } from './files.js';
import { previewPanel } from './preview.js';

export const panels = [agentPanel, filesPanel, previewPanel];
