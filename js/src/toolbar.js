// The toolbar: view tabs (from the registry), the compile selector (identical compiles grouped), search,
// status, zoom and export. It never wraps: controls shrink, and the least useful hide first (CSS).

import { frameLabel, plural } from "./data.js";
import { h } from "./dom.js";
import { sameGraphGroups } from "./viewdata.js";

/** The compile selector's options: one per compile; identical graphs (same_graph_as) follow their first. */
export function compileOptions(compiles) {
  const groups = sameGraphGroups(compiles);
  const byId = new Map(compiles.map((c) => [c.id, c]));
  const out = [];
  for (const [lead, ids] of groups) {
    ids.forEach((id, i) => {
      const c = byId.get(id);
      const t = c.trigger || {};
      // every option names its function, "forward()" too (its name is also a graph kind: it was left out)
      const frame = c.frame || c.frame_label ? " · " + frameLabel(c) : "";
      const why = c.why || ""; // Compile.why, Python's
      const same = i === 0 ? (ids.length > 1 ? ` · ${ids.length} compiles of this graph` : "") : "";
      // a recompile says so in the list (Trigger.kind): "0/1 · f()" read as any other compile until chosen; so does
      // a compile again after torch._dynamo.reset(), whose "#2" a torch.cond branch's id also has
      const again = t.kind === "recompile" ? " · recompile" : t.kind === "after_reset" ? " · after reset" : "";
      const label =
        i === 0
          ? `${c.id}${frame}${again} · ${plural(c.box_count || 0, "fused node")}${same}`
          : `  ↳ ${c.id}${again} · same graph as ${lead}`;
      out.push(
        h(
          "option",
          {
            value: c.id,
            "data-group": lead,
            title: `${c.id}${frame}\ncompiled on ${t.kind || "?"}${why ? ": " + why : ""}`,
          },
          label,
        ),
      );
    });
  }
  return out;
}

export function createToolbar(ctx, views, searchEl) {
  const { store } = ctx;
  const tabs = views.map((v) => {
    const b = h(
      "button",
      { class: "il-tab", type: "button", "data-tab": v.id, role: "tab", title: v.title || v.label },
      v.label,
    );
    ctx.on(b, "click", () => store.set({ view: v.id }));
    return b;
  });
  const compileSel = h(
    "select",
    { class: "il-compile", "aria-label": "compile", title: "which graph compilation to show" },
    compileOptions(ctx.model.compiles),
  );
  ctx.on(compileSel, "change", () => store.set({ compileId: compileSel.value, selected: "" }));
  const btn = (label, title, fn, cls = "") => {
    const b = h("button", { class: "il-btn " + cls, type: "button", title }, label);
    ctx.on(b, "click", fn);
    return b;
  };
  const status = h("span", { class: "il-status", "aria-live": "polite" });
  const zoom = h(
    "span",
    { class: "il-zoom" },
    btn("−", "zoom out (-)", () => ctx.canvas() && ctx.canvas().zoomBy(1 / 1.25)),
    btn("+", "zoom in (+)", () => ctx.canvas() && ctx.canvas().zoomBy(1.25)),
    btn("Fit", "fit the graph to the view (f)", () => ctx.canvas() && ctx.canvas().fit()),
  );
  // nothing compiled (another backend, a skipped frame): no compile to pick, no graph to zoom
  compileSel.hidden = zoom.hidden = !ctx.model.compiles.length;
  const el = h(
    "div",
    { class: "il-toolbar" },
    h("div", { class: "il-tabs", role: "tablist" }, tabs),
    compileSel,
    searchEl,
    h("span", { class: "il-spacer" }),
    status,
    zoom,
    ctx.exportHtml
      ? btn("Export", "download this report as one self-contained HTML page", () => ctx.exportHtml(), "il-export")
      : null,
  );
  const showCompile = (id) => {
    compileSel.value = id;
    compileSel.title = compileSel.selectedOptions.length ? compileSel.selectedOptions[0].title : "";
  };
  const showView = (v) => {
    for (const t of tabs) {
      t.classList.toggle("il-active", t.dataset.tab === v);
      t.setAttribute("aria-selected", String(t.dataset.tab === v));
    }
  };
  showCompile(store.get().compileId);
  showView(store.get().view);
  return {
    el,
    setStatus(text, title = "") {
      status.textContent = text;
      status.title = title;
    },
    update(s, changed) {
      if (changed.has("compileId")) showCompile(s.compileId);
      if (changed.has("view")) showView(s.view);
    },
  };
}
