// The kernel table: one row per kernel of the compile (name, kind, ops, fused nodes, source line, time),
// sortable by any column, filterable; clicking a row selects that kernel everywhere.

import { fmtShare, fmtUs, plural } from "../data.js";
import { h, keepEnd } from "../dom.js";
import { noisyMark } from "../kernelinfo.js";
import { builtModules, builtTag } from "../linepanel.js";
import { kernelRows, sortRows } from "../viewdata.js";

// The kernel, then its time (the column one sorts by to find the costly kernels), then the user's line, or the
// line that built its module: where a 1000 px page shows them whole (the kind as its dot where the view is narrow)
const COLUMNS = [
  { key: "order", label: "#", num: true },
  { key: "kernel", label: "kernel" },
  { key: "us", label: "time", num: true, profiled: true },
  { key: "line", label: "your line" },
  { key: "kind", label: "kind" },
  { key: "ops", label: "ops", num: true },
  { key: "fused", label: "fused nodes", num: true },
  // with ir=True on a GPU: what the compiled kernel uses (Kernel.ir); shown when a kernel of the compile has it
  { key: "registers", label: "registers", num: true, resources: true },
  { key: "shared", label: "shared B", num: true, resources: true },
  { key: "spills", label: "spills", num: true, resources: true },
];

/** A kernel's name, cut in the middle where its cell is narrow: its end (`_with_indices_2`: the last op and the
 * kernel's number) stays, so that kernels of one long prefix (cpp_fused_max_pool2d_with_indices_0 and _2) read
 * apart. The text is the whole name; the cell's title says it too. */
function kernelName(name) {
  const m = /^(.{8,}?)(_[^_\s]*_\d+|_\d+)$/.exec(name);
  if (!m) return name;
  return keepEnd(name, m[2], "il-kname-head"); // inline: the cell's text stays the name, on one line
}

/** The cells of one kernel row (kernelRows), for the columns shown. */
function rowCells(r, cols) {
  const num = (v) => h("td", { class: "il-num il-mono", "data-role": "kernel-resource" }, v == null ? "" : String(v));
  const cell = {
    order: () => h("td", { class: "il-num il-muted" }, String(r.order)),
    kernel: () =>
      h(
        "td",
        { class: "il-mono il-kname", title: r.kernel },
        r.label !== r.kernel ? [r.label, h("div", { class: "il-muted il-small" }, r.kernel)] : kernelName(r.kernel),
      ),
    us: () =>
      h(
        "td",
        { class: "il-num il-mono il-ktime" },
        r.us == null
          ? ""
          : [
              h("span", { class: "il-nowrap" }, fmtUs(r.us)),
              " ",
              h("span", { class: "il-kshare" }, `(${fmtShare(r.share)})`),
              noisyMark(r.noisy),
            ],
      ),
    line: () =>
      r.noLine
        ? h(
            "td",
            { class: "il-mono il-kline", "data-how": "none", title: r.noLineWhy },
            h("span", { class: "il-muted il-nowrap", "data-role": "no-line" }, r.noLine),
          )
        : r.how === "built"
          ? h(
              "td",
              {
                class: "il-mono il-kline",
                "data-how": "built",
                title: `${r.line}: where your code built ${builtModules(r.built)}, whose ops ran inside torch (no line of yours ran them)${r.code ? `\n${r.code}` : ""}`,
              },
              h("span", { class: "il-nowrap" }, r.line),
              " ", // where the narrow view wraps "built here" (its own space collapses into this one)
              builtTag(),
            )
          : h(
              "td",
              {
                class: "il-mono il-kline",
                "data-how": r.how || null,
                // every line that ran it, as the panel lists them: one kernel launched for two BatchNorms
                title: r.more.length
                  ? [`${r.line} ${r.code}`, ...r.more.map((m) => `${m.line} ${m.code}`)].join("\n")
                  : r.code || "",
              },
              h("span", { class: "il-nowrap" }, r.line),
              r.more.length
                ? [
                    " ",
                    h("span", { class: "il-muted il-nowrap", "data-role": "line-more" }, `(+${r.more.length} more)`),
                  ]
                : null,
              // where the narrow view wraps "(a library's)" below the line, as it does "built here"
              r.whose
                ? [" ", h("span", { class: "il-muted il-nowrap", "data-role": "line-whose" }, `(${r.whose})`)]
                : null,
            ),
    kind: () =>
      h(
        "td",
        { class: "il-kkind", title: r.kind },
        h("i", { class: `il-dot kind-${r.kind}` }),
        h("span", { class: "il-kkind-word" }, r.kind),
      ),
    ops: () => h("td", { class: "il-num" }, String(r.ops)),
    fused: () => h("td", { class: "il-num" }, String(r.fused.length)),
    registers: () => num(r.registers),
    shared: () => num(r.shared),
    spills: () => num(r.spills),
  };
  return cols.map((c) => cell[c.key]());
}

