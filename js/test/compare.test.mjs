// The compare view's pure parts: `npm test` (node --test).

import assert from "node:assert/strict";
import test from "node:test";
import {
  autotuneDetail,
  autotuneNote,
  changeText,
  graphMarks,
  lines,
  partnerKernel,
  rowKernel,
  sideBySide,
  sortedRows,
  timeTexts,
} from "../src/comparedata.js";

const pair = {
  a: "0/0 forward",
  b: "0/0 forward",
  kernels: [
    { status: "same", a: "k0", b: "k0", time_delta_us: 0.1, fused_b: ["op0"] },
    {
      status: "changed",
      a: "k1",
      b: "k1b",
      time_delta_us: -8,
      moved_ops_in: ["aten.mul.Tensor"],
      moved_ops_out: [],
      changes: ["fusion", "source"],
      what_changed: "+ mul; source",
      fused_b: ["op1", "op2"],
    },
    { status: "only_a", a: "k2", b: null, time_delta_us: -2.5, what_changed: "removed" },
    { status: "only_b", a: null, b: "k3", time_delta_us: 12, fused_b: ["op3"] },
  ],
};

test("rows sort by the size of the time delta, largest first", () => {
  assert.deepEqual(
    sortedRows(pair).map((r) => r.index),
    [3, 1, 2, 0],
  );
});

test("without times, rows sort changed, added, removed, same, in execution order", () => {
  const untimed = { kernels: pair.kernels.map((k) => ({ ...k, time_delta_us: null })) };
  assert.deepEqual(
    sortedRows(untimed).map((r) => r.status),
    ["changed", "only_b", "only_a", "same"],
  );
});

test("a row is named by B's kernel, or A's when only in A", () => {
  assert.equal(rowKernel(pair.kernels[1]), "k1b");
  assert.equal(rowKernel(pair.kernels[2]), "k2");
});

test("lines split like Python's splitlines", () => {
  assert.deepEqual(lines("a\nb\n"), ["a", "b"]);
  assert.deepEqual(lines("a\r\nb"), ["a", "b"]);
  assert.deepEqual(lines(""), []);
});

test("side by side follows difflib opcodes and leaves gaps", () => {
  // a: x y z ; b: x Y Y2 z  -> equal x, replace y by Y Y2, equal z
  const rows = sideBySide("x\ny\nz\n", "x\nY\nY2\nz\n", [
    ["equal", 0, 1, 0, 1],
    ["replace", 1, 2, 1, 3],
    ["equal", 2, 3, 3, 4],
  ]);
  assert.deepEqual(
    rows.map((r) => [r.a && r.a.text, r.b && r.b.text, r.tag]),
    [
      ["x", "x", "equal"],
      ["y", "Y", "replace"],
      [null, "Y2", "replace"],
      ["z", "z", "equal"],
    ],
  );
  assert.equal(rows[3].b.n, 4);
  const one = sideBySide(null, "p\nq", null);
  assert.deepEqual(
    one.map((r) => [r.a, r.b.text, r.tag]),
    [
      [null, "p", "insert"],
      [null, "q", "insert"],
    ],
  );
});

test("change text and graph marks say what Python decided; a launch marks every fused node it computes", () => {
  assert.equal(changeText(pair.kernels[1]), "+ mul; source");
  assert.equal(changeText(pair.kernels[2]), "removed");
  assert.deepEqual(
    [...graphMarks(pair)],
    [
      ["op1", "changed"],
      ["op2", "changed"],
      ["op3", "added"],
    ],
  );
  // the times are Python's words (KernelDiff.time_*_text), drawn as they are
  assert.deepEqual(timeTexts({ time_a_text: "33.6 ms", time_b_text: "318 µs", time_delta_text: "−33.3 ms" }), {
    a: "33.6 ms",
    b: "318 µs",
    delta: "−33.3 ms",
  });
  assert.deepEqual(timeTexts({}), { a: "", b: "", delta: "" });
});

test("a merged row follows the row it merged into; a split launch is boxed as changed; each names its partner", () => {
  // Python's order: A's linear paired with B's template, then A's epilogue merged into it (nu18 D5)
  const merge = {
    kernels: [
      { status: "same", a: "k0", b: "k0", fused_b: ["op9"] },
      { status: "changed", a: "mm", b: "tem", merged_with: ["relu"], fused_b: ["op0_op1"] },
      { status: "merged", a: "relu", b: null, merged_into: "tem", fused_a: ["op1"], fused_b: ["op0_op1"] },
      { status: "split", a: null, b: "mul", split_from: "tem2", fused_a: ["op5"], fused_b: ["op6"] },
      { status: "only_a", a: "gone", b: null },
    ],
  };
  assert.deepEqual(
    sortedRows(merge).map((r) => r.a || r.b),
    ["mm", "relu", "mul", "gone", "k0"],
  );
  assert.equal(rowKernel(merge.kernels[2]), "relu");
  assert.equal(partnerKernel(merge.kernels[2], "b"), "tem");
  assert.equal(partnerKernel(merge.kernels[3], "a"), "tem2");
  assert.equal(partnerKernel(merge.kernels[1], "b"), "");
  assert.deepEqual(
    [...graphMarks(merge)],
    [
      ["op0_op1", "changed"],
      ["op6", "changed"],
    ],
  );
});

test("a row's autotune timing is Python's sentence, or nothing", () => {
  const row = {
    autotune_vs_a: {
      note: "A measured mm at 13.6 µs; B's autotuning timed it at 61.0 µs (4.5×)",
      detail: "A measured mm at 13.6 µs; B's autotuning timed it at 61.0 µs (4.5×) and chose triton_mm_4 (44.5 µs)",
    },
  };
  assert.equal(autotuneNote(row), row.autotune_vs_a.note);
  assert.equal(autotuneDetail(row), row.autotune_vs_a.detail);
  assert.equal(autotuneNote({ autotune_vs_a: {} }), "");
  assert.equal(autotuneDetail({}), "");
});
