// Pure functions for the source view, the kernel table, shapes, reasons, compile groups and diagnostics
// (split from data.js). No DOM: `npm test` runs them under node.
import { basename, indexCompile, profileOf } from "./data.js";

/** "FILE:LINE": the key of a source line (FILE exactly as Frame.file, `cell [N]` for notebook cells). */
export const lineKey = (file, line) => `${file}:${line}`;

/**
 * Every user source line that produced ops, with the kernels they went to: Map("FILE:LINE" -> {file, line,
 * code, refs: [{compileId, fused, kernel, kind, how, modules}]}). A fused node belongs to each of its
 * `user_lines` (how "ran") and, when it has none (its ops ran inside torch, an nn.Sequential's), to each of its
 * `built_lines` (how "built": the line built the modules `modules`, it did not run them). Both decided in
 * Python (report/finish.py, report/built.py): the same lines the panel and the roofline's table name.
 */
export function sourceIndex(report) {
  const lines = new Map();
  const add = (c, n, fr, how, modules) => {
    const key = lineKey(fr.file, fr.line);
    let e = lines.get(key);
    if (!e) {
      e = { file: fr.file, line: fr.line, code: String(fr.code || ""), refs: [] };
      lines.set(key, e);
    }
    e.refs.push({ compileId: c.id, fused: n.name, kernel: n.kernel || "", kind: n.kind, how, modules });
  };
  for (const c of report.compiles || []) {
    const idx = indexCompile(c);
    for (const n of idx.boxes) {
      for (const fr of n.user_lines || []) add(c, n, fr, "ran", []);
      for (const b of n.built_lines || []) add(c, n, b, "built", b.modules || []);
    }
  }
  return lines;
}

/**
 * The files of the source view: report.source_files where the report has them (schema 2: the text of
 * every file in a user stack), else, for older reports, the recorded lines of each file alone.
 * [{file, lines: [{line, code}], note, partial}] in the order files first appear.
 */
export function sourceFiles(report, index) {
  const out = [];
  const have = new Set();
  for (const sf of report.source_files || []) {
    const text = String(sf.text || "");
    const lines = text ? text.split("\n").map((code, i) => ({ line: i + 1, code })) : [];
    if (lines.length && lines[lines.length - 1].code === "") lines.pop();
    out.push({ file: sf.file, lines, note: sf.note || "", partial: !text });
    have.add(sf.file);
  }
  const byFile = new Map();
  for (const e of index.values()) {
    if (have.has(e.file)) continue;
    if (!byFile.has(e.file)) byFile.set(e.file, []);
    byFile.get(e.file).push({ line: e.line, code: e.code });
  }
  for (const [file, lines] of byFile) {
    lines.sort((a, b) => a.line - b.line);
    out.push({ file, lines, note: "only the lines recorded in stacks (this report has no file text)", partial: true });
  }
  return out;
}

/** The distinct kernels of some refs (one compile's) and their kinds (most first). */
function kernelsOf(refs) {
  const kernels = new Map();
  for (const r of refs)
    if (r.kernel && !kernels.has(r.compileId + "\0" + r.kernel)) kernels.set(r.compileId + "\0" + r.kernel, r);
  const kinds = new Map();
  for (const r of kernels.values()) kinds.set(r.kind, (kinds.get(r.kind) || 0) + 1);
  return { kernels: [...kernels.values()], kinds: [...kinds.entries()].sort((a, b) => b[1] - a[1]) };
}

/**
 * A line's measured time in compile `compileId` (every compile where ""), as Python split it (Compile.time_by_line,
 * and Report.time_by_line for every compile: report/lines.mark_times, the rule of the roofline's time by line: a
 * kernel that also ran other lines is split among them): {us, text}, `text` Python's words of it (LineTime.text);
 * us null where no row has it. `built`: the row of the line as the builder of modules (LineTime.built).
 */
function lineTime(report, entry, compileId, built) {
  const rows = compileId ? (report.compiles || []).find((c) => c.id === compileId)?.time_by_line : report.time_by_line;
  const row = (rows || []).find((r) => r.file === entry.file && r.line === entry.line && !!r.built === built);
  return row ? { us: row.us, text: row.text || "" } : { us: null, text: "" };
}

/**
 * What a source line's gutter says for compile `compileId`: the kernels its ops ran in there (refs "ran"), their
 * kinds and measured time (this line's share: lineTime); `built`: the same for the kernels of the modules the line
 * built whose ops ran inside torch (refs "built", with the module paths); and how many other compiles the line also
 * has kernels in: {refs, kernels, kinds: [[kind, n]], us, text, built: {refs, kernels, kinds, us, text, modules},
 * otherCompiles}.
 */
export function lineSummary(entry, report, compileId = "") {
  const refs = entry.refs.filter((r) => !compileId || r.compileId === compileId);
  const ran = refs.filter((r) => r.how !== "built");
  const built = refs.filter((r) => r.how === "built");
  const others = new Set(
    entry.refs.filter((r) => r.kernel && compileId && r.compileId !== compileId).map((r) => r.compileId),
  );
  return {
    refs: ran,
    ...kernelsOf(ran),
    ...lineTime(report, entry, compileId, false),
    built: {
      refs: built,
      ...kernelsOf(built),
      ...lineTime(report, entry, compileId, true),
      modules: [...new Set(built.flatMap((r) => r.modules))],
    },
    otherCompiles: others.size,
  };
}

/**
 * The kernel table of one compile: one row per kernel, in execution order:
 * {kernel, kind, language, ops, fused: [names], line: "file:line" | "", lineKey, how, more, built, us, share, noisy, order}.
 * `line` is the kernel's user line (Kernel.user_lines' first, the line that defines it), `more` its other user lines
 * ({line, code}, in the report's order), else, for a kernel whose ops ran inside torch, the line that
 * built its modules (Kernel.built_lines; `how` "built", `built` that BuiltLine): both decided in Python.
 */
