// DOT builders. The DOT text holds only generated ids ("n3", "g1") and sizes: no report text
// goes to Graphviz, so nothing needs escaping there; labels are drawn by us, as text nodes.
import { basename, fmtShare, fmtUs, fusionEdges, groupOf, indexCompile, kernelRun, nodeTimes, plural } from "./data.js";
import { callsOf, repeatOf } from "./fit.js";
import { fmtShape } from "./viewdata.js";

const MONO_CH = 7.25; // px per character, 12px monospace, semibold (0.6 em and a little: DejaVu Sans Mono, Menlo)
const SANS_CH = 6.4; // px per character, 11px text
const MAX_W = 330,
  MIN_W = 150;
const STUB_CH = 28; // characters of a stub's label: a module path and op (`h.0.mlp.c_fc addmm (saved)`)

// Fast attributes from FRONTEND_NOTES: 3-4x faster dot for large graphs, straight edges.
const FAST = "nslimit=1 nslimit1=1 mclimit=0.1 remincross=false splines=false searchsize=10";
export const FAST_FROM = 120;
/** More users than this: one stub instead of edges across the graph. */
export const FANOUT = 10;

function clip(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, Math.max(1, n - 1)) + "…" : s;
}

/** `s` in at most `n` characters keeping its head and its end: a kernel's name ends in what tells it apart from
 * the others of its kind (`cpp_fused__native_batch_norm_legit_functional_relu_12`: its last ops and its number). */
export function clipMiddle(s, n) {
  s = String(s);
  if (s.length <= n) return s;
  const tail = Math.max(1, Math.floor((n - 1) * 0.4));
  return s.slice(0, Math.max(1, n - 1 - tail)) + "…" + s.slice(s.length - tail);
}

/** `s` in at most `n` characters keeping its end: a stub's name ends in what tells it apart from its neighbours
 * (`transformer.h.0.attn.c_attn addmm[1] (saved)`: which of q, k, v), its module path comes first. */
function clipStart(s, n) {
  s = String(s);
  return s.length > n ? "…" + s.slice(s.length - Math.max(1, n - 1)) : s;
}

function sizeFor(lines, minW = MIN_W) {
  const [first, ...rest] = lines;
  const w = Math.max(first.length * MONO_CH, ...rest.map((l) => l.length * SANS_CH)) + 22;
  return { w: Math.round(Math.min(MAX_W, Math.max(minW, w))), h: 14 + 15 * lines.length };
}
const ioSize = (lines) => sizeFor(lines, 90);

function fit(lines) {
  const maxMono = Math.floor((MAX_W - 22) / MONO_CH),
    maxSans = Math.floor((MAX_W - 22) / SANS_CH);
  return lines.map((l, i) => clip(l, i === 0 ? maxMono : maxSans));
}

const inch = (px) => (px / 72).toFixed(3);

function nodeLine(id, it, extra = "") {
  return `  ${id} [width=${inch(it.w)} height=${inch(it.h)}${extra}];\n`;
}

/** Distinct short op names of a fused node's FX ops: FusedNode.ops, decided in Python (tuple unpacking left out). */
function opsOf(n) {
  return n.ops || [];
}

function targetsOf(compile) {
  const m = new Map();
  for (const g of Object.values(compile.graphs || {}))
    for (const n of g.nodes || []) if (!m.has(n.name)) m.set(n.name, n);
  const post = (compile.graphs || {}).post_grad;
  if (post) for (const n of post.nodes || []) m.set(n.name, n);
  return m;
}

/**
 * The fusion graph of one compile: fused nodes in execution order (top to bottom), collapsed
 * into module boxes where their module is not in `expanded`, graph inputs above, outputs below.
 * Returns {dot, items: Map(id -> item), edges: [{from, to, buffers}], keyToId}.
 */
export function buildFusion(idx, expanded) {
  const fx = targetsOf(idx.compile);
  const { edges, inputs, outputs } = fusionEdges(idx);
  const g = {
    idx,
    fx,
    items: new Map(),
    keyToId: new Map(),
    order: [],
    ins: [],
    outs: [],
    aggIn: inputs.length > 12 || inputRowWidth(fx, inputs) > INPUT_ROW_W,
    aggOut: outputs.length > 12,
    stubs: new Map(), // "in>" / "out>" + box id -> stub item
    merged: new Map(),
  };
  // Many graph inputs (parameters): one "inputs" node would send an edge to every consumer across
  // the whole graph. Instead each consumer gets a small stub of its own, right above it.
  if (!g.aggIn) addInputs(g, inputs);
  addBoxes(g, expanded, nodeTimes(idx)); // measured time per fused node (empty without a profile)
  labelBoxes(g.items, idx.compile);
  if (!g.aggOut) addOutputs(g, outputs);
  mergeEdges(g, edges);
  fanoutStubs(g);
  labelStubs(g);
  const clusters = new Map();
  return { dot: fusionDot(g, clusters), items: g.items, edges: [...g.merged.values()], keyToId: g.keyToId, clusters };
}

