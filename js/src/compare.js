// The compare view: B's fusion graph with A's differences marked, a table of kernel pairs sorted by
// time delta, and both sources of the selected pair side by side. createCompare(el, opts) works in the
// widget and on the standalone page; it returns {root, state, selectPair, selectRow, destroy}.

import {
  changeText,
  fmtDelta,
  graphMarks,
  pairLabel,
  rowKernel,
  STATUSES,
  sideBySide,
  sortedRows,
} from "./comparedata.js";
import { fmtUs, indexCompile, initialExpansion, plural } from "./data.js";
import { h } from "./dom.js";
import { buildFusion } from "./dot.js";
import { GraphCanvas } from "./graphview.js";

const COLLAPSE_LIMIT = 60;
const STATUS_TEXT = { same: "same", changed: "changed", only_a: "removed", only_b: "added" };

function mark(name) {
  try {
    performance.mark(name);
  } catch (_e) {
    /* no performance API */
  }
}

/**
 * @param {HTMLElement} el
 * @param {{payload: {diff: object, a: object, b: object}, engine: () => Promise<object>,
 *          initial?: {pair?: number, selected?: string}, onChange?: (state) => void,
 *          exportHtml?: () => Promise<{filename: string, bytes: Uint8Array}>}} opts
 */
export function createCompare(el, opts) {
  const { diff, a: repA, b: repB } = opts.payload;
  const pairs = diff.compiles || [];
  const init = opts.initial || {};
  const state = { pair: Math.min(Math.max(0, init.pair | 0), Math.max(0, pairs.length - 1)), row: -1 };
  const ac = new AbortController();
  const on = (t, type, fn) => t.addEventListener(type, fn, { signal: ac.signal });
  let alive = true,
    token = 0,
    built = null;

  // ---- DOM ----------------------------------------------------------------------------------
  const sum = diff.summary || {};
  const pairSel = h(
    "select",
    {
      class: "il-compile",
      "aria-label": "compile pair",
      "data-role": "compile-pair",
      title:
        "which pair of compiles to compare (paired by frame, graph kind and order; diff(a, b, pairs=...) overrides)",
    },
    pairs.map((p, i) =>
      h(
        "option",
        { value: String(i), title: `paired by ${p.paired_by}` },
        `${pairLabel(p)} · ${plural((p.kernels || []).length, "kernel")}`,
      ),
    ),
  );
  const chips = h(
    "span",
    { class: "il-chips", "data-role": "diff-summary" },
    STATUSES.map((s) =>
      h(
        "span",
        { class: `il-chip il-dchip il-d-${s}`, "data-status": s, title: `kernels ${STATUS_TEXT[s]}` },
        `${sum[s] || 0} ${STATUS_TEXT[s]}`,
      ),
    ),
  );
  const status = h("span", { class: "il-status", "aria-live": "polite" });
  const exportBtn = opts.exportHtml
    ? h(
        "button",
        { class: "il-btn il-export", type: "button", title: "download this comparison as one HTML page" },
        "Export HTML",
      )
    : null;
  if (exportBtn) on(exportBtn, "click", () => doExport());
  const toolbar = h(
    "div",
    { class: "il-toolbar" },
    h("strong", {}, "Compare"),
    h(
      "span",
      { class: "il-muted il-dnames", title: "A is the report passed first" },
      `A: ${repA.title || "report A"}  →  B: ${repB.title || "report B"}`,
    ),
    pairSel,
    chips,
    h("span", { class: "il-spacer" }),
    status,
    exportBtn,
  );
  const facts = h("div", { class: "il-subbar il-dfacts", "data-role": "diff-facts" });
  const graphHost = h("div", { class: "il-graph" });
  const legend = h("div", { class: "il-legend" });
  const tbody = h("tbody");
  const table = h(
    "table",
    { class: "il-dtable", "data-role": "diff-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["", "kernel in A", "kernel in B", "what changed", "A", "B", "Δ time"].map((t) => h("th", {}, t)),
      ),
    ),
    tbody,
  );
  const source = h("div", { class: "il-dsource", "data-role": "diff-source" });
  const view = h(
    "div",
    { class: "il-view il-compare", "data-view": "compare" },
    toolbar,
    facts,
    h(
      "div",
      { class: "il-main" },
      h("div", { class: "il-stage il-dgraph" }, h("div", { class: "il-view" }, graphHost, legend)),
      h("div", { class: "il-dright" }, h("div", { class: "il-dtable-wrap" }, table), source),
    ),
  );
  const root = h("div", { class: "il-root il-compare-root", tabindex: "0" }, view);
  el.appendChild(root);
  const canvas = new GraphCanvas(graphHost, (it) => onGraphItem(it));

  const pair = () => pairs[state.pair] || { kernels: [] };
  const compileOf = (rep, id) => (rep.compiles || []).find((c) => c.id === id) || null;
  const kernelIn = (rep, cid, name) => {
    const c = compileOf(rep, cid);
    return c && (c.kernels || []).find((k) => k.name === name);
  };
  let rows = [];

  // ---- drawing ------------------------------------------------------------------------------
  function drawFacts() {
    const p = pair();
    const t = p.compile_time_us || {};
    const bits = [h("span", {}, `paired by ${p.paired_by || "?"}`)];
    if (t.a != null && t.b != null) bits.push(h("span", {}, `compile time ${fmtUs(t.a)} → ${fmtUs(t.b)}`));
    const g = diff.graph_breaks || {},
      r = diff.recompiles || {};
    bits.push(
      h(
        "span",
        { title: [...(g.added || []).map((x) => "+ " + x), ...(g.removed || []).map((x) => "− " + x)].join("\n") },
        `graph breaks ${g.a ?? "?"} → ${g.b ?? "?"}`,
      ),
    );
    bits.push(
      h(
        "span",
        { title: [...(r.added || []).map((x) => "+ " + x), ...(r.removed || []).map((x) => "− " + x)].join("\n") },
        `recompiles ${r.a ?? "?"} → ${r.b ?? "?"}`,
      ),
    );
    const ga = p.guards_added || [],
      gr = p.guards_removed || [];
    const guards = h(
      "details",
      { class: "il-dguards", "data-role": "diff-guards" },
      h("summary", {}, `guards: ${ga.length} added, ${gr.length} removed`),
      h(
        "pre",
        { class: "il-code" },
        [...ga.map((x) => "+ " + x), ...gr.map((x) => "- " + x)].join("\n") || "no difference",
      ),
    );
    facts.replaceChildren(...bits.flatMap((b) => [b, h("span", { class: "il-muted" }, " · ")]), guards);
  }

  function drawTable() {
    rows = sortedRows(pair());
    tbody.replaceChildren(
      ...rows.map((r) => {
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
          h("td", {}, h("span", { class: `il-chip il-dchip il-d-${r.status}` }, STATUS_TEXT[r.status])),
          h("td", { class: "il-mono" }, r.a || "—"),
          h("td", { class: "il-mono" }, r.b || "—"),
          h("td", { class: "il-dwhat" }, changeText(r)),
          h("td", { class: "il-num" }, r.time_a_us != null ? fmtUs(r.time_a_us) : ""),
          h("td", { class: "il-num" }, r.time_b_us != null ? fmtUs(r.time_b_us) : ""),
          h(
            "td",
            {
              class:
                "il-num il-ddelta" + (r.time_delta_us > 0 ? " il-slower" : r.time_delta_us < 0 ? " il-faster" : ""),
            },
            fmtDelta(r.time_delta_us),
          ),
        );
        on(tr, "click", () => selectRow(r.index));
        on(tr, "keydown", (e) => {
          if (e.key === "Enter") selectRow(r.index);
        });
        return tr;
      }),
    );
    if (!rows.length)
      tbody.replaceChildren(h("tr", {}, h("td", { colspan: "7", class: "il-muted" }, "no kernels in this pair")));
  }

  function drawSource() {
    const r = rows.find((x) => x.index === state.row);
    if (!r) {
      source.replaceChildren(h("p", { class: "il-muted" }, "Click a row for both kernels' sources, side by side."));
      return;
    }
    const p = pair();
    const ka = r.a ? kernelIn(repA, p.a, r.a) : null;
    const kb = r.b ? kernelIn(repB, p.b, r.b) : null;
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
    source.replaceChildren(
      h(
        "div",
        { class: "il-dsrc-head" },
        h("strong", {}, STATUS_TEXT[r.status]),
        " ",
        changeText(r),
        note ? h("span", { class: "il-muted" }, ` (${note})`) : null,
      ),
      h("div", { class: "il-dsrc-cols" }, col("a", ka), col("b", kb)),
    );
  }

  async function drawGraph() {
    const p = pair();
    const rep = p.b ? repB : repA,
      cid = p.b || p.a;
    const c = compileOf(rep, cid);
    const my = ++token;
    built = null;
    canvas.viewport.replaceChildren();
    legend.replaceChildren();
    if (!c || !(c.fused_nodes || []).length) {
      message(c ? "This compile has no fused nodes." : "No compile on either side.");
      return;
    }
    const ix = indexCompile(c);
    const b = buildFusion(ix, initialExpansion(ix.fused, COLLAPSE_LIMIT));
    message(`laying out ${plural(b.items.size, "box", "boxes")}…`);
    let layout;
    try {
      layout = await (await opts.engine()).layout(b.dot);
    } catch (e) {
      if (my === token && alive) message(`layout failed: ${e.message || e}`);
      return;
    }
    if (my !== token || !alive) return;
    message("");
    const marks = p.b ? graphMarks(p) : new Map(ix.fused.map((n) => [n.name, "removed"]));
    canvas.draw(layout, b.items, b.edges, b.clusters, (g, it) => {
      if (it.type === "node") {
        g.dataset.node = it.name;
        g.dataset.kernel = it.kernel;
        if (marks.has(it.name)) g.dataset.diff = marks.get(it.name);
      }
      if (it.type === "group") {
        const m = (it.members || []).map((x) => marks.get(x)).filter(Boolean);
        if (m.length) g.dataset.diff = m.includes("changed") ? "changed" : m[0];
      }
    });
    built = b;
    const count = (s) => (p.kernels || []).filter((k) => k.status === s).length;
    legend.replaceChildren(
      h("span", { class: "il-legend-item il-d-only_b" }, h("i", {}), `added ${count("only_b")}`),
      h("span", { class: "il-legend-item il-d-changed" }, h("i", {}), `changed ${count("changed")}`),
      h(
        "span",
        { class: "il-legend-item il-d-only_a", title: "kernels only in A have no box in B's graph: see the table" },
        h("i", {}),
        `removed ${count("only_a")} (table)`,
      ),
      h("span", { class: "il-muted" }, p.b ? `graph of B (${p.b})` : `graph of A (${p.a}): not in B`),
    );
    if (b.items.size <= 24) canvas.fit();
    else canvas.open(b.keyToId.get("node:" + ix.fused[0].name));
    markGraph();
    graphHost.dataset.ready = "1";
    mark("il:interactive");
  }

  function message(text) {
    graphHost.querySelectorAll(".il-message").forEach((m) => m.remove());
    if (text) graphHost.appendChild(h("div", { class: "il-message" }, text));
  }

  function markGraph() {
    if (!built) return;
    const r = rows.find((x) => x.index === state.row);
    const fused = r && (pair().b ? r.fused_b : r.fused_a);
    const id = fused && built.keyToId.get("node:" + fused);
    canvas.mark("il-selected", id ? [id] : []);
    if (id) canvas.reveal(id);
  }

  // ---- actions ------------------------------------------------------------------------------
  function selectRow(index) {
    state.row = index;
    for (const tr of tbody.querySelectorAll("tr[data-role=diff-row]"))
      tr.classList.toggle("il-selected", tr.dataset.index === String(index));
    const r = rows.find((x) => x.index === index);
    root.dataset.selected = r ? rowKernel(r) : "";
    drawSource();
    markGraph();
    if (opts.onChange) opts.onChange({ pair: state.pair, selected: r ? rowKernel(r) : "" });
  }
  function selectKernel(name) {
    const r = rows.find((x) => x.b === name || x.a === name || x.fused_b === name);
    selectRow(r ? r.index : -1);
  }
  function selectPair(i) {
    if (!(i >= 0 && i < pairs.length)) return;
    state.pair = i;
    state.row = -1;
    pairSel.value = String(i);
    root.dataset.pair = String(i);
    drawFacts();
    drawGraph();
    drawTable();
    drawSource();
    if (opts.onChange) opts.onChange({ pair: i, selected: "" });
  }
  function onGraphItem(it) {
    if (!it) return;
    if (it.type === "node") selectKernel(it.name);
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
  on(pairSel, "change", () => selectPair(Number(pairSel.value)));

  // ---- start --------------------------------------------------------------------------------
  pairSel.value = String(state.pair);
  root.dataset.pair = String(state.pair);
  drawFacts();
  drawGraph(); // first: the worker lays the graph out while the table is drawn here
  drawTable();
  mark("il:compare-table");
  if (init.selected) selectKernel(init.selected);
  else drawSource();
  return {
    root,
    state,
    selectPair,
    selectRow,
    selectKernel,
    destroy() {
      alive = false;
      ac.abort();
      canvas.destroy();
      root.remove();
    },
  };
}
