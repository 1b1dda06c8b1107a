import { readFileSync, writeFileSync } from "node:fs";
import { indexCompile } from "/work/wt/front/js/src/data.js";
import { buildFusion } from "/work/wt/front/js/src/dot.js";
import { fittingExpansion } from "/work/wt/front/js/src/fit.js";
import { instance } from "@viz-js/viz";
const r = JSON.parse(readFileSync("/tmp/front/l8.json", "utf8"));
const c = r.compiles[0];
const ix = indexCompile(c);
const exp = fittingExpansion(ix.boxes, 540, c);
const b = buildFusion(ix, exp);
writeFileSync("/tmp/front/l8.dot", b.dot);
const viz = await instance();
const out = JSON.parse(viz.render(b.dot, { format: "json0" }).output);
console.log("bb", out.bb, "items", b.items.size);
for (const o of out.objects || []) if (o.pos) { const it = b.items.get(o.name); console.log(o.name, o.pos, o.width, it && (it.lines[0] || "").slice(0, 30)); }
