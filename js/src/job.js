// A distributed job: a rank selector and the divergence summary above the lens of one rank.
// Python decides (which ranks differ, and how: inductor_lens/analysis/job.py); this module only draws.
// createJobView(el, {job, engine}) returns {store, selectRank(rank), destroy(), rank(), lens()}.

import { createLens } from "./app.js";
import { h } from "./dom.js";
import { createStore } from "./store.js";

const ASPECTS = {
  missing: "missing ranks",
  compiles: "compiles",
  recompiles: "recompiles",
  graphs: "graphs",
  kernels: "kernels",
  guards: "guards",
  graph_breaks: "graph breaks",
  collectives: "collective order",
};

/** The rank shown first: the lowest rank that has a report. */
export function firstRank(job) {
  const r = (job.ranks || []).find((x) => x.report);
  return r ? r.rank : null;
}

/** One line per rank for the selector: "rank 1 · 3 compiles" or "rank 2 · missing". */
export function rankLabel(entry, divergent) {
  if (!entry.report) return `rank ${entry.rank} · missing`;
  const n = (entry.report.compiles || []).length;
  return `rank ${entry.rank} · ${n} compile${n === 1 ? "" : "s"}${divergent.has(entry.rank) ? " · differs" : ""}`;
}

/** The ranks that differ from the rest in any divergence (Python decides which: `ranks`). */
export function divergentRanks(job) {
  const out = new Set();
  for (const d of job.divergence || []) for (const r of d.ranks || []) out.add(r);
  return out;
}

/** The rank selector (data-role="rank-select"): one option per rank, missing ranks disabled. */
function rankSelect(ranks, divergent) {
  return h(
    "select",
    { class: "il-rank", "data-role": "rank-select", "aria-label": "rank" },
    ranks.map((r) =>
      h(
        "option",
        { value: String(r.rank), disabled: !r.report, "data-missing": r.report ? null : "true" },
        rankLabel(r, divergent),
      ),
    ),
  );
}

/** The divergence summary (data-role="divergence"): how the ranks differ, as Python found, or that they agree. */
function divergenceSummary(job) {
  const div = job.divergence || [];
  const ranks = job.ranks || [];
  return h(
    "div",
    { class: "il-divergence", "data-role": "divergence" },
    h(
      "strong",
      {},
      div.length
        ? `The ranks differ (${div.length}):`
        : `All ${ranks.length} ranks agree: same compiles, graphs, kernels, guards and graph breaks.`,
    ),
    div.length
      ? h(
          "ul",
          {},
          div.map((d) =>
            h(
              "li",
              { "data-aspect": d.aspect },
              h("span", { class: "il-muted" }, `${ASPECTS[d.aspect] || d.aspect}: `),
              d.message,
            ),
          ),
        )
      : null,
    // what every rank's times count from (Job.clock, Python's words): the ranks' times shifted to one clock, or why not
    job.clock ? h("p", { class: "il-muted", "data-role": "job-clock" }, job.clock) : null,
    (job.notes || []).length
      ? h(
          "ul",
          { class: "il-muted" },
          job.notes.map((n) => h("li", {}, n)),
        )
      : null,
  );
}

/**
 * The job mode: a rank selector and the divergence summary above the lens of the selected rank. Its one
 * store holds {rank}; the lens of that rank has its own (one store per lens, never shared).
 */
export function createJobView(el, opts) {
  const job = opts.job;
  const ranks = job.ranks || [];
  const store = createStore({ rank: null });
  const sel = rankSelect(ranks, divergentRanks(job));
  const summary = divergenceSummary(job);
  const missingNote = h("div", { class: "il-message il-warn", "data-role": "rank-missing", hidden: true });
  const host = h("div", { class: "il-rank-lens" });
  const bar = h(
    "div",
    { class: "il-jobbar", "data-role": "job" },
    h("label", {}, "rank ", sel),
    h("span", { class: "il-muted" }, ` of ${job.world_size}`),
  );
  el.append(bar, summary, missingNote, host);
  let lens = null;
  const showMissing = (text) => {
    missingNote.hidden = !text;
    missingNote.textContent = text || "";
  };
  function selectRank(rank) {
    const entry = ranks.find((r) => r.rank === Number(rank));
    if (!entry || store.get().rank === entry.rank) return lens;
    if (lens) {
      lens.destroy();
      lens = null;
    }
    sel.value = String(entry.rank);
    el.dataset.rank = String(entry.rank);
    if (!entry.report) showMissing(`rank ${entry.rank} has no report: ${entry.missing || "missing"}`);
    else {
      showMissing("");
      lens = createLens(host, {
        report: entry.report,
        initial: opts.initial || {},
        engine: opts.engine,
        embedded: opts.embedded,
      });
      if (opts.onLens) opts.onLens(lens);
    }
    store.set({ rank: entry.rank });
    return lens;
  }
  const onChange = () => selectRank(sel.value);
  sel.addEventListener("change", onChange);
  const start = firstRank(job);
  if (start !== null) selectRank(start);
  else showMissing("no rank wrote a report");
  return {
    store,
    selectRank,
    rank: () => store.get().rank,
    lens: () => lens,
    destroy() {
      sel.removeEventListener("change", onChange);
      if (lens) lens.destroy();
      bar.remove();
      summary.remove();
      missingNote.remove();
      host.remove();
    },
  };
}
