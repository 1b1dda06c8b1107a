// The roofline view (data-view="roofline"): each profiled kernel as a dot at its arithmetic intensity
// (FLOP per byte moved) and achieved throughput, under the device's memory and compute roofs; below it the
// profiled step as a whole (unattributed remainder) and the roll-ups by kind, module and source line, and
// the kernels far off Inductor's own estimate. Python computed every number (Kernel.profile/cost,
// Report.profile, Report.device_info); this module only draws them.

import { basename, fmtBytes, fmtShare, fmtUs, indexCompile, plural } from "./data.js";
import { h, svg } from "./dom.js";
import { BUILT_ROW_TITLE, builtTag } from "./linepanel.js";

/** Whether the report has a roofline to draw: Python decided it (`Report.views`, a profile with costs). */
export function hasRoofline(report) {
  return report.views.includes("roofline");
}

/**
 * One point per profiled kernel with a known cost: {compileId, kernel, fused, kind, intensity, gflops, gbps,
 * peakFraction, bound, verdict, atMost, total_us, share, noisy, memoryOnly}. Kernels with no FLOPs (pure data movement:
 * Python's arithmetic_intensity is 0) are `memoryOnly`: drawn apart, in a strip by their fraction of the
 * bandwidth (their peak_fraction), never in the plot's corner where they would look like the worst.
 */
export function rooflinePoints(report) {
  const out = [];
  for (const c of report.compiles || []) {
    const fusedOf = new Map();
    for (const n of c.fused_nodes || []) if (n.kernel && !fusedOf.has(n.kernel)) fusedOf.set(n.kernel, n);
    for (const k of c.kernels || []) {
      const p = k.profile;
      if (!p || p.achieved_gbps == null) continue; // no cost known: nothing to place
      const n = fusedOf.get(k.name);
      out.push({
        compileId: c.id,
        kernel: k.name,
        fused: n ? n.name : "",
        kind: n ? n.kind : k.language,
        intensity: p.arithmetic_intensity ?? 0,
        gflops: (p.achieved_tflops ?? 0) * 1000,
        gbps: p.achieved_gbps,
        peakFraction: p.peak_fraction,
        bound: p.bound,
        verdict: p.verdict || "",
        atMost: !!p.at_most, // KernelProfile.at_most (Python): the fraction rests on an upper bound, drawn "≤"
        total_us: p.total_us,
        share: p.share,
        noisy: p.noisy || "", // KernelProfile.noisy (Python): the dot's place rests on runs that disagree
        memoryOnly: p.arithmetic_intensity === 0, // no FLOPs (copies, gathers): judged by bandwidth alone
        unit: k.cost && k.cost.integer_ops ? "OP" : "FLOP", // Cost.integer_ops (Python): int8 ops, not FLOPs
      });
    }
  }
  return out;
}

/** Colour of a fraction of peak: red (far from the roof) through amber to green (at the roof); grey when
 * unknown (no peak, or a count above the peak: Python's verdict says why). */
export function peakColour(fraction) {
  if (fraction == null) return "hsl(0, 0%, 55%)";
  const f = Math.max(0, Math.min(1, fraction));
  return `hsl(${Math.round(f * 120)}, 65%, 45%)`;
}

function logScale(lo, hi, a, b) {
  const l0 = Math.log10(lo),
    l1 = Math.log10(hi);
  return (v) => a + ((Math.log10(Math.max(v, lo)) - l0) / (l1 - l0)) * (b - a);
}

/** The compute roofs, equal peaks merged: [{dtypes: ["bf16", "fp16"], tflops}], highest first. */
export function mergedRoofs(info) {
  const byValue = new Map();
  for (const [dtype, v] of Object.entries((info && info.peak_tflops) || {}))
    if (v > 0) byValue.set(v, [...(byValue.get(v) || []), dtype]);
  return [...byValue.entries()].sort((a, b) => b[0] - a[0]).map(([tflops, dtypes]) => ({ dtypes, tflops }));
}

