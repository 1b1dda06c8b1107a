// The resizable split between the views and the panel (drag or arrow keys on the splitter; the size is
// the store's `panelSize`), and the narrow layout: below 760 px the panel goes under the graph.
export const NARROW_PX = 760;

/** Wire the splitter; returns the ResizeObserver that toggles `il-narrow` (the lens disconnects it). */
export function installSplit(ctx, main, panel, splitter) {
  const { store, root } = ctx;
  const narrow = () => root.classList.contains("il-narrow");
  const applySize = () => {
    const px = store.get().panelSize;
    panel.style.flexBasis = px ? `${px}px` : "";
  };
  let drag = null;
  ctx.on(splitter, "pointerdown", (e) => {
    drag = e.pointerId;
    splitter.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  ctx.on(splitter, "pointermove", (e) => {
    if (drag === null) return;
    const r = main.getBoundingClientRect();
    const size = narrow() ? r.bottom - e.clientY : r.right - e.clientX;
    const total = narrow() ? r.height : r.width;
    store.set({ panelSize: Math.round(Math.min(total - 160, Math.max(180, size))) });
  });
  const endDrag = () => {
    drag = null;
  };
  ctx.on(splitter, "pointerup", endDrag);
  ctx.on(splitter, "pointercancel", endDrag);
  ctx.on(splitter, "keydown", (e) => {
    const d = { ArrowLeft: 40, ArrowUp: 40, ArrowRight: -40, ArrowDown: -40 }[e.key];
    if (!d) return;
    store.set({
      panelSize: Math.max(
        180,
        (store.get().panelSize || panel.getBoundingClientRect()[narrow() ? "height" : "width"]) + d,
      ),
    });
    e.preventDefault();
    e.stopPropagation();
  });
  const ro =
    typeof ResizeObserver === "function"
      ? new ResizeObserver(() => {
          const w = root.getBoundingClientRect().width;
          if (w) root.classList.toggle("il-narrow", w < NARROW_PX);
        })
      : null;
  if (ro) ro.observe(root);
  store.subscribe((_s, changed) => {
    if (changed.has("panelSize")) applySize();
  });
  return ro;
}
