// The roofline view: one dot per kernel under the device's memory and compute roofs, the unattributed
// remainder and the roll-ups (../roofline.js draws); a click selects the kernel's box everywhere.
import { h } from "../dom.js";
import { renderRoofline } from "../roofline.js";

export default {
  id: "roofline",
  label: "Roofline",
  title: "each kernel's achieved throughput against the hardware's peaks (4)",
  create(ctx) {
    const el = h("div", { class: "il-view il-roofline", "data-view": "roofline" });
    let drawn = false;
    const mark = (s) => {
      const ix = ctx.model.idxOf(s.compileId);
      const e = ix && ix.byName.get(s.selected);
      for (const d of el.querySelectorAll('[data-role="roofline-dot"]')) {
        d.classList.toggle(
          "il-selected",
          !!e && d.dataset.compile === s.compileId && d.dataset.kernel === e.node.kernel,
        );
      }
    };
    return {
      el,
      update(s, changed, active) {
        if (active && !drawn) {
          drawn = true;
          renderRoofline(el, ctx.report, (id, fused) => ctx.store.set({ compileId: id, selected: fused }));
          mark(s);
        } else if (drawn && (changed.has("selected") || changed.has("compileId"))) mark(s);
      },
    };
  },
};
