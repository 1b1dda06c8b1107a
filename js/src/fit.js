// What fits the view: how many boxes of a fusion graph one screen of its pane shows at a readable zoom,
// and the modules a graph opens expanded with so that it fills that screen (no more, no less). The graph
// reads down one column (execution order), so a screen holds about as many boxes as fit its height.
// This is the view's to decide (it knows its pane); which boxes and modules there are comes from the report.
import { initialExpansion, visibleCount } from "./data.js";

/** Pane height per box of one screen at READABLE_ZOOM. A row of the column is 84 px (a three-line box of
 * 59 px and the rank gap of 25 px), and side branches share rows: 60 px per box opens a 1000 x 700 cell
 * (a 540 px pane: 9 boxes) at GPT-2's blocks. The plan (report/modules.py) also counts the rows of each
 * opening, 60/84 of the boxes: a 4-layer encoder's layer 0 opened above layers 1-3 is 9 rows, not 6. */
export const ROW_PX = 60;
/** Graphs of at most this many boxes open fully expanded, in any pane (and any graph of at most two
 * screens of boxes): two screens of scrolling beat a click per module. */
export const ALWAYS_EXPANDED = 16;
/** Never more boxes than this on an opening graph, however tall the pane (the layout stays interactive). */
export const MAX_OPENING = 60;
/** The pane of a 1000 x 700 notebook cell, for a pane not laid out yet (a widget rendered before it is shown). */
export const DEFAULT_PANE = { width: 600, height: 540 };

/** How many boxes one screen of a pane of `height` px shows, read down one column (at least 4, at most MAX_OPENING). */
export function boxesThatFit(height) {
  return Math.min(MAX_OPENING, Math.max(4, Math.floor((height > 0 ? height : DEFAULT_PANE.height) / ROW_PX)));
}

/** The height of `host` (a graph pane), or the default pane's where it has none yet. */
export function paneHeight(host) {
  const h = host && host.getBoundingClientRect ? host.getBoundingClientRect().height : 0;
  return h > 40 ? h : DEFAULT_PANE.height;
}

/**
 * The modules of `boxes` (fused nodes with module stacks) that start expanded in a pane of `height` px.
 * With `compile.module_view` (decided in Python, report/modules.py): the opening planned for a screen of
 * this many boxes. For an older report: every module for a graph of at most two screens (or
 * ALWAYS_EXPANDED boxes); else the deepest expansion whose boxes fill one screen, widening the largest
 * modules first (data.js initialExpansion). Where no collapse fits one screen (too many top-level modules,
 * or nodes outside any module), collapsing would only hide boxes without making the graph fit: it opens
 * as it did before, with up to MAX_OPENING boxes.
 */
export function fittingExpansion(boxes, height, compile = null) {
  const fit = boxesThatFit(height);
  const planned = openingFor(compile, fit);
  if (planned) return planned;
  if (boxes.length <= Math.max(ALWAYS_EXPANDED, 2 * fit)) return initialExpansion(boxes, boxes.length);
  const expanded = initialExpansion(boxes, fit);
  if (visibleCount(boxes, expanded) <= fit) return expanded;
  return initialExpansion(boxes, MAX_OPENING);
}

/** The planned opening (Compile.module_view.openings, Python) of a screen of `fit` boxes: the last whose
 * `fit` is at most this one (else the first), as a Set; null for a report without one. */
export function openingFor(compile, fit) {
  const list = (compile && compile.module_view && compile.module_view.openings) || [];
  if (!list.length) return null;
  let pick = list[0];
  for (const o of list) if (o.fit <= fit) pick = o;
  return new Set(pick.expanded || []);
}

/** The repeated module (Compile.module_view.repeats, Python) whose key is `key`, or null. */
export function repeatOf(compile, key) {
  const list = (compile && compile.module_view && compile.module_view.repeats) || [];
  return list.find((r) => r.key === key) || null;
}

/** What a group of calls says (Compile.module_view.calls, Python): `{summary}` for a module called several times
 * (its folded box: "cell · 24 calls"), `{label}` for one of its calls ("cell · call 3 of 24"), else null. */
export function callsOf(compile, key) {
  const list = (compile && compile.module_view && compile.module_view.calls) || [];
  for (const c of list) {
    if (c.module === key) return { summary: c.summary };
    const i = (c.keys || []).indexOf(key);
    if (i >= 0) return { label: c.labels[i] };
  }
  return null;
}

/** The groups open, by name, where nothing is selected: "layers.0-3 ×4 open", "ln_f, lm_head and 3 more open"
 * (a repeat by its label and count), else "top level". A count alone ("2 modules expanded") read as if boxes
 * were open where the groups opened were single boxes. */
export function openText(ix, exp) {
  if (!ix || !exp.size) return "top level";
  const names = [...exp].map((m) => {
    const r = repeatOf(ix.compile, m);
    const c = callsOf(ix.compile, m);
    return r ? `${r.label} ×${r.modules.length}` : (c && (c.label || c.summary)) || m;
  });
  const shown = names.slice(0, 3).join(", ");
  return `${names.length > 3 ? `${shown} and ${names.length - 3} more` : shown} open`;
}
