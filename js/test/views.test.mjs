// Source view, kernel table, glue folding, labels, escapes, compile groups, store: `npm test`.

import assert from "node:assert/strict";
import test from "node:test";
import { frameStage, indexCompile, kernelRun } from "../src/data.js";
import { buildFusion } from "../src/dot.js";
import { createStore, initialState } from "../src/store.js";
import { hasHidden, visible } from "../src/text.js";
import {
  diagnosticsOf,
  fmtShape,
  kernelRows,
  lineSummary,
  sameGraphGroups,
  sortRows,
  sourceFiles,
  sourceIndex,
} from "../src/viewdata.js";

const fr = (line, code = "y = f(x)") => ({ file: "/home/me/model.py", line, function: "forward", code });
const compile = {
  id: "0/0 forward",
  graph_inputs: ["x", "w"],
  graph_outputs: ["buf4"],
  fused_nodes: [
    {
      name: "op0",
      kind: "extern",
      box_kind: "extern",
      op_count: 1,
      label: "mm",
      fx_nodes: ["mm"],
      kernel: "extern_kernels.mm",
      reads: ["x", "w"],
      writes: ["buf0"],
      user_lines: [fr(3)],
      time: { us: 5, share: 0.5 }, // FusedNode.time (Python's, report/lines.node_times)
    },
    {
      name: "op1",
      kind: "other",
      box_kind: "other",
      op_count: 1,
      is_glue: true,
      fx_nodes: ["getitem"],
      kernel: null,
      reads: ["buf0"],
      writes: ["buf1"],
    },
    {
      name: "op2",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["relu"],
      kernel: "cpp_fused_relu_0",
      reads: ["buf1"],
      writes: ["buf2"],
      user_lines: [fr(4)],
      time: { us: 2, share: 0.2 }, // FusedNode.time (Python's, report/lines.node_times)
    },
    {
      name: "op3",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["sin"],
      kernel: "cpp_fused_relu_0",
      reads: ["buf2"],
      writes: ["buf3"],
      user_lines: [fr(4)],
    },
    {
      name: "op4",
      kind: "pointwise",
      box_kind: "pointwise",
      op_count: 1,
      fx_nodes: ["cos"],
      kernel: "cpp_fused_cos_1",
      reads: ["buf3"],
      writes: ["buf4"],
      user_lines: [fr(9)],
      time: { us: 3, share: 0.3 }, // FusedNode.time (Python's, report/lines.node_times)
    },
  ],
  // Compile.edges as Python's report/rules.fusion_edges ships them: the glue op1 passed through
  edges: [
    { kind: "input", source: "x", target: "op0", buffers: ["x"] },
    { kind: "input", source: "w", target: "op0", buffers: ["w"] },
    { kind: "node", source: "op0", target: "op2", buffers: ["buf1"] },
    { kind: "node", source: "op2", target: "op3", buffers: ["buf2"] },
    { kind: "node", source: "op3", target: "op4", buffers: ["buf3"] },
    { kind: "output", source: "op4", target: "buf4", buffers: ["buf4"] },
  ],
  // call_sites and user_lines as Python's report/finish.py fills them (tests/report/test_derived.py checks
  // the rules; tests/views/test_js_python_agree.py that the views show what Python decided)
  kernels: [
    {
      name: "extern_kernels.mm",
      language: "extern",
      user_stack: [[fr(3)]],
      user_lines: [fr(3)],
      call_sites: [["op0"]],
      profile: { total_us: 5, share: 0.5 },
    },
    {
      name: "cpp_fused_relu_0",
      language: "cpp",
      user_stack: [[fr(4)]],
      user_lines: [fr(4)],
      call_sites: [["op2", "op3"]],
      profile: { total_us: 2, share: 0.2 },
    },
    {
      name: "cpp_fused_cos_1",
      language: "cpp",
      user_stack: [],
      user_lines: [fr(9)],
      call_sites: [["op4"]],
      profile: { total_us: 3, share: 0.3 },
    },
  ],
  // Compile.time_by_line as Python's report/lines.time_by_line makes it: each line's share of its kernels' time
  time_by_line: [
    { file: "/home/me/model.py", line: 3, us: 5, share: 0.5, kernels: ["extern_kernels.mm"], built: false },
    { file: "/home/me/model.py", line: 4, us: 2, share: 0.2, kernels: ["cpp_fused_relu_0"], built: false },
    { file: "/home/me/model.py", line: 9, us: 3, share: 0.3, kernels: ["cpp_fused_cos_1"], built: false },
  ],
  graphs: {
    post_grad: {
      nodes: [
        { name: "mm", target: "aten.mm.default", user_stack: [fr(3)], shape: ["s0", 8], shape_hint: [4, 8] },
        { name: "getitem", target: "_operator.getitem" },
        { name: "relu", target: "aten.relu.default", user_stack: [fr(4)] },
        { name: "sin", target: "aten.sin.default", user_stack: [fr(4)] },
        { name: "cos", target: "aten.cos.default", user_stack: [fr(9)] },
      ],
    },
  },
};
const report = {
  compiles: [compile],
  // Report.time_by_line, every compile's (report/lines.mark_times): the Source view's all-compiles gutter
  time_by_line: compile.time_by_line,
  source_files: [{ file: "/home/me/model.py", text: "import torch\n\nx = mm(a)\ny = relu(x).sin()\n" }],
};

