// The side panel: what the selected fused node is, its kernel source, the FX ops it absorbed,
// why Inductor did not fuse it with its neighbours, and both backtraces.

import { renderCode } from "./code.js";
import {
  basename,
  fmtBytes,
  fmtShare,
  fmtUs,
  frameFile,
  frameFunction,
  frameLabel,
  frameStage,
  groupFrames,
  kernelOf,
  kernelRank,
  kernelRun,
  plural,
  profileOf,
  STAGE_LABELS,
  sharedKernel,
} from "./data.js";
import { h } from "./dom.js";
import { callsOf } from "./fit.js";
import { folded } from "./fold.js";
import { autotuneSection, metadataSection, profileSection, topKernelsSection } from "./kernelinfo.js";
import { builtLines, builtModules } from "./linepanel.js";
import { cudagraphsSection, irSection, launchSection } from "./metal.js";
import { costSection } from "./roofline.js";
import { nodeNumber } from "./text.js";
import { fmtShape, sameGraphGroups } from "./viewdata.js";

function frameRow(fr, stage) {
  return h(
    "li",
    { class: `il-frame il-stage-${stage}`, title: `${fr.file}:${fr.line}` },
    h(
      "div",
      { class: "il-frame-loc" },
      h("span", { class: "il-file" }, `${frameFile(fr)}:${fr.line}`), // Frame.file_label (Python's)
      h("span", { class: "il-fn" }, ` in ${frameFunction(fr)}`), // Frame.function_label (Python's)
    ),
    fr.code ? h("code", { class: "il-frame-code" }, String(fr.code).trim()) : null,
    fr.note ? h("p", { class: "il-frame-note", "data-role": "frame-note" }, fr.note) : null, // rules.compiler_stack_notes
  );
}

/**
 * A <details> whose body is built when first opened (a click's panel holds several stacks of dozens of frames,
 * folded: building them all made every click slower for rows nobody had opened).
 */
function lazyDetails(attrs, summary, build, open = false) {
  const d = h("details", attrs, summary);
  let built = false;
  const fill = () => {
    if (!built) {
      built = true;
      d.appendChild(build());
    }
  };
  if (open) {
    fill();
    d.open = true;
  } else
    d.addEventListener("toggle", () => {
      if (d.open) fill();
    });
  return d;
}

/** One user stack: the user's frames shown, the others folded away. */
function userStack(frames) {
  const user = frames.filter((f) => frameStage(f) === "user");
  const other = frames.length - user.length;
  const box = h("div", { class: "il-stack" });
  const list = h(
    "ol",
    { class: "il-frames" },
    (user.length ? user : frames.slice(-1)).map((f) => frameRow(f, frameStage(f))),
  );
  box.appendChild(list);
  if (other > 0) {
    const all = lazyDetails({ class: "il-more" }, h("summary", {}, `all ${frames.length} frames`), () =>
      h(
        "ol",
        { class: "il-frames" },
        frames.map((f) => frameRow(f, frameStage(f))),
      ),
    );
    box.appendChild(all);
  }
  return box;
}

/**
 * One source location of the user's code: the line that ran (the stack's innermost frame of the user's), the user's
 * calls that led to it on one line below it (outermost first), and every frame of the stack folded.
 */
function sourceLine(frames) {
  const user = frames.filter((f) => frameStage(f) === "user");
  const ran = user.length ? user[user.length - 1] : frames[frames.length - 1];
  const callers = user.slice(0, -1);
  return h(
    "div",
    { class: "il-stack" },
    h("ol", { class: "il-frames" }, frameRow(ran, frameStage(ran))),
    callers.length
      ? h(
          "p",
          { class: "il-muted il-callers", "data-role": "callers" },
          "called from ",
          callers.map((f, i) => [
            i ? " › " : "",
            h("span", { class: "il-mono", title: `${f.file}:${f.line}` }, `${frameFile(f)}:${f.line}`),
            ` ${frameFunction(f)}`,
          ]),
        )
      : null,
    frames.length > user.length // frames of torch or a library between the user's: all of them, folded
      ? lazyDetails({ class: "il-more" }, h("summary", {}, `all ${frames.length} frames`), () =>
          h(
            "ol",
            { class: "il-frames" },
            frames.map((f) => frameRow(f, frameStage(f))),
          ),
        )
      : null,
  );
}

/** The compiler's stack, grouped into stages (dynamo, AOT, lowering, scheduler, codegen). */
export function compilerStack(frames) {
  const groups = groupFrames(frames);
  const box = h("div", { class: "il-stages" });
  groups.forEach((g, i) => {
    const first = g.frames[0],
      last = g.frames[g.frames.length - 1];
    const notes = g.frames.filter((f) => f.note).length;
    const open = g.stage === "user" || i === groups.length - 1;
    box.appendChild(
      lazyDetails(
        { class: `il-stagegroup il-stage-${g.stage}`, dataset: { stage: g.stage } },
        h(
          "summary",
          {},
          h("span", { class: "il-stage-name" }, STAGE_LABELS[g.stage] || g.stage),
          h(
            "span",
            { class: "il-muted" },
            ` · ${g.frames.length} frame${g.frames.length === 1 ? "" : "s"} · ${frameFunction(first)}${g.frames.length > 1 ? " … " + frameFunction(last) : ""}`,
          ),
          notes
            ? h("span", { class: "il-frame-note-mark", "data-role": "group-notes" }, ` · ${plural(notes, "note")}`)
            : null,
        ),
        () =>
          h(
            "ol",
            { class: "il-frames" },
            g.frames.map((f) => frameRow(f, frameStage(f))),
          ),
        open,
      ),
    );
  });
  return box;
}

