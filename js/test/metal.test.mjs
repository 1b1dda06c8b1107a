// The kernel panel's "down to the metal" facts (issue 24): which IR stages a kernel shows as tabs, and its
// compiled resources in words. Drawing is checked in the exported page (tests/views).

import assert from "node:assert/strict";
import test from "node:test";
import { irResources, irStages } from "../src/metal.js";

test("IR tabs follow the compile order and skip absent stages", () => {
  const k = { ir: { ttir: "module {}", ttgir: "#blocked", llir: null, ptx: ".version 8.4", sass: "", registers: 32 } };
  assert.deepEqual(
    irStages(k).map((s) => s.label),
    ["TTIR", "TTGIR", "PTX"],
  );
  assert.deepEqual(irStages({ ir: null }), []);
  assert.deepEqual(irStages({}), []);
});

test("resources read as words, unknown ones left out", () => {
  assert.equal(irResources({ registers: 32, shared_bytes: 0, spills: 2 }), "32 registers · 0 B shared · 2 spills");
  assert.equal(irResources({ registers: 40, shared_bytes: null, spills: null }), "40 registers");
  assert.equal(irResources(null), "");
});
