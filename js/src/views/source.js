// The source view: the user's own files (Report.source_files), each line annotated with the kernels
// its ops went to (count, kinds, measured time). Clicking a line highlights its kernels' boxes
// (data-highlighted) and lists them in the panel; selecting a box marks and scrolls to its lines.

import { basename, fmtBytes, fmtUs, plural } from "../data.js";
import { h } from "../dom.js";
import { lineKey, lineSummary, sourceFiles } from "../viewdata.js";

/** One line's annotation: kernels in the current compile (kinds as dots), the other compiles, measured time. */
function annotation(entry, report, compileId) {
  if (!entry) return null;
  const here = lineSummary(entry, report, compileId);
  const other = here.otherCompiles; // compiles, not kernels: "in 2 other compiles"
  const kinds = here.kinds.map(([k, n]) => h("i", { class: `il-dot kind-${k}`, title: `${n} ${k}` }));
  return h(
    "span",
    {
      class: "il-src-ann",
      "data-count": String(here.kernels.length),
      "data-other-compiles": String(other),
      title:
        `${plural(here.kernels.length, "kernel")} in this compile (${here.kinds.map(([k, n]) => `${n} ${k}`).join(", ") || "none"})` +
        (other ? `, also in ${plural(other, "other compile")}` : "") +
        (here.us != null ? `, ${fmtUs(here.us)} measured per run` : ""),
    },
    kinds,
    here.kernels.length ? plural(here.kernels.length, "kernel") : "",
    other
      ? h(
          "span",
          { class: "il-muted" },
          here.kernels.length ? ` +${plural(other, "compile")}` : plural(other, "other compile"),
        )
      : null,
    here.us != null ? h("span", { class: "il-src-time" }, ` ${fmtUs(here.us)}`) : null,
  );
}

function create(ctx) {
  const { report } = ctx;
  const el = h("div", { class: "il-view il-source", "data-view": "source" });
  let drawnFor = null;
  let lineEls = new Map();

  function draw(s) {
    const index = ctx.sourceIndex();
    const files = sourceFiles(report, index);
    lineEls = new Map();
    if (!files.length) {
      el.replaceChildren(
        h(
          "p",
          { class: "il-message" },
          "No line of your code was recorded for these kernels (for example, code inside torch.nn modules only).",
        ),
      );
      return;
    }
    // what each line keeps alive for the backward (Memory.saved_by_line of the selected forward compile)
    const compile = (report.compiles || []).find((c) => c.id === s.compileId);
    const saved = new Map(
      ((compile && compile.memory && compile.memory.saved_by_line) || []).map((r) => [
        lineKey(r.file, r.line),
        r.bytes,
      ]),
    );
    const sections = files.map((f) => {
      const rows = [];
      let prev = 0;
      for (const { line, code } of f.lines) {
        if (f.partial && prev && line > prev + 1) rows.push(h("div", { class: "il-src-gap" }, "⋯"));
        prev = line;
        const key = lineKey(f.file, line);
        const entry = index.get(key);
        const row = h(
          "div",
          { class: "il-src-line" + (entry ? " il-src-hot" : ""), "data-source-line": key, "data-line": String(line) },
          h("span", { class: "il-src-no" }, String(line)),
          h("span", { class: "il-src-gutter" }, annotation(entry, report, s.compileId)),
          // a column of its own, where the forward saves anything: what the line keeps for the backward
          saved.size
            ? h(
                "span",
                { class: "il-src-keeps" },
                saved.has(key)
                  ? h(
                      "span",
                      {
                        class: "il-src-saved",
                        "data-role": "source-saved",
                        "data-saved-bytes": String(saved.get(key)),
                        title:
                          "activations this line's ops save for the backward (held from the forward until the backward frees them)",
                      },
                      `keeps ${fmtBytes(saved.get(key))}`,
                    )
                  : null,
              )
            : null,
          h("code", { class: "il-src-code" }, code),
        );
        if (entry) row.tabIndex = 0;
        lineEls.set(key, row);
        rows.push(row);
      }
      return h(
        "section",
        { class: "il-src-file", "data-file": f.file },
        h(
          "h4",
          { class: "il-src-head", title: f.file },
          basename(f.file) || f.file,
          " ",
          h("span", { class: "il-muted" }, f.file !== basename(f.file) ? f.file : ""),
          f.note ? h("span", { class: "il-src-note" }, ` · ${f.note}`) : null,
        ),
        h("div", { class: "il-src-lines" }, rows),
      );
    });
    el.replaceChildren(
      h(
        "p",
        { class: "il-muted il-src-help" },
        "Your code, each line with the kernels its ops went to in this compile. Click a line to highlight its kernels in the graph.",
      ),
      ...sections,
    );
    drawnFor = s.compileId;
  }

  ctx.on(el, "click", (e) => {
    const row = e.target.closest("[data-source-line]");
    if (row && el.contains(row)) ctx.actions.highlightLine(row.dataset.sourceLine);
  });
  ctx.on(el, "keydown", (e) => {
    const row = e.target.closest && e.target.closest("[data-source-line]");
    if (row && e.key === "Enter") {
      ctx.actions.highlightLine(row.dataset.sourceLine);
      e.stopPropagation();
    }
  });

  function marks(s, scroll) {
    for (const r of el.querySelectorAll(".il-src-line[data-marked], .il-src-line[data-clicked]")) {
      r.removeAttribute("data-marked");
      r.removeAttribute("data-clicked");
    }
    const clicked = lineEls.get(s.sourceLine);
    if (clicked) clicked.dataset.clicked = "true";
    const mine = s.selected ? ctx.linesOf(s.compileId, s.selected) : [];
    const rows = mine.map((k) => lineEls.get(k)).filter(Boolean);
    for (const r of rows) r.dataset.marked = "true";
    if (scroll && rows.length) rows[0].scrollIntoView({ block: "center" });
  }

  return {
    el,
    update(s, changed, active) {
      if (!active) return;
      const fresh = drawnFor !== s.compileId;
      if (fresh) draw(s);
      if (fresh || changed.has("selected") || changed.has("sourceLine") || changed.has("view"))
        marks(s, changed.has("selected") || (fresh && !s.sourceLine));
    },
  };
}

export default {
  id: "source",
  label: "Source",
  title: "your code, each line with the kernels it produced (4)",
  create,
};
