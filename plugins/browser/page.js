// page.js — evaluated in the page by sandpipe-browser (plugins/browser/main.c): gives every
// element a stable bid (the browsergym_id attribute BrowserGym agents click on; the accessibility
// listing reads it back through Chromium's DOM snapshot, plugins/browser/axtree.c), and returns
// the page's url, its text as markdown and the focused element's bid.
(() => {
  const doc = document;
  let next = Number(doc.documentElement.getAttribute('data-sp-next') || '0');
  for (const el of doc.querySelectorAll('*')) {
    if (el.getAttribute('browsergym_id') === null) el.setAttribute('browsergym_id', String(next++));
  }
  doc.documentElement.setAttribute('data-sp-next', String(next));
  const skip = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link']);
  const hidden = (el) => {
    const s = getComputedStyle(el);
    return s.display === 'none' || s.visibility === 'hidden' || el.hidden;
  };
  const clean = (t) => (t || '').replace(/\s+/g, ' ').trim();
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
  return {url: location.href, title: doc.title,
          text: md.filter((x) => x).join('\n\n') + '\n', focused: focused};
})()