test("glue nodes (is_glue) are not boxes: the edge Python ships past them joins the producer's box to the reader's", () => {
  const ix = indexCompile(compile);
  assert.deepEqual(
    ix.boxes.map((n) => n.name),
    ["op0", "op2", "op3", "op4"],
  );
  const b = buildFusion(ix, new Set());
  assert.equal(b.keyToId.get("node:op1"), undefined);
  const [mm, relu] = ["op0", "op2"].map((n) => b.keyToId.get("node:" + n));
  assert.deepEqual(
    b.edges.filter((e) => e.from === mm && e.to === relu).map((e) => e.buffers),
    [["buf1"]],
    JSON.stringify(b.edges),
  );
  assert.equal(b.items.get(b.keyToId.get("node:op0")).lines[0], "mm", "extern boxes are labelled by FusedNode.label");
});

test("a kernel run is the kernel's call site (Kernel.call_sites); the same kernel called again elsewhere is not", () => {
  const ix = indexCompile(compile);
  assert.deepEqual(kernelRun(ix, "op2"), ["op2", "op3"]);
  const again = {
    ...compile,
    fused_nodes: [
      ...compile.fused_nodes,
      {
        name: "op5",
        kind: "pointwise",
        fx_nodes: [],
        box_kind: "pointwise",
        op_count: 0,
        kernel: "cpp_fused_relu_0",
        reads: ["buf4"],
        writes: ["buf5"],
      },
    ],
    kernels: compile.kernels.map((k) =>
      k.name === "cpp_fused_relu_0" ? { ...k, call_sites: [["op2", "op3"], ["op5"]] } : k,
    ),
  };
  const ix2 = indexCompile(again);
  assert.deepEqual(kernelRun(ix2, "op5"), ["op5"]);
  const b = buildFusion(ix2, new Set());
  assert.equal(b.keyToId.get("node:op2"), b.keyToId.get("node:op3"));
  assert.notEqual(b.keyToId.get("node:op5"), b.keyToId.get("node:op2"));
});

test("source index: each line with the kernels its ops went to; file text from report.source_files", () => {
  const idx = sourceIndex(report);
  assert.deepEqual([...idx.keys()].sort(), ["/home/me/model.py:3", "/home/me/model.py:4", "/home/me/model.py:9"]);
  assert.deepEqual(
    idx.get("/home/me/model.py:4").refs.map((r) => r.fused),
    ["op2", "op3"],
  );
  const s = lineSummary(idx.get("/home/me/model.py:4"), report);
  assert.equal(s.kernels.length, 1, "two fused nodes of one kernel count once");
  assert.equal(s.us, 2);
  const files = sourceFiles(report, idx);
  assert.equal(files.length, 1);
  assert.deepEqual(
    files[0].lines.map((l) => l.code),
    ["import torch", "", "x = mm(a)", "y = relu(x).sin()"],
  );
  // an older report without file text: the recorded lines alone, said so
  const old = sourceFiles({ compiles: [compile] }, idx);
  assert.equal(old[0].partial, true);
  assert.deepEqual(
    old[0].lines.map((l) => l.line),
    [3, 4, 9],
  );
  assert.match(old[0].note, /only the lines/);
});