function section(title, role, ...body) {
  return h("section", { class: "il-section" }, h("h3", {}, title), h("div", { "data-role": role }, ...body));
}

/**
 * Render the panel for `fusedName` of compile index `idx` into `el`.
 * actions: {select(fusedName), selectIn(compileId, fusedName), focusFx(fxName)}; `report` is the whole
 * report (for ranks and the top-kernels table).
 */
// Ops without a recorded line (code inside torch itself, an nn.Sequential of nn.Linear, say; or a kernel of a
// TORCH_TRACE log with no provenance map): say why, and give what is known instead: the module path and the
// call that compiled it.
function noUserSource(n, fxByName, compile) {
  const modules = [];
  for (const name of n.fx_nodes || []) {
    const gn = fxByName.get(name) || {};
    const ms = gn.module_stack || [];
    const types = gn.module_types || [];
    const m = ms.length ? ms[ms.length - 1] + (types.length === ms.length ? ` (${types[types.length - 1]})` : "") : "";
    if (m && !modules.includes(m)) modules.push(m);
  }
  const t = compile.trigger || {};
  const call = (t.user_stack || [])[(t.user_stack || []).length - 1];
  return h(
    "div",
    { class: "il-muted" },
    h("p", { "data-role": "no-line-reason" }, n.no_line_reason), // why, in Python's words (FusedNode.no_line_reason)
    modules.length
      ? h(
          "p",
          {},
          "Module: ",
          h("span", { class: "il-mono" }, modules.join(", ")),
          compile.modules_inferred ? " (inferred)" : "",
        )
      : null,
    call
      ? h(
          "p",
          {},
          "They run when your code calls the compiled function: ",
          h(
            "span",
            { class: "il-mono" },
            `${call.file.split("/").pop()}:${call.line} ${String(call.code || "").trim()}`,
          ),
        )
      : null,
  );
}

// What every click on a compile's boxes needs, built once per compile index (a training step's graphs
// hold thousands of FX nodes): FX nodes by name.
const perIndex = new WeakMap();
function derived(idx) {
  let d = perIndex.get(idx);
  if (d) return d;
  const fxByName = new Map();
  for (const g of Object.values(idx.compile.graphs || {}))
    for (const gn of g.nodes || []) if (!fxByName.has(gn.name)) fxByName.set(gn.name, gn);
  const post = (idx.compile.graphs || {}).post_grad;
  if (post) for (const gn of post.nodes || []) fxByName.set(gn.name, gn);
  d = { fxByName };
  perIndex.set(idx, d);
  return d;
}

/** Everything a section needs about the selected fused node. */
function selection(idx, fusedName, report) {
  const entry = idx.byName.get(fusedName);
  const n = entry.node;
  const k = kernelOf(idx, fusedName);
  return { idx, entry, n, k, fxByName: derived(idx).fxByName, report };
}

/** The user stacks of the selection: FusedNode.user_stack, decided in Python (report/finish.py). */
function userStacks({ n }) {
  return n.user_stack || [];
}

/** Header: the kernel (what the box says) and the user's line lead; node ids come last. */
function headerSection(sel) {
  const { idx, entry, n, k } = sel;
  const lines = n.user_lines || []; // the user line (FusedNode.user_lines[0], Python), as every view names it
  const last = lines[0] || null;
  const built = (n.built_lines || [])[0] || null; // no line ran its ops: where its module was built (Python)
  const siblings = kernelRun(idx, n.name).filter((x) => x !== n.name);
  const site = k && siblings.length ? (k.call_sites || []).findIndex((s) => s.includes(n.name)) : -1;
  const inPlace = site >= 0 && (k.in_place || [])[site] != null ? k.in_place[site] : n.in_place;
  // a fused node of a kernel of several: its own kind and line here, its kernel's where the kernel table says another
  // (Kernel.kind, Kernel.user_lines: Python's), each said as whose
  const shared = !!(k && (k.fused_nodes || []).length > 1);
  const kernelLine = shared ? (k.user_lines || [])[0] : null;
  const otherLine = kernelLine && last && (kernelLine.file !== last.file || kernelLine.line !== last.line);
  const kinds =
    shared && k.kind && k.kind !== n.box_kind
      ? [
          h("span", { class: `il-chip kind-${n.box_kind}`, "data-role": "node-kind" }, `${n.box_kind} node`),
          h("span", { class: `il-chip kind-${k.kind}`, "data-role": "kernel-kind" }, `${k.kind} kernel`),
        ]
      : [h("span", { class: `il-chip kind-${n.box_kind}`, "data-role": "node-kind" }, n.box_kind)];
  return h(
    "header",
    { class: "il-panel-head" },
    // a node of no kernel by its label (a region's call, "repeated_subgraph0 (4 kernels)"; Python's), not its
    // scheduler name ("op1": nu25 M5); the meta line below names the fused node
    h("div", { class: "il-title", "data-role": "selected-name" }, k ? k.name : n.label || n.name),
    n.label && k && n.label !== k.name ? h("div", { class: "il-subtitle" }, n.label) : null,
    // what it writes in place (a graph input: the caller's tensor, a module's running statistics), in Python's words:
    // the whole kernel call's where the box is a call of several fused nodes (Kernel.in_place), else the node's
    // (FusedNode.in_place)
    inPlace ? h("div", { class: "il-head-line il-in-place", "data-role": "in-place" }, inPlace) : null,
    // why an extern kernel is a call, not generated code, in Python's words (Kernel.extern_why)
    k && k.extern_why ? h("div", { class: "il-head-line il-muted", "data-role": "extern-why" }, k.extern_why) : null,
    last
      ? h(
          "div",
          { class: "il-head-line", "data-role": "user-line", title: `${last.file}:${last.line}` },
          h("span", { class: "il-file" }, `${basename(last.file)}:${last.line}`),
          " ",
          h("code", {}, String(last.code || "").trim()),
          lines.length > 1 ? h("span", { class: "il-muted" }, ` and ${plural(lines.length - 1, "other line")}`) : null,
          otherLine
            ? h(
                "span",
                { class: "il-muted", "data-role": "kernel-line" },
                ` · its kernel's: ${basename(kernelLine.file)}:${kernelLine.line}`,
              )
            : null,
        )
      : built
        ? h(
            "div",
            {
              class: "il-head-line",
              "data-role": "built-line",
              title: `${built.file}:${built.line}: where your code built ${builtModules(built)} (its ops ran inside torch)`,
            },
            h("span", { class: "il-muted" }, "built at "),
            h("span", { class: "il-file" }, `${basename(built.file)}:${built.line}`),
            " ",
            h("code", {}, String(built.code || "").trim()),
          )
        : null,
    h(
      "div",
      { class: "il-chips" },
      ...kinds,
      h(
        "span",
        { class: "il-chip", "data-role": "node-number" },
        entry.index >= 0 ? nodeNumber(entry.index, idx.boxes.length) : "glue: drawn as an edge",
      ),
      h("span", { class: "il-chip" }, plural((n.fx_nodes || []).length, "FX op")), // as "FX ops absorbed" lists them
      k ? h("span", { class: "il-chip" }, k.language) : null,
      profileOf(k)
        ? h(
            "span",
            {
              class: "il-chip il-chip-strong",
              title: "measured device time per run, and its share of all measured kernel time",
            },
            `${fmtUs(k.profile.total_us)} · ${fmtShare(k.profile.share)}`,
          )
        : null,
    ),
    h(
      "div",
      { class: "il-muted il-small" },
      `fused node ${n.name}`,
      siblings.length ? ` (+${plural(siblings.length, "other")} in this kernel)` : "",
      (n.module_stack || []).length
        ? ` · module ${n.module_stack[n.module_stack.length - 1]}${idx.compile.modules_inferred ? " (inferred)" : ""}`
        : "",
      (n.members || []).length > 1 ? ` · fused from ${n.members.length} nodes: ${n.members.join(", ")}` : "",
    ),
  );
}

