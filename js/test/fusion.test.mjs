// Shared kernels, input stubs and search rows: `npm test` (node --test).

import assert from "node:assert/strict";
import test from "node:test";
import { indexCompile, plural, search, sharedKernel } from "../src/data.js";
import { buildFusion, clipMiddle, wrap } from "../src/dot.js";

const frame = { file: "/home/me/model.py", line: 7, function: "forward", code: "x = layer(x)" };
// Compile.edges as Python's report/rules.fusion_edges ships them
const input = (b, target) => ({ kind: "input", source: b, target, buffers: [b] });
const edge = (source, target, b) => ({ kind: "node", source, target, buffers: [b] });
const output = (source, b) => ({ kind: "output", source, target: b, buffers: [b] });
// two fused nodes emitted into one C++ kernel (as in a backward graph), 14 graph inputs
const inputs = Array.from({ length: 14 }, (_, i) => `primals_${i}`);
const compile = {
  id: "0/0 backward",
  graph_inputs: inputs,
  graph_outputs: ["buf2"],
  fused_nodes: [
    {
      name: "op0",
      kind: "extern",
      box_kind: "extern",
      op_count: 1,
      fx_nodes: ["mm"],
      kernel: "extern_kernels.mm[buf0]",
      reads: inputs.slice(0, 2),
      writes: ["buf0"],
    },
    {
      name: "op1_op2",
      kind: "reduction",
      box_kind: "reduction",
      op_count: 1,
      fx_nodes: ["sum"],
      kernel: "cpp_fused_sum_threshold_backward_0",
      reads: ["buf0", ...inputs.slice(2, 5)],
      writes: ["buf1"],
    },
    {
      name: "op3_op4_op5",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["le"],
      kernel: "cpp_fused_sum_threshold_backward_0",
      reads: ["buf1", ...inputs.slice(5)],
      writes: ["buf2"],
    },
  ],
  edges: [
    ...inputs.slice(0, 2).map((b) => input(b, "op0")),
    edge("op0", "op1_op2", "buf0"),
    ...inputs.slice(2, 5).map((b) => input(b, "op1_op2")),
    edge("op1_op2", "op3_op4_op5", "buf1"),
    ...inputs.slice(5).map((b) => input(b, "op3_op4_op5")),
    output("op3_op4_op5", "buf2"),
  ],
  kernels: [
    {
      name: "cpp_fused_sum_threshold_backward_0",
      fused_nodes: ["op1_op2", "op3_op4_op5"],
      user_stack: [[frame]],
      // what Python's report/finish.py fills: one call computes both fused nodes
      call_sites: [["op1_op2", "op3_op4_op5"]],
      user_lines: [frame],
    },
  ],
  graphs: {
    post_grad: {
      nodes: [
        { name: "mm", target: "aten.mm.default" },
        { name: "sum", target: "aten.sum.dim_IntList" },
        { name: "le", target: "aten.le.Scalar" },
      ],
    },
  },
};

test("plural says 1 kernel and 2 kernels", () => {
  assert.equal(plural(1, "kernel"), "1 kernel");
  assert.equal(plural(2, "kernel"), "2 kernels");
  assert.equal(plural(0, "box", "boxes"), "0 boxes");
});

test("sharedKernel names the other fused nodes of the same kernel", () => {
  const ix = indexCompile(compile);
  assert.deepEqual(sharedKernel(ix, "op1_op2"), [{ name: "op3_op4_op5", index: 2, kind: "pointwise" }]);
  assert.deepEqual(sharedKernel(ix, "op0"), []);
});

