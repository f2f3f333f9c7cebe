// page.js — evaluated in the page by sandpipe-browser (plugins/browser/main.c): gives every
// element a stable bid (the browsergym_id attribute BrowserGym agents click on), and returns the
// page as the agent sees it: a BrowserGym-style accessibility listing ("[bid] role 'name'",
// indented by depth), the text as markdown, the focused element's bid.
(() => {
  const doc = document;
  let next = Number(doc.documentElement.getAttribute('data-sp-next') || '0');
  const bidOf = (el) => {
    let b = el.getAttribute('browsergym_id');
    if (b === null) {
      b = String(next++);
      el.setAttribute('browsergym_id', b);
    }
    return b;
  };
  const hidden = (el) => {
    const s = getComputedStyle(el);
    return s.display === 'none' || s.visibility === 'hidden' || el.hidden;
  };
  const clean = (t) => (t || '').replace(/\s+/g, ' ').trim();
  const inputRole = (el) => {
    const t = (el.getAttribute('type') || 'text').toLowerCase();
    return {checkbox: 'checkbox', radio: 'radio', submit: 'button', button: 'button',
            reset: 'button', range: 'slider', search: 'searchbox', file: 'button'}[t] || 'textbox';
  };
  const roleOf = (el) => {
    const r = el.getAttribute('role');
    if (r) return r;
    const tag = el.tagName.toLowerCase();
    if (/^h[1-6]$/.test(tag)) return 'heading';
    return {a: el.hasAttribute('href') ? 'link' : 'generic', button: 'button', input: inputRole(el),
            textarea: 'textbox', select: 'combobox', option: 'option', img: 'img', ul: 'list',
            ol: 'list', li: 'listitem', nav: 'navigation', main: 'main', form: 'form',
            table: 'table', tr: 'row', td: 'cell', th: 'columnheader', p: 'paragraph',
            label: 'LabelText', header: 'banner', footer: 'contentinfo', section: 'region',
            article: 'article', dialog: 'dialog'}[tag] || 'generic';
  };
  const nameOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return clean(aria);
    const tag = el.tagName.toLowerCase();
    if (tag === 'img') return clean(el.getAttribute('alt'));
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      if (el.id) {
        const l = doc.querySelector('label[for="' + CSS.escape(el.id) + '"]');
        if (l) return clean(l.textContent);
      }
      if (['submit', 'button', 'reset'].includes((el.type || '').toLowerCase())) return clean(el.value);
      return clean(el.getAttribute('placeholder') || el.getAttribute('name'));
    }
    if (['a', 'button', 'option', 'label', 'li', 'td', 'th'].includes(tag) || /^h[1-6]$/.test(tag))
      return clean(el.textContent);
    return '';
  };
  const clickable = (el) => {
    const tag = el.tagName.toLowerCase();
    return ['a', 'button', 'input', 'select', 'textarea', 'option', 'summary'].includes(tag) ||
        el.hasAttribute('onclick') || el.getAttribute('role') === 'button';
  };
  const lines = [];
  const skip = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link']);
  const walk = (node, depth) => {
    for (const c of node.childNodes) {
      if (c.nodeType === Node.TEXT_NODE) {
        const t = clean(c.textContent);
        const p = c.parentElement;
        if (t && p && !['a', 'button', 'option', 'label', 'li', 'td', 'th', 'textarea', 'title']
                           .includes(p.tagName.toLowerCase()) && !/^H[1-6]$/.test(p.tagName))
          lines.push('\t'.repeat(depth) + "StaticText '" + t + "'");
        continue;
      }
      if (c.nodeType !== Node.ELEMENT_NODE || skip.has(c.tagName.toLowerCase()) || hidden(c)) continue;
      const bid = bidOf(c);
      const role = roleOf(c);
      const name = nameOf(c);
      if (role === 'generic' && !name && !clickable(c)) {
        walk(c, depth);
        continue;
      }
      const props = [];
      if (c === doc.activeElement) props.push('focused');
      if (clickable(c)) props.push('clickable');
      if (c.tagName === 'INPUT' && ['checkbox', 'radio'].includes(c.type)) props.push('checked=' + (c.checked ? "'true'" : "'false'"));
      if (/^H([1-6])$/.test(c.tagName)) props.push('level=' + c.tagName[1]);
      if (c.tagName === 'A' && c.href) props.push("url='" + c.href + "'");
      let line = '\t'.repeat(depth) + '[' + bid + '] ' + role + " '" + name + "'";
      if ((c.tagName === 'INPUT' || c.tagName === 'TEXTAREA') && c.value && inputRole(c) === 'textbox')
        line += ", value='" + c.value + "'";
      if (props.length) line += ', ' + props.join(', ');
      lines.push(line);
      walk(c, depth + 1);
    }
  };
  const rootProps = doc.activeElement === doc.body ? ', focused' : '';
  lines.push("RootWebArea '" + clean(doc.title) + "'" + rootProps);
  if (doc.body) walk(doc.body, 1);
  doc.documentElement.setAttribute('data-sp-next', String(next));

  // The text as markdown, roughly as html2text renders it: blocks on their own lines, links as
  // [text](href), emphasis, list items as "  * ".
  const md = [];
  const blockTags = new Set(['div', 'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li',
    'table', 'thead', 'tbody', 'tr', 'form', 'section', 'article', 'header', 'footer', 'nav',
    'main', 'pre', 'blockquote', 'body', 'dl', 'dt', 'dd', 'fieldset', 'aside', 'figure', 'hr']);
  const inlineOf = (c) => {
    if (c.nodeType === Node.TEXT_NODE) return c.textContent.replace(/\s+/g, ' ');
    if (c.nodeType !== Node.ELEMENT_NODE || skip.has(c.tagName.toLowerCase()) || hidden(c)) return '';
    const tag = c.tagName.toLowerCase();
    const inner = () => Array.from(c.childNodes).map(inlineOf).join('');
    if (tag === 'a' && c.getAttribute('href')) return '[' + clean(inner()) + '](' + c.getAttribute('href') + ')';
    if (tag === 'br') return '\n';
    if (tag === 'strong' || tag === 'b') return '**' + clean(inner()) + '**';
    if (tag === 'em' || tag === 'i') return '_' + clean(inner()) + '_';
    if (tag === 'img') return '![' + clean(c.getAttribute('alt')) + '](' + (c.getAttribute('src') || '') + ')';
    if (tag === 'input') return c.type === 'hidden' ? '' : ' ' + (c.value || '') + ' ';
    return inner();
  };
  const blocks = (el, prefix) => {
    let line = '';
    const flush = () => {
      const t = clean(line);
      if (t) md.push(prefix + t);
      line = '';
    };
    for (const c of el.childNodes) {
      const tag = c.nodeType === Node.ELEMENT_NODE ? c.tagName.toLowerCase() : '';
      if (!blockTags.has(tag)) {
        line += inlineOf(c);
        continue;
      }
      flush();
      if (skip.has(tag) || hidden(c)) continue;
      if (/^h[1-6]$/.test(tag)) md.push('#'.repeat(Number(tag[1])) + ' ' + clean(inlineOf(c)));
      else if (tag === 'li') blocks(c, '  * ');
      else if (tag === 'tr') md.push(Array.from(c.children).map((x) => clean(inlineOf(x))).join(' | '));
      else blocks(c, '');
    }
    flush();
  };
  if (doc.body) blocks(doc.body, '');
  const focused = doc.activeElement && doc.activeElement !== doc.body
      ? doc.activeElement.getAttribute('browsergym_id') || '' : '';
  return {url: location.href, title: doc.title, axtree: lines.join('\n'),
          text: md.filter((x) => x).join('\n\n') + '\n', focused: focused};
})()
