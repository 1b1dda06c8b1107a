// The lens: one store, four views (fusion, fx, timeline, roofline), a side panel, a toolbar.
// createLens(el, options) works anywhere (widget, standalone page); it returns {store, destroy}.
import { h } from "./dom.js";
import { indexCompile, initialExpansion, resolveSelection, search, hasProfile, fmtShare, plural, sharedKernel, frameLabel, KINDS } from "./data.js";
import { buildFusion, buildFx } from "./dot.js";
import { GraphCanvas } from "./graphview.js";
import { renderPanel } from "./panel.js";
import { renderTimeline } from "./timeline.js";
import { renderRoofline, hasRoofline, nodePeakFractions, peakColour } from "./roofline.js";

export const VIEWS = ["fusion", "fx", "timeline", "roofline"];
const VIEW_LABELS = { fusion: "Fusion graph", fx: "FX graph", timeline: "Timeline", roofline: "Roofline" };
/** Above this many fused nodes, the fusion graph starts collapsed by nn.Module. */
export const COLLAPSE_LIMIT = 60;
/** How fusion boxes are coloured: by kernel kind, by measured time share (needs a profile), or by the
 * fraction of the hardware's peak each kernel reaches (needs a profile with costs and device peaks). */
export const COLOUR_MODES = ["kind", "time", "peak"];

function mark(name) {
  try { performance.mark(name); } catch (e) { /* no performance API */ }
}

/** A minimal observable store: set(patch) notifies subscribers with the changed keys. */
export function createStore(state) {
  const subs = new Set();
  return {
    get: () => state,
    set(patch) {
      const changed = Object.keys(patch).filter((k) => state[k] !== patch[k]);
      if (!changed.length) return;
      state = { ...state, ...patch };
      for (const fn of subs) fn(state, new Set(changed));
    },
    subscribe(fn) { subs.add(fn); return () => subs.delete(fn); },
  };
}

/**
 * Mount the lens into `el`.
 * @param {HTMLElement} el
 * @param {{report: object, initial?: object, engine: () => Promise<LayoutEngine>,
 *          exportHtml?: () => Promise<{filename: string, bytes: Uint8Array}>}} opts
 */
