// Builds the front end into ../inductor_lens/static/:
//   lens.js          ESM: the library (mount), the anywidget adapter (default export)
//   lens.css         styles (JupyterLab --jp-* variables with fallbacks for the standalone page)
//   layout-worker.js classic script run as a Web Worker: Graphviz (WASM, inlined) -> layout JSON

import { copyFileSync, mkdirSync, statSync } from "node:fs";
import * as esbuild from "esbuild";

const out = new URL("../inductor_lens/static/", import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const common = {
  bundle: true,
  minify: !process.env.NOMIN,
  legalComments: "eof",
  logLevel: "warning",
  target: ["es2020"],
};

await esbuild.build({ ...common, entryPoints: ["src/index.js"], format: "esm", outfile: out + "lens.js" });
await esbuild.build({ ...common, entryPoints: ["src/worker.js"], format: "iife", outfile: out + "layout-worker.js" });
copyFileSync("src/lens.css", out + "lens.css");
for (const f of ["lens.js", "lens.css", "layout-worker.js"]) {
  console.log(`${f.padEnd(18)} ${(statSync(out + f).size / 1024).toFixed(0).padStart(6)} KiB`);
}
