// The roofline view's data: one point per profiled kernel with a cost, colours by fraction of peak.

import assert from "node:assert/strict";
import test from "node:test";
import { fmtFlopCount, hasRoofline, nodePeakFractions, peakColour, rooflinePoints } from "../src/roofline.js";

const prof = (extra) => ({
  total_us: 10,
  share: 0.5,
  per_call_us: 10,
  achieved_gbps: 800,
  achieved_tflops: 0.1,
  arithmetic_intensity: 0.125,
  peak_fraction: 0.8,
  bound: "memory",
  verdict: "80% of HBM bandwidth; memory-bound",
  ...extra,
});
const report = {
  compiles: [
    {
      id: "0/0 forward",
      fused_nodes: [
        { name: "op0", kind: "pointwise", kernel: "k0" },
        { name: "op1", kind: "extern", kernel: "mm[buf1]" },
        { name: "op2", kind: "pointwise", kernel: "k2" },
      ],
      kernels: [
        { name: "k0", language: "triton", profile: prof({}) },
        {
          name: "mm[buf1]",
          language: "extern",
          profile: prof({ arithmetic_intensity: 50, achieved_tflops: 5, peak_fraction: 0.5, bound: "compute" }),
        },
        { name: "k2", language: "triton", profile: null },
      ],
    },
  ],
  profile: { unattributed_share: 0.034, unattributed_text: "unattributed: 3%" },
  views: ["fusion", "fx", "timeline", "source", "kernels", "roofline"],
};

test("one point per profiled kernel with a cost, placed by intensity and GFLOP/s", () => {
  const pts = rooflinePoints(report);
  assert.deepEqual(
    pts.map((p) => [p.kernel, p.fused, p.kind, p.intensity, p.gflops]),
    [
      ["k0", "op0", "pointwise", 0.125, 100],
      ["mm[buf1]", "op1", "extern", 50, 5000],
    ],
  );
  assert.equal(hasRoofline(report), true);
  assert.equal(hasRoofline({ compiles: [], views: ["fusion", "fx"] }), false); // Python decided (Report.views)
});

test("colour runs from red (0% of peak) to green (100%)", () => {
  assert.equal(peakColour(0), "hsl(0, 65%, 45%)");
  assert.equal(peakColour(1), "hsl(120, 65%, 45%)");
  assert.equal(peakColour(null), "hsl(0, 0%, 55%)"); // unknown (e.g. a count above the peak): grey, not red
  assert.equal(peakColour(undefined), "hsl(0, 0%, 55%)");
  assert.equal(peakColour(2), "hsl(120, 65%, 45%)");
  assert.deepEqual(
    [...nodePeakFractions(report.compiles[0])],
    [
      ["op0", 0.8],
      ["op1", 0.5],
    ],
  );
});

test("a noisy kernel's dot is marked and its tooltip says why (KernelProfile.noisy, Python)", () => {
  const noisy = "noisy: the slowest run took 3,670x the fastest (15.4 µs to 56.5 ms): the machine was busy";
  const r = structuredClone(report);
  r.compiles[0].kernels[0].profile = prof({ noisy });
  const pts = rooflinePoints(r);
  assert.equal(pts.find((p) => p.kernel === "k0").noisy, noisy);
  assert.equal(pts.find((p) => p.kernel === "mm[buf1]").noisy, "");
});

test("a fraction from an upper bound is carried as one (KernelProfile.at_most, Python): the views draw ≤", () => {
  const r = structuredClone(report);
  r.compiles[0].kernels[0].profile = prof({ at_most: true, verdict: "at most 80% of HBM bandwidth; memory-bound" });
  const pts = rooflinePoints(r);
  assert.equal(pts.find((p) => p.kernel === "k0").atMost, true);
  assert.equal(pts.find((p) => p.kernel === "mm[buf1]").atMost, false); // reports made before it: no key, a count
});

test("an int8 kernel's work is integer ops: counted in OP, its dot in OP/s (Cost.integer_ops)", () => {
  // nu18 s2_pt2e: oneDNN's qlinear_pointwise, 2 x 2 x 512 x 16 int8 multiply-adds, read "32.8 kFLOP"
  assert.equal(fmtFlopCount(32768, "int8"), "32.8 kOP (int8)");
  assert.equal(fmtFlopCount(32768), "32.8 kFLOP");
  const int8 = structuredClone(report);
  int8.compiles[0].kernels[1].cost = { flops: 32768, integer_ops: "int8" };
  const units = Object.fromEntries(rooflinePoints(int8).map((p) => [p.kernel, p.unit]));
  assert.deepEqual(units, { k0: "FLOP", "mm[buf1]": "OP" });
});
