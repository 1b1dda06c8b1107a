// The side panel: what the selected fused node is, its kernel source, the FX ops it absorbed,
// why Inductor did not fuse it with its neighbours, and both backtraces.
import { h } from "./dom.js";
import { renderCode } from "./code.js";
import { kernelOf, groupFrames, frameStage, STAGE_LABELS, basename, fmtUs, fmtShare, shortOp, topKernels, plural, sharedKernel, frameLabel } from "./data.js";
import { metadataSection, autotuneSection, profileSection, topKernelsSection } from "./kernelinfo.js";
import { costSection } from "./roofline.js";

function frameRow(fr, stage) {
  return h("li", { class: `il-frame il-stage-${stage}`, title: `${fr.file}:${fr.line}` },
    h("div", { class: "il-frame-loc" },
      h("span", { class: "il-file" }, `${basename(fr.file)}:${fr.line}`),
      h("span", { class: "il-fn" }, ` in ${fr.function}`)),
    fr.code ? h("code", { class: "il-frame-code" }, String(fr.code).trim()) : null);
}

/** One user stack: the user's frames shown, the others folded away. */
function userStack(frames) {
  const user = frames.filter((f) => frameStage(f) === "user");
  const other = frames.length - user.length;
  const box = h("div", { class: "il-stack" });
  const list = h("ol", { class: "il-frames" }, (user.length ? user : frames.slice(-1)).map((f) => frameRow(f, frameStage(f))));
  box.appendChild(list);
  if (other > 0) {
    const all = h("details", { class: "il-more" }, h("summary", {}, `all ${frames.length} frames`),
      h("ol", { class: "il-frames" }, frames.map((f) => frameRow(f, frameStage(f)))));
    box.appendChild(all);
  }
  return box;
}

