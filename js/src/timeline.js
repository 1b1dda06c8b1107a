// The timeline: when torch.compile() ran (it only wraps), what call triggered each compile,
// and each compile's phases as a Gantt chart on one time axis.

import { fmtAxis, fmtUs, frameLabel } from "./data.js";
import { h } from "./dom.js";

// Inductor runs dozens of tiny graph passes ("pass.post_grad_passes.*"): hidden unless asked for.
const isPass = (p) => String(p.name).startsWith("pass.");

/**
 * Draw the timeline into `el`. `state` is the lens's: {compileId, showPasses, timelineAll}; `actions`:
 * {selectCompile(id), set(patch)}. The axis spans the selected compile (its trigger and phases) unless
 * `timelineAll`, when it spans the whole capture. Returns the cleanup (the axis's resize observer).
 */
export function renderTimeline(el, report, state, actions) {
  el.replaceChildren();
  const currentId = state.compileId;
  const compiles = report.compiles || [];
  const calls = report.compile_calls || [];
  const resets = report.resets || []; // the user's torch.compiler.reset() calls (Report.resets)
  // the frames dynamo traced that made no compile, where the capture saw when (EmptyFrame.time_us): a frame it
  // could not trace and ran eagerly is the only sign on the axis that dynamo ran at all
  const frames = (report.empty_frames || []).filter((f) => f.time_us != null);
  // where dynamo gave up recompiling a frame (Report.recompile_limits): its later calls that fit none of its
  // compiles ran eagerly. Drawn in both spans: without it the frame's last compile reads as serving every later call
  const limits = report.recompile_limits || [];
  let t0 = Infinity,
    t1 = -Infinity;
  const see = (a, b = a) => {
    if (a != null) {
      t0 = Math.min(t0, a);
      t1 = Math.max(t1, b);
    }
  };
  const current = compiles.find((c) => c.id === currentId) || compiles[0];
  const zoomed =
    !state.timelineAll &&
    current &&
    ((current.phases || []).length || (current.trigger && current.trigger.time_us != null));
  // the torch.compile() call that wrapped the selected compile's function (Report.wrapped_by): drawn beside the
  // compile, where it is no further before it than the compile lasts; else its row says where it is
  const wrap = current && (report.wrapped_by || {})[current.id];
  const wrapCall = wrap ? calls[wrap.call] : null;
  let wrapFar = false;
  let own = null; // the compile's own span, from its trigger to its last phase's end (the axis may add its call)
  if (zoomed) {
    see(current.trigger && current.trigger.time_us);
    for (const p of current.phases || []) see(p.start_us, p.start_us + p.duration_us);
    own = [t0, t1];
    if (wrapCall && wrapCall.time_us != null) {
      if (wrapCall.time_us >= t0 - (t1 - t0)) see(wrapCall.time_us);
      else wrapFar = true;
    }
  } else {
    for (const cc of calls) see(cc.time_us);
    for (const r of resets) see(r.time_us);
    for (const f of frames) see(f.time_us, f.time_us + (f.duration_us || 0));
    for (const l of limits) see(l.time_us);
    for (const c of compiles) {
      see(c.trigger && c.trigger.time_us);
      for (const p of c.phases || []) see(p.start_us, p.start_us + p.duration_us);
    }
  }
  if (!Number.isFinite(t0)) {
    t0 = 0;
    t1 = 1;
  }
  const from = t0; // where the drawn span starts; the axis has a margin on each side
  if (!own || !Number.isFinite(own[0])) own = [t0, t1];
  if (!zoomed) t0 = Math.min(t0, 0);
  else {
    const m = Math.max(1, (t1 - t0) * 0.02);
    t0 = from >= 0 ? Math.max(0, t0 - m) : t0 - m; // the clock starts at 0: no axis before it ("-19.1 ms")
    t1 += m;
  }
  const span = Math.max(1, t1 - t0);
  const clampT = (t) => Math.min(t1, Math.max(t0, t));
  const pct = (t) => `${(((clampT(t) - t0) / span) * 100).toFixed(3)}%`;
  const wpct = (d) => `${Math.max(0.15, (d / span) * 100).toFixed(3)}%`;

  // the answer in words, decided in Python (Report.when: rules.when_text)
  el.appendChild(h("p", { class: "il-tl-words" }, report.when || "No timing was recorded."));
  const zoomBox = h("input", { type: "checkbox", "data-role": "timeline-all" });
  zoomBox.checked = !!state.timelineAll;
  zoomBox.addEventListener("change", () => actions.set({ timelineAll: zoomBox.checked }));
  el.appendChild(
    h(
      "label",
      { class: "il-tl-passes" },
      zoomBox,
      zoomed
        ? ` whole capture (unticked, the axis spans compile ${current.id} only: ${fmtUs(own[0])} to ${fmtUs(own[1])}` +
            (own[0] > from ? `, and the torch.compile() call that wrapped it at ${fmtUs(from)})` : ")")
        : " whole capture",
    ),
  );

  const axis = h("div", { class: "il-tl-axis" });
  const stopTicks = axisTicks(axis, (n) => {
    const times = Array.from({ length: n + 1 }, (_, i) => (n ? t0 + (span * i) / n : t0));
    const labels = fmtAxis(n ? times : [t0, t1]); // one unit for the axis, from its span
    return times.map((t, i) => h("span", { class: "il-tl-tick", style: `left:${pct(t)}` }, labels[i]));
  });
  const rows = h("div", { class: "il-tl-rows" });
  // a note beside a mark: to the right of marks in the left half, to the left of marks in the right
  // half, so it never runs off the chart's right edge; the whole text is its tooltip
  const note = (t, text) => {
    const f = (t - t0) / span;
    const style =
      f > 0.5
        ? `right:calc(${((1 - f) * 100).toFixed(3)}% + 10px);max-width:calc(${(f * 100).toFixed(3)}% - 10px)`
        : `left:calc(${(f * 100).toFixed(3)}% + 10px);max-width:calc(${((1 - f) * 100).toFixed(3)}% + 50px)`;
    return h("span", { class: "il-tl-note" + (f > 0.5 ? " il-tl-note-left" : ""), style, title: text }, text);
  };
  const row = (label, cls, ...bars) =>
    h(
      "div",
      { class: "il-tl-row " + cls },
      h("div", { class: "il-tl-label" }, label),
      h("div", { class: "il-tl-track" }, ...bars),
    );

  for (const cc of zoomed ? (wrapCall ? [wrapCall] : []) : calls) {
    const far = zoomed && wrapFar; // before this axis: said, not drawn
    rows.appendChild(
      row(
        `torch.compile(${cc.target})`,
        "il-tl-call",
        far
          ? null
          : h("span", {
              class: "il-tl-mark il-tl-mark-call",
              style: `left:${pct(cc.time_us || 0)}`,
              title: `${cc.line} · backend ${cc.backend}`,
            }),
        far
          ? h(
              "span",
              { class: "il-tl-note", style: "left:0", title: wrap.text, "data-role": "timeline-call-far" },
              `at ${fmtUs(cc.time_us)}, before this axis (whole capture shows it) · ${wrap.text}`,
            )
          : note(cc.time_us || 0, `wraps only · ${cc.line}`),
      ),
    );
  }
  for (const r of zoomed ? [] : resets) {
    rows.appendChild(
      row(
        "torch.compiler.reset()",
        "il-tl-call il-tl-reset",
        h("span", {
          class: "il-tl-mark il-tl-mark-call",
          "data-role": "timeline-reset",
          style: `left:${pct(r.time_us || 0)}`,
          title: r.line,
        }),
        note(r.time_us || 0, `dynamo forgot every compile: the next call compiles again · ${r.line}`),
      ),
    );
  }
  const passes = current ? (current.phases || []).filter(isPass).length : 0;
  if (passes) {
    const box = h("input", { type: "checkbox", "data-role": "show-passes" });
    box.checked = !!state.showPasses;
    box.addEventListener("change", () => actions.set({ showPasses: box.checked }));
    el.appendChild(
      h(
        "label",
        { class: "il-tl-passes" },
        box,
        ` show Inductor's ${passes} small graph passes (pass.*). Phases are listed for the selected compile; click another compile's row to see its phases.`,
      ),
    );
  }
  const frameRow = (f) => {
    const item = row(
      `${f.compile_id} · ${f.label}`,
      "il-tl-frame",
      h("span", {
        class: "il-tl-bar depth-0",
        style: `left:${pct(f.time_us)};width:${wpct(f.duration_us || 0)}`,
        title: `${f.label}: ${fmtUs(f.duration_us || 0)} in dynamo`,
      }),
      note(f.time_us, f.what), // why it made no compile, in Python's words (EmptyFrame.what)
    );
    item.dataset.role = "timeline-frame";
    item.dataset.compile = f.compile_id;
    return item;
  };
  const limitRow = (l) => {
    const t = l.time_us;
    const item = row(
      h("span", { title: l.text }, `${l.compile_id} · ${l.label || "a frame"}: recompile limit`),
      "il-tl-frame il-tl-limit",
      t != null && t >= t0 && t <= t1
        ? h("span", { class: "il-tl-mark il-tl-mark-limit", style: `left:${pct(t)}`, title: l.text })
        : null,
      note(t != null ? clampT(t) : t1, l.text), // what it means, in Python's words (RecompileLimit.text)
    );
    item.dataset.role = "timeline-limit";
    item.dataset.compile = l.compile_id;
    return item;
  };
  // the rows with no compile, each before the first compile (with a time) that began after it; one with no time last
  const at = (e) => (e.t == null ? Infinity : e.t);
  let pending = [
    ...(zoomed ? [] : frames).map((f) => ({ t: f.time_us, draw: () => frameRow(f) })),
    ...limits.map((l) => ({ t: l.time_us, draw: () => limitRow(l) })),
  ].sort((a, b) => at(a) - at(b));
  for (const c of compiles) {
    const t = c.trigger || {};
    const before = t.time_us == null ? [] : pending.filter((e) => e.t != null && e.t <= t.time_us);
    pending = pending.filter((e) => !before.includes(e));
    for (const e of before) rows.appendChild(e.draw());
    const head = row(
      `${c.id}${c.frame ? " · " + frameLabel(c) : ""}`,
      "il-tl-compile" + (c.id === currentId ? " il-current" : ""),
      t.time_us != null && t.time_us >= t0 && t.time_us <= t1
        ? h("span", {
            class: "il-tl-mark il-tl-mark-trigger",
            style: `left:${pct(t.time_us)}`,
            title: c.why || t.kind,
          })
        : null,
      note(
        t.time_us != null ? clampT(t.time_us) : t0,
        `${t.kind || "?"}${c.why ? ": " + c.why : ""} · ${t.line || ""}`, // Compile.why, Trigger.line: Python's
      ),
    );
    head.dataset.compile = c.id;
    head.tabIndex = 0;
    head.addEventListener("click", () => actions.selectCompile(c.id));
    rows.appendChild(head);
    if (c !== current) continue;
    for (const p of (c.phases || []).filter((q) => state.showPasses || !isPass(q))) {
      rows.appendChild(
        row(
          // the event's name as torch logs it, and what it is (Phase.gloss / what, rules.phase_words)
          // (the words go to a hidden second line where they do not fit beside the name: never cut)
          h(
            "span",
            {
              class: "il-tl-named",
              style: `padding-left:${(p.depth || 0) * 12}px`,
              title: p.what ? `${p.name}: ${p.what}` : p.name,
            },
            h("span", { class: "il-tl-name" }, p.name),
            p.gloss ? h("span", { class: "il-tl-gloss" }, `\u00a0· ${p.gloss}`) : null,
          ),
          "il-tl-phase" + (c.id === currentId ? " il-current" : ""),
          h("span", {
            class: `il-tl-bar depth-${Math.min(4, p.depth || 0)}`,
            style: `left:${pct(p.start_us)};width:${wpct(p.duration_us)}`,
            title: `${p.name}: ${fmtUs(p.duration_us)}`,
          }),
          h(
            "span",
            { class: "il-tl-dur", style: `left:calc(${pct(p.start_us + p.duration_us)} + 4px)` },
            fmtUs(p.duration_us),
          ),
        ),
      );
    }
    // mode="reduce-overhead": each CUDA-graph (re-)recording of this compile, or why CUDA graphs were skipped
    // (Compile.cudagraphs; torch logs no start time for a recording, so these rows hold no bar)
    const g = c.cudagraphs;
    // skip_note: the skip said with what the graph shows (the mutated input named), made in Python
    const skip = g?.skip_note || g?.skip_reason;
    if (g && !g.used && skip)
      rows.appendChild(
        row(h("span", { title: skip }, `CUDA graphs skipped: ${skip}`), "il-tl-phase il-tl-cudagraph il-current"),
      );
    for (const r of (g && g.recordings) || []) {
      const item = row(
        h("span", { title: r.reason }, `CUDA graph recorded: ${r.reason}`),
        "il-tl-phase il-tl-cudagraph il-current",
        null,
        r.time_us != null ? h("span", { class: "il-tl-dur", style: "left:4px" }, fmtUs(r.time_us)) : null,
      );
      item.dataset.role = "timeline-cudagraph";
      rows.appendChild(item);
    }
  }
  for (const e of pending) rows.appendChild(e.draw());
  el.appendChild(h("div", { class: "il-timeline-chart" }, row("", "il-tl-axisrow", axis), rows));
  return stopTicks;
}

