// The fusion graph: one box per kernel (fused nodes in execution order), collapsed by nn.Module where the
// whole graph would not fit its pane (fit.js: the deepest module level whose boxes fill one screen), with breadcrumbs of the selection's modules, expand/collapse all, a legend,
// a minimap, and highlights from other views (source lines, search).

import { fmtBytes, fmtShare, KINDS, plural, search, sharedKernel } from "../data.js";
import { h } from "../dom.js";
import { buildFusion } from "../dot.js";
import { openText, paneHeight } from "../fit.js";
import { GraphCanvas, Minimap } from "../graphview.js";
import { prewarmPanel } from "../panel.js";
import { hasRoofline, nodePeakFractions, peakColour } from "../roofline.js";
import { COLOUR_MODES } from "../store.js";

/** The bar above the graph: breadcrumbs, Expand all, Collapse all. */
function fusionBar(ctx) {
  const { model } = ctx;
  const crumbs = h("span", { class: "il-crumbs", "data-role": "breadcrumbs" });
  const button = (action, title, text, on) => {
    const b = h("button", { class: "il-btn il-small-btn", type: "button", "data-action": action, title }, text);
    ctx.on(b, "click", () => model.expandAll(on));
    return b;
  };
  const bar = h(
    "div",
    { class: "il-subbar il-fusion-bar" },
    crumbs,
    h("span", { class: "il-spacer" }),
    button("expand-all", "show every fused node (lays out the whole graph)", "Expand all", true),
    button("collapse-all", "one box per top-level module", "Collapse all", false),
  );
  bar.hidden = !model.compiles.length; // nothing compiled: no modules to open or fold
  return { bar, crumbs };
}

/** Put on a drawn box what tests and styles read: its node, kernel, count, module, buffer, peak and heat. */
function decorateBox(g, it, peaks, maxShare, live) {
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
    if (it.repeat) {
      g.dataset.repeat = String(it.repeat.modules.length);
      g.classList.add("il-repeat");
    }
  }
  if (it.noisy) g.dataset.noisy = String(it.noisy); // kernels whose measured runs disagree (KernelProfile.noisy)
  if (it.buffer) g.dataset.buffer = it.buffer;
  if (it.inPlace) g.dataset.inPlace = "1"; // FusedNode.in_place: the folded corner
  const pf = it.type === "node" ? peaks.get(it.name) : undefined;
  if (pf != null) {
    g.dataset.peakFraction = pf.toFixed(4);
    g.style.setProperty("--peak-colour", peakColour(pf));
  }
  // colour by memory: the most bytes alive once any of its fused nodes has run (Compile.memory.timeline),
  // against the compile's peak
  if (live.peak > 0) {
    const names = it.type === "group" ? it.members : it.members || [it.name];
    let most = null;
    for (const n of names || []) if (live.at.has(n)) most = Math.max(most ?? 0, live.at.get(n));
    if (most != null) {
      g.dataset.liveBytes = String(most);
      g.style.setProperty("--mem-heat", `${(6 + 72 * Math.sqrt(most / live.peak)).toFixed(1)}%`);
    }
  }
  if (it.share != null) {
    g.dataset.share = it.share.toFixed(4);
    g.style.setProperty("--heat", `${(6 + 72 * Math.sqrt(maxShare > 0 ? it.share / maxShare : 0)).toFixed(1)}%`);
  }
}

const COLOUR_TITLES = {
  time: "colour boxes by their share of the measured device time",
  kind: "colour boxes by kernel kind",
  peak: "colour boxes by the fraction of the hardware's peak each kernel reaches (memory or compute roof)",
  memory: "colour boxes by the bytes alive once they have run (the memory timeline), against the compile's peak",
};