/** The widest the row of a graph's input boxes may be before they are drawn as stubs beside their consumers: a
 * repeated region's 12 inputs ("model.layers.0.attn.wq.weight", "parameter · partitioned_fw_subgraph_0_0_primals_2")
 * made a row 2,600 px wide over a graph of one column, unreadable at Fit (nu25 M7). */
const INPUT_ROW_W = 6 * MAX_W;

/** The lines of the box of graph input `b` (named by what it is: GraphNode.display_name / role, decided in Python). */
function inputLines(fx, b) {
  const gn = fx.get(b) || {};
  return fit([gn.display_name || b, gn.role ? `${gn.role} · ${b}` : "graph input"]);
}

/** How wide the row of the graph's input boxes would be (their widths and dot's gaps between them). */
function inputRowWidth(fx, inputs) {
  return inputs.reduce((w, b) => w + ioSize(inputLines(fx, b)).w + 22, 0);
}

/** One box per graph input (named by what it is: GraphNode.display_name / role, decided in Python). */
function addInputs(g, inputs) {
  inputs.forEach((b, i) => {
    const lines = inputLines(g.fx, b);
    const it = { id: "i" + i, type: "input", buffer: b, lines, ...ioSize(lines) };
    g.items.set(it.id, it);
    g.ins.push(it.id);
    g.keyToId.set("in:" + b, it.id);
  });
}

/** The boxes in execution order: a module box per collapsed module, else one per fused node (a run of
 * fused nodes written into one kernel is one box with a count). */
function addBoxes(g, expanded, times) {
  const { idx, items, keyToId, order } = g;
  let gi = 0;
  idx.boxes.forEach((n) => {
    const i = idx.byName.get(n.name).index;
    const t = times.get(n.name);
    const mod = groupOf(n, expanded);
    if (mod !== null) {
      const key = "group:" + mod;
      let id = keyToId.get(key);
      if (!id) {
        id = "g" + gi++;
        items.set(id, { id, type: "group", module: mod, members: [], kinds: new Map() });
        keyToId.set(key, id);
        order.push(id);
      }
      const it = items.get(id);
      it.members.push(n.name);
      if (t) addTime(it, t);
      it.kinds.set(n.box_kind, (it.kinds.get(n.box_kind) || 0) + 1);
      keyToId.set("node:" + n.name, id);
      return;
    }
    // consecutive fused nodes written into one kernel are one box with a count; the same kernel called
    // again elsewhere (source reused) keeps a box of its own there
    const run = kernelRun(idx, n.name);
    const kernelKey = run.length > 1 ? "run:" + run[0] : "";
    if (kernelKey && keyToId.has(kernelKey)) {
      const it = items.get(keyToId.get(kernelKey));
      it.members.push(n.name);
      // nodes of other labels in one kernel's box (an input copy's "channels-last copy: ..." and a dropout's mask, of
      // the kernel's name): the box is the kernel, named as such, its copy said on its ops line
      if ((n.label || n.kernel || n.name) !== it.label) it.mixed = true;
      if (t) addTime(it, t); // the launch's time is on its lead node (FusedNode.time), not always its first
      // FusedNode.in_place: the first writer's sentence, and how many more of the box write (an optimizer's box
      // holds 100 writers: a tooltip of 100 sentences is read by no one; each node's panel has its own)
      if (n.in_place) {
        it.writers = (it.writers || 0) + 1;
        it.inPlace =
          it.writers === 1
            ? n.in_place
            : `${it.inPlace.split("\n")[0]}\nand ${it.writers - 1} more fused ${it.writers === 2 ? "node" : "nodes"} of this box write in place`;
      }
      // a box of all of one kernel's nodes is the kernel: its kind (Kernel.kind, Python: a reduction if any node
      // reduces); a box of some of them (the rest inside a folded module) says its own nodes' kind where they share
      // one, and a box of one node keeps the node's own
      const k = idx.kernels.get(n.kernel) || {};
      const kinds = new Set(it.members.map((m) => (idx.byName.get(m) || { node: {} }).node.box_kind));
      const whole = (k.fused_nodes || []).every((f) => it.members.includes(f));
      it.kind = (whole || kinds.size > 1 ? k.kind : [...kinds][0]) || it.kind;
      it.nOps += n.op_count || 0;
      for (const op of opsOf(n)) if (!it.ops.includes(op)) it.ops.push(op);
      keyToId.set("node:" + n.name, it.id);
      return;
    }
    const it = {
      id: "n" + i,
      type: "node",
      name: n.name,
      kernel: n.kernel || "",
      kind: n.box_kind, // FusedNode.box_kind: a region's call is a call, not an extern kernel (Python's)
      index: i,
      label: n.label || n.kernel || n.name,
      members: [n.name],
      ops: opsOf(n),
      nOps: n.op_count || 0, // FusedNode.op_count: its FX nodes less the graph's constants (Python's)
      // the module it ran in, or the call of it where the module ran several times ("cell · call 3 of 24", Python's)
      module: callText(idx.compile, n) || (n.module_stack || []).at(-1) || "",
      call: callText(idx.compile, n),
      inPlace: n.in_place || "", // what it writes in place, in Python's words (FusedNode.in_place)
      writers: n.in_place ? 1 : 0,
    };
    if (t) addTime(it, t);
    items.set(it.id, it);
    keyToId.set("node:" + n.name, it.id);
    order.push(it.id);
    if (kernelKey) keyToId.set(kernelKey, it.id);
  });
}