test("source index: a node whose ops ran inside torch belongs to the lines that built its modules, as built", () => {
  const b = (line, modules) => ({
    file: "/home/me/train.py",
    line,
    code: "nn.Linear(16, 32),",
    function: "<module>",
    modules,
  });
  const seq = {
    id: "0/0 forward",
    fused_nodes: [
      {
        name: "op0",
        kind: "extern",
        fx_nodes: ["addmm"],
        box_kind: "extern",
        op_count: 1,
        kernel: "extern_kernels.addmm",
        built_lines: [b(6, ["0"])],
      },
      {
        name: "op1",
        kind: "pointwise",
        fx_nodes: ["gelu"],
        box_kind: "pointwise",
        op_count: 1,
        kernel: "cpp_fused_gelu_0",
        built_lines: [b(7, ["1"])],
      },
      // a node with a line that ran: counted as ran, never as built (Python gives it no built_lines)
      {
        name: "op2",
        kind: "extern",
        fx_nodes: ["addmm_1"],
        box_kind: "extern",
        op_count: 1,
        kernel: "extern_kernels.addmm_1",
        user_lines: [fr(7)],
      },
    ],
    kernels: [],
  };
  const r = { compiles: [seq] };
  const idx = sourceIndex(r);
  assert.deepEqual(
    idx.get("/home/me/train.py:6").refs.map((x) => [x.fused, x.how, x.modules]),
    [["op0", "built", ["0"]]],
  );
  const s = lineSummary(idx.get("/home/me/train.py:7"), r, "0/0 forward");
  assert.deepEqual(s.kernels, [], "a built line runs no kernel");
  assert.deepEqual(
    s.built.kernels.map((x) => x.kernel),
    ["cpp_fused_gelu_0"],
  );
  assert.deepEqual(s.built.modules, ["1"]);
  const ran = lineSummary(idx.get("/home/me/model.py:7"), r, "0/0 forward");
  assert.equal(ran.kernels.length, 1);
  assert.equal(ran.built.kernels.length, 0);
});

test("kernel table: a noisy kernel's row carries Python's noisy text, the mark's title (KernelProfile.noisy)", () => {
  const noisy = "noisy: the slowest run took 611x the fastest (58.0 µs to 35.4 ms): the machine was busy";
  const c = structuredClone(compile);
  c.kernels[0].profile = { total_us: 5, share: 0.5, noisy };
  const rows = kernelRows(indexCompile(c));
  assert.deepEqual(
    rows.map((r) => r.noisy),
    [noisy, "", ""],
  );
});

test("kernel table: one row per kernel, sortable and filterable", () => {
  const rows = kernelRows(indexCompile(compile));
  assert.deepEqual(
    rows.map((r) => r.kernel),
    ["extern_kernels.mm", "cpp_fused_relu_0", "cpp_fused_cos_1"],
  );
  assert.deepEqual(rows[1].fused, ["op2", "op3"]);
  assert.equal(rows[1].line, "model.py:4");
  assert.equal(rows[2].line, "model.py:9", "the kernel's user line: Kernel.user_lines[0]");
  assert.deepEqual(
    sortRows(rows, "-us", "").map((r) => r.us),
    [5, 3, 2],
  );
  assert.deepEqual(
    sortRows(rows, "kernel", "").map((r) => r.kernel),
    ["cpp_fused_cos_1", "cpp_fused_relu_0", "extern_kernels.mm"],
  );
  assert.deepEqual(
    sortRows(rows, "order", "relu").map((r) => r.kernel),
    ["cpp_fused_relu_0"],
  );
});

test("bidi controls and zero-width characters become visible escapes", () => {
  assert.equal(visible("a\u202Eb\u200Bc\u2066d\uFEFF"), "a⟨U+202E⟩b⟨U+200B⟩c⟨U+2066⟩d⟨U+FEFF⟩");
  assert.equal(visible("plain ünïcode →"), "plain ünïcode →");
  assert.equal(visible(null), "");
  assert.ok(hasHidden("x\u2069") && !hasHidden("x"));
  for (let c = 0x202a; c <= 0x202e; c++) assert.ok(!visible(String.fromCharCode(c)).includes(String.fromCharCode(c)));
  for (let c = 0x2066; c <= 0x2069; c++) assert.ok(!visible(String.fromCharCode(c)).includes(String.fromCharCode(c)));
});