/** The legend's parts: the colour-mode buttons (with a profile) and the key of the current colouring. */
function legendParts(ctx, s, ix, maxShare) {
  const parts = [];
  const modes = COLOUR_MODES.filter(
    (m) =>
      (m !== "time" || ctx.profiled) &&
      (m !== "peak" || hasRoofline(ctx.report)) &&
      (m !== "memory" || ctx.report.views.includes("memory")),
  );
  if (modes.length > 1) {
    const modeBtn = (m) => {
      const on = s.colourBy === m;
      const b = h(
        "button",
        {
          class: "il-seg" + (on ? " il-active" : ""),
          type: "button",
          "data-colour": m,
          "aria-pressed": String(on),
          title: COLOUR_TITLES[m],
        },
        m,
      );
      ctx.on(b, "click", () => ctx.store.set({ colourBy: m }));
      return b;
    };
    parts.push(
      h(
        "span",
        { class: "il-colour-by", "data-role": "colour-by" },
        "colour by ",
        h("span", { class: "il-segs" }, modes.map(modeBtn)),
      ),
    );
  }
  const mem = ix && ix.compile.memory;
  if (s.colourBy === "memory" && mem) {
    parts.push(
      h(
        "span",
        { class: "il-legend-item il-heat-legend", "data-role": "memory-legend", title: `peak at ${mem.peak_node}` },
        "0 B",
        h("i", { class: "il-heat-scale il-mem-scale" }),
        `${fmtBytes(mem.peak_bytes)} alive: the peak`,
      ),
    );
  } else if (ctx.profiled && s.colourBy === "peak") {
    const swatch = (f) => h("i", { class: "il-rf-swatch", style: `background:${peakColour(f)}` });
    parts.push(
      h(
        "span",
        { class: "il-legend-item il-heat-legend", "data-role": "peak-legend" },
        swatch(0),
        "0%",
        swatch(0.5),
        "50%",
        swatch(1),
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
    // Inductor's kinds in their order, then a control-flow call's op (FusedNode.box_kind)
    const rank = (k) => (KINDS.includes(k) ? KINDS.indexOf(k) : KINDS.length);
    const kinds = [...new Set(ix.boxes.map((n) => n.box_kind))].sort((a, b) => rank(a) - rank(b));
    parts.push(...kinds.map((k) => h("span", { class: `il-legend-item kind-${k}` }, h("i", {}), k)));
  }
  if (ix && ix.boxes.some((n) => n.in_place))
    parts.push(
      h(
        "span",
        { class: "il-legend-item", "data-role": "in-place-legend" },
        h("i", { class: "il-corner-key" }),
        "writes a tensor in place",
      ),
    );
  return parts;
}

/** Breadcrumbs: the selection's module path; a crumb collapses that module back into one box. */
function crumbParts(ctx, s) {
  const { model } = ctx;
  const ix = model.idxOf(s.compileId);
  const e = ix && ix.byName.get(s.selected);
  const exp = ix ? model.expandedFor(s.compileId) : new Set();
  const parts = [h("span", { class: "il-muted" }, "modules: ")];
  const path = (e && e.node.module_stack) || [];
  if (!path.length) parts.push(h("span", { class: "il-muted", "data-role": "open-modules" }, openText(ix, exp)));
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
  return parts;
}

/** Mark the selection, its kernel's siblings, search matches and highlighted source lines on `built`. */
function markBoxes(canvas, built, s, ix) {
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
  const ids = s.highlighted.map((f) => built.keyToId.get("node:" + f)).filter(Boolean);
  canvas.flag("highlighted", [...new Set(ids.filter((x) => built.items.get(x).type === "node"))]);
  canvas.mark(
    "il-holds-highlight",
    ids.filter((x) => built.items.get(x).type === "group"),
  );
  return { id, matches };
}

/** Run `fn` when the page is idle (within a second at the latest). */
function whenIdle(fn) {
  if (typeof requestIdleCallback === "function") requestIdleCallback(fn, { timeout: 1000 });
  else setTimeout(fn, 200);
}

/** What the lens says once a graph is drawn: boxes and layout times on its root, the status line. */
function sayDrawn(ctx, ix, b, layout) {
  ctx.root.dataset.layoutMs = String(Math.round(layout.ms));
  ctx.root.dataset.layoutWaitMs = String(Math.round(layout.waitMs || 0));
  ctx.root.dataset.boxes = String(b.items.size);
  ctx.setStatus(
    plural(ix.boxes.length, "fused node"),
    `${plural(b.items.size, "box", "boxes")} shown · laid out in ${Math.round(layout.ms)} ms`,
  );
}

/**
 * Lay out and draw the current compile's graph into view `v` ({host, canvas, minimap, token, built,
 * maxShare, opened}); `legend()` draws the legend (a strip below the pane) before the graph opens, which then
 * measures the pane the legend left, `after()` the marks once it is up.
 */
async function drawGraph(ctx, v, legend, after) {
  const { store, model } = ctx;
  const s = store.get();
  const ix = model.idxOf(s.compileId);
  const my = ++v.token;
  if (!ix || !ix.boxes.length) {
    const why = (ctx.report.empty_frames || []).length || (ctx.report.graph_breaks || []).length;
    ctx.message(
      v.host,
      ix
        ? "This compile produced no fused nodes."
        : (ctx.report.nothing || "") + (why ? " The panel beside lists what dynamo did." : ""), // Report.nothing
    );
    return;
  }
  const b = buildFusion(ix, model.expandedFor(s.compileId));
  await ctx.layoutIn(
    v.host,
    b.dot,
    `${b.items.size} boxes`,
    () => my === v.token,
    (layout) => drawLaidOut(ctx, v, { s, ix, b, layout }, legend, after),
  );
}

/** Draw the laid-out graph of drawGraph into view `v` (synchronous: a print draws it in its beforeprint). */
function drawLaidOut(ctx, v, { s, ix, b, layout }, legend, after) {
  const { model } = ctx;
  ctx.mark("il:layout");
  v.built = b;
  v.maxShare = 0;
  for (const it of b.items.values()) if (it.share != null) v.maxShare = Math.max(v.maxShare, it.share);
  const peaks = hasRoofline(ctx.report) ? nodePeakFractions(ix.compile) : new Map();
  const mem = ix.compile.memory;
  const live = {
    peak: mem ? mem.peak_bytes : 0,
    at: new Map((mem ? mem.timeline : []).map((p) => [p.node, p.live_bytes])),
  };
  v.canvas.draw(layout, b.items, b.edges, b.clusters, (g, it) => decorateBox(g, it, peaks, v.maxShare, live));
  sayDrawn(ctx, ix, b, layout);
  legend();
  const key = s.compileId + "|" + b.dot.length;
  const opening = !v.opened.has(key);
  if (opening) {
    v.opened.add(key);
    v.canvas.remeasure(); // the legend's strip may have grown or shrunk the pane since the canvas last measured it
    v.canvas.open(b.keyToId.get("node:" + ix.boxes[0].name));
  }
  v.minimap.draw();
  after(); // the marks and the path bar, which may grow and move the pane's corner the overview sits in
  v.minimap.update(opening);
  v.host.dataset.ready = "1";
  v.host.dataset.drawn = s.compileId; // which compile the pane shows (tests wait on it after a switch)
  ctx.mark("il:interactive");
  if (!v.warmed) {
    v.warmed = true; // the first click costs what later ones do: the panel's code and indexes are made now
    whenIdle(() => v.host.isConnected && prewarmPanel(ix, ctx.report, ctx.root));
  }
  ctx.prefetch((id) => {
    const x = model.idxOf(id);
    return x && x.boxes.length ? buildFusion(x, model.expandedFor(id)).dot : null;
  });
}

function create(ctx) {
  const { store, model } = ctx;
  const { bar, crumbs } = fusionBar(ctx);
  const host = h("div", { class: "il-graph", "data-role": "graph-pane" });
  const legend = h("div", { class: "il-legend" });
  const el = h("div", { class: "il-view", "data-view": "fusion" }, bar, host, legend);
  const canvas = new GraphCanvas(host, (it) => onItem(it), { embedded: ctx.embedded });
  const v = { host, canvas, minimap: new Minimap(host, canvas), token: 0, built: null, maxShare: 0, opened: new Set() };
  model.measureWith(() => paneHeight(host)); // a compile opens with the modules expanded that fill this pane
  let drawnKey = "";

  function onItem(it) {
    if (!it) return;
    if (it.type === "node") ctx.actions.select(it.name);
    else if (it.type === "cluster") ctx.actions.select(it.fused);
    else if (it.type === "group") model.setExpanded(it.module, true);
  }
  function drawLegend() {
    const s = store.get();
    legend.replaceChildren(...legendParts(ctx, s, model.idxOf(s.compileId), v.maxShare));
  }
  function drawCrumbs() {
    crumbs.replaceChildren(...crumbParts(ctx, store.get()));
  }
  /** Mark the boxes; `reveal`: bring the selected box into view; `find`: while a search is typed, bring its first
   * match into view where none shows (Enter still goes to it and selects it). */
  function marks(reveal, find = false) {
    drawCrumbs();
    if (!v.built) return;
    const s = store.get();
    const { id, matches } = markBoxes(canvas, v.built, s, model.idxOf(s.compileId));
    if (s.view !== "fusion") return;
    if (reveal && id) canvas.reveal(id);
    else if (find && matches.length && !matches.some((m) => canvas.shows(m))) canvas.reveal(matches[0]);
  }

  return {
    el,
    canvas,
    update(s, changed, active) {
      const key = s.compileId + "|" + s.expandRev;
      if (key !== drawnKey) {
        if (changed.has("compileId")) v.built = null;
        drawnKey = key;
        drawCrumbs(); // now, not after the layout: the path is known before the boxes are
        legend.replaceChildren();
        drawGraph(ctx, v, drawLegend, () => marks(true));
      } else if (changed.has("selected") || changed.has("query") || changed.has("highlighted") || changed.has("view"))
        marks(changed.has("selected") || (changed.has("view") && active), changed.has("query") && active);
      if (changed.has("colourBy")) drawLegend();
      if (active && changed.has("view")) v.minimap.update();
    },
    destroy() {
      v.minimap.destroy();
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
