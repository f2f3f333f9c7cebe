// The agent view's cards for the plugins' actions (issue 20): run_ipython (the cell, its
// streamed output, the images it displayed) and browse / browse_interactive (the url, the
// screenshot, the page text or accessibility listing, the action's error). Only data:image/png
// URLs are shown as images: the observation comes from the sandbox and is trusted with nothing
// else.
import { h } from '../lib/dom.js';

const PNG = /^data:image\/png;base64,[A-Za-z0-9+/=]+$/;

/** Whether this module draws the observation of that kind. */
// (a browse_interactive's observation is a "browse" one, as upstream's BrowserOutputObservation)
export const isPluginObservation = (kind) => kind === 'run_ipython' || kind === 'browse';

/** The one-line summary of a plugin action (null: not one). */
export function pluginSummary(a) {
  const args = a?.args || {};
  switch (a?.action) {
    case 'run_ipython': return String(args.code ?? '').split('\n')[0] + (String(args.code ?? '').includes('\n') ? ' …' : '');
    case 'browse': return String(args.url ?? '');
    case 'browse_interactive': return String(args.browser_actions ?? '').replace(/\s+/g, ' ');
    default: return null;
  }
}

// (the kernel's base64 may end with a newline)
const image = (src, alt, cls) => {
  const url = typeof src === 'string' ? src.replace(/\s+/g, '') : '';
  return PNG.test(url) ? h('img', { class: cls, src: url, alt }) : null;
};

/**
 * The observation's parts for the card's foot. shown: characters of output already streamed
 * into the card (a cell's text arrives as output events; its observation repeats it).
 * Returns {parts, bad, badge, output}: output is text to put in the card's output area.
 */
export function pluginObservation(o, shown, max) {
  const ex = o.extras || {};
  const content = String(o.content ?? '');
  if (o.observation === 'run_ipython') {
    const urls = Array.isArray(ex.image_urls) ? ex.image_urls : [];
    // The cell's own text streamed as output; what the observation adds is the Jupyter lines.
    const extra = content.split('\n').filter((l) => /^\[Jupyter (current working directory|Python interpreter): /.test(l));
    const bad = /Traceback|Error:|\[Execution timed out|\[The IPython kernel died/.test(content);
    return {
      bad,
      badge: bad ? 'ipython error' : 'ipython',
      output: shown ? '' : content.split('\n').filter((l) => !extra.includes(l)).join('\n').slice(0, max),
      parts: [
        urls.length ? h('div.images', urls.map((u, i) => image(u, `cell image ${i + 1}`, 'cell-image'))) : null,
        ...extra.map((l) => h('div.muted.small', l)),
      ],
    };
  }
  const err = ex.error ? String(ex.last_browser_action_error || content) : '';
  const text = content.replace(/^\[Current URL: [^\]\n]*\]\n/, '');
  return {
    bad: Boolean(ex.error),
    badge: ex.error ? 'browse error' : 'page',
    output: '',
    parts: [
      h('div.browse-url', h('span.muted.small', 'url '), h('code', String(ex.url || ''))),
      err ? h('pre.output.obs.error', err.slice(0, max)) : null,
      image(ex.screenshot, `screenshot of ${ex.url || 'the page'}`, 'screenshot'),
      h('details', { open: !ex.error },
        h('summary', ex.trigger_by_action === 'browse_interactive' ? 'accessibility tree' : 'page text'),
        h('pre.output.obs.page', text.slice(0, max))),
    ],
  };
}
