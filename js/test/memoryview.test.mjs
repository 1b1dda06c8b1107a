// The Memory view's tables: a saved tensor's shape as the graph has it, with the sizes seen at capture where it is
// symbolic (`npm test`).

import assert from "node:assert/strict";
import test from "node:test";
import { constantRows, groupRows, savedRows, shapeText } from "../src/views/memory.js";

test("a symbolic saved shape is shown with the sizes its bytes are counted at", () => {
  // dynamic=True: the graph has [s77, 32]; 512 B is at s77 = 4 (SavedTensor.shape_hint); a weight is static
  const memory = {
    saved_for_backward: [
      { name: "primals_4", shape: ["s77", 32], shape_hint: [4, 32], dtype: "float32", bytes: 512, kind: "input" },
      { name: "primals_5", shape: [8, 64], dtype: "float32", bytes: 2048, kind: "input" },
    ],
    saved_groups: [
      { module: "", what: "x", kind: "input", count: 1, bytes: 512, shape: ["s77", 32], shape_hint: [4, 32] },
    ],
  };
  assert.deepEqual(
    savedRows(memory).map((r) => r.shape),
    ["[s77, 32] = [4, 32]", "[8, 64]"],
  );
  assert.deepEqual(
    groupRows(memory).map((r) => r.shape),
    ["[s77, 32] = [4, 32]"],
  );
});

test("a saved view's row carries Python's note, and a storage another row counts is marked so", () => {
  // nu20 O-a: GPT-2's saved `t` is a view of mlp.act's output; a second view of one storage is counted once
  const memory = {
    saved_for_backward: [
      { name: "permute_14", kind: "activation", bytes: 1024, note: "", shares: "" },
      {
        name: "t",
        kind: "activation",
        bytes: 1024,
        note: "t: a view of h.1.mlp.act's output (mul); shares its storage buf40 with permute_14: counted once, there",
        shares: "permute_14",
      },
    ],
  };
  const rows = savedRows(memory, "order");
  assert.deepEqual(
    rows.map((r) => [r.name, r.shares]),
    [
      ["permute_14", ""],
      ["t", "permute_14"],
    ],
  );
  assert.match(rows[1].note, /a view of h\.1\.mlp\.act's output/);
});

test("each weight a frozen graph holds is a row of its own, by the parameter it comes from (Memory.constants)", () => {
  // nu18 s1_mat: the GEMM template's packed fc1 weight and fc1's bias, as Python named and sized them
  const memory = {
    constant_bytes: 33280,
    constants: [
      { name: "constant6", bytes: 32768, display: "fc1.weight (packed for the C++ GEMM template)" },
      { name: "_frozen_param1", bytes: 256, display: "fc1.bias", shape: [64], dtype: "float32" },
      { name: "x_scale", bytes: 256 },
    ],
  };
  assert.deepEqual(
    constantRows(memory).map((r) => [r.shown, r.inductor, r.bytes, r.shape, r.dtype]),
    [
      ["fc1.weight (packed for the C++ GEMM template)", "constant6", "32 KiB", "", ""],
      ["fc1.bias", "_frozen_param1", "256 B", "[64]", "float32"],
      ["x_scale", "", "256 B", "", ""],
    ],
  );
  assert.deepEqual(constantRows({}), []);
});

test("a grouped row carries Python's note on a shared storage; a shape breaks only between its two lists", () => {
  // nu26 D5 (amp): q, k and v of each layer are views of one qkv buffer, counted once, in q's row
  const memory = {
    saved_groups: [
      {
        what: "split: output 0",
        kind: "activation",
        count: 2,
        bytes: 786432,
        each: 131072,
        names: ["permute_1", "permute_9"],
        note: "each shares its storage of 384 KiB with split: output 1: the storage counted once, here (2 × 384 KiB)",
      },
      { what: "split: output 1", kind: "activation", count: 2, bytes: 0, each: 131072, shared: 2, note: "x" },
    ],
  };
  const rows = groupRows(memory, "order");
  assert.deepEqual(
    rows.map((r) => [r.note.slice(0, 31), r.shared]),
    [
      ["each shares its storage of 384 ", 0],
      ["x", 2],
    ],
  );
  assert.equal(
    shapeText("[s77, 4, 64, 32] = [8, 4, 64, 32]"),
    "[s77,\u00a04,\u00a064,\u00a032] = [8,\u00a04,\u00a064,\u00a032]",
  );
});