/**
 * One kernel, several fused nodes: written into one kernel together (consecutive: one box), or the same
 * kernel source reused (called again elsewhere). Say which, and link the others.
 */
function sharedSection({ idx, n, k }, actions) {
  const siblings = sharedKernel(idx, n.name);
  if (!siblings.length) return null;
  const run = new Set(kernelRun(idx, n.name));
  const together = siblings.filter((x) => run.has(x.name));
  const reused = siblings.filter((x) => !run.has(x.name));
  const link = (x) =>
    h(
      "button",
      {
        class: "il-link il-mono",
        type: "button",
        "data-sibling": x.name,
        title: "select this fused node",
        onclick: () => actions.select(x.name),
      },
      x.name,
    );
  if (!together.length) {
    const calls = foldedList(reused, (x) => [link(x), ` (#${x.index})`], "calls");
    return h(
      "div",
      { class: "il-shared-note", "data-role": "kernel-reused" },
      h("strong", {}, "Same kernel source reused. "),
      `Inductor generated this kernel once and calls it ${plural(reused.length + 1, "time")} in this graph (identical code elsewhere): `,
      ...calls.inline,
      ".",
      calls.more,
    );
  }
  const others = foldedList(together, (x) => [link(x), ` (#${x.index}, ${x.kind})`], "fused nodes");
  return h(
    "div",
    { class: "il-shared-note", "data-role": "shared-kernel" },
    h("strong", {}, `One kernel, ${plural(together.length + 1, "fused node")} in a row. `),
    "This fused node and ",
    plural(together.length, "other"),
    " next to it in execution order run the same kernel",
    k ? " " : "",
    k ? h("span", { class: "il-mono" }, k.name) : null,
    ` (${drawnAs([n, ...together], actions, idx.compile)}): `,
    ...others.inline,
    ". The kernel source below is shared.",
    reused.length ? ` The same kernel source is also reused elsewhere (${plural(reused.length, "fused node")}).` : "",
    others.more,
  );
}

/** A long list said in a sentence: the first LIST_SHOWN items inline, then "and N more", the rest in a fold the
 * caller places after its sentence (a chain of 151 fused nodes in one C++ kernel wrote 150 links, and its 151
 * buffers, above the kernel source). Returns {inline, more}; `more` is null for a short list. */
const LIST_SHOWN = 12;
function foldedList(items, item, what) {
  const parts = (list) => list.flatMap((x, i) => [i ? ", " : "", ...item(x)]);
  if (items.length <= LIST_SHOWN + 3) return { inline: parts(items), more: null };
  const rest = items.slice(LIST_SHOWN);
  return {
    inline: [...parts(items.slice(0, LIST_SHOWN)), ` and ${rest.length} more`],
    more: h(
      "details",
      { class: "il-list-more", "data-role": "list-more" },
      h("summary", {}, `the other ${rest.length} ${what}`),
      ...parts(rest),
    ),
  };
}

/** Where the fusion graph draws a run of one kernel's fused nodes: one box, or the folded modules that hold some
 * of them (a kernel fusing a model's input handling into its first block's norm: 2 in a box, 5 inside blocks.0).
 * A folded call of a module called several times is named as its box says it (Compile.module_view.calls' label,
 * Python: "cell · call 2 of 3"), not by its key ("cell@2"). */
