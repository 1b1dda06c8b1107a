// The Memory view (data-view="memory"): the live bytes after each fused node of the compile, as a curve over
// the execution order (one point per fused node; a click selects the node, the selected node's point is
// marked), the peak and the buffers alive there, and for a training step's forward the tensors saved for
// the backward (a sortable table; a click selects the producer), its roll-ups and the recomputed ops.
// Python computed every number (Compile.memory, docs/report-schema.md "Memory"); this module only draws.

import { basename, fmtBytes, plural } from "../data.js";
import { h, svg } from "../dom.js";

const W = 640,
  H = 210,
  PAD = { l: 62, r: 12, t: 14, b: 28 };

/** The innermost user frame of a stack as "file.py:12" (and the frame), or ["", null]. */
export function userLine(stack) {
  const frames = stack || [];
  for (let i = frames.length - 1; i >= 0; i--)
    if (frames[i].is_user) return [`${basename(frames[i].file)}:${frames[i].line}`, frames[i]];
  return ["", null];
}

/** Round tick values for an axis from 0 to `max` bytes: 0 and up to 5 steps of 1, 2 or 5 x a power of 10
 * of B, KiB, MiB or GiB (what fmtBytes prints as round numbers). */
export function byteTicks(max) {
  if (!(max > 0)) return [0];
  const raw = max / 4;
  let step = 1;
  outer: for (const unit of [1, 1024, 1024 ** 2, 1024 ** 3, 1024 ** 4])
    for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500]) {
      step = m * unit;
      if (step >= raw) break outer;
    }
  const out = [];
  for (let v = 0; v <= max + step - 1e-9 && out.length < 7; v += step) out.push(v);
  return out;
}

const SAVED_COLUMNS = [
  { key: "order", label: "#", num: true },
  { key: "name", label: "tensor" },
  { key: "shape", label: "shape" },
  { key: "dtype", label: "dtype" },
  { key: "bytes", label: "bytes", num: true },
  { key: "kind", label: "kind" },
  { key: "module", label: "module" },
  { key: "line", label: "your line" },
];

/** Rows of the saved-for-backward table, sorted by `sort` ("bytes", "-bytes", ...). */
export function savedRows(memory, sort) {
  const rows = (memory.saved_for_backward || []).map((s, i) => ({
    order: i + 1,
    name: s.name,
    shape: `[${(s.shape || []).join(", ")}]`,
    dtype: s.dtype || "",
    bytes: s.bytes,
    kind: s.kind,
    module: s.module || "",
    line: userLine(s.user_stack)[0],
    frame: userLine(s.user_stack)[1],
    fx: s.fx_node,
  }));
  const desc = String(sort || "").startsWith("-");
  const key = String(sort || "order").replace(/^-/, "");
  rows.sort((a, b) => {
    const x = a[key],
      y = b[key];
    if (x === y) return a.order - b.order;
    if (x == null) return 1;
    if (y == null) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return desc ? -c : c;
  });
  return rows;
}