/** Most labels on a time axis: 5 (4 intervals), fewer where the axis is too narrow for them side by side. */
const MAX_INTERVALS = 4;
/** Room kept between two neighbouring labels (px). */
const TICK_GAP = 10;

/**
 * Fill `axis` with `ticks(n)` (the labels of n equal intervals) for the largest n <= MAX_INTERVALS whose labels,
 * each centred on its time, keep TICK_GAP px apart at the axis's width (at 1280 px in JupyterLab five labels ran
 * into each other: "-19.1 m406.2 m831.6 ms"); again whenever the axis is resized (a hidden view gets its width
 * when shown). Returns the function that stops watching.
 */
function axisTicks(axis, ticks) {
  axis.replaceChildren(...ticks(MAX_INTERVALS));
  if (typeof ResizeObserver !== "function") return () => {};
  let width = -1;
  const fit = () => {
    const w = axis.clientWidth;
    if (!w || w === width) return;
    width = w;
    for (let n = MAX_INTERVALS; n >= 0; n--) {
      axis.replaceChildren(...ticks(n));
      const widest = Math.max(...[...axis.children].map((t) => t.getBoundingClientRect().width));
      if (n === 0 || w / n >= widest + TICK_GAP) break;
    }
  };
  const ro = new ResizeObserver(fit);
  ro.observe(axis);
  return () => ro.disconnect();
}
