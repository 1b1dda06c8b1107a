// The one front-end shell. Python says which mode a payload opens in (the widget's `_mode` trait, the
// page's `data-mode`, and `mode` inside the compare and job payloads); the shell never guesses from the
// payload's shape. Each mode mounts one store over its part of the payload and draws with the views of
// the one registry (views/registry.js): the lens draws them over a report, the job draws a lens per rank,
// the compare mode draws the compare view (a fusion graph of B with A's differences).
//
// A mode is {mount(el, payload, opts) -> {store, api, destroy(), traits, apply(trait, value)}}:
//   store    the mode's one store (store.js createStore): every piece of its state
//   api      what the page exposes for scripting and tests (window.inductorLens / inductorJob)
//   traits   {trait: store key} that the widget keeps in step with its traits, both ways
//   apply    how a trait's new value (set from Python) changes the store

import { createLens } from "./app.js";
import { createCompare } from "./compare.js";
import { createJobView } from "./job.js";

const lensMode = {
  mount(el, report, opts) {
    const lens = createLens(el, { ...opts, report });
    return {
      store: lens.store,
      api: lens,
      traits: { selected: "selected", view: "view", compile: "compileId" },
      apply(trait, value) {
        if (trait === "selected") lens.select(value);
        else if (trait === "view") lens.store.set({ view: value });
        else if (trait === "compile") lens.store.set({ compileId: value, selected: "" });
      },
      destroy: () => lens.destroy(),
    };
  },
};

const compareMode = {
  mount(el, payload, opts) {
    const cmp = createCompare(el, { ...opts, payload });
    return {
      store: cmp.store,
      api: cmp,
      traits: { compile_pair: "pair", selected: "selected" },
      apply(trait, value) {
        if (trait === "compile_pair") cmp.selectPair(value);
        else if (trait === "selected") cmp.selectKernel(value);
      },
      destroy: () => cmp.destroy(),
    };
  },
};

const jobMode = {
  mount(el, payload, opts) {
    const view = createJobView(el, { ...opts, job: payload.job });
    return { store: view.store, api: view, traits: {}, apply() {}, destroy: () => view.destroy() };
  },
};

/** The modes, by the name Python gives (inductor_lens/views/frontend.py MODES). */
export const MODES = { lens: lensMode, compare: compareMode, job: jobMode };

/** Which mode `payload` opens in: the one Python named (`given`, else the payload's own `mode`); a report
 * (no mode named) opens in the lens. An unknown name is an error that names the valid ones. */
export function modeOf(given, payload) {
  const mode = given || (payload && payload.mode) || "lens";
  if (!(mode in MODES)) throw new Error(`unknown mode '${mode}' (must be one of ${Object.keys(MODES).join(", ")})`);
  return mode;
}

/**
 * Mount `payload` in `el` in mode `mode` ("lens", "compare" or "job").
 * @param {HTMLElement} el
 * @param {string} mode
 * @param {object} payload  a report (lens), {mode: "compare", diff, a, b} or {mode: "job", job}
 * @param {{initial?: object, engine: () => Promise<object>, exportHtml?: () => Promise<object>}} opts
 */
export function createShell(el, mode, payload, opts) {
  const m = MODES[modeOf(mode, payload)].mount(el, payload, opts);
  return { mode: modeOf(mode, payload), ...m };
}