function curve(idx, memory, selected) {
  const pts = memory.timeline || [];
  const n = pts.length;
  const max = Math.max(memory.peak_bytes || 0, 1);
  const ticks = byteTicks(max);
  const top = Math.max(max, ticks[ticks.length - 1]);
  const x = (i) => PAD.l + (n <= 1 ? (W - PAD.l - PAD.r) / 2 : (i * (W - PAD.l - PAD.r)) / (n - 1));
  const y = (b) => H - PAD.b - (b / top) * (H - PAD.t - PAD.b);
  const g = svg("svg", {
    viewBox: `0 0 ${W} ${H}`,
    class: "il-mem-curve",
    "data-role": "memory-curve",
    role: "img",
    "aria-label": `live bytes over ${n} fused nodes, peak ${fmtBytes(memory.peak_bytes)}`,
  });
  for (const t of ticks) {
    g.appendChild(svg("line", { x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), class: "il-mem-grid" }));
    g.appendChild(svg("text", { x: PAD.l - 6, y: y(t) + 4, "text-anchor": "end", class: "il-mem-tick" }, fmtBytes(t)));
  }
  g.appendChild(
    svg("text", { x: (PAD.l + W - PAD.r) / 2, y: H - 6, "text-anchor": "middle", class: "il-mem-tick" }, [
      `fused nodes in execution order (${n})`,
    ]),
  );
  if (n > 1) {
    const d = pts.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.live_bytes).toFixed(1)}`).join(" ");
    g.appendChild(svg("path", { d, class: "il-mem-line" }));
  }
  const peakAt = pts.findIndex((p) => p.node === memory.peak_node);
  if (peakAt >= 0) {
    const px = x(peakAt),
      py = y(pts[peakAt].live_bytes);
    g.appendChild(svg("line", { x1: px, x2: px, y1: PAD.t, y2: H - PAD.b, class: "il-mem-peakline" }));
    g.appendChild(
      svg(
        "text",
        {
          x: px + (px > W * 0.7 ? -6 : 6),
          y: Math.max(PAD.t + 10, py - 8),
          "text-anchor": px > W * 0.7 ? "end" : "start",
          class: "il-mem-peaklabel",
          "data-role": "memory-peak",
        },
        `peak ${fmtBytes(memory.peak_bytes)}`,
      ),
    );
  }
  const r = n > 300 ? 2.5 : n > 100 ? 3.5 : 5;
  pts.forEach((p, i) => {
    const e = idx.byName.get(p.node);
    const label = e ? e.node.label || p.node : p.node;
    const cls = ["il-mem-point"];
    if (p.node === memory.peak_node) cls.push("il-mem-peak");
    if (p.node === selected) cls.push("il-selected");
    g.appendChild(
      svg(
        "circle",
        {
          cx: x(i).toFixed(1),
          cy: y(p.live_bytes).toFixed(1),
          r: p.node === selected ? r + 3 : r,
          class: cls.join(" "),
          "data-role": "memory-point",
          "data-node": p.node,
          "data-index": i,
        },
        svg(
          "title",
          {},
          `${i + 1}. ${label} (${p.node}): ${fmtBytes(p.live_bytes)} live` +
            ((p.allocates || []).length ? `; allocates ${p.allocates.map((b) => b.name).join(", ")}` : "") +
            ((p.frees || []).length ? `; then frees ${p.frees.map((b) => b.name).join(", ")}` : ""),
        ),
      ),
    );
  });
  return g;
}

function facts(idx, memory) {
  const pts = memory.timeline || [];
  const at = pts.findIndex((p) => p.node === memory.peak_node);
  const e = idx.byName.get(memory.peak_node);
  const items = [
    h(
      "span",
      { class: "il-chip", "data-role": "memory-peak-fact" },
      `peak ${fmtBytes(memory.peak_bytes)}`,
      at >= 0 ? ` at ${e ? e.node.label || memory.peak_node : memory.peak_node} (${at + 1} of ${pts.length})` : "",
    ),
    h(
      "span",
      { class: "il-chip", "data-role": "memory-measured" },
      memory.measured_peak_bytes == null
        ? "measured: not measured"
        : `measured ${fmtBytes(memory.measured_peak_bytes)}`,
      memory.estimate_ratio == null
        ? ""
        : ` · estimated ${fmtBytes(memory.net_peak_bytes)} above the level at the call (${memory.estimate_ratio.toFixed(2)}×)`,
    ),
    h(
      "span",
      { class: "il-chip" },
      `inputs ${fmtBytes(memory.input_bytes || 0)} (not in the curve)`,
      memory.freed_input_bytes ? `, ${fmtBytes(memory.freed_input_bytes)} of them freed on the way` : "",
    ),
  ];
  if ((memory.saved_for_backward || []).length)
    items.push(
      h(
        "span",
        { class: "il-chip", "data-role": "memory-saved-total" },
        `saved for backward ${fmtBytes(memory.saved_bytes)} in ${plural(memory.saved_for_backward.length, "tensor")}, ` +
          `${fmtBytes(memory.saved_activation_bytes || 0)} of it activations`,
      ),
    );
  return h(
    "div",
    {},
    h("div", { class: "il-chips" }, items),
    h(
      "details",
      { class: "il-muted il-small il-mem-source" },
      h("summary", {}, "how these numbers were obtained"),
      memory.source || "",
    ),
  );
}

function table(cls, role, head, rows) {
  return h(
    "table",
    { class: `il-table ${cls}`, "data-role": role },
    h("thead", {}, h("tr", {}, head)),
    h("tbody", {}, rows),
  );
}

function peakTable(idx, memory) {
  const bufs = memory.peak_buffers || [];
  if (!bufs.length) return null;
  return h(
    "section",
    { class: "il-section" },
    h("h3", {}, `alive at the peak (${plural(bufs.length, "largest buffer")})`),
    table(
      "il-mem-table",
      "memory-peak-buffers",
      ["buffer", "bytes", "written by", "op", "your line"].map((t, i) =>
        h("th", { class: i === 1 ? "il-num" : "" }, t),
      ),
      bufs.map((b) => {
        const e = idx.byName.get(b.node);
        return h(
          "tr",
          { "data-role": "memory-buffer-row", "data-fused": b.node },
          h("td", { class: "il-mono" }, b.name),
          h("td", { class: "il-num il-mono" }, fmtBytes(b.bytes)),
          h("td", { class: "il-mono" }, e ? e.node.label || b.node : b.node),
          h("td", { class: "il-mono" }, b.fx_node || ""),
          h("td", { class: "il-mono" }, userLine(b.user_stack)[0]),
        );
      }),
    ),
  );
}

function savedTable(idx, memory, sort) {
  const rows = savedRows(memory, sort);
  if (!rows.length) return null;
  const key = sort.replace(/^-/, ""),
    desc = sort.startsWith("-");
  const head = SAVED_COLUMNS.map((c) =>
    h(
      "th",
      {
        class: (c.num ? "il-num " : "") + "il-sortable",
        "data-sort": c.key,
        "aria-sort": c.key === key ? (desc ? "descending" : "ascending") : null,
        title: `sort by ${c.label}`,
      },
      c.label,
      c.key === key ? (desc ? " ▾" : " ▴") : "",
    ),
  );
  const body = rows.map((r) =>
    h(
      "tr",
      {
        "data-role": "saved-row",
        "data-name": r.name,
        "data-fused": idx.fxOwner.get(r.fx) || "",
        "data-line": r.frame ? `${r.frame.file}:${r.frame.line}` : "",
        class: r.kind === "input" ? "il-muted" : "",
        title: r.kind === "input" ? "a forward input (parameter, buffer, argument): kept alive anyway" : "",
      },
      h("td", { class: "il-num il-muted" }, String(r.order)),
      h("td", { class: "il-mono" }, r.name),
      h("td", { class: "il-mono" }, r.shape),
      h("td", { class: "il-mono" }, r.dtype),
      h("td", { class: "il-num il-mono" }, r.bytes == null ? "?" : fmtBytes(r.bytes)),
      h("td", {}, r.kind),
      h("td", { class: "il-mono" }, r.module),
      h("td", { class: "il-mono" }, r.line),
    ),
  );
  return h(
    "section",
    { class: "il-section" },
    h("h3", {}, `saved for backward (${fmtBytes(memory.saved_bytes)})`),
    table("il-mem-table", "saved-table", head, body),
  );
}

function rollups(memory) {
  const mods = memory.saved_by_module || [];
  const lines = memory.saved_by_line || [];
  const redo = memory.recomputed || [];
  if (!mods.length && !lines.length && !redo.length) return null;
  const list = (title, role, items) =>
    items.length ? h("div", { class: "il-mem-roll", "data-role": role }, h("h4", {}, title), h("ul", {}, items)) : null;
  return h(
    "section",
    { class: "il-section il-mem-rolls" },
    list(
      "activations kept, by module",
      "saved-by-module",
      mods
        .slice(0, 12)
        .map((m) => h("li", {}, h("span", { class: "il-mono" }, m.module), ` keeps ${fmtBytes(m.bytes)}`)),
    ),
    list(
      "activations kept, by your line",
      "saved-by-line",
      lines
        .slice(0, 12)
        .map((l) =>
          h("li", {}, h("span", { class: "il-mono" }, `${basename(l.file)}:${l.line}`), ` ${fmtBytes(l.bytes)}`),
        ),
    ),
    list(
      `recomputed in the backward (${redo.length})`,
      "recomputed",
      redo
        .slice(0, 24)
        .map((r) =>
          h("li", { class: "il-mono" }, r.fx_node, " ", h("span", { class: "il-muted" }, userLine(r.user_stack)[0])),
        ),
    ),
  );
}

/** Draw the Memory view of compile `idx` into `el`; `sort` orders the saved table. */
export function renderMemory(el, idx, selected, sort) {
  const m = idx && idx.compile.memory;
  if (!m) {
    el.replaceChildren(
      h(
        "div",
        { class: "il-empty", "data-role": "memory-none" },
        "No memory facts for this compile: the report was recorded before inductor_lens measured memory, " +
          "or the scheduler's buffers could not be read (see the diagnostics).",
      ),
    );
    return;
  }
  el.replaceChildren(
    h("div", { class: "il-mem-head" }, facts(idx, m)),
    h("div", { class: "il-mem-plot" }, curve(idx, m, selected)),
    h("div", { class: "il-mem-tables" }, savedTable(idx, m, sort), peakTable(idx, m), rollups(m)),
  );
}

/** Mark the selected fused node's point (without redrawing). */
export function markPoint(el, selected) {
  for (const c of el.querySelectorAll('[data-role="memory-point"]')) {
    const on = c.dataset.node === selected;
    if (on === c.classList.contains("il-selected")) continue;
    c.classList.toggle("il-selected", on);
    const r = Number(c.getAttribute("r"));
    c.setAttribute("r", String(on ? r + 3 : r - 3));
  }
  for (const tr of el.querySelectorAll('[data-role="saved-row"], [data-role="memory-buffer-row"]'))
    tr.classList.toggle("il-selected-row", !!selected && tr.dataset.fused === selected);
}

export default {
  id: "memory",
  label: "Memory",
  title: "live bytes after each fused node, the peak, and what the forward saves for the backward",
  create(ctx) {
    const el = h("div", { class: "il-view il-memory", "data-view": "memory" });
    let sort = "-bytes",
      drawn = "";
    ctx.on(el, "click", (e) => {
      const th = e.target.closest("th[data-sort]");
      if (th) {
        const key = th.dataset.sort;
        sort = sort === key ? `-${key}` : key;
        drawn = "";
        draw(ctx.store.get());
        return;
      }
      const pt = e.target.closest('[data-role="memory-point"]');
      if (pt) {
        ctx.actions.select(pt.dataset.node);
        return;
      }
      const tr = e.target.closest('[data-role="saved-row"], [data-role="memory-buffer-row"]');
      if (tr && tr.dataset.fused) {
        ctx.actions.select(tr.dataset.fused);
        if (tr.dataset.line) ctx.store.set({ sourceLine: tr.dataset.line });
      }
    });
    function draw(s) {
      const key = [s.compileId, sort].join("|");
      if (key === drawn) return markPoint(el, s.selected);
      drawn = key;
      renderMemory(el, ctx.model.idxOf(s.compileId), s.selected, sort);
      markPoint(el, s.selected);
    }
    return {
      el,
      update(s, _changed, active) {
        if (active) draw(s);
      },
    };
  },
};
