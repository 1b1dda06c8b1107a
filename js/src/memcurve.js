// The Memory view's curve: the live bytes while each fused node of a compile runs over the execution order. Its
// axis is cut by module at the level of the repeated layers (Memory.regions: `0 1 2 … 31` under
// `layers.1-31`, then `norm`, `head`), the peak is named above the plot where the curve never reaches, and
// a curve of more points than fit as dots is drawn as a line over an area, with one hover and click target
// per column (the nearest fused node). Python computed every number and region (Compile.memory); this module
// only draws them.

import { fmtBytes } from "./data.js";
import { setText, svg } from "./dom.js";

/** The chart is drawn at its pane's width in CSS px (chartWidth), so that its text is 11 px and all of it in the
 * pane at every width: W where the pane is not laid out yet (a hidden view), never below MIN_W (the view scrolls
 * sideways below that) nor above MAX_W (.il-mem-plot's max-width). A 640-unit chart scaled to its pane drew its
 * text at 8 px in a 470 px stage, and held at 582 px to keep 10 px it ran 90 px under JupyterLab's side panel
 * at 1280 px, its last points and axis labels hidden. */
export const W = 640;
export const MIN_W = 360;
export const MAX_W = 1100;
export const H = 250;
export const PAD = { l: 62, r: 14, t: 26, b: 58 };
/** Below this many pixels between two points the dots would touch: the curve is a line with hover targets. */
const DOT_SPACING = 6;
/** An axis label is drawn only if it keeps this many pixels (at 11 px text, about 6.2 px a character). */
const CHAR_W = 6.2;
/** The width of a character of the peak's label (11 px, bold). */
const PEAK_CHAR_W = 6.8;

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

/** The axis's label of tick `v` of `ticks` (byteTicks), every label in the unit of the step between them: "500 KiB,
 * 1000 KiB, 1500 KiB", where fmtBytes wrote "500 KiB, 1000 KiB, 1.46 MiB" (two units on one axis, the top one in
 * hundredths). */
export function tickText(v, ticks) {
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : v;
  if (!v || !(step > 0)) return fmtBytes(v);
  const units = [
    [1024 ** 4, "TiB"],
    [1024 ** 3, "GiB"],
    [1024 ** 2, "MiB"],
    [1024, "KiB"],
  ];
  const [size, name] = units.find(([u]) => step >= u) || [1, "B"];
  return `${+(v / size).toFixed(2)} ${name}`;
}

/** How far the first and last points sit inside the plot: a selected point (a dot of radius 6 and its ring) at
 * the plot's very edge covered the byte axis's labels ("0 B" read "0 E"). */
const INSET = 10;

/** The width to draw the chart at in a plot of `px` CSS px (0: not laid out). */
export function chartWidth(px) {
  return px > 0 ? Math.round(Math.min(MAX_W, Math.max(MIN_W, px))) : W;
}

/** The x of point `i` of `n` in a chart `width` wide. */
export function xOf(i, n, width = W) {
  const w = width - PAD.l - PAD.r - 2 * INSET;
  return PAD.l + INSET + (n <= 1 ? w / 2 : (i * w) / (n - 1));
}

/** Whether `n` points are too close to draw as dots (then a line with column hover targets). */
export function isDense(n, width = W) {
  return n > 1 && (width - PAD.l - PAD.r - 2 * INSET) / (n - 1) < DOT_SPACING;
}

/**
 * Which region labels fit under the axis without overlapping: indices into `regions`, each label centred
 * under its region and kept if it clears the labels already kept (plus a gap). Tried in this order: the
 * first and last instance of each repeat (so `1 … 31` always read), the modules outside the repeats
 * (`embed`, `head`), then the other instances from the left.
 */
export function fittingLabels(regions, n, width = W) {
  const at = (r) => (xOf(r.first, n, width) + xOf(r.last, n, width)) / 2;
  const span = (r) => [at(r) - (r.label.length * CHAR_W) / 2, at(r) + (r.label.length * CHAR_W) / 2];
  const tier = (r, i) => {
    if (!r.repeat) return 1;
    const prev = regions[i - 1],
      next = regions[i + 1];
    return !prev || prev.repeat !== r.repeat || !next || next.repeat !== r.repeat ? 0 : 2;
  };
  const order = regions
    .map((r, i) => [tier(r, i), i])
    .filter(([, i]) => regions[i].label)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([, i]) => i);
  const chosen = [];
  for (const i of order) {
    const [a0, a1] = span(regions[i]);
    if (
      chosen.every((j) => {
        const [b0, b1] = span(regions[j]);
        return a1 + 4 <= b0 || b1 + 4 <= a0;
      })
    )
      chosen.push(i);
  }
  return chosen.sort((a, b) => a - b);
}