function create(ctx) {
  const { store, model } = ctx;
  const filter = h("input", {
    class: "il-search-input il-kfilter",
    type: "search",
    placeholder: "filter kernels",
    "aria-label": "filter kernels",
    "data-role": "kernel-filter",
    spellcheck: "false",
  });
  const count = h("span", { class: "il-muted" });
  // a graph that calls repeated regions: their calls and launches beside its own kernels (Compile.kernels_note, Python's)
  const regions = h("span", { class: "il-muted", "data-role": "kernels-note" });
  const table = h("table", { class: "il-table il-ktable" });
  const el = h(
    "div",
    { class: "il-view il-kernels", "data-view": "kernels" },
    h("div", { class: "il-subbar" }, filter, " ", count, " ", regions),
    h("div", { class: "il-kscroll" }, table),
  );
  ctx.on(filter, "input", () => store.set({ kernelFilter: filter.value }));
  ctx.on(filter, "keydown", (e) => e.stopPropagation());
  ctx.on(table, "click", (e) => {
    const th = e.target.closest("th[data-sort]");
    if (th) {
      const key = th.dataset.sort,
        cur = store.get().kernelSort;
      store.set({ kernelSort: cur === key ? "-" + key : key });
      return;
    }
    const tr = e.target.closest("tr[data-role=kernel-row]");
    if (tr) ctx.actions.select(tr.dataset.fused);
  });
  let rowsFor = null,
    rows = [],
    drawn = "";

  function draw(s) {
    const ix = model.idxOf(s.compileId);
    if (rowsFor !== s.compileId) {
      rows = ix ? kernelRows(ix) : [];
      rowsFor = s.compileId;
    }
    const resources = rows.some((r) => r.registers != null || r.shared != null || r.spills != null);
    const cols = COLUMNS.filter((c) => (!c.profiled || ctx.profiled) && (!c.resources || resources));
    const shown = sortRows(rows, s.kernelSort, s.kernelFilter);
    const sortKey = s.kernelSort.replace(/^-/, ""),
      desc = s.kernelSort.startsWith("-");
    const head = h(
      "thead",
      {},
      h(
        "tr",
        {},
        cols.map((c) =>
          h(
            "th",
            {
              class: (c.num ? "il-num " : "") + "il-sortable",
              "data-sort": c.key,
              "aria-sort": c.key === sortKey ? (desc ? "descending" : "ascending") : null,
              title: `sort by ${c.label}`,
            },
            c.label,
            c.key === sortKey ? (desc ? "\u00a0▾" : "\u00a0▴") : "", // the arrow stays with its label
          ),
        ),
      ),
    );
    const body = h(
      "tbody",
      {},
      shown.map((r) =>
        h(
          "tr",
          {
            "data-role": "kernel-row",
            "data-kernel": r.kernel,
            "data-fused": r.fused[0],
            class: r.fused.includes(s.selected) ? "il-selected-row" : "",
          },
          rowCells(r, cols),
        ),
      ),
    );
    table.replaceChildren(head, body);
    count.textContent =
      shown.length === rows.length
        ? plural(rows.length, "kernel")
        : `${shown.length} of ${plural(rows.length, "kernel")}`;
    regions.textContent = (ix && ix.compile.kernels_note) || "";
  }

  return {
    el,
    update(s, changed, active) {
      if (!active) return;
      const key = [s.compileId, s.kernelSort, s.kernelFilter].join("|");
      if (key !== drawn) {
        drawn = key;
        draw(s);
        return;
      }
      if (changed.has("selected")) {
        for (const tr of table.querySelectorAll("tr[data-role=kernel-row]")) {
          const on =
            tr.dataset.fused === s.selected ||
            (s.selected && model.idxOf(s.compileId).byName.get(s.selected)?.node.kernel === tr.dataset.kernel);
          tr.classList.toggle("il-selected-row", !!on);
        }
      }
    },
  };
}

export default {
  id: "kernels",
  label: "Kernels",
  title: "every kernel of the compile as a sortable table (5)",
  create,
};