test("a kernel shared by several fused nodes is one box with a count", () => {
  const b = buildFusion(indexCompile(compile), new Set());
  const id = b.keyToId.get("node:op1_op2");
  assert.equal(b.keyToId.get("node:op3_op4_op5"), id, "both fused nodes map to one box");
  const box = b.items.get(id);
  assert.equal(box.count, 2);
  assert.deepEqual(box.members, ["op1_op2", "op3_op4_op5"]);
  assert.equal(box.lines[0], "cpp_fused_sum_threshold_backward_0"); // no "×2": not two launches (nu19 O-a)
  assert.match(box.lines[2], /^2 fused nodes · one kernel/);
  assert.equal([...b.items.values()].filter((it) => it.type === "node").length, 2);
  assert.doesNotMatch(b.items.get(b.keyToId.get("node:op0")).lines.join(" "), /×|one kernel/);
  assert.equal(b.clusters.size, 0);
});

test("an extern box whose one op is its title names its module on the second line", () => {
  const expert = (i) => ({
    name: `op${i}`,
    kind: "extern",
    box_kind: "extern",
    op_count: 1,
    label: "addmm",
    ops: ["addmm"],
    fx_nodes: [`addmm_${i}`],
    kernel: `extern_kernels.addmm[buf${i}]`,
    reads: ["x"],
    writes: [`buf${i}`],
    module_stack: ["moe", `moe.experts.${i}`],
  });
  const c = { id: "0/0", graph_inputs: ["x"], graph_outputs: [], fused_nodes: [0, 1].map(expert), kernels: [] };
  const b = buildFusion(indexCompile(c), new Set(["moe", "moe.experts.0", "moe.experts.1"]));
  const lines = (n) => b.items.get(b.keyToId.get(`node:${n}`)).lines;
  assert.deepEqual(lines("op0").slice(0, 2), ["addmm", "moe.experts.0"]);
  assert.deepEqual(lines("op1").slice(0, 2), ["addmm", "moe.experts.1"]);
});

test("many graph inputs become one small stub per consumer, not one node with edges across the graph", () => {
  const b = buildFusion(indexCompile(compile), new Set());
  const stubs = [...b.items.values()].filter((it) => it.type === "input");
  assert.equal(stubs.length, 2, "one stub per consuming box");
  assert.ok(stubs.every((s) => s.stub));
  for (const s of stubs) assert.equal(b.edges.filter((e) => e.from === s.id).length, 1, "a stub feeds exactly one box");
  assert.deepEqual(
    stubs.map((s) => s.buffers.length).sort((a, b) => a - b),
    [2, 12],
  );
  assert.equal(stubs.find((s) => s.buffers.length === 12).lines[0], "12 inputs");
  assert.doesNotMatch(b.dot, /rank=min/);
});

test("a stub of one input says the name Python gave it (GraphNode.display_name), not the buffer", () => {
  const named = {
    ...compile,
    fused_nodes: compile.fused_nodes.map((n) => (n.name === "op0" ? { ...n, reads: inputs.slice(0, 1) } : n)),
    edges: compile.edges.filter((e) => !(e.source === inputs[1] && e.target === "op0")),
    graphs: {
      post_grad: {
        nodes: [
          ...compile.graphs.post_grad.nodes,
          // what report/rules.saved_name names a backward's saved input (the FX name is view_58)
          { name: "primals_0", op: "placeholder", role: "saved", display_name: "h.0.mlp.c_fc addmm (saved)" },
        ],
      },
    },
  };
  const b = buildFusion(indexCompile(named), new Set());
  const stub = [...b.items.values()].find((it) => it.stub && it.buffers.length === 1);
  assert.deepEqual(stub.buffers, ["primals_0"]);
  assert.equal(stub.lines[0], "h.0.mlp.c_fc addmm (saved)", "the whole name: short enough to read");
  assert.match(stub.title, /h\.0\.mlp\.c_fc addmm \(saved\) \(primals_0\)/);
});

