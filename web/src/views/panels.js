// The session view's panels besides terminals, in tab order: each (id, me) -> a tab
// {key, label, pane, onShow, onStatus, dispose} or null.
export const panels = [];