/** The call a fused node belongs to, in Python's words (ModuleCalls.labels), the innermost where calls nest; "". */
function callText(compile, n) {
  for (const g of [...(n.group_path || [])].reverse()) {
    const c = callsOf(compile, g);
    if (c && c.label) return c.label;
  }
  return "";
}

/** `text` cut after ", " / "; " or before " (" into lines of at most `n` characters; a part longer than a line is cut
 * between its words ("+ 1 fused node of layers.0 runs apart from the rest" was clipped to "...from the re…"); a word
 * longer than a line is clipped later. */
export function wrap(text, n) {
  const out = [];
  let line = "";
  const parts = String(text)
    .split(/(?<=[,;] )|(?= \()/)
    .flatMap((part) => (part.trim().length > n ? part.split(/(?<= )/) : [part]));
  for (const part of parts) {
    if (line && (line + part).trimEnd().length > n) {
      out.push(line.trim());
      line = "";
    }
    line += part;
  }
  if (line) out.push(line.trim());
  return out;
}

/** Add a fused node's measured time (FusedNode.time, Python's) to box `it`: a box of several nodes, a module's, adds up
 * theirs; the launch's words (NodeTime.text: which call of a kernel called twice) kept for the tooltip. */
function addTime(it, t) {
  it.total_us = (it.total_us || 0) + t.total_us;
  it.share = (it.share || 0) + (t.share || 0);
  if (t.text && it.type !== "group") it.timeText = t.text;
  noteNoisy(it, t);
}

/** Count a kernel time its runs disagree on (KernelProfile.noisy, Python's sentence) on box `it`: `noisy` kernels,
 * the first one's sentence kept for the tooltip. */
function noteNoisy(it, profile) {
  if (!profile.noisy) return;
  it.noisy = (it.noisy || 0) + 1;
  it.noisyText = it.noisyText || profile.noisy;
}

/** A box's measured time: " · 3.01 µs (0.01%)", marked where a kernel's runs disagree: "(0.01%, noisy)" on a
 * kernel's box, "(21%, 2 noisy)" on a module's (how many of its kernels). */
function timeText(it) {
  if (it.total_us == null) return "";
  const noisy = it.noisy ? (it.type === "group" ? `, ${it.noisy} noisy` : ", noisy") : "";
  return ` · ${fmtUs(it.total_us)} (${fmtShare(it.share)}${noisy})`;
}

/** A box's line `head` + its time `time` + `tail`, as one line where it fits the box (MAX_W), else the time on a line
 * of its own: a long line was cut at the box's edge, and the time and its noisy mark with it
 * ("2 fused nodes · one kernel · pointwise · 2.00 µ…"). */
function withTime(head, time, tail = "") {
  const maxSans = Math.floor((MAX_W - 22) / SANS_CH);
  if (!time || (head + time + tail).length <= maxSans) return [head + time + tail];
  return [head + tail, time.slice(3)];
}

/** The tooltip's line about noisy times (empty where none). */
function noisyTitle(it) {
  if (!it.noisy) return "";
  return it.type === "group" && it.noisy > 1
    ? `\n${it.noisy} of its kernels' times are noisy, e.g. ${it.noisyText}`
    : `\n${it.noisyText}`;
}

/** The lines of a repeated module's box: what repeats, said by Python (ModuleRepeat.summary), then the
 * kinds of one instance and the click cue; the whole summary is its tooltip. */
function repeatLines(it, r) {
  const time = timeText(it);
  const cut = r.summary.indexOf(": ");
  const said = cut >= 0 ? r.summary.slice(cut + 2) : r.summary;
  const kinds = Object.entries(r.kinds || {})
    .map(([k, c]) => `${c} ${k}`)
    .join(", ");
  it.title = `${r.summary}\n${plural(it.members.length, "fused node")} in all${time}: click to show the ${r.modules.length} modules${noisyTitle(it)}`;
  return fit([
    `${r.label} ×${r.modules.length}`,
    ...wrap(said, Math.floor((MAX_W - 22) / SANS_CH)).slice(0, 4),
    `each: ${kinds}`,
    ...withTime(plural(it.members.length, "fused node"), time, " · click to expand"),
  ]);
}

/** The lines and sizes of the kernel boxes and module boxes. */
function labelBoxes(items, compile) {
  for (const it of items.values())
    if (it.type === "node") {
      const many = it.members.length > 1;
      const time = timeText(it);
      // a box with no op of its own (an input copy, FusedNode.label "channels-last copy: conv1.weight, x") says
      // what it is first and what it copies on the ops line
      const cut = it.ops.length ? -1 : it.label.indexOf(": ");
      const title = cut < 0 ? it.label : it.label.slice(0, cut);
      // a kernel's box of nodes labelled apart (nu25: "channels-last copy: conv1.weight, conv2.weight, x" over a
      // dropout's ops): the kernel's name, and what its copy is ahead of its ops
      const head = it.mixed && it.kernel ? it.label.indexOf(": ") : -1;
      const copy = head > 0 ? it.label.slice(0, head) : "";
      const ops = [...(copy ? [copy] : []), ...it.ops].join(" · ");
      // the module where the ops line would only say the title or the kind again (an extern's one op; a region's call,
      // invoke_subgraph: three calls of one region read alike, nu25 M5)
      const moduleLine = (ops === title || ops === it.kind) && !many && it.module;
      it.lines = fit([
        // no "×N" after a kernel's name for its N fused nodes: read as N launches or N repeats (the modules' ×N),
        // it misled (nu19 O-a); the last line says "N fused nodes · one kernel"
        clipMiddle(it.mixed && it.kernel ? it.kernel : title, Math.floor((MAX_W - 22) / MONO_CH)),
        // an extern call's one op is its title already: the line names the module it ran in (the addmm of four
        // experts told apart)
        moduleLine || ops || (cut < 0 ? it.name : it.label.slice(cut + 2)),
        ...withTime(
          many
            ? `${plural(it.members.length, "fused node")} · one kernel · ${it.kind}`
            : // "0 ops" read as a kernel that computes nothing where no FX op is linked to it (an input copy, a
              // kernel an imported log gives no provenance for: its panel says why, FusedNode.no_line_reason)
              `#${it.index} · ${it.kind} · ${it.nOps ? plural(it.nOps, "op") : "no FX op linked"}`,
          time,
        ),
        // which call of its module it belongs to, where the module ran several times and no line above says it (the
        // 24 boxes of a cell unrolled over 24 steps told apart)
        ...(it.call && !moduleLine ? [it.call] : []),
      ]);
      if (it.noisy || it.timeText)
        it.title = it.lines.join("\n") + (it.timeText ? `\n${it.timeText}` : "") + noisyTitle(it);
      it.count = it.members.length;
      Object.assign(it, sizeFor(it.lines));
    }
  for (const it of items.values())
    if (it.type === "group") {
      const kinds = [...it.kinds.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, c]) => `${c} ${k}`)
        .join(", ");
      it.kind = [...it.kinds.entries()].sort((a, b) => b[1] - a[1])[0][0];
      const time = timeText(it);
      const r = repeatOf(compile, it.module);
      if (r) it.repeat = r;
      // a module called several times, or one call of it: Python's words (ModuleCalls) in place of its path
      const c = callsOf(compile, it.module);
      it.lines = r
        ? repeatLines(it, r)
        : fit([
            (c && (c.label || c.summary)) || it.module,
            ...withTime(plural(it.members.length, "fused node"), time, " · click to expand"),
            kinds,
          ]);
      if (it.noisy && !r) it.title = it.lines.join("\n") + noisyTitle(it);
      Object.assign(it, sizeFor(it.lines));
    }
}