test("an input copy's box says what it is, then what it copies (FusedNode.label, decided in Python)", () => {
  const label = "channels-last copy: conv1.weight, x"; // report/finish.py: one label for the kernel call
  const copy = {
    id: "0/0 forward",
    graph_inputs: ["primals_1", "primals_2"],
    graph_outputs: ["buf1"],
    fused_nodes: ["op0", "op1"].map((name, i) => ({
      name,
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: [`primals_${i + 1}`],
      kernel: "cpp_fused_0",
      reads: [`primals_${i + 1}`],
      writes: [`buf${i}`],
      label,
      ops: [],
    })),
    kernels: [{ name: "cpp_fused_0", fused_nodes: ["op0", "op1"], call_sites: [["op0", "op1"]] }],
    graphs: { post_grad: { nodes: [] } },
  };
  const b = buildFusion(indexCompile(copy), new Set());
  const box = b.items.get(b.keyToId.get("node:op0"));
  assert.deepEqual(box.lines.slice(0, 2), ["channels-last copy", "conv1.weight, x"]);
  // nu25 M1: a kernel that also computes ops of its own (a dropout's mask beside the copies) is its box's title, the
  // copy said ahead of those ops: the title was the copy's label over the dropout's ops
  const mixed = structuredClone(copy);
  mixed.fused_nodes[1] = { ...mixed.fused_nodes[1], label: "cpp_fused_0", ops: ["inductor_random", "gt"] };
  const m = buildFusion(indexCompile(mixed), new Set());
  const both = m.items.get(m.keyToId.get("node:op0"));
  assert.deepEqual(both.lines.slice(0, 2), ["cpp_fused_0", "channels-last copy · inductor_random · gt"]);
});

test("a kernel no FX op is linked to says so, not that it has 0 ops", () => {
  // a kernel of a graph torch's cache gave back, imported from a TORCH_TRACE log: no provenance (nu20 D3)
  const bare = {
    id: "0/0 inference",
    graph_inputs: ["arg0_1"],
    graph_outputs: ["buf0"],
    fused_nodes: [
      {
        name: "op0",
        kind: "pointwise",
        box_kind: "pointwise",
        op_count: 0,
        fx_nodes: [],
        kernel: "cpp_fused_0",
        reads: ["arg0_1"],
        writes: ["buf0"],
        ops: [],
      },
    ],
    kernels: [{ name: "cpp_fused_0", fused_nodes: ["op0"], call_sites: [["op0"]] }],
    graphs: { post_grad: { nodes: [] } },
  };
  const box =
    buildFusion(indexCompile(bare), new Set()).items.get("n0") ||
    [...buildFusion(indexCompile(bare), new Set()).items.values()].find((it) => it.type === "node");
  assert.match(box.lines.join(" | "), /no FX op linked/);
  assert.doesNotMatch(box.lines.join(" | "), /\b0 ops\b/);
});

test("a call of a repeated region is drawn as Python says it: its op for its kind, one op (FusedNode.box_kind, op_count)", () => {
  // nu30: its box said "#0 · extern · 2 ops" (the scheduler's extern node; its FX nodes the call and the region's
  // get_attr) where the compile's contents line says "invoke_subgraph"
  const regional = {
    id: "0/0 inference",
    graph_inputs: ["arg0_1"],
    graph_outputs: ["buf1"],
    fused_nodes: [
      {
        name: "op0",
        kind: "extern",
        box_kind: "invoke_subgraph",
        op_count: 1,
        fx_nodes: ["repeated_subgraph0", "invoke_subgraph"],
        label: "repeated_subgraph0 (2 kernels)",
        ops: ["invoke_subgraph"],
        reads: ["arg0_1"],
        writes: ["buf1"],
        module_stack: ["layers.1"],
      },
    ],
    kernels: [],
    graphs: { post_grad: { nodes: [] } },
  };
  const open = new Set(["layers.1"]); // its layer expanded: the call is a box of its own
  const box = [...buildFusion(indexCompile(regional), open).items.values()].find((it) => it.type === "node");
  assert.equal(box.kind, "invoke_subgraph");
  assert.equal(box.lines.at(-1), "#0 · invoke_subgraph · 1 op");
  // its second line names the layer that calls it, not its op again (nu25 M5: three calls of one region read alike)
  assert.equal(box.lines[1], "layers.1");
});

