// Tiny DOM helper: every string becomes a text node, never markup, and goes through visible()
// (bidi controls and zero-width characters shown as escapes). Titles and aria labels too;
// data-* attributes keep the raw value (they are hooks for code, not text for people).
import { visible } from "./text.js";

const SHOWN_ATTRS = new Set(["title", "aria-label", "placeholder", "alt"]);

export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : SHOWN_ATTRS.has(k) ? visible(v) : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(visible(c)));
  }
  return e;
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element, as h() makes HTML ones: attributes set (null/undefined left out), children appended, every
 * string a text node through visible(). */
export function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children.flat(Infinity))
    if (c !== null && c !== undefined) e.appendChild(c instanceof Node ? c : document.createTextNode(visible(c)));
  return e;
}

/** Set an element's text (report text included) through visible(). */
export function setText(el, s) {
  el.textContent = visible(s);
  return el;
}

export { visible };

/** A long identifier as text nodes that may break after each dot or underscore (<wbr>), not in a word: a
 * module path (``model.layers.0-31.mlp.down_proj``) or a kernel name (``triton_per_fused_softmax_3``) whose
 * end tells it from its neighbours, which an ellipsis would cut. */
export function breakable(name) {
  const parts = String(name).split(/(?<=[._])/);
  return parts.flatMap((p, i) => (i < parts.length - 1 ? [p, h("wbr")] : [p]));
}

/** A name on one line, cut in its middle where its box is narrow: the head ends in an ellipsis, the last
 * ``tail`` characters stay whole (a module path's last part, ``.down_proj``, tells its row from the next). The
 * text is the whole name (the row's title says it too). */
export function keepEnd(name, tail, cls = "il-cut-head") {
  const text = String(name);
  if (!tail || tail.length >= text.length) return [text];
  const head = h("span", { class: cls }, text.slice(0, text.length - tail.length));
  head.style.setProperty("--il-tail", String(tail.length));
  return [head, tail];
}
