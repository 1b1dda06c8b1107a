// The compare view: B's fusion graph with A's differences marked, a table of kernel pairs sorted by
// time delta, and both sources of the selected pair side by side. createCompare(el, opts) works in the
// widget and on the standalone page (the shell's compare mode, shell.js); it returns {root, store, state,
// selectPair, selectRow, selectKernel, destroy}. Its one store holds {pair, row, selected}; every part below
// draws from the store and the payload, and a change of the store redraws what depends on it.

import {
  autotuneDetail,
  autotuneNote,
  changeText,
  graphMarks,
  pairLabel,
  partnerKernel,
  rowKernel,
  STATUSES,
  sideBySide,
  sortedRows,
  timeTexts,
} from "./comparedata.js";
import { fmtBytes, fmtUs, indexCompile, plural } from "./data.js";
import { breakable, h } from "./dom.js";
import { buildFusion } from "./dot.js";
import { fittingExpansion, paneHeight } from "./fit.js";
import { GraphCanvas, layoutAwaited } from "./graphview.js";
import { createStore } from "./store.js";

// the words and the unit come from Python (diff.status_words, diff.unit: analysis/diff.py)
const words = (cx) => cx.diff.status_words || {};

function mark(name) {
  try {
    performance.mark(name);
  } catch (_e) {
    /* no performance API */
  }
}

const joinLines = (xs) => xs.join("\n");
const signed = (o) => joinLines([...(o.added || []).map((x) => "+ " + x), ...(o.removed || []).map((x) => "− " + x)]);

/** The toolbar: names of A and B, the compile-pair selector, the kernel chips, status and export. */
function compareToolbar(cx) {
  const { pairs, repA, repB } = cx;
  cx.pairSel = h(
    "select",
    {
      class: "il-compile",
      "aria-label": "compile pair",
      "data-role": "compile-pair",
      title:
        "which pair of compiles to compare (paired by frame, graph kind and order; diff(a, b, pairs=...) overrides)",
    },
    pairs.map((p, i) => h("option", { value: String(i), title: `paired by ${p.paired_by}` }, p.label || pairLabel(p))),
  );
  // the badges count the shown compile pair's kernel launches, as its table and its legend do (drawChips)
  cx.chips = h("span", { class: "il-chips", "data-role": "diff-summary" });
  cx.status = h("span", { class: "il-status", "aria-live": "polite" });
  const exportBtn = cx.exportHtml
    ? h(
        "button",
        { class: "il-btn il-export", type: "button", title: "download this comparison as one HTML page" },
        "Export HTML",
      )
    : null;
  if (exportBtn) cx.on(exportBtn, "click", () => doExport(cx));
  cx.on(cx.pairSel, "change", () => cx.store.set({ pair: Number(cx.pairSel.value), row: -1 }));
  return h(
    "div",
    { class: "il-toolbar" },
    h("strong", {}, "Compare"),
    h(
      "span",
      { class: "il-muted il-dnames", title: "A is the report passed first" },
      `A: ${repA.title || "report A"}  →  B: ${repB.title || "report B"}`,
    ),
    cx.pairSel,
    cx.chips,
    h("span", { class: "il-spacer" }),
    cx.status,
    exportBtn,
  );
}

/** The badges: the shown pair's kernel launches by status (CompileDiff.summary, Python's); merged and split where
 * the pair has any. */
function drawChips(cx) {
  const p = cx.pair();
  const sum = p.summary || {};
  cx.chips.replaceChildren(
    ...STATUSES.filter((s) => (s !== "merged" && s !== "split") || sum[s]).map((s) =>
      h(
        "span",
        {
          class: `il-chip il-dchip il-d-${s}`,
          "data-status": s,
          title: `${cx.diff.unit} ${words(cx)[s]} in ${pairLabel(p)}`,
        },
        `${sum[s] || 0} ${words(cx)[s]}`,
      ),
    ),
  );
}

/** The notes banner (data-role="diff-notes"): what the whole diff should be read with, by code (diff.notes). */
function notesBanner(diff) {
  const notes = diff.notes || [];
  if (!notes.length) return null;
  return h(
    "div",
    { class: "il-diagnostics il-dnotes", "data-role": "diff-notes", role: "note" },
    notes.map((n) => h("div", { "data-code": n.code }, n.message)),
  );
}