/** One box per graph output, as Python names it (Compile.outputs: `name`, and `note`, which says whether a training
 * forward returns it to the user's code or saves it for the backward, and that a view of an input copies nothing);
 * in a report before those, by buffer (Compile.output_names, returned_outputs / saved_outputs). */
function addOutputs(g, outputs) {
  const listed = g.idx.compile.outputs || [];
  const returned = new Set(g.idx.compile.returned_outputs || []);
  const saved = new Set(g.idx.compile.saved_outputs || []);
  const says = (b) =>
    returned.has(b)
      ? saved.has(b)
        ? "output · returned, saved"
        : "output · returned"
      : saved.has(b)
        ? "saved for backward"
        : "graph output";
  const names = g.idx.compile.output_names || {}; // what each holds (Compile.output_names), decided in Python
  outputs.forEach((key, i) => {
    const o = listed.length ? listed[Number(key)] : null;
    const b = o ? o.buffer : key;
    const name = o ? o.name : names[b];
    const note = o ? o.note : says(b);
    const lines = fit([name || b, note]);
    const title = name && name !== b ? `${name} (${b}): ${note}` : `${b}: ${note}`;
    const it = { id: "o" + i, type: "output", buffer: b, lines, title, ...ioSize(lines) };
    g.items.set(it.id, it);
    // what the graph gives back stands in its last row; a tensor a training forward saves for the backward stands
    // below the box that writes it (a forward saves one or more per layer: in one row they made a 7-box
    // BatchNorm step 2,500 px wide, its edges running far off to the right)
    if (!(o && o.role === "saved")) g.outs.push(it.id);
    g.keyToId.set("out:" + key, it.id);
  });
}

