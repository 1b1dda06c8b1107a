// The source view: the user's own files (Report.source_files), each line annotated with the kernels
// its ops went to (count, kinds, measured time). Clicking a line highlights its kernels' boxes
// (data-highlighted) and lists them in the panel; selecting a box marks and scrolls to its lines.

import { basename, fmtBytes, fmtUs, plural } from "../data.js";
import { h } from "../dom.js";
import { lineKey, lineSummary, sourceFiles } from "../viewdata.js";

const dots = (kinds) => kinds.map(([k, n]) => h("i", { class: `il-dot kind-${k}`, title: `${n} ${k}` }));

/** What a "built here" mark says: the line built these modules, whose ops ran inside torch, not on this line. */
function builtTitle(built) {
  const mods = built.modules;
  return (
    `Built here, not ran here: ${mods.length === 1 ? "the module" : "the modules"} ${mods.join(", ")} built on this ` +
    `line went to ${plural(built.kernels.length, "kernel")} in this compile. Their ops ran inside torch ` +
    "(nn.Sequential's forward calling torch's layers), not on a line of yours; " +
    "this line is where your code built the module they belong to."
  );
}

/** The mark of a line where dynamo broke the graph (GraphBreak.shown_frame): first in the gutter, where the
 * view shows it whatever the line's length; its reasons and frames in the tooltip. */
function breakMark(here) {
  if (!here) return null;
  return h(
    "span",
    {
      class: "il-src-break",
      "data-role": "source-break",
      title: here
        .map(
          (b) =>
            `${b.summary}${(b.compile_ids || []).length ? ` (in ${b.compile_ids.join(", ")})` : ""}` +
            (b.inside_text ? `\n${b.inside_text}` : ""),
        )
        .join("\n"),
    },
    `⤫ graph break${here.length > 1 ? ` ×${here.length}` : ""}`,
  );
}

/** The marks of a line where torch.compile() was called ("wraps": it only wrapped the function) or a call started a
 * compile ("compiles"), in Python's words (Report.source_marks, rules.source_marks): Q1's two spots, in the code. */
function spotMarks(here) {
  if (!here) return null;
  return here.map((m) =>
    h(
      "span",
      { class: `il-src-spot il-src-spot-${m.kind}`, "data-role": "source-spot", "data-kind": m.kind, title: m.text },
      m.kind === "wraps" ? "torch.compile" : "compiles",
    ),
  );
}

/**
 * One line's annotation: the kernels its ops ran in, in the current compile (kinds as dots); the kernels of the
 * modules it built whose ops ran inside torch, marked "built here" (FusedNode.built_lines); the other compiles;
 * measured time.
 */
function annotation(entry, report, compileId) {
  if (!entry) return null;
  const here = lineSummary(entry, report, compileId);
  const other = here.otherCompiles; // compiles, not kernels: "in 2 other compiles"
  const built = here.built;
  // this line's share of its kernels' time, as Python split it (LineTime: the roofline's time by line too)
  const { us, text } = here.kernels.length ? here : built;
  return h(
    "span",
    {
      class: "il-src-ann",
      "data-count": String(here.kernels.length),
      "data-other-compiles": String(other),
      title:
        `${plural(here.kernels.length, "kernel")} in this compile (${here.kinds.map(([k, n]) => `${n} ${k}`).join(", ") || "none"})` +
        (built.kernels.length ? `, ${plural(built.kernels.length, "kernel")} of modules built here` : "") +
        (other ? `, also in ${plural(other, "other compile")}` : "") +
        (us != null ? `, ${text || `${fmtUs(us)} measured per run`}` : ""),
    },
    dots(here.kinds),
    here.kernels.length ? plural(here.kernels.length, "kernel") : "",
    built.kernels.length
      ? h(
          "span",
          {
            class: "il-src-built",
            "data-role": "built-here",
            "data-built-count": String(built.kernels.length),
            title: builtTitle(built),
          },
          here.kernels.length ? " · " : "",
          dots(built.kinds),
          `built here · ${plural(built.kernels.length, "kernel")}`,
        )
      : null,
    other
      ? h(
          "span",
          { class: "il-muted" },
          here.kernels.length || built.kernels.length
            ? ` +${plural(other, "compile")}`
            : plural(other, "other compile"),
        )
      : null,
    us != null ? h("span", { class: "il-src-time" }, ` ${fmtUs(us)}`) : null,
  );
}

/** "ran" when the line ran ops (in this compile, else in any), "built" when it only built modules. */
function lineHow(entry, compileId) {
  const here = entry.refs.filter((r) => r.compileId === compileId);
  return (here.length ? here : entry.refs).some((r) => r.how !== "built") ? "ran" : "built";
}

/** Smallest and largest share of the pane the gutter takes (px; fraction of the view's width). */
const GUTTER_MIN = 168;
const GUTTER_MAX_SHARE = 0.5;
/** Below this width (px) the view is a code lens whatever its lines (fitLayout). */
const LENS_BELOW = 700;