const LABEL_PX = 6.2; // px per character of a roof label (11 px text)

/** The box [x0, y0, x1, y1] of a roof label of `text` anchored (text-anchor end) at [x, y], with a margin. */
function labelBox(text, [x, y]) {
  return [x - text.length * LABEL_PX - 2, y - 12, x + 2, y + 5];
}

/** The one of `tries` (anchors, in order of preference) where the label overlaps the fewest of `taken`
 * (boxes; `labels` of them are other labels, which count more): the first free one where there is one. */
function clearSpot(text, tries, taken, labels) {
  const hits = (b, boxes) => boxes.filter((t) => b[0] < t[2] && t[0] < b[2] && b[1] < t[3] && t[1] < b[3]).length;
  let best = null;
  for (const t of tries) {
    const b = labelBox(text, t);
    const score = 10 * hits(b, labels) + hits(b, taken);
    if (!best || score < best.score) best = { t, score };
    if (!score) break;
  }
  return best.t;
}

/** The plot's frame: scales, decade grid, ticks and axis titles. */
function plotFrame(g, points, info, d) {
  const { W, H, L, R, T, B } = d;
  const xs = points.filter((p) => !p.memoryOnly && p.intensity > 0).map((p) => p.intensity);
  const ys = points.filter((p) => !p.memoryOnly && p.gflops > 0).map((p) => p.gflops);
  const roofs = mergedRoofs(info);
  const topPeak = roofs.length ? roofs[0].tflops * 1000 : 0;
  d.xlo = Math.min(0.01, ...xs) / 2;
  d.xhi = Math.max(100, ...xs) * 2;
  d.ylo = Math.min(...(ys.length ? ys : [1])) / 4;
  d.yhi = Math.max(topPeak, ...ys, 1) * 2;
  if (!(d.ylo > 0)) d.ylo = 1e-3;
  const x = (d.x = logScale(d.xlo, d.xhi, L, W - R)),
    y = (d.y = logScale(d.ylo, d.yhi, H - B, T));
  for (let e = Math.ceil(Math.log10(d.xlo)); e <= Math.floor(Math.log10(d.xhi)); e++) {
    g.appendChild(svg("line", { x1: x(10 ** e), x2: x(10 ** e), y1: T, y2: H - B, class: "il-rf-grid" }));
    const v = 10 ** e >= 1 ? 10 ** e : (10 ** e).toPrecision(1);
    g.appendChild(svg("text", { x: x(10 ** e), y: H - B + 14, class: "il-rf-tick", "text-anchor": "middle" }, `${v}`));
  }
  for (let e = Math.ceil(Math.log10(d.ylo)); e <= Math.floor(Math.log10(d.yhi)); e++) {
    g.appendChild(svg("line", { x1: L, x2: W - R, y1: y(10 ** e), y2: y(10 ** e), class: "il-rf-grid" }));
    g.appendChild(
      svg("text", { x: L - 4, y: y(10 ** e) + 3, class: "il-rf-tick", "text-anchor": "end" }, fmtFlops(10 ** e)),
    );
  }
  const midY = (T + H - B) / 2;
  g.appendChild(
    svg(
      "text",
      { x: (L + W - R) / 2, y: H - 8, class: "il-rf-axis", "text-anchor": "middle" },
      "arithmetic intensity (FLOP / byte moved)",
    ),
  );
  g.appendChild(
    svg(
      "text",
      { x: L - 72, y: midY, class: "il-rf-axis", "text-anchor": "middle", transform: `rotate(-90 ${L - 72} ${midY})` },
      "achieved FLOP/s",
    ),
  );
}

/** The roofs: memory (GB/s x FLOP/B = GFLOP/s) up to each compute peak, one line and label per distinct
 * peak ("bf16/fp16 990 TFLOP/s"), each label placed clear of the dots and of the other labels. */