function drawnAs(nodes, actions, compile) {
  const where = nodes.map((x) => (actions && actions.boxOf ? actions.boxOf(x.name) : null));
  const count = new Map();
  for (const g of where) count.set(g, (count.get(g) || 0) + 1);
  const name = (g) => {
    const c = callsOf(compile, g);
    return (c && c.label) || String(g).replace(/^repeat:/, "");
  };
  if (count.size === 1) return where[0] ? `all inside the folded module ${name(where[0])}` : "one box in the graph";
  return `drawn in ${count.size} places: ${[...count]
    .map(([g, c]) => `${c} ${g ? `inside ${name(g)}` : c > 1 ? "in one box" : "as a box"}`)
    .join(", ")}`;
}

function measuredSection({ idx, k, report }) {
  if (!profileOf(k) || !report) return null;
  const { rank, of } = kernelRank(report, idx.compile.id, k.name);
  return profileSection(k, rank, of);
}

/** What the node allocates and frees, and the live bytes while it runs (its point of Compile.memory.timeline: what
 * it reads and writes included, before the frees after it; one per box, what its glue writes included); nothing for
 * a report without memory. */
function memorySection({ idx, entry }) {
  const m = idx.compile.memory;
  const p = m && (m.timeline || []).find((q) => q.node === entry.node.name);
  if (!p) return null;
  const list = (verb, bufs) => {
    if (!bufs.length) return null;
    const { inline, more } = foldedList(bufs, (b) => [`${b.name} (${fmtBytes(b.bytes)})`], "buffers");
    return h("div", {}, `${verb} `, h("span", { class: "il-mono" }, ...inline), more);
  };
  const allocs = list("allocates", p.allocates || []);
  const frees = list("then frees", p.frees || []);
  return section(
    "memory",
    "node-memory",
    h(
      "div",
      {},
      // "≥": a buffer of a data-dependent size is live here, not counted (Memory.uncounted_at); the peak leaves
      // such buffers out (Memory.at_least): both decided in Python
      `${atLeast(m, p) ? "≥ " : ""}${fmtBytes(p.live_bytes)} live while it runs`,
      m.sizes_at ? ` (${m.sizes_at})` : "",
      p.node === m.peak_node ? h("b", {}, " (the peak)") : ` (peak ${m.at_least ? "≥ " : ""}${fmtBytes(m.peak_bytes)})`,
    ),
    atLeast(m, p)
      ? h(
          "div",
          { class: "il-muted", "data-role": "node-memory-uncounted" },
          m.uncounted_text, // Python's words (Memory.uncounted_text)
        )
      : null,
    allocs,
    frees,
    allocs || frees ? null : h("div", { class: "il-muted" }, "allocates and frees nothing"),
  );
}

/** Whether the live bytes of point `p` leave out a buffer of a data-dependent size (Memory.uncounted_at, Python's). */
function atLeast(m, p) {
  return (m.uncounted_at || []).includes(p.node);
}

/** Why not fused: one row per neighbour (FusedNode.refusals, Python's rows: finish.refusal_rows). */
function whyNotFusedSection({ idx, n }, actions) {
  const groups = n.refusals || [];
  if (!groups.length) return null;
  const row = (g) =>
    h(
      "li",
      { "data-other": g.name },
      g.other && idx.byName.get(g.other)
        ? h(
            "button",
            { class: "il-link il-mono", type: "button", title: g.text, onclick: () => actions.select(g.other) },
            h("span", { class: "il-why-name" }, g.text),
            g.tell ? h("span", { class: "il-why-tell" }, ` · ${g.tell}`) : null,
          )
        : h("span", { class: "il-mono" }, g.text),
      h("span", { class: "il-muted", title: g.pairs.join("\n") }, ` ${g.pairs_text} `),
      h("span", { class: "il-reason" }, g.reasons.join("; ")),
    );
  const SHOW = 6;
  return section(
    `Why not fused (${plural(groups.length, "neighbour")})`,
    "why-not-fused",
    h("ul", { class: "il-why" }, groups.slice(0, SHOW).map(row)),
    groups.length > SHOW
      ? h(
          "details",
          { class: "il-more" },
          h("summary", {}, `${groups.length - SHOW} more`),
          h("ul", { class: "il-why" }, groups.slice(SHOW).map(row)),
        )
      : null,
  );
}

function copyButton(text, later) {
  const copy = h("button", { class: "il-btn il-copy", type: "button", title: "copy the kernel source" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = "Copied";
    } catch (_e) {
      const ta = h("textarea", {});
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      try {
        document.execCommand("copy");
        copy.textContent = "Copied";
      } catch (_e2) {
        copy.textContent = "Copy failed";
      }
      ta.remove();
    }
    later(() => (copy.textContent = "Copy"), 1500);
  });
  return copy;
}

/** A call of control flow's subgraphs (torch.cond): a link to each one's compile (FusedNode.branch_compiles). */
function branchLinks(n, actions) {
  const ids = n.branch_compiles || [];
  if (!ids.length || !actions) return null;
  return h(
    "p",
    { "data-role": "branch-links" },
    "Open: ",
    ids.map((b, i) => [
      i ? ", " : "",
      h(
        "button",
        {
          class: "il-link il-mono",
          type: "button",
          "data-compile": b.compile,
          title: `show ${b.name}'s compile (${b.compile}): its kernels`,
          onclick: () => actions.selectIn(b.compile, ""),
        },
        b.name,
      ),
    ]),
  );
}

