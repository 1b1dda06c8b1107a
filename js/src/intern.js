// The report's compact written form (inductor_lens/report/intern.py): each distinct frame, stack and guard
// line is stored once in `report.interned` (a frame's `function_label` in `function_labels`, where it is not its
// `qualname` or `function`; its `file_label` in `file_labels`, where it is not its `file`); a stack is {"@s": i}, a long text (guards, output code,
// kernel source, graph code) {"@g": [i, ...]}: its lines.
// expandReport gives back the expanded form the views read (a report without `interned` is returned as is).

/** The expanded report: stacks and guard texts put back where they were referred to. */
export function expandReport(report) {
  const t = report && report.interned;
  if (!t) return report;
  const files = t.files || [],
    lines = t.lines || [];
  const labels = t.function_labels || {}; // Frame.function_label where it is not its qualname or function's name
  const fileLabels = t.file_labels || {}; // Frame.file_label where it is not its file (no table in older reports)
  const frames = (t.frames || []).map(([f, line, fn, code, stage, qualname = "", note = ""]) => ({
    file: files[f],
    line,
    function: fn,
    code,
    stage,
    is_user: stage === "user",
    function_label: labels[fn] ?? (qualname || fn),
    qualname,
    note,
    file_label: fileLabels[files[f]] ?? (t.file_labels ? files[f] : ""),
  }));
  const stacks = (t.stacks || []).map((ids) => ids.map((i) => frames[i]));
  const walk = (v) => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === "@s") return stacks[v["@s"]].slice();
    if (keys.length === 1 && keys[0] === "@g") return v["@g"].map((i) => lines[i]).join("\n");
    const out = {};
    for (const k of keys) out[k] = walk(v[k]);
    return out;
  };
  const out = {};
  for (const [k, v] of Object.entries(report)) if (k !== "interned") out[k] = walk(v);
  return out;
}