test("symbolic shapes show their capture-time sizes as a hint", () => {
  assert.deepEqual(fmtShape({ shape: ["s0", 768], shape_hint: [8, 768] }), { text: "[s0, 768]", hint: "[8, 768]" });
  assert.deepEqual(fmtShape({ shape: [4, 768] }), { text: "[4, 768]", hint: "" });
  // a node of several tensors (an output node, a multi-output op): each shape whole, a 0-d one as []
  assert.deepEqual(fmtShape({ shape: [[], [4, 8], ["s0", 8]], shape_hint: [[], [4, 8], [3, 8]] }), {
    text: "([], [4, 8], [s0, 8])",
    hint: "([], [4, 8], [3, 8])",
  });
  assert.deepEqual(fmtShape({}), { text: "", hint: "" });
});

test("diagnostics, groups and frames read the model's fields", () => {
  assert.deepEqual(diagnosticsOf({ diagnostics: [{ code: "hook_missing", message: "m" }] }), [
    { code: "hook_missing", message: "m", detail: "" },
  ]);
  const cs = [{ id: "a" }, { id: "b", same_graph_as: "a" }, { id: "c" }, { id: "d", same_graph_as: "a" }];
  assert.deepEqual(
    [...sameGraphGroups(cs)],
    [
      ["a", ["a", "b", "d"]],
      ["c", ["c"]],
    ],
  );
  assert.equal(frameStage({ file: "/x/torch/_dynamo/a.py", stage: "user" }), "user", "the model's stage wins");
  assert.equal(frameStage({ file: "/home/me/m.py", stage: "other" }), "library");
});

test("the store keeps all state per lens and normalizes before notifying once", () => {
  const st = initialState({ compiles: [{ id: "a" }, { id: "b" }] }, { view: "source", compileId: "b" }, [
    "fusion",
    "source",
  ]);
  assert.equal(st.view, "source");
  assert.equal(st.compileId, "b");
  assert.equal(st.showPasses, false);
  const a = createStore({ ...st }),
    b = createStore({ ...st });
  a.set({ showPasses: true });
  assert.equal(b.get().showPasses, false, "two lenses never share state");
  const seen = [];
  const s = createStore({ x: 1, y: 0 }, (next, keys) => (keys.has("x") ? { y: next.x * 2 } : null));
  s.subscribe((state, changed) => seen.push([state.y, [...changed].sort()]));
  s.set({ x: 3 });
  assert.deepEqual(seen, [[6, ["x", "y"]]]);
});

test("graph inputs are named by display_name and role where the report has them", () => {
  const c = {
    ...compile,
    graphs: {
      post_grad: {
        nodes: [
          ...compile.graphs.post_grad.nodes,
          { name: "w", op: "placeholder", target: "w", display_name: "fc1.weight", role: "parameter" },
        ],
      },
    },
  };
  const b = buildFusion(indexCompile(c), new Set());
  const w = [...b.items.values()].find((it) => it.buffer === "w");
  assert.deepEqual(w.lines, ["fc1.weight", "parameter · w"]);
  const x = [...b.items.values()].find((it) => it.buffer === "x");
  assert.deepEqual(x.lines, ["x", "graph input"]);
});

