// Pure functions over a report (the JSON of inductor_lens.report.model.Report): indexes, edges,
// collapsing by module, frame classification, search. No DOM here, so node --test runs it.

export const KINDS = ["pointwise", "reduction", "extern", "template", "foreach", "nop", "other"];

/** Index one compile: lookups the views need. */
export function indexCompile(c) {
  const fused = c.fused_nodes || [];
  // `index`: the node's number among the boxes (#0 first, what its box, its panel and the memory curve say);
  // -1 for glue (Python's `is_glue`: drawn as an edge, no number of its own)
  let box = 0;
  const byName = new Map(fused.map((n) => [n.name, { node: n, index: n.is_glue ? -1 : box++ }]));
  const kernels = new Map((c.kernels || []).map((k) => [k.name, k]));
  const fxOwner = new Map(); // post-grad fx node -> fused node name
  fused.forEach((n) =>
    (n.fx_nodes || []).forEach((f) => {
      if (!fxOwner.has(f)) fxOwner.set(f, n.name);
    }),
  );
  for (const k of c.kernels || []) {
    const owner = (k.fused_nodes || []).find((f) => byName.has(f));
    if (owner)
      (k.fx_nodes || []).forEach((f) => {
        if (!fxOwner.has(f)) fxOwner.set(f, owner);
      });
  }
  const byKernel = new Map(); // kernel name -> fused node names
  fused.forEach((n) => {
    if (n.kernel && !n.is_glue) byKernel.set(n.kernel, [...(byKernel.get(n.kernel) || []), n.name]);
  });
  // the fused nodes drawn as boxes: Python marks no-kernel glue (getitem, views) `is_glue`, drawn as edges
  const boxes = fused.filter((n) => !n.is_glue);
  return { compile: c, fused, boxes, byName, kernels, fxOwner, byKernel };
}

/** The kernel object of a fused node (or null). */
export function kernelOf(idx, fusedName) {
  const e = idx.byName.get(fusedName);
  if (!e || !e.node.kernel) return null;
  return idx.kernels.get(e.node.kernel) || null;
}

