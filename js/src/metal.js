// Kernel panel sections "down to the metal" (issue 24): the reproducer button, the kernel's launch
// arguments, and Triton's IR stages as tabs with the compiled kernel's resources. Python wrote every fact
// (kernel.reproducer, kernel.launch, kernel.ir); this module only draws them, as text.

import { renderCode } from "./code.js";
import { fmtUs } from "./data.js";
import { breakable, h } from "./dom.js";
import { sizesText } from "./text.js";

const STAGES = [
  ["ttir", "TTIR"],
  ["ttgir", "TTGIR"],
  ["llir", "LLIR"],
  ["ptx", "PTX"],
  ["sass", "SASS"],
];

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // no clipboard API (an exported page opened from file://, an old browser): a hidden textarea
    const ta = h("textarea", { style: "position:fixed;left:-9999px" });
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}

/** The "Copy reproducer" button (data-role="copy-reproducer"), or null when the report holds no script. */
export function reproducerButton(kernel, later = (fn, ms) => setTimeout(fn, ms)) {
  const script = kernel?.reproducer;
  if (!script) return null;
  const btn = h(
    "button",
    {
      class: "il-btn il-copy",
      type: "button",
      "data-role": "copy-reproducer",
      title: "copy a standalone Python script that runs this kernel alone on its recorded argument shapes and times it",
    },
    "Copy reproducer",
  );
  btn.addEventListener("click", async () => {
    btn.textContent = (await copyText(script)) ? "Copied: save as kernel.py, run python kernel.py" : "Copy failed";
    later(() => (btn.textContent = "Copy reproducer"), 2500);
  });
  return btn;
}

/** The launch call as text, wrapped to the panel and drawn with it (lens.css `.il-launch-call`). */
function launchCall(call) {
  return h("pre", { class: "il-code il-mono il-launch-call", "data-role": "launch-call" }, call);
}

/** The launch's arguments (data-role="launch-args"): name, parameter, shape, stride, dtype, or a scalar's value. */
export function launchSection(kernel, later) {
  const launch = kernel?.launch;
  if (!launch) return null;
  // an extern call's arguments have no kernel parameter: no empty column (it cut the dtype at a narrow panel's edge)
  const params = (launch.args || []).some((a) => a.param);
  // the column of a tensor's shape holds a scalar's value: its head says which it holds here
  const tensors = (launch.args || []).some((a) => a.shape);
  const scalars = (launch.args || []).some((a) => !a.shape);
  const first = tensors && scalars ? "shape / value" : tensors ? "shape" : "value";
  const rows = (launch.args || []).map((a) =>
    h(
      "tr",
      {},
      // what it holds where Python knows it (LaunchArg.holds: fc1.weight), torch's name beside it (primals_4)
      h(
        "td",
        { class: "il-mono", title: a.name },
        a.keyword && a.keyword !== a.name ? `${a.keyword}=` : "",
        a.holds || a.name,
        a.holds ? h("span", { class: "il-muted" }, ` ${a.name}`) : null,
      ),
      params ? h("td", { class: "il-mono il-muted" }, breakable(a.param || "")) : null,
      a.shape
        ? [
            h("td", { class: "il-mono" }, sizesText(a.shape, a.hint)),
            h("td", { class: "il-mono" }, sizesText(a.stride) + (a.offset ? ` +${a.offset}` : "")),
            h("td", { class: "il-mono il-nowrap" }, a.dtype || "?"),
          ]
        : // a scalar's value as Python wrote it (LaunchArg.value_text: exact; JSON's doubles round an int past 2**53)
          h(
            "td",
            { class: "il-mono", colspan: 3 },
            a.value_text ?? String(a.value) + (a.hint != null ? ` = ${a.hint}` : ""),
          ),
    ),
  );
  // grid, warps, stages and block as Python says them (KernelLaunch.config_text), where the launch configuration
  // section above does not show them already (it does wherever the autotuner's config was read)
  const facts = kernel.metadata?.launch ? "" : launch.config_text || "";
  return h(
    "section",
    { class: "il-section", "data-role": "launch-args" },
    h("h3", {}, "Launch", " ", reproducerButton(kernel, later)),
    // why the heading has no "Copy reproducer" (Kernel.reproducer_note, Python's words)
    !kernel.reproducer && kernel.reproducer_note
      ? h("p", { class: "il-muted", "data-role": "no-reproducer" }, `No reproducer: ${kernel.reproducer_note}`)
      : null,
    facts ? h("p", { class: "il-mono", "data-role": "launch-config" }, facts) : null,
    rows.length
      ? h(
          "div",
          { class: "il-scroll-x" },
          h(
            "table",
            { class: "il-table il-launch-table" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                // "param", the kernel's parameter: a short head, so that a 310 px panel holds every column
                h("th", {}, "argument"),
                params ? h("th", { title: "the kernel's parameter" }, "param") : null,
                h("th", { "data-role": "launch-first-head" }, first),
                ["stride", "dtype"].map((t) => h("th", {}, t)),
              ),
            ),
            h("tbody", {}, rows),
          ),
        )
      : null,
    launch.call ? launchCall(launch.call) : null,
  );
}

