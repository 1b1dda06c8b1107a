// The FX graph view: the graphs dynamo/AOT/Inductor passed along; post-grad nodes grouped by the kernel
// that computes them (collapsed into one box each on large graphs).
import { h } from "../dom.js";
import { buildFx } from "../dot.js";
import { GraphCanvas } from "../graphview.js";

function create(ctx) {
  const { store, model } = ctx;
  const sel = h("select", { class: "il-fxgraph", "aria-label": "FX graph" });
  const host = h("div", { class: "il-graph", "data-role": "fx-pane" });
  const hint = h("span", { class: "il-muted", "data-role": "fx-hint" });
  const el = h(
    "div",
    { class: "il-view", "data-view": "fx" },
    h("div", { class: "il-subbar" }, "graph ", sel, hint),
    host,
  );
  const canvas = new GraphCanvas(host, (it) => onItem(it), { embedded: ctx.embedded });
  ctx.on(sel, "change", () => store.set({ fxGraph: sel.value }));
  let token = 0,
    built = null,
    drawnKey = "";
  const opened = new Set();
  let clicked = false;

  function onItem(it) {
    if (!it) return;
    if (it.type === "fx") store.set({ fxFocus: it.name, selected: it.fused || store.get().selected });
    else if (it.type === "kgroup") {
      model.fxExpandedFor(store.get().compileId).add(it.fused);
      drawnKey = "";
      store.set({ selected: it.fused });
      draw();
    } else if (it.type === "cluster") {
      clicked = it.fused !== store.get().selected; // the user clicked the frame they see: the view stays put
      store.set({ selected: it.fused });
    }
  }

  async function draw() {
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    const my = ++token;
    const graphs = Object.keys((ix && ix.compile.graphs) || {});
    sel.replaceChildren(...graphs.map((g) => h("option", { value: g }, g)));
    if (!graphs.length) {
      canvas.viewport.replaceChildren();
      ctx.message(host, "No FX graph was recorded for this compile.");
      return;
    }
    const gname = graphs.includes(s.fxGraph) ? s.fxGraph : graphs.includes("post_grad") ? "post_grad" : graphs[0];
    sel.value = gname;
    // only the post-grad graph's nodes map to kernels (the graph Inductor scheduled): the others are drawn as they are
    hint.textContent =
      gname === "post_grad"
        ? " nodes are grouped by the kernel that computes them; click one to select its kernel"
        : " as dynamo and AOT autograd passed it on, before Inductor's passes: its nodes are not grouped by kernel (the post_grad graph's are)";
    const exp = model.fxExpandedFor(s.compileId);
    if (s.selected) exp.add(s.selected);
    const b = buildFx(ix, gname, exp);
    await ctx.layoutIn(
      host,
      b.dot,
      `${b.items.size} nodes`,
      () => my === token,
      (layout) => drawLaidOut(s, gname, b, layout),
    );
  }

  /** Draw the laid-out graph (synchronous: a print draws it in its beforeprint). */
  function drawLaidOut(s, gname, b, layout) {
    built = b;
    canvas.draw(layout, b.items, b.edges, b.clusters, (g, it) => {
      if (it.type === "fx") {
        g.dataset.fx = it.name;
        if (it.fused) g.dataset.fusedNode = it.fused;
      }
      if (it.type === "kgroup") {
        g.dataset.fusedNode = it.fused;
        g.dataset.kernel = it.kernel;
      }
    });
    const key = s.compileId + "|fx|" + gname + "|" + b.dot.length;
    if (!opened.has(key)) {
      opened.add(key);
      canvas.open(b.items.keys().next().value);
    }
    marks();
    host.dataset.ready = "1";
  }

  function marks() {
    if (!built) return;
    const s = store.get();
    const ids = [];
    for (const [id, it] of built.items) if (s.selected && it.fused === s.selected) ids.push(id);
    for (const [name, c] of built.clusters) if (s.selected && c.fused === s.selected) ids.push("c:" + name);
    canvas.mark("il-selected", ids);
    const focus = built.keyToId.get("fx:" + s.fxFocus);
    canvas.mark("il-focus", focus ? [focus] : []);
    const here = clicked;
    clicked = false;
    if (s.view !== "fx" || here) return;
    // an op in focus, else the selected kernel's cluster (its left edge and title in view), else its box
    const frame = ids.find((x) => x.startsWith("c:"));
    if (focus) canvas.reveal(focus);
    else if (frame) canvas.revealFrame(frame);
    else if (ids.length) canvas.reveal(ids[0]);
  }

  return {
    el,
    canvas,
    update(s, changed, active) {
      if (changed.has("compileId")) {
        built = null;
        drawnKey = "";
      }
      // a selection hidden in a collapsed kernel box: redraw with it expanded
      if (changed.has("selected") && s.selected && built && built.keyToId.has("k:" + s.selected)) drawnKey = "";
      const key = s.compileId + "|" + s.fxGraph;
      if (active && key !== drawnKey) {
        drawnKey = key;
        draw();
        return;
      }
      if (changed.has("selected") || changed.has("fxFocus") || changed.has("view")) marks();
    },
    destroy() {
      canvas.destroy();
    },
  };
}

export default { id: "fx", label: "FX", title: "the FX graphs, each op grouped by its kernel (2)", create };
