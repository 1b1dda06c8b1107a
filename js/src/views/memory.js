// The Memory view (data-view="memory"): the live bytes while each fused node of the compile runs, as a curve over
// the execution order (one point per fused node; a click selects the node, the selected node's point is
// marked), the peak and the buffers alive there, and for a training step's forward the tensors saved for
// the backward (a sortable table; a click selects the producer), its roll-ups and the recomputed ops.
// Python computed every number (Compile.memory, docs/report-schema.md "Memory"); this module only draws.

import { basename, fmtBytes, plural } from "../data.js";
import { breakable, h, keepEnd, svg } from "../dom.js";
import { BUILT_ROW_TITLE, builtTag } from "../linepanel.js";
import { byteTicks, chartWidth, curve, hoverAt, indexAt } from "../memcurve.js";
import { nodeNumber, sizesText } from "../text.js";

/** Rows of a list at first sight; the rest fold under "N more". */
const LIST_TOP = 8;
/** Rows of the one-row-per-tensor table drawn at a time ("show more" adds as many). */
export const PAGE = 200;

/** What a row's "your line" cell says: its line as Python decided it (``user_line``, a RowLine: the line that ran
 * its op, else the one that built its module, marked built), or nothing. */
function lineCell(line) {
  if (!line) return h("td", { class: "il-mono" });
  return h(
    "td",
    { class: "il-mono", "data-role": "row-line", "data-how": line.built ? "built" : "ran" },
    `${basename(line.file)}:${line.line}`,
    line.built ? builtTag(BUILT_ROW_TITLE) : null,
  );
}

/** A cell of a long text (a copy kernel's label names every input it copies, an op's name
 * `_scaled_dot_product_flash_attention_for_cpu: output`): its column gives up the width the table lacks to fit its
 * pane (.il-mem-fit), the text cut there with an ellipsis, whole in its tooltip; `extra` under it (a note, wrapped). */
function cutCell(text, extra = null, title = text) {
  return h(
    "td",
    { class: "il-mono il-cut", title: title || null },
    extra ? h("div", { class: "il-cut-text" }, text) : text,
    extra,
  );
}

/** A shape as its cell writes it: broken only where a symbolic shape meets the sizes it is counted at
 * (`[s77, 4, 64, 32] =` over `[8, 4, 64, 32]`), never inside a list of sizes. */
export function shapeText(shape) {
  return String(shape || "").replace(/, /g, ",\u00a0");
}

/** A row's source link (the store's ``sourceLine``): ``file:line`` of its ``user_line``, or "". */
const lineKey = (line) => (line ? `${line.file}:${line.line}` : "");

export { byteTicks };

