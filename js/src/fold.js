// A long text folded to its first line: <details data-role="folded"> whose summary is the first line and a
// "more" cue, the rest shown when opened (no script: the browser's own disclosure). A one-line text is a
// plain span. Used where a long message (a graph break's reason) would fill the side panel.
import { h } from "./dom.js";

/** `text` as a span when it is one line, else folded to its first line; `cls` classes the text. */
export function folded(text, cls = "") {
  const s = String(text || "");
  const cut = s.indexOf("\n");
  if (cut < 0) return h("span", { class: cls }, s);
  const rest = s.slice(cut + 1).replace(/^\n+/, "");
  return h(
    "details",
    { class: "il-fold", "data-role": "folded" },
    h("summary", {}, h("span", { class: cls }, s.slice(0, cut)), " ", h("span", { class: "il-fold-more" }, "more")),
    h("div", { class: `${cls} il-fold-rest` }, rest),
  );
}
