// Kernel source with syntax highlighting, built as DOM text nodes (never innerHTML):
// highlight.js tokenizes, and we walk its token tree ourselves.
import hljs from "highlight.js/lib/core";
import cpp from "highlight.js/lib/languages/cpp";
import python from "highlight.js/lib/languages/python";
import { visible } from "./text.js";

hljs.registerLanguage("cpp", cpp);
hljs.registerLanguage("python", python);

const LANG = { cpp: "cpp", triton: "python", extern: "python", python: "python" };

/** Flatten highlight.js's token tree to [{text, cls}] runs. */
function runs(node, scopes, out) {
  if (typeof node === "string") { out.push({ text: node, cls: scopes }); return out; }
  const s = node.scope ? [...scopes, "hljs-" + String(node.scope).split(".")[0].replace(/[^a-z_-]/gi, "")] : scopes;
  for (const ch of node.children || []) runs(ch, s, out);
  return out;
}

/** Fill `pre` with one `.il-line` span per source line (numbers come from CSS counters). */
export function renderCode(pre, source, language) {
  const text = String(source || "");
  const lang = LANG[language];
  let segs = [{ text, cls: [] }];
  if (lang && text.length < 400000) {
    try {
      const res = hljs.highlight(text, { language: lang, ignoreIllegals: true });
      segs = runs(res._emitter.rootNode, [], []);
    } catch (e) {
      segs = [{ text, cls: [] }];
    }
  }
  pre.replaceChildren();
  let line = document.createElement("span");
  line.className = "il-line";
  const flush = () => { pre.appendChild(line); pre.appendChild(document.createTextNode("\n")); line = document.createElement("span"); line.className = "il-line"; };
  for (const seg of segs) {
    const parts = seg.text.split("\n");
    parts.forEach((part, i) => {
      if (i > 0) flush();
      if (!part) return;
      if (seg.cls.length) {
        const sp = document.createElement("span");
        sp.className = seg.cls[seg.cls.length - 1];
        sp.textContent = visible(part);
        line.appendChild(sp);
      } else line.appendChild(document.createTextNode(visible(part)));
    });
  }
  pre.appendChild(line);
  pre.dataset.language = language || "";
  pre.dataset.lines = String(pre.querySelectorAll(".il-line").length);
}
