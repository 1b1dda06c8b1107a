// What the front end shows of a report, as JSON on stdout, for tests/views/test_js_python_agree.py:
// node tests/views/show_report.mjs REPORT.json. It runs the views' own data functions (js/src/data.js,
// viewdata.js) on the report exactly as the page receives it (the compact written form, expanded by intern.js).
import { readFileSync } from "node:fs";
import { fusionEdges, indexCompile, kernelRun } from "../../js/src/data.js";
import { expandReport } from "../../js/src/intern.js";
import { kernelRows, lineSummary, sourceIndex } from "../../js/src/viewdata.js";

const report = expandReport(JSON.parse(readFileSync(process.argv[2], "utf8")));
const out = { compiles: {}, lines: {} };
for (const c of report.compiles || []) {
  const idx = indexCompile(c);
  out.compiles[c.id] = {
    // the kernel table: each kernel's user line, or the line that built its modules ("built")
    kernels: Object.fromEntries(kernelRows(idx).map((r) => [r.kernel, { line: r.lineKey, how: r.how }])),
    // the panel's header and the fusion graph's boxes: each box's user line, ops and kernel run
    boxes: Object.fromEntries(
      idx.boxes.map((n) => {
        const fr = (n.user_lines || [])[0];
        return [n.name, { line: fr ? `${fr.file}:${fr.line}` : "", ops: n.ops, run: kernelRun(idx, n.name) }];
      }),
    ),
    // the fusion graph's edges, as the drawing keys them, with their buffers (its tooltips)
    edges: fusionEdges(idx).edges.map((e) => `${e.from}>${e.to} ${e.buffers.join(",")}`),
    // the functions of the "Why" stack and of each box's stacks as the panel names them (Frame.function_label)
    trigger: ((c.trigger || {}).user_stack || []).map((f) => f.function_label),
    stacks: Object.fromEntries(
      idx.boxes.map((n) => [n.name, (n.user_stack || []).map((s) => s.map((f) => f.function_label))]),
    ),
  };
}
// the source view's gutter: per line and compile, the kernels counted (those its ops ran in, those of the modules
// it built, "built here") and the other compiles named
const index = sourceIndex(report);
for (const [key, entry] of index) {
  out.lines[key] = {};
  for (const cid of new Set(entry.refs.map((r) => r.compileId))) {
    const s = lineSummary(entry, report, cid);
    out.lines[key][cid] = {
      kernels: s.kernels.map((r) => r.kernel).sort(),
      built: s.built.kernels.map((r) => r.kernel).sort(),
      otherCompiles: s.otherCompiles,
    };
  }
}
process.stdout.write(JSON.stringify(out));