/** The compiler's stack, grouped into stages (dynamo, AOT, lowering, scheduler, codegen). */
export function compilerStack(frames) {
  const groups = groupFrames(frames);
  const box = h("div", { class: "il-stages" });
  groups.forEach((g, i) => {
    const first = g.frames[0], last = g.frames[g.frames.length - 1];
    const open = g.stage === "user" || i === groups.length - 1;
    const d = h("details", { class: `il-stagegroup il-stage-${g.stage}`, dataset: { stage: g.stage } },
      h("summary", {},
        h("span", { class: "il-stage-name" }, STAGE_LABELS[g.stage] || g.stage),
        h("span", { class: "il-muted" }, ` · ${g.frames.length} frame${g.frames.length === 1 ? "" : "s"} · ${first.function}${g.frames.length > 1 ? " … " + last.function : ""}`)),
      h("ol", { class: "il-frames" }, g.frames.map((f) => frameRow(f, frameStage(f)))));
    if (open) d.open = true;
    box.appendChild(d);
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
// Ops without a recorded line: dynamo keeps no stack for code inside torch itself (an nn.Sequential of
// nn.Linear, say). Say so, and give what is known instead: the module path and the call that compiled it.
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
  return h("div", { class: "il-muted" },
    h("p", {}, "Dynamo recorded no source line for these ops: they come from code inside torch (such as torch.nn modules), not from a line of yours."),
    modules.length ? h("p", {}, "Module: ", h("span", { class: "il-mono" }, modules.join(", "))) : null,
    call ? h("p", {}, "They run when your code calls the compiled function: ", h("span", { class: "il-mono" }, `${call.file.split("/").pop()}:${call.line} ${String(call.code || "").trim()}`)) : null);
}

export function renderPanel(el, idx, fusedName, actions, report = null) {
  el.replaceChildren();
  const entry = idx.byName.get(fusedName);
  if (!entry) {
    el.appendChild(compileSummary(idx, report, actions));
    return;
  }
  const n = entry.node;
  const k = kernelOf(idx, fusedName);
  const fxByName = new Map();
  for (const g of Object.values(idx.compile.graphs || {})) for (const gn of g.nodes || []) if (!fxByName.has(gn.name)) fxByName.set(gn.name, gn);
  const post = (idx.compile.graphs || {}).post_grad;
  if (post) for (const gn of post.nodes || []) fxByName.set(gn.name, gn);

  el.appendChild(h("header", { class: "il-panel-head" },
    h("div", { class: "il-title", "data-role": "selected-name" }, k ? k.name : n.name),
    h("div", { class: "il-chips" },
      h("span", { class: `il-chip kind-${n.kind}` }, n.kind),
      h("span", { class: "il-chip" }, `#${entry.index} of ${idx.fused.length}`),
      h("span", { class: "il-chip" }, plural((n.fx_nodes || []).length, "FX op")),
      k ? h("span", { class: "il-chip" }, k.language) : null,
      n.estimated_runtime_us != null ? h("span", { class: "il-chip", title: "Inductor's own estimate" }, `est. ${fmtUs(n.estimated_runtime_us)}`) : null,
      k && k.profile && k.profile.total_us != null ? h("span", { class: "il-chip il-chip-strong", title: "measured device time per run, and its share of all measured kernel time" }, `${fmtUs(k.profile.total_us)} · ${fmtShare(k.profile.share)}`) : null),
    h("div", { class: "il-muted il-small" }, `fused node ${n.name}`,
      (n.module_stack || []).length ? ` · module ${n.module_stack[n.module_stack.length - 1]}` : "",
      (n.members || []).length > 1 ? ` · fused from ${n.members.length} nodes: ${n.members.join(", ")}` : "")));

  // one kernel, several fused nodes: Inductor emitted them into the same kernel (not separate launches)
  const siblings = sharedKernel(idx, n.name);
  if (siblings.length) {
    el.appendChild(h("div", { class: "il-shared-note", "data-role": "shared-kernel" },
      h("strong", {}, "One kernel, several fused nodes. "),
      `Inductor emitted this fused node and ${plural(siblings.length, "other")} into the same kernel${k ? " " : ""}`,
      k ? h("span", { class: "il-mono" }, k.name) : null,
      ": this kernel also computes ",
      ...siblings.flatMap((x, i) => [i ? ", " : "", "fused node ",
        h("button", { class: "il-link il-mono", type: "button", "data-sibling": x.name, title: "select this fused node", onclick: () => actions.select(x.name) }, x.name),
        ` (#${x.index}, ${x.kind})`]),
      ". The kernel source below is shared."));
  }

  // measured time
  if (k && k.profile && report) {
    const ranked = topKernels(report, 0);
    const rank = ranked.findIndex((r) => r.compileId === idx.compile.id && r.kernel === k.name) + 1;
    const sec = profileSection(k, rank, ranked.length);
    if (sec) el.appendChild(sec);
  }
  const cost = k ? costSection(k) : null;
  if (cost) el.appendChild(cost);

  // why not fused
  const refusals = (idx.compile.fusion_decisions || []).filter((d) => (d.fused1 === n.name || d.fused2 === n.name) && d.fused1 !== d.fused2);
  if (refusals.length) {
    // one row per neighbour: Inductor tries every member pair of two fused nodes, so the same
    // refusal often comes many times; show each neighbour once with its distinct reasons
    const byOther = new Map();
    for (const d of refusals) {
      const other = d.fused1 === n.name ? d.fused2 : d.fused1;
      const key = other || `${d.node1} / ${d.node2}`;
      const g = byOther.get(key) || { other, label: key, reasons: [], pairs: [] };
      if (!g.reasons.includes(d.reason)) g.reasons.push(d.reason);
      g.pairs.push(`${d.node1} + ${d.node2}`);
      byOther.set(key, g);
    }
    const row = (g) => {
      const otherNode = g.other && idx.byName.get(g.other);
      return h("li", { "data-other": g.label },
        otherNode
          ? h("button", { class: "il-link il-mono", type: "button", onclick: () => actions.select(g.other) }, otherNode.node.kernel || g.other)
          : h("span", { class: "il-mono" }, g.label),
        h("span", { class: "il-muted", title: g.pairs.join("\n") }, g.pairs.length > 1 ? ` (${g.pairs.length} node pairs) ` : ` (${g.pairs[0]}) `),
        h("span", { class: "il-reason" }, g.reasons.join("; ")));
    };
    const groups = [...byOther.values()];
    const SHOW = 6;
    el.appendChild(section(`Why not fused (${groups.length} neighbour${groups.length === 1 ? "" : "s"})`, "why-not-fused",
      h("ul", { class: "il-why" }, groups.slice(0, SHOW).map(row)),
      groups.length > SHOW ? h("details", { class: "il-more" }, h("summary", {}, `${groups.length - SHOW} more`), h("ul", { class: "il-why" }, groups.slice(SHOW).map(row))) : null));
  }

  // kernel source
  if (k) {
    const pre = h("pre", { class: "il-code", "data-role": "kernel-source" });
    renderCode(pre, k.source, k.language);
    const copy = h("button", { class: "il-btn il-copy", type: "button", title: "copy the kernel source" }, "Copy");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(k.source);
        copy.textContent = "Copied";
      } catch (e) {
        const ta = h("textarea", {}, k.source);
        document.body.appendChild(ta);
        ta.select();
        try { document.execCommand("copy"); copy.textContent = "Copied"; } catch (e2) { copy.textContent = "Copy failed"; }
        ta.remove();
      }
      setTimeout(() => (copy.textContent = "Copy"), 1500);
    });
    const launch = metadataSection(k);
    if (launch) el.appendChild(launch);
    const ops = [];
    for (const name of n.fx_nodes || []) { const gn = fxByName.get(name); const op = gn ? shortOp(gn.target) : name; if (!ops.includes(op)) ops.push(op); }
    const tune = autotuneSection(k, ops);
    if (tune) el.appendChild(tune);
    el.appendChild(h("section", { class: "il-section" },
      h("h3", {}, k.language === "extern" ? "Extern call source" : "Kernel source", " ", h("span", { class: "il-muted" }, k.name), copy),
      pre));
  } else {
    el.appendChild(section("Kernel source", "kernel-source", h("p", { class: "il-muted" }, "This node generated no kernel of its own (a no-op, a view, or a buffer reuse).")));
  }

  // fx ops
  el.appendChild(section(`FX ops absorbed (${(n.fx_nodes || []).length})`, "fx-nodes",
    h("ul", { class: "il-fxlist" }, (n.fx_nodes || []).map((name) => {
      const gn = fxByName.get(name);
      return h("li", {},
        h("button", { class: "il-link il-mono", type: "button", "data-fx": name, title: "show in the FX graph", onclick: () => actions.focusFx(name) }, name),
        gn ? h("span", { class: "il-muted" }, ` = ${gn.target}${gn.shape ? " [" + gn.shape.join(", ") + "]" : ""}${gn.dtype ? " " + gn.dtype : ""}`) : null);
    }))));

  // user backtrace
  let stacks = (k && k.user_stack) || [];
  if (!stacks.length) {
    const seen = new Set();
    for (const name of n.fx_nodes || []) {
      const gn = fxByName.get(name);
      if (!gn || !(gn.user_stack || []).length) continue;
      const last = gn.user_stack[gn.user_stack.length - 1];
      const key = `${last.file}:${last.line}`;
      if (!seen.has(key)) { seen.add(key); stacks.push(gn.user_stack); }
    }
  }
  el.appendChild(section(`Your code (${stacks.length} source location${stacks.length === 1 ? "" : "s"})`, "user-stack",
    stacks.length ? stacks.map(userStack) : noUserSource(n, fxByName, idx.compile)));

  // compiler backtrace
  const cs = (k && k.compiler_stack) || [];
  el.appendChild(section("Inductor's call path that generated this kernel", "compiler-stack",
    cs.length ? [h("p", { class: "il-muted il-note" }, "From your call (top) to where Inductor writes this kernel into the output code (bottom). "
      + "Fusion happened before this, in Scheduler.__init__ (a phase on the timeline), on a path of its own."), compilerStack(cs)]
      : h("p", { class: "il-muted" }, "No compiler backtrace recorded.")));
}

