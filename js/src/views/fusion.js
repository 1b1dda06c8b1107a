// The fusion graph: one box per kernel (fused nodes in execution order), collapsed by nn.Module past
// COLLAPSE_LIMIT boxes, with breadcrumbs of the selection's modules, expand/collapse all, a legend,
// a minimap, and highlights from other views (source lines, search).

import { fmtShare, KINDS, plural, search, sharedKernel } from "../data.js";
import { h } from "../dom.js";
import { buildFusion } from "../dot.js";
import { GraphCanvas, Minimap } from "../graphview.js";
import { hasRoofline, nodePeakFractions, peakColour } from "../roofline.js";
import { COLOUR_MODES } from "../store.js";

function create(ctx) {
  const { store, model } = ctx;
  const crumbs = h("span", { class: "il-crumbs", "data-role": "breadcrumbs" });
  const expandBtn = h(
    "button",
    {
      class: "il-btn il-small-btn",
      type: "button",
      "data-action": "expand-all",
      title: "show every fused node (lays out the whole graph)",
    },
    "Expand all",
  );
  const collapseBtn = h(
    "button",
    {
      class: "il-btn il-small-btn",
      type: "button",
      "data-action": "collapse-all",
      title: "one box per top-level module",
    },
    "Collapse all",
  );
  ctx.on(expandBtn, "click", () => model.expandAll(true));
  ctx.on(collapseBtn, "click", () => model.expandAll(false));
  const bar = h(
    "div",
    { class: "il-subbar il-fusion-bar" },
    crumbs,
    h("span", { class: "il-spacer" }),
    expandBtn,
    collapseBtn,
  );
  const host = h("div", { class: "il-graph", "data-role": "graph-pane" });
  const legend = h("div", { class: "il-legend" });
  const el = h("div", { class: "il-view", "data-view": "fusion" }, bar, host, legend);
  const canvas = new GraphCanvas(host, (it) => onItem(it));
  const minimap = new Minimap(host, canvas);
  let token = 0,
    built = null,
    maxShare = 0,
    drawnKey = "";
  const opened = new Set();

  function onItem(it) {
    if (!it) return;
    if (it.type === "node") ctx.actions.select(it.name);
    else if (it.type === "cluster") ctx.actions.select(it.fused);
    else if (it.type === "group") model.setExpanded(it.module, true);
  }

  async function draw() {
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    const my = ++token;
    legend.replaceChildren();
    if (!ix) {
      ctx.message(host, "This report has no compiles: nothing was compiled while capturing.");
      return;
    }
    if (!ix.boxes.length) {
      ctx.message(host, "This compile produced no fused nodes.");
      return;
    }
    const b = buildFusion(ix, model.expandedFor(s.compileId));
    const layout = await ctx.layoutIn(host, b.dot, `${b.items.size} boxes`, () => my === token);
    if (!layout) return;
    ctx.mark("il:layout");
    built = b;
    maxShare = 0;
    for (const it of b.items.values()) if (it.share != null) maxShare = Math.max(maxShare, it.share);
    const peaks = hasRoofline(ctx.report) ? nodePeakFractions(ix.compile) : new Map();
    canvas.draw(layout, b.items, b.edges, b.clusters, (g, it) => {
      if (it.type === "node") {
        g.dataset.node = it.name;
        g.dataset.kernel = it.kernel;
        if (it.count > 1) {
          g.dataset.count = String(it.count);
          g.dataset.nodes = it.members.join(" ");
        }
      }
      if (it.type === "group") {
        g.dataset.module = it.module;
        g.dataset.count = String(it.members.length);
      }
      if (it.buffer) g.dataset.buffer = it.buffer;
      const pf = it.type === "node" ? peaks.get(it.name) : undefined;
      if (pf != null) {
        g.dataset.peakFraction = pf.toFixed(4);
        g.style.setProperty("--peak-colour", peakColour(pf));
      }
      if (it.share != null) {
        g.dataset.share = it.share.toFixed(4);
        g.style.setProperty("--heat", `${(6 + 72 * Math.sqrt(maxShare > 0 ? it.share / maxShare : 0)).toFixed(1)}%`);
      }
    });
    ctx.root.dataset.layoutMs = String(Math.round(layout.ms));
    ctx.root.dataset.layoutWaitMs = String(Math.round(layout.waitMs || 0));
    ctx.root.dataset.boxes = String(b.items.size);
    ctx.setStatus(
      plural(ix.boxes.length, "fused node"),
      `${plural(b.items.size, "box", "boxes")} shown · laid out in ${Math.round(layout.ms)} ms`,
    );
    drawLegend();
    const key = s.compileId + "|" + b.dot.length;
    if (!opened.has(key)) {
      opened.add(key);
      canvas.open(b.keyToId.get("node:" + ix.boxes[0].name));
    }
    minimap.draw();
    minimap.update();
    marks(true);
    host.dataset.ready = "1";
    host.dataset.drawn = s.compileId; // which compile the pane shows (tests wait on it after a switch)
    ctx.mark("il:interactive");
    ctx.prefetch((id) => {
      const x = model.idxOf(id);
      return x && x.boxes.length ? buildFusion(x, model.expandedFor(id)).dot : null;
    });
  }

  function drawLegend() {
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    const parts = [];
    if (ctx.profiled) {
      const modeBtn = (m) => {
        const b = h(
          "button",
          {
            class: "il-seg" + (s.colourBy === m ? " il-active" : ""),
            type: "button",
            "data-colour": m,
            "aria-pressed": String(s.colourBy === m),
            title: {
              time: "colour boxes by their share of the measured device time",
              kind: "colour boxes by kernel kind",
              peak: "colour boxes by the fraction of the hardware's peak each kernel reaches (memory or compute roof)",
            }[m],
          },
          m,
        );
        ctx.on(b, "click", () => store.set({ colourBy: m }));
        return b;
      };
      parts.push(
        h(
          "span",
          { class: "il-colour-by", "data-role": "colour-by" },
          "colour by ",
          h(
            "span",
            { class: "il-segs" },
            COLOUR_MODES.filter((m) => m !== "peak" || hasRoofline(ctx.report)).map(modeBtn),
          ),
        ),
      );
    }
    if (ctx.profiled && s.colourBy === "peak") {
      parts.push(
        h(
          "span",
          { class: "il-legend-item il-heat-legend", "data-role": "peak-legend" },
          h("i", { class: "il-rf-swatch", style: `background:${peakColour(0)}` }),
          "0%",
          h("i", { class: "il-rf-swatch", style: `background:${peakColour(0.5)}` }),
          "50%",
          h("i", { class: "il-rf-swatch", style: `background:${peakColour(1)}` }),
          "100% of peak (grey: unknown)",
        ),
      );
    } else if (ctx.profiled && s.colourBy === "time") {
      parts.push(
        h(
          "span",
          { class: "il-legend-item il-heat-legend" },
          "0%",
          h("i", { class: "il-heat-scale" }),
          `${fmtShare(maxShare)} of device time`,
        ),
      );
    } else if (ix) {
      const kinds = [...new Set(ix.boxes.map((n) => n.kind))].sort((a, b) => KINDS.indexOf(a) - KINDS.indexOf(b));
      parts.push(...kinds.map((k) => h("span", { class: `il-legend-item kind-${k}` }, h("i", {}), k)));
    }
    legend.replaceChildren(...parts);
  }

  /** Breadcrumbs: the selection's module path; a crumb collapses that module back into one box. */
  function drawCrumbs() {
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    const e = ix && ix.byName.get(s.selected);
    const exp = ix ? model.expandedFor(s.compileId) : new Set();
    const parts = [h("span", { class: "il-muted" }, "modules: ")];
    const path = (e && e.node.module_stack) || [];
    if (!path.length)
      parts.push(
        h("span", { class: "il-muted" }, ix && exp.size ? plural(exp.size, "module") + " expanded" : "top level"),
      );
    path.forEach((m, i) => {
      if (i) parts.push(h("span", { class: "il-muted" }, " › "));
      const short = i ? m.slice(path[i - 1].length).replace(/^\./, "") || m : m;
      const b = h(
        "button",
        {
          class: "il-link il-crumb",
          type: "button",
          "data-module": m,
          title: exp.has(m) ? `collapse ${m} into one box` : `expand ${m}`,
        },
        short,
      );
      ctx.on(b, "click", () => model.setExpanded(m, !exp.has(m)));
      parts.push(b);
    });
    crumbs.replaceChildren(...parts);
  }

  function marks(reveal) {
    drawCrumbs();
    if (!built) return;
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    const id = built.keyToId.get("node:" + s.selected);
    canvas.mark("il-selected", id ? [id] : []);
    canvas.mark(
      "il-sibling",
      s.selected
        ? sharedKernel(ix, s.selected)
            .map((x) => built.keyToId.get("node:" + x.name))
            .filter((x) => x && x !== id)
        : [],
    );
    const matches = s.query
      ? search({ compiles: [ix.compile] }, s.query, 500)
          .flatMap((x) => x.fusedAll.map((f) => built.keyToId.get("node:" + f)))
          .filter(Boolean)
      : [];
    canvas.mark("il-match", matches);
    const hl = s.highlighted
      .map((f) => built.keyToId.get("node:" + f))
      .filter((x) => x && built.items.get(x).type === "node");
    canvas.flag("highlighted", [...new Set(hl)]);
    canvas.mark(
      "il-holds-highlight",
      s.highlighted.map((f) => built.keyToId.get("node:" + f)).filter((x) => x && built.items.get(x).type === "group"),
    );
    if (reveal && id && s.view === "fusion") canvas.reveal(id);
  }

  return {
    el,
    canvas,
    update(s, changed, active) {
      const key = s.compileId + "|" + s.expandRev;
      if (key !== drawnKey) {
        if (changed.has("compileId")) built = null;
        drawnKey = key;
        drawCrumbs(); // now, not after the layout: the path is known before the boxes are
        draw();
      } else if (changed.has("selected") || changed.has("query") || changed.has("highlighted") || changed.has("view"))
        marks(changed.has("selected") || (changed.has("view") && active));
      if (changed.has("colourBy")) drawLegend();
      if (active && changed.has("view")) minimap.update();
    },
    destroy() {
      minimap.destroy();
      canvas.destroy();
    },
  };
}

export default {
  id: "fusion",
  label: "Fusion",
  title: "the fused kernels Inductor generated, in execution order (1)",
  create,
};
