// The lens: one store (store.js), the registered views (views/), a toolbar, search, keys and a side panel.
// createLens(el, options) works anywhere (widget, standalone page); it returns {store, root, select,
// selectIn, destroy}. destroy() removes every listener, timer, observer and element it made.

import { groupOf, hasProfile, plural } from "./data.js";
import { h } from "./dom.js";
import { layoutAwaited } from "./graphview.js";
import { installKeys } from "./keys.js";
import { linePanel } from "./linepanel.js";
import { noCompilePanel, renderPanel } from "./panel.js";
import { createSearch } from "./search.js";
import { installSplit } from "./split.js";
import { COLLAPSE_LIMIT, COLOUR_MODES, createModel, createStore, initialState, normalizer } from "./store.js";
import { createToolbar } from "./toolbar.js";
import { diagnosticsOf, sourceIndex } from "./viewdata.js";
import { registeredViews } from "./views/index.js";

export { COLLAPSE_LIMIT, COLOUR_MODES, createStore };

function mark(name) {
  try {
    performance.mark(name);
  } catch (_e) {
    /* no performance API */
  }
}

/** The diagnostics banner (data-role="diagnostics"): what went wrong while capturing, by code. */
function diagnosticsBanner(report) {
  const diags = diagnosticsOf(report);
  if (!diags.length) return null;
  return h(
    "details",
    { class: "il-diagnostics", "data-role": "diagnostics" },
    h(
      "summary",
      {},
      h("strong", {}, plural(diags.length, "diagnostic")),
      ": ",
      diags[0].message,
      diags.length > 1 ? ` (and ${diags.length - 1} more)` : "",
    ),
    h(
      "ul",
      {},
      diags.map((d) =>
        h(
          "li",
          { "data-code": d.code },
          h("span", { class: "il-diag-code il-mono" }, d.code),
          " ",
          h("span", { class: "il-pre" }, d.message),
          d.detail
            ? h(
                "details",
                { class: "il-more" },
                h("summary", {}, "detail"),
                h("pre", { class: "il-diag-detail" }, d.detail),
              )
            : null,
        ),
      ),
    ),
  );
}

/**
 * What the views share: the store and model, `on` (listeners removed by abort()), `later` (timers cleared by
 * abort()), layout helpers, the source index; the lens adds `root`, `actions`, `toolbar`, `exportHtml`.
 */
/** How long the reader goes without input on the lens before the other compiles are laid out ahead (ms). */
const PREFETCH_SETTLE_MS = 2000;
/** How long a widget's first layout waits for its kernel's layout engine before it says what it waits for. */
const ENGINE_WAIT_MS = 5000;