/** Runs of regions of one repeat: [{repeat, first, last}] (indices into the timeline). The top level's own ops
 * between two instances (a residual add between blocks: a region of no module) keep the run open, another module
 * ends it: a backward's blocks read as one bracket, not one per block. */
export function repeatRuns(regions) {
  const out = [];
  let open = null;
  for (const r of regions) {
    if (r.repeat && open && open.repeat === r.repeat) open.last = r.last;
    else if (r.repeat) {
      open = { repeat: r.repeat, first: r.first, last: r.last };
      out.push(open);
    } else if (r.module) open = null;
  }
  return out;
}

/** Which runs of `runs` (repeatRuns) have their repeat's name under their bracket: one per repeat, its widest run
 * (the first of the widest), and only where the name clears the names already kept. A checkpointed backward's
 * last layer, cut by the final norm's backward into runs of 2, 5 and 101 nodes, printed "layers.3-0" three times,
 * the first two on top of each other. */
export function runLabels(runs, n, width = W) {
  const span = (r) => xOf(r.last, n, width) - xOf(r.first, n, width);
  const widest = new Map();
  runs.forEach((r, i) => {
    const j = widest.get(r.repeat);
    if (j === undefined || span(r) > span(runs[j])) widest.set(r.repeat, i);
  });
  const box = (r) => {
    const mid = (xOf(r.first, n, width) + xOf(r.last, n, width)) / 2;
    return [mid - (r.repeat.length * CHAR_W) / 2, mid + (r.repeat.length * CHAR_W) / 2];
  };
  const chosen = [];
  for (const i of [...widest.values()].sort((a, b) => span(runs[b]) - span(runs[a]) || a - b)) {
    const [a0, a1] = box(runs[i]);
    if (
      chosen.every((j) => {
        const [b0, b1] = box(runs[j]);
        return a1 + 4 <= b0 || b1 + 4 <= a0;
      })
    )
      chosen.push(i);
  }
  return chosen.sort((a, b) => a - b);
}

/** Where the peak's label of `chars` characters goes over a peak at `px` in a chart `width` wide: [x, text-anchor],
 * starting at the peak's line where it fits to the right, else ending there, else against the chart's right edge
 * (a long label, "peak of the graph's buffers 5.3 MiB", over a peak in the middle of a narrow chart). */
export function peakLabelAt(px, chars, width = W) {
  const w = chars * PEAK_CHAR_W;
  if (px - 4 + w <= width - 2) return [px - 4, "start"];
  if (px + 4 - w >= 2) return [px + 4, "end"];
  return [width - 2, "end"];
}

/** The points of `memory.timeline` whose live bytes are a lower bound (a buffer of a data-dependent size live then:
 * Memory.uncounted_at, Python's), by node name. */
export function leastPoints(memory) {
  return new Set(memory.uncounted_at || []);
}

/** The curve's line cut into runs [first, last, lower] over `lower` (one boolean a point: a lower bound): a segment
 * is a lower bound's (dashed) where either end is, so an exact point's line stays solid up to it and a lower bound
 * is reached by a dashed line. Consecutive runs share their end point. */
export function lineRuns(lower) {
  const out = [];
  for (let i = 0; i + 1 < lower.length; i++) {
    const dashed = !!(lower[i] || lower[i + 1]);
    const last = out[out.length - 1];
    if (last && last[2] === dashed) last[1] = i + 1;
    else out.push([i, i + 1, dashed]);
  }
  return out;
}

/** The runs [first, last] of consecutive points of `pts` with a net_bytes (MemoryPoint.net_bytes): the second
 * line's parts, two points at least each. */
export function netRuns(pts) {
  const out = [];
  let start = -1;
  pts.forEach((p, i) => {
    const has = p.net_bytes != null;
    if (has && start < 0) start = i;
    if (start >= 0 && (!has || i === pts.length - 1)) {
      const end = has ? i : i - 1;
      if (end > start) out.push([start, end]);
      start = -1;
    }
  });
  return out;
}