/** How a verdict is drawn, by its tone (kernel_time_us.tone, Python's): slower red, faster green, a verdict the
 * times cannot carry (unsure) amber; no verdict muted. */
const TONE_CLASS = { slower: " il-slower", faster: " il-faster", unsure: " il-unsure", same: "" };

/** The verdict (data-role="diff-verdict"): the whole reports' measured kernel time, A against B, as Python says it
 * (diff.kernel_time_us.verdict), or why it is not compared (its why: a side not profiled). */
function verdictBar(diff) {
  const t = diff.kernel_time_us || {};
  const text = t.verdict || t.why;
  if (!text) return null;
  const cls = !t.verdict ? " il-muted" : TONE_CLASS[t.tone] || "";
  // with several compile pairs, the facts bar says the shown pair's: this line is the whole reports'
  const several = (diff.compiles || []).length > 1;
  return h(
    "div",
    { class: "il-subbar il-dverdict" + cls, title: "all compiles of each report" },
    several ? h("span", { class: "il-muted" }, "Whole reports: ") : null,
    h("span", { "data-role": "diff-verdict" }, text),
  );
}

/** The "Δ time" head, with a warning sign where the two sides were timed differently (diff.timing.warning). */
function deltaHead(diff) {
  const warning = (diff.timing || {}).warning;
  if (!warning) return h("th", {}, "Δ time");
  return h(
    "th",
    { title: warning },
    "Δ time ",
    h("span", { class: "il-dwarn", "data-role": "diff-timing-warning", "aria-label": warning }, "⚠"),
  );
}

/** The compare page's DOM: toolbar, verdict, notes, facts bar, B's graph and legend, the table and the sources. */
function compareDom(cx) {
  const toolbar = compareToolbar(cx);
  cx.facts = h("div", { class: "il-subbar il-dfacts", "data-role": "diff-facts" });
  cx.graphHost = h("div", { class: "il-graph" });
  cx.legend = h("div", { class: "il-legend" });
  cx.tbody = h("tbody");
  // the time columns only where both reports were profiled (diff.timed, Python's): else the names get the room
  const heads = ["", "kernel in A", "kernel in B", "what changed", ...(cx.diff.timed ? ["A", "B"] : [])];
  const table = h(
    "table",
    { class: "il-dtable" + (cx.diff.timed ? " il-dtimed" : ""), "data-role": "diff-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        heads.map((t) => h("th", {}, t)),
        cx.diff.timed ? deltaHead(cx.diff) : null,
      ),
    ),
    cx.tbody,
  );
  cx.source = h("div", { class: "il-dsource", "data-role": "diff-source" });
  const view = h(
    "div",
    { class: "il-view il-compare", "data-view": "compare" },
    toolbar,
    verdictBar(cx.diff),
    notesBanner(cx.diff),
    cx.facts,
    h(
      "div",
      { class: "il-main" },
      h("div", { class: "il-stage il-dgraph" }, h("div", { class: "il-view" }, cx.graphHost, cx.legend)),
      h("div", { class: "il-dright" }, h("div", { class: "il-dtable-wrap" }, table), cx.source),
    ),
  );
  return h("div", { class: "il-root il-compare-root", tabindex: "0" }, view);
}

/** The facts bar: how the pair was paired, its kernel time (where the reports have more than one pair: else the
 * verdict above says it), compile times, graph breaks, recompiles, guards. */
