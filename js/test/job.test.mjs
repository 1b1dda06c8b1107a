// The job view's pure helpers (the DOM part is covered by the browser test of the combined page).

import assert from "node:assert/strict";
import test from "node:test";
import { divergentRanks, firstRank, rankLabel } from "../src/job.js";

const job = {
  world_size: 3,
  ranks: [
    { rank: 0, report: null, missing: "crashed" },
    { rank: 1, report: { compiles: [{}, {}] } },
    { rank: 2, report: { compiles: [{}] } },
  ],
  divergence: [
    { aspect: "missing", ranks: [0], groups: [{ ranks: [0] }] },
    { aspect: "recompiles", ranks: [2], groups: [{ ranks: [1] }, { ranks: [2] }] },
  ],
};

test("the first rank shown is the lowest one with a report", () => {
  assert.equal(firstRank(job), 1);
  assert.equal(firstRank({ ranks: [{ rank: 0, report: null }] }), null);
});

test("divergent ranks: the union of each divergence's ranks, as Python named them", () => {
  assert.deepEqual([...divergentRanks(job)].sort(), [0, 2]);
});

test("rank labels say missing, the compile count, and whether the rank differs", () => {
  const d = divergentRanks(job);
  assert.equal(rankLabel(job.ranks[0], d), "rank 0 · missing");
  assert.equal(rankLabel(job.ranks[1], d), "rank 1 · 2 compiles");
  assert.equal(rankLabel(job.ranks[2], d), "rank 2 · 1 compile · differs");
});
