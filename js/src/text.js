// Text from a report is shown literally, and so are the characters that would make it lie:
// Unicode bidi controls (which reorder what follows them, "Trojan Source") and zero-width
// characters (invisible, so two different names look the same) become visible escapes such as
// "⟨U+202E⟩". Every piece of report text that reaches the screen goes through `visible()`:
// dom.js's h() for text children and titles, the SVG labels, the code view.

// U+061C arabic letter mark, U+200B-U+200F zero-width space/joiners and LRM/RLM, U+202A-U+202E
// embeddings/overrides, U+2060-U+2064 word joiner and invisible operators, U+2066-U+2069 isolates,
// U+FEFF zero-width no-break space (BOM)
const HIDDEN = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/** `s` as a string, with bidi controls and zero-width characters replaced by visible escapes. */
export function visible(s) {
  const t = s === null || s === undefined ? "" : String(s);
  return t.replace(HIDDEN, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/** Whether `s` holds any character that `visible()` escapes. */
export function hasHidden(s) {
  HIDDEN.lastIndex = 0;
  return HIDDEN.test(String(s || ""));
}

/**
 * `text` cut to `room` characters where the font draws it wider than its box: its head kept (a kernel's or an op's
 * name), or with `keepEnd` its end (an input's or output's name, whose end tells it apart: `…c_proj.weight.grad`,
 * `…addmm[1] (saved)`). Unchanged where it fits or no room is known.
 */
export function fitText(text, room, keepEnd = false) {
  if (!(room > 1) || text.length <= room) return text;
  return keepEnd ? `…${text.slice(text.length - (room - 1))}` : `${text.slice(0, room - 1)}…`;
}

/**
 * Sizes as the views write them: `[s77, 32]`, and where a size is symbolic the sizes seen at capture after it
 * (`[s77, 32] = [4, 32]`: a launch argument's `hint`, a saved tensor's `shape_hint`, Python's); `""` for no sizes.
 */
export function sizesText(sizes, hint) {
  if (!Array.isArray(sizes)) return "";
  const text = `[${sizes.join(", ")}]`;
  return Array.isArray(hint) && hint.length ? `${text} = [${hint.join(", ")}]` : text;
}

/** `k` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 112th. */
export function ordinal(k) {
  const teen = Math.floor(k / 10) % 10 === 1;
  const suffix = teen ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[k % 10] ?? "th");
  return `${k}${suffix}`;
}

/**
 * Where fused node `i` (0-based, as the graph's boxes number them: `#0` the first) sits among `n`, said so that it
 * cannot be read as off by one: `#4, the 5th of 5`. ("#4 of 5" for the last of five read as one short.)
 */
export function nodeNumber(i, n) {
  return `#${i}, the ${ordinal(i + 1)} of ${n}`;
}
