// Kernel facts over the real GPU fixtures as the front end receives them (schema 2, upgraded by Python:
// js/test/fixtures/, written by tests/fixtures/make_js_fixtures.py): launch metadata, autotune choices, time.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import test from "node:test";
import {
  autotuneSummary,
  fmtShare,
  fmtSizeHints,
  fmtUs,
  hasProfile,
  indexCompile,
  metadataFacts,
  nodeTimes,
  topKernels,
} from "../src/data.js";
import { buildFusion } from "../src/dot.js";

const fixture = (name) => JSON.parse(readFileSync(new URL(`./fixtures/${name}.v2.json`, import.meta.url), "utf8"));
const tuned = fixture("gpu_max_autotune");
const training = fixture("gpu_training");
const kernel = (report, pred) => report.compiles.flatMap((c) => c.kernels).find(pred);

test("launch facts come from kernel.metadata, labelled", () => {
  const k = kernel(training, (k) => k.metadata.launch && Object.keys(k.metadata.launch.block).length === 2);
  const facts = Object.fromEntries(metadataFacts(k).map((f) => [f.label, f.value]));
  assert.equal(facts.num_warps, String(k.metadata.launch.num_warps));
  for (const [b, v] of Object.entries(k.metadata.launch.block)) assert.equal(facts[b], String(v));
  assert.equal(
    facts["size hints"],
    Object.entries(k.metadata.size_hints)
      .map(([a, v]) => `${a}=${v}`)
      .join(", "),
  );
  assert.equal(typeof k.metadata.size_hints, "object", "a mapping since schema 2");
  assert.match(facts["shared memory"], /KiB|B$/);
  assert.match(facts["compile time"], /ms|s$/);
});

test("extern kernels show their callee", () => {
  const k = kernel(training, (k) => k.language === "extern");
  const facts = metadataFacts(k);
  assert.deepEqual(facts.find((f) => f.key === "callee").value, k.metadata.callee);
});

test("autotune: each tuned kernel's chosen config is found among the choices", () => {
  const ks = tuned.compiles.flatMap((c) => c.kernels).filter((k) => k.metadata.autotune);
  assert.ok(ks.length);
  for (const k of ks) {
    const a = autotuneSummary(k);
    assert.ok(a.chosen, k.name);
    assert.equal(a.chosen.name, k.metadata.autotune.chosen, "the report's choice (decided in Python)");
    assert.equal(a.fastest.name, k.metadata.autotune.fastest);
    assert.equal(a.verdict, a.chosen === a.fastest ? "fastest" : "not-fastest");
    if (k.language === "triton") {
      const cfg = a.chosen.config; // Python's rules.choice_config of the description
      assert.equal(cfg.num_warps, String(k.metadata.launch.num_warps));
      assert.match(k.source, new RegExp(`BLOCK_M : tl.constexpr = ${cfg.BLOCK_M}\\b`));
    }
    assert.ok(
      a.rows.every((r, i) => i === 0 || r.time_ms === null || a.rows[i - 1].time_ms <= r.time_ms),
      "sorted by time",
    );
  }
});

test("autotune: a template slower alone than the library mm is 'not-fastest'", () => {
  const k = structuredClone(kernel(tuned, (k) => k.metadata.heuristic === "template"));
  const best = Math.min(...k.metadata.autotune.choices.filter((c) => c.time_ms != null).map((c) => c.time_ms));
  const lib = k.metadata.autotune.choices.find((c) => c.name === "mm");
  if (lib) lib.time_ms = best * 0.8;
  else k.metadata.autotune.choices.unshift({ name: "mm", description: "", time_ms: best * 0.8 });
  k.metadata.autotune.fastest = "mm";
  assert.notEqual(k.metadata.autotune.chosen, "mm");
  const a = autotuneSummary(k);
  assert.equal(a.verdict, "not-fastest");
  assert.equal(a.fastest.name, "mm");
  assert.notEqual(a.chosen.name, "mm");
});

