// Panel sections about one kernel's facts: measured time, launch configuration (Triton), the
// extern call, autotuning choices; and the report's "top kernels by time" table.
// Everything from the report goes in as text.

import { autotuneSummary, fmtShare, fmtUs, metadataFacts, profileOf, topKernels } from "./data.js";
import { h } from "./dom.js";

const GROUP_TITLES = { launch: "Launch", compile: "Compile", call: "Call", other: "Other metadata" };

/** Launch / compile / call facts of `kernel.metadata` as a two-column list (data-role="launch"). */
export function metadataSection(kernel) {
  const facts = metadataFacts(kernel);
  if (!facts.length) return null;
  const groups = new Map();
  for (const f of facts) groups.set(f.group, [...(groups.get(f.group) || []), f]);
  const body = [];
  for (const [g, rows] of groups) {
    body.push(h("div", { class: "il-facts-group" }, GROUP_TITLES[g] || g));
    body.push(
      h(
        "dl",
        { class: "il-facts", "data-group": g },
        rows.map((f) => [
          h("dt", { title: f.hint || null, "data-key": f.key }, f.label),
          h("dd", { class: "il-mono", title: f.value.length > 60 ? f.value : null }, f.value),
        ]),
      ),
    );
  }
  const title = kernel.language === "extern" ? "Extern call" : "Launch configuration";
  return h("section", { class: "il-section" }, h("h3", {}, title), h("div", { "data-role": "launch" }, body));
}

function fmtMs(ms) {
  return ms == null ? "not measured" : fmtUs(ms * 1000);
}

/**
 * The autotuning table (data-role="autotune"): every choice with its time, fastest first; the fastest
 * and the chosen one marked; the verdict, what the chosen template fused (`autotune.fusion_note`) and where the times
 * came from (`autotune.heading`, `autotune.timed_note`: torch's autotune cache), decided in Python.
 */
