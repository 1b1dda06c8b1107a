// The lens's one store: every piece of state of one lens lives here (nothing at module level, so
// two lenses on a page never share state). set(patch) notifies subscribers with the changed keys.
import { hasProfile, indexCompile, pathOf, resolveSelection } from "./data.js";
import { fittingExpansion, MAX_OPENING } from "./fit.js";

/** Never more than this many boxes on the opening graph; fewer where fewer fill the view (fit.js). */
export const COLLAPSE_LIMIT = MAX_OPENING;
/** How fusion boxes are coloured: by kernel kind, by measured time share (needs a profile), or by the
 * fraction of the hardware's peak each kernel reaches (needs a profile with costs and device peaks). */
export const COLOUR_MODES = ["kind", "time", "peak", "memory"];

/**
 * A minimal observable store. `normalize(next, changedKeys)` may return a further patch that keeps the
 * state consistent (applied before anyone is notified, so subscribers see one change with every key).
 */
export function createStore(state, normalize = null) {
  const subs = new Set();
  return {
    get: () => state,
    set(patch) {
      const keys = Object.keys(patch).filter((k) => state[k] !== patch[k]);
      if (!keys.length) return;
      const prev = state;
      state = { ...state, ...patch };
      if (normalize) {
        const extra = normalize(state, new Set(keys)) || {};
        state = { ...state, ...extra };
      }
      const changed = new Set(Object.keys(state).filter((k) => state[k] !== prev[k]));
      if (!changed.size) return;
      for (const fn of [...subs]) fn(state, changed);
    },
    /** Install the normalizer (the lens does once it has its model). */
    normalizeWith(fn) {
      normalize = fn;
    },
    subscribe(fn) {
      subs.add(fn);
      return () => subs.delete(fn);
    },
  };
}

/**
 * The initial state of a lens over `report`; `initial` may carry {compileId, view, selected, colourBy}
 * (unknown values fall back to defaults), `viewIds` are the views available for this report (colouring by
 * fraction of peak needs the roofline's data: exactly when the roofline view is available).
 */
export function initialState(report, initial, viewIds) {
  const compiles = report.compiles || [];
  const init = initial || {};
  const first = compiles.length ? compiles[0].id : "";
  return {
    compileId: compiles.some((c) => c.id === init.compileId) ? init.compileId : first,
    view: viewIds.includes(init.view) ? init.view : "fusion",
    selected: "",
    fxGraph: "",
    fxFocus: "",
    query: "",
    colourBy:
      init.colourBy === "memory" && viewIds.includes("memory")
        ? "memory"
        : !hasProfile(report)
          ? "kind"
          : init.colourBy === "kind"
            ? "kind"
            : init.colourBy === "peak" && viewIds.includes("roofline")
              ? "peak"
              : "time",
    showPasses: false, // timeline: Inductor's many small pass.* phases
    timelineAll: false, // timeline: the whole capture instead of the selected compile
    sourceLine: "", // "FILE:LINE" clicked in the source view
    highlighted: [], // fused nodes of the current compile highlighted from elsewhere
    kernelSort: "order", // kernel table: column key, "-key" for descending
    kernelFilter: "",
    panelSize: 0, // px of the panel (0: the default share)
    expandRev: 0, // bumped when a compile's expanded modules change
  };
}

/**
 * Per-lens derived data and mutable expansion sets, owned by the store's lens:
 * idxOf(id) (cached indexes), expandedFor(id) / fxExpandedFor(id) (Sets; a compile opens with the
 * modules expanded that fill its pane, fit.js), and expansion actions that bump `expandRev` so views redraw.
 */
export function createModel(report, store) {
  const compiles = report.compiles || [];
  const indexes = new Map();
  const expanded = new Map();
  const fxExpanded = new Map();
  let paneHeight = () => 0; // the fusion view says how tall its pane is (fit.js); 0: not known yet
  const idxOf = (id) => {
    if (!indexes.has(id)) {
      const c = compiles.find((x) => x.id === id);
      if (c) indexes.set(id, indexCompile(c));
    }
    return indexes.get(id);
  };
  const expandedFor = (id) => {
    if (!expanded.has(id)) {
      const ix = idxOf(id);
      expanded.set(id, fittingExpansion(ix ? ix.boxes : [], paneHeight(), ix && ix.compile));
    }
    return expanded.get(id);
  };
  const fxExpandedFor = (id) => {
    if (!fxExpanded.has(id)) fxExpanded.set(id, new Set());
    return fxExpanded.get(id);
  };
  const bump = () => store.set({ expandRev: store.get().expandRev + 1 });
  return {
    compiles,
    idxOf,
    /** Drop what was derived from compiles `ids` (a large report's stubs, now filled in place: index.js). */
    forget(ids) {
      for (const id of ids) {
        indexes.delete(id);
        expanded.delete(id);
        fxExpanded.delete(id);
      }
    },
    /** How tall the graph pane is, asked once per compile when its opening expansion is chosen. */
    measureWith(fn) {
      paneHeight = fn;
    },
    expandedFor,
    fxExpandedFor,
    /** Expand (or collapse) module `m` of the current compile. */
    setExpanded(m, on) {
      const exp = expandedFor(store.get().compileId);
      if (on === exp.has(m)) return;
      if (on) exp.add(m);
      else exp.delete(m);
      bump();
    },
    /** Expand every module (true) or collapse to the top-level modules (false). */
    expandAll(on) {
      const id = store.get().compileId;
      const ix = idxOf(id);
      if (!ix) return;
      const exp = expandedFor(id);
      exp.clear();
      if (on) for (const n of ix.boxes) for (const m of pathOf(n)) exp.add(m);
      bump();
    },
    /** Expand the modules that hide fused node `name` of compile `cid`; true when any grew (bump expandRev). */
    expandFor(cid, name) {
      const ix = idxOf(cid);
      const e = ix && ix.byName.get(name);
      if (!e) return false;
      const exp = expandedFor(cid);
      let grew = false;
      for (const m of pathOf(e.node))
        if (!exp.has(m)) {
          exp.add(m);
          grew = true;
        }
      return grew;
    },
    /** Resolve a fused node / kernel / FX name, in `compileId` or (when absent) any compile. */
    resolve(name, compileId) {
      const cid = compileId || store.get().compileId;
      const ix = idxOf(cid);
      const here = ix ? resolveSelection(ix, name) : "";
      if (here || !name || compileId) return here ? [cid, here] : null;
      for (const c of compiles) {
        const r = resolveSelection(idxOf(c.id), name);
        if (r) return [c.id, r];
      }
      return null;
    },
  };
}

/**
 * One consistent state: a compile switch drops a selection and highlights from the previous compile;
 * selecting a node hidden in a collapsed module expands it (bumps expandRev). For store.normalizeWith.
 */
export function normalizer(model) {
  return (s, keys) => {
    const patch = {};
    if (keys.has("compileId")) {
      const ix = model.idxOf(s.compileId);
      if (s.selected && !(ix && ix.byName.has(s.selected))) patch.selected = "";
      if (!keys.has("highlighted") && s.highlighted.length) {
        patch.highlighted = [];
        patch.sourceLine = "";
      }
    }
    const sel = "selected" in patch ? patch.selected : s.selected;
    if ((keys.has("selected") || keys.has("compileId")) && sel && model.expandFor(s.compileId, sel))
      patch.expandRev = s.expandRev + 1;
    return patch;
  };
}