test("search: one row per target with a count, pointing at the kernel", () => {
  const many = {
    ...compile,
    fused_nodes: compile.fused_nodes.map((n) => ({ ...n })),
    kernels: [...compile.kernels, { name: "extern_kernels.mm[buf0]", fused_nodes: ["op0"], user_stack: [[frame]] }],
  };
  const hits = search({ compiles: [many] }, "model.py:7");
  assert.equal(hits.length, 1, JSON.stringify(hits));
  assert.equal(hits[0].count, 3);
  assert.deepEqual(hits[0].fusedAll, ["op0", "op1_op2", "op3_op4_op5"]);
  assert.equal(hits[0].kernel, "extern_kernels.mm[buf0]");
  assert.equal(hits[0].index, 0);
  const k = search({ compiles: [many] }, "threshold");
  assert.ok(k.every((x) => x.kernel === "cpp_fused_sum_threshold_backward_0"));
});

// A BatchNorm module whose num_batches_tracked update runs first (before the conv that feeds it), as in a
// ResNet's training forward: collapsed, its box holds a node run early and one run late.
const bnCompile = {
  id: "0/0 forward",
  graph_inputs: ["x", "w", "nbt"],
  graph_outputs: ["buf4", "buf0"],
  fused_nodes: [
    {
      name: "op0",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["add_"],
      kernel: "cpp_fused_add_copy_0",
      reads: ["nbt"],
      writes: ["buf0"],
      module_stack: ["bn"],
    },
    {
      name: "op1",
      kind: "extern",
      box_kind: "extern",
      op_count: 1,
      label: "convolution",
      fx_nodes: ["conv"],
      kernel: "extern_kernels.convolution",
      reads: ["x", "w"],
      writes: ["buf1"],
      module_stack: ["conv"],
    },
    {
      name: "op2",
      kind: "reduction",
      box_kind: "reduction",
      op_count: 1,
      fx_nodes: ["var_mean"],
      kernel: "cpp_fused_bn_1",
      reads: ["buf1"],
      writes: ["buf2"],
      module_stack: ["bn"],
    },
    {
      name: "op3",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["relu"],
      kernel: "cpp_fused_relu_2",
      reads: ["buf2"],
      writes: ["buf3"],
      module_stack: ["act"],
    },
    {
      name: "op4",
      kind: "extern",
      box_kind: "extern",
      op_count: 1,
      label: "convolution",
      fx_nodes: ["conv2"],
      kernel: "extern_kernels.convolution",
      reads: ["buf3", "w"],
      writes: ["buf4"],
      module_stack: ["conv2"],
    },
  ],
  edges: [
    input("nbt", "op0"),
    input("x", "op1"),
    input("w", "op1"),
    edge("op1", "op2", "buf1"),
    edge("op2", "op3", "buf2"),
    edge("op3", "op4", "buf3"),
    input("w", "op4"),
    output("op4", "buf4"),
    output("op0", "buf0"),
  ],
  kernels: [],
  graphs: {},
};

function isAcyclic(edges) {
  const out = new Map();
  for (const [a, b] of edges) {
    if (!out.has(a)) out.set(a, []);
    out.get(a).push(b);
  }
  const state = new Map();
  const visit = (n) => {
    if (state.get(n) === 1) return false;
    if (state.get(n) === 2) return true;
    state.set(n, 1);
    for (const m of out.get(n) || []) if (!visit(m)) return false;
    state.set(n, 2);
    return true;
  };
  return [...out.keys()].every(visit);
}

test("the invisible execution-order chain never points against a data edge (no staircase of reversed edges)", () => {
  const ix = indexCompile(bnCompile);
  const b = buildFusion(ix, new Set()); // every module collapsed: bn's box holds op0 (run first) and op2
  const bn = b.keyToId.get("node:op0");
  assert.equal(bn, b.keyToId.get("node:op2"));
  const edges = [...b.dot.matchAll(/^\s*(\w+) -> (\w+)/gm)].map((m) => [m[1], m[2]]);
  // the data path conv -> bn -> act -> conv2 exists, and the chain adds nothing that closes a cycle
  assert.ok(
    edges.some(([a, c]) => a === b.keyToId.get("node:op1") && c === bn),
    b.dot,
  );
  assert.ok(isAcyclic(edges), b.dot);
});

