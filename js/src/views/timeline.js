// The timeline view: torch.compile() calls, each compile's trigger and its phases (../timeline.js draws).
import { h } from "../dom.js";
import { renderTimeline } from "../timeline.js";

export default {
  id: "timeline",
  label: "Timeline",
  title: "when each compile ran, what triggered it, and its phases",
  create(ctx) {
    const el = h("div", { class: "il-view il-timeline", "data-view": "timeline" });
    let drawn = "";
    let stop = () => {};
    const draw = (s) => {
      stop();
      stop = renderTimeline(el, ctx.report, s, {
        selectCompile: (id) => ctx.store.set({ compileId: id, selected: "" }),
        set: (patch) => ctx.store.set(patch),
      });
    };
    return {
      el,
      destroy: () => stop(),
      update(s, _changed, active) {
        const key = [s.compileId, s.showPasses, s.timelineAll].join("|");
        if (active && key !== drawn) {
          drawn = key;
          draw(s);
        }
      },
    };
  },
};
