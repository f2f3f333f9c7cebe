// The file editor: CodeMirror 6 with the language picked from the file name, search (Ctrl+F),
// Ctrl+S to save, and the theme following the page's. It keeps Tab for indenting; its way out
// for the keyboard is CodeMirror's own: Escape then Tab (or Ctrl+M, which toggles it). Loaded on demand (the Files tab), so the
// IDE's first paint does not wait for it.
import { EditorState, Compartment } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { syntaxHighlighting, defaultHighlightStyle, bracketMatching, indentOnInput, foldGutter } from '@codemirror/language';
import { oneDark } from '@codemirror/theme-one-dark';
import { javascript } from '@codemirror/lang-javascript';
import { python } from '@codemirror/lang-python';
import { json } from '@codemirror/lang-json';
import { markdown } from '@codemirror/lang-markdown';
import { html } from '@codemirror/lang-html';
import { css } from '@codemirror/lang-css';
import { cpp } from '@codemirror/lang-cpp';

/** The language support for a file name, or [] (plain text). */
export function languageFor(name) {
  const ext = (/\.([^.\/]+)$/.exec(name) || [])[1]?.toLowerCase() || '';
  switch (ext) {
    case 'js': case 'mjs': case 'cjs': case 'jsx': return javascript({ jsx: true });
    case 'ts': case 'tsx': return javascript({ typescript: true, jsx: ext === 'tsx' });
    case 'py': return python();
    case 'json': return json();
    case 'md': case 'markdown': return markdown();
    case 'html': case 'htm': return html();
    case 'css': return css();
    case 'c': case 'h': case 'cc': case 'cpp': case 'hpp': case 'cxx': return cpp();
    default: return [];
  }
}

const lightTheme = EditorView.theme({ '&': { backgroundColor: '#fff' } }, { dark: false });

export function createEditor(parent, { doc, path, readOnly = false, dark = true, onSave, onChange }) {
  const theme = new Compartment();
  let replacing = false; // setText's own change is not the person's edit
  const themeFor = (d) => (d ? oneDark : [lightTheme, syntaxHighlighting(defaultHighlightStyle, { fallback: true })]);
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(), foldGutter(), highlightActiveLineGutter(), highlightActiveLine(), drawSelection(),
        history(), indentOnInput(), bracketMatching(), highlightSelectionMatches(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([
          { key: 'Mod-s', preventDefault: true, run: () => { onSave?.(); return true; } },
          ...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab,
        ]),
        languageFor(path),
        theme.of(themeFor(dark)),
        EditorState.readOnly.of(readOnly),
        EditorView.editable.of(!readOnly),
        EditorView.updateListener.of((u) => { if (u.docChanged && !replacing) onChange?.(); }),
        EditorView.contentAttributes.of({ 'aria-label': `editor: ${path}` }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    /** Replaces the whole text (the file changed on disk), the cursor kept where it can be. */
    setText(text) {
      const head = Math.min(view.state.selection.main.head, text.length);
      replacing = true;
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: head } });
      } finally { replacing = false; }
    },
    /** Puts the cursor at the start of line n (1-based, clamped) and scrolls it to the middle. */
    gotoLine(n) {
      const doc = view.state.doc, line = doc.line(Math.min(Math.max(1, n), doc.lines));
      view.dispatch({ selection: { anchor: line.from }, effects: EditorView.scrollIntoView(line.from, { y: 'center' }) });
    },
    setTheme: (d) => view.dispatch({ effects: theme.reconfigure(themeFor(d)) }),
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
