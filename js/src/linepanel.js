// Lines of the user's code in the panel that are not a stack: the lines that BUILT the modules of a box whose ops
// ran inside torch (FusedNode.built_lines, decided in report/built.py), and the panel after a source-line click
// (the kernels its ops ran in, and those of the modules it built).

import { basename, plural } from "./data.js";
import { h } from "./dom.js";

/** "module 0 (Linear)", "modules blocks.0.fc (Linear), blocks.1.fc (Linear)": what a built line built. */
export function builtModules(b) {
  const mods = b.modules || [];
  const types = b.module_types || [];
  const each = mods.map((m, i) => (types[i] ? `${m} (${types[i]})` : m));
  return `${mods.length === 1 ? "module" : "modules"} ${each.join(", ")}`;
}

/**
 * The mark of a line that built modules and ran none of their ops, where a table or list names lines (the kernel
 * table, the roofline's time by line, the memory view's roll-ups): Python says which rows are such lines.
 */
export function builtTag(title) {
  return h("span", { class: "il-built-tag", title }, " built here");
}

/** What a row of a roll-up by line says of a line that built modules (LineTime/BytesBy/RecomputedBy.built). */
export const BUILT_ROW_TITLE =
  "built here, not ran here: this line built the modules of these ops, which ran inside torch " +
  "(nn.Sequential's forward calling torch's layers), not on a line of yours";

// A node whose ops ran inside torch, of modules your code built (FusedNode.built_lines, report/built.py): the
// lines that built them, said to be that (built here), never that they ran the ops.
export function builtLines(n) {
  const built = n.built_lines || [];
  return h(
    "div",
    { "data-role": "built-lines" },
    h(
      "p",
      { class: "il-note" },
      `Built here, not ran here: no line of yours ran these ops (they ran inside torch), and ${
        built.length === 1 ? "this line" : "these lines"
      } of yours built the ${built.length === 1 && (built[0].modules || []).length === 1 ? "module" : "modules"} they come from.`,
    ),
    h(
      "ol",
      { class: "il-frames" },
      built.map((b) =>
        h(
          "li",
          {
            class: "il-frame il-stage-user il-built",
            "data-built-line": `${b.file}:${b.line}`,
            title: `${b.file}:${b.line}: where your code built ${builtModules(b)}`,
          },
          h(
            "div",
            { class: "il-frame-loc" },
            h("span", { class: "il-file" }, `${basename(b.file)}:${b.line}`),
            b.function ? h("span", { class: "il-fn" }, ` in ${b.function}`) : null,
            h("span", { class: "il-muted" }, " · built here"),
          ),
          b.code ? h("code", { class: "il-frame-code" }, String(b.code).trim()) : null,
          h("div", { class: "il-muted" }, `built ${builtModules(b)}`),
        ),
      ),
    ),
  );
}

/** A line's refs by kernel (a fused node without one by itself): kernel -> {ref, label, fusedAll, mods}. */
function lineKernels(refs, idx) {
  const byKernel = new Map();
  for (const r of refs) {
    const k = r.kernel || r.fused;
    const node = (idx.byName.get(r.fused) || { node: {} }).node;
    if (!byKernel.has(k)) byKernel.set(k, { ...r, label: node.label, fusedAll: [], mods: [], ranIn: [] });
    const e = byKernel.get(k);
    e.fusedAll.push(r.fused);
    for (const m of r.modules || []) if (!e.mods.includes(m)) e.mods.push(m);
    // the module its op ran in (FusedNode.module_stack): twelve layers' attention calls read alike without it
    const inner = (node.module_stack || []).at(-1);
    if (inner && !e.ranIn.includes(inner)) e.ranIn.push(inner);
  }
  return byKernel;
}

function lineKernelList(byKernel, actions, how) {
  return h(
    "ul",
    { class: "il-why", "data-how": how },
    [...byKernel.values()].map((r) =>
      h(
        "li",
        { "data-kernel": r.kernel },
        h("i", { class: `il-dot kind-${r.kind}` }),
        h(
          "button",
          { class: "il-link il-mono", type: "button", onclick: () => actions.select(r.fused) },
          r.label || r.kernel || r.fused,
        ),
        h(
          "span",
          { class: "il-muted" },
          ` ${r.kind}${r.fusedAll.length > 1 ? ` · ${plural(r.fusedAll.length, "fused node")}` : ""}` +
            (how === "built" && r.mods.length
              ? ` · ${r.mods.join(", ")}`
              : how !== "built" && r.ranIn.length && r.ranIn.length <= 3
                ? ` · in ${r.ranIn.join(", ")}`
                : ""),
        ),
      ),
    ),
  );
}

/** The panel after a source-line click: the line, and its kernels in this compile (click one to select it). */
export function linePanel(key, entry, idx, actions) {
  if (!entry)
    return h(
      "div",
      { class: "il-summary", "data-role": "line-kernels" },
      h("h3", {}, key),
      h("p", { class: "il-muted" }, "No kernel came from this line."),
    );
  const here = entry.refs.filter((r) => r.compileId === idx.compile.id);
  const elsewhere = [...new Set(entry.refs.filter((r) => r.compileId !== idx.compile.id).map((r) => r.compileId))];
  const ran = lineKernels(
    here.filter((r) => r.how !== "built"),
    idx,
  );
  const built = lineKernels(
    here.filter((r) => r.how === "built"),
    idx,
  );
  const modules = [...new Set(here.filter((r) => r.how === "built").flatMap((r) => r.modules || []))];
  return h(
    "div",
    { class: "il-summary", "data-role": "line-kernels" },
    h("h3", {}, `${basename(entry.file)}:${entry.line}`),
    h("pre", { class: "il-code il-line-code" }, String(entry.code || "").trim()),
    ran.size || !built.size
      ? [
          h("p", {}, `${plural(ran.size, "kernel")} in ${idx.compile.id} (highlighted in the fusion graph):`),
          lineKernelList(ran, actions, "ran"),
        ]
      : null,
    built.size
      ? h(
          "div",
          { "data-role": "line-built" },
          h(
            "p",
            {},
            `Built here, not ran here: this line built ${modules.length === 1 ? "the module" : "the modules"} `,
            h("span", { class: "il-mono" }, modules.join(", ")),
            `, whose ops ran inside torch (no line of yours ran them): ${plural(built.size, "kernel")} in ${idx.compile.id} (highlighted in the fusion graph):`,
          ),
          lineKernelList(built, actions, "built"),
        )
      : null,
    elsewhere.length
      ? h("p", { class: "il-muted" }, `This line also produced kernels in ${elsewhere.join(", ")}.`)
      : null,
  );
}
