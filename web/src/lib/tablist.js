// The ARIA tablist pattern for a row of tabs (buttons with role=tab in a role=tablist element),
// whatever tabs the row holds at the moment (the session view adds and removes them; the editor
// has one per open file): only the selected tab is in the page's Tab order (roving tabindex),
// Left/Right move to the previous/next tab and select it (wrapping), Home/End to the first and
// last. Enter or Space on a tab is its button's click.

/** Arrow keys on the tabs of list; select(tabButton) selects it (the owner's, as a click). */
export function tablistKeys(list, select) {
  list.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const tabs = [...list.querySelectorAll('[role=tab]')];
    const i = tabs.indexOf(e.target.closest?.('[role=tab]'));
    if (i < 0) return;
    const j = { ArrowRight: (i + 1) % tabs.length, ArrowLeft: (i - 1 + tabs.length) % tabs.length, Home: 0, End: tabs.length - 1 }[e.key];
    if (j === undefined) return;
    e.preventDefault();
    select(tabs[j]);
    tabs[j].focus();
  });
}

/** Marks which tab of tabs (buttons) is selected: aria-selected, and the one Tab reaches. */
export function markSelected(tabs, selected) {
  for (const t of tabs) {
    const on = t === selected;
    t.classList.toggle('active', on);
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
  }
}
