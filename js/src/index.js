// Entry points of the bundle (lens.js):
//   default export  the anywidget adapter: render({model, el}) returns its cleanup
//   mount()         the standalone page (inductor_lens.html): same library, no Jupyter
// Both hand the payload to the one shell (shell.js) in the mode Python named.

import { asBytes, request } from "./comm.js";
import { fromBase64, gunzipText, sharedEngine } from "./engine.js";
import { printGraphs } from "./graphview.js";
import { expandReport } from "./intern.js";
import { createShell } from "./shell.js";

export { createLens } from "./app.js";
export const VERSION = "0.1.0";

/** A performance mark (the benchmark reads them); never fails. */
function mark(name) {
  try {
    performance.mark(name);
  } catch (_e) {
    /* no performance API */
  }
}

// ---- anywidget -----------------------------------------------------------------------------

async function render({ model, el }) {
  el.classList.add("il-host", "il-widget");
  const packed = model.get("_report");
  let payload;
  try {
    payload = expandReport(JSON.parse(await gunzipText(asBytes(packed))));
  } catch (e) {
    el.textContent = `inductor_lens: could not read the report (${e.message || e})`;
    return () => {};
  }
  const initial = {
    view: model.get("view"),
    selected: model.get("selected"),
    compileId: model.get("compile"),
    pair: model.get("compile_pair"),
  };
  const shell = createShell(el, model.get("_mode"), payload, { initial, embedded: true, ...kernelRequests(model) });
  const cleanup = syncTraits(model, shell);
  const stop = payload && payload.pending && payload.pending.length ? fetchPending(model, shell, payload) : null;
  const keys = new AbortController();
  el.addEventListener("keydown", (e) => keepKeys(el, e), { signal: keys.signal });
  return () => {
    keys.abort();
    if (stop) stop();
    cleanup();
  };
}

/** Text chords (select all, copy, cut, paste, undo) and the notebook's cell-editing chords (merge, move cells):
 * kept in the widget although they carry Ctrl or Cmd. */
const KEPT_CHORDS = new Set([
  "a",
  "c",
  "x",
  "v",
  "z",
  "Z",
  "M",
  "m",
  "-",
  "Backspace",
  "ArrowUp",
  "ArrowDown",
  "ArrowLeft",
  "ArrowRight",
]);

/**
 * A key pressed inside the widget stays in the widget: the host page (JupyterLab, Notebook 7 and VS Code listen
 * on the document, in the bubbling phase) never sees it, so that `m`, `a`, `x` or `d d` typed while the graph has
 * the focus do not turn the cell into Markdown, insert or cut cells. Passed on to the host: the chords that run
 * the cell (Shift/Ctrl/Cmd/Alt + Enter) and the application's other Ctrl/Cmd/Alt chords (save, the command
 * palette), but not KEPT_CHORDS. Esc that the lens left unhandled (nothing selected to clear) hands the focus back
 * to the focusable element around the widget (the notebook's cell, in command mode), where the notebook's own
 * keys work again.
 */
function keepKeys(el, e) {
  const chord = e.ctrlKey || e.metaKey || e.altKey;
  if (e.key === "Enter" && (chord || e.shiftKey)) return;
  if (chord && !KEPT_CHORDS.has(e.key)) return;
  e.stopPropagation();
  const tag = (e.target.tagName || "").toLowerCase();
  if (e.key === "Escape" && !e.defaultPrevented && tag !== "input" && tag !== "select" && tag !== "textarea") {
    const host = el.parentElement && el.parentElement.closest("[tabindex]");
    if (host) host.focus({ preventScroll: true });
    else if (document.activeElement && el.contains(document.activeElement)) document.activeElement.blur();
  }
}

/** How many held-back compiles one `compiles` request asks for. */
const BATCH = 16;

/**
 * A large report opens with its shown compile whole and the others as stubs (inductor_lens.views.frontend
 * pack_opening; `payload.pending` names them). Ask the kernel for them, a batch at a time (the compile the
 * user switches to first), fill each stub in place, and tell the lens (it forgets what it derived from the
 * stub and redraws when the shown compile arrived). `el.dataset.pending` counts what is still to come.
 * Returns the stop function.
 */