test("openingView: the first rows at the widest readable zoom; rows that fit are centred; nothing cut on the left", async () => {
  const { openingView, WHOLE_ZOOM } = await import("../src/graphview.js");
  // 1400 units in a 600 px pane: its width would need zoom 0.4, so it opens at WHOLE_ZOOM (labels >= 8.8 px)
  const geo = { W: 600, H: 400, pad: 16, width: 1400, height: 2000 };
  const k = WHOLE_ZOOM;
  const cutLeft = (boxes, v) =>
    boxes.some((b) => b.y * v.k + v.y < 400 && b.x * v.k + v.x < 0 && (b.x + b.w) * v.k + v.x > 0);
  // a narrow column: centred on it
  const column = [0, 80, 160].map((y) => ({ x: 500, y, w: 200, h: 50 }));
  const v1 = openingView(column, column[0], geo);
  assert.deepEqual(v1, { k, x: 300 - 600 * k, y: 16 });
  // a staircase wider than the pane, the first box at the top right: no box cut on the left, the first box shown,
  // the window nearest the left edge that does so (it starts at the second box)
  const stairs = [0, 1, 2].map((i) => ({ x: 1000 - i * 400, y: i * 70, w: 330, h: 50 }));
  const v2 = openingView(stairs, stairs[0], geo);
  assert.equal(v2.k, k);
  assert.ok(!cutLeft(stairs, v2), JSON.stringify(v2));
  const b0 = stairs[0];
  assert.ok(b0.x * k + v2.x >= 0 && (b0.x + b0.w) * k + v2.x <= 600, JSON.stringify(v2));
  assert.equal(v2.x, 16 - 600 * k);
  // the first box further down: the view starts 40 units above it, and a box across that line moves it up
  const deep = [
    { x: 0, y: 900, w: 200, h: 50 },
    { x: 300, y: 840, w: 200, h: 80 },
  ];
  const v3 = openingView(deep, deep[0], geo);
  assert.equal(v3.y, 16 - (840 - 4) * k);
  // a graph whose width fits at 0.9 (but not its height): its whole width at 0.9, from the top
  const tall = { ...geo, width: (600 - 32) / 0.9 };
  const v4 = openingView(column, column[0], tall);
  assert.ok(Math.abs(v4.k - 0.9) < 1e-9 && Math.abs(v4.x - 16) < 1e-9 && v4.y === 16, JSON.stringify(v4));
  // a graph that fits whole at 0.85: whole, centred; one that fits at 1.5: whole at 1, never zoomed in
  const fits = openingView(column, column[0], { ...geo, width: 568 / 0.85, height: 368 / 0.9 });
  assert.ok(Math.abs(fits.k - 0.85) < 1e-9 && Math.abs(fits.x - 16) < 1e-9 && fits.y > 16, JSON.stringify(fits));
  assert.equal(openingView(column, column[0], { ...geo, width: 300, height: 200 }).k, 1);
});

test("openingView: the job page's forward opens at its left edge, every kernel box whole (was its right half)", async () => {
  const { openingView, WHOLE_ZOOM } = await import("../src/graphview.js");
  // the DDP job's 4/0 forward as Chromium laid it out (nu20 job.html): seven parameter and input stubs in a row on
  // top, three kernels under the middle, five outputs below; 1361 x 365 units in an 842 x 587 px pane. It opened
  // at zoom 1 translated by -530: fc2.weight, fc2.bias and ln.bias out of view at the left, their edges leading off
  // the pane
  const items = [
    [712, 0, 156, 44, 1],
    [890, 0, 156, 44, 1],
    [1068, 0, 131, 44, 1],
    [534, 0, 156, 44, 1],
    [356, 0, 156, 44, 1],
    [0, 0, 156, 44, 1],
    [178, 0, 156, 44, 1],
    [646, 69, 150, 59, 0],
    [579, 153, 284, 59, 0],
    [646, 237, 150, 59, 0],
    [547, 321, 131, 44, 1],
    [1223, 321, 137, 44, 1],
    [859, 321, 160, 44, 1],
    [1041, 321, 160, 44, 1],
    [700, 321, 137, 44, 1],
  ].map(([x, y, w, h, stub]) => ({ x, y, w, h, stub: !!stub }));
  const kernels = items.filter((b) => !b.stub);
  const geo = { W: 842, H: 587, pad: 16, width: 1361, height: 365 };
  const v = openingView(items, kernels[0], geo);
  assert.deepEqual(v, { k: WHOLE_ZOOM, x: 16, y: 16 }); // the graph's left edge at the pane's margin
  for (const b of kernels) assert.ok(b.x * v.k + v.x >= 0 && (b.x + b.w) * v.k + v.x <= 842, JSON.stringify(b));
  // a pane wide enough for its width at 0.8 or more shows all of it side to side, at the top
  const wide = openingView(items, kernels[0], { ...geo, W: 1200, H: 300 });
  assert.ok(wide.k < 1 && wide.k >= WHOLE_ZOOM && Math.abs(wide.x - 16) < 1e-9, JSON.stringify(wide));
});