export function autotuneSection(kernel, shown = 8) {
  const a = autotuneSummary(kernel);
  if (!a) return null;
  const { rows, fastest, chosen } = a;
  // the config column shows only the parameters that differ between choices (the full text is the tooltip)
  const cfgs = new Map(rows.map((r) => [r, r.config])); // each choice's config: Python's rules.choice_config
  const values = new Map();
  for (const c of cfgs.values())
    for (const [key, v] of Object.entries(c)) values.set(key, (values.get(key) || new Set()).add(v));
  const withCfg = [...cfgs.values()].filter((c) => Object.keys(c).length).length;
  const varies = (key) => values.get(key).size > 1 || [...cfgs.values()].filter((c) => key in c).length < withCfg;
  const short = (r) => {
    const c = cfgs.get(r);
    const keys = Object.keys(c).filter(varies);
    return (keys.length ? keys : Object.keys(c)).map((key) => `${key}=${c[key]}`).join(" ");
  };
  const mark = (r) => [
    r.fastest ? h("span", { class: "il-badge il-badge-fastest" }, "fastest") : null,
    r.chosen ? h("span", { class: "il-badge il-badge-chosen" }, "chosen") : null,
  ];
  const row = (r, i) =>
    h(
      "tr",
      {
        class: (r.chosen ? "il-chosen " : "") + (r.fastest ? "il-fastest" : ""),
        "data-choice": r.name,
        "data-fastest": r.fastest ? "1" : null,
        "data-chosen": r.chosen ? "1" : null,
      },
      h("td", { class: "il-num il-muted" }, String(i + 1)),
      // the choice, its badges, and under them its config (or what it is): four columns fit a narrow panel
      h(
        "td",
        { class: "il-choice" },
        h("span", { class: "il-mono il-choice-name" }, r.name),
        " ",
        mark(r),
        h(
          "div",
          { class: "il-desc il-mono", title: r.description || null },
          r.description ? short(r) : r.what || "", // what the choice is: Python's rules.choice_what
        ),
      ),
      h("td", { class: "il-num il-mono" }, fmtMs(r.time_ms)),
      h("td", { class: "il-num il-muted" }, r.ratio == null ? "" : r.fastest ? "" : `×${r.ratio.toFixed(2)}`),
    );
  const head = h(
    "thead",
    {},
    h(
      "tr",
      {},
      h("th", {}, "#"),
      h("th", {}, "choice · config"),
      h("th", { class: "il-num" }, "time"),
      h("th", { class: "il-num" }, "vs fastest"),
    ),
  );
  const first = rows.slice(0, shown);
  // the chosen row is always visible, even when it ranks below the first `shown`
  const chosenIdx = chosen ? rows.indexOf(chosen) : -1;
  const table = h(
    "table",
    { class: "il-table il-autotune-table" },
    head,
    h(
      "tbody",
      {},
      first.map(row),
      chosenIdx >= shown
        ? [h("tr", { class: "il-gap" }, h("td", { colspan: "4", class: "il-muted" }, "…")), row(chosen, chosenIdx)]
        : null,
    ),
  );
  const rest =
    rows.length > shown
      ? h(
          "details",
          { class: "il-more" },
          h("summary", {}, `all ${rows.length} choices`),
          h("table", { class: "il-table il-autotune-table" }, head.cloneNode(true), h("tbody", {}, rows.map(row))),
        )
      : null;

  let verdict;
  const fusion = a.fusionNote ? [" ", a.fusionNote] : [];
  if (a.verdict === "fastest") {
    verdict = h(
      "p",
      { class: "il-verdict", "data-verdict": "fastest" },
      `Inductor used the fastest choice, ${chosen.name} (${fmtMs(chosen.time_ms)}).`,
      ...fusion,
    );
  } else if (a.verdict === "not-fastest") {
    const slower = chosen.ratio != null ? ` (×${chosen.ratio.toFixed(2)})` : "";
    verdict = h(
      "p",
      { class: "il-verdict il-verdict-note", "data-verdict": "not-fastest" },
      h("strong", {}, "Not the fastest alone. "),
      `Benchmarked by itself, ${fastest.name} was fastest (${fmtMs(fastest.time_ms)}); Inductor chose ${chosen.name} (${fmtMs(chosen.time_ms)}${slower}).`,
      ...fusion,
    );
  } else {
    verdict = h(
      "p",
      { class: "il-verdict il-muted", "data-verdict": "unknown" },
      `Inductor emitted ${a.emitted}; which benchmarked choice it came from is not recorded. The fastest alone was ${fastest.name} (${fmtMs(fastest.time_ms)}).`,
    );
  }
  // times this compile did not measure (torch's autotune cache held them): said before the table
  const timed = a.timedNote ? h("p", { class: "il-muted", "data-role": "autotune-timed" }, a.timedNote) : null;
  return h(
    "section",
    { class: "il-section" },
    h("h3", {}, "Autotuning", " ", h("span", { class: "il-muted" }, a.heading)),
    h("div", { "data-role": "autotune" }, verdict, timed, table, rest),
  );
}

/** The mark beside a noisy kernel's time (data-role="noisy-mark"): Python's `KernelProfile.noisy` says its runs
 * disagree (the machine was busy), the mark's title says by how much; null for a kernel whose runs agree. */
export function noisyMark(noisy) {
  return noisy ? [" ", h("span", { class: "il-noisy-mark", "data-role": "noisy-mark", title: noisy }, "noisy")] : null;
}

