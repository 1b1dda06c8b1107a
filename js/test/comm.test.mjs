// The widget's requests to its kernel (src/comm.js): an answer in one message or in parts (the exported page),
// with a stand-in for anywidget's model. `npm test` (node --test).

import assert from "node:assert/strict";
import test from "node:test";
import { request } from "../src/comm.js";

/** A model whose kernel answers each request with `answer(content)`: a list of [msg, buffers] sent back. */
function model(answer) {
  const handlers = new Set();
  return {
    on: (name, fn) => name === "msg:custom" && handlers.add(fn),
    off: (_name, fn) => handlers.delete(fn),
    send(content) {
      setTimeout(() => {
        for (const [msg, buffers] of answer(content)) for (const fn of [...handlers]) fn(msg, buffers);
      }, 0);
    },
    listeners: () => handlers.size,
  };
}

const bytes = (s) => new TextEncoder().encode(s);

test("an answer in one message resolves with it", async () => {
  const m = model((c) => [[{ type: c.type, id: c.id }, [bytes("engine")]]]);
  const { msg, buffers } = await request(m, "engine");
  assert.equal(msg.type, "engine");
  assert.deepEqual(buffers, [bytes("engine")]);
  assert.equal(m.listeners(), 0);
});

test("an answer in parts resolves once the last has come, every buffer in order", async () => {
  const pieces = ["<!doctype html>", "<p>middle</p>", "</html>\n"];
  const m = model((c) => [
    [{ type: "someone else's", id: "other" }, [bytes("not ours")]],
    ...pieces.map((p, i) => [
      { type: c.type, id: c.id, filename: "r.html", part: i, last: i === pieces.length - 1 },
      [bytes(p)],
    ]),
  ]);
  const { msg, buffers } = await request(m, "export");
  assert.equal(msg.filename, "r.html");
  assert.equal(new TextDecoder().decode(Buffer.concat(buffers)), pieces.join(""));
  assert.equal(m.listeners(), 0);
});

test("a part out of order, or an error after some parts, rejects", async () => {
  const skipped = model((c) => [
    [{ id: c.id, part: 0 }, [bytes("a")]],
    [{ id: c.id, part: 2, last: true }, [bytes("c")]],
  ]);
  await assert.rejects(request(skipped, "export"), /part 2 .* out of order/);
  const failed = model((c) => [
    [{ id: c.id, part: 0 }, [bytes("a")]],
    [{ id: c.id, error: "OSError: disk full" }, []],
  ]);
  await assert.rejects(request(failed, "export"), /disk full/);
  assert.equal(failed.listeners(), 0);
});

test("the time-out runs again from each part", async () => {
  const m = model((c) => [[{ id: c.id, part: 0 }, [bytes("a")]]]); // the rest never comes
  await assert.rejects(request(m, "export", 30), /no answer from the kernel to export/);
  assert.equal(m.listeners(), 0);
});
