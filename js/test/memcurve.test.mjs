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