function makeContext(report, opts, store, model) {
  const ac = new AbortController();
  const timers = new Set();
  let alive = true;
  let srcIndex = null,
    linesByNode = null;
  const ctx = {
    report,
    store,
    model,
    embedded: !!opts.embedded, // in a scrolling document (the notebook widget): the wheel scrolls it until a click
    profiled: store.get().colourBy === "time" || hasProfile(report),
    on: (target, type, fn, o = {}) => target.addEventListener(type, fn, { signal: ac.signal, ...o }),
    later(fn, ms) {
      const id = setTimeout(() => {
        timers.delete(id);
        if (alive) fn();
      }, ms);
      timers.add(id);
      return id;
    },
    mark,
    alive: () => alive,
    message(host, text, cls = "") {
      host.querySelectorAll(".il-message").forEach((m) => m.remove());
      if (text) host.appendChild(h("div", { class: "il-message " + cls }, text));
    },
    /**
     * Lay out `dot` in the worker while `host` says so, then `draw(layout)` (synchronous) if still `current()`;
     * resolves to whether it drew. A print meanwhile (graphview.js printGraphs) lays it out on this thread and draws it
     * at once, where it can (LayoutEngine.layoutNow); the worker's answer then draws nothing more (layoutAwaited).
     */
    async layoutIn(host, dot, what, current, draw) {
      ctx.message(host, `laying out ${what}…`, "il-busy");
      // the widget's layout engine comes from its kernel: a notebook reopened without it waits in vain, so say why
      const engine = opts.engine();
      let ready = null;
      engine.then(
        (e) => (ready = e),
        () => {},
      );
      const slow = opts.embedded
        ? ctx.later(() => {
            if (!ready && current())
              ctx.message(
                host,
                `laying out ${what}: waiting for the kernel, which sends the layout engine…`,
                "il-busy",
              );
          }, ENGINE_WAIT_MS)
        : null;
      ctx.mark("il:layout-request");
      try {
        return await layoutAwaited(
          engine,
          dot,
          () => current() && alive,
          (layout) => {
            ctx.message(host, "");
            draw(layout);
          },
        );
      } catch (e) {
        ctx.message(host, `layout failed: ${e.message || e}`, "il-error");
        return false;
      } finally {
        if (slow != null) clearTimeout(slow);
      }
    },
    /**
     * Once the first graph is up, lay out the other compiles' graphs ahead of need, one at a time, while the
     * reader reads: each only after PREFETCH_SETTLE_MS without input on the lens (a click, a key, the wheel), and
     * only while the lens is on screen in a visible page. A notebook of many lens outputs lays out ahead only for
     * the one being read, and a layout made ahead never competes with what the user does (it took a quarter of
     * the CPU of a page opened and clicked through at once).
     */
    prefetch(dotFor) {
      if (ctx.prefetched || model.compiles.length < 2) return;
      ctx.prefetched = true;
      const queue = model.compiles.map((c) => c.id).filter((id) => id !== store.get().compileId);
      const root = ctx.root;
      let lastInput = performance.now();
      // off screen until the observer's first report says otherwise (where there is one)
      let onScreen = !root || typeof IntersectionObserver !== "function";
      let waiting = false; // a step is due
      let running = false; // a layout is being made: one at a time
      const schedule = (ms) => {
        if (waiting || running || !alive || !queue.length) return;
        waiting = true;
        ctx.later(step, ms);
      };
      const step = async () => {
        waiting = false;
        const quiet = performance.now() - lastInput;
        if (quiet < PREFETCH_SETTLE_MS) return schedule(PREFETCH_SETTLE_MS - quiet);
        if (!onScreen) return; // the observer schedules again when it comes into view
        if (document.hidden) return schedule(PREFETCH_SETTLE_MS);
        const id = queue.shift();
        running = true;
        try {
          const dot = dotFor(id);
          if (dot) await (await opts.engine()).layout(dot, { background: true });
        } catch (_e) {
          /* only loses the head start */
        } finally {
          running = false;
        }
        schedule(0);
      };
      if (root) {
        const input = () => {
          lastInput = performance.now();
        };
        for (const type of ["pointerdown", "keydown", "wheel"])
          ctx.on(root, type, input, { capture: true, passive: true });
        if (typeof IntersectionObserver === "function") {
          const io = new IntersectionObserver((entries) => {
            onScreen = entries[entries.length - 1].isIntersecting;
            if (onScreen) schedule(PREFETCH_SETTLE_MS);
          });
          io.observe(root);
          ac.signal.addEventListener("abort", () => io.disconnect());
        }
      }
      schedule(PREFETCH_SETTLE_MS);
    },
    sourceIndex() {
      if (!srcIndex) srcIndex = sourceIndex(report);
      return srcIndex;
    },
    /** Compiles `ids` were filled in (a large report's stubs): forget what was derived from them. */
    forgetDerived(ids) {
      srcIndex = linesByNode = null;
      model.forget(ids); // ctx.profiled stays: Report.profiled came with the report's head, for every compile
    },
    /** The source lines ("FILE:LINE") of fused node `fused` of compile `cid`. */
    linesOf(cid, fused) {
      if (!linesByNode) {
        linesByNode = new Map();
        for (const [key, e] of ctx.sourceIndex())
          for (const r of e.refs) {
            const k = r.compileId + "\0" + r.fused;
            if (!linesByNode.has(k)) linesByNode.set(k, []);
            linesByNode.get(k).push(key);
          }
      }
      const ix = model.idxOf(cid);
      const names =
        ix && ix.byName.get(fused) && ix.byName.get(fused).node.kernel
          ? ix.byKernel.get(ix.byName.get(fused).node.kernel) || [fused]
          : [fused];
      return [...new Set(names.flatMap((n) => linesByNode.get(cid + "\0" + n) || []))];
    },
    canvas: () => {
      const v = ctx.instances.get(store.get().view);
      return v && v.canvas;
    },
    setStatus: (text, title) => ctx.toolbar && ctx.toolbar.setStatus(text, title),
    instances: new Map(),
    timers,
    abort() {
      alive = false;
      ac.abort();
      for (const id of timers) clearTimeout(id);
      timers.clear();
    },
  };
  return ctx;
}

