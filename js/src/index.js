// Entry points of the bundle (lens.js):
//   default export  the anywidget adapter: render({model, el}) returns its cleanup
//   mount()         the standalone page (inductor_lens.html): same library, no Jupyter

import { createLens } from "./app.js";
import { createCompare } from "./compare.js";
import { fromBase64, gunzipText, sharedEngine } from "./engine.js";
import { expandReport } from "./intern.js";
import { createJobView } from "./job.js";

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

let nextRequest = 1;

/** Ask the Python side for something; the answer comes as a custom message with the same id. */
function request(model, type, timeoutMs = 60000) {
  const id = `${type}-${nextRequest++}-${Date.now()}`;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      model.off("msg:custom", handler);
      reject(new Error(`no answer from the kernel to ${type} (is it running?)`));
    }, timeoutMs);
    function handler(msg, buffers) {
      if (!msg || msg.id !== id) return;
      clearTimeout(timer);
      model.off("msg:custom", handler);
      if (msg.error) reject(new Error(msg.error));
      else resolve({ msg, buffers: buffers || [] });
    }
    model.on("msg:custom", handler);
    model.send({ type, id });
  });
}

function asBytes(b) {
  if (b instanceof Uint8Array) return b;
  if (b instanceof DataView) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  return new Uint8Array(b.buffer || b);
}

async function render({ model, el }) {
  el.classList.add("il-host", "il-widget");
  const packed = model.get("_report");
  let report;
  try {
    report = expandReport(JSON.parse(await gunzipText(asBytes(packed))));
  } catch (e) {
    el.textContent = `inductor_lens: could not read the report (${e.message || e})`;
    return () => {};
  }
  if (report && report.kind === "diff") return renderCompare(model, el, report); // a ReportDiff (diff.py)
  const lens = createLens(el, {
    report,
    initial: { view: model.get("view"), selected: model.get("selected"), compileId: model.get("compile") },
    ...kernelRequests(model),
  });
  // store -> traits
  const unsub = lens.store.subscribe((s, changed) => {
    let dirty = false;
    const push = (trait, value) => {
      if (model.get(trait) !== value) {
        model.set(trait, value);
        dirty = true;
      }
    };
    if (changed.has("selected")) push("selected", s.selected);
    if (changed.has("view")) push("view", s.view);
    if (changed.has("compileId")) push("compile", s.compileId);
    if (dirty) model.save_changes();
  });
  // traits -> store (a user may script them)
  const onSelected = () => lens.select(model.get("selected"));
  const onView = () => lens.store.set({ view: model.get("view") });
  const onCompile = () => lens.store.set({ compileId: model.get("compile"), selected: "" });
  model.on("change:selected", onSelected);
  model.on("change:view", onView);
  model.on("change:compile", onCompile);
  // the initial state may differ from the traits (e.g. a default compile): tell Python
  const s = lens.store.get();
  if (model.get("compile") !== s.compileId || model.get("selected") !== s.selected) {
    model.set("compile", s.compileId);
    model.set("selected", s.selected);
    model.save_changes();
  }
  return () => {
    unsub();
    model.off("change:selected", onSelected);
    model.off("change:view", onView);
    model.off("change:compile", onCompile);
    lens.destroy();
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
      const { msg, buffers } = await request(model, "export");
      return { filename: msg.filename, bytes: asBytes(buffers[0]) };
    },
  };
}

/** The compare view in a widget (inductor_lens.diff's DiffWidget): same engine and export requests. */
function renderCompare(model, el, payload) {
  const cmp = createCompare(el, {
    payload,
    initial: { pair: model.get("compile_pair"), selected: model.get("selected") },
    ...kernelRequests(model),
    onChange: ({ pair, selected }) => {
      if (model.get("compile_pair") !== pair || model.get("selected") !== selected) {
        model.set("compile_pair", pair);
        model.set("selected", selected);
        model.save_changes();
      }
    },
  });
  const onPair = () => {
    if (model.get("compile_pair") !== cmp.state.pair) cmp.selectPair(model.get("compile_pair"));
  };
  const onSel = () => cmp.selectKernel(model.get("selected"));
  model.on("change:compile_pair", onPair);
  model.on("change:selected", onSel);
  return () => {
    model.off("change:compile_pair", onPair);
    model.off("change:selected", onSel);
    cmp.destroy();
  };
}

export default { render };

// ---- standalone page -----------------------------------------------------------------------

/**
 * Mount on a standalone page. `sources` holds base64 gzip blobs read from the page:
 * {report, engine}. Returns the lens.
 */
export async function mount(el, sources) {
  el.classList.add("il-host", "il-standalone-host");
  mark("il:mount");
  // start the layout engine (unpack + WebAssembly compile in its worker) while the report is read: both are
  // unpacked at once, and the worker is created BEFORE the long synchronous parse and first draw below, so
  // that it boots and compiles on its own thread meanwhile (created after them, it made the first layout
  // wait ~300 ms more)
  const engine = () => sharedEngine("page", () => gunzipText(fromBase64(sources.engine)));
  const [text] = await Promise.all([gunzipText(fromBase64(sources.report)), engine().catch(() => null)]);
  const report = expandReport(JSON.parse(text));
  mark("il:report");
  if (report && report.kind === "diff") {
    // a compare page (inductor_lens/views/diff_views.py)
    const cmp = createCompare(el, { payload: report, initial: sources.initial || {}, engine });
    window.inductorLens = cmp;
    return cmp;
  }
  if (report && report.job) {
    // a distributed job: rank selector + divergence summary (job.js)
    const view = createJobView(el, {
      job: report.job,
      initial: sources.initial || {},
      engine,
      onLens: (lens) => {
        window.inductorLens = lens;
      },
    });
    window.inductorJob = view;
    return view.lens();
  }
  const lens = createLens(el, { report, initial: sources.initial || {}, engine });
  window.inductorLens = lens; // for scripting and tests: inductorLens.store.get()
  return lens;
}