function drawFacts(cx) {
  const p = cx.pair();
  const t = p.compile_time_us || {};
  const g = cx.diff.graph_breaks || {},
    r = cx.diff.recompiles || {};
  const bits = [h("span", {}, `paired by ${p.paired_by || "?"}`)];
  const kt = p.kernel_time_us || {};
  if (cx.pairs.length > 1 && (kt.verdict || kt.why))
    bits.push(
      h("span", { "data-role": "diff-kernel-time", class: kt.verdict ? "" : "il-muted" }, kt.verdict || kt.why),
    );
  // the graph inputs whose dtype or layout changed, as Python says it (inputs_text: "inputs: layout contiguous → …")
  if (p.inputs_text) bits.push(h("span", { "data-role": "diff-inputs", class: "il-changed" }, p.inputs_text));
  if (t.a != null && t.b != null) bits.push(h("span", {}, `compile time ${fmtUs(t.a)} → ${fmtUs(t.b)}`));
  bits.push(h("span", { title: signed(g) }, `graph breaks ${g.a ?? "?"} → ${g.b ?? "?"}`));
  bits.push(h("span", { title: signed(r) }, `recompiles ${r.a ?? "?"} → ${r.b ?? "?"}`));
  const cg = p.cudagraphs || {};
  if (cg.a != null || cg.b != null)
    bits.push(
      h(
        "span",
        { "data-role": "diff-cudagraphs", class: cg.changed ? "il-changed" : "" },
        `CUDA graphs ${cg.a ?? "off"} → ${cg.b ?? "off"}`,
      ),
    );
  const m = p.memory || {};
  // a dynamic graph's bytes are at the sizes seen (Memory.sizes_at, Python's words: "at s77=4")
  const at = m.sizes_at || {};
  const bytes = (o, what, role, sized = false) => {
    if (!o || (o.a == null && o.b == null)) return;
    const d = o.delta == null ? "" : ` (${o.delta > 0 ? "+" : o.delta < 0 ? "−" : "±"}${fmtBytes(Math.abs(o.delta))})`;
    const side = (v, s) => (v == null ? "—" : fmtBytes(v) + (sized && s ? ` (${s})` : ""));
    bits.push(h("span", { "data-role": role }, `${what} ${side(o.a, at.a)} → ${side(o.b, at.b)}${d}`));
  };
  bytes(m.peak_bytes, "peak memory", "diff-memory-peak", true);
  bytes(m.saved_bytes, "saved for backward", "diff-memory-saved", true);
  // the part made by the forward, where it moved otherwise than the total (Python's words: saved_by_forward_text)
  if (m.saved_by_forward_text)
    bits.push(h("span", { "data-role": "diff-memory-saved-forward", class: "il-changed" }, m.saved_by_forward_text));
  bytes(m.measured_peak_bytes, "measured peak", "diff-memory-measured");
  const ga = p.guards_added || [],
    gr = p.guards_removed || [];
  const guards = h(
    "details",
    { class: "il-dguards", "data-role": "diff-guards" },
    h("summary", {}, `guards: ${ga.length} added, ${gr.length} removed`),
    h(
      "pre",
      { class: "il-code" },
      joinLines([...ga.map((x) => "+ " + x), ...gr.map((x) => "- " + x)]) || "no difference",
    ),
  );
  cx.facts.replaceChildren(...bits.flatMap((b) => [b, h("span", { class: "il-muted" }, " · ")]), guards);
}

/** A kernel cell: the name, and which of its launches where the kernel is called more than once (Python's). A
 * merged (split) launch has none of its own on the other side: its cell names, muted, the launch its ops are in. */
function kernelCell(name, launch, partner, side) {
  const title = launch ? `${name} (${launch})` : name || "";
  if (!name && partner)
    return h(
      "td",
      {
        class: "il-mono il-dkernel il-muted",
        "data-role": "diff-partner",
        title: side === "b" ? `its ops run in B's ${partner}` : `its ops ran in A's ${partner}`,
      },
      side === "b" ? "→ " : "← ",
      breakable(partner),
    );
  return h(
    "td",
    { class: "il-mono il-dkernel", title },
    launch ? h("span", { class: "il-dlaunch", "data-role": "diff-launch" }, launch) : null,
    name ? breakable(name) : "—",
  );
}