test("flowOrder: boxes in a cycle stay where the earliest of them runs; a late box never jumps to the top", async () => {
  const { flowOrder } = await import("../src/dot.js");
  // g0 (a layer) runs first and last: it computes what n1 (the rotary embedding) reads and reads its result;
  // n5 (the loss's padding) reads only graph inputs
  const order = ["g0", "n1", "n2", "n5"];
  const merged = new Map(
    [
      ["g0", "n1"],
      ["n1", "g0"],
      ["g0", "n2"],
    ].map(([from, to]) => [`${from}>${to}`, { from, to, buffers: [] }]),
  );
  assert.deepEqual(flowOrder(order, merged), ["g0", "n1", "n2", "n5"]);
  // without the cycle, data order wins over run order
  const m2 = new Map([["n2>n1", { from: "n2", to: "n1", buffers: [] }]]);
  assert.deepEqual(flowOrder(["n1", "n2"], m2), ["n2", "n1"]);
});

test("a repeated module is one box that says what repeats; the opening is the one planned for the screen", async () => {
  const { openingFor } = await import("../src/fit.js");
  const layer = (i, j, kind) => ({
    name: `op${i}_${j}`,
    kind,
    fx_nodes: [],
    kernel: `k${j}`,
    module_stack: ["net", `net.blocks.${i}`],
    group_path: ["net", "repeat:net.blocks.0-2", `net.blocks.${i}`],
  });
  const fused = [0, 1, 2].flatMap((i) => [layer(i, 0, "pointwise"), layer(i, 1, "reduction")]);
  const c = {
    id: "0/0 forward",
    fused_nodes: fused,
    kernels: [],
    module_view: {
      repeats: [
        {
          key: "repeat:net.blocks.0-2",
          label: "net.blocks.0-2",
          parent: "net",
          modules: ["net.blocks.0", "net.blocks.1", "net.blocks.2"],
          attached: [[], [], []],
          nodes_each: 2,
          kinds: { pointwise: 1, reduction: 1 },
          same: "kernels",
          differs: [],
          summary: "net.blocks.0-2 ×3: 2 fused nodes each, same kernels",
        },
      ],
      openings: [
        { fit: 4, expanded: [], boxes: 1 },
        { fit: 9, expanded: ["net"], boxes: 1 },
      ],
    },
  };
  assert.deepEqual([...openingFor(c, 3)], []); // below the first: the first
  assert.deepEqual([...openingFor(c, 12)], ["net"]);
  const b = buildFusion(indexCompile(c), openingFor(c, 9));
  const boxes = [...b.items.values()].filter((it) => it.type === "group");
  assert.equal(boxes.length, 1);
  assert.equal(boxes[0].repeat.key, "repeat:net.blocks.0-2");
  assert.equal(boxes[0].lines[0], "net.blocks.0-2 ×3");
  assert.ok(boxes[0].lines.includes("2 fused nodes each, same kernels"), boxes[0].lines);
  assert.equal(boxes[0].members.length, 6);
  // expanded: one box per block
  const open = buildFusion(indexCompile(c), new Set(["net", "repeat:net.blocks.0-2"]));
  assert.deepEqual(
    [...open.items.values()].filter((it) => it.type === "group").map((it) => it.module),
    ["net.blocks.0", "net.blocks.1", "net.blocks.2"],
  );
});

