// Pure functions over a compare payload ({kind: "diff", diff, a, b}; see inductor_lens/analysis/diff.py).
// Python decides what is paired and what changed; these only order and lay out rows. No DOM here.

export const STATUSES = ["same", "changed", "merged", "split", "only_a", "only_b"];
// a merged (split) launch's row follows the row of the launch it merged into (split off): Python puts it there
const STATUS_ORDER = { changed: 0, merged: 0, split: 0, only_b: 1, only_a: 2, same: 3 };

/** A label for a compile pair: "0/0 forward ↔ 0/0 forward". */
export function pairLabel(p) {
  return `${p.a || "—"} ↔ ${p.b || "—"}`;
}

/**
 * The kernel rows of one compile pair, sorted by time delta (largest |Δ| first) when the reports were
 * profiled, else changed (with merged and split) / added / removed / same in execution order. Each row keeps
 * its index.
 */
export function sortedRows(pair) {
  const rows = (pair.kernels || []).map((k, i) => ({ ...k, index: i }));
  const timed = rows.some((r) => r.time_delta_us !== null && r.time_delta_us !== undefined);
  rows.sort((x, y) => {
    if (timed) {
      const dx = x.time_delta_us == null ? -1 : Math.abs(x.time_delta_us);
      const dy = y.time_delta_us == null ? -1 : Math.abs(y.time_delta_us);
      if (dx !== dy) return dy - dx;
    }
    const so = STATUS_ORDER[x.status] - STATUS_ORDER[y.status];
    return so || x.index - y.index;
  });
  return rows;
}

/** The kernel a row is named by: B's, or A's when the launch has none in B of its own (removed, merged). */
export function rowKernel(row) {
  return row.b || row.a || "";
}

/** A row's key, unique within its pair (two launches may share a kernel name). */
export function rowKey(row) {
  return `${row.index}`;
}

/** Lines as Python's str.splitlines() gives them (the line diff's indexes are over these). */
export function lines(src) {
  if (src == null || src === "") return [];
  const out = String(src).split(/\r\n|\r|\n/);
  if (out[out.length - 1] === "") out.pop();
  return out;
}

/**
 * Side-by-side lines from two sources and difflib opcodes [[tag, i1, i2, j1, j2]]: a list of
 * {a, b, tag} where a/b are {n, text} or null (a gap). Tags: equal, replace, delete, insert.
 * Without opcodes (equal sources, or one side missing) lines are paired one to one.
 */
export function sideBySide(srcA, srcB, opcodes) {
  const la = lines(srcA),
    lb = lines(srcB);
  const out = [];
  const line = (arr, i) => (i < arr.length ? { n: i + 1, text: arr[i] } : null);
  if (!opcodes || !opcodes.length) {
    const tag = srcA == null ? "insert" : srcB == null ? "delete" : "equal";
    for (let i = 0; i < Math.max(la.length, lb.length); i++) out.push({ a: line(la, i), b: line(lb, i), tag });
    return out;
  }
  for (const [tag, i1, i2, j1, j2] of opcodes) {
    const n = Math.max(i2 - i1, j2 - j1);
    for (let k = 0; k < n; k++) {
      const a = i1 + k < i2 ? line(la, i1 + k) : null;
      const b = j1 + k < j2 ? line(lb, j1 + k) : null;
      out.push({ a, b, tag });
    }
  }
  return out;
}

/** The other side's kernel a merged (split) row names in its empty cell: B's it merged into (A's it split off). */
export function partnerKernel(row, side) {
  return side === "b" ? row.merged_into || "" : row.split_from || "";
}

/** What a row says in its "what changed" cell: KernelDiff.what_changed, decided in Python (analysis/diff.py). */
export function changeText(row) {
  return String(row.what_changed || "");
}

/** What a row says under its "what changed" cell: B's autotune timing of the library kernel A measured
 * (KernelDiff.autotune_vs_a.note, Python's), or "". */
export function autotuneNote(row) {
  return String((row.autotune_vs_a || {}).note || "");
}

/** The same with B's choice and its measured time, for the selected row's head (autotune_vs_a.detail), or "". */
export function autotuneDetail(row) {
  return String((row.autotune_vs_a || {}).detail || "");
}

/** Fused-node name -> diff class for B's graph: added, changed (removed and merged ones have no box of their own
 * in B). Each row is a kernel launch; every fused node it computes (fused_b, a list) gets its mark; a launch split
 * off an A launch is changed. */
export function graphMarks(pair) {
  const marks = new Map();
  for (const k of pair.kernels || []) {
    const cls = k.status === "only_b" ? "added" : k.status === "changed" || k.status === "split" ? "changed" : null;
    if (cls) for (const f of k.fused_b || []) marks.set(f, cls);
  }
  return marks;
}

/** A row's times as Python wrote them (KernelDiff.time_a_text, time_b_text, time_delta_text: the Δ in the unit of the
 * larger of A and B, "−33.3 ms"), "" where unknown. */
export function timeTexts(row) {
  return {
    a: String(row.time_a_text || ""),
    b: String(row.time_b_text || ""),
    delta: String(row.time_delta_text || ""),
  };
}
