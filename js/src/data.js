// Pure functions over a report (the JSON of inductor_lens.model.Report): indexes, edges,
// collapsing by module, frame classification, search. No DOM here, so node --test runs it.

export const KINDS = ["pointwise", "reduction", "extern", "template", "foreach", "nop", "other"];

/** Index one compile: lookups the views need. */
export function indexCompile(c) {
  const fused = c.fused_nodes || [];
  const byName = new Map(fused.map((n, i) => [n.name, { node: n, index: i }]));
  const kernels = new Map((c.kernels || []).map((k) => [k.name, k]));
  const writer = new Map();  // buffer -> fused node name
  fused.forEach((n) => (n.writes || []).forEach((b) => writer.set(b, n.name)));
  const fxOwner = new Map();  // post-grad fx node -> fused node name
  fused.forEach((n) => (n.fx_nodes || []).forEach((f) => { if (!fxOwner.has(f)) fxOwner.set(f, n.name); }));
  for (const k of c.kernels || []) {
    const owner = (k.fused_nodes || []).find((f) => byName.has(f));
    if (owner) (k.fx_nodes || []).forEach((f) => { if (!fxOwner.has(f)) fxOwner.set(f, owner); });
  }
  const byKernel = new Map();  // kernel name -> fused node names
  fused.forEach((n) => { if (n.kernel) byKernel.set(n.kernel, [...(byKernel.get(n.kernel) || []), n.name]); });
  return { compile: c, fused, byName, kernels, writer, fxOwner, byKernel };
}

/** The kernel object of a fused node (or null). */
export function kernelOf(idx, fusedName) {
  const e = idx.byName.get(fusedName);
  if (!e || !e.node.kernel) return null;
  return idx.kernels.get(e.node.kernel) || null;
}

/** Resolve a name typed by a user (fused node, kernel, or FX node) to a fused node name. */
export function resolveSelection(idx, name) {
  if (!name) return "";
  if (idx.byName.has(name)) return name;
  const viaKernel = idx.byKernel.get(name);
  if (viaKernel && viaKernel.length) return viaKernel[0];
  if (idx.fxOwner.has(name)) return idx.fxOwner.get(name);
  return "";
}

/** Data edges between fused nodes, plus graph inputs and outputs. */
export function fusionEdges(idx) {
  const c = idx.compile;
  const inputs = new Set(c.graph_inputs || []);
  const pairs = new Map();  // "a\0b" -> {from, to, buffers}
  const add = (from, to, buf) => {
    if (from === to) return;
    const key = from + "\0" + to;
    const e = pairs.get(key) || { from, to, buffers: [] };
    if (!e.buffers.includes(buf)) e.buffers.push(buf);
    pairs.set(key, e);
  };
  const usedInputs = [];
  for (const n of idx.fused) {
    for (const b of n.reads || []) {
      const w = idx.writer.get(b);
      if (w) add("node:" + w, "node:" + n.name, b);
      else if (inputs.has(b)) {
        if (!usedInputs.includes(b)) usedInputs.push(b);
        add("in:" + b, "node:" + n.name, b);
      }
    }
  }
  const outputs = [];
  for (const b of c.graph_outputs || []) {
    const w = idx.writer.get(b);  // inputs passed straight through (saved for backward) are left out
    if (w && !outputs.includes(b)) { outputs.push(b); add("node:" + w, "out:" + b, b); }
  }
  return { edges: [...pairs.values()], inputs: usedInputs, outputs };
}

/** The group a fused node is shown in: the outermost module of its stack not expanded. */
export function groupOf(node, expanded) {
  for (const m of node.module_stack || []) if (!expanded.has(m)) return m;
  return null;
}

/** Count the items shown for a set of expanded modules. */
export function visibleCount(fused, expanded) {
  const seen = new Set();
  let n = 0;
  for (const f of fused) {
    const g = groupOf(f, expanded);
    if (g === null) n++;
    else if (!seen.has(g)) { seen.add(g); n++; }
  }
  return n;
}

/**
 * Choose which modules start expanded so that at most `limit` items are shown:
 * expand the largest group while the result still fits.
 */
export function initialExpansion(fused, limit) {
  const expanded = new Set();
  if (fused.length <= limit) {
    for (const f of fused) for (const m of f.module_stack || []) expanded.add(m);
    return expanded;
  }
  for (;;) {
    const sizes = new Map();
    for (const f of fused) {
      const g = groupOf(f, expanded);
      if (g !== null) sizes.set(g, (sizes.get(g) || 0) + 1);
    }
    const order = [...sizes.entries()].sort((a, b) => b[1] - a[1]);
    let grew = false;
    for (const [g] of order) {
      const trial = new Set(expanded);
      trial.add(g);
      if (visibleCount(fused, trial) <= limit) { expanded.add(g); grew = true; break; }
    }
    if (!grew) return expanded;
  }
}