function drawRoofs(g, info, d, dotBoxes) {
  const peakGbps = info && info.peak_gbps;
  if (!peakGbps) return;
  const { x, y, xlo, xhi, yhi, W, R } = d;
  const roofs = mergedRoofs(info);
  const taken = dotBoxes;
  const labels = [];
  for (const roof of roofs.length ? roofs : [{ dtypes: [], tflops: 0 }]) {
    const name = roof.dtypes.join("/"),
      unit = roof.dtypes.length && roof.dtypes.every((t) => peakUnit(t) === "OP") ? "OP" : "FLOP";
    const top = roof.tflops ? roof.tflops * 1000 : yhi;
    const ridge = top / peakGbps;
    g.appendChild(
      svg(
        "polyline",
        {
          points: `${x(xlo)},${y(xlo * peakGbps)} ${x(Math.min(ridge, xhi))},${y(Math.min(top, xhi * peakGbps))} ${roof.tflops ? `${x(xhi)},${y(top)}` : ""}`,
          class: "il-rf-roof",
          "data-roof": name || "memory",
        },
        svg("title", {}, `${name ? name + " roof: " + fmtFlops(top, unit) + "; " : ""}memory roof: ${peakGbps} GB/s`),
      ),
    );
    if (!roof.tflops) continue;
    const text = `${name} ${fmtFlops(top, unit)}`;
    const right = W - R - 2,
      left = Math.min(right, x(ridge) + text.length * LABEL_PX + 8);
    // along the flat roof, from its right end to the ridge: above the line, else below it
    const tries = [];
    for (let ax = right; ax >= left - 0.5; ax -= Math.max(20, (right - left) / 6))
      tries.push([ax, y(top) - 3], [ax, y(top) + 13]);
    // dots at the roof itself: further above or below it, at its right end
    for (let k = 1; k <= 3; k++) tries.push([right, y(top) - 3 - 13 * k], [right, y(top) + 13 + 13 * k]);
    const spot = clearSpot(text, tries.length ? tries : [[right, y(top) - 3]], taken, labels);
    labels.push(labelBox(text, spot));
    g.appendChild(
      svg(
        "text",
        { x: spot[0], y: spot[1], class: "il-rf-label", "text-anchor": "end", "data-role": "roof-label" },
        text,
      ),
    );
  }
  g.appendChild(
    svg(
      "text",
      { x: x(xlo) + 4, y: y(xlo * peakGbps) - 4, class: "il-rf-label", "data-role": "roof-label" },
      `${Math.round(peakGbps)} GB/s`,
    ),
  );
}

/** One dot (data-role="roofline-dot"); a click selects its kernel. */
function dot(p, cx, cy, onPick) {
  const r = 4 + 8 * Math.sqrt(p.share || 0);
  const el = svg(
    "circle",
    {
      cx: cx.toFixed(1),
      cy: cy.toFixed(1),
      r: r.toFixed(1),
      class: p.noisy ? "il-rf-dot il-rf-noisy" : "il-rf-dot",
      fill: peakColour(p.peakFraction),
      "data-role": "roofline-dot",
      "data-kernel": p.kernel,
      "data-compile": p.compileId,
      "data-peak-fraction": p.peakFraction ?? "",
      "data-memory-only": p.memoryOnly ? "true" : null,
      "data-noisy": p.noisy ? "true" : null,
    },
    svg(
      "title",
      {},
      `${p.kernel} (${p.compileId})\n${fmtUs(p.total_us)} per run · ${fmtShare(p.share)} of kernel time\n${p.atMost && p.bound === "memory" ? "≤ " : ""}${p.gbps} GB/s · ${p.memoryOnly ? "no FLOPs" : fmtFlops(p.gflops, p.unit)}\n${p.verdict || "no peak known"}${p.noisy ? `\n${p.noisy}` : ""}`,
    ),
  );
  el.addEventListener("click", () => onPick(p.compileId, p.fused));
  return { el, box: [cx - r, cy - r, cx + r, cy + r] };
}

