// Pure-function tests of the front end's data layer: `npm test` (node --test).

import assert from "node:assert/strict";
import test from "node:test";
import {
  fmtAxis,
  frameStage,
  fusionEdges,
  groupFrames,
  indexCompile,
  initialExpansion,
  resolveSelection,
  search,
  visibleCount,
} from "../src/data.js";
import { buildFusion } from "../src/dot.js";

const compile = {
  id: "0/0 forward",
  graph_inputs: ["x"],
  graph_outputs: ["buf1", "x"],
  fused_nodes: [
    {
      name: "op0",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["sin"],
      kernel: "k0",
      reads: ["x"],
      writes: ["buf0"],
      module_stack: ["a"],
    },
    {
      name: "op1",
      kind: "extern",
      box_kind: "extern",
      op_count: 1,
      fx_nodes: ["mm"],
      kernel: "extern_kernels.mm[buf1]",
      reads: ["buf0", "x"],
      writes: ["buf1"],
      module_stack: ["b"],
    },
  ],
  kernels: [{ name: "k0", fx_nodes: ["sin"], fused_nodes: ["op0"] }],
  // what Python's report/rules.fusion_edges ships (the input x returned as it came draws no output edge)
  edges: [
    { kind: "input", source: "x", target: "op0", buffers: ["x"] },
    { kind: "node", source: "op0", target: "op1", buffers: ["buf0"] },
    { kind: "input", source: "x", target: "op1", buffers: ["x"] },
    { kind: "output", source: "op1", target: "buf1", buffers: ["buf1"] },
  ],
  graphs: {
    post_grad: {
      nodes: [
        { name: "sin", target: "aten.sin.default" },
        { name: "mm", target: "aten.mm.default" },
      ],
    },
  },
};

test("the edges Python ships (Compile.edges) are keyed as the graph draws them, with the inputs and outputs they use", () => {
  const { edges, inputs, outputs } = fusionEdges(indexCompile(compile));
  assert.deepEqual(inputs, ["x"]);
  assert.deepEqual(outputs, ["buf1"]);
  assert.deepEqual(edges.map((e) => `${e.from}>${e.to}`).sort(), [
    "in:x>node:op0",
    "in:x>node:op1",
    "node:op0>node:op1",
    "node:op1>out:buf1",
  ]);
});

test("selection resolves kernels and FX nodes to fused nodes", () => {
  const ix = indexCompile(compile);
  assert.equal(resolveSelection(ix, "k0"), "op0");
  assert.equal(resolveSelection(ix, "mm"), "op1");
  assert.equal(resolveSelection(ix, "nope"), "");
});

test("boxes are numbered among the boxes: glue (Python's is_glue) has no number and shifts none", () => {
  const glued = {
    ...compile,
    fused_nodes: [
      compile.fused_nodes[0],
      { name: "op9", kind: "extern", is_glue: true, fx_nodes: ["getitem"], reads: ["buf0"], writes: ["buf9"] },
      compile.fused_nodes[1],
    ],
  };
  const ix = indexCompile(glued);
  assert.deepEqual(
    glued.fused_nodes.map((n) => ix.byName.get(n.name).index),
    [0, -1, 1],
  );
  assert.equal(ix.boxes.length, 2);
});

test("collapse keeps at most `limit` items and expands everything when small", () => {
  const fused = Array.from({ length: 100 }, (_, i) => ({
    name: "n" + i,
    module_stack: [`h.${i % 10}`, `h.${i % 10}.${i % 2 ? "mlp" : "attn"}`],
  }));
  const e = initialExpansion(fused, 30);
  assert.ok(visibleCount(fused, e) <= 30);
  assert.ok(visibleCount(fused, e) > 10);
  assert.equal(visibleCount(fused, initialExpansion(fused, 500)), 100);
});

test("frames are grouped by the stage the report gives them (Frame.stage, decided in Python)", () => {
  assert.equal(frameStage({ file: "/x/site-packages/torch/_inductor/scheduler.py", stage: "scheduler" }), "scheduler");
  assert.equal(frameStage({ file: "/home/me/train.py", stage: "user", is_user: true }), "user");
  assert.equal(frameStage({ file: "/x/lib.py", stage: "other" }), "library");
  // the path is not read in JS: a torch file the report calls user code stays user code
  assert.equal(frameStage({ file: "/x/torch/_inductor/codegen/cpp.py", stage: "user" }), "user");
  const g = groupFrames([
    { file: "/home/me/t.py", stage: "user" },
    { file: "/t/torch/_dynamo/x.py", stage: "dynamo" },
    { file: "/t/torch/nn/m.py", stage: "torch" },
    { file: "/t/torch/_inductor/lowering.py", stage: "lowering" },
  ]);
  assert.deepEqual(
    g.map((x) => [x.stage, x.frames.length]),
    [
      ["user", 1],
      ["dynamo", 2],
      ["lowering", 1],
    ],
  );
});

test("search finds ops, kernels and buffers", () => {
  const r = { compiles: [compile] };
  assert.deepEqual(
    search(r, "sin").map((h) => h.fused),
    ["op0"],
  );
  assert.ok(search(r, "buf1").some((h) => h.fused === "op1" && h.what === "buffer"));
});

test("search lists what a name says before the source lines that mention it (Enter goes to the first)", () => {
  // op0's line mentions the matmul op1 runs after it: "mm" found op0 by its source line first, in execution order
  const mention = JSON.parse(JSON.stringify(compile));
  const line = { file: "/w/m.py", line: 3, function: "f", code: "y = torch.mm(torch.sin(x), x)", is_user: true };
  for (const k of mention.kernels) k.user_stack = [[line]];
  const hits = search({ compiles: [mention] }, "mm");
  assert.equal(hits[0].fused, "op1");
  assert.ok(hits.length > 1 && hits.some((x) => x.what === "source"), JSON.stringify(hits));
  assert.notEqual(hits[0].what, "source", JSON.stringify(hits.map((x) => [x.what, x.label])));
  assert.equal(
    hits.findIndex((x) => x.what === "source"),
    hits.length - 1,
  );
});

test("DOT carries ids and sizes only, never report text", () => {
  const evil = JSON.parse(JSON.stringify(compile));
  evil.fused_nodes[0].name = 'op0"];</script>';
  evil.fused_nodes[0].kernel = "k<img>";
  const { dot } = buildFusion(indexCompile(evil), new Set(["a", "b"]));
  assert.ok(!dot.includes("script") && !dot.includes("img") && !dot.includes("op0"), dot);
});

test("fmtAxis says an axis's times in one unit, to the step's two digits (nu23: '0 µs, 4.04 s, 8.07 s')", () => {
  assert.deepEqual(fmtAxis([0, 2.0175e6, 4.035e6, 6.0525e6, 8.07e6]), ["0.0 s", "2.0 s", "4.0 s", "6.1 s", "8.1 s"]);
  assert.deepEqual(fmtAxis([3746e3, 3918e3, 4090e3]), ["3.75 s", "3.92 s", "4.09 s"]);
  assert.deepEqual(fmtAxis([0, 40e3, 80e3]), ["0 ms", "40 ms", "80 ms"]);
  assert.deepEqual(fmtAxis([12, 112, 212]), ["12 µs", "112 µs", "212 µs"]);
  // a 1 ms span 5.9 s into the capture: seconds would need five decimals, so the span's unit
  assert.deepEqual(fmtAxis([5930100, 5930600, 5931100]), ["5930.10 ms", "5930.60 ms", "5931.10 ms"]);
  assert.deepEqual(fmtAxis([]), []);
});
