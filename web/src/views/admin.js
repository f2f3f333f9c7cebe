// The admin overview (sessions, pool, gateways, live metrics): the dashboards milestone.
import { h, mount } from '../lib/dom.js';

export function adminView(el) {
  mount(el, h('div.empty', h('p', 'The overview is not built yet.')));
  return () => {};
}
