// A long text folded to its first line: <details data-role="folded"> whose summary is the first line and a
// "more" cue, the rest shown when opened (no script: the browser's own disclosure). A one-line text is a
// plain span. Used where a long message (a graph break's reason) would fill the side panel.
import { h } from "./dom.js";

/** `text` as a span when it is one line, else folded to its first line (or to `head` where given); `cls` classes it. */
export function folded(text, cls = "", head = "") {
  const s = String(text || "");
  const cut = s.indexOf("\n");
  const first = cut < 0 ? s : s.slice(0, cut);
  // `head` (Python's telling line, e.g. GraphBreak.summary) other than the first line: shown, the whole text folded
  const own = head && head.trim() !== first.trim();
  if (cut < 0 && !own) return h("span", { class: cls }, s);
  const rest = own ? s : s.slice(cut + 1).replace(/^\n+/, "");
  return h(
    "details",
    { class: "il-fold", "data-role": "folded" },
    h("summary", {}, h("span", { class: cls }, own ? head : first), " ", h("span", { class: "il-fold-more" }, "more")),
    h("div", { class: `${cls} il-fold-rest` }, rest),
  );
}
