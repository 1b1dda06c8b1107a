// Kernel source with syntax highlighting, built as DOM text nodes (never innerHTML):
// highlight.js tokenizes, and we walk its token tree ourselves.
//
// A click must paint its panel within a frame, and highlighting a long kernel (tokenizing it and making
// thousands of spans) takes tens of ms: renderCode draws every line as plain text at once (the text, the
// line count and the copy are right immediately), then highlights after the next paint in short chunks,
// first lines first (they are the ones on screen), in idle time. The <pre> says where it is in
// `data-highlighted-source`: "pending", then "done"; "off" when it is not highlighted (an unknown
// language, or the tokenizer failed). A long source is drawn in pieces (PIECE_LINES lines, more on demand)
// and highlighted piece by piece. Work on a <pre> that left the page stops.
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

/** Lines drawn at once; a longer source is drawn in pieces of this many (a "show more" control, or
 * scrolling to it, draws the next), so a click on a 50 MB kernel paints at once. */
export const PIECE_LINES = 2000;

/** The number of lines of `text` (one more than its newlines), counted without splitting it. */
function lineCount(text) {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Lines [from, from + n) of `text` starting at offset `at`: {lines, end} (the offset after them). */
function linesFrom(text, at, n) {
  const lines = [];
  let i = at;
  while (lines.length < n && i <= text.length) {
    const j = text.indexOf("\n", i);
    const end = j < 0 ? text.length : j;
    lines.push(text.slice(i, end));
    i = end + 1;
  }
  return { lines, end: i };
}

function lineEls(lines) {
  return lines.map((l) => {
    const line = document.createElement("span");
    line.className = "il-line";
    if (l) line.textContent = visible(l);
    return line;
  });
}

/** Append `els` to `pre` (before `before`, the show-more control, when there is one), newline-separated. */
function appendLines(pre, els, before, first) {
  const frag = document.createDocumentFragment();
  els.forEach((e, i) => {
    if (i || !first) frag.appendChild(document.createTextNode("\n"));
    frag.appendChild(e);
  });
  pre.insertBefore(frag, before);
}

/**
 * The highlighter of one <pre>: `add(els, text)` queues lines to fill. A source below MAX_HIGHLIGHT is
 * tokenized once as a whole (lines filled as they are drawn); a larger one piece by piece, as each is
 * drawn. Filling runs after the next paint, in idle chunks; `pre.dataset.highlightedSource` is "pending"
 * while lines wait, "done" when every drawn line is highlighted, "off" without a grammar.
 */
function highlighter(pre, source, language, later, sync) {
  const whole = source.length < MAX_HIGHLIGHT;
  let tokens = null; // whole-source tokens, by line
  const queue = []; // [{els, from, text}]
  let drawn = 0,
    running = false;
  const step = () => {
    if (!sync && !pre.isConnected) return; // the panel moved on
    const t0 = performance.now();
    while (queue.length && (sync || performance.now() - t0 < CHUNK_MS)) {
      const q = queue[0];
      if (!q.tokens) {
        if (whole) tokens = tokens || highlightLines(source, language);
        q.tokens = whole ? tokens && tokens.slice(q.from, q.from + q.els.length) : highlightLines(q.text, language);
        q.next = 0;
        if (!q.tokens || q.tokens.length !== q.els.length) {
          queue.length = 0;
          pre.dataset.highlightedSource = "off";
          running = false;
          return;
        }
      }
      fillLine(q.els[q.next], q.tokens[q.next]);
      if (++q.next >= q.els.length) queue.shift();
    }
    if (queue.length) whenIdle(step, later);
    else {
      running = false;
      pre.dataset.highlightedSource = "done";
    }
  };
  return {
    add(els, text) {
      if (pre.dataset.highlightedSource === "off") return;
      queue.push({ els, from: drawn, text });
      drawn += els.length;
      pre.dataset.highlightedSource = "pending";
      if (running) return;
      running = true;
      if (sync) step();
      else afterPaint(step, later);
    },
  };
}

/**
 * Fill `pre` with one `.il-line` span per source line (numbers come from CSS counters), plain at once;
 * highlighted after the next paint, in chunks run when the page is idle (requestIdleCallback; else
 * `later(fn, ms)`, the lens's timer). A source longer than PIECE_LINES lines is drawn in pieces: the
 * first at once, the next on a click of the "show more" control (data-role="show-more") or when it
 * scrolls into view; `pre.dataset.lines` is the source's line count, `pre.dataset.shownLines` how many
 * are drawn. A <pre> taken off the page (a new selection, destroy()) stops its chunks. `{sync: true}`
 * highlights before returning.
 */
export function renderCode(pre, source, language, { later = (fn, ms) => setTimeout(fn, ms), sync = false } = {}) {
  const text = String(source || "");
  const total = lineCount(text);
  pre.replaceChildren();
  pre.dataset.language = language || "";
  pre.dataset.lines = String(total);
  pre.dataset.highlightedSource = LANG[language] ? "pending" : "off";
  const hl = highlighter(pre, text, language, later, sync);
  let at = 0,
    shown = 0,
    more = null,
    observer = null;
  const drawPiece = () => {
    const { lines, end } = linesFrom(text, at, PIECE_LINES);
    const els = lineEls(lines);
    appendLines(pre, els, more, shown === 0);
    hl.add(els, text.slice(at, Math.min(end - 1, text.length)));
    at = end;
    shown += els.length;
    pre.dataset.shownLines = String(shown);
    pre.style.setProperty("--il-lines", String(shown)); // its height while not drawn (lens.css)
    if (shown < total) {
      if (!more) more = showMore(pre, drawPiece, (o) => (observer = o));
      more.textContent = `show ${Math.min(PIECE_LINES, total - shown)} more of ${total - shown} lines`;
    } else if (more) {
      if (observer) observer.disconnect();
      more.remove();
      more = null;
    }
  };
  drawPiece();
}

/** The "show more" control at the end of `pre`: a click, or scrolling it into view, draws the next piece. */
function showMore(pre, drawPiece, keep) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "il-link il-more-lines";
  b.dataset.role = "show-more";
  b.addEventListener("click", () => drawPiece());
  pre.appendChild(b);
  if (typeof IntersectionObserver === "function") {
    // the entries may be stale (a click drew a piece since): draw only while the control is in view now
    const inView = () => {
      const r = b.getBoundingClientRect(),
        p = pre.getBoundingClientRect();
      return b.isConnected && r.bottom > p.top && r.top < p.bottom && r.top < window.innerHeight;
    };
    const o = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && inView()) drawPiece();
    });
    o.observe(b);
    keep(o);
  }
  return b;
}
