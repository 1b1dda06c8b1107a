// Keyboard: ↑/↓ or j/k previous/next kernel in execution order, Shift+arrows (and ←/→) pan the graph,
// / search, f fit, +/- zoom, 1-9 the views in registration order, Esc clears the selection (with nothing to clear,
// Esc is left to the host: the widget hands the focus back to its notebook cell, index.js).
const PAN = 80;

export function installKeys(ctx, views, searchInput) {
  const { store, model } = ctx;
  ctx.on(ctx.root, "keydown", (e) => {
    const tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea" || e.ctrlKey || e.metaKey || e.altKey) return;
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    const canvas = ctx.canvas();
    const step = (d) => {
      const list = ix ? ix.boxes : [];
      if (!list.length) return;
      const cur = list.findIndex((n) => n.name === s.selected);
      const i = cur >= 0 ? Math.min(list.length - 1, Math.max(0, cur + d)) : d > 0 ? 0 : list.length - 1;
      ctx.actions.select(list[i].name);
    };
    const pan = (dx, dy) => canvas && canvas.panBy(dx, dy);
    let act = null;
    if (e.shiftKey && e.key.startsWith("Arrow")) {
      act = {
        ArrowLeft: () => pan(PAN, 0),
        ArrowRight: () => pan(-PAN, 0),
        ArrowUp: () => pan(0, PAN),
        ArrowDown: () => pan(0, -PAN),
      }[e.key];
    } else {
      const keys = {
        ArrowDown: () => step(1),
        j: () => step(1),
        ArrowUp: () => step(-1),
        k: () => step(-1),
        ArrowLeft: () => pan(PAN, 0),
        ArrowRight: () => pan(-PAN, 0),
        "/": () => searchInput.focus(),
        f: () => canvas && canvas.fit(),
        "+": () => canvas && canvas.zoomBy(1.25),
        "=": () => canvas && canvas.zoomBy(1.25),
        "-": () => canvas && canvas.zoomBy(0.8),
      };
      if (s.selected || s.sourceLine || (s.highlighted && s.highlighted.length))
        keys.Escape = () => store.set({ selected: "", sourceLine: "", highlighted: [] });
      act = keys[e.key];
      if (!act && /^[1-9]$/.test(e.key) && views[+e.key - 1]) act = () => store.set({ view: views[+e.key - 1].id });
    }
    if (act) {
      act();
      e.preventDefault();
      e.stopPropagation();
    }
  });
}