/** What views and the panel may do: select (here or in the compile that has it), focus an FX node, highlight a line. */
function makeActions(ctx) {
  const { store, model } = ctx;
  return {
    /** Select a fused node / kernel / FX name here, or (when absent here) in the compile that has it. */
    select(name, compileId) {
      const r = model.resolve(name, compileId);
      if (!r) {
        store.set({ selected: "" });
        return;
      }
      if (r[0] !== store.get().compileId) store.set({ compileId: r[0], selected: r[1] });
      else store.set({ selected: r[1] });
    },
    selectIn(compileId, fused) {
      if (!model.compiles.some((c) => c.id === compileId)) return;
      store.set({ compileId, selected: fused });
    },
    focusFx(name) {
      const ix = model.idxOf(store.get().compileId);
      const owner = ix && ix.fxOwner.get(name);
      if (owner) model.fxExpandedFor(store.get().compileId).add(owner);
      store.set({
        view: "fx",
        fxGraph: "post_grad" in ((ix && ix.compile.graphs) || {}) ? "post_grad" : store.get().fxGraph,
        fxFocus: name,
      });
    },
    /** A source line was clicked: highlight exactly its kernels' boxes (in this compile, else the first that has them). */
    highlightLine(key) {
      const e = ctx.sourceIndex().get(key);
      let cid = store.get().compileId;
      if (e && !e.refs.some((r) => r.compileId === cid)) cid = e.refs[0].compileId;
      const fused = e ? [...new Set(e.refs.filter((r) => r.compileId === cid).map((r) => r.fused))] : [];
      store.set({
        compileId: cid,
        sourceLine: key,
        highlighted: fused,
        selected: cid === store.get().compileId ? store.get().selected : "",
      });
    },
  };
}

/** How long a toast (the outcome of an export) shows before it goes (ms); a failure stays until clicked. */
const TOAST_MS = 5000;

/**
 * A toast below the toolbar's right end, over the top of the pane (data-role="toast"): what an action did ("exported
 * x.html"), gone after TOAST_MS (`ms`; 0: until clicked or replaced). It takes no room in the toolbar: the outcome of an
 * export, said in the toolbar's status, stayed there and took the search box's room ("search kernel, op, f").
 */
function toastArea(ctx, main) {
  const el = h("div", { class: "il-toast", role: "status", "aria-live": "polite", "data-role": "toast", hidden: "" });
  main.appendChild(el);
  ctx.on(el, "click", () => (el.hidden = true));
  let timer = null;
  return (text, ms = TOAST_MS) => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    el.textContent = text;
    el.hidden = !text;
    if (text && ms)
      timer = ctx.later(() => {
        el.hidden = true;
        timer = null;
      }, ms);
  };
}

/** Download the exported page (`exportHtml()` = {filename, parts}: its bytes in pieces); a toast says how it went. */
async function exportPage(ctx, exportHtml) {
  const status = (t, ms) => ctx.toast(t, ms);
  status("exporting…", 0);
  try {
    const { filename, parts } = await exportHtml();
    const url = URL.createObjectURL(new Blob(parts, { type: "text/html" }));
    const a = h("a", { href: url, download: filename });
    document.body.appendChild(a);
    a.click();
    a.remove();
    ctx.later(() => URL.revokeObjectURL(url), 10000);
    status(`exported ${filename}`);
  } catch (e) {
    status(`export failed: ${e.message || e}`, 0);
  }
}

/** The lens's DOM: toolbar (with search), diagnostics banner, the stage with every view, splitter, panel. */
function lensDom(ctx, views, report) {
  const searchBox = createSearch(ctx);
  const toolbar = (ctx.toolbar = createToolbar(ctx, views, searchBox.el));
  const panel = h("aside", { class: "il-panel", "aria-label": "details" });
  const splitter = h("div", {
    class: "il-splitter",
    role: "separator",
    tabindex: "0",
    title: "drag to resize the panel",
    "data-role": "splitter",
  });
  const stage = h("div", { class: "il-stage" });
  const main = h("div", { class: "il-main" }, stage, splitter, panel);
  ctx.toast = toastArea(ctx, main);
  // a report with no compile has only why to show (Report.nothing, the panel): a short box, not the graph's 660 px
  const cls = (report.compiles || []).length ? "il-root" : "il-root il-nothing";
  const root = (ctx.root = h("div", { class: cls, tabindex: "0" }, toolbar.el, diagnosticsBanner(report), main));
  for (const v of views) {
    const inst = v.create(ctx);
    inst.el.dataset.view = v.id;
    ctx.instances.set(v.id, inst);
    stage.appendChild(inst.el);
  }
  return { root, main, panel, splitter, searchBox, toolbar };
}

/** The side panel's drawer: the selection's details, a clicked source line's kernels, or the compile's
 * summary; back at the top for new content (only when the user had scrolled: setting it forces a layout). */
function panelDrawer(ctx, panel) {
  const { store, model, actions, report } = ctx;
  let panelScrolled = false;
  ctx.on(
    panel,
    "scroll",
    () => {
      panelScrolled = panel.scrollTop > 0;
    },
    { passive: true },
  );
  return function drawPanel() {
    const s = store.get();
    const ix = model.idxOf(s.compileId);
    if (!ix) {
      panel.replaceChildren(noCompilePanel(report));
      return;
    }
    const pActions = {
      select: (n) => actions.select(n),
      selectIn: actions.selectIn,
      focusFx: actions.focusFx,
      later: ctx.later,
      // the folded module a fused node is drawn inside in the fusion graph as it is now, or null (a box of its own)
      boxOf: (name) => {
        const e = ix.byName.get(name);
        return e ? groupOf(e.node, model.expandedFor(s.compileId)) : null;
      },
    };
    if (!s.selected && s.sourceLine) {
      panel.replaceChildren(linePanel(s.sourceLine, ctx.sourceIndex().get(s.sourceLine), ix, pActions));
    } else renderPanel(panel, ix, s.selected, pActions, report);
    if (panelScrolled) {
      panel.scrollTop = 0;
      panelScrolled = false;
    }
  };
}