/** "1 kernel", "3 kernels" (`many` for irregular plurals). */
export function plural(n, one, many = one + "s") {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The other fused nodes emitted into the same kernel as `fusedName` (Inductor can write two
 * scheduler nodes into one C++/Triton kernel): [{name, index, kind}] in execution order.
 */
export function sharedKernel(idx, fusedName) {
  const e = idx.byName.get(fusedName);
  if (!e || !e.node.kernel) return [];
  return (idx.byKernel.get(e.node.kernel) || [])
    .filter((x) => x !== fusedName)
    .map((x) => ({ name: x, index: idx.byName.get(x).index, kind: idx.byName.get(x).node.kind }));
}

/**
 * The fused nodes computed by the same kernel call as `fusedName` (itself included), in execution order:
 * the kernel's `call_sites` entry that holds it (decided in Python, report/finish.py). A kernel whose source
 * is reused elsewhere has several call sites: one kernel called twice, not one fusion.
 */
export function kernelRun(idx, fusedName) {
  const e = idx.byName.get(fusedName);
  const k = e && e.node.kernel ? idx.kernels.get(e.node.kernel) : null;
  const site = k && (k.call_sites || []).find((s) => s.includes(fusedName));
  return site ? site.filter((f) => idx.byName.has(f)) : [fusedName];
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

/**
 * The fusion graph's data edges as the drawing keys them (`node:` a fused node, `in:` a graph input, `out:` a graph
 * output: its position in Compile.outputs, or its buffer in a report before those), and the graph inputs and outputs
 * they use, in order: Compile.edges, decided in Python (report/rules.fusion_edges: glue passed through; `alias` from
 * an input to an output that is it or a view of it).
 */
export function fusionEdges(idx) {
  const ends = { node: ["node:", "node:"], input: ["in:", "node:"], output: ["node:", "out:"], alias: ["in:", "out:"] };
  const inputs = new Set();
  const outputs = new Set();
  const edges = [];
  for (const e of idx.compile.edges || []) {
    const [from, to] = ends[e.kind] || [];
    if (!from) continue;
    if (e.kind === "input" || e.kind === "alias") inputs.add(e.source);
    if (e.kind === "output" || e.kind === "alias") outputs.add(e.target);
    edges.push({ from: from + e.source, to: to + e.target, buffers: e.buffers || [] });
  }
  return { edges, inputs: [...inputs], outputs: [...outputs] };
}

/** The groups a fused node folds into, outermost first: FusedNode.group_path (decided in Python,
 * report/modules.py: a repeated module's key before its instance) where it has one, else its module stack. */
export function pathOf(node) {
  return node.group_path && node.group_path.length ? node.group_path : node.module_stack || [];
}

/** The group a fused node is shown in: the outermost group of its path not expanded. */
export function groupOf(node, expanded) {
  for (const m of pathOf(node)) if (!expanded.has(m)) return m;
  return null;
}

/** Count the items shown for a set of expanded modules. */
export function visibleCount(fused, expanded) {
  const seen = new Set();
  let n = 0;
  for (const f of fused) {
    const g = groupOf(f, expanded);
    if (g === null) n++;
    else if (!seen.has(g)) {
      seen.add(g);
      n++;
    }
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
    for (const f of fused) for (const m of pathOf(f)) expanded.add(m);
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
      if (visibleCount(fused, trial) <= limit) {
        expanded.add(g);
        grew = true;
        break;
      }
    }
    if (!grew) return expanded;
  }
}

/** Where a frame comes from: "user" code, a compiler stage, or other library code: `Frame.stage`, decided in
 * Python (`rules.frame_stage`); Python's "other" (inductor_lens itself) reads "library" here. */
export function frameStage(frame) {
  return frame.stage === "other" ? "library" : frame.stage;
}

export const STAGE_LABELS = {
  user: "your code",
  runtime: "runtime",
  dynamo: "Dynamo (traces your Python frame, hands the FX graph to the backend)",
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
    if (last && (last.stage === stage || ((stage === "torch" || stage === "library") && last.stage !== "user")))
      last.frames.push(fr);
    else groups.push({ stage, frames: [fr] });
  }
  return groups;
}

/** A frame's file as the views name it: `Frame.file_label` (Python's `rules.file_label`: `torch/_dynamo/convert_frame.py`
 * for torch's, the name for the user's), or the file's name in a report written before it. */
export function frameFile(fr) {
  return fr.file_label || basename(fr.file);
}

/** A frame's function as the views name it: `Frame.function_label` (its qualified name, `ConvertFrame.__call__`, where
 * one was recorded), or the function's name in a report written before it. */
export function frameFunction(fr) {
  return fr.function_label || fr.function;
}

export function basename(path) {
  const s = String(path || "");
  const i = Math.max(s.lastIndexOf("/"), s.lastIndexOf("\\"));
  return i >= 0 ? s.slice(i + 1) : s;
}

/**
 * Search every compile. Returns up to `limit` rows {compileId, fused, kernel, index, label, what,
 * fusedAll, count}: one row per compile, kind and label (a source line inside a loop matches dozens
 * of fused nodes: one row, `count` of them, `fused` the first in execution order).
 */
/** What a search hit is, in the order hits are listed (Enter goes to the first): what a name says before the
 * source lines that mention it ("softmax" found the addmm of the line `(q @ k.T).softmax(-1)` first; nu20 O-e). */
const HIT_ORDER = { kernel: 0, "fused node": 1, op: 2, module: 3, buffer: 4, source: 5 };
/** How many hits a search collects before it orders them and keeps the first `limit`. */
const SEARCH_SCAN = 2000;