test("openingView: inputs and outputs give way to the fused-node boxes in a narrow pane", async () => {
  const { openingView } = await import("../src/graphview.js");
  // the MLP training step at 850 px (its layout, measured in Chromium): the parameters' row on top wider than the
  // 501 px pane, the kernels' column under its middle; every kernel box opens whole, the stubs may be cut (before:
  // the view opened on the parameters at the left and cut every kernel box at the right edge)
  const geo = { W: 501, H: 608, pad: 16, width: 1100, height: 450 };
  const stub = (x, y, w) => ({ x, y, w, h: 44, stub: true });
  const stubs = [
    [508, 0, 156],
    [686, 0, 156],
    [864, 0, 131],
    [152, 0, 156],
    [330, 0, 156],
    [0, 0, 131],
    [2, 405, 196],
    [959, 405, 137],
    [800, 405, 137],
    [221, 405, 137],
    [380, 405, 137],
    [538, 405, 240],
  ].map((a) => stub(...a));
  const kernels = [
    [478, 69, 150],
    [475, 153, 156],
    [478, 237, 150],
    [389, 321, 329],
  ].map(([x, y, w]) => ({ x, y, w, h: 59 }));
  const v = openingView([...stubs, ...kernels], kernels[0], geo);
  const at = (x) => x * v.k + v.x;
  for (const b of kernels) assert.ok(at(b.x) >= -0.5 && at(b.x + b.w) <= 501.5, JSON.stringify([b, v]));
  // of the windows that show them, the one nearest the left edge that cuts the fewest stubs on the left (one)
  const cutLeft = stubs.filter((b) => at(b.x) < -0.5 && at(b.x + b.w) > 0);
  assert.equal(cutLeft.length, 1, JSON.stringify(v));
});

test("fusion boxes: a kernel whose runs disagree (KernelProfile.noisy) says so on its box and its module's", () => {
  const noisy = "noisy: the slowest run took 611x the fastest (58.0 µs to 35.4 ms): the machine was busy";
  const c = structuredClone(compile);
  c.kernels.find((k) => k.name === "cpp_fused_relu_0").profile.noisy = noisy;
  const b = buildFusion(indexCompile(c), new Set());
  const box = (n) => b.items.get(b.keyToId.get("node:" + n));
  // its time on a line of its own: "2 fused nodes · one kernel · pointwise · 2.00 µs (20%, noisy)" is wider than a
  // box (the time was cut at its edge: "· 2.00 µ…")
  assert.deepEqual(box("op2").lines.slice(2), ["2 fused nodes · one kernel · pointwise", "2.00 µs (20%, noisy)"]);
  assert.ok(box("op2").title.endsWith(`\n${noisy}`), box("op2").title);
  assert.equal(box("op2").noisy, 1);
  assert.ok(!box("op4").lines.join(" ").includes("noisy") && !box("op4").noisy && !box("op4").title);
  // folded into a module: the module's box counts its noisy kernels
  const m = structuredClone(c);
  for (const n of m.fused_nodes) n.module_stack = ["blk"];
  const g = buildFusion(indexCompile(m), new Set());
  const grp = g.items.get(g.keyToId.get("node:op2"));
  assert.equal(grp.type, "group");
  assert.match(grp.lines.join(" "), /, 1 noisy\)/, grp.lines.join(" | "));
  assert.ok(grp.title.includes(noisy), grp.title);
});

test("kernel table: a kernel's ops are its FX ops each once (Kernel.fx_nodes), not its fused nodes' lists summed", () => {
  const shared = structuredClone(compile);
  shared.fused_nodes.find((n) => n.name === "op3").fx_nodes = ["relu", "sin"]; // op2's relu listed again
  shared.kernels.find((k) => k.name === "cpp_fused_relu_0").fx_nodes = ["relu", "sin"];
  const row = kernelRows(indexCompile(shared)).find((r) => r.kernel === "cpp_fused_relu_0");
  assert.equal(row.ops, 2);
});

