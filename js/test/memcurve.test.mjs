// The memory curve's axis: which regions one repeat's bracket spans (`npm test`).

import assert from "node:assert/strict";
import test from "node:test";
import { repeatRuns } from "../src/memcurve.js";

const region = (module, first, last, repeat = "") => ({ module, label: module, first, last, repeat });

test("a backward's blocks with the top level's ops between them are one bracket, not one per block", () => {
  // as a checkpointed backward runs them: blocks.2, an add of the top level, blocks.1, an add, blocks.0
  const regions = [
    region("head", 0, 3),
    region("blocks.2", 4, 9, "blocks.2-0"),
    region("", 10, 10),
    region("blocks.1", 11, 16, "blocks.2-0"),
    region("", 17, 17),
    region("blocks.0", 18, 23, "blocks.2-0"),
  ];
  assert.deepEqual(repeatRuns(regions), [{ repeat: "blocks.2-0", first: 4, last: 23 }]);
});

test("another module between two instances ends the bracket", () => {
  const regions = [
    region("layers.0", 0, 4, "layers.0-1"),
    region("rotary", 5, 6),
    region("layers.1", 7, 9, "layers.0-1"),
  ];
  assert.deepEqual(repeatRuns(regions), [
    { repeat: "layers.0-1", first: 0, last: 4 },
    { repeat: "layers.0-1", first: 7, last: 9 },
  ]);
});

import { byteTicks, lineRuns, netRuns, peakLabelAt, runLabels, tickText } from "../src/memcurve.js";
import { nodeNumber, ordinal } from "../src/text.js";

test("a repeat cut into several runs is named once, under its widest run", () => {
  // nu26 ckpt backward (111 nodes): layers.3's recompute and lnf's backward interleave, then layers 3..0 run on;
  // "layers.3-0" was printed under each of the three runs, the first two on top of each other
  const regions = [
    region("layers.3", 0, 1, "layers.3-0"),
    region("lnf", 2, 2),
    region("layers.3", 3, 7, "layers.3-0"),
    region("lnf", 8, 9),
    region("layers.3", 10, 30, "layers.3-0"),
    region("layers.2", 31, 57, "layers.3-0"),
    region("layers.1", 58, 84, "layers.3-0"),
    region("layers.0", 85, 110, "layers.3-0"),
  ];
  const runs = repeatRuns(regions);
  assert.deepEqual(
    runs.map((r) => [r.first, r.last]),
    [
      [0, 1],
      [3, 7],
      [10, 110],
    ],
  );
  assert.deepEqual(runLabels(runs, 111, 700), [2]);
  // two repeats whose names would overlap: the wider keeps its name
  const two = [
    { repeat: "model.encoder.layers.0-5", first: 0, last: 3 },
    { repeat: "model.decoder.layers.0-5", first: 4, last: 9 },
  ];
  assert.deepEqual(runLabels(two, 10, 360), [1]);
  assert.deepEqual(runLabels(two, 10, 1100), [0, 1]);
});

test("the line into and between lower bounds is dashed, the rest solid", () => {
  // nu26 mask: points 2..5 live while a buffer of a data-dependent size is (Memory.uncounted_at)
  assert.deepEqual(lineRuns([false, false, true, true, true, true]), [
    [0, 1, false],
    [1, 5, true],
  ]);
  assert.deepEqual(lineRuns([false, true, false, false]), [
    [0, 2, true],
    [2, 3, false],
  ]);
  assert.deepEqual(lineRuns([false]), []);
});

test("the second line runs over the points with a net_bytes, stops where they end and skips a lone one", () => {
  const p = (...v) => v.map((net_bytes) => ({ net_bytes }));
  // a backward's curve, its second line cut after the node that frees an input of a size not known (net_floor_node)
  assert.deepEqual(netRuns(p(10, 30, -5, null, null)), [[0, 2]]);
  assert.deepEqual(netRuns(p(10, 30, 5)), [[0, 2]]);
  assert.deepEqual(netRuns(p(null, 1, null, 2, 3)), [[3, 4]]);
  assert.deepEqual(netRuns(p(null, null)), []);
});

test("the byte axis says every tick in one unit, the step's", () => {
  // the trial's ViT backward, peak 1.36 MiB: its top tick read "1.46 MiB" over "1000 KiB"
  const ticks = byteTicks(1431016);
  assert.deepEqual(
    ticks.map((t) => tickText(t, ticks)),
    ["0 B", "500 KiB", "1000 KiB", "1500 KiB"],
  );
  const big = byteTicks(5 * 1024 ** 3);
  assert.deepEqual(
    big.map((t) => tickText(t, big)),
    ["0 B", "2 GiB", "4 GiB", "6 GiB"],
  );
  assert.equal(tickText(512, [0, 512]), "512 B");
});

test("the peak's label stays inside the chart", () => {
  assert.deepEqual(peakLabelAt(100, 10, 640), [96, "start"]);
  assert.deepEqual(peakLabelAt(600, 10, 640), [604, "end"]);
  // "peak of the graph's buffers 5.3 MiB" (35 characters) over a peak in the middle of a 360 px chart
  const [x, anchor] = peakLabelAt(200, 35, 360);
  assert.equal(anchor, "end");
  assert.ok(x - 35 * 6.8 >= 0 && x <= 360, String(x));
});

test("a fused node's number says its place without an off-by-one reading", () => {
  // nu26 D6: "(#4 of 5)" for the last of five; the graph's boxes number from #0
  assert.equal(nodeNumber(4, 5), "#4, the 5th of 5");
  assert.equal(nodeNumber(0, 6), "#0, the 1st of 6");
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 93, 111, 112].map(ordinal), [
    "1st",
    "2nd",
    "3rd",
    "4th",
    "11th",
    "12th",
    "13th",
    "21st",
    "22nd",
    "93rd",
    "111th",
    "112th",
  ]);
});