export function search(report, query, limit = 30) {
  const q = String(query || "")
    .trim()
    .toLowerCase();
  if (!q) return [];
  const hits = [];
  const rows = new Map();
  let idx = null;
  const push = (h) => {
    const key = h.compileId + "\0" + h.what + "\0" + h.label;
    const row = rows.get(key);
    if (row) {
      if (!row.fusedAll.includes(h.fused)) {
        row.fusedAll.push(h.fused);
        row.count++;
      }
      return;
    }
    if (hits.length >= SEARCH_SCAN) return;
    const e = idx.byName.get(h.fused);
    const r = { ...h, kernel: (e && e.node.kernel) || "", index: e ? e.index : -1, fusedAll: [h.fused], count: 1 };
    rows.set(key, r);
    hits.push(r);
  };
  const has = (s) =>
    String(s || "")
      .toLowerCase()
      .includes(q);
  const frameHit = (fr) => has(`${fr.file}:${fr.line}`) || has(fr.code) || has(fr.function);
  for (const c of report.compiles || []) {
    idx = indexCompile(c);
    for (const n of idx.fused) {
      const k = kernelOf(idx, n.name);
      if (has(n.name)) push({ compileId: c.id, fused: n.name, what: "fused node", label: n.name });
      if (n.kernel && has(n.kernel)) push({ compileId: c.id, fused: n.name, what: "kernel", label: n.kernel });
      for (const f of n.fx_nodes || []) if (has(f)) push({ compileId: c.id, fused: n.name, what: "op", label: f });
      for (const b of [...(n.reads || []), ...(n.writes || [])])
        if (has(b)) push({ compileId: c.id, fused: n.name, what: "buffer", label: b });
      for (const m of n.module_stack || [])
        if (has(m)) push({ compileId: c.id, fused: n.name, what: "module", label: m });
      if (k) {
        for (const stack of k.user_stack || [])
          for (const fr of stack) {
            if (frameHit(fr))
              push({
                compileId: c.id,
                fused: n.name,
                what: "source",
                label: `${basename(fr.file)}:${fr.line} ${String(fr.code || "").trim()}`,
              });
          }
      }
    }
    const post = (c.graphs || {}).post_grad;
    for (const g of post ? [post] : [])
      for (const gn of g.nodes || []) {
        const owner = idx.fxOwner.get(gn.name);
        if (owner && has(gn.target) && !hits.some((x) => x.fused === owner && x.label === gn.name))
          push({ compileId: c.id, fused: owner, what: "op", label: `${gn.name} = ${gn.target}` });
      }
  }
  // stable: within a kind, in execution order
  return hits.sort((a, b) => (HIT_ORDER[a.what] ?? 9) - (HIT_ORDER[b.what] ?? 9)).slice(0, limit);
}

/** Format microseconds for people (kernel times are often below 10 µs: keep their digits). */
export function fmtUs(us) {
  if (us === null || us === undefined || Number.isNaN(us)) return "?";
  const a = Math.abs(us);
  if (a >= 1e6) return (us / 1e6).toFixed(2) + " s";
  if (a >= 1e4) return (us / 1e3).toFixed(1) + " ms";
  if (a >= 1e3) return (us / 1e3).toFixed(2) + " ms";
  if (a >= 100 || a === 0) return us.toFixed(0) + " µs";
  if (a >= 10) return us.toFixed(1) + " µs";
  return us.toFixed(2) + " µs";
}

/**
 * The labels of a time axis's ticks (`times`, µs, evenly spaced), all in one unit, so that none mixes units with
 * another ("0 µs, 4.04 s, 8.07 s" read as if the axis changed scale): the unit of its largest time (s from 1 s, ms
 * from 1 ms, else µs), to two significant digits of the step between ticks, so that neighbours differ; where that
 * takes more than 3 decimals (a 2 ms compile 5.9 s into the capture), the unit of the axis's span ("5930.1 ms").
 */