function fetchPending(model, shell, payload) {
  const stubs = new Map(payload.compiles.map((c) => [c.id, c]));
  const todo = payload.pending.filter((id) => stubs.has(id));
  const root = shell.api.root;
  let stopped = false;
  const say = () => {
    if (root) root.dataset.pending = String(todo.length);
  };
  say();
  const next = () => {
    const cur = shell.store.get().compileId;
    const at = todo.indexOf(cur);
    if (at > 0) todo.unshift(...todo.splice(at, 1));
    return todo.splice(0, BATCH);
  };
  (async () => {
    while (todo.length && !stopped) {
      const ids = next();
      let got;
      try {
        const { buffers } = await request(model, "compiles", 120000, { ids });
        got = expandReport(JSON.parse(await gunzipText(asBytes(buffers[0])))).compiles || [];
      } catch (e) {
        if (root) root.dataset.pendingError = String(e.message || e);
        return;
      }
      if (stopped) return;
      for (const c of got) if (stubs.has(c.id)) Object.assign(stubs.get(c.id), c);
      say();
      if (shell.api.arrived) shell.api.arrived(got.map((c) => c.id));
    }
  })();
  return () => {
    stopped = true;
  };
}

/** Keep the widget's traits and the shell's store in step, both ways (the shell names the pairs); tell
 * Python the initial state where it differs from the traits (e.g. a default compile). Returns the cleanup. */
function syncTraits(model, shell) {
  const pairs = Object.entries(shell.traits);
  const push = (s) => {
    let dirty = false;
    for (const [trait, key] of pairs)
      if (model.get(trait) !== s[key]) {
        model.set(trait, s[key]);
        dirty = true;
      }
    if (dirty) model.save_changes();
  };
  const unsub = shell.store.subscribe((s, changed) => {
    if (pairs.some(([, key]) => changed.has(key))) push(s);
  });
  const handlers = pairs.map(([trait, key]) => {
    const fn = () => {
      if (model.get(trait) !== shell.store.get()[key]) shell.apply(trait, model.get(trait));
    };
    model.on(`change:${trait}`, fn);
    return [trait, fn];
  });
  push(shell.store.get());
  return () => {
    unsub();
    for (const [trait, fn] of handlers) model.off(`change:${trait}`, fn);
    shell.destroy();
  };
}

/** What a widget asks its kernel for (inductor_lens.views.frontend.answer_request): the layout engine (Graphviz
 * WASM, ~1.2 MB), fetched once per page rather than synced with every widget or saved into the notebook,
 * and the exported page. */
function kernelRequests(model) {
  return {
    engine: () =>
      sharedEngine("widget", async () => {
        const { buffers } = await request(model, "engine");
        return await gunzipText(asBytes(buffers[0]));
      }),
    exportHtml: async () => {
      const { msg, buffers } = await request(model, "export"); // the page in parts (a few MB each)
      return { filename: msg.filename, parts: buffers.map(asBytes) };
    },
  };
}

export default { render };

// ---- standalone page -----------------------------------------------------------------------

let printHooked = false; // the page's print listeners (mount), added once

/**
 * Mount on a standalone page. `sources` holds base64 gzip blobs read from the page:
 * {report, engine}. Returns the lens.
 */
export async function mount(el, sources) {
  el.classList.add("il-host", "il-standalone-host");
  if (!printHooked) {
    // printed (the browser's Print, chromium --headless --print-to-pdf): each graph drawn whole for the paper
    printHooked = true;
    window.addEventListener("beforeprint", () => printGraphs(true));
    window.addEventListener("afterprint", () => printGraphs(false));
  }
  mark("il:mount");
  // start the layout engine (unpack + WebAssembly compile in its worker) while the report is read: both are
  // unpacked at once, and the worker is created BEFORE the long synchronous parse and first draw below, so
  // that it boots and compiles on its own thread meanwhile (created after them, it made the first layout
  // wait ~300 ms more)
  // printable: a print while a layout is late lays it out on the page's thread (graphview.js printGraphs)
  const engine = () => sharedEngine("page", () => gunzipText(fromBase64(sources.engine)), { printable: true });
  const [text] = await Promise.all([gunzipText(fromBase64(sources.report)), engine().catch(() => null)]);
  const payload = expandReport(JSON.parse(text));
  mark("il:report");
  // "Drawing the report… give it time with --virtual-time-budget" (views/html.py) stays while the report is unpacked:
  // removed as the page began, a headless capture taken then (chromium --headless --screenshot) was blank
  for (const note of el.querySelectorAll(".il-boot")) note.remove();
  const onLens = (lens) => {
    window.inductorLens = lens; // for scripting and tests: inductorLens.store.get()
  };
  const shell = createShell(el, sources.mode, payload, { initial: sources.initial || {}, engine, onLens });
  if (shell.mode === "job") {
    window.inductorJob = shell.api; // the rank selector; inductorLens is the lens of the rank shown
    return shell.api.lens();
  }
  window.inductorLens = shell.api;
  return shell.api;
}