/** Launch facts, autotuning and the kernel source (or why there is none). */
function kernelSections({ n, k }, later, actions) {
  if (!k)
    return [
      section(
        "Kernel source",
        "kernel-source",
        // why there is none, in Python's words (FusedNode.no_kernel_reason: a torch.cond runs its branches' kernels)
        h("p", { class: "il-muted", "data-role": "no-kernel" }, n.no_kernel_reason),
        branchLinks(n, actions),
      ),
    ];
  const pre = h("pre", { class: "il-code", "data-role": "kernel-source" });
  renderCode(pre, k.source, k.language, { later });
  return [
    costSection(k),
    metadataSection(k),
    launchSection(k, later),
    autotuneSection(k),
    irSection(k, later),
    h(
      "section",
      { class: "il-section" },
      h(
        "h3",
        {},
        h("span", { class: "il-h3-title" }, k.language === "extern" ? "Extern call source" : "Kernel source"),
        h("span", { class: "il-muted", title: k.name }, k.name),
        copyButton(k.source, later),
      ),
      // where the source is not what torch writes without the lens (a profiled C++ kernel), in Python's words
      k.source_note ? h("p", { class: "il-muted", "data-role": "source-note" }, k.source_note) : null,
      pre,
    ),
  ];
}

/** An FX node's description: target, shape (symbolic sizes with their capture-time sizes as tooltip), dtype. */
export function fxDescription(gn) {
  const shape = fmtShape(gn);
  return [
    ` = ${gn.target}`,
    shape.text
      ? [
          " ",
          h(
            "span",
            {
              class: "il-shape" + (shape.hint ? " il-symbolic" : ""),
              title: shape.hint ? `sizes at capture time: ${shape.hint}` : null,
            },
            shape.text,
          ),
        ]
      : null,
    gn.dtype ? " " + gn.dtype : "",
    gn.display_name && gn.display_name !== gn.name
      ? h("span", { class: "il-role" }, ` ${gn.display_name}${gn.role ? " (" + gn.role + ")" : ""}`)
      : null,
  ];
}

/** " of its kernel's 12" where the node's kernel `k` computes other fused nodes too and has more than its `mine`:
 * the node's sections (its FX ops, its lines) say they are the node's part of the kernel's `all`. */
function ofItsKernel(k, mine, all) {
  return k && (k.fused_nodes || []).length > 1 && all > mine ? ` of its kernel's ${all}` : "";
}

function fxOpsSection({ idx, n, k, fxByName }, actions) {
  const mine = (n.fx_nodes || []).length;
  // a backward's ops that recompute forward ops (Memory.recomputed, decided in Python: activation checkpointing,
  // the partitioner's rematerialization)
  const backward = idx.compile.graph_kind === "backward";
  const redo = new Map(backward ? ((idx.compile.memory || {}).recomputed || []).map((r) => [r.fx_node, r]) : []);
  const again = (n.fx_nodes || []).filter((f) => redo.has(f));
  // why, in Python's words (Recomputed.reason: the checkpoint(...) call whose region holds them, or the partitioner)
  const why = [...new Set(again.map((f) => redo.get(f).reason).filter(Boolean))];
  return section(
    `FX ops absorbed (${mine}${ofItsKernel(k, mine, ((k && k.fx_nodes) || []).length)})`,
    "fx-nodes",
    again.length
      ? h(
          "p",
          { class: "il-note", "data-role": "recomputed-ops" },
          `Recomputes ${plural(again.length, "forward op")} (marked ↻) instead of the forward saving their results: ` +
            (why.length
              ? `${why.join("; ")}.`
              : "activation checkpointing, or the partitioner finding them cheaper to compute again than to keep."),
        )
      : null,
    h(
      "ul",
      { class: "il-fxlist" },
      (n.fx_nodes || []).map((name) => {
        const gn = fxByName.get(name);
        return h(
          "li",
          {},
          h(
            "button",
            {
              class: "il-link il-mono",
              type: "button",
              "data-fx": name,
              title: "show in the FX graph",
              onclick: () => actions.focusFx(name),
            },
            name,
          ),
          redo.has(name) ? h("span", { class: "il-muted", title: "recomputed in the backward" }, " ↻") : null,
          gn ? h("span", { class: "il-muted" }, fxDescription(gn)) : null,
        );
      }),
    ),
  );
}

function userCodeSection(sel) {
  const stacks = userStacks(sel);
  const built = sel.n.built_lines || [];
  const kernelStacks = ((sel.k && sel.k.user_stack) || []).length;
  const title =
    stacks.length || !built.length
      ? `Your code (${plural(stacks.length, "source line")}${ofItsKernel(sel.k, stacks.length, kernelStacks)})`
      : `Your code: where its modules were built (${plural(built.length, "line")})`;
  return section(
    title,
    "user-stack",
    stacks.length
      ? stacks.map(sourceLine)
      : [built.length ? builtLines(sel.n) : null, noUserSource(sel.n, sel.fxByName, sel.idx.compile)],
  );
}

/** Where the node's ops were merged into one loop (FusedNode.merge_text, decided in Python): inlined by lowering, or
 * fused by the scheduler. */
function mergeSection({ n }) {
  if (!n.merge_text) return null;
  return section("Where its ops were merged", "merge", h("p", {}, n.merge_text));
}

/** The lowering function torch ran for each of the node's ops (GraphNode.lowered_by, outermost first), one row per
 * distinct chain with the ops it lowered: a foreach box names make_foreach_pointwise. Where the compile's record
 * cannot hold them (a TORCH_TRACE import), what Python says of that (Compile.unrecorded.lowered_by). */