/** One table row (data-role="diff-row"): status, both kernels, what changed, both times, the delta. */
function tableRow(cx, r) {
  const d = r.time_delta_us;
  const tr = h(
    "tr",
    {
      "data-role": "diff-row",
      "data-status": r.status,
      "data-kernel": rowKernel(r),
      "data-index": String(r.index),
      class: `il-d-${r.status}`,
      tabindex: "0",
    },
    h("td", {}, h("span", { class: `il-chip il-dchip il-d-${r.status}` }, words(cx)[r.status])),
    kernelCell(r.a, r.launch_a, partnerKernel(r, "a"), "a"),
    kernelCell(r.b, r.launch_b, partnerKernel(r, "b"), "b"),
    h(
      "td",
      { class: "il-dwhat" },
      changeText(r),
      // B's autotuning against A's measurement of the library kernel it replaced (KernelDiff.autotune_vs_a)
      autotuneNote(r) ? h("div", { class: "il-dnote", "data-role": "diff-autotune-note" }, autotuneNote(r)) : null,
    ),
    cx.diff.timed
      ? [
          h("td", { class: "il-num" }, timeTexts(r).a),
          h("td", { class: "il-num" }, timeTexts(r).b),
          h(
            "td",
            { class: "il-num il-ddelta" + (d > 0 ? " il-slower" : d < 0 ? " il-faster" : "") },
            timeTexts(r).delta,
          ),
        ]
      : null,
  );
  cx.on(tr, "click", () => cx.selectRow(r.index));
  cx.on(tr, "keydown", (e) => {
    if (e.key === "Enter") cx.selectRow(r.index);
  });
  return tr;
}

function drawTable(cx) {
  cx.rows = sortedRows(cx.pair());
  if (!cx.rows.length)
    cx.tbody.replaceChildren(
      h("tr", {}, h("td", { colspan: "7", class: "il-muted" }, `no ${cx.diff.unit} in this pair`)),
    );
  else cx.tbody.replaceChildren(...cx.rows.map((r) => tableRow(cx, r)));
}

/** Both kernels' sources of the selected row, side by side, lines paired by Python's source diff. */
function drawSource(cx) {
  const r = cx.rows.find((x) => x.index === cx.store.get().row);
  if (!r) {
    cx.source.replaceChildren(h("p", { class: "il-muted" }, "Click a row for both kernels' sources, side by side."));
    return;
  }
  const p = cx.pair();
  // a merged (split) launch beside the launch its ops are in on the other side (Python's source_diff pairs them)
  const nameA = r.a || partnerKernel(r, "a"),
    nameB = r.b || partnerKernel(r, "b");
  const ka = nameA ? kernelIn(cx.repA, p.a, nameA) : null;
  const kb = nameB ? kernelIn(cx.repB, p.b, nameB) : null;
  const lines = sideBySide(ka ? ka.source : null, kb ? kb.source : null, r.source_diff);
  const col = (side, k) =>
    h(
      "div",
      { class: "il-dcol", "data-side": side },
      h(
        "div",
        { class: "il-dhead il-mono", title: k ? k.name : "" },
        `${side.toUpperCase()}: ${k ? k.name : "(none)"}`,
      ),
      lines.map((ln) => {
        const x = ln[side];
        return h(
          "div",
          { class: `il-dline il-d-${x ? ln.tag : "gap"}`, "data-line": x ? String(x.n) : "" },
          h("span", { class: "il-dno" }, x ? String(x.n) : ""),
          h("span", { class: "il-dtext" }, x ? x.text : ""),
        );
      }),
    );
  const note = r.similarity != null ? `similarity ${r.similarity}` : "";
  cx.source.replaceChildren(
    h(
      "div",
      { class: "il-dsrc-head" },
      h("strong", {}, words(cx)[r.status]),
      " ",
      changeText(r),
      note ? h("span", { class: "il-muted" }, ` (${note})`) : null,
      autotuneDetail(r) ? h("div", { "data-role": "diff-autotune-detail" }, autotuneDetail(r)) : null,
    ),
    h("div", { class: "il-dsrc-cols" }, col("a", ka), col("b", kb)),
  );
}

/** The legend under the graph: the pair's kernel launches added, changed, removed (CompileDiff.summary); split
 * (boxed as changed) and merged (no box of their own: their ops are in a changed box) where the pair has any. */