export function createLens(el, opts) {
  const report = opts.report;
  const compiles = report.compiles || [];
  const indexes = new Map();
  const idxOf = (id) => {
    if (!indexes.has(id)) { const c = compiles.find((x) => x.id === id); if (c) indexes.set(id, indexCompile(c)); }
    return indexes.get(id);
  };
  const init = opts.initial || {};
  const firstId = compiles.length ? compiles[0].id : "";
  const startId = compiles.some((c) => c.id === init.compileId) ? init.compileId : firstId;
  const profiled = hasProfile(report);
  const rooflined = hasRoofline(report);
  const store = createStore({
    compileId: startId,
    view: VIEWS.includes(init.view) ? init.view : "fusion",
    selected: "",
    fxGraph: "",
    fxFocus: "",
    query: "",
    colourBy: profiled && COLOUR_MODES.includes(init.colourBy) && (init.colourBy !== "peak" || rooflined) ? init.colourBy : profiled ? "time" : "kind",
  });
  const expandedBy = new Map();  // compile id -> Set(module) expanded in the fusion view
  const fxExpandedBy = new Map();
  const expandedFor = (id) => {
    if (!expandedBy.has(id)) { const ix = idxOf(id); expandedBy.set(id, initialExpansion(ix ? ix.fused : [], COLLAPSE_LIMIT)); }
    return expandedBy.get(id);
  };
  const fxExpandedFor = (id) => { if (!fxExpandedBy.has(id)) fxExpandedBy.set(id, new Set()); return fxExpandedBy.get(id); };
  const ac = new AbortController();
  const on = (target, type, fn, o = {}) => target.addEventListener(type, fn, { signal: ac.signal, ...o });
  let alive = true;

  // ---- DOM --------------------------------------------------------------------------------
  const tabs = VIEWS.map((v) => h("button", { class: "il-tab", type: "button", "data-tab": v, role: "tab" }, VIEW_LABELS[v]));
  const compileSel = h("select", { class: "il-compile", "aria-label": "compile", title: "which graph compilation to show" },
    compiles.map((c) => {
      const t = c.trigger || {};
      const frame = c.frame && !String(c.id).includes(c.frame) ? " · " + frameLabel(c) : "";
      return h("option", { value: c.id, title: `${c.id}${c.frame ? " · " + frameLabel(c) : ""}\ncompiled on ${t.kind || "?"}${t.reason ? ": " + t.reason : ""}` },
        `${c.id}${frame} · ${plural((c.fused_nodes || []).length, "fused node")}`);
    }));
  const searchInput = h("input", { class: "il-search-input", type: "search", placeholder: "search kernel, op, file:line  (/)", title: "search fused nodes, kernels, FX ops, buffers, modules and source lines (/)", "aria-label": "search", spellcheck: "false" });
  const results = h("ul", { class: "il-results", hidden: true, role: "listbox" });
  const btn = (label, title, fn, cls = "") => { const b = h("button", { class: "il-btn " + cls, type: "button", title }, label); on(b, "click", fn); return b; };
  const exportBtn = opts.exportHtml ? btn("Export HTML", "download this report as one self-contained HTML page", () => doExport(), "il-export") : null;
  const status = h("span", { class: "il-status", "aria-live": "polite" });
  const toolbar = h("div", { class: "il-toolbar" },
    h("div", { class: "il-tabs", role: "tablist" }, tabs),
    compileSel,
    h("div", { class: "il-search" }, searchInput, results),
    h("span", { class: "il-spacer" }),
    status,
    btn("−", "zoom out (-)", () => canvasFor().zoomBy(1 / 1.25)),
    btn("+", "zoom in (+)", () => canvasFor().zoomBy(1.25)),
    btn("Fit", "fit the graph to the view (f)", () => canvasFor().fit()),
    exportBtn);

  const fusionHost = h("div", { class: "il-graph" });
  const legend = h("div", { class: "il-legend" });
  const fusionView = h("div", { class: "il-view", "data-view": "fusion" }, fusionHost, legend);
  const fxSel = h("select", { class: "il-fxgraph", "aria-label": "FX graph" });
  const fxHost = h("div", { class: "il-graph" });
  const fxView = h("div", { class: "il-view", "data-view": "fx" }, h("div", { class: "il-subbar" }, "graph ", fxSel, h("span", { class: "il-muted" }, " nodes are grouped by the kernel that computes them; click one to select its kernel")), fxHost);
  const tlView = h("div", { class: "il-view il-timeline", "data-view": "timeline" });
  const rfView = h("div", { class: "il-view il-roofline", "data-view": "roofline" });
  const panel = h("aside", { class: "il-panel", "aria-label": "details" });
  const root = h("div", { class: "il-root", tabindex: "0" },
    toolbar,
    h("div", { class: "il-main" }, h("div", { class: "il-stage" }, fusionView, fxView, tlView, rfView), panel));
  el.appendChild(root);

  const fusionCanvas = new GraphCanvas(fusionHost, (it) => onFusionItem(it));
  const fxCanvas = new GraphCanvas(fxHost, (it) => onFxItem(it));
  const canvasFor = () => (store.get().view === "fx" ? fxCanvas : fusionCanvas);

  // ---- actions ------------------------------------------------------------------------------
  function select(name, compileId) {
    const cid = compileId || store.get().compileId;
    const ix = idxOf(cid);
    let fused = ix ? resolveSelection(ix, name) : "";
    if (!fused && name && !compileId) {  // a name from another compile: go there
      for (const c of compiles) {
        const r = resolveSelection(idxOf(c.id), name);
        if (r) { store.set({ compileId: c.id, selected: r }); return; }
      }
    }
    store.set({ compileId: cid, selected: fused });
  }
  function selectIn(compileId, fusedName) {
    if (!compiles.some((c) => c.id === compileId)) return;
    store.set({ compileId, selected: fusedName });
  }
  function onFusionItem(it) {
    if (!it) return;
    if (it.type === "node") select(it.name);
    else if (it.type === "cluster") select(it.fused);
    else if (it.type === "group") {
      expandedFor(store.get().compileId).add(it.module);
      drawFusion();
    }
  }
  function onFxItem(it) {
    if (!it) return;
    if (it.type === "fx") store.set({ fxFocus: it.name, selected: it.fused || store.get().selected });
    else if (it.type === "kgroup") {
      fxExpandedFor(store.get().compileId).add(it.fused);
      store.set({ selected: it.fused });
      drawFx();
    } else if (it.type === "cluster") store.set({ selected: it.fused });
  }
  function focusFx(name) {
    const ix = idxOf(store.get().compileId);
    const owner = ix && ix.fxOwner.get(name);
    if (owner) fxExpandedFor(store.get().compileId).add(owner);
    store.set({ view: "fx", fxGraph: "post_grad" in ((ix && ix.compile.graphs) || {}) ? "post_grad" : store.get().fxGraph, fxFocus: name });
    drawFx();
  }

  async function doExport() {
    status.textContent = "exporting…";
    try {
      const { filename, bytes } = await opts.exportHtml();
      const url = URL.createObjectURL(new Blob([bytes], { type: "text/html" }));
      const a = h("a", { href: url, download: filename });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      status.textContent = `exported ${filename}`;
    } catch (e) {
      status.textContent = `export failed: ${e.message || e}`;
    }
  }

  // ---- drawing ------------------------------------------------------------------------------
  let fusionToken = 0, fxToken = 0;
  let fusionBuilt = null, fxBuilt = null, fusionMaxShare = 0;
  const fitted = new Set();

  /** Lay out `dot` in the worker while `host` says so; null when it failed (said in `host`) or when a newer
   * render (`current()` false) or an unmount made the result stale. */
  async function layoutIn(host, dot, what, current) {
    message(host, `laying out ${what}…`, "il-busy");
    let layout;
    try {
      layout = await (await opts.engine()).layout(dot);
    } catch (e) {
      if (current() && alive) message(host, `layout failed: ${e.message || e}`, "il-error");
      return null;
    }
    if (!current() || !alive) return null;
    message(host, "");
    return layout;
  }

  function message(host, text, cls = "") {
    host.querySelectorAll(".il-message").forEach((m) => m.remove());
    if (text) host.appendChild(h("div", { class: "il-message " + cls }, text));
  }

  async function drawFusion() {
    const s = store.get();
    const ix = idxOf(s.compileId);
    const token = ++fusionToken;
    legend.replaceChildren();
    if (!ix) { message(fusionHost, "This report has no compiles: nothing was compiled while capturing."); return; }
    if (!ix.fused.length) { message(fusionHost, "This compile produced no fused nodes."); return; }
    const built = buildFusion(ix, expandedFor(s.compileId));
    const layout = await layoutIn(fusionHost, built.dot, `${built.items.size} boxes`, () => token === fusionToken);
    if (!layout) return;
    mark("il:layout");
    fusionBuilt = built;
    // heat for "colour by time": relative to the longest visible box, square-root scaled so that
    // short kernels stay distinguishable; the exact share is on the box and in the panel
    let maxShare = 0;
    for (const it of built.items.values()) if (it.share != null) maxShare = Math.max(maxShare, it.share);
    const peaks = rooflined ? nodePeakFractions(ix.compile) : new Map();
    fusionCanvas.draw(layout, built.items, built.edges, built.clusters, (g, it) => {
      if (it.type === "node") { g.dataset.node = it.name; g.dataset.kernel = it.kernel; }
      if (it.type === "group") { g.dataset.module = it.module; g.dataset.count = String(it.members.length); }
      if (it.buffer) g.dataset.buffer = it.buffer;
      const pf = it.type === "node" ? peaks.get(it.name) : undefined;
      if (pf != null) { g.dataset.peakFraction = pf.toFixed(4); g.style.setProperty("--peak-colour", peakColour(pf)); }
      if (it.share != null) {
        g.dataset.share = it.share.toFixed(4);
        g.style.setProperty("--heat", `${(6 + 72 * Math.sqrt(maxShare > 0 ? it.share / maxShare : 0)).toFixed(1)}%`);
      }
    });
    fusionMaxShare = maxShare;
    root.dataset.layoutMs = String(Math.round(layout.ms));
    root.dataset.boxes = String(built.items.size);
    status.textContent = plural(ix.fused.length, "fused node");
    status.title = `${plural(built.items.size, "box", "boxes")} shown · laid out in ${Math.round(layout.ms)} ms`;
    drawLegend();
    const key = s.compileId + "|" + built.dot.length;
    if (!fitted.has(key)) { fitted.add(key); fusionCanvas.open(built.keyToId.get("node:" + ix.fused[0].name)); }
    markFusion();
    fusionHost.dataset.ready = "1";
    mark("il:interactive");
    prefetchLayouts();
  }

  // Once the first graph is up, lay out the other compiles' fusion graphs in the worker while the
  // user reads: switching to the backward graph then hits the layout cache.
  let prefetched = false;
  function prefetchLayouts() {
    if (prefetched || compiles.length < 2) return;
    prefetched = true;
    const queue = compiles.map((c) => c.id).filter((id) => id !== store.get().compileId);
    const next = async () => {
      const id = queue.shift();
      if (!id || !alive) return;
      try {
        const ix = idxOf(id);
        if (ix && ix.fused.length) await (await opts.engine()).layout(buildFusion(ix, expandedFor(id)).dot);
      } catch (e) { /* a failed prefetch only loses the head start */ }
      setTimeout(next, 0);
    };
    setTimeout(next, 50);
  }

  function drawLegend() {
    const s = store.get();
    const ix = idxOf(s.compileId);
    const parts = [];
    if (profiled) {
      const modeBtn = (m) => {
        const b = h("button", { class: "il-seg" + (s.colourBy === m ? " il-active" : ""), type: "button", "data-colour": m, "aria-pressed": String(s.colourBy === m),
          title: { time: "colour boxes by their share of the measured device time", kind: "colour boxes by kernel kind", peak: "colour boxes by the fraction of the hardware's peak each kernel reaches (memory or compute roof)" }[m] }, m);
        on(b, "click", () => store.set({ colourBy: m }));
        return b;
      };
      parts.push(h("span", { class: "il-colour-by", "data-role": "colour-by" }, "colour by ", h("span", { class: "il-segs" }, COLOUR_MODES.filter((m) => m !== "peak" || rooflined).map(modeBtn))));
    }
    if (profiled && s.colourBy === "peak") {
      parts.push(h("span", { class: "il-legend-item il-heat-legend", "data-role": "peak-legend" }, h("i", { class: "il-rf-swatch", style: `background:${peakColour(0)}` }), "0%", h("i", { class: "il-rf-swatch", style: `background:${peakColour(0.5)}` }), "50%", h("i", { class: "il-rf-swatch", style: `background:${peakColour(1)}` }), "100% of peak (grey: unknown)"));
    } else if (profiled && s.colourBy === "time") {
      parts.push(h("span", { class: "il-legend-item il-heat-legend" }, "0%", h("i", { class: "il-heat-scale" }), `${fmtShare(fusionMaxShare)} of device time`));
    } else if (ix) {
      const kinds = [...new Set(ix.fused.map((n) => n.kind))].sort((a, b) => KINDS.indexOf(a) - KINDS.indexOf(b));
      parts.push(...kinds.map((k) => h("span", { class: `il-legend-item kind-${k}` }, h("i", {}), k)));
    }
    legend.replaceChildren(...parts);
  }

  function showColour() {
    const c = store.get().colourBy;
    root.classList.toggle("il-by-time", c === "time");
    root.classList.toggle("il-by-peak", c === "peak");
    root.dataset.colourBy = c;
  }

  function markFusion() {
    if (!fusionBuilt) return;
    const s = store.get();
    const id = fusionBuilt.keyToId.get("node:" + s.selected);
    fusionCanvas.mark("il-selected", id ? [id] : []);
    const ix = idxOf(s.compileId);
    fusionCanvas.mark("il-sibling", s.selected ? sharedKernel(ix, s.selected).map((x) => fusionBuilt.keyToId.get("node:" + x.name)).filter((x) => x && x !== id) : []);
    const matches = s.query ? search({ compiles: [ix.compile] }, s.query, 500).flatMap((x) => x.fusedAll.map((f) => fusionBuilt.keyToId.get("node:" + f))).filter(Boolean) : [];
    fusionCanvas.mark("il-match", matches);
    if (id && s.view === "fusion") fusionCanvas.reveal(id);
  }

  async function drawFx() {
    const s = store.get();
    const ix = idxOf(s.compileId);
    const token = ++fxToken;
    const graphs = Object.keys((ix && ix.compile.graphs) || {});
    fxSel.replaceChildren(...graphs.map((g) => h("option", { value: g }, g)));
    if (!graphs.length) { fxCanvas.viewport.replaceChildren(); message(fxHost, "No FX graph was recorded for this compile."); return; }
    const gname = graphs.includes(s.fxGraph) ? s.fxGraph : graphs.includes("post_grad") ? "post_grad" : graphs[0];
    fxSel.value = gname;
    const exp = fxExpandedFor(s.compileId);
    if (s.selected) exp.add(s.selected);
    const built = buildFx(ix, gname, exp);
    const layout = await layoutIn(fxHost, built.dot, `${built.items.size} nodes`, () => token === fxToken);
    if (!layout) return;
    fxBuilt = built;
    fxCanvas.draw(layout, built.items, built.edges, built.clusters, (g, it) => {
      if (it.type === "fx") { g.dataset.fx = it.name; if (it.fused) g.dataset.fusedNode = it.fused; }
      if (it.type === "kgroup") { g.dataset.fusedNode = it.fused; g.dataset.kernel = it.kernel; }
    });
    const key = s.compileId + "|fx|" + gname + "|" + built.dot.length;
    if (!fitted.has(key)) { fitted.add(key); fxCanvas.open(built.items.keys().next().value); }
    markFx();
    fxHost.dataset.ready = "1";
  }

  function markFx() {
    if (!fxBuilt) return;
    const s = store.get();
    const sel = [];
    for (const [id, it] of fxBuilt.items) if (s.selected && it.fused === s.selected) sel.push(id);
    for (const [name, c] of fxBuilt.clusters) if (s.selected && c.fused === s.selected) sel.push("c:" + name);
    fxCanvas.mark("il-selected", sel);
    const focus = fxBuilt.keyToId.get("fx:" + s.fxFocus);
    fxCanvas.mark("il-focus", focus ? [focus] : []);
    if (s.view === "fx") {
      if (focus) fxCanvas.reveal(focus);
      else if (sel.length) fxCanvas.reveal(sel.find((x) => !x.startsWith("c:")) || sel[0]);
    }
  }

  function drawPanel() {
    const s = store.get();
    const ix = idxOf(s.compileId);
    if (!ix) { panel.replaceChildren(h("p", { class: "il-muted" }, "Nothing was compiled while this report was captured.")); return; }
    renderPanel(panel, ix, s.selected, { select: (n) => select(n), selectIn, focusFx }, report);
    panel.scrollTop = 0;
  }

  function drawTimeline() {
    renderTimeline(tlView, report, store.get().compileId, (id) => store.set({ compileId: id, selected: "" }));
  }

  function showView() {
    const v = store.get().view;
    for (const t of tabs) { t.classList.toggle("il-active", t.dataset.tab === v); t.setAttribute("aria-selected", String(t.dataset.tab === v)); }
    fusionView.hidden = v !== "fusion";
    fxView.hidden = v !== "fx";
    tlView.hidden = v !== "timeline";
    rfView.hidden = v !== "roofline";
    root.dataset.activeView = v;
  }

  function ensureVisible() {  // expand the modules that hide the selected node
    const s = store.get();
    const ix = idxOf(s.compileId);
    const e = ix && ix.byName.get(s.selected);
    if (!e) return false;
    const exp = expandedFor(s.compileId);
    let grew = false;
    for (const m of e.node.module_stack || []) if (!exp.has(m)) { exp.add(m); grew = true; }
    return grew;
  }

  const drawn = { fx: null, timeline: null, roofline: false };
  function markRoofline() {
    const s = store.get();
    const ix = idxOf(s.compileId);
    const e = ix && ix.byName.get(s.selected);
    for (const d of rfView.querySelectorAll('[data-role="roofline-dot"]')) {
      d.classList.toggle("il-selected", !!e && d.dataset.compile === s.compileId && d.dataset.kernel === e.node.kernel);
    }
  }
  function drawActive(changed) {
    const s = store.get();
    if (s.view === "fx" && (drawn.fx !== s.compileId + "|" + s.fxGraph || changed.has("fxGraph"))) { drawn.fx = s.compileId + "|" + s.fxGraph; drawFx(); }
    if (s.view === "timeline" && drawn.timeline !== s.compileId) { drawn.timeline = s.compileId; drawTimeline(); }
    if (s.view === "roofline" && !drawn.roofline) { drawn.roofline = true; renderRoofline(rfView, report, (id, fused) => selectIn(id, fused)); markRoofline(); }
  }

  store.subscribe((s, changed) => {
    if (!alive) return;
    if (changed.has("view")) showView();
    if (changed.has("compileId")) {
      compileSel.value = s.compileId;
      compileSel.title = compileSel.selectedOptions.length ? compileSel.selectedOptions[0].title : "";
      results.hidden = true;  // its rows were picked for the previous compile's view
      fusionBuilt = null; fxBuilt = null; drawn.fx = null;
      if (s.selected && !idxOf(s.compileId).byName.has(s.selected)) store.set({ selected: "" });
      ensureVisible();
      drawFusion();
    }
    if (changed.has("selected")) {
      root.dataset.selected = s.selected;
      drawPanel();
      if (!changed.has("compileId") && ensureVisible()) drawFusion(); else markFusion();
      if (s.selected && fxBuilt && !fxExpandedFor(s.compileId).has(s.selected) && fxBuilt.keyToId.has("k:" + s.selected)) { drawn.fx = null; }
      markFx();
    } else if (changed.has("compileId")) drawPanel();
    if (changed.has("fxFocus")) markFx();
    if (changed.has("query")) { markFusion(); }
    if (changed.has("colourBy")) { showColour(); drawLegend(); }
    if (changed.has("selected") || changed.has("compileId")) markRoofline();
    drawActive(changed);
  });

  // ---- events -------------------------------------------------------------------------------
  for (const t of tabs) on(t, "click", () => store.set({ view: t.dataset.tab }));
  on(compileSel, "change", () => store.set({ compileId: compileSel.value, selected: "" }));
  on(fxSel, "change", () => store.set({ fxGraph: fxSel.value }));
  let hits = [];
  function showResults() {
    const s = store.get();
    hits = search(report, s.query, 30);
    results.replaceChildren(...hits.map((x, i) => {
      // where it goes: the kernel's name (a fused node's id like op0_op1_op2 means little), its
      // position, the compile; a row that stands for many fused nodes says how many
      const where = x.kernel || x.fused;
      const li = h("li", { role: "option", "data-index": String(i), "data-fused": x.fused, "data-count": String(x.count), title: `${x.label}\n→ ${where} (fused node ${x.fused}, #${x.index}) in ${x.compileId}${x.count > 1 ? `\nand ${plural(x.count - 1, "other fused node")}: ${x.fusedAll.slice(1, 12).join(", ")}${x.count > 12 ? ", …" : ""}` : ""}` },
        h("span", { class: "il-hit-what" }, x.what), h("span", { class: "il-mono il-hit-label" }, x.label),
        h("span", { class: "il-muted il-hit-where" }, `→ `, h("span", { class: "il-mono" }, where), x.index >= 0 ? ` #${x.index}` : "", compiles.length > 1 ? ` · ${x.compileId}` : ""),
        x.count > 1 ? h("span", { class: "il-hit-count", title: "matches this many fused nodes; Enter or click goes to the first" }, `×${x.count}`) : null);
      on(li, "mousedown", (e) => { e.preventDefault(); choose(x); });
      return li;
    }));
    if (s.query && !hits.length) results.replaceChildren(h("li", { class: "il-muted" }, "no match"));
    results.hidden = !s.query;
  }
  function choose(x) {
    results.hidden = true;
    if (x.compileId !== store.get().compileId) store.set({ compileId: x.compileId, selected: x.fused });
    else select(x.fused);
  }
  on(searchInput, "input", () => { store.set({ query: searchInput.value }); showResults(); });
  on(searchInput, "keydown", (e) => {
    if (e.key === "Enter" && hits.length) { choose(hits[0]); e.preventDefault(); }
    if (e.key === "Escape") { searchInput.value = ""; store.set({ query: "" }); results.hidden = true; root.focus(); }
    e.stopPropagation();
  });
  on(searchInput, "blur", () => setTimeout(() => (results.hidden = true), 150));
  on(searchInput, "focus", () => { if (store.get().query) showResults(); });
  on(root, "keydown", (e) => {
    const tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea" || e.ctrlKey || e.metaKey || e.altKey) return;
    const s = store.get();
    const ix = idxOf(s.compileId);
    const step = (d) => {
      if (!ix || !ix.fused.length) return;
      const cur = ix.byName.get(s.selected);
      const i = cur ? Math.min(ix.fused.length - 1, Math.max(0, cur.index + d)) : d > 0 ? 0 : ix.fused.length - 1;
      select(ix.fused[i].name);
    };
    const keys = {
      ArrowDown: () => step(1), j: () => step(1), ArrowUp: () => step(-1), k: () => step(-1),
      "/": () => searchInput.focus(), f: () => canvasFor().fit(), "+": () => canvasFor().zoomBy(1.25), "=": () => canvasFor().zoomBy(1.25),
      "-": () => canvasFor().zoomBy(0.8), 1: () => store.set({ view: "fusion" }), 2: () => store.set({ view: "fx" }), 3: () => store.set({ view: "timeline" }), 4: () => store.set({ view: "roofline" }),
      Escape: () => store.set({ selected: "" }),
    };
    if (keys[e.key]) { keys[e.key](); e.preventDefault(); e.stopPropagation(); }
  });

  // ---- start --------------------------------------------------------------------------------
  compileSel.value = startId;
  compileSel.title = compileSel.selectedOptions.length ? compileSel.selectedOptions[0].title : "";
  showView();
  showColour();
  const first = init.selected ? (() => { for (const c of [idxOf(startId), ...compiles.map((c) => idxOf(c.id))]) { const r = c && resolveSelection(c, init.selected); if (r) return [c.compile.id, r]; } return null; })() : null;
  if (first) { store.set({ compileId: first[0], selected: first[1] }); }
  ensureVisible();
  root.dataset.selected = store.get().selected;
  drawPanel();
  drawFusion();
  drawActive(new Set());
  if (!compiles.length) message(fusionHost, "This report has no compiles: nothing was compiled while capturing.");

  return {
    store,
    root,
    select,
    selectIn,
    destroy() {
      alive = false;
      ac.abort();
      fusionCanvas.destroy();
      fxCanvas.destroy();
      root.remove();
    },
  };
}