function loweredBySection({ n, fxByName, idx }) {
  const rows = new Map();
  for (const name of n.fx_nodes || []) {
    const chain = (fxByName.get(name) || {}).lowered_by || [];
    if (!chain.length) continue;
    const key = chain.map((f) => `${f.file}:${f.line}:${f.function}`).join(" ");
    if (!rows.has(key)) rows.set(key, { chain, ops: [] });
    rows.get(key).ops.push((fxByName.get(name) || {}).short_op || name);
  }
  const unrecorded = ((idx.compile || {}).unrecorded || {}).lowered_by;
  if (!rows.size && unrecorded && !n.is_glue) {
    return section(
      "Lowered by (the lowering function GraphLowering.call_function ran)",
      "lowered-by",
      h("p", { class: "il-muted" }, unrecorded),
    );
  }
  if (!rows.size) return null;
  return section(
    "Lowered by (the lowering function GraphLowering.call_function ran)",
    "lowered-by",
    h(
      "ul",
      { class: "il-lowered-by" },
      [...rows.values()].map(({ chain, ops }) =>
        h(
          "li",
          {},
          chain.flatMap((f, i) => [
            i ? " → " : null,
            h(
              "code",
              { title: f.file ? `${f.file}:${f.line}` : null },
              f.function,
              f.file ? h("span", { class: "il-muted" }, ` (${f.file_label || basename(f.file)}:${f.line})`) : null,
            ),
          ]),
          h("span", { class: "il-muted" }, `: ${[...new Set(ops)].join(", ")}`),
        ),
      ),
    ),
  );
}

/** How many frames `paths` (non-empty ones) share from their start, by file and line. */
function compilerSection({ k, idx }) {
  const cs = (k && k.compiler_stack) || [];
  const c = idx.compile || {};
  const low = c.lowering_stack || [];
  const fus = c.fusion_stack || [];
  if (!cs.length && !low.length && !fus.length) {
    // a TORCH_TRACE import holds none: Python says so (Compile.unrecorded.compiler_stack)
    return section(
      "Inductor's call path that generated this kernel",
      "compiler-stack",
      h("p", { class: "il-muted" }, (c.unrecorded || {}).compiler_stack || "No compiler backtrace recorded."),
    );
  }
  if (!low.length && !fus.length) {
    return section(
      "Inductor's call path that generated this kernel",
      "compiler-stack",
      h(
        "p",
        { class: "il-muted il-note" },
        "From your call (top) to where Inductor generates this kernel or writes its call into the output code (bottom). " +
          "Lowering (GraphLowering.run) and the scheduler's fusion (Scheduler.fuse_nodes) ran before this, on paths of their own (not recorded here).",
      ),
      compilerStack(cs),
    );
  }
  // how many frames the stages' paths share, and the sentence of it: Python's (Kernel/Compile.stage_shared, stage_note)
  const said = k && k.stage_note ? k : c;
  const shared = said.stage_shared || 0;
  const branch = (title, role, frames) =>
    frames.length > shared
      ? h("div", { class: "il-stage-path", "data-path": role }, h("h4", {}, title), compilerStack(frames.slice(shared)))
      : null;
  // the shared frames as the kernel's own path has them (with its frames' notes: Frame.note), else a stage's
  const common = (cs.length >= shared ? cs : low.length ? low : fus).slice(0, shared);
  return section(
    "Inductor's call paths: lowering, fusion, code generation",
    "compiler-stack",
    h(
      "div",
      { "data-role": "stage-paths" },
      h("p", { class: "il-muted il-note" }, said.stage_note || ""),
      shared
        ? h("div", { class: "il-stage-path", "data-path": "shared" }, h("h4", {}, "Shared path"), compilerStack(common))
        : null,
      branch("1. Lowering: each FX op becomes Inductor IR (GraphLowering.call_function)", "lowering", low),
      branch("2. Fusion: the scheduler fuses IR nodes (Scheduler.fuse_nodes)", "fusion", fus),
      branch("3. Code generation: where Inductor generates this kernel or writes its call", "codegen", cs),
    ),
  );
}

/**
 * Render the panel for `fusedName` of compile index `idx` into `el`.
 * actions: {select(fusedName), selectIn(compileId, fusedName), focusFx(fxName), later(fn, ms)}; `report`
 * is the whole report (for ranks and the top-kernels table); `scroller` is what the panel scrolls in (`el`;
 * null draws it whole at once, as for a panel drawn out of sight).
 */
export function renderPanel(el, idx, fusedName, actions, report = null, scroller = el) {
  el.replaceChildren();
  if (!idx.byName.has(fusedName)) {
    el.appendChild(compileSummary(idx, report, actions));
    return;
  }
  const sel = selection(idx, fusedName, report);
  const later = actions.later || ((fn, ms) => setTimeout(fn, ms));
  const parts = [
    headerSection(sel),
    sharedSection(sel, actions),
    // how its ops became this kernel, first (the forum user's question: when and where the node merge happens);
    // each op's lowering function beside the ops, below
    mergeSection(sel),
    measuredSection(sel),
    memorySection(sel),
    whyNotFusedSection(sel, actions),
    ...kernelSections(sel, later, actions),
    fxOpsSection(sel, actions),
    loweredBySection(sel),
    userCodeSection(sel),
    compilerSection(sel),
  ];
  for (const p of parts) if (p) el.appendChild(p);
  if (scroller) drawBelowTheFoldLater(parts.filter(Boolean).slice(1), scroller, later);
}