/** The edges between visible items, merged; with many inputs / outputs, a small stub per box instead. */
function mergeEdges(g, edges) {
  const { items, keyToId, stubs, merged, aggIn, aggOut } = g;
  const stub = (dir, box) => {
    const key = dir + ">" + box;
    if (!stubs.has(key)) {
      const it = {
        id: (dir === "in" ? "si" : "so") + stubs.size,
        type: dir === "in" ? "input" : "output",
        stub: true,
        buffers: [],
        lines: [],
      };
      stubs.set(key, it);
      items.set(it.id, it);
    }
    return stubs.get(key);
  };
  for (const e of edges) {
    if ((aggIn && e.from.startsWith("in:")) || (aggOut && e.to.startsWith("out:"))) {
      const inward = e.from.startsWith("in:") && !(aggOut && e.to.startsWith("out:"));
      const box = keyToId.get(inward ? e.to : e.from);
      if (!box) continue;
      const it = stub(inward ? "in" : "out", box);
      for (const buf of e.buffers) if (!it.buffers.includes(buf)) it.buffers.push(buf);
      const k = inward ? it.id + ">" + box : box + ">" + it.id;
      merged.set(k, { from: inward ? it.id : box, to: inward ? box : it.id, buffers: it.buffers });
      continue;
    }
    const a = keyToId.get(e.from),
      b = keyToId.get(e.to);
    if (!a || !b || a === b) continue;
    const k = a + ">" + b;
    const m = merged.get(k) || { from: a, to: b, buffers: [] };
    for (const buf of e.buffers) if (!m.buffers.includes(buf)) m.buffers.push(buf);
    merged.set(k, m);
  }
}

/** A box whose results go to more than FANOUT boxes (weight copies, running-stat updates) would wire
 * the whole graph from the top: it gets one stub naming its users instead (the list is its tooltip). */
function fanoutStubs(g) {
  const { items, merged } = g;
  const outDeg = new Map();
  for (const m of merged.values())
    if (items.get(m.to) && !items.get(m.to).stub) outDeg.set(m.from, (outDeg.get(m.from) || 0) + 1);
  for (const [from, deg] of outDeg) {
    if (deg <= FANOUT || !items.get(from) || items.get(from).stub) continue;
    const users = [];
    for (const [k, m] of merged)
      if (m.from === from && items.get(m.to) && !items.get(m.to).stub) {
        users.push(items.get(m.to));
        merged.delete(k);
      }
    const it = {
      id: "su" + from,
      type: "output",
      stub: true,
      fanout: true,
      buffers: [],
      lines: [`→ ${users.length} users`],
      title: `used by ${plural(users.length, "box", "boxes")}: ${users
        .map((u) => u.label || u.module || u.name)
        .slice(0, 40)
        .join(", ")}${users.length > 40 ? ", …" : ""}`,
    };
    it.w = Math.round(Math.max(54, it.lines[0].length * SANS_CH + 18));
    it.h = 20;
    items.set(it.id, it);
    merged.set(from + ">" + it.id, { from, to: it.id, buffers: [] });
  }
}