/** What point `i` is, most telling first: its live bytes, the module region it is in, its number (#0 first,
 * as the fusion graph and the panel number fused nodes) and its fused node's label, cut to `max` characters. */
export function pointText(idx, memory, i, max = 0) {
  const p = (memory.timeline || [])[i];
  if (!p) return "";
  const e = idx.byName.get(p.node);
  const label = e ? e.node.label || p.node : p.node;
  const reg = (memory.regions || []).find((r) => r.first <= i && i <= r.last);
  const least = (memory.uncounted_at || []).includes(p.node) ? "≥ " : ""; // a data-dependent buffer live (Python's)
  const net = p.net_bytes != null ? ` (${fmtBytes(p.net_bytes)} less the inputs freed by then)` : "";
  const text = `${least}${fmtBytes(p.live_bytes)} live${net} while #${i} runs${reg && reg.module ? ` in ${reg.module}` : ""}: ${label}`;
  return max && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The SVG of the curve of `memory` (compile index `idx`), `width` px wide (chartWidth), the selected node's point
 * marked. */
export function curve(idx, memory, selected, width = W) {
  const W = width;
  const pts = memory.timeline || [];
  const n = pts.length;
  const regions = memory.regions || [];
  const dense = isDense(n, W);
  const max = Math.max(memory.peak_bytes || 0, 1);
  const ticks = byteTicks(max);
  const top = Math.max(max, ticks[ticks.length - 1]);
  const x = (i) => xOf(i, n, W);
  const y = (b) => H - PAD.b - (b / top) * (H - PAD.t - PAD.b);
  const half = n > 1 ? (W - PAD.l - PAD.r - 2 * INSET) / (n - 1) / 2 : (W - PAD.l - PAD.r) / 2;
  const g = svg("svg", {
    viewBox: `0 0 ${W} ${H}`,
    class: "il-mem-curve" + (dense ? " il-mem-dense" : ""),
    "data-role": "memory-curve",
    "data-dense": dense ? "1" : "0",
    role: "img",
    "aria-label": `live bytes over ${n} fused nodes, peak ${fmtBytes(memory.peak_bytes)}`,
  });
  // the regions: every other one shaded, a tick at each boundary, the labels that fit, the repeats named
  const base = H - PAD.b;
  regions.forEach((r, i) => {
    const x0 = Math.max(PAD.l, x(r.first) - half),
      x1 = Math.min(W - PAD.r, x(r.last) + half);
    if (i % 2)
      g.appendChild(
        svg("rect", { x: x0, y: PAD.t, width: Math.max(0, x1 - x0), height: base - PAD.t, class: "il-mem-band" }),
      );
    if (i) g.appendChild(svg("line", { x1: x0, x2: x0, y1: base, y2: base + 4, class: "il-mem-axis" }));
  });
  for (const i of fittingLabels(regions, n, W)) {
    const r = regions[i];
    g.appendChild(
      svg(
        "text",
        {
          x: ((x(r.first) + x(r.last)) / 2).toFixed(1),
          y: base + 15,
          "text-anchor": "middle",
          class: "il-mem-tick",
          "data-role": "memory-region",
          "data-module": r.module,
        },
        r.label,
        svg("title", {}, `${r.module}: fused nodes #${r.first}-#${r.last}`),
      ),
    );
  }
  const runs = repeatRuns(regions);
  const named = new Set(runLabels(runs, n, W));
  runs.forEach((run, i) => {
    const x0 = x(run.first) - half + 1,
      x1 = x(run.last) + half - 1;
    g.appendChild(
      svg("path", { d: `M${x0},${base + 20} v4 H${x1} v-4`, class: "il-mem-bracket", "data-role": "memory-repeat" }),
    );
    if (named.has(i))
      g.appendChild(
        svg(
          "text",
          {
            x: ((x0 + x1) / 2).toFixed(1),
            y: base + 36,
            "text-anchor": "middle",
            class: "il-mem-tick",
            "data-role": "memory-repeat-name",
          },
          run.repeat,
        ),
      );
  });
  g.appendChild(svg("line", { x1: PAD.l, x2: W - PAD.r, y1: base, y2: base, class: "il-mem-axis" }));
  for (const t of ticks) {
    if (t) g.appendChild(svg("line", { x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), class: "il-mem-grid" }));
    g.appendChild(
      svg("text", { x: PAD.l - 6, y: y(t) + 4, "text-anchor": "end", class: "il-mem-tick" }, tickText(t, ticks)),
    );
  }
  g.appendChild(
    svg("text", { x: (PAD.l + W - PAD.r) / 2, y: H - 4, "text-anchor": "middle", class: "il-mem-tick il-mem-title" }, [
      `fused nodes in execution order (${n})${regions.length > 1 ? ", by module" : ""}`,
    ]),
  );
  const least = leastPoints(memory);
  if (n > 1) {
    const d = pts.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.live_bytes).toFixed(1)}`).join(" ");
    g.appendChild(
      svg("path", { d: `${d} L${x(n - 1).toFixed(1)},${base} L${x(0).toFixed(1)},${base} Z`, class: "il-mem-area" }),
    );
    // the line: solid between exact points, dashed into and between lower bounds (a data-dependent buffer live)
    for (const [a, b, lower] of lineRuns(pts.map((p) => least.has(p.node)))) {
      const part = pts
        .slice(a, b + 1)
        .map((p, k) => `${k ? "L" : "M"}${x(a + k).toFixed(1)},${y(p.live_bytes).toFixed(1)}`)
        .join(" ");
      g.appendChild(
        svg("path", {
          d: part,
          class: lower ? "il-mem-line il-mem-least-line" : "il-mem-line",
          "data-role": lower ? "memory-least-line" : null,
        }),
      );
    }
  }
  // where the graph frees inputs on the way (a backward): its second line, the live bytes less the inputs freed by
  // then (MemoryPoint.net_bytes, Python's; null after an input of a size not known is freed: the line stops), dashed,
  // at the axis where the graph holds less than at its call
  for (const [a, b] of netRuns(pts)) {
    const part = pts
      .slice(a, b + 1)
      .map((p, k) => `${k ? "L" : "M"}${x(a + k).toFixed(1)},${y(Math.max(0, p.net_bytes)).toFixed(1)}`)
      .join(" ");
    g.appendChild(svg("path", { d: part, class: "il-mem-netline", "data-role": "memory-net-line" }));
  }
  // the device's high-water mark where it is not the curve's peak (a backward frees its inputs on the way): Python's
  // words (Memory.curve_high_water_text) at the height Python puts it (Memory.high_water_line_bytes: the measured
  // mark, else the bound of it the words say; derived on every load, so a report made before it has it too), marked
  // on the second line where it is that line's top (Memory.high_water_node), else a flat line across
  const high = memory.high_water_line_bytes;
  const late = [];
  const highAt = memory.high_water_node ? pts.findIndex((p) => p.node === memory.high_water_node) : -1;
  if (memory.curve_high_water_text && high != null && high <= top && highAt >= 0) {
    const hx = x(highAt);
    const label = memory.curve_high_water_text;
    const [lx, anchor] = peakLabelAt(hx, label.length * (CHAR_W / PEAK_CHAR_W), W);
    const ly = y(high) - 9 < PAD.t + 12 ? y(high) + 17 : y(high) - 9; // under its mark where the peak's label is near
    // over the curve's points (drawn below), so that neither the mark nor its words hide under them
    late.push(
      svg(
        "circle",
        { cx: hx.toFixed(1), cy: y(high).toFixed(1), r: 4, class: "il-mem-highdot", "data-role": "memory-high-water" },
        svg("title", {}, memory.high_water_text || label),
      ),
      svg(
        "text",
        { x: lx, y: ly, "text-anchor": anchor, class: "il-mem-highlabel", "data-role": "memory-high-water-label" },
        label,
      ),
    );
  } else if (memory.curve_high_water_text && high != null && high <= top) {
    g.appendChild(
      svg(
        "line",
        {
          x1: PAD.l,
          x2: W - PAD.r,
          y1: y(high),
          y2: y(high),
          class: "il-mem-highline",
          "data-role": "memory-high-water",
        },
        svg("title", {}, memory.high_water_text || memory.curve_high_water_text),
      ),
    );
    g.appendChild(
      svg(
        "text",
        {
          x: PAD.l + 4,
          y: y(high) - 4 < PAD.t + 12 ? y(high) + 13 : y(high) - 4, // under its line where the peak's label is near
          class: "il-mem-highlabel",
          "data-role": "memory-high-water-label",
        },
        memory.curve_high_water_text,
      ),
    );
  }
  const peakAt = pts.findIndex((p) => p.node === memory.peak_node);
  if (peakAt >= 0) {
    const px = x(peakAt);
    const label = memory.curve_peak_text || `peak ${fmtBytes(memory.peak_bytes)}`;
    const [lx, anchor] = peakLabelAt(px, label.length, W);
    g.appendChild(svg("line", { x1: px, x2: px, y1: PAD.t - 6, y2: base, class: "il-mem-peakline" }));
    g.appendChild(
      svg(
        "text",
        {
          x: lx,
          y: PAD.t - 10,
          "text-anchor": anchor,
          class: "il-mem-peaklabel",
          "data-role": "memory-peak",
        },
        // Python's words (Memory.curve_peak_text): "≥" where a data-dependent buffer is left out, and which peak it is
        // where the graph frees inputs on the way
        label,
        svg("title", {}, memory.peak_text || ""),
      ),
    );
  }
  const r = dense ? 3 : n > 100 ? 3.5 : 5;
  pts.forEach((p, i) => {
    const cls = ["il-mem-point"];
    if (p.node === memory.peak_node) cls.push("il-mem-peak");
    if (least.has(p.node)) cls.push("il-mem-least"); // a lower bound: drawn hollow
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
          "data-least": least.has(p.node) ? "1" : null,
        },
        svg(
          "title",
          {},
          pointText(idx, memory, i) +
            ((p.allocates || []).length ? `; allocates ${p.allocates.map((b) => b.name).join(", ")}` : "") +
            ((p.frees || []).length ? `; then frees ${p.frees.map((b) => b.name).join(", ")}` : ""),
        ),
      ),
    );
  });
  for (const el of late) g.appendChild(el);
  if (dense) {
    // one target over the whole plot: the column under the pointer is the nearest fused node
    g.appendChild(
      svg("g", { class: "il-mem-hover", "data-role": "memory-hover", visibility: "hidden" }, [
        svg("line", { y1: PAD.t, y2: base, class: "il-mem-hoverline" }),
        svg("circle", { r: 4, class: "il-mem-hoverdot" }),
        svg("text", { x: 4, y: H - 4, class: "il-mem-hovertext" }),
      ]),
    );
    g.appendChild(
      svg("rect", {
        x: PAD.l - half,
        y: PAD.t,
        width: W - PAD.l - PAD.r + 2 * half,
        height: base - PAD.t,
        class: "il-mem-hit",
        "data-role": "memory-hit",
      }),
    );
  }
  return g;
}

/** The width curve `g` was drawn at. */
function widthOf(g) {
  const v = g.viewBox && g.viewBox.baseVal;
  return v && v.width ? v.width : W;
}

/** The index of the point nearest to a pointer event over the curve `g` of `n` points. */
export function indexAt(g, event, n) {
  const m = g.getScreenCTM();
  if (!m || n < 1) return -1;
  const W = widthOf(g);
  const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(m.inverse());
  const i = n <= 1 ? 0 : Math.round(((p.x - PAD.l - INSET) * (n - 1)) / (W - PAD.l - PAD.r - 2 * INSET));
  return Math.max(0, Math.min(n - 1, i));
}

/** Show the hover guide of a dense curve at point `i` (or hide it for -1). */
export function hoverAt(g, idx, memory, i) {
  const hov = g.querySelector('[data-role="memory-hover"]');
  if (!hov) return;
  const pt = i >= 0 ? g.querySelector(`[data-role="memory-point"][data-index="${i}"]`) : null;
  if (!pt) {
    hov.setAttribute("visibility", "hidden");
    g.classList.remove("il-mem-hovering");
    return;
  }
  const cx = Number(pt.getAttribute("cx")),
    cy = Number(pt.getAttribute("cy"));
  const [line, dot, text] = hov.children;
  line.setAttribute("x1", cx);
  line.setAttribute("x2", cx);
  dot.setAttribute("cx", cx);
  dot.setAttribute("cy", cy);
  setText(text, pointText(idx, memory, i, Math.floor((widthOf(g) - 8) / CHAR_W)));
  hov.dataset.index = String(i);
  hov.setAttribute("visibility", "visible");
  g.classList.add("il-mem-hovering");
}