test("a kernel's box is the kernel's kind; one of its nodes drawn alone (the rest in a folded module) keeps its own", () => {
  const node = (i, kind, module) => ({
    name: `op${i}`,
    kind,
    box_kind: kind,
    op_count: 1,
    fx_nodes: [`n${i}`],
    kernel: "cpp_fused_sum_0",
    reads: ["x"],
    writes: [`buf${i}`],
    module_stack: [module],
  });
  const c = {
    id: "0/0 backward",
    graph_inputs: ["x"],
    graph_outputs: [],
    fused_nodes: [node(0, "reduction", "block"), node(1, "reduction", "block"), node(2, "pointwise", "head")],
    kernels: [
      {
        name: "cpp_fused_sum_0",
        kind: "reduction",
        fused_nodes: ["op0", "op1", "op2"],
        call_sites: [["op0", "op1", "op2"]],
      },
    ],
  };
  const kindOf = (b, n) => b.items.get(b.keyToId.get(`node:${n}`)).kind;
  const folded = buildFusion(indexCompile(c), new Set(["head"])); // block folded: op2 is drawn alone
  assert.notEqual(folded.keyToId.get("node:op2"), folded.keyToId.get("node:op0"));
  assert.equal(kindOf(folded, "op2"), "pointwise");
  // two of its three nodes, both pointwise, the third (a reduction) inside the folded block: pointwise
  const two = {
    ...c,
    fused_nodes: [node(0, "pointwise", "head"), node(1, "pointwise", "head"), node(2, "reduction", "block")],
  };
  const some = buildFusion(indexCompile(two), new Set(["head"]));
  const pair = some.items.get(some.keyToId.get("node:op0"));
  assert.deepEqual([pair.members, pair.kind], [["op0", "op1"], "pointwise"]);
  const open = buildFusion(indexCompile(c), new Set(["block", "head"])); // all three in one box: the kernel
  const box = open.items.get(open.keyToId.get("node:op2"));
  assert.deepEqual([box.members, box.kind], [["op0", "op1", "op2"], "reduction"]);
});

test("a long box title keeps the end of a kernel's name, what tells it from its neighbours", () => {
  const a = "cpp_fused__native_batch_norm_legit_functional_convolution_relu_12";
  const b = "cpp_fused__native_batch_norm_legit_functional_convolution_relu_13";
  const [ca, cb] = [clipMiddle(a, 42), clipMiddle(b, 42)];
  assert.equal(ca.length, 42);
  assert.ok(ca.startsWith("cpp_fused__native") && ca.endsWith("relu_12") && ca.includes("…"), ca);
  assert.notEqual(ca, cb); // the end-clipped titles were the same: "cpp_fused__native_batch_norm_legit_functi…"
  assert.equal(clipMiddle("short", 42), "short");
});

test("each graph output is an oval of its own, a view of an input drawn from it, as Python names it", () => {
  // nu18 s6: return (x.view(-1), x.t()), y, z, x[1:], z * 2; Compile.outputs / edges as report/finish.py ships them
  const view = (node, name) => ({
    buffer: "arg0_1",
    node,
    view: true,
    name,
    note: "view of x (no copy)",
    drawn: true,
  });
  const made = (buffer, node, name) => ({ buffer, node, view: false, name, note: "graph output", drawn: true });
  const c = {
    id: "0/0 inference",
    graph_inputs: ["arg0_1", "arg1_1"],
    graph_outputs: ["arg0_1", "arg0_1", "buf0", "buf1", "arg0_1", "buf2"],
    fused_nodes: [
      {
        name: "op0",
        kind: "extern",
        box_kind: "extern",
        op_count: 1,
        fx_nodes: ["mm"],
        kernel: "extern_kernels.mm[buf0]",
        reads: ["arg0_1", "arg1_1"],
        writes: ["buf0"],
      },
      {
        name: "op1_op2",
        kind: "pointwise",
        box_kind: "pointwise",
        op_count: 2,
        fx_nodes: ["relu", "mul"],
        kernel: "cpp_fused_mul_relu_0",
        reads: ["buf0"],
        writes: ["buf1", "buf2"],
      },
    ],
    outputs: [
      view("view", "view"),
      view("permute", "t"),
      made("buf0", "mm", "y"),
      made("buf1", "relu", "z"),
      view("slice_1", "slice"),
      made("buf2", "mul", "mul"),
    ],
    edges: [
      input("arg0_1", "op0"),
      input("arg1_1", "op0"),
      edge("op0", "op1_op2", "buf0"),
      { kind: "alias", source: "arg0_1", target: "0", buffers: ["arg0_1"] },
      { kind: "alias", source: "arg0_1", target: "1", buffers: ["arg0_1"] },
      { kind: "output", source: "op0", target: "2", buffers: ["buf0"] },
      { kind: "output", source: "op1_op2", target: "3", buffers: ["buf1"] },
      { kind: "alias", source: "arg0_1", target: "4", buffers: ["arg0_1"] },
      { kind: "output", source: "op1_op2", target: "5", buffers: ["buf2"] },
    ],
    kernels: [],
    graphs: { post_grad: { nodes: [{ name: "arg0_1", op: "placeholder", display_name: "x" }] } },
  };
  const b = buildFusion(indexCompile(c), new Set());
  const ovals = [...b.items.values()].filter((it) => it.type === "output");
  assert.deepEqual(
    ovals.map((it) => it.lines.join(" / ")),
    [
      "view / view of x (no copy)",
      "t / view of x (no copy)",
      "y / graph output",
      "z / graph output",
      "slice / view of x (no copy)",
      "mul / graph output",
    ],
  );
  const x = b.keyToId.get("in:arg0_1");
  const from = (id) => b.edges.filter((e) => e.to === id).map((e) => e.from);
  assert.deepEqual(
    [0, 1, 4].map((i) => from(b.keyToId.get(`out:${i}`))),
    [[x], [x], [x]],
  );
  assert.deepEqual(from(b.keyToId.get("out:2")), [b.keyToId.get("node:op0")]);
  assert.equal(b.items.get(b.keyToId.get("out:1")).title, "t (arg0_1): view of x (no copy)");
});