test("kernel table: a line that is not the user's says whose it is (Frame.stage)", () => {
  const optim = structuredClone(compile);
  const k = optim.kernels.find((x) => x.name === "cpp_fused_relu_0");
  k.user_lines = [
    { file: "/venv/site-packages/torch/optim/adam.py", line: 526, function: "_single_tensor_adam", stage: "torch" },
  ];
  const row = kernelRows(indexCompile(optim)).find((r) => r.kernel === "cpp_fused_relu_0");
  assert.equal(row.line, "adam.py:526");
  assert.equal(row.whose, "torch's");
  k.user_lines[0].stage = "user";
  assert.equal(kernelRows(indexCompile(optim)).find((r) => r.kernel === "cpp_fused_relu_0").whose, "");
});

test("printGraphs draws first every graph whose layout is awaited, once, and a failed one leaves the rest", async () => {
  const { awaitLayout, printGraphs } = await import("../src/graphview.js");
  const drawn = [];
  let settleA;
  const waitA = () => {
    drawn.push("a");
    settleA();
  };
  settleA = awaitLayout(waitA);
  const settleB = awaitLayout(() => {
    throw new Error("graphviz failed");
  });
  const settleC = awaitLayout(() => drawn.push("c"));
  const err = console.error;
  console.error = () => {};
  try {
    printGraphs(true);
    assert.deepEqual(drawn, ["a", "c"]);
    settleC(); // c's layout came
    printGraphs(true); // a came while printing, c after: neither is drawn again
    assert.deepEqual(drawn, ["a", "c"]);
    printGraphs(false);
    assert.deepEqual(drawn, ["a", "c"], "after the print nothing is laid out");
  } finally {
    settleB();
    console.error = err;
  }
});

test("layoutAwaited: a print while the worker lays the graph out draws it once, here; the worker's answer draws nothing", async () => {
  // the compare page's graph laid itself out apart from printGraphs: printed while pending, it printed "laying out…"
  const { layoutAwaited, printGraphs } = await import("../src/graphview.js");
  let answer;
  const engine = {
    layout: () => new Promise((resolve) => (answer = resolve)),
    layoutNow: (dot) => ({ dot, here: true }),
  };
  const drawn = [];
  const done = layoutAwaited(
    Promise.resolve(engine),
    "digraph{a}",
    () => true,
    (l) => drawn.push(l),
  );
  await null; // the engine's promise settled
  printGraphs(true);
  assert.deepEqual(drawn, [{ dot: "digraph{a}", here: true }]);
  printGraphs(false);
  answer({ dot: "digraph{a}" });
  assert.equal(await done, true);
  assert.equal(drawn.length, 1, "the worker's answer drew it again");
  printGraphs(true); // settled: a later print lays nothing out
  printGraphs(false);
  assert.equal(drawn.length, 1);

  // a graph no longer shown (another compile chosen meanwhile) is not drawn, by a print or by the worker
  const stale = layoutAwaited(
    Promise.resolve(engine),
    "digraph{b}",
    () => false,
    (l) => drawn.push(l),
  );
  await null;
  printGraphs(true);
  printGraphs(false);
  answer({ dot: "digraph{b}" });
  assert.equal(await stale, false);
  assert.equal(drawn.length, 1);

  // a failed layout rejects while its graph is shown, and leaves nothing awaited
  const failing = { layout: () => Promise.reject(new Error("graphviz failed")), layoutNow: () => null };
  await assert.rejects(
    layoutAwaited(
      Promise.resolve(failing),
      "x",
      () => true,
      () => drawn.push("x"),
    ),
    /graphviz failed/,
  );
  printGraphs(true);
  printGraphs(false);
  assert.equal(drawn.length, 1);
});

test("kernel table: a kernel launched from several lines carries them all, the defining line first (Kernel.user_lines)", () => {
  // one kernel called for two BatchNorms (lines 26 and 10): the table showed line 26 alone, the panel both
  const two = structuredClone(compile);
  two.kernels.find((x) => x.name === "cpp_fused_relu_0").user_lines = [
    fr(26, "y = self.bn2(y)"),
    fr(10, "x = self.bn1(x)"),
  ];
  const rows = kernelRows(indexCompile(two));
  const row = rows.find((r) => r.kernel === "cpp_fused_relu_0");
  assert.equal(row.line, "model.py:26");
  assert.deepEqual(row.more, [{ line: "model.py:10", code: "x = self.bn1(x)" }]);
  assert.deepEqual(rows.find((r) => r.kernel === "cpp_fused_cos_1").more, []);
  assert.deepEqual(
    sortRows(rows, "order", "model.py:10").map((r) => r.kernel),
    ["cpp_fused_relu_0"],
    "the filter finds a kernel by any of its lines",
  );
});