function graphLegend(cx, p) {
  const sum = p.summary || {},
    w = words(cx);
  return [
    h("span", { class: "il-legend-item il-d-only_b" }, h("i", {}), `${w.only_b} ${sum.only_b || 0}`),
    h("span", { class: "il-legend-item il-d-changed" }, h("i", {}), `${w.changed} ${sum.changed || 0}`),
    sum.split
      ? h(
          "span",
          { class: "il-legend-item il-d-changed", title: `${cx.diff.unit} of B split off one of A: boxed as changed` },
          h("i", {}),
          `${w.split} ${sum.split}`,
        )
      : null,
    sum.merged
      ? h(
          "span",
          {
            class: "il-legend-item il-d-merged",
            title: `${cx.diff.unit} of A whose ops all run in one launch of B now, a changed box: see the table`,
          },
          h("i", {}),
          `${w.merged} ${sum.merged} (table)`,
        )
      : null,
    h(
      "span",
      {
        class: "il-legend-item il-d-only_a",
        title: `${cx.diff.unit} only in A have no box in B's graph: see the table`,
      },
      h("i", {}),
      `${w.only_a} ${sum.only_a || 0} (table)`,
    ),
    h("span", { class: "il-muted" }, p.b ? `graph of B (${p.b})` : `graph of A (${p.a}): not in B`),
  ].filter(Boolean);
}

/** Put the difference of each box on it (data-diff); a module box takes its members' strongest. */
function decorateDiff(g, it, marks) {
  if (it.type === "node") {
    g.dataset.node = it.name;
    g.dataset.kernel = it.kernel;
    if (marks.has(it.name)) g.dataset.diff = marks.get(it.name);
  }
  if (it.type === "group") {
    const m = (it.members || []).map((x) => marks.get(x)).filter(Boolean);
    if (m.length) g.dataset.diff = m.includes("changed") ? "changed" : m[0];
  }
}

/** Lay out and draw B's graph of the pair (A's where B has none), opened at a readable zoom like the lens. */
async function drawGraph(cx) {
  const p = cx.pair();
  const c = p.b ? compileOf(cx.repB, p.b) : compileOf(cx.repA, p.a);
  const my = ++cx.token;
  cx.built = null;
  cx.canvas.viewport.replaceChildren();
  cx.legend.replaceChildren();
  if (!c || !(c.fused_nodes || []).length) {
    message(cx, c ? "This compile has no fused nodes." : "No compile on either side.");
    return;
  }
  const ix = indexCompile(c);
  const b = buildFusion(ix, fittingExpansion(ix.fused, paneHeight(cx.graphHost), ix.compile));
  message(cx, `laying out ${plural(b.items.size, "box", "boxes")}…`);
  const marks = p.b ? graphMarks(p) : new Map(ix.fused.map((n) => [n.name, "removed"]));
  // through layoutAwaited, like the lens's graphs: a print while the layout is pending draws the graph, not "laying out…"
  try {
    await layoutAwaited(
      Promise.resolve().then(() => cx.engine()),
      b.dot,
      () => my === cx.token && cx.alive,
      (layout) => {
        message(cx, "");
        cx.canvas.draw(layout, b.items, b.edges, b.clusters, (g, it) => decorateDiff(g, it, marks));
        cx.built = b;
        cx.legend.replaceChildren(...graphLegend(cx, p));
        // like the lens (graphview.js openingView): its first rows at zoom 0.8 to 1, its left edge in view
        cx.canvas.remeasure(); // the legend's strip may have grown or shrunk the pane since the canvas last measured it
        cx.canvas.open(b.keyToId.get("node:" + ix.fused[0].name));
        markGraph(cx);
        cx.graphHost.dataset.ready = "1";
        mark("il:interactive");
      },
    );
  } catch (e) {
    message(cx, `layout failed: ${e.message || e}`);
  }
}

function message(cx, text) {
  cx.graphHost.querySelectorAll(".il-message").forEach((m) => m.remove());
  if (text) cx.graphHost.appendChild(h("div", { class: "il-message" }, text));
}