/** What the panel shows with nothing selected: when and why this graph compiled. */
export function compileSummary(idx, report = null, actions = null) {
  const c = idx.compile;
  const t = c.trigger || {};
  const frames = t.user_stack || [];
  const kinds = {};
  for (const n of idx.fused) kinds[n.kind] = (kinds[n.kind] || 0) + 1;
  return h("div", { class: "il-summary" },
    h("h3", {}, `Compile ${c.id}`, c.frame ? ` · ${frameLabel(c)}` : ""),
    h("p", {}, `${plural(idx.fused.length, "fused node")}, ${plural((c.kernels || []).length, "kernel")}: `,
      Object.entries(kinds).map(([k, v]) => `${v} ${k}`).join(", ")),
    h("p", {}, h("strong", {}, "When it compiled: "), `${t.kind || "unknown"}`, t.reason ? ` (${t.reason})` : "",
      t.time_us != null ? ` at ${fmtUs(t.time_us)} into the capture` : ""),
    frames.length ? h("div", { "data-role": "trigger-stack" }, userStack(frames)) : null,
    h("p", { class: "il-muted" }, "Click a box to see its kernel source, the FX ops it fused, why it was not fused further, and the user and compiler backtraces. Keys: ↑/↓ previous/next kernel, / search, f fit, 1-3 views, Esc clear."),
    report && actions ? topKernelsSection(report, (cid, fused) => actions.selectIn(cid, fused)) : null);
}