test("fusion boxes: a kernel called for two layers shows each launch's time on its own box (FusedNode.time, nu31 D3)", () => {
  // Inductor emits the BatchNorm+ReLU kernel once and calls it for model.bn and for block1.bn1: Python puts one
  // launch's time on each call's node (report/lines.node_times); the box draws it, the first box is not given both
  const bn = (name, module, lead) => ({
    name,
    kind: "pointwise",
    box_kind: "pointwise",
    op_count: 1,
    fx_nodes: [name],
    kernel: "cpp_fused_relu_1",
    module_stack: [module],
    user_lines: [fr(17)],
    ...(lead
      ? { time: { us: 19000, share: 0.25, text: `call ${lead} of 2 of cpp_fused_relu_1: 19.0 ms per run` } }
      : {}),
  });
  const c = {
    id: "0/0 forward",
    fused_nodes: [
      bn("op7", "bn", 1),
      {
        name: "op12",
        kind: "extern",
        box_kind: "extern",
        op_count: 1,
        fx_nodes: ["convolution"],
        kernel: "extern_kernels.convolution",
        user_lines: [fr(17)],
      },
      bn("op13", "block1.bn1", 2),
    ],
    edges: [],
    kernels: [
      {
        name: "cpp_fused_relu_1",
        language: "cpp",
        call_sites: [["op7"], ["op13"]],
        profile: { total_us: 38000, share: 0.5, calls: 2, per_call_us: 19000 },
      },
      { name: "extern_kernels.convolution", language: "extern", call_sites: [["op12"]] },
    ],
  };
  const b = buildFusion(indexCompile(c), new Set(["bn", "block1.bn1"]));
  const box = (n) => b.items.get(b.keyToId.get("node:" + n));
  assert.notEqual(box("op7"), box("op13"));
  for (const [n, call] of [
    ["op7", 1],
    ["op13", 2],
  ]) {
    assert.equal(box(n).total_us, 19000, n);
    assert.equal(box(n).share, 0.25, n);
    assert.ok(box(n).lines.join(" ").includes("19.0 ms (25%)"), box(n).lines.join(" | "));
    assert.ok(box(n).title.endsWith(`call ${call} of 2 of cpp_fused_relu_1: 19.0 ms per run`), box(n).title);
  }
  assert.equal(box("op12").total_us, undefined, "a kernel with no time has none");
});

test("source view: a line's time is its share of the kernels it shares, as Python split it (Compile.time_by_line, nu31 D4)", () => {
  // block2's last kernel ran lines 18, 19, 20 and 35: the pool's line is a quarter of its 15.7 ms, not all of it
  const c = {
    id: "0/0 forward",
    fused_nodes: [
      {
        name: "op36",
        kind: "pointwise",
        fx_nodes: ["add"],
        box_kind: "pointwise",
        op_count: 1,
        kernel: "cpp_fused_mean_5",
        user_lines: [fr(18), fr(35)],
      },
    ],
    kernels: [{ name: "cpp_fused_mean_5", language: "cpp", call_sites: [["op36"]], profile: { total_us: 15700 } }],
    time_by_line: [
      { file: "/home/me/model.py", line: 18, us: 7850, kernels: ["cpp_fused_mean_5"], text: "7.85 ms: a half" },
      { file: "/home/me/model.py", line: 35, us: 7850, kernels: ["cpp_fused_mean_5"], text: "7.85 ms: the other" },
    ],
  };
  const r = { compiles: [c] };
  const s = lineSummary(sourceIndex(r).get("/home/me/model.py:35"), r, "0/0 forward");
  assert.equal(s.kernels.length, 1);
  assert.equal(s.us, 7850);
  assert.equal(s.text, "7.85 ms: the other");
});
