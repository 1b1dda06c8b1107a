// What fits the view (fit.js) and the straight column of a residual stack (dot.js): `npm test`.

import assert from "node:assert/strict";
import test from "node:test";
import { indexCompile, visibleCount } from "../src/data.js";
import { buildFusion } from "../src/dot.js";
import { ALWAYS_EXPANDED, boxesThatFit, fittingExpansion, MAX_OPENING, openText } from "../src/fit.js";

// an encoder shaped like nn.TransformerEncoder's forward: per layer 7 attention nodes, 2 of the layer's
// own, 2 norm1, 1 linear1, 1 linear2, 1 norm2, then a node of no module (the residual add + next norm)
function encoder(layers) {
  const out = [];
  for (let l = 0; l < layers; l++) {
    const L = `layers.${l}`;
    const subs = [
      ...Array(7).fill(`${L}.self_attn`),
      null,
      null,
      `${L}.norm1`,
      `${L}.norm1`,
      `${L}.linear1`,
      `${L}.linear2`,
      `${L}.norm2`,
    ];
    for (const s of subs) out.push({ name: `op${out.length}`, module_stack: s ? [L, s] : [L] });
    out.push({ name: `op${out.length}`, module_stack: [] });
  }
  return out;
}

test("a screen holds as many boxes as its height fits, within bounds", () => {
  assert.equal(boxesThatFit(540), 9); // a 1000 x 700 cell's pane
  assert.equal(boxesThatFit(100), 4);
  assert.equal(boxesThatFit(100000), MAX_OPENING);
});

test("a 4-layer encoder opens one box per layer in a 1000 x 700 cell, not 24 modules expanded", () => {
  const boxes = encoder(4); // 64 fused nodes
  const exp = fittingExpansion(boxes, 540);
  assert.equal(exp.size, 0);
  assert.equal(visibleCount(boxes, exp), 8); // layers.0..3 and the 4 nodes between them
  // a tall pane opens deeper: layer 0 shows its sub-modules, still no more boxes than fit
  const tall = fittingExpansion(boxes, 1400);
  assert.ok(tall.has("layers.0"));
  assert.ok(visibleCount(boxes, tall) > 8 && visibleCount(boxes, tall) <= boxesThatFit(1400));
});

test("where no collapse fits one screen, collapsing hides nothing it need not: up to 60 boxes as before", () => {
  // 32 layers of 16: even one box per layer (32) is more than a screen (9)
  const boxes = [];
  for (let l = 0; l < 32; l++)
    for (let j = 0; j < 16; j++) boxes.push({ name: `op${boxes.length}`, module_stack: [`h.${l}`, `h.${l}.mlp`] });
  const shown = visibleCount(boxes, fittingExpansion(boxes, 540));
  assert.equal(shown, 31 + 16); // one layer widened to its 16 nodes, the other 31 one box each: <= 60
  // 41 boxes, 5 of them in one module: more than two screens, and collapsing that module cannot make it fit
  const flat = Array.from({ length: 41 }, (_, i) => ({ name: `op${i}`, module_stack: i < 5 ? ["m"] : [] }));
  assert.equal(visibleCount(flat, fittingExpansion(flat, 540)), 41);
});

test("a graph of at most two screens opens fully expanded", () => {
  const boxes = encoder(1).concat(encoder(1).map((n, i) => ({ ...n, name: `b${i}` }))); // 30 boxes
  assert.equal(visibleCount(boxes, fittingExpansion(boxes, 900)), 30); // two screens of 15
  assert.ok(visibleCount(boxes, fittingExpansion(boxes, 540)) <= 9); // more than two screens of 9
});

test("a small graph opens fully expanded, however short the pane", () => {
  const boxes = encoder(1); // 15 fused nodes
  assert.ok(boxes.length <= ALWAYS_EXPANDED);
  const exp = fittingExpansion(boxes, 200);
  assert.equal(visibleCount(boxes, exp), boxes.length);
});

test("an edge that skips over the column (a residual) does not bend it: weight 0", () => {
  // a -> b -> c in execution order, and a -> c beside them
  const compile = {
    id: "0/0",
    graph_inputs: [],
    graph_outputs: [],
    fused_nodes: [
      { name: "a", kind: "pointwise", kernel: "k_a", fx_nodes: [], reads: [], writes: ["ba"] },
      { name: "b", kind: "pointwise", kernel: "k_b", fx_nodes: [], reads: ["ba"], writes: ["bb"] },
      { name: "c", kind: "pointwise", kernel: "k_c", fx_nodes: [], reads: ["ba", "bb"], writes: ["bc"] },
    ],
    edges: [
      { kind: "node", source: "a", target: "b", buffers: ["ba"] },
      { kind: "node", source: "a", target: "c", buffers: ["ba"] },
      { kind: "node", source: "b", target: "c", buffers: ["bb"] },
    ],
    kernels: [],
  };
  const b = buildFusion(indexCompile(compile), new Set());
  const [a, bb, c] = ["a", "b", "c"].map((n) => b.keyToId.get("node:" + n));
  assert.match(b.dot, new RegExp(`${a} -> ${c} \\[weight=0\\];`));
  assert.match(b.dot, new RegExp(`${a} -> ${bb};`));
  assert.match(b.dot, new RegExp(`${bb} -> ${c};`));
});

test("the open groups are named, a repeat by its label and count, four or more counted", () => {
  const compile = {
    module_view: { repeats: [{ key: "repeat:h.0-3", label: "h.0-3", modules: ["h.0", "h.1", "h.2", "h.3"] }] },
  };
  const ix = { compile };
  assert.equal(openText(ix, new Set()), "top level");
  assert.equal(openText(ix, new Set(["repeat:h.0-3"])), "h.0-3 ×4 open");
  assert.equal(openText(ix, new Set(["ln_f", "lm_head"])), "ln_f, lm_head open");
  assert.equal(openText(ix, new Set(["a", "b", "c", "d", "e"])), "a, b, c and 2 more open");
});