/** The memory-only strip left of the plot: kernels with no FLOPs, up by their fraction of the bandwidth. */
function memoryStrip(g, d) {
  const { S0, S1, T, H, B } = d;
  g.appendChild(
    svg("rect", { x: S0, y: T, width: S1 - S0, height: H - B - T, class: "il-rf-strip", "data-role": "memory-strip" }),
  );
  const fy = (f) => H - B - Math.max(0, Math.min(1, f)) * (H - B - T);
  for (const [f, t] of [
    [0, "0%"],
    [0.5, "50%"],
    [1, "100%"],
  ])
    g.appendChild(svg("text", { x: S1 + 2, y: fy(f) + 3, class: "il-rf-tick" }, t));
  g.appendChild(
    svg("text", { x: (S0 + S1) / 2, y: H - B + 14, class: "il-rf-tick", "text-anchor": "middle" }, "no FLOPs"),
  );
  g.appendChild(
    svg("text", { x: (S0 + S1) / 2, y: H - B + 26, class: "il-rf-tick", "text-anchor": "middle" }, "of GB/s"),
  );
  return fy;
}

function chart(points, info, onPick) {
  const mem = points.filter((p) => p.memoryOnly);
  // the strip of memory-only kernels takes the left of the chart; the plot starts right of its labels
  const d = { W: 700, H: 360, R: 16, T: 16, B: 44, S0: 8, S1: mem.length ? 38 : 8 };
  d.L = d.S1 + (mem.length ? 106 : 76);
  const g = svg("svg", {
    viewBox: `0 0 ${d.W} ${d.H}`,
    class: "il-roofline-svg",
    role: "img",
    "aria-label": "roofline chart",
  });
  plotFrame(g, points, info, d);
  const fy = mem.length ? memoryStrip(g, d) : null;
  const dots = points.map((p) =>
    p.memoryOnly
      ? dot(p, (d.S0 + d.S1) / 2, fy(p.peakFraction ?? 0), onPick)
      : dot(p, p.intensity > 0 ? d.x(p.intensity) : d.L + 4, d.y(p.gflops > 0 ? p.gflops : d.ylo), onPick),
  );
  drawRoofs(
    g,
    info,
    d,
    dots.map((x) => x.box),
  );
  for (const x of dots) g.appendChild(x.el);
  return g;
}

/** The memory-only kernels, by bandwidth (data-role="memory-only"): what the strip shows, as a list. */
function memoryOnlyTable(points) {
  const mem = points.filter((p) => p.memoryOnly).sort((a, b) => (b.gbps ?? 0) - (a.gbps ?? 0));
  return table(
    "memory-only",
    "Memory-only kernels (no FLOPs), by bandwidth",
    [
      { label: "kernel", get: (r) => h("span", { class: "il-mono", title: r.compileId }, r.kernel) },
      { label: "GB/s", num: 1, get: (r) => `${atMost(r)}${r.gbps}` },
      {
        label: "of peak",
        num: 1,
        get: (r) => (r.peakFraction != null ? `${atMost(r)}${fmtShare(r.peakFraction)}` : "?"),
      },
      { label: "time", num: 1, get: (r) => fmtUs(r.total_us) },
      { label: "share", num: 1, get: (r) => fmtShare(r.share) },
    ],
    mem,
  );
}

/** A rate of operations: FLOP/s, or OP/s for integer ops (`unit` "OP": Cost.integer_ops, the int8 roof). */
function fmtFlops(gflops, unit = "FLOP") {
  if (gflops >= 1000) return `${+(gflops / 1000).toPrecision(3)} T${unit}/s`;
  if (gflops >= 1) return `${+gflops.toPrecision(3)} G${unit}/s`;
  return `${+(gflops * 1000).toPrecision(3)} M${unit}/s`;
}

