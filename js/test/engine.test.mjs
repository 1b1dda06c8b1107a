// The layout engine's clock check and its layouts made for a print (engine.js): `npm test`.

import assert from "node:assert/strict";
import test from "node:test";
import { clockStandsStill, LayoutEngine } from "../src/engine.js";

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

/** A Worker that never answers (node has none): what it was sent is kept. */
class SilentWorker {
  constructor() {
    this.sent = [];
  }
  postMessage(m) {
    this.sent.push(m);
  }
}

test("a print lays out on this thread a graph the worker has not answered, and the worker's late answer is dropped", async () => {
  const saved = globalThis.Worker;
  globalThis.Worker = SilentWorker;
  try {
    const engine = new LayoutEngine("/* worker */", { printable: true });
    const dot = "digraph { n0 -> n1 }";
    const waiting = engine.layout(dot);
    for (const p of engine.fore.pending.values()) clearTimeout(p.late); // no page here: the late check is not ours
    assert.equal(engine.fore.worker.sent.length, 1);
    // Graphviz is not made on this thread yet: nothing to print but what waits
    assert.equal(engine.layoutNow(dot), null);
    const made = [];
    engine.made = {
      layout: (d) => {
        made.push(d);
        return { width: 10, height: 20, nodes: {}, edges: [], clusters: [], ms: 1 };
      },
    };
    const now = engine.layoutNow(dot);
    assert.deepEqual(made, [dot]);
    assert.equal(now.here, true);
    assert.equal(now.width, 10);
    assert.equal(await waiting, now, "the request that waited gets the layout made here");
    assert.equal(engine.fore.pending.size, 0, "the worker's answer, if it ever comes, is dropped");
    // the cache keeps it: asked again (a second print, or the view's own request), it is not laid out again
    assert.equal(engine.layoutNow(dot), now);
    assert.equal(await engine.layout(dot), now);
    assert.deepEqual(made, [dot]);
    // a graph nobody asked the worker for is laid out here too, and kept
    const other = engine.layoutNow("digraph { a }");
    assert.equal(await engine.layout("digraph { a }"), other);
    assert.equal(engine.fore.worker.sent.length, 1);
  } finally {
    globalThis.Worker = saved;
  }
});