/** The compiled kernel's resources as one line ("32 registers · 0 B shared · 0 spills"), or "". */
export function irResources(ir) {
  if (!ir) return "";
  const parts = [];
  if (ir.registers != null) parts.push(`${ir.registers} registers`);
  if (ir.shared_bytes != null) parts.push(`${ir.shared_bytes} B shared`);
  if (ir.spills != null) parts.push(`${ir.spills} spills`);
  return parts.join(" · ");
}

/** The IR stages present on a kernel: [{key, label, text}] in compile order. */
export function irStages(kernel) {
  const ir = kernel?.ir;
  if (!ir) return [];
  return STAGES.filter(([key]) => typeof ir[key] === "string" && ir[key]).map(([key, label]) => ({
    key,
    label,
    text: ir[key],
  }));
}

/** Each IR line with the kernel-source line Triton recorded for it (data-src, drawn after the line by CSS). */
export function markSourceLines(pre, lines) {
  if (!Array.isArray(lines)) return 0;
  let marked = 0;
  pre.querySelectorAll(".il-line").forEach((el, i) => {
    const src = lines[i];
    if (src == null) return;
    el.dataset.src = String(src);
    el.title = `kernel source line ${src}`;
    marked++;
  });
  return marked;
}

/** Tabs over the kernel source and its IR stages (data-role="ir-tabs"); null without IR. */
export function irSection(kernel, later) {
  const stages = irStages(kernel);
  if (!stages.length) return null;
  const tabs = [{ key: "source", label: "Triton", text: kernel.source, language: kernel.language }, ...stages];
  const pre = h("pre", { class: "il-code il-ir", "data-role": "ir-text" });
  const buttons = tabs.map((t) =>
    h("button", { class: "il-btn il-tab", type: "button", "data-stage": t.key, "aria-pressed": "false" }, t.label),
  );
  const show = (i) => {
    buttons.forEach((b, j) => {
      b.setAttribute("aria-pressed", String(i === j));
      b.classList.toggle("il-active", i === j);
    });
    renderCode(pre, tabs[i].text, tabs[i].language || "text", { later });
    markSourceLines(pre, kernel.ir.source_lines?.[tabs[i].key]);
  };
  buttons.forEach((b, i) => b.addEventListener("click", () => show(i)));
  show(Math.min(1, tabs.length - 1));
  const res = irResources(kernel.ir);
  return h(
    "section",
    { class: "il-section", "data-role": "ir-tabs" },
    h(
      "h3",
      {},
      "Compiled kernel",
      res ? h("span", { class: "il-muted", "data-role": "ir-resources" }, ` ${res}`) : null,
    ),
    h("div", { class: "il-tabs", role: "tablist" }, buttons),
    pre,
  );
}

/** A compile's CUDA graphs (mode="reduce-overhead", data-role="cudagraphs"): used or skipped and why, each
 * (re-)recording with its reason and time; null outside reduce-overhead. */
export function cudagraphsSection(compile) {
  const g = compile?.cudagraphs;
  if (!g) return null;
  const status = g.used
    ? "used"
    : g.skip_note || g.skip_reason
      ? `skipped: ${g.skip_note || g.skip_reason}`
      : "not used (torch ran this graph without them)";
  const recs = g.recordings || [];
  return h(
    "div",
    { class: "il-reason-box" + (g.used ? "" : " il-recompile"), "data-role": "cudagraphs" },
    h("strong", {}, "CUDA graphs: "),
    h("span", { "data-role": "cudagraphs-status" }, status),
    recs.length
      ? h(
          "ul",
          { "data-role": "cudagraph-recordings" },
          recs.map((r) => h("li", {}, `${r.reason}${r.time_us != null ? ` (${fmtUs(r.time_us)})` : ""}`)),
        )
      : null,
  );
}
