// The layout engine's clock check (engine.js): `npm test`.

import assert from "node:assert/strict";
import test from "node:test";
import { clockStandsStill } from "../src/engine.js";

test("a clock that moves between reads is real; one that stands still while the thread works is virtual", () => {
  let t = 0;
  assert.equal(
    clockStandsStill(() => (t += 0.005)),
    false,
  );
  let reads = 0;
  const steps = () => (++reads > 40 ? 1 : 0); // 100 us steps: moves after a few dozen reads
  assert.equal(clockStandsStill(steps), false);
  assert.equal(
    clockStandsStill(() => 1234.5),
    true,
  );
  assert.equal(clockStandsStill(), false); // node's own clock
});