/**
 * A click draws the part of its panel that shows; what lies below the panel's fold waits for the task after the
 * click's paint (issue 26). The large panels (a launch table, a few hundred lines of kernel source, the FX ops,
 * both backtraces: ~900 elements, ~3000 px) were styled, laid out and painted whole in the click's frame (a
 * scroller paints all of its content), and the kernel source even with `content-visibility: auto`: Chromium
 * counts as near the view what lies within 150% of the viewport of it. So every section below the header starts
 * `il-later` (`display: none`: not styled, laid out or painted; `innerText` of the section itself is still its
 * text) and the kernel source `<pre>` too (`content-visibility: hidden`). In the frame, before its layout
 * (requestAnimationFrame), the sections are shown one by one while they start inside the panel's view (each
 * reading costs the layout of that section, which the frame needed anyway), and the source if it shows; the
 * rest is shown in a task after the paint (the source then `content-visibility: auto` as before: drawn when it
 * comes near the view).
 */
function drawBelowTheFoldLater(sections, scroller, later) {
  if (!sections.length || typeof requestAnimationFrame !== "function") return;
  const pre = sections.map((s) => s.querySelector('pre[data-role="kernel-source"]')).find(Boolean);
  for (const s of sections) s.classList.add("il-later");
  if (pre) pre.classList.add("il-later");
  const showAll = () => {
    for (const s of sections) s.classList.remove("il-later");
    if (pre) pre.classList.remove("il-later");
  };
  // where the panel's view ends (read again after each section: a host may let the panel grow with its content)
  const fold = () => Math.min(scroller.getBoundingClientRect().bottom, window.innerHeight);
  requestAnimationFrame(() => {
    if (!sections[0].isConnected) return; // drawn again since
    for (const s of sections) {
      s.classList.remove("il-later");
      if (s.getBoundingClientRect().bottom >= fold()) break;
    }
    if (pre && !pre.parentElement.closest(".il-later") && pre.getBoundingClientRect().top < fold())
      pre.classList.remove("il-later");
    later(showAll, 0); // a task after this frame's paint
  });
}

/**
 * Do once, while the page is idle, what the first click would otherwise pay for: index the compile's FX
 * nodes and refusals, rank the report's kernels, and render the panel once (its code runs several times
 * slower the first time, not optimized yet, and the first layout of its text is slower too) for the first
 * fused node with a kernel. With a `host`, the rendered panel is put there out of sight, laid out, and taken
 * out again within this one task: no paint, no other script and no test ever sees a second panel (one left
 * for a frame was seen by a JupyterLab test as a second `data-role=kernel-source`).
 */
export function prewarmPanel(idx, report, host = null) {
  const n = idx.boxes.find((b) => b.kernel && idx.kernels.has(b.kernel));
  if (!n) return;
  derived(idx);
  if (report) kernelRank(report, idx.compile.id, n.kernel);
  const noop = () => {};
  const el = h("div", { class: "il-panel il-prewarm", "aria-hidden": "true", inert: "" });
  renderPanel(el, idx, n.name, { select: noop, selectIn: noop, focusFx: noop, later: noop }, report, null);
  if (!host) return;
  host.appendChild(el);
  try {
    el.getBoundingClientRect(); // style and layout of the panel's text, now
  } finally {
    el.remove();
  }
}

/** What the panel shows with nothing selected: when and why this graph compiled. */
export function compileSummary(idx, report = null, actions = null) {
  const c = idx.compile;
  const t = c.trigger || {};
  const frames = t.user_stack || [];
  const reason = c.why || ""; // Compile.why (rules.compile_why)
  const compiles = (report && report.compiles) || [];
  const group = [...sameGraphGroups(compiles).values()].find((g) => g.includes(c.id)) || [c.id];
  return h(
    "div",
    { class: "il-summary" },
    h("h3", {}, `Compile ${c.id}`, c.frame || c.frame_label ? ` · ${frameLabel(c)}` : ""),
    // the kinds are the fused nodes' (a kernel may compute several): "35 fused nodes (14 pointwise, ...) in 18
    // kernels", Compile.contents (rules.contents_text)
    h("p", { "data-role": "contents" }, c.contents || ""),
    group.length > 1
      ? h(
          "p",
          { "data-role": "same-graph" },
          `${plural(group.length, "compile")} of the same graph: ${group.join(", ")}`,
        )
      : null,
    h(
      "p",
      {},
      h("strong", {}, "When it compiled: "),
      t.summary || "not recorded",
      t.time_us != null ? `, ${fmtUs(t.time_us)} into the capture` : "",
    ),
    // the torch.compile() call that only wrapped this function, and how long before this compile it ran
    // (Report.wrapped_by, rules.wrapped_by)
    report && report.wrapped_by && report.wrapped_by[c.id]
      ? h("p", { class: "il-muted", "data-role": "compile-call" }, report.wrapped_by[c.id].text)
      : null,
    reason
      ? h(
          "div",
          {
            class: "il-reason-box" + (c.recompile_reason || t.kind === "recompile" ? " il-recompile" : ""),
            "data-role": "compile-reason",
          },
          h("strong", {}, c.recompile_reason ? "Recompiled because: " : "Why: "),
          h("span", { class: "il-pre" }, reason),
        )
      : null,
    frames.length ? h("div", { "data-role": "trigger-stack" }, userStack(frames)) : null,
    c.graph_note ? h("p", { class: "il-note", "data-role": "graph-note" }, c.graph_note) : null, // rules.graph_note
    c.autotune_note ? h("p", { class: "il-note", "data-role": "autotune-note" }, c.autotune_note) : null, // rules
    // the user's graph passes (Compile.custom_pass_note, rules.custom_pass_note): the graphs are not Inductor's alone
    c.custom_pass_note ? h("p", { class: "il-note", "data-role": "custom-pass-note" }, c.custom_pass_note) : null,
    c.modules_inferred // Compile.modules_inferred (report/module_paths.py): the graph recorded no module paths
      ? h(
          "p",
          { class: "il-muted", "data-role": "modules-inferred" },
          "Module paths inferred, not recorded: from the parameters each op reads and the ops around it.",
        )
      : null,
    guardsSection(c),
    cudagraphsSection(c),
    graphBreaks(report),
    emptyFrames(report),
    h(
      "p",
      { class: "il-muted" },
      "Click a box to see its kernel source, the FX ops it fused, why it was not fused further, and the user and compiler backtraces. Keys: ↑/↓ previous/next kernel, Shift+arrows or ←/→ pan, / search, f fit, number keys switch views (in tab order), Esc clear.",
    ),
    report && actions ? topKernelsSection(report, (cid, fused) => actions.selectIn(cid, fused)) : null,
  );
}