export function kernelRows(idx) {
  const rows = new Map();
  for (const n of idx.boxes) {
    if (!n.kernel) continue;
    let r = rows.get(n.kernel);
    if (!r) {
      const k = idx.kernels.get(n.kernel) || {};
      const p = profileOf(k);
      // the kernel's user lines (Kernel.user_lines, Python: the line that defines it first, rules.lead_line)
      const ranLines = k.user_lines || n.user_lines || [];
      const ran = ranLines[0];
      const built = ran ? null : (k.built_lines || [])[0] || null; // else where its modules were built
      const fr = ran || built;
      r = {
        kernel: n.kernel,
        label: n.label || n.kernel,
        kind: k.kind || n.kind, // Kernel.kind (Python: a reduction if any of its nodes reduces); older reports: its first node's
        language: k.language || "",
        ops: 0,
        fused: [],
        line: fr ? `${basename(fr.file)}:${fr.line}` : "",
        lineKey: fr ? lineKey(fr.file, fr.line) : "",
        code: fr ? String(fr.code || "").trim() : "",
        how: ran ? "ran" : built ? "built" : "",
        // its other user lines, in Python's order: one kernel launched for two BatchNorms ran at both lines
        more: ranLines.slice(1).map((x) => ({
          line: `${basename(x.file)}:${x.line}`,
          code: String(x.code || "").trim(),
        })),
        // a line that is not the user's (Frame.stage, Python): a compiled optimizer's ops run in torch's adam.py
        whose: ran && ran.stage && ran.stage !== "user" ? (ran.stage === "library" ? "a library's" : "torch's") : "",
        built,
        // no line ran it nor built it: why, in Python's words (Kernel.no_line_text; the whole reason, no_line_reason)
        noLine: ran || built ? "" : k.no_line_text || "",
        noLineWhy: ran || built ? "" : k.no_line_reason || "",
        us: p ? p.total_us : null,
        share: p ? p.share : null,
        noisy: p ? p.noisy || "" : "", // KernelProfile.noisy (Python): its runs disagree, the time is not the kernel's
        // the compiled kernel's resources (Kernel.ir, with ir=True on a GPU), as the compiler reported them
        registers: k.ir ? (k.ir.registers ?? null) : null,
        shared: k.ir ? (k.ir.shared_bytes ?? null) : null,
        spills: k.ir ? (k.ir.spills ?? null) : null,
        order: rows.size,
      };
      rows.set(n.kernel, r);
    }
    r.fused.push(n.name);
    r.ops += (n.fx_nodes || []).length;
  }
  // a kernel's ops are its FX ops, each once (Kernel.fx_nodes, Python): its fused nodes' lists may share ops (a
  // node's ops repeated in the next one's), whose sum counted them twice
  for (const r of rows.values()) {
    const k = idx.kernels.get(r.kernel);
    if (k && (k.fx_nodes || []).length) r.ops = k.fx_nodes.length;
  }
  return [...rows.values()];
}

/** Sort and filter kernel rows: `sort` is a column key, "-key" descending; `filter` matches any text column. */
export function sortRows(rows, sort, filter) {
  const q = String(filter || "")
    .trim()
    .toLowerCase();
  const out = q
    ? rows.filter((r) =>
        [r.kernel, r.label, r.kind, r.language, r.line, r.code, ...r.more.flatMap((m) => [m.line, m.code])].some((x) =>
          String(x || "")
            .toLowerCase()
            .includes(q),
        ),
      )
    : rows.slice();
  const desc = String(sort || "").startsWith("-");
  const key = String(sort || "order").replace(/^-/, "");
  const val = (r) => (key === "fused" ? r.fused.length : r[key]);
  out.sort((a, b) => {
    const x = val(a),
      y = val(b);
    if (x === y) return a.order - b.order;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return desc ? -c : c;
  });
  return out;
}

/**
 * A shape for people: {text: "[s0, 768]", hint: "[8, 768]" | ""}; symbolic sizes are strings in the
 * report, `shape_hint` their sizes at capture time (shown as a tooltip).
 */
export function fmtShape(gn) {
  if (!gn || !Array.isArray(gn.shape)) return { text: "", hint: "" };
  // a node that yields several tensors has a list of shapes (GraphNode.shape): "([], [4, 8])"
  const one = (s) => (Array.isArray(s) ? `[${s.join(", ")}]` : String(s));
  const fmt = (s) => (s.some(Array.isArray) ? `(${s.map(one).join(", ")})` : one(s));
  const text = fmt(gn.shape);
  const hint = Array.isArray(gn.shape_hint) && gn.shape_hint.length ? fmt(gn.shape_hint) : "";
  return { text, hint: hint && hint !== text ? hint : "" };
}

/** Compiles grouped by identical graphs (Compile.same_graph_as, decided in Python): Map(leader id -> [ids]). */
export function sameGraphGroups(compiles) {
  const groups = new Map();
  for (const c of compiles || []) {
    const lead = c.same_graph_as && compiles.some((x) => x.id === c.same_graph_as) ? c.same_graph_as : c.id;
    if (!groups.has(lead)) groups.set(lead, []);
    groups.get(lead).push(c.id);
  }
  return groups;
}

/** Report diagnostics as {code, message, detail} (Python gives every diagnostic a code). */
export function diagnosticsOf(report) {
  return (report.diagnostics || []).map((d) => ({
    code: String(d.code || ""),
    message: String(d.message || ""),
    detail: String(d.detail || ""),
  }));
}
