// The layout worker: Graphviz (dot, compiled to WebAssembly) off the main thread.
// Request:  {id, dot}          Response: {id, layout} or {id, error}
// The DOT it gets carries only generated ids and sizes (no text from the report), and the
// answer is plain geometry, so nothing from a report ever passes through Graphviz's output.
import { instance } from "@viz-js/viz";

const vizPromise = instance();

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
    const w = +o.width * 72, h = +o.height * 72;
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

self.onmessage = async (ev) => {
  const { id, dot } = ev.data;
  try {
    const viz = await vizPromise;
    const t0 = performance.now();
    const r = viz.render(dot, { format: "json0" });
    if (r.status !== "success") throw new Error(r.errors.map((e) => e.message).join("; ") || "graphviz failed");
    const layout = compact(JSON.parse(r.output));
    layout.ms = performance.now() - t0;
    self.postMessage({ id, layout });
  } catch (err) {
    self.postMessage({ id, error: String((err && err.message) || err) });
  }
};