/** The views the report opens, in tab order: Python listed them (`Report.views`: the roofline only with a
 * profile, the memory view only with a memory timeline); this draws each with the module registered for it. */
function reportViews(report) {
  const byId = new Map(registeredViews().map((v) => [v.id, v]));
  return report.views.map((id) => {
    const v = byId.get(id);
    if (!v) throw new Error(`the report lists a view this front end does not have: ${id} (rebuild the bundle)`);
    return v;
  });
}

/**
 * Mount the lens into `el`.
 * @param {HTMLElement} el
 * @param {{report: object, initial?: object, engine: () => Promise<LayoutEngine>,
 *          exportHtml?: () => Promise<{filename: string, parts: Uint8Array[]}>}} opts
 */
export function createLens(el, opts) {
  const report = opts.report;
  const views = reportViews(report);
  const store = createStore(
    initialState(
      report,
      opts.initial,
      views.map((v) => v.id),
    ),
  );
  const model = createModel(report, store);
  store.normalizeWith(normalizer(model));
  const ctx = makeContext(report, opts, store, model);

  const actions = (ctx.actions = makeActions(ctx));

  // ---- DOM --------------------------------------------------------------------------------
  ctx.exportHtml = opts.exportHtml ? () => exportPage(ctx, opts.exportHtml) : null;
  const { root, main, panel, splitter, searchBox, toolbar } = lensDom(ctx, views, report);
  const instances = ctx.instances;
  el.appendChild(root);
  installKeys(ctx, views, searchBox.input);

  const ro = installSplit(ctx, main, panel, splitter);

  const drawPanel = panelDrawer(ctx, panel);

  function showView() {
    const s = store.get();
    for (const [id, inst] of instances) inst.el.hidden = id !== s.view;
    root.dataset.activeView = s.view;
  }

  function updateViews(changed) {
    const s = store.get();
    for (const [id, inst] of instances) {
      try {
        inst.update(s, changed, id === s.view);
      } catch (e) {
        console.error(`inductor_lens: view ${id} failed`, e);
      } // eslint-disable-line no-console
    }
  }

  store.subscribe((s, changed) => {
    if (!ctx.alive()) return;
    if (changed.has("view")) showView();
    if (changed.has("selected")) root.dataset.selected = s.selected;
    if (changed.has("colourBy")) {
      root.classList.toggle("il-by-time", s.colourBy === "time");
      root.classList.toggle("il-by-peak", s.colourBy === "peak");
      root.classList.toggle("il-by-memory", s.colourBy === "memory");
      root.dataset.colourBy = s.colourBy;
    }
    toolbar.update(s, changed);
    searchBox.update(s, changed);
    // a fold or unfold moves fused nodes in and out of module boxes: the panel says where its node is drawn
    if (
      changed.has("selected") ||
      changed.has("compileId") ||
      changed.has("sourceLine") ||
      (s.selected && changed.has("expandRev"))
    )
      drawPanel();
    updateViews(changed);
  });

  // ---- start --------------------------------------------------------------------------------
  const init = opts.initial || {};
  const first = init.selected ? model.resolve(init.selected, "") : null;
  if (first) store.set({ compileId: first[0], selected: first[1] });
  const s0 = store.get();
  root.dataset.selected = s0.selected;
  root.classList.toggle("il-by-time", s0.colourBy === "time");
  root.classList.toggle("il-by-peak", s0.colourBy === "peak");
  root.classList.toggle("il-by-memory", s0.colourBy === "memory");
  root.dataset.colourBy = s0.colourBy;
  showView();
  drawPanel();
  updateViews(new Set(Object.keys(s0)));

  return {
    store,
    root,
    select: actions.select,
    selectIn: actions.selectIn,
    /** Compiles `ids` of the report arrived (index.js fills a large report's stubs in place): redraw if shown. */
    arrived(ids) {
      ctx.forgetDerived(ids);
      const s = store.get();
      if (ids.includes(s.compileId)) {
        drawPanel();
        store.set({ expandRev: s.expandRev + 1 });
      }
    },
    destroy() {
      ctx.abort();
      if (ro) ro.disconnect();
      for (const inst of instances.values()) if (inst.destroy) inst.destroy();
      root.remove();
    },
  };
}