function markGraph(cx) {
  if (!cx.built) return;
  const r = cx.rows.find((x) => x.index === cx.store.get().row);
  const fused = (r && (cx.pair().b ? r.fused_b : r.fused_a)) || [];
  const ids = fused.map((f) => cx.built.keyToId.get("node:" + f)).filter((id) => id != null);
  cx.canvas.mark("il-selected", ids);
  if (ids.length) cx.canvas.reveal(ids[0]);
}

async function doExport(cx) {
  cx.status.textContent = "exporting…";
  try {
    const { filename, parts } = await cx.exportHtml();
    const url = URL.createObjectURL(new Blob(parts, { type: "text/html" }));
    const a = h("a", { href: url, download: filename });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    cx.status.textContent = `exported ${filename}`;
  } catch (e) {
    cx.status.textContent = `export failed: ${e.message || e}`;
  }
}

const compileOf = (rep, id) => (rep.compiles || []).find((c) => c.id === id) || null;
function kernelIn(rep, cid, name) {
  const c = compileOf(rep, cid);
  return c && (c.kernels || []).find((k) => k.name === name);
}

/** What a change of the store redraws: a new pair everything, a new row its marks and sources. */
function onStore(cx, s, changed) {
  if (changed.has("pair")) {
    cx.pairSel.value = String(s.pair);
    cx.root.dataset.pair = String(s.pair);
    drawChips(cx);
    drawFacts(cx);
    drawGraph(cx);
    drawTable(cx);
  }
  if (changed.has("pair") || changed.has("row")) {
    for (const tr of cx.tbody.querySelectorAll("tr[data-role=diff-row]"))
      tr.classList.toggle("il-selected", tr.dataset.index === String(s.row));
    cx.root.dataset.selected = s.selected;
    drawSource(cx);
    markGraph(cx);
  }
}

/**
 * @param {HTMLElement} el
 * @param {{payload: {diff: object, a: object, b: object}, engine: () => Promise<object>,
 *          initial?: {pair?: number, selected?: string},
 *          exportHtml?: () => Promise<{filename: string, parts: Uint8Array[]}>}} opts
 */
export function createCompare(el, opts) {
  const { diff, a: repA, b: repB } = opts.payload;
  const pairs = diff.compiles || [];
  const init = opts.initial || {};
  const first = Math.min(Math.max(0, init.pair | 0), Math.max(0, pairs.length - 1));
  const ac = new AbortController();
  const store = createStore({ pair: first, row: -1, selected: "" });
  const cx = { diff, repA, repB, pairs, store, rows: [], token: 0, built: null, alive: true };
  Object.assign(cx, {
    engine: opts.engine,
    exportHtml: opts.exportHtml,
    on: (t, type, fn) => t.addEventListener(type, fn, { signal: ac.signal }),
    pair: () => pairs[store.get().pair] || { kernels: [] },
    selectRow(index) {
      const r = cx.rows.find((x) => x.index === index);
      store.set({ row: r ? index : -1, selected: r ? rowKernel(r) : "" });
    },
  });
  cx.root = compareDom(cx);
  el.appendChild(cx.root);
  cx.canvas = new GraphCanvas(
    cx.graphHost,
    (it) => {
      if (it && it.type === "node") selectKernel(it.name);
    },
    { embedded: !!opts.embedded },
  );
  function selectKernel(name) {
    const r = cx.rows.find((x) => x.b === name || x.a === name || (x.fused_b || []).includes(name));
    cx.selectRow(r ? r.index : -1);
  }
  function selectPair(i) {
    if (i >= 0 && i < pairs.length) store.set({ pair: i, row: -1, selected: "" });
  }
  store.subscribe((s, changed) => onStore(cx, s, changed));
  // ---- start: the graph first (the worker lays it out while the table is drawn here)
  onStore(cx, store.get(), new Set(["pair"]));
  mark("il:compare-table");
  if (init.selected) selectKernel(init.selected);
  return {
    root: cx.root,
    store,
    get state() {
      return { pair: store.get().pair, row: store.get().row };
    },
    selectPair,
    selectRow: cx.selectRow,
    selectKernel,
    destroy() {
      cx.alive = false;
      ac.abort();
      cx.canvas.destroy();
      cx.root.remove();
    },
  };
}
