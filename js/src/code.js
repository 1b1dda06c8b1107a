// Kernel source with syntax highlighting, built as DOM text nodes (never innerHTML):
// highlight.js tokenizes, and we walk its token tree ourselves.
//
// A click must paint its panel within a frame, and highlighting a long kernel (tokenizing it and making
// thousands of spans) takes tens of ms: renderCode draws every line as plain text at once (the text, the
// line count and the copy are right immediately), then highlights after the next paint in short chunks,
// first lines first (they are the ones on screen), in idle time. The <pre> says where it is in
// `data-highlighted-source`: "pending", then "done"; "off" when it is not highlighted (an unknown
// language, a huge source, or the tokenizer failed). Work on a <pre> that left the page stops.
import hljs from "highlight.js/lib/core";
import cpp from "highlight.js/lib/languages/cpp";
import python from "highlight.js/lib/languages/python";
import { visible } from "./text.js";

hljs.registerLanguage("cpp", cpp);
hljs.registerLanguage("python", python);

const LANG = { cpp: "cpp", triton: "python", extern: "python", python: "python" };
/** Sources longer than this are shown plain (tokenizing them would take seconds). */
const MAX_HIGHLIGHT = 400000;
/** Milliseconds of highlighting per task before yielding to the page. */
const CHUNK_MS = 6;

/** Flatten highlight.js's token tree to [{text, cls}] runs. */
function runs(node, scopes, out) {
  if (typeof node === "string") {
    out.push({ text: node, cls: scopes });
    return out;
  }
  const s = node.scope
    ? [
        ...scopes,
        "hljs-" +
          String(node.scope)
            .split(".")[0]
            .replace(/[^a-z_-]/gi, ""),
      ]
    : scopes;
  for (const ch of node.children || []) runs(ch, s, out);
  return out;
}

/** The runs cut at line ends: one array of {text, cls} per source line. */
function runsByLine(segs) {
  const lines = [[]];
  for (const seg of segs) {
    const parts = seg.text.split("\n");
    parts.forEach((part, i) => {
      if (i > 0) lines.push([]);
      if (part) lines[lines.length - 1].push({ text: part, cls: seg.cls });
    });
  }
  return lines;
}

/** The tokens of `text` as runs per line, or null (no grammar, too long, or the tokenizer failed). */
export function highlightLines(text, language) {
  const lang = LANG[language];
  if (!lang || text.length >= MAX_HIGHLIGHT) return null;
  try {
    const res = hljs.highlight(text, { language: lang, ignoreIllegals: true });
    return runsByLine(runs(res._emitter.rootNode, [], []));
  } catch (_e) {
    return null;
  }
}

function fillLine(line, parts) {
  const nodes = parts.map((p) => {
    if (!p.cls.length) return document.createTextNode(visible(p.text));
    const sp = document.createElement("span");
    sp.className = p.cls[p.cls.length - 1];
    sp.textContent = visible(p.text);
    return sp;
  });
  line.replaceChildren(...nodes);
}

/** When the page is idle (after the next paint and whatever input is waiting), else on a timer. */
function whenIdle(fn, later) {
  if (typeof requestIdleCallback === "function") requestIdleCallback(() => fn(), { timeout: 300 });
  else later(fn, 0);
}

/** After the next paint, when the page is idle (or soon, where there are no frames). */
function afterPaint(fn, later) {
  if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => whenIdle(fn, later));
  else whenIdle(fn, later);
}

/**
 * Fill `pre` with one `.il-line` span per source line (numbers come from CSS counters), plain at once;
 * highlighted after the next paint, in chunks run when the page is idle (requestIdleCallback; else
 * `later(fn, ms)`, the lens's timer). A <pre> taken off the page (a new selection, destroy()) stops its
 * chunks. `{sync: true}` highlights before returning.
 */
export function renderCode(pre, source, language, { later = (fn, ms) => setTimeout(fn, ms), sync = false } = {}) {
  const text = String(source || "");
  const lines = text.split("\n");
  const els = lines.map((l) => {
    const line = document.createElement("span");
    line.className = "il-line";
    if (l) line.textContent = visible(l);
    return line;
  });
  const parts = [];
  els.forEach((e, i) => {
    if (i) parts.push("\n");
    parts.push(e);
  });
  pre.replaceChildren(...parts);
  pre.dataset.language = language || "";
  pre.dataset.lines = String(els.length);
  const highlightable = !!LANG[language] && text.length < MAX_HIGHLIGHT;
  pre.dataset.highlightedSource = highlightable ? "pending" : "off";
  if (!highlightable) return;
  let tokens = null,
    next = 0;
  const step = () => {
    if (!sync && !pre.isConnected) return; // the panel moved on
    const t0 = performance.now();
    if (!tokens) {
      tokens = highlightLines(text, language);
      if (!tokens || tokens.length !== els.length) {
        pre.dataset.highlightedSource = "off";
        return;
      }
    }
    while (next < els.length && (sync || performance.now() - t0 < CHUNK_MS)) {
      fillLine(els[next], tokens[next]);
      next++;
    }
    if (next < els.length) whenIdle(step, later);
    else pre.dataset.highlightedSource = "done";
  };
  if (sync) step();
  else afterPaint(step, later);
}
