// Search: one row per target (a source line in a loop is one row with a count), Enter or click goes there.

import { plural, search } from "./data.js";
import { h } from "./dom.js";

export function createSearch(ctx) {
  const { store, report } = ctx;
  const input = h("input", {
    class: "il-search-input",
    type: "search",
    placeholder: "search kernel, op, file:line  (/)",
    title: "search fused nodes, kernels, FX ops, buffers, modules and source lines (/)",
    "aria-label": "search",
    spellcheck: "false",
  });
  const results = h("ul", { class: "il-results", hidden: true, role: "listbox" });
  const el = h("div", { class: "il-search" }, input, results);
  const multi = (report.compiles || []).length > 1;
  let hits = [];

  function show() {
    const s = store.get();
    hits = search(report, s.query, 30);
    results.replaceChildren(
      ...hits.map((x, i) => {
        const where = x.kernel || x.fused;
        const li = h(
          "li",
          {
            role: "option",
            "data-index": String(i),
            "data-fused": x.fused,
            "data-count": String(x.count),
            title: `${x.label}\n→ ${where} (fused node ${x.fused}${x.index >= 0 ? `, #${x.index}` : ", glue"}) in ${x.compileId}${x.count > 1 ? `\nand ${plural(x.count - 1, "other fused node")}: ${x.fusedAll.slice(1, 12).join(", ")}${x.count > 12 ? ", …" : ""}` : ""}`,
          },
          h("span", { class: "il-hit-what" }, x.what),
          h("span", { class: "il-mono il-hit-label" }, x.label),
          h(
            "span",
            { class: "il-muted il-hit-where" },
            "→ ",
            h("span", { class: "il-mono" }, where),
            x.index >= 0 ? ` #${x.index}` : "",
            multi ? ` · ${x.compileId}` : "",
          ),
          x.count > 1
            ? h(
                "span",
                { class: "il-hit-count", title: "matches this many fused nodes; Enter or click goes to the first" },
                `×${x.count}`,
              )
            : null,
        );
        ctx.on(li, "mousedown", (e) => {
          e.preventDefault();
          choose(x);
        });
        return li;
      }),
    );
    if (s.query && !hits.length) results.replaceChildren(h("li", { class: "il-muted" }, "no match"));
    results.hidden = !s.query;
  }
  function choose(x) {
    results.hidden = true;
    ctx.actions.selectIn(x.compileId, x.fused);
  }
  ctx.on(input, "input", () => {
    store.set({ query: input.value });
    show();
  });
  ctx.on(input, "keydown", (e) => {
    if (e.key === "Enter" && hits.length) {
      choose(hits[0]);
      e.preventDefault();
    }
    if (e.key === "Escape") {
      input.value = "";
      store.set({ query: "" });
      results.hidden = true;
      ctx.root.focus();
    }
    e.stopPropagation();
  });
  ctx.on(input, "blur", () => ctx.later(() => (results.hidden = true), 150));
  ctx.on(input, "focus", () => {
    if (store.get().query) show();
  });
  return {
    el,
    input,
    update(_s, changed) {
      if (changed.has("compileId")) results.hidden = true; // its rows were picked for the previous compile's view
    },
  };
}