/** The input / output stubs' labels: the name a user knows (GraphNode.display_name, decided in Python) or the
 * buffer, or how many, each named in the tooltip. */
function labelStubs(g) {
  const { stubs, fx } = g;
  const outNames = g.idx.compile.output_names || {};
  for (const it of stubs.values()) {
    const n = it.buffers.length,
      what = it.type === "input" ? "input" : "output";
    // an input by its display name; an output by what holds it (Compile.output_names), else the buffer
    const shown = (b) => (what === "output" && outNames[b]) || (fx.get(b) || {}).display_name || "";
    it.lines = [n === 1 ? clipStart(shown(it.buffers[0]) || it.buffers[0], STUB_CH) : `${n} ${what}s`];
    it.title = `graph ${plural(n, what)}: ${it.buffers.map((b) => (shown(b) ? `${shown(b)} (${b})` : b)).join(", ")}`;
    it.w = Math.round(Math.max(54, it.lines[0].length * SANS_CH + 18));
    it.h = 20;
  }
}

/** The DOT text of the graph (generated ids and sizes only). */
function fusionDot(g, clusters) {
  const { items, order, ins, outs, merged } = g;
  const inCluster = new Set();
  const big = items.size >= FAST_FROM;
  let dot = `digraph fusion {\n  graph [rankdir=TB nodesep=0.3 ranksep=0.35${big ? " " + FAST : ""}];\n`;
  dot += `  node [shape=box fixedsize=true label=""];\n  edge [arrowsize=0.7];\n`;
  for (const [name, c] of clusters) {
    // the label is a placeholder of the right length (no report text in DOT); we draw the real one
    dot += `  subgraph ${name} { graph [margin=8 labeljust=l fontsize=11 label="${"x".repeat(Math.min(56, c.label.length + 2))}"];\n`;
    for (const id of c.ids) dot += "  " + nodeLine(id, items.get(id));
    dot += "  }\n";
  }
  // the boxes in execution order share one dot `group`: dot keeps their chain straight, so the graph
  // reads down one column instead of drifting sideways (it then fits a notebook cell's width)
  const chain = new Set(order);
  for (const it of items.values())
    if (!inCluster.has(it.id))
      dot += nodeLine(
        it.id,
        it,
        chain.has(it.id) ? " group=main" : it.type === "node" || it.type === "group" ? "" : " shape=ellipse",
      );
  if (ins.length) dot += `  { rank=min; ${ins.join("; ")}; }\n`;
  if (outs.length) dot += `  { rank=max; ${outs.join("; ")}; }\n`;
  // execution order, top to bottom: invisible chain through the visible boxes, in an order that agrees
  // with the data edges (a module box holds nodes run early and late, e.g. a BatchNorm's
  // num_batches_tracked update runs first: chained by first run, dot would reverse edges into a staircase)
  const chainOrder = flowOrder(order, merged);
  // an edge that skips over boxes of the column (a residual: layer i -> layer i+1 beside layer i -> add ->
  // layer i+1) pulls nothing straight: weight 0, else dot bends the column into a staircase to shorten it
  const pos = new Map(chainOrder.map((id, i) => [id, i]));
  for (const m of merged.values()) {
    const skip = pos.has(m.from) && pos.has(m.to) && pos.get(m.to) - pos.get(m.from) > 1;
    dot += `  ${m.from} -> ${m.to}${skip ? " [weight=0]" : ""};\n`;
  }
  // consecutive boxes with no data edge between them are pulled into the column like neighbours with one
  // (weight 1: with 0, the Llama forward's head drifted sideways beside the repeated layers, wider than a cell)
  for (let i = 1; i < chainOrder.length; i++) {
    if (!merged.has(chainOrder[i - 1] + ">" + chainOrder[i]))
      dot += `  ${chainOrder[i - 1]} -> ${chainOrder[i]} [style=invis weight=1];\n`;
  }
  dot += "}\n";
  return dot;
}