function facts(idx, memory) {
  const pts = memory.timeline || [];
  const at = pts.findIndex((p) => p.node === memory.peak_node);
  const e = idx.byName.get(memory.peak_node);
  const items = [
    // the words are Python's (Memory.peak_text, peak_note, high_water_text): the peak of the graph's own buffers
    // is not the device's high-water mark where the graph frees inputs on the way (a backward)
    h(
      "span",
      { class: "il-chip", "data-role": "memory-peak-fact", title: memory.peak_note || null },
      memory.peak_text || `peak ${fmtBytes(memory.peak_bytes)}${memory.sizes_at ? ` (${memory.sizes_at})` : ""}`,
      at >= 0 ? ` at ${e ? e.node.label || memory.peak_node : memory.peak_node}` : "",
      at >= 0 && e && (e.node.module_stack || []).length
        ? ` in ${e.node.module_stack[e.node.module_stack.length - 1]}`
        : "",
      at >= 0 ? ` (${nodeNumber(at, pts.length)})` : "",
    ),
    h("span", { class: "il-chip", "data-role": "memory-measured" }, memory.high_water_text || ""),
    // what the graph holds apart from the curve, in Python's words (Memory.held_text: inputs, weights, freed inputs)
    h("span", { class: "il-chip", "data-role": "memory-inputs" }, memory.held_text || ""),
  ];
  if (memory.saved_bytes == null)
    items.push(
      h(
        "span",
        { class: "il-chip", "data-role": "memory-saved-unknown" },
        "saved for backward: not known (its backward did not compile in this capture: run .backward() in it)",
      ),
    );
  else if ((memory.saved_for_backward || []).length)
    items.push(
      h(
        "span",
        { class: "il-chip", "data-role": "memory-saved-total" },
        // Python's words (Memory.saved_text: "≥" where a saved tensor's size is data-dependent); a report before it
        memory.saved_text ||
          `saved for backward ${fmtBytes(memory.saved_bytes)}${memory.sizes_at ? ` (${memory.sizes_at})` : ""} ` +
            `in ${plural(memory.saved_for_backward.length, "tensor")}, ` +
            `${fmtBytes(memory.saved_activation_bytes || 0)} of it made by the forward (held until the backward)`,
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

// the columns a reader needs first come first (a narrow pane scrolls the rest into view): what, how much, where
const SAVED_COLUMNS = [
  { key: "order", label: "#", num: true },
  { key: "name", label: "tensor" },
  { key: "module", label: "module" },
  { key: "bytes", label: "bytes", num: true },
  { key: "line", label: "your line" },
  { key: "kind", label: "kind" },
  { key: "shape", label: "shape" },
  { key: "dtype", label: "dtype" },
];

const GROUP_COLUMNS = [
  { key: "order", label: "#", num: true },
  { key: "module", label: "module" },
  { key: "what", label: "op" },
  {
    key: "count",
    label: "tensors",
    num: true,
    title: "how many tensors the row holds (over its layers, where it folds repeated ones)",
  },
  { key: "bytes", label: "total", num: true, title: "the bytes of all the row's tensors together" },
  { key: "each", label: "each", num: true, title: "the bytes of one of them" },
  { key: "line", label: "your line" },
  { key: "kind", label: "kind" },
  { key: "shape", label: "shape" },
  { key: "dtype", label: "dtype" },
];

/** `rows` sorted by `sort` ("bytes", "-bytes", ...; ties in `order`). */
function sortRows(rows, sort) {
  const desc = String(sort || "").startsWith("-");
  const key = String(sort || "order").replace(/^-/, "");
  return rows.sort((a, b) => {
    const x = a[key],
      y = b[key];
    if (x === y) return a.order - b.order;
    if (x == null) return 1;
    if (y == null) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return desc ? -c : c;
  });
}

/** Rows of the saved-for-backward table, one per tensor, sorted by `sort` ("bytes", "-bytes", ...). */
export function savedRows(memory, sort) {
  const rows = (memory.saved_for_backward || []).map((s, i) => ({
    order: i + 1,
    name: s.name,
    display: s.display || "",
    shape: sizesText(s.shape || [], s.shape_hint),
    dtype: s.dtype || "",
    bytes: s.bytes,
    kind: s.kind,
    module: s.module || "",
    line: s.user_line ? `${basename(s.user_line.file)}:${s.user_line.line}` : "",
    userLine: s.user_line || null,
    fx: s.fx_node,
    shown: s.display || s.name, // what the tensor column shows, and sorts by
    // Python's words: a view of another op's output, a storage another row counts (SavedTensor.note, shares)
    note: s.note || "",
    shares: s.shares || "",
  }));
  return sortRows(rows, String(sort || "").replace(/^(-?)name$/, "$1shown"));
}

/** Rows of the saved-for-backward table, one per repeated thing (Memory.saved_groups, in Python's order). */
export function groupRows(memory, sort) {
  const rows = (memory.saved_groups || []).map((g, i) => ({
    order: i + 1,
    module: g.module || "",
    what: g.what || "",
    count: g.count,
    bytes: g.bytes,
    each: g.each,
    kind: g.kind,
    shape: sizesText(g.shape || [], g.shape_hint),
    dtype: g.dtype || "",
    line: g.user_line ? `${basename(g.user_line.file)}:${g.user_line.line}` : "",
    userLine: g.user_line || null,
    fx: g.fx_node,
    names: g.names || [],
    note: g.note || "",
    shared: g.shared || 0,
  }));
  return sortRows(rows, sort);
}

/** A table in a box of the view's width that scrolls sideways: a wide table never widens the whole view. */
function table(cls, role, head, rows) {
  return h(
    "div",
    { class: "il-mem-scroll" },
    h(
      "table",
      { class: `il-table il-mem-fit ${cls}`, "data-role": role },
      h("thead", {}, h("tr", {}, head)),
      h("tbody", {}, rows),
    ),
  );
}

function sortHead(columns, sort) {
  const key = sort.replace(/^-/, ""),
    desc = sort.startsWith("-");
  return columns.map((c) =>
    h(
      "th",
      {
        class: (c.num ? "il-num " : "") + "il-sortable",
        "data-sort": c.key,
        "aria-sort": c.key === key ? (desc ? "descending" : "ascending") : null,
        title: c.title ? `${c.title}; sort by ${c.label}` : `sort by ${c.label}`,
      },
      c.label,
      c.key === key ? (desc ? " ▾" : " ▴") : "",
    ),
  );
}

/** The table's opening order: one row per tensor largest first; groups in Python's order. */
const DEFAULT_SORT = { tensors: "-bytes", groups: "order" };

const INPUT_TITLE = "a forward input (parameter, buffer, argument): kept alive anyway";
const COPY_TITLE =
  "a copy of a forward input that Inductor laid out anew (channels-last, for a convolution on a CPU): held until the backward";
const kindTitle = (kind) => (kind === "input" ? INPUT_TITLE : kind === "copy" ? COPY_TITLE : "");
const bytesText = (b) => (b == null ? "?" : fmtBytes(b));

function peakTable(idx, memory) {
  const bufs = memory.peak_buffers || [];
  if (!bufs.length) return null;
  const all = memory.peak_buffer_count || 0;
  return h(
    "section",
    { class: "il-section" },
    h(
      "h3",
      {},
      all > bufs.length
        ? `alive at the peak: the ${bufs.length} largest of ${plural(all, "buffer")}`
        : `alive at the peak (${plural(bufs.length, "largest buffer")})`,
    ),
    table(
      "il-mem-table",
      "memory-peak-buffers",
      ["buffer", "bytes", "module", "op", "your line", "written by"].map((t, i) =>
        h("th", { class: i === 1 ? "il-num" : "" }, t),
      ),
      bufs.map((b) => {
        const e = idx.byName.get(b.node);
        return h(
          "tr",
          { "data-role": "memory-buffer-row", "data-fused": b.node, "data-line": lineKey(b.user_line) },
          h("td", { class: "il-mono" }, b.name),
          h("td", { class: "il-num il-mono" }, fmtBytes(b.bytes)),
          h("td", { class: "il-mono" }, b.module || ""),
          cutCell(b.op || b.fx_node || "", null, b.op && b.fx_node ? `${b.op} (${b.fx_node})` : b.op || b.fx_node),
          lineCell(b.user_line),
          cutCell(e ? e.node.label || b.node : b.node),
        );
      }),
    ),
  );
}

/** The graph constants the compiled graph holds and its kernels read (`Memory.constants`, largest first: under
 * freezing its weights, packed ones at their packed size), each by the parameter it comes from, Inductor's name
 * beside it. */
export function constantRows(memory) {
  return (memory.constants || []).map((c) => ({
    name: c.name,
    shown: c.display || c.name,
    inductor: c.display ? c.name : "", // Inductor's name, beside the user's
    bytes: fmtBytes(c.bytes),
    shape: c.shape ? sizesText(c.shape) : "",
    dtype: c.dtype || "",
  }));
}

function constantsTable(memory) {
  const rows = constantRows(memory);
  if (!rows.length) return null;
  return h(
    "section",
    { class: "il-section", "data-role": "memory-constants-section" },
    h(
      "h3",
      {},
      `held as graph constants (${plural(rows.length, "tensor")}, ${fmtBytes(memory.constant_bytes || 0)}; not in the curve)`,
    ),
    table(
      "il-mem-table",
      "memory-constants",
      ["constant", "bytes", "shape", "dtype"].map((t, i) => h("th", { class: i === 1 ? "il-num" : "" }, t)),
      rows.map((c) =>
        h(
          "tr",
          { "data-role": "memory-constant-row", "data-name": c.name },
          h(
            "td",
            { class: "il-mono" },
            c.shown,
            c.inductor ? h("span", { class: "il-muted" }, ` ${c.inductor}`) : null,
          ),
          h("td", { class: "il-num il-mono" }, c.bytes),
          h("td", { class: "il-mono" }, c.shape),
          h("td", { class: "il-mono" }, c.dtype),
        ),
      ),
    ),
  );
}

function groupTable(idx, memory, sort) {
  const head = sortHead(GROUP_COLUMNS, sort);
  const body = groupRows(memory, sort).map((r) =>
    h(
      "tr",
      {
        "data-role": "saved-group-row",
        "data-module": r.module,
        "data-what": r.what,
        "data-count": String(r.count),
        "data-names": r.names.join(" "),
        "data-fused": idx.fxOwner.get(r.fx) || "",
        "data-line": lineKey(r.userLine),
        class: r.kind === "input" ? "il-muted" : "",
        title:
          (kindTitle(r.kind) ? `${kindTitle(r.kind)}. ` : "") +
          `${plural(r.count, "tensor")}: ${r.names.slice(0, 12).join(", ")}${r.names.length > 12 ? ", …" : ""}`,
      },
      h("td", { class: "il-num il-muted" }, String(r.order)),
      h("td", { class: "il-mono" }, r.module),
      cutCell(
        r.what,
        // Python's words (SavedGroup.note): a storage the row's tensors share, counted once (here, or in another row)
        r.note ? h("div", { class: "il-muted il-small il-mem-note", "data-role": "saved-group-note" }, r.note) : null,
      ),
      h("td", { class: "il-num" }, String(r.count)),
      // a row whose every tensor views a storage another row counts: its 0 B is no byte of its own, not "free"
      h(
        "td",
        { class: r.shared && r.shared === r.count ? "il-num il-mono il-muted" : "il-num il-mono" },
        bytesText(r.bytes),
      ),
      h("td", { class: "il-num il-mono il-muted" }, r.count > 1 ? bytesText(r.each) : ""),
      lineCell(r.userLine),
      h("td", {}, r.kind),
      h("td", { class: "il-mono il-mem-shape" }, shapeText(r.shape)),
      h("td", { class: "il-mono" }, r.dtype),
    ),
  );
  return table("il-mem-table", "saved-groups", head, body);
}

function tensorTable(idx, memory, sort, shown) {
  const rows = savedRows(memory, sort);
  const body = rows.slice(0, shown).map((r) =>
    h(
      "tr",
      {
        "data-role": "saved-row",
        "data-name": r.name,
        "data-fused": idx.fxOwner.get(r.fx) || "",
        "data-line": lineKey(r.userLine),
        class: r.kind === "input" ? "il-muted" : "",
        title: kindTitle(r.kind),
      },
      h("td", { class: "il-num il-muted" }, String(r.order)),
      // an input by the name the user knows (x, fc1.weight), torch's (primals_3) beside it for the FX view
      h(
        "td",
        { class: "il-mono" },
        r.shown,
        r.display ? h("span", { class: "il-muted" }, ` ${r.name}`) : null,
        r.note ? h("div", { class: "il-muted il-small il-mem-note", "data-role": "saved-note" }, r.note) : null,
      ),
      h("td", { class: "il-mono" }, r.module),
      // a storage another row counts: its bytes are not added again (the header's total counts it once)
      h("td", { class: r.shares ? "il-num il-mono il-muted" : "il-num il-mono" }, bytesText(r.bytes)),
      lineCell(r.userLine),
      h("td", {}, r.kind),
      h("td", { class: "il-mono il-mem-shape" }, shapeText(r.shape)),
      h("td", { class: "il-mono" }, r.dtype),
    ),
  );
  const more = rows.length - Math.min(shown, rows.length);
  return [
    table("il-mem-table", "saved-table", sortHead(SAVED_COLUMNS, sort), body),
    more > 0
      ? h(
          "button",
          { class: "il-btn il-small-btn il-mem-more", type: "button", "data-role": "saved-more" },
          `show ${Math.min(more, PAGE)} more (${more} not shown)`,
        )
      : null,
  ];
}

function savedSection(idx, memory, ui) {
  const saved = memory.saved_for_backward || [];
  if (!saved.length) return null;
  const groups = memory.saved_groups || [];
  const grouped = groups.length > 0 && ui.mode === "groups";
  const sort = ui.sort || DEFAULT_SORT[grouped ? "groups" : "tensors"];
  const toggle = groups.length
    ? h(
        "button",
        {
          class: "il-btn il-small-btn",
          type: "button",
          "data-role": "saved-mode",
          "data-mode": grouped ? "tensors" : "groups",
          title: grouped
            ? "list every saved tensor on its own row"
            : "one row per repeated tensor: the same op, shape and line in every repeated layer",
        },
        grouped ? `one row per tensor (${saved.length})` : `one row per repeated tensor (${groups.length})`,
      )
    : null;
  return h(
    "section",
    { class: "il-section", "data-role": "saved-section", "data-mode": grouped ? "groups" : "tensors" },
    h(
      "h3",
      { class: "il-mem-h" },
      // Python's words (Memory.saved_table_text: "≥" where tensors of a data-dependent size are not counted)
      memory.saved_table_text || `saved for backward (${fmtBytes(memory.saved_bytes)})`,
      grouped
        ? h("span", { class: "il-muted il-small" }, ` ${plural(saved.length, "tensor")} in ${groups.length} rows`)
        : null,
      toggle,
    ),
    grouped ? groupTable(idx, memory, sort) : tensorTable(idx, memory, sort, ui.shown),
  );
}

/** A short list: its first LIST_TOP items, the rest under "N more". */
function shortList(title, role, items, note) {
  if (!items.length) return null;
  const rest = items.slice(LIST_TOP);
  return h(
    "div",
    { class: "il-mem-roll", "data-role": role },
    h("h4", {}, title),
    note ? h("div", { class: "il-muted il-small" }, note) : null,
    h("ul", {}, items.slice(0, LIST_TOP)),
    rest.length
      ? h(
          "details",
          { class: "il-mem-rest" },
          h("summary", { class: "il-muted" }, `${rest.length} more`),
          h("ul", {}, rest),
        )
      : null,
  );
}

/** One roll-up row over a bar for its share of the largest row: the name, the bytes, and where the row folds
 * the instances of a repeated module (``BytesBy.instances``) that they are the sum over them ("sum of 12"); what it
 * is made of in its title. A module path stays on one line, cut in its middle where it must (its last part
 * whole); a user line may break after a dot, its code beside it. */
function byteItem(name, bytes, max, times, detail, attrs = {}, code = "", built = false, text = "") {
  const pct = max > 0 ? Math.max(1, Math.round((100 * bytes) / max)) : 0;
  // Python's words for a row that leaves out tensors of a data-dependent size (BytesBy.bytes_text: "≥ 5.3 KiB", "?")
  const said = text || fmtBytes(bytes);
  const sum = times > 1 ? ` in all ${times} instances together` : "";
  const module = attrs["data-module"] !== undefined;
  const tail = module ? (/\.[^.]+$/.exec(name) || [""])[0] : "";
  return h(
    "li",
    {
      ...attrs,
      title:
        `${name}${code ? ` ${code}` : ""}: ${said}${sum}${detail ? ` (${detail})` : ""}` +
        (built ? `; ${BUILT_ROW_TITLE}` : ""),
    },
    h("span", { class: "il-mem-bar", style: `width:${pct}%` }),
    h(
      "span",
      { class: module ? "il-mono il-mem-name il-mem-module" : "il-mono il-mem-name" },
      ...(module ? keepEnd(name, tail) : breakable(name)),
      built ? builtTag() : null,
      code ? h("span", { class: "il-muted" }, ` ${code}`) : null,
    ),
    h("span", { class: "il-mem-times", "data-role": "mem-times" }, times > 1 ? `sum of ${times}` : ""),
    h("span", { class: "il-mem-bytes", "data-role": "mem-bytes" }, said),
  );
}

function rollups(memory) {
  const foldedMods = memory.saved_by_module_folded || [];
  const mods = foldedMods.length ? foldedMods : memory.saved_by_module || [];
  const lines = memory.saved_by_line || [];
  const peak = memory.peak_by_module || [];
  if (!mods.length && !lines.length && !peak.length) return null;
  const top = (rows) => (rows.length ? rows[0].bytes : 0);
  return h(
    "section",
    { class: "il-section il-mem-rolls" },
    shortList(
      "kept for the backward, by module",
      "saved-by-module",
      mods.map((m) =>
        byteItem(
          m.module,
          m.bytes,
          top(mods),
          m.instances,
          m.count ? plural(m.count, "tensor") : "",
          { "data-module": m.module, "data-bytes": String(m.bytes) },
          "",
          false,
          m.bytes_text,
        ),
      ),
      // Python's words (Memory.saved_rollup_note): the tensors of a data-dependent size these rows leave out
      memory.saved_rollup_note,
    ),
    shortList(
      "alive at the peak, by module",
      "peak-by-module",
      peak.map((m) =>
        byteItem(m.module, m.bytes, top(peak), m.instances, m.count ? plural(m.count, "buffer") : "", {
          "data-module": m.module,
          "data-bytes": String(m.bytes),
        }),
      ),
    ),
    shortList(
      "kept for the backward, by your line",
      "saved-by-line",
      lines.map((l) =>
        byteItem(
          l.file ? `${basename(l.file)}:${l.line}` : "(no line of yours)",
          l.bytes,
          top(lines),
          0,
          l.count ? plural(l.count, "tensor") : "",
          l.file
            ? {
                "data-line": `${l.file}:${l.line}`,
                "data-bytes": String(l.bytes),
                "data-how": l.built ? "built" : "ran",
              }
            : { "data-bytes": String(l.bytes), "data-how": "none" },
          l.code || "",
          l.built,
          l.bytes_text,
        ),
      ),
      memory.saved_rollup_note,
    ),
  );
}

function recomputedList(memory) {
  const redo = memory.recomputed || [];
  if (!redo.length) return null;
  const byLine = memory.recomputed_by_line || [];
  const items = byLine.length
    ? byLine.map((r) =>
        h(
          "li",
          {
            class: "il-mem-plain",
            "data-line": r.file ? `${r.file}:${r.line}` : "",
            "data-how": r.file ? (r.built ? "built" : "ran") : null,
            "data-count": String(r.count),
            title: r.built ? BUILT_ROW_TITLE : null,
          },
          h("span", { class: "il-mono" }, r.file ? `${basename(r.file)}:${r.line}` : "(no line of yours)"),
          r.built ? builtTag() : null,
          ` ${plural(r.count, "op")}: `,
          h("span", { class: "il-mono il-muted" }, (r.ops || []).join(", ")),
          // why, in Python's words (RecomputedBy.reason: the checkpoint(...) call whose region holds them)
          r.reason ? h("div", { class: "il-muted il-small", "data-role": "recomputed-reason" }, r.reason) : null,
        ),
      )
    : redo.map((r) =>
        h(
          "li",
          { class: "il-mono il-mem-plain" },
          r.fx_node,
          " ",
          h("span", { class: "il-muted" }, r.user_line ? `${basename(r.user_line.file)}:${r.user_line.line}` : ""),
          r.user_line && r.user_line.built ? builtTag(BUILT_ROW_TITLE) : null,
        ),
      );
  return h(
    "section",
    { class: "il-section il-mem-rolls" },
    shortList(`recomputed in the backward (${plural(redo.length, "op")})`, "recomputed", items),
  );
}

/** Under the curve, where some of its points are lower bounds (a buffer of a data-dependent size live then), how
 * they are drawn and what they leave out, in Python's words (Memory.curve_least_text). */
function leastLegend(memory) {
  const swatch = svg(
    "svg",
    { width: 34, height: 12, viewBox: "0 0 34 12", class: "il-mem-swatch", "aria-hidden": "true" },
    svg("path", { d: "M1,6 H33", class: "il-mem-line il-mem-least-line" }),
    svg("circle", { cx: 17, cy: 6, r: 4, class: "il-mem-point il-mem-least" }),
  );
  return h(
    "div",
    { class: "il-muted il-small il-mem-legend", "data-role": "memory-least-legend" },
    swatch,
    memory.curve_least_text,
  );
}

/** Under the curve, where the graph frees inputs on the way (a backward), what its dashed second line is, in
 * Python's words (Memory.curve_net_text). */
function netLegend(memory) {
  const swatch = svg(
    "svg",
    { width: 34, height: 12, viewBox: "0 0 34 12", class: "il-mem-swatch", "aria-hidden": "true" },
    svg("path", { d: "M1,6 H33", class: "il-mem-netline" }),
  );
  return h(
    "div",
    { class: "il-muted il-small il-mem-legend", "data-role": "memory-net-legend" },
    swatch,
    memory.curve_net_text,
  );
}

/** Draw the Memory view of compile `idx` into `el`. `ui`: {sort, mode ("groups" | "tensors"), shown}. */
export function renderMemory(el, idx, selected, ui) {
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
    m.peak_bytes
      ? h("div", { class: "il-mem-plot", "data-role": "memory-plot" })
      : h(
          "p",
          { class: "il-muted", "data-role": "memory-allocates-nothing" },
          "This graph allocates nothing: everything it writes goes into its inputs' storage (as an optimizer's " +
            "step updates the parameters in place), so there is no curve to draw.",
        ),
    ...(m.peak_bytes && m.curve_least_text ? [leastLegend(m)] : []), // replaceChildren writes a null as "null"
    ...(m.peak_bytes && m.curve_net_text ? [netLegend(m)] : []),
    h(
      "div",
      { class: "il-mem-tables" },
      rollups(m),
      savedSection(idx, m, ui),
      peakTable(idx, m),
      constantsTable(m),
      recomputedList(m),
    ),
  );
  drawCurve(el, idx, selected);
}

/** Draw the curve of compile `idx` into the view's plot at the plot's width (the view is laid out: measured now);
 * returns the width drawn at, or 0 where there is no curve. */
export function drawCurve(el, idx, selected) {
  const plot = el.querySelector('[data-role="memory-plot"]');
  const m = idx && idx.compile.memory;
  if (!plot || !m) return 0;
  const width = chartWidth(plot.clientWidth);
  plot.replaceChildren(curve(idx, m, selected, width));
  plot.dataset.width = String(width);
  return width;
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
  for (const tr of el.querySelectorAll(
    '[data-role="saved-row"], [data-role="saved-group-row"], [data-role="memory-buffer-row"]',
  ))
    tr.classList.toggle("il-selected-row", !!selected && tr.dataset.fused === selected);
}

export default {
  id: "memory",
  label: "Memory",
  title: "live bytes while each fused node runs, the peak, and what the forward saves for the backward",
  create(ctx) {
    const el = h("div", { class: "il-view il-memory", "data-view": "memory" });
    const fresh = () => ({ mode: "groups", sort: null, shown: PAGE }); // sort null: the mode's opening order
    let ui = fresh(),
      drawn = "",
      uiOf = "";
    const idxNow = () => ctx.model.idxOf(ctx.store.get().compileId);
    const redraw = () => {
      drawn = "";
      draw(ctx.store.get());
    };
    ctx.on(el, "click", (e) => {
      const th = e.target.closest("th[data-sort]");
      if (th) {
        const key = th.dataset.sort;
        const section = th.closest('[data-role="saved-section"]');
        const cur = ui.sort || DEFAULT_SORT[(section && section.dataset.mode) || "tensors"];
        ui.sort = cur === key ? `-${key}` : key;
        return redraw();
      }
      const mode = e.target.closest('[data-role="saved-mode"]');
      if (mode) {
        ui = { ...fresh(), mode: mode.dataset.mode };
        return redraw();
      }
      if (e.target.closest('[data-role="saved-more"]')) {
        ui.shown += PAGE;
        return redraw();
      }
      const curveEl = e.target.closest('[data-role="memory-curve"]');
      if (curveEl && e.target.closest('[data-role="memory-hit"]')) {
        // the point the hover names (a click's coordinates are whole pixels, the hover's finer), else the nearest
        const m = idxNow() && idxNow().compile.memory;
        const hov = curveEl.querySelector('[data-role="memory-hover"]');
        const shown = hov && hov.getAttribute("visibility") === "visible" ? Number(hov.dataset.index) : -1;
        const i = !m ? -1 : shown >= 0 ? shown : indexAt(curveEl, e, (m.timeline || []).length);
        if (i >= 0 && m.timeline[i]) ctx.actions.select(m.timeline[i].node);
        return;
      }
      const pt = e.target.closest('[data-role="memory-point"]');
      if (pt) {
        ctx.actions.select(pt.dataset.node);
        return;
      }
      const tr = e.target.closest(
        '[data-role="saved-row"], [data-role="saved-group-row"], [data-role="memory-buffer-row"]',
      );
      if (tr && tr.dataset.fused) {
        ctx.actions.select(tr.dataset.fused);
        if (tr.dataset.line) ctx.store.set({ sourceLine: tr.dataset.line });
      }
    });
    ctx.on(el, "pointermove", (e) => {
      const curveEl = e.target.closest && e.target.closest('[data-role="memory-curve"]');
      const idx = idxNow();
      const m = idx && idx.compile.memory;
      if (!curveEl || !m) return;
      hoverAt(
        curveEl,
        idx,
        m,
        e.target.closest('[data-role="memory-hit"]') ? indexAt(curveEl, e, (m.timeline || []).length) : -1,
      );
    });
    ctx.on(el, "pointerleave", () => {
      const curveEl = el.querySelector('[data-role="memory-curve"]');
      if (curveEl) hoverAt(curveEl, null, null, -1);
    });
    // the curve fits its plot at every width: drawn again when the view's width changes (a window or JupyterLab's
    // side panel resized, the splitter dragged); a hidden view (width 0) waits until it is shown
    let shownActive = false;
    const resized =
      typeof ResizeObserver === "function"
        ? new ResizeObserver(() => {
            const plot = el.querySelector('[data-role="memory-plot"]');
            if (!shownActive || !plot || !plot.clientWidth) return;
            if (chartWidth(plot.clientWidth) === Number(plot.dataset.width)) return;
            const s = ctx.store.get();
            drawCurve(el, ctx.model.idxOf(s.compileId), s.selected);
            markPoint(el, s.selected);
          })
        : null;
    if (resized) resized.observe(el);
    function draw(s) {
      if (uiOf !== s.compileId) [ui, uiOf] = [fresh(), s.compileId]; // another compile opens as at first
      const key = [s.compileId, ui.sort, ui.mode, ui.shown].join("|");
      if (key === drawn) return markPoint(el, s.selected);
      drawn = key;
      renderMemory(el, ctx.model.idxOf(s.compileId), s.selected, ui);
      markPoint(el, s.selected);
    }
    return {
      el,
      update(s, _changed, active) {
        shownActive = active;
        if (active) draw(s);
      },
      destroy() {
        if (resized) resized.disconnect();
      },
    };
  },
};