/** The unit of a peak_tflops key: int8's peak counts integer ops (TOP/s), the others floating-point ones. */
const peakUnit = (dtype) => (dtype === "int8" ? "OP" : "FLOP");

function table(role, title, cols, rows) {
  if (!rows || !rows.length) return null;
  return h(
    "section",
    { class: "il-section" },
    h("h3", {}, title),
    h(
      "table",
      { class: "il-table", "data-role": role },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          cols.map((c) => h("th", { class: c.num ? "il-num" : "" }, c.label)),
        ),
      ),
      h(
        "tbody",
        {},
        rows.map((r) =>
          h(
            "tr",
            {},
            cols.map((c) => h("td", { class: c.num ? "il-num il-mono" : "" }, c.get(r))),
          ),
        ),
      ),
    ),
  );
}

/** Each kernel of the report whose measured runs disagree: name -> Python's sentence (KernelProfile.noisy), for a
 * roll-up row's tooltip. */
function noisySentences(report) {
  const out = new Map();
  for (const c of report.compiles || [])
    for (const k of c.kernels || [])
      if (k.profile && k.profile.noisy && !out.has(k.name)) out.set(k.name, k.profile.noisy);
  return out;
}

/** The mark beside a roll-up row's time (data-role="noisy-mark", like the Kernels table's): the row's kernels whose
 * time is noisy, as Python names them (LineTime/ModuleTime/KindTime.noisy): "noisy" for a row of one kernel, "2 noisy"
 * else; null where none is. */
function rollupNoisy(row, sentences) {
  const names = row.noisy || [];
  const kernels = row.kernels || [];
  if (!names.length) return null;
  const title =
    kernels.length === 1
      ? sentences.get(names[0]) || ""
      : `${names.length} of ${plural(kernels.length, "kernel")} have a noisy time (their runs disagree): ${names.join(", ")}\n${sentences.get(names[0]) || ""}`;
  return [
    " ",
    h(
      "span",
      { class: "il-noisy-mark", "data-role": "noisy-mark", "data-noisy-count": String(names.length), title },
      kernels.length === 1 ? "noisy" : `${names.length} noisy`,
    ),
  ];
}