test("autotune: an extern kernel's choice is its callee", () => {
  const k = {
    name: "extern_kernels.addmm[buf2]",
    language: "extern",
    metadata: {
      callee: "extern_kernels.addmm",
      autotune: {
        op: "addmm",
        fastest: "addmm",
        chosen: "addmm",
        emitted: "extern_kernels.addmm[buf2]",
        choices: [
          { name: "triton_mm_1", description: "BLOCK_M=32", time_ms: 0.05 },
          { name: "addmm", description: "", time_ms: 0.04 },
        ],
      },
    },
  };
  const a = autotuneSummary(k);
  assert.equal(a.verdict, "fastest");
  assert.equal(a.chosen.name, "addmm");
});

test("autotune: without the report's choice the verdict is unknown (no guessing from the source in JS)", () => {
  const k = structuredClone(kernel(tuned, (k) => k.language === "triton" && k.metadata.autotune));
  k.metadata.autotune.chosen = null;
  const a = autotuneSummary(k);
  assert.equal(a.chosen, null);
  assert.equal(a.verdict, "unknown");
  assert.equal(a.emitted, k.name);
});

test("no autotune metadata: no summary", () => {
  assert.equal(autotuneSummary({ name: "k", metadata: {} }), null);
});

test("top kernels are sorted by total time across compiles", () => {
  const rows = topKernels(training, 0);
  const all = training.compiles.flatMap((c) => c.kernels).filter((k) => k.profile);
  assert.equal(rows.length, all.length);
  for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].total_us >= rows[i].total_us);
  assert.equal(new Set(rows.map((r) => r.compileId)).size, 2);
  assert.ok(hasProfile(training));
  assert.ok(!hasProfile({ compiles: [{ kernels: [{ name: "k", profile: null }] }], profiled: false })); // Report.profiled
});

test("fusion boxes carry the measured time in their label and their share", () => {
  const idx = indexCompile(tuned.compiles[0]);
  const built = buildFusion(idx, new Set(idx.fused.flatMap((n) => n.module_stack || [])));
  const times = nodeTimes(idx);
  for (const it of built.items.values()) {
    if (it.type !== "node") continue;
    const t = times.get(it.name);
    assert.equal(it.share, t.share);
    assert.ok(it.lines[2].includes(fmtShare(t.share)), it.lines[2]);
  }
});

test("formatting: small kernel times keep their digits", () => {
  assert.equal(fmtUs(0.682), "0.68 µs");
  assert.equal(fmtUs(41.354), "41.4 µs");
  assert.equal(fmtUs(1518912), "1.52 s");
  assert.equal(fmtShare(0.7278), "73%");
  assert.equal(fmtShare(0.0043), "0.43%");
  assert.equal(fmtSizeHints({ x: 256, r0_: 128 }), "x=256, r0_=128");
});

test("a template's launch facts have its tile sizes (nu21 a)", () => {
  // Python read them from the template's config_args: the constants of its source
  const k = kernel(tuned, (k) => k.name === "triton_tem_fused_addmm_relu_t_0");
  const facts = Object.fromEntries(metadataFacts(k).map((f) => [f.label, f.value]));
  assert.deepEqual(
    ["BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"].map((b) => facts[b]),
    ["64", "32", "128", "8"],
  );
  assert.match(k.source, /BLOCK_M : tl\.constexpr = 64/);
});

test("the grid row says Python's evaluated grid, not torch's expression (nu21 b)", () => {
  const k = {
    metadata: { launch: { num_warps: 8, num_stages: 1, grid: ["-((xnumel) // -(256))", "-((ynumel) // -(16))", 1] } },
    launch: { grid: [2, 384, 1], grid_text: "2 × 384 × 1 = 768 CTAs" },
  };
  const grid = metadataFacts(k).filter((f) => f.key === "grid");
  assert.deepEqual(
    grid.map((f) => f.value),
    ["2 × 384 × 1 = 768 CTAs"],
  );
  // a report with no launch read keeps the expression it holds
  delete k.launch;
  assert.equal(metadataFacts(k).find((f) => f.key === "grid").value, "-((xnumel) // -(256)), -((ynumel) // -(16)), 1");
});