function create(ctx) {
  const { report } = ctx;
  const el = h("div", { class: "il-view il-source", "data-view": "source" });
  let drawnFor = null;
  let lineEls = new Map();
  let gutters = []; // each line's gutter parts drawn (break mark, annotation), measured once on screen (fitGutter)
  let fitted = false;

  function gutter(...parts) {
    const shown = parts.flat().filter(Boolean);
    if (shown.length) gutters.push(shown);
    return h("span", { class: "il-src-gutter" }, shown);
  }

  /**
   * The gutter as wide as its widest annotation, so that none is cut ("built here · 2 kernels +1 compile 8.0 ms" in
   * a training step), at least GUTTER_MIN and at most half the view (beyond, the ellipsis and the tooltip). Measured
   * where it is drawn (the text's width in the page's font); false while the view is not laid out (a hidden tab).
   */
  function fitGutter() {
    let widest = 0;
    // a line's parts from the first's left edge to the last's right: the break mark's margin counted
    for (const parts of gutters)
      widest = Math.max(
        widest,
        parts[parts.length - 1].getBoundingClientRect().right - parts[0].getBoundingClientRect().left,
      );
    if (!widest || !el.clientWidth) return false;
    const most = Math.max(GUTTER_MIN, Math.floor(el.clientWidth * GUTTER_MAX_SHARE)); // never below the old 168 px
    const px = Math.min(Math.max(Math.ceil(widest) + 1, GUTTER_MIN), most);
    el.style.setProperty("--il-src-gutter", `${px}px`);
    measureLayout();
    return true;
  }

  /**
   * Code beside its gutter where the lines fit so, a column to scan; else a code lens (il-src-lens): an annotated
   * line's gutter a row of its own above its code, the code right after the line numbers. A 1000 px page's view
   * (the panel beside) left the code a third of the view, and a 1400 px page cut a ViT's long lines: the gutter
   * and what a line keeps took 280 px of an 830 px view. Measured once where drawn (measureLayout: how wide the
   * lines are beside their gutter, and how far the gutter moves the code), then decided by arithmetic on each
   * resize of the view's width (fitLayout: no relayout of the file to measure it again).
   */
  let beside = 0,
    shift = 0,
    laidFor = -1;
  function measureLayout() {
    el.classList.remove("il-src-lens");
    const box = el.getBoundingClientRect();
    const line = el.querySelector(".il-src-line");
    const no = line && line.querySelector(".il-src-no"),
      first = line && line.querySelector(".il-src-code");
    shift = no && first ? first.getBoundingClientRect().left - no.getBoundingClientRect().right : 0;
    let right = 0;
    for (const code of el.querySelectorAll(".il-src-code")) right = Math.max(right, code.getBoundingClientRect().right);
    beside = right ? right - box.left + el.scrollLeft + 8 : 0;
    laidFor = -1;
    fitLayout();
  }
  function fitLayout() {
    const width = el.clientWidth;
    if (!width || width === laidFor) return;
    laidFor = width;
    el.classList.toggle("il-src-lens", width <= LENS_BELOW || (beside > width && beside - shift <= width));
  }
  const resized = new ResizeObserver(() => {
    if (fitted) fitLayout();
  });
  resized.observe(el);

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
      ((compile && compile.memory && compile.memory.saved_by_line) || []).map((r) => [lineKey(r.file, r.line), r]),
    );
    // where torch.compile() was called and where a call started a compile (Report.source_marks, Python's)
    const spots = new Map();
    for (const m of report.source_marks || []) {
      const key = lineKey(m.file, m.line);
      spots.set(key, [...(spots.get(key) || []), m]);
    }
    // where dynamo broke the graph: the line each break shows (GraphBreak.shown_frame, decided in Python)
    const breaks = new Map();
    for (const b of report.graph_breaks || []) {
      const fr = (b.user_stack || [])[b.shown_frame];
      if (!fr) continue;
      const key = lineKey(fr.file, fr.line);
      breaks.set(key, [...(breaks.get(key) || []), b]);
    }
    gutters = [];
    const sections = files.map((f) => {
      const rows = [];
      let prev = 0;
      for (const { line, code } of f.lines) {
        if (f.partial && prev && line > prev + 1) rows.push(h("div", { class: "il-src-gap" }, "⋯"));
        prev = line;
        const key = lineKey(f.file, line);
        const entry = index.get(key);
        // a line that only built modules (their ops ran inside torch) reads apart from one that ran ops
        const how = entry ? lineHow(entry, s.compileId) : "";
        const row = h(
          "div",
          {
            class: "il-src-line" + (entry ? " il-src-hot" : ""),
            "data-source-line": key,
            "data-line": String(line),
            "data-how": how || null,
          },
          h("span", { class: "il-src-no" }, String(line)),
          gutter(spotMarks(spots.get(key)), breakMark(breaks.get(key)), annotation(entry, report, s.compileId)),
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
                        "data-saved-bytes": String(saved.get(key).bytes),
                        "data-how": saved.get(key).built ? "built" : null,
                        title: `activations ${saved.get(key).built ? "the ops of the modules built on this line" : "this line's ops"} save for the backward (held from the forward until the backward frees them)`,
                      },
                      // Python's words where the line keeps tensors of a data-dependent size (BytesBy.bytes_text)
                      `keeps ${saved.get(key).bytes_text || fmtBytes(saved.get(key).bytes)}`,
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
    const anyBuilt = [...index.values()].some((e) =>
      e.refs.some((r) => r.how === "built" && r.compileId === s.compileId),
    );
    el.replaceChildren(
      h(
        "p",
        { class: "il-muted il-src-help" },
        "Your code, each line with the kernels its ops went to in this compile. Click a line to highlight its kernels in the graph.",
        anyBuilt
          ? h(
              "span",
              { "data-role": "built-help" },
              " Lines marked “built here” built a module whose ops ran inside torch (an nn.Sequential of torch's layers): " +
                "no line of yours ran them, so the line that built the module stands for them.",
            )
          : null,
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
      if (fresh || !fitted) fitted = fitGutter();
      if (fresh || changed.has("selected") || changed.has("sourceLine") || changed.has("view"))
        marks(s, changed.has("selected") || (fresh && !s.sourceLine));
    },
    destroy() {
      resized.disconnect();
    },
  };
}

export default {
  id: "source",
  label: "Source",
  title: "your code, each line with the kernels it produced (4)",
  create,
};