/** Draw the view into `el`. `onPick(compileId, fusedName)` selects a kernel (and switches to its compile). */
export function renderRoofline(el, report, onPick) {
  el.replaceChildren();
  const s = report.profile;
  const info = report.device_info;
  const points = rooflinePoints(report);
  if (!points.length) {
    el.appendChild(
      h(
        "p",
        { class: "il-muted il-rf-empty" },
        "No measured kernel times in this report: profile it (inspect(..., profile=True), %%inductor_lens --profile, inductor-lens run --profile) to see each kernel against the hardware's peaks.",
      ),
    );
    return;
  }
  const head = h(
    "div",
    { class: "il-rf-head", "data-role": "perf-summary" },
    s ? h("strong", { "data-role": "unattributed" }, s.unattributed_text) : null,
    s
      ? ` of ${fmtUs(s.device_total_us)} ${s.device === "cpu" ? "CPU" : "device"} time per step (${fmtUs(s.attributed_us)} in ${plural(points.length, "kernel")}; ${fmtUs(s.inside_graphs_unmatched_us)} elsewhere inside the compiled graphs, ${fmtUs(s.outside_graphs_us)} outside them) · ${s.runs_text}`
      : "",
    // a profile of one run: its times are single timings, not a ranking to trust (StepProfile.few_runs, Python's words)
    s && s.few_runs ? h("p", { class: "il-few-runs", "data-role": "few-runs" }, s.few_runs) : null,
    info
      ? h(
          "div",
          { class: "il-muted il-small", "data-role": "device-info", title: info.source },
          `${info.name}: ${info.peak_gbps != null ? info.peak_gbps + " GB/s" : "bandwidth unknown"}${Object.entries(
            info.peak_tflops || {},
          )
            .map(([k, v]) => ` · ${k} ${v} T${peakUnit(k)}/s`)
            .join("")} — ${info.source}`,
        )
      : null,
  );
  const legend = h(
    "div",
    { class: "il-muted il-small il-rf-legend" },
    "dot colour: fraction of the roof at its intensity (",
    h("i", { class: "il-rf-swatch", style: `background:${peakColour(0)}` }),
    " 0% … ",
    h("i", { class: "il-rf-swatch", style: `background:${peakColour(1)}` }),
    " 100%; grey: unknown); size: share of kernel time; kernels with no FLOPs sit in the strip on the left, by their fraction of the bandwidth; click a dot to select its kernel",
    points.some((p) => p.noisy)
      ? h(
          "span",
          { "data-role": "noisy-legend" },
          `; dashed ring: a noisy time, its runs disagree (${points.filter((p) => p.noisy).length} of ${points.length} kernels): its place rests on a stalled run`,
        )
      : null,
  );
  const pct = (r) => fmtShare(r.share);
  const sentences = noisySentences(report);
  const time = (r) => [fmtUs(r.us), rollupNoisy(r, sentences)];
  const kernelsOf = (r) =>
    h(
      "span",
      { class: "il-muted il-mono", title: r.kernels.join("\n") },
      r.kernels.length > 2 ? `${r.kernels.slice(0, 2).join(", ")}, +${r.kernels.length - 2}` : r.kernels.join(", "),
    );
  // Element.append writes a null as the text "null": a table with no rows (table() gives null) is left out
  const parts = [
    head,
    h("div", { class: "il-rf-chart", "data-role": "roofline-chart" }, chart(points, info, onPick)),
    legend,
    memoryOnlyTable(points),
    table(
      "rollup-kind",
      "Time by kernel kind",
      [
        { label: "kind", get: (r) => r.kind },
        { label: "time", num: 1, get: time },
        { label: "share", num: 1, get: pct },
        { label: "kernels", get: kernelsOf },
      ],
      s && s.by_kind,
    ),
    table(
      "rollup-module",
      "Time by nn.Module",
      [
        { label: "module", get: (r) => r.module || "(no module)" },
        { label: "time", num: 1, get: time },
        { label: "share", num: 1, get: pct },
        { label: "kernels", get: kernelsOf },
      ],
      s && s.by_module,
    ),
    table(
      "rollup-line",
      "Time by source line",
      [
        {
          label: "line",
          get: (r) =>
            r.file
              ? h(
                  "span",
                  {
                    "data-source-line": `${r.file}:${r.line}`,
                    "data-how": r.built ? "built" : "ran",
                    title: r.built ? `${r.file}: ${BUILT_ROW_TITLE}` : r.file,
                  },
                  `${basename(r.file)}:${r.line}`,
                  r.built ? builtTag() : null,
                )
              : "(no user line)",
        },
        { label: "code", get: (r) => h("code", {}, String(r.code || "").trim()) },
        { label: "time", num: 1, get: time },
        { label: "share", num: 1, get: pct },
      ],
      s && s.by_line,
    ),
    table(
      "off-estimate",
      `Measured far from Inductor's estimate (more than ×${s ? s.estimate_factor : 3} either way)`,
      [
        { label: "kernel", get: (r) => h("span", { class: "il-mono" }, r.kernel) },
        { label: "measured", num: 1, get: (r) => fmtUs(r.measured_us) },
        { label: "estimated", num: 1, get: (r) => fmtUs(r.estimated_us) },
        { label: "ratio", num: 1, get: (r) => `×${r.ratio}` },
      ],
      s && s.off_estimate,
    ),
  ];
  el.append(...parts.filter((x) => x != null));
  if (s && s.unmatched_ops && s.unmatched_ops.length) {
    el.appendChild(
      h(
        "p",
        { class: "il-muted il-small", "data-role": "unmatched-ops" },
        "inside the compiled graphs but no kernel's: ",
        s.unmatched_ops.map((o) => `${o.name} ${fmtUs(o.us)}`).join(", "),
      ),
    );
  }
}