/** Measured time of the kernel (data-role="profile"), with its rank among the report's kernels. */
export function profileSection(kernel, rank, total) {
  const p = profileOf(kernel);
  if (!p) return null;
  const bar = h(
    "span",
    { class: "il-sharebar" },
    h("i", { style: `width:${Math.max(1, Math.min(100, (p.share || 0) * 100)).toFixed(1)}%` }),
  );
  return h(
    "section",
    { class: "il-section" },
    h(
      "h3",
      {},
      "Measured time",
      " ",
      h(
        "span",
        { class: "il-muted" },
        `${p.device || "device"} · ${p.timing_text || `mean of ${p.iterations || "?"} runs`}`,
      ),
    ),
    p.noisy ? h("p", { class: "il-reason il-small", "data-role": "profile-noisy" }, p.noisy) : null,
    h(
      "div",
      { "data-role": "profile", class: "il-profile" },
      h(
        "div",
        { class: "il-profile-main" },
        h("span", { class: "il-big" }, fmtUs(p.total_us)),
        noisyMark(p.noisy),
        " per run · ",
        h("strong", {}, fmtShare(p.share)),
        " of the measured device time",
        bar,
      ),
      h(
        "div",
        { class: "il-muted il-small" },
        `${p.calls ?? "?"} launch${p.calls === 1 ? "" : "es"} per run, ${fmtUs(p.per_call_us)} each`,
        rank ? ` · #${rank} of ${total} kernels by time` : "",
      ),
    ),
  );
}

/**
 * The longest kernels of the report (data-role="top-kernels"): rank, kernel (click selects it),
 * kind, time per run and share. `onPick(compileId, fusedName)`.
 */
export function topKernelsSection(report, onPick, limit = 12) {
  const all = topKernels(report, 0);
  if (!all.length) return null;
  const multi = (report.compiles || []).length > 1;
  const rows = all.slice(0, limit);
  const covered = rows.reduce((s, r) => s + (r.share || 0), 0);
  const max = rows[0].share || 1;
  return h(
    "section",
    { class: "il-section" },
    h("h3", {}, "Top kernels by measured time"),
    // a profile of one run ranks single timings: said above the ranking (StepProfile.few_runs, Python's words)
    report.profile && report.profile.few_runs
      ? h("p", { class: "il-few-runs", "data-role": "few-runs" }, report.profile.few_runs)
      : null,
    h(
      "div",
      { "data-role": "top-kernels" },
      h(
        "table",
        { class: "il-table il-top" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", {}, "#"),
            h("th", {}, "kernel"),
            h("th", { class: "il-num" }, "time"),
            h("th", { class: "il-num" }, "share"),
            h("th", {}, ""),
          ),
        ),
        h(
          "tbody",
          {},
          rows.map((r, i) =>
            h(
              "tr",
              { "data-kernel": r.kernel, "data-compile": r.compileId },
              h("td", { class: "il-num il-muted" }, String(i + 1)),
              h(
                "td",
                { class: "il-top-name" },
                h(
                  "button",
                  {
                    class: "il-link il-mono",
                    type: "button",
                    title: `${r.kernel}${multi ? " (" + r.compileId + ")" : ""}`,
                    onclick: () => onPick(r.compileId, r.fused),
                  },
                  r.kernel,
                ),
                h(
                  "div",
                  { class: "il-top-sub" },
                  h("i", { class: `il-dot kind-${r.kind}` }),
                  r.kind,
                  r.calls != null && r.calls !== 1 ? ` · ${r.calls} launches` : "",
                  multi ? ` · ${r.compileId}` : "",
                ),
              ),
              h("td", { class: "il-num il-mono" }, fmtUs(r.total_us), noisyMark(r.noisy)),
              h("td", { class: "il-num" }, fmtShare(r.share)),
              h(
                "td",
                { class: "il-barcell" },
                h(
                  "span",
                  { class: "il-sharebar" },
                  h("i", { style: `width:${Math.max(2, (r.share / max) * 100).toFixed(1)}%` }),
                ),
              ),
            ),
          ),
        ),
      ),
      h(
        "p",
        { class: "il-muted il-small" },
        `${rows.length < all.length ? `These ${rows.length} of ${all.length} kernels take` : `These ${all.length} kernels take`} ${fmtShare(covered)} of the measured device time; `,
        `times are per run of the compiled function (${all[0].statistic || "mean"} of ${all[0].iterations || "?"} runs on ${all[0].device || "the device"}${all.some((r) => r.noisy) ? `; ${all.filter((r) => r.noisy).length} noisy: their runs disagree, the machine was busy` : ""}).`,
      ),
    ),
  );
}