test("a repeat's summary wraps between words where a part is longer than a line", () => {
  // nu24's ViT: "1 fused node of layers.0 runs apart from the re…" (one part with no ", " or "; " in it)
  const said =
    "the same sub-modules, 14-16 fused nodes each (the fused nodes differ); + 1 fused node of layers.0 runs apart from the rest";
  const lines = wrap(said, 47);
  assert.ok(
    lines.every((l) => l.length <= 47),
    lines.join("|"),
  );
  assert.equal(lines.join(" "), said);
  assert.deepEqual(wrap("a, b", 47), ["a, b"]);
});

test("a row of graph inputs too wide for the graph is drawn as stubs beside their consumers", () => {
  // nu25 M7: a repeated region's 12 inputs, long names, made one row 2,600 px wide over a graph of one column
  const inputsOf = (names) => ({
    id: "0/0 forward #2",
    graph_inputs: names.map((_, i) => `p${i}`),
    graph_outputs: ["buf0"],
    fused_nodes: [
      {
        name: "op0",
        kind: "pointwise",
        box_kind: "pointwise",
        op_count: 1,
        fx_nodes: ["mul"],
        kernel: "cpp_fused_mul_0",
        reads: names.map((_, i) => `p${i}`),
        writes: ["buf0"],
      },
    ],
    kernels: [{ name: "cpp_fused_mul_0", fused_nodes: ["op0"], call_sites: [["op0"]] }],
    edges: [...names.map((_, i) => input(`p${i}`, "op0")), output("op0", "buf0")],
    graphs: {
      post_grad: {
        nodes: names.map((n, i) => ({
          name: `p${i}`,
          op: "placeholder",
          target: `p${i}`,
          display_name: n,
          role: "parameter",
        })),
      },
    },
  });
  const kinds = (c) =>
    [...buildFusion(indexCompile(c), new Set()).items.values()].map((it) => (it.stub ? "stub" : it.type));
  const long = Array.from({ length: 12 }, (_, i) => `model.layers.0.attn.w${i}.weight`);
  assert.equal(kinds(inputsOf(long)).filter((k) => k === "input").length, 0);
  assert.ok(kinds(inputsOf(long)).includes("stub"));
  assert.equal(kinds(inputsOf(["x", "fc1.weight", "fc1.bias"])).filter((k) => k === "input").length, 3);
});