/**
 * The boxes `order` (execution order) re-ordered so that every edge of `merged` between them points
 * forward: a topological order that takes the earliest-run ready box first. Where module boxes make a
 * cycle (a module box holds nodes run before and after another box: layer 0 computes the positions the
 * rotary embedding reads, then reads its result), the boxes of the cycle (a strongly connected component)
 * go together, in execution order, where the earliest of them would be ready: a cycle never lets a box
 * run late (the loss's padding) jump to the top.
 */
export function flowOrder(order, merged) {
  const pos = new Map(order.map((id, i) => [id, i]));
  const out = new Map(order.map((id) => [id, []]));
  for (const m of merged.values()) {
    if (!pos.has(m.from) || !pos.has(m.to) || m.from === m.to) continue;
    out.get(m.from).push(m.to);
  }
  const comp = components(order, out);
  // the condensed graph: components, ordered topologically, the earliest-run ready one first
  const nComp = Math.max(-1, ...comp.values()) + 1;
  const members = Array.from({ length: nComp }, () => []);
  for (const id of order) members[comp.get(id)].push(id); // in execution order
  const indeg = new Array(nComp).fill(0);
  const cout = Array.from({ length: nComp }, () => new Set());
  for (const [a, ts] of out)
    for (const b of ts) {
      const ca = comp.get(a),
        cb = comp.get(b);
      if (ca !== cb && !cout[ca].has(cb)) {
        cout[ca].add(cb);
        indeg[cb]++;
      }
    }
  const first = (c) => pos.get(members[c][0]);
  let ready = [];
  for (let c = 0; c < nComp; c++) if (!indeg[c]) ready.push(c);
  const result = [];
  while (ready.length) {
    // the component run earliest among those whose producers are placed (a few hundred boxes: a scan is fine)
    const next = ready.reduce((a, b) => (first(a) <= first(b) ? a : b));
    ready = ready.filter((c) => c !== next);
    result.push(...members[next]);
    for (const t of cout[next]) if (--indeg[t] === 0) ready.push(t);
  }
  return result;
}

/** Strongly connected components of the graph `out` (id -> [ids]) over `order`: Map(id -> component
 * number). Tarjan's algorithm without recursion (chains of hundreds of boxes would overflow the stack). */
function components(order, out) {
  const index = new Map(),
    low = new Map(),
    comp = new Map(),
    stack = [],
    onStack = new Set();
  let next = 0,
    nComp = 0;
  for (const root of order) {
    if (index.has(root)) continue;
    const work = [[root, 0]];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1];
      const [v, i] = top;
      const ts = out.get(v);
      if (i < ts.length) {
        top[1]++;
        const w = ts[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length) {
        const u = work[work.length - 1][0];
        low.set(u, Math.min(low.get(u), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          comp.set(w, nComp);
        } while (w !== v);
        nComp++;
      }
    }
  }
  return comp;
}

/** Source location key of a node's innermost user frame. */
function locKey(gn) {
  const st = gn.user_stack || [];
  const fr = st[st.length - 1];
  return fr ? `${fr.file}:${fr.line}` : null;
}

/**
 * An FX graph of one compile. For the post-grad graph nodes are clustered by the fused node
 * (kernel) that computes them; clusters not in `expanded` collapse into one box when the graph
 * is large. The dynamo graph maps to kernels through source locations.
 * Returns {dot, items, edges, keyToId, clusters: Map(clusterName -> {fused, kernel})}.
 */
/** Graph inputs the FX view draws one by one; more are one oval (buildFx). */
const FX_INPUTS_SHOWN = 12;