export function fmtAxis(times) {
  if (!times.length) return [];
  const unitOf = (us) => (us >= 1e6 ? [1e6, " s"] : us >= 1e3 ? [1e3, " ms"] : [1, " µs"]);
  const span = Math.abs(times[times.length - 1] - times[0]);
  const step = times.length > 1 ? span / (times.length - 1) : 0;
  const digitsIn = (div) => (step > 0 ? Math.max(0, 1 - Math.floor(Math.log10(step / div))) : 0);
  let [div, unit] = unitOf(Math.max(...times.map(Math.abs)));
  if (digitsIn(div) > 3) [div, unit] = unitOf(span);
  const digits = Math.min(6, digitsIn(div));
  return times.map((t) => {
    const v = t / div;
    // no "-0.0": a tick at the clock's start reads 0
    return (Math.abs(v) < 0.5 * 10 ** -digits ? 0 : v).toFixed(digits) + unit;
  });
}

/** Format a share (0..1) as a percentage with sensible digits. */
export function fmtShare(share) {
  if (share === null || share === undefined || Number.isNaN(share)) return "?";
  const p = share * 100;
  return (p >= 10 ? p.toFixed(0) : p >= 1 ? p.toFixed(1) : p.toFixed(2)) + "%";
}

/** Format a byte count: 512 B, 16 KiB, 1.5 MiB. */
export function fmtBytes(n) {
  if (typeof n !== "number" || Number.isNaN(n)) return String(n);
  if (n < 0) return `−${fmtBytes(-n)}`;
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${+(n / 1024 / 1024).toFixed(2)} MiB`;
}

// ---- measured time (Kernel.profile) -----------------------------------------------------------

/** A kernel's measured time (`Kernel.profile`, null where the profiler saw none). */
export function profileOf(kernel) {
  return (kernel && kernel.profile) || null;
}

/** Whether any kernel of the report carries a measured time: Python decided it (`Report.profiled`). */
export function hasProfile(report) {
  return report.profiled === true;
}

/**
 * Measured time per fused node of one compile, as Python attributed it launch by launch (FusedNode.time,
 * report/lines.mark_times: a kernel called for two layers puts one launch's time on each one's node): Map(fused name
 * -> {total_us, share, text, noisy}), `noisy` its kernel's (KernelProfile.noisy). Nodes with no time are absent.
 */
export function nodeTimes(idx) {
  const out = new Map();
  for (const n of idx.fused) {
    if (!n.time) continue;
    const p = profileOf(n.kernel && idx.kernels.get(n.kernel));
    out.set(n.name, { total_us: n.time.us, share: n.time.share, text: n.time.text || "", noisy: (p && p.noisy) || "" });
  }
  return out;
}

// topKernels of a report, worked out once (the panel ranks the selected kernel on every click): the rows and
// the number of compiles they were made from (a report whose compiles grow is ranked again)
const rankedOf = new WeakMap();

/** The kernels of the whole report by measured time, longest first: [{compileId, fused, kernel, kind, ...profile}]
 * (shared rows: do not change them). */
export function topKernels(report, limit = 10) {
  const n = (report.compiles || []).length;
  let hit = rankedOf.get(report);
  if (!hit || hit.n !== n) {
    hit = { n, rows: rankKernels(report) };
    rankedOf.set(report, hit);
  }
  return limit ? hit.rows.slice(0, limit) : hit.rows;
}

/** The rank (1 = the longest) of kernel `kernel` of compile `compileId` by measured time, and how many
 * kernels are ranked: {rank, of}; rank 0 when it has no time. */
export function kernelRank(report, compileId, kernel) {
  const rows = topKernels(report, 0);
  const hit = rankedOf.get(report);
  if (!hit.byKey) hit.byKey = new Map(rows.map((r, i) => [r.compileId + "\0" + r.kernel, i + 1]).reverse());
  return { rank: hit.byKey.get(compileId + "\0" + kernel) || 0, of: rows.length };
}

function rankKernels(report) {
  const rows = [];
  for (const c of report.compiles || []) {
    const idx = indexCompile(c);
    const seen = new Set();
    for (const n of idx.fused) {
      const k = n.kernel && idx.kernels.get(n.kernel);
      const p = profileOf(k);
      if (!p || seen.has(k.name)) continue; // one row per kernel, at its first fused node
      seen.add(k.name);
      rows.push({
        compileId: c.id,
        fused: n.name,
        kernel: n.kernel,
        kind: n.kind,
        total_us: p.total_us,
        share: p.share,
        calls: p.calls,
        per_call_us: p.per_call_us,
        device: p.device,
        iterations: p.iterations,
        statistic: p.statistic,
        noisy: p.noisy || "",
      });
    }
  }
  rows.sort((a, b) => b.total_us - a.total_us || a.kernel.localeCompare(b.kernel));
  return rows;
}

// ---- kernel metadata (Triton launch, autotuning, extern calls) ----------------------------------

const HINTS = {
  heuristic: "Inductor's Triton heuristic family: how the kernel tiles its loops",
  num_warps: "warps per program instance (32 threads each)",
  num_stages: "software-pipelining stages of the kernel's loops",
  registers: "registers per thread, as compiled (more limits occupancy)",
  shared_mem_bytes: "shared memory per program instance, as compiled",
  size_hints: "the iteration space Inductor sized the kernel for (x: elements, r: reduction)",
  autotune_cache_state: "whether the autotuning cache was used for this kernel",
  only_config: "Inductor compiled a single launch configuration: no runtime autotuning",
  compile_time_us: "time Triton took to compile this kernel",
  callee: "the library function this extern kernel calls",
  buffer: "the buffer the call writes",
  grid: "launch grid: programs (CTAs) along x, y and z",
};

function plain(v) {
  if (v === null || v === undefined) return "";
  if (typeof v !== "object") return String(v);
  if (Array.isArray(v) && v.every((x) => Array.isArray(x) && x.length === 2))
    return v.map(([a, b]) => `${a}=${plain(b)}`).join(", ");
  if (Array.isArray(v)) return v.map(plain).join(", ");
  return Object.entries(v)
    .map(([a, b]) => `${a}=${plain(b)}`)
    .join(", ");
}

/** A kernel's `size_hints` (a mapping since schema 2, `rules.parse_size_hints`) -> "x=256, r0_=128". */
export function fmtSizeHints(v) {
  return plain(v);
}

/**
 * The metadata of a kernel as labelled rows for people:
 * [{group, key, label, value, hint}] with group "launch" | "compile" | "call" | "other".
 * Everything is returned as plain strings (the panel renders them as text).
 */
export function metadataFacts(kernel) {
  const md = (kernel && kernel.metadata) || {};
  const rows = [];
  const add = (group, key, label, value) => {
    if (value !== "" && value !== undefined && value !== null)
      rows.push({ group, key, label, value: String(value), hint: HINTS[key] || "" });
  };
  const launch = md.launch && typeof md.launch === "object" ? md.launch : {};
  add("launch", "heuristic", "heuristic", md.heuristic || launch.heuristic);
  for (const key of ["num_warps", "num_stages"]) add("launch", key, key, launch[key] ?? md[key]);
  const block = launch.block && typeof launch.block === "object" ? Object.entries(launch.block) : [];
  for (const [b, v] of block) add("launch", "block", b, v);
  // the grid evaluated at the call's sizes, as Python says it (KernelLaunch.grid_text); torch's expression where the
  // report holds no launch (made before launches were read)
  const gridText = kernel?.launch?.grid_text;
  if (gridText) add("launch", "grid", "grid", gridText);
  else if ("grid" in launch) add("launch", "grid", "grid", plain(launch.grid));
  if ("registers" in launch) add("launch", "registers", "registers", launch.registers);
  if ("shared_mem_bytes" in launch)
    add("launch", "shared_mem_bytes", "shared memory", fmtBytes(launch.shared_mem_bytes));
  for (const [key, v] of Object.entries(launch)) {
    if (!["heuristic", "num_warps", "num_stages", "block", "grid", "registers", "shared_mem_bytes"].includes(key))
      add("launch", key, key, plain(v));
  }
  if ("size_hints" in md) add("launch", "size_hints", "size hints", fmtSizeHints(md.size_hints));
  const ci = md.compile_info && typeof md.compile_info === "object" ? md.compile_info : null;
  if (ci) {
    for (const [key, v] of Object.entries(ci)) {
      if (key === "compile_time_us") add("compile", key, "compile time", fmtUs(v));
      else if (key === "only_config") add("compile", key, "single config", plain(v));
      else add("compile", key, key.replace(/_/g, " "), plain(v));
    }
  }
  if ("callee" in md) add("call", "callee", "calls", md.callee);
  if ("buffer" in md) add("call", "buffer", "writes", md.buffer);
  const known = new Set([
    "heuristic",
    "launch",
    "num_warps",
    "num_stages",
    "size_hints",
    "compile_info",
    "callee",
    "buffer",
    "autotune",
  ]);
  for (const [key, v] of Object.entries(md))
    if (!known.has(key)) add("other", key, key, typeof v === "object" ? JSON.stringify(v) : v);
  return rows;
}

/**
 * What autotuning decided for a kernel, ready to show:
 * {op, rows: [{name, description, config, time_ms, ratio, fastest, chosen}] (fastest first),
 *  fastest: row, chosen: row | null, chosenName, emitted (the kernel's name), epilogue (the ops fused around
 *  the matmul), verdict: "fastest" | "not-fastest" | "unknown"}; `config` and `epilogue` are decided in Python.
 * The chosen row is the report's `autotune.chosen` (decided in Python, `rules.autotune_chosen`;
 * null when it is not known).
 */
export function autotuneSummary(kernel) {
  const a = kernel && kernel.metadata && kernel.metadata.autotune;
  if (!a || !Array.isArray(a.choices) || !a.choices.length) return null;
  const rows = a.choices.map((c) => ({
    name: String(c.name),
    description: String(c.description || ""),
    config: c.config || {},
    what: String(c.what || ""),
    time_ms: typeof c.time_ms === "number" ? c.time_ms : null,
  }));
  rows.sort((x, y) => (x.time_ms ?? Infinity) - (y.time_ms ?? Infinity));
  const best = rows.find((r) => r.name === a.fastest) || rows[0];
  for (const r of rows) r.ratio = r.time_ms != null && best.time_ms ? r.time_ms / best.time_ms : null;
  best.fastest = true;
  const chosenName = a.chosen == null ? "" : String(a.chosen);
  const chosen = chosenName ? rows.find((r) => r.name === chosenName) || null : null;
  if (chosen) chosen.chosen = true;
  const verdict = !chosen ? "unknown" : chosen === best ? "fastest" : "not-fastest";
  return {
    op: a.op || "",
    rows,
    fastest: best,
    chosen,
    chosenName,
    emitted: String(a.emitted || kernel.name || ""),
    epilogue: a.epilogue || [],
    heading: String(a.heading || a.op || ""), // Python's rules.autotune_heading
    timedNote: String(a.timed_note || ""), // rules.autotune_timed_note: times read from torch's autotune cache
    fusionNote: String(a.fusion_note || ""), // rules.autotune_fusion_note: the epilogue the template fused
    verdict,
  };
}

/** The traced frame for people ("forward()", "f() after line 13"): `Compile.frame_label`, decided in Python
 * (`rules.frame_label`), so "0/0 backward · forward()" does not read as a contradiction. */
export function frameLabel(c) {
  return String(c.frame_label || "");
}