/** Cost and fraction of peak of one kernel, for the side panel (data-role="kernel-cost"), or null. */
export function costSection(kernel) {
  const c = kernel.cost,
    p = kernel.profile || {};
  if (!c && !p.verdict) return null;
  const facts = [
    p.verdict
      ? h(
          "div",
          {
            class: "il-rf-verdict",
            "data-role": "peak-verdict",
            style: `border-left-color:${peakColour(p.peak_fraction)}`,
          },
          p.verdict,
        )
      : null,
    c
      ? h(
          "div",
          { class: "il-small" },
          `reads ${c.bytes_read != null ? bound(c, "bytes_read") + fmtBytes(c.bytes_read) : "?"}, writes ${c.bytes_written != null ? bound(c, "bytes_written") + fmtBytes(c.bytes_written) : "?"}, ${c.flops != null ? bound(c, "flops") + fmtFlopCount(c.flops, c.integer_ops) : "? FLOP"} per call`,
          p.achieved_gbps != null ? ` · ${p.at_most && p.bound === "memory" ? "≤ " : ""}${p.achieved_gbps} GB/s` : "",
          p.achieved_tflops != null
            ? ` · ${p.at_most && p.bound === "compute" ? "≤ " : ""}${fmtFlops(p.achieved_tflops * 1000, c.integer_ops ? "OP" : "FLOP")}`
            : "",
          c.arithmetic_intensity != null
            ? ` · ${(+c.arithmetic_intensity).toPrecision(3)} ${c.integer_ops ? "OP" : "FLOP"}/byte`
            : "",
        )
      : null,
    c && c.source ? h("div", { class: "il-muted il-small" }, c.source) : null,
    p.estimated_us != null
      ? h(
          "div",
          { class: "il-small", "data-role": "estimate" },
          `Inductor estimated ${fmtUs(p.estimated_us)}; measured ${fmtUs(p.per_call_us)} (×${p.estimate_ratio})`,
        )
      : null,
  ];
  return h(
    "section",
    { class: "il-section" },
    h("h3", {}, "Against the hardware"),
    h("div", { "data-role": "kernel-cost" }, facts),
  );
}

/** "at most " before a count Python named an upper bound (Cost.upper_bounds), else "". */
function bound(cost, field) {
  return (cost.upper_bounds || []).includes(field) ? "at most " : "";
}

/** "≤ " before a memory-only kernel's throughput and fraction where Python said they rest on an upper bound. */
function atMost(point) {
  return point.atMost ? "≤ " : "";
}

/** A count of operations: FLOPs, or for a kernel of integer ops (Cost.integer_ops: "int8") "32.8 kOP (int8)". */
export function fmtFlopCount(f, integer = "") {
  const unit = integer ? "OP" : "FLOP",
    of = integer ? ` (${integer})` : "";
  if (f >= 1e12) return `${+(f / 1e12).toPrecision(3)} T${unit}${of}`;
  if (f >= 1e9) return `${+(f / 1e9).toPrecision(3)} G${unit}${of}`;
  if (f >= 1e6) return `${+(f / 1e6).toPrecision(3)} M${unit}${of}`;
  if (f >= 1e3) return `${+(f / 1e3).toPrecision(3)} k${unit}${of}`;
  return `${f} ${unit}${of}`;
}

/** Map(fused node name -> peak_fraction) of one compile, for colouring boxes by fraction of peak. */
export function nodePeakFractions(compile) {
  const idx = indexCompile(compile);
  const out = new Map();
  for (const n of idx.fused) {
    const k = n.kernel && idx.kernels.get(n.kernel);
    if (k && k.profile && k.profile.peak_fraction != null) out.set(n.name, k.profile.peak_fraction);
  }
  return out;
}
