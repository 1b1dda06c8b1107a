// The layout worker: Graphviz (dot, compiled to WebAssembly) off the main thread.
// Request:  {id, dot}          Response: {id, layout} or {id, error}
// The DOT it gets carries only generated ids and sizes (no text from the report), and the
// answer is plain geometry, so nothing from a report ever passes through Graphviz's output.
//
// The same script, run on the page's own thread (engine.js LayoutEngine.here: a headless browser's virtual time,
// which never waits for a worker, or ahead of a print), starts nothing and leaves {layoutWith, instanceNow, instance}
// in globalThis.__inductorLensLayout for the page to take.
import { instance } from "@viz-js/viz";

const inWorker = typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope;

// Warm up: a fresh WebAssembly instance runs its first layouts several times slower than later ones (its
// code is not optimized yet: the decoder's 114-box graph took 220 ms on fresh code, 30 ms on warm code).
// The worker starts while the page still reads the report, so meanwhile it lays out small graphs shaped
// like ours (a column in one group, side inputs and outputs, a cluster), one per task, and stops at the
// first real request (which so waits for one small layout at most).
function warmDot(n = 32) {
  let dot = 'digraph w {\n graph [rankdir=TB nodesep=0.3 ranksep=0.35];\n node [shape=box fixedsize=true label=""];\n';
  dot +=
    ' subgraph cluster_0 { graph [margin=8 label="xxxxxxxx"]; c0 [width=2 height=0.8]; c1 [width=2 height=0.8]; c0 -> c1; }\n';
  for (let i = 0; i < n; i++) {
    dot += ` n${i} [width=${2 + (i % 3)} height=0.82 group=main];\n i${i} [width=1.2 height=0.28 shape=ellipse];\n i${i} -> n${i};\n`;
    if (i) dot += ` n${i - 1} -> n${i};\n`;
    if (i > 2 && i % 3 === 0)
      dot += ` n${i - 3} -> n${i};\n o${i} [width=1 height=0.28 shape=ellipse];\n n${i} -> o${i};\n`;
  }
  return dot + " n0 -> c0; c1 -> n5;\n}\n";
}

const WARM_ROUNDS = 6;
let requested = false;
const vizPromise = inWorker ? instance() : null;
if (vizPromise)
  vizPromise.then(
    (viz) => {
      let round = 0;
      const step = () => {
        if (requested || round++ >= WARM_ROUNDS) return;
        try {
          viz.render(warmDot(), { format: "json0" });
        } catch (_e) {
          return;
        }
        setTimeout(step, 0);
      };
      setTimeout(step, 0);
    },
    () => {},
  );

/**
 * Graphviz made on the calling thread without waiting for another task: the WebAssembly module is compiled and
 * instantiated synchronously (Graphviz's loader asks for WebAssembly.instantiate, which compiles on other threads
 * and answers in a later task), so the promise settles in the microtasks of the task that called. A headless
 * browser's virtual time advances only between tasks: a layout made this way is on the page before its budget runs
 * out. (Chromium compiles modules of up to 8 MB synchronously on the main thread: Graphviz's is 1 MB.)
 */
export function instanceNow() {
  const real = WebAssembly.instantiate;
  WebAssembly.instantiate = (bytes, imports) => {
    WebAssembly.instantiate = real; // once: the next caller gets the browser's own
    try {
      const module = new WebAssembly.Module(bytes);
      return Promise.resolve({ module, instance: new WebAssembly.Instance(module, imports) });
    } catch (e) {
      return Promise.reject(e);
    }
  };
  const restore = () => {
    if (WebAssembly.instantiate !== real) WebAssembly.instantiate = real;
  };
  const made = instance();
  made.then(restore, restore);
  return made;
}

/** `dot` laid out by `viz`: {width, height, nodes, edges, clusters, ms} (graph units, y down). */
export function layoutWith(viz, dot) {
  const t0 = performance.now();
  const r = viz.render(dot, { format: "json0" });
  if (r.status !== "success") throw new Error(r.errors.map((e) => e.message).join("; ") || "graphviz failed");
  const layout = compact(JSON.parse(r.output));
  layout.ms = performance.now() - t0;
  return layout;
}

function parsePoints(pos) {
  // edge pos: "e,x,y x,y x,y ..." (optional "s,x,y" start marker), points of cubic B-splines
  let end = null;
  const pts = [];
  for (const tok of pos.trim().split(/\s+/)) {
    const parts = tok.split(",");
    if (parts[0] === "e") end = [+parts[1], +parts[2]];
    else if (parts[0] === "s") continue;
    else pts.push([+parts[0], +parts[1]]);
  }
  return { pts, end };
}

export function compact(json) {
  const [, , W, H] = (json.bb || "0,0,0,0").split(",").map(Number);
  const flip = (p) => [p[0], H - p[1]];
  const nodes = {};
  const clusters = [];
  const byGvid = {};
  for (const o of json.objects || []) {
    if (o.nodes !== undefined || o.name.startsWith("cluster")) {
      if (o.bb) {
        const [x1, y1, x2, y2] = o.bb.split(",").map(Number);
        clusters.push({ name: o.name, x: x1, y: H - y2, w: x2 - x1, h: y2 - y1 });
      }
      continue;
    }
    byGvid[o._gvid] = o.name;
    if (!o.pos) continue;
    const [x, y] = o.pos.split(",").map(Number);
    const w = +o.width * 72,
      h = +o.height * 72;
    nodes[o.name] = { x: x - w / 2, y: H - y - h / 2, w, h };
  }
  const edges = [];
  for (const e of json.edges || []) {
    if (!e.pos || e.style === "invis") continue;
    const { pts, end } = parsePoints(e.pos);
    edges.push({ tail: byGvid[e.tail], head: byGvid[e.head], pts: pts.map(flip), end: end && flip(end) });
  }
  return { width: W, height: H, nodes, edges, clusters };
}

if (inWorker)
  self.onmessage = async (ev) => {
    const { id, dot } = ev.data;
    requested = true;
    const got = performance.now();
    try {
      const viz = await vizPromise;
      const t0 = performance.now();
      const layout = layoutWith(viz, dot);
      layout.waitMs = t0 - got; // waiting for the engine (its WebAssembly compile) before laying out
      self.postMessage({ id, layout });
    } catch (err) {
      self.postMessage({ id, error: String((err && err.message) || err) });
    }
  };
else globalThis.__inductorLensLayout = { layoutWith, instanceNow, instance };