/** Where a frame comes from: "user" code, a compiler stage, or other library code. */
export function frameStage(frame) {
  const f = String(frame.file || "").replace(/\\/g, "/");
  const fn = String(frame.function || "");
  if (/\/torch\/_dynamo\//.test(f)) return "dynamo";
  if (/\/torch\/_functorch\//.test(f)) return "aot";
  if (/\/torch\/_inductor\/codegen\//.test(f)) return "codegen";
  if (/\/torch\/_inductor\/scheduler\.py$/.test(f)) return /^_?codegen/.test(fn) ? "codegen" : "scheduler";
  if (/\/torch\/_inductor\/graph\.py$/.test(f)) return /codegen|compile_to/.test(fn) ? "codegen" : "lowering";
  if (/\/torch\/_inductor\/(lowering|ir|decomposition|fx_passes\/|pattern_matcher|select_algorithm|kernel\/)/.test(f)) return "lowering";
  if (/\/torch\/_inductor\//.test(f)) return "inductor";
  if (/\/torch\//.test(f)) return "torch";
  if (/(site-packages|dist-packages)\/|\/lib\/python3[^/]*\/|^<frozen|^<string>/.test(f)) return "library";
  return "user";
}

export const STAGE_LABELS = {
  user: "your code",
  dynamo: "Dynamo (traces your Python frame)",
  aot: "AOT Autograd (forward/backward graphs)",
  inductor: "Inductor (compile_fx)",
  lowering: "Inductor lowering (FX -> IR)",
  scheduler: "Inductor scheduler (fusion)",
  codegen: "Inductor codegen (kernel source)",
  torch: "torch",
  library: "other libraries",
};

/** Consecutive frames of the same stage, in order. */
export function groupFrames(frames) {
  const groups = [];
  for (const fr of frames || []) {
    const stage = frameStage(fr);
    const last = groups[groups.length - 1];
    // plain torch / library frames (decorators, wrappers) stay in the stage that called them
    if (last && (last.stage === stage || ((stage === "torch" || stage === "library") && last.stage !== "user"))) last.frames.push(fr);
    else groups.push({ stage, frames: [fr] });
  }
  return groups;
}

export function basename(path) {
  const s = String(path || "");
  const i = Math.max(s.lastIndexOf("/"), s.lastIndexOf("\\"));
  return i >= 0 ? s.slice(i + 1) : s;
}

/** A short op name for an FX node target: "aten.sin.default" -> "sin". */
export function shortOp(target) {
  const t = String(target || "");
  const m = /(?:^|\.)([A-Za-z0-9_]+)(?:\.(?:default|Tensor|Scalar|int|dim|self|out|[A-Za-z_]+))?$/.exec(t.replace(/^aten\./, ""));
  return m ? m[1] : t;
}

/** Search every compile. Returns up to `limit` hits {compileId, fused, label, what}. */
export function search(report, query, limit = 30) {
  const q = String(query || "").trim().toLowerCase();
  if (!q) return [];
  const hits = [];
  const push = (h) => { if (hits.length < limit && !hits.some((x) => x.compileId === h.compileId && x.fused === h.fused && x.label === h.label)) hits.push(h); };
  const has = (s) => String(s || "").toLowerCase().includes(q);
  const frameHit = (fr) => has(`${fr.file}:${fr.line}`) || has(fr.code) || has(fr.function);
  for (const c of report.compiles || []) {
    const idx = indexCompile(c);
    for (const n of idx.fused) {
      const k = kernelOf(idx, n.name);
      if (has(n.name)) push({ compileId: c.id, fused: n.name, what: "fused node", label: n.name });
      if (n.kernel && has(n.kernel)) push({ compileId: c.id, fused: n.name, what: "kernel", label: n.kernel });
      for (const f of n.fx_nodes || []) if (has(f)) push({ compileId: c.id, fused: n.name, what: "op", label: f });
      for (const b of [...(n.reads || []), ...(n.writes || [])]) if (has(b)) push({ compileId: c.id, fused: n.name, what: "buffer", label: b });
      for (const m of n.module_stack || []) if (has(m)) push({ compileId: c.id, fused: n.name, what: "module", label: m });
      if (k) {
        for (const stack of k.user_stack || []) for (const fr of stack) {
          if (frameHit(fr)) push({ compileId: c.id, fused: n.name, what: "source", label: `${basename(fr.file)}:${fr.line} ${String(fr.code || "").trim()}` });
        }
      }
    }
    const post = (c.graphs || {}).post_grad;
    for (const g of post ? [post] : []) for (const gn of g.nodes || []) {
      const owner = idx.fxOwner.get(gn.name);
      if (owner && has(gn.target) && !hits.some((x) => x.fused === owner && x.label === gn.name)) push({ compileId: c.id, fused: owner, what: "op", label: `${gn.name} = ${gn.target}` });
    }
  }
  return hits;
}

/** Format microseconds for people. */
export function fmtUs(us) {
  if (us === null || us === undefined || Number.isNaN(us)) return "?";
  if (Math.abs(us) >= 1e6) return (us / 1e6).toFixed(2) + " s";
  if (Math.abs(us) >= 1e3) return (us / 1e3).toFixed(1) + " ms";
  return us.toFixed(0) + " µs";
}