export function buildFx(idx, graphName, expanded, collapseFrom = 160) {
  const g = (idx.compile.graphs || {})[graphName] || { nodes: [] };
  const items = new Map(),
    keyToId = new Map(),
    clusters = new Map();
  let owner;
  if (graphName === "post_grad") owner = (n) => idx.fxOwner.get(n.name) || null;
  else {
    const post = (idx.compile.graphs || {}).post_grad;
    const byLoc = new Map();
    for (const pn of post ? post.nodes : []) {
      const k = locKey(pn),
        o = idx.fxOwner.get(pn.name);
      if (k && o && !byLoc.has(k)) byLoc.set(k, o);
    }
    owner = (n) => byLoc.get(locKey(n)) || null;
  }
  const collapse = graphName === "post_grad" && g.nodes.length > collapseFrom;
  const members = new Map(); // fused name -> [item ids]
  let ci = 0;
  // many graph inputs (a compiled optimizer step's 205 parameters, gradients and states): one oval, no edges,
  // as the Fusion view folds them (all in one row they made the graph 68,000 px wide)
  const placeholders = g.nodes.filter((n) => n.op === "placeholder");
  const foldInputs = placeholders.length > FX_INPUTS_SHOWN;
  g.nodes.forEach((n, i) => {
    if (foldInputs && n.op === "placeholder") {
      if (!items.has("fxin")) {
        const lines = [`${placeholders.length} graph inputs`];
        items.set("fxin", {
          id: "fxin",
          type: "input",
          name: "inputs",
          lines,
          title: `graph inputs (each named in its reader's tooltip and in the Fusion view): ${placeholders.map((p) => p.display_name || p.name).join(", ")}`,
          ...ioSize(lines),
        });
      }
      return;
    }
    const o = owner(n);
    if (collapse && o && !expanded.has(o)) {
      const key = "k:" + o;
      let id = keyToId.get(key);
      if (!id) {
        id = "k" + ci++;
        const f = idx.byName.get(o);
        const it = {
          id,
          type: "kgroup",
          fused: o,
          name: o,
          kernel: (f && f.node.kernel) || "",
          kind: f ? f.node.box_kind : "other",
          count: 0,
          lines: [],
        };
        items.set(id, it);
        keyToId.set(key, id);
      }
      items.get(id).count++;
      keyToId.set("fx:" + n.name, id);
      return;
    }
    const shape = fmtShape(n);
    const lines = fit([
      n.display_name || n.name,
      `${n.short_op || n.op} ${shape.text}${n.dtype ? " " + n.dtype.replace("torch.", "") : ""}`.trim(),
    ]);
    const title =
      `${n.name}${n.display_name && n.display_name !== n.name ? " (" + n.display_name + (n.role ? ", " + n.role : "") + ")" : ""} = ${n.target}` +
      (shape.text ? `\nshape ${shape.text}${shape.hint ? " (at capture: " + shape.hint + ")" : ""}` : "");
    const it = {
      id: "f" + i,
      type: "fx",
      name: n.name,
      fx: n,
      fused: o,
      kind: o ? idx.byName.get(o).node.box_kind : "other",
      lines,
      title,
      ...sizeFor(lines),
    };
    items.set(it.id, it);
    keyToId.set("fx:" + n.name, it.id);
    if (o && graphName === "post_grad") members.set(o, [...(members.get(o) || []), it.id]);
  });
  for (const it of items.values())
    if (it.type === "kgroup") {
      it.lines = fit([it.kernel || it.name, `${plural(it.count, "op")} · ${it.kind} · click to expand`]);
      Object.assign(it, sizeFor(it.lines));
    }
  const merged = new Map();
  g.nodes.forEach((n) => {
    const b = keyToId.get("fx:" + n.name);
    for (const inp of n.inputs || []) {
      const a = keyToId.get("fx:" + inp);
      if (!a || a === b) continue;
      merged.set(a + ">" + b, { from: a, to: b, buffers: [inp] });
    }
  });
  const big = items.size >= FAST_FROM;
  let dot = `digraph fx {\n  graph [rankdir=TB nodesep=0.25 ranksep=0.3${big ? " " + FAST : ""}];\n`;
  dot += `  node [shape=box fixedsize=true label=""];\n  edge [arrowsize=0.6];\n`;
  let k = 0;
  const inCluster = new Set();
  for (const [fused, ids] of members) {
    const name = "cluster_" + k++;
    const f = idx.byName.get(fused);
    clusters.set(name, { fused, kernel: (f && f.node.kernel) || "", kind: f ? f.node.box_kind : "other" });
    // the label is a placeholder of the right length (no report text in DOT); we draw the real one
    const title = (f && f.node.kernel) || fused;
    dot += `  subgraph ${name} { graph [margin=10 labeljust=l fontsize=11 label="${"x".repeat(Math.min(48, title.length + 2))}"];\n`;
    for (const id of ids) {
      dot += "  " + nodeLine(id, items.get(id));
      inCluster.add(id);
    }
    dot += "  }\n";
  }
  for (const it of items.values())
    if (!inCluster.has(it.id)) dot += nodeLine(it.id, it, it.type === "kgroup" ? "" : " shape=box");
  for (const m of merged.values()) dot += `  ${m.from} -> ${m.to};\n`;
  dot += "}\n";
  return { dot, items, edges: [...merged.values()], keyToId, clusters };
}

export { basename, indexCompile };
