// Input stubs of one saved tensor each (issue 22): `npm test` (node --test).

import assert from "node:assert/strict";
import test from "node:test";
import { indexCompile } from "../src/data.js";
import { buildFusion } from "../src/dot.js";

// q, k and v of one projection, saved for the backward, each read by its own box through a stub of its own: the
// names report/rules.saved_name gives them, too long for a stub, differ only at their end
const names = [0, 1, 2].map((i) => `transformer.h.0.attn.c_attn addmm[${i}] (saved)`);
const inputs = Array.from({ length: 14 }, (_, i) => `primals_${i}`);
const compile = {
  id: "0/0 backward",
  graph_inputs: inputs,
  graph_outputs: ["buf2"],
  fused_nodes: [0, 1, 2, 3].map((i) => ({
    name: `op${i}`,
    kind: "pointwise",
    box_kind: "pointwise",
    op_count: 1,
    fx_nodes: [`mul_${i}`],
    kernel: `cpp_fused_mul_${i}`,
    reads: i < 3 ? [inputs[i]] : inputs.slice(3), // the 11 others: the graph draws stubs
    writes: [`buf${i}`],
  })),
  // Compile.edges as Python's report/rules.fusion_edges ships them
  edges: [
    ...inputs.map((b, i) => ({ kind: "input", source: b, target: `op${Math.min(i, 3)}`, buffers: [b] })),
    { kind: "output", source: "op2", target: "buf2", buffers: ["buf2"] },
  ],
  kernels: [0, 1, 2, 3].map((i) => ({ name: `cpp_fused_mul_${i}`, fused_nodes: [`op${i}`], call_sites: [[`op${i}`]] })),
  graphs: {
    post_grad: {
      nodes: [
        ...[0, 1, 2].map((i) => ({ name: inputs[i], op: "placeholder", role: "saved", display_name: names[i] })),
        ...[0, 1, 2, 3].map((i) => ({ name: `mul_${i}`, target: "aten.mul.Tensor" })),
      ],
    },
  },
};

test("stubs of q, k and v keep the end of their names, which tells them apart", () => {
  const b = buildFusion(indexCompile(compile), new Set());
  const stubs = [...b.items.values()].filter(
    (it) =>
      it.stub &&
      it.buffers.length === 1 &&
      names.includes(compile.graphs.post_grad.nodes.find((n) => n.name === it.buffers[0])?.display_name),
  );
  assert.equal(stubs.length, 3);
  const labels = stubs.map((s) => s.lines[0]);
  assert.equal(new Set(labels).size, 3, `three names, not one: ${labels}`);
  for (const s of stubs) {
    const i = inputs.indexOf(s.buffers[0]);
    assert.ok(s.lines[0].startsWith("…") && s.lines[0].endsWith(`addmm[${i}] (saved)`), s.lines[0]);
    assert.ok(s.lines[0].length <= 28);
    assert.match(s.title, new RegExp(`${names[i].replace(/[[\]().]/g, "\\$&")} \\(${s.buffers[0]}\\)`));
  }
});

test("a stub's name cut to the width its font draws keeps its end: which gradient, which result", async () => {
  const { fitText } = await import("../src/text.js");
  const name = "transformer.h.11.mlp.c_proj.weight.grad";
  assert.equal(fitText(name, 19, true), "…c_proj.weight.grad");
  assert.equal(fitText(name, 19, true).length, 19);
  assert.equal(fitText(name, 20), "transformer.h.11.ml…", "a box's line keeps its head");
  assert.equal(fitText(name, name.length, true), name, "a name that fits is whole");
  assert.equal(fitText(name, 0, true), name, "no room known: as it is");
});