/** The guards torch installed for a compile: what a later call must match to reuse it. Its guards on sizes
 * (Compile.size_guards, decided in Python) listed; torch's whole guard text folded below them. */
function guardsSection(c) {
  const sizes = c.size_guards || [];
  if (!c.guards && !sizes.length) return null;
  return section(
    "Guards",
    "guards",
    h(
      "p",
      { class: "il-muted" },
      "What a later call must match to reuse this compile; a call that fails one recompiles.",
    ),
    sizes.length
      ? h(
          "ul",
          { class: "il-guards", "data-role": "size-guards" },
          sizes.map((g) => h("li", {}, h("code", {}, g))),
        )
      : null,
    c.guards
      ? lazyDetails(
          { "data-role": "guard-text" },
          h("summary", {}, sizes.length ? "all of torch's guards" : "torch's guards"),
          () => h("pre", { class: "il-pre il-guard-text" }, c.guards),
        )
      : null,
  );
}

/** The panel of a report with no compile: why (the frames dynamo gave up on or found empty, the graph breaks). */
export function noCompilePanel(report) {
  return h(
    "div",
    { class: "il-summary" },
    h("p", { class: "il-muted", "data-role": "nothing" }, report.nothing || ""), // Report.nothing: why, Python's
    emptyFrames(report, "Dynamo traced these frames; none of them gave Inductor a graph to compile."),
    graphBreaks(report),
  );
}

/** The frames dynamo traced that gave Inductor no graph (Report.empty_frames, decided in Python): why the compile
 * ids jump (0/0, then 3/0). */
function emptyFrames(
  report,
  intro = "Dynamo numbers every frame it traces; these gave Inductor nothing to compile, so the compiles skip their ids.",
) {
  const ef = (report && report.empty_frames) || [];
  if (!ef.length) return null;
  return section(
    `Frames with no graph (${ef.length})`,
    "empty-frames",
    h("p", { class: "il-muted il-note" }, intro),
    h(
      "ul",
      { class: "il-why" },
      ef.map((f) =>
        h(
          "li",
          { "data-role": "empty-frame", "data-compile": f.compile_id, title: `${f.file}:${f.line}\n${f.what}` },
          h("span", { class: "il-mono" }, f.compile_id),
          ` ${f.label}`,
          f.file ? h("span", { class: "il-muted" }, ` · ${basename(f.file)}:${f.line}`) : null,
          // a frame dynamo gave up on ran uncompiled: why, in Python's words (EmptyFrame.what)
          f.fail ? h("div", { class: "il-note", "data-role": "eager-frame" }, f.what) : null,
          // a frame traced again (a guard of its earlier trace failed): what failed, as a compile's (EmptyFrame.why)
          f.why
            ? h(
                "div",
                { class: "il-reason-box il-recompile", "data-role": "frame-recompile" },
                h("strong", {}, "Recompiled because: "),
                h("span", { class: "il-pre" }, f.why),
              )
            : null,
        ),
      ),
    ),
  );
}

/** The report's graph breaks: each reason's telling line (GraphBreak.summary), the whole reason on a click, the
 * line shown for it (GraphBreak.shown_frame: the user's innermost) and, under it, where inside torch or a library
 * it broke (GraphBreak.inside_text), under the breaks counted as the page's header counts them (Report.breaks): all
 * decided in Python. */
function graphBreaks(report) {
  const gb = (report && report.graph_breaks) || [];
  if (!gb.length) return null;
  return section(
    // Report.breaks (Python, rules.breaks_text): the page header's words, torch's count too where it differs
    report.breaks ? `Graph breaks in this capture: ${report.breaks}` : "Graph breaks in this capture",
    "graph-breaks",
    h(
      "ul",
      { class: "il-why" },
      gb.map((b) => {
        const stack = b.user_stack || [];
        const fr = stack[b.shown_frame];
        const inside = b.inside_text ? `\n${b.inside_text}` : "";
        const ids = (b.compile_ids || []).join(", ");
        return h(
          "li",
          {},
          folded(String(b.reason || ""), "il-reason il-pre", b.summary), // the telling line; all of it on a click
          fr
            ? h(
                "div",
                {
                  class: "il-head-line",
                  title: `${fr.file}:${fr.line}${inside}${ids ? `\nin frame(s) ${ids}` : ""}`,
                  "data-role": "break-line",
                },
                h("span", { class: "il-file" }, `${frameFile(fr)}:${fr.line}`),
                // the frames it broke in (GraphBreak.compile_ids): a recompile breaks again at the same place. Before
                // the code, which a narrow panel cuts: two breaks of one summary differ by their frames
                ids ? h("span", { class: "il-muted", "data-role": "break-compiles" }, ` in ${ids} ·`) : null,
                " ",
                h("code", {}, String(fr.code || "").trim()),
              )
            : null,
          // a break inside torch or a library: not the user's to remove, whatever torch's hint says
          fr && b.inside_text
            ? h("div", { class: "il-break-inside", "data-role": "break-inside", title: b.inside_text }, b.inside_text)
            : null,
        );
      }),
    ),
  );
}
