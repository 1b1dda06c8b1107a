// Draws a laid-out graph as SVG (every label a text node) with pan and zoom, and its minimap.
// Pan: drag, the wheel, the keyboard (panBy); zoom: ctrl/cmd + wheel (and trackpad pinch), +/- buttons, fit.
// Embedded in a document (the notebook widget), a plain wheel scrolls the document until the user clicks into the
// graph, then pans it while the focus stays in the lens (as maps embedded in a page do): see GraphCanvas.wheelPans.
// A pan stops at the graph's edge (GraphCanvas.bounded): there the wheel goes on to scroll the page, as a scroller
// nested in a page hands the wheel to the page at its end.
import { fitText, visible } from "./text.js";

/** The most a graph opens at: labels (11-12 px in graph units) at their own size, >= 11 px. */
export const READABLE_ZOOM = 1;
/** The least a graph opens at (labels >= 8.8 px): a graph that fits its pane at this zoom or more opens whole, one
 * whose width fits opens at its width, and a wider one opens at this zoom from its left edge (openingView). */
export const WHOLE_ZOOM = 0.8;
/** The items the overview must not open over (a module's cluster frame is no such item: it spans the graph). */
const COVERABLE = new Set(["node", "group", "kgroup", "fx", "input", "output"]);

const SVG = "http://www.w3.org/2000/svg";
/** A printed graph (lens.css @media print) takes the page's width and one page's height at most: on Letter or A4 at
 * the default margins about 672 x 860 CSS px. It is printed whole where its labels (11-12 px in graph units) stay
 * >= 7 px so (PRINT_MIN_ZOOM), else as the part of it on screen (the reader's own zoom and pan). */
export const PRINT_BOX = { width: 672, height: 860 };
export const PRINT_MIN_ZOOM = 0.6;

/** A wheel event's move in pixels: [dx, dy] (a wheel in lines, as Firefox's, at 16 px a line; in pages, the pane's
 * size). */
export function wheelPixels(e, pane) {
  const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? null : 1;
  return unit ? [e.deltaX * unit, e.deltaY * unit] : [e.deltaX * (pane.width || 600), e.deltaY * (pane.height || 400)];
}

export function svgEl(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

function pathFor(pts) {
  if (!pts.length) return "";
  let d = `M${pts[0][0].toFixed(1)},${pts[0][1].toFixed(1)}`;
  for (let i = 1; i + 2 < pts.length; i += 3) {
    d += ` C${pts[i][0].toFixed(1)},${pts[i][1].toFixed(1)} ${pts[i + 1][0].toFixed(1)},${pts[i + 1][1].toFixed(1)} ${pts[i + 2][0].toFixed(1)},${pts[i + 2][1].toFixed(1)}`;
  }
  return d;
}

function arrowHead(from, to) {
  const dx = to[0] - from[0],
    dy = to[1] - from[1];
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len,
    uy = dy / len,
    w = 3.6;
  const bx = to[0] - ux * 8,
    by = to[1] - uy * 8;
  return `${to[0].toFixed(1)},${to[1].toFixed(1)} ${(bx - uy * w).toFixed(1)},${(by + ux * w).toFixed(1)} ${(bx + uy * w).toFixed(1)},${(by - ux * w).toFixed(1)}`;
}

const lexLess = (p, q) => {
  const i = p.findIndex((v, j) => v !== q[j]);
  return i >= 0 && p[i] < q[i];
};

/**
 * The first view of a graph in a `W` x `H` pane (`pad` px margins): returns {k, x, y} (zoom and translation). One
 * rule for every graph of every page (the lens, a job's rank, the compare page; the fusion and FX views), as a
 * document or a graph viewer opens (tlparse's page, Model Explorer): at the graph's first rows, as much of its
 * width as stays readable, its left edge never cut. `boxes` are the graph's items ({x, y, w, h}; `frame`: a
 * multi-node kernel's cluster, `stub`: a graph input or output); the fused-node boxes (neither) are what the view is
 * for, the stubs only lead to them; `first` is the first fused-node box in execution order.
 * - the zoom: the whole graph, centred, where it fits at WHOLE_ZOOM (0.8, labels >= 8.8 px) or more (never above
 *   READABLE_ZOOM 1); else the graph's width where that fits at WHOLE_ZOOM or more; else WHOLE_ZOOM;
 * - vertically: the top of the graph, or 40 graph units above `first` when the first box is further down, moved up
 *   so that no box is cut at the top;
 * - sideways: centred on the graph where its width fits; else centred on the opening rows' items (those in the
 *   visible height) where they fit; else the window nearest the rows' left edge among those that show every
 *   fused-node box of the rows whole (where any window can), cut no fused-node box on the left, show `first`, and
 *   cut the fewest stubs on the left (the job page opened a 1361-unit forward in an 842 px pane on its right half,
 *   the parameters at the left out of view and their edges leading off the pane).
 */
export function openingView(boxes, first, { W, H, pad = 16, width, height }) {
  const whole = Math.min(READABLE_ZOOM, (W - 2 * pad) / width, (H - 2 * pad) / height);
  if (whole >= WHOLE_ZOOM) return { k: whole, x: (W - width * whole) / 2, y: (H - height * whole) / 2 };
  const k = Math.max(WHOLE_ZOOM, Math.min(READABLE_ZOOM, (W - 2 * pad) / width));
  const viewW = (W - 2 * pad) / k,
    viewH = (H - 2 * pad) / k;
  let top = first && first.y + first.h > viewH ? Math.max(0, first.y - 40) : 0;
  top = Math.max(0, Math.min(top, height - viewH));
  for (let i = 0; i < 8; i++) {
    // never cut a box at the top
    const over = boxes.filter((b) => !b.frame && b.y < top && b.y + b.h > top - pad / k);
    if (!over.length) break;
    top = Math.max(0, Math.min(...over.map((b) => b.y)) - 4);
  }
  const y = pad - top * k;
  if (width <= viewW + 0.5) return { k, x: (W - width * k) / 2, y };
  const rows = boxes.filter((b) => b.y < top + viewH + pad / k && b.y + b.h > top - pad / k);
  const items = rows.filter((b) => !b.frame);
  if (!items.length) return { k, x: pad, y };
  const span = (list) => [Math.min(...list.map((b) => b.x)), Math.max(...list.map((b) => b.x + b.w))];
  const [x0, x1] = span(items);
  if (x1 - x0 <= (W - 4) / k) return { k, x: W / 2 - ((x0 + x1) / 2) * k, y };
  const nodes = items.filter((b) => !b.stub);
  const stubs = items.filter((b) => b.stub);
  const [n0, n1] = nodes.length ? span(nodes) : [0, 0];
  const nodesFit = nodes.length > 0 && n1 - n0 <= (W - 4) / k;
  const onGraph = (a) => Math.max(x0, Math.min(a, width - viewW));
  const isWhole = (b, lo, hi) => b.x >= lo - 0.5 && b.x + b.w <= hi + 0.5;
  const cutLeft = (list, lo) => list.filter((b) => b.x < lo - 0.5 && b.x + b.w > lo).length;
  // candidate windows: at the rows' left edge; starting at an item's left edge or just after its right edge (in a
  // gap); ending at an item's right edge or just before its left edge
  const starts = new Set([x0]);
  for (const b of items)
    for (const a of [b.x, b.x + b.w + pad / k + 1, b.x + b.w - viewW, b.x - pad / k - 1 - viewW])
      starts.add(onGraph(a));
  let best = null;
  for (const a of starts) {
    const lo = a - pad / k,
      hi = a + viewW + pad / k;
    const score = [
      nodesFit && !(n0 >= lo - 0.5 && n1 <= hi + 0.5) ? 1 : 0,
      cutLeft(nodes, lo),
      first && !isWhole(first, lo, hi) ? 1 : 0,
      cutLeft(stubs, lo),
      a,
    ];
    if (!best || lexLess(score, best.score)) best = { a, score };
  }
  return { k, x: pad - best.a * k, y };
}

/** The graphs drawn on the page: printGraphs draws each for print. */
const live = new Set();
/** The graphs whose layout is awaited (layoutAwaited): each a function that lays its graph out on this thread and
 * draws it, now, where it can (LayoutEngine.layoutNow). */
const awaited = new Set();

/** `drawNow` is called by a print while the graph's layout is awaited; the returned function says it came. */
export function awaitLayout(drawNow) {
  awaited.add(drawNow);
  return () => awaited.delete(drawNow);
}

/**
 * Lay `dot` out with `engine` (a promise of a LayoutEngine) in its worker, then `draw(layout)` (synchronous) if still
 * `current()`; resolves to whether it was drawn. A print meanwhile (printGraphs) lays it out on this thread and draws it at
 * once, where it can (LayoutEngine.layoutNow); the worker's answer then draws nothing more. Rejects where the layout
 * failed while still `current()` and nothing was drawn. Every page's graph is laid out through it: the lens's views
 * (app.js layoutIn) and the compare page's (compare.js drawGraph), so that each takes part in a print.
 */
export async function layoutAwaited(engine, dot, current, draw) {
  let ready = null;
  engine.then(
    (e) => (ready = e),
    () => {},
  );
  let came = false;
  let drew = false;
  const arrive = (layout) => {
    if (came) return;
    came = true;
    settled();
    if (!current()) return;
    draw(layout);
    drew = true;
  };
  const settled = awaitLayout(() => {
    const layout = ready && current() ? ready.layoutNow(dot) : null;
    if (layout) arrive(layout);
  });
  let layout;
  try {
    layout = await (await engine).layout(dot);
  } catch (e) {
    settled();
    if (!came && current()) throw e;
    return drew;
  }
  arrive(layout);
  return drew;
}

/**
 * Draw every graph on the page for print (`on`: GraphCanvas.printView) or back as on screen. The standalone page calls
 * it on beforeprint and afterprint (index.js mount): the browser's Print, chromium --headless --print-to-pdf. A print
 * cannot wait for the layout worker (the page is printed once beforeprint's listeners return): a graph still laid
 * out there is laid out and drawn on this thread first, where Graphviz is made here (else it prints "laying out…").
 */
export function printGraphs(on) {
  if (on)
    for (const drawNow of [...awaited])
      try {
        drawNow();
      } catch (e) {
        console.error("inductor_lens: a graph could not be laid out for print", e);
      }
  for (const canvas of live) canvas.printView(on);
}

export class GraphCanvas {
  /**
   * @param {HTMLElement} host element the SVG fills
   * @param {(item, event) => void} onItem called when a box is clicked
   * @param {{embedded?: boolean}} options embedded: the graph lies in a scrolling document (the notebook widget)
   */
  constructor(host, onItem, options = {}) {
    this.host = host;
    this.onItem = onItem;
    this.embedded = !!options.embedded;
    this.engaged = false; // embedded: the user clicked into the graph (and the focus has not left the lens since)
    this.svg = svgEl("svg", { class: "il-svg", role: "img" }, host);
    this.viewport = svgEl("g", { class: "il-viewport" }, this.svg);
    this.t = { k: 1, x: 0, y: 0 };
    this.size = { width: 0, height: 0 };
    this.byId = new Map();
    this.itemEls = new Map();
    this.listeners = new Set(); // called after every move (the minimap follows)
    // The pane's size, kept by a ResizeObserver (told after each layout) so that a click's reveal() and the
    // minimap never force a layout of the page the click just changed; measured when not known yet.
    this.paneSize = null;
    // The opening view while it is the one on screen ({firstId, W, H}: open()), else null: the user panned, zoomed or
    // clicked in the graph, or a selection was brought into view. A pane resized meanwhile (the window narrowed, the
    // panel dragged) opens the graph again for its new size (a page opened at 1600 px and narrowed to 1280 kept a
    // view that cut the right-hand boxes); never in print, whose view is printView's.
    this.opening = null;
    this.ro =
      typeof ResizeObserver === "function"
        ? new ResizeObserver((entries) => {
            const e = entries[entries.length - 1];
            const b = e.borderBoxSize && e.borderBoxSize[0];
            this.paneSize = b
              ? { width: b.inlineSize, height: b.blockSize }
              : { width: e.contentRect.width, height: e.contentRect.height };
            this.reopen();
          })
        : null;
    if (this.ro) this.ro.observe(this.svg);
    const ac = (this.abort = new AbortController());
    const opt = { signal: ac.signal };
    let drag = null;
    this.svg.addEventListener(
      "pointerdown",
      (e) => {
        this.engaged = true;
        this.opening = null; // a click or a drag: the view is the user's now
        if (e.button !== 0) return;
        drag = { x: e.clientX, y: e.clientY, tx: this.t.x, ty: this.t.y, moved: false, id: e.pointerId };
      },
      opt,
    );
    this.svg.addEventListener(
      "pointermove",
      (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x,
          dy = e.clientY - drag.y;
        if (!drag.moved && Math.hypot(dx, dy) < 4) return;
        if (!drag.moved) {
          drag.moved = true;
          this.svg.setPointerCapture(drag.id);
          this.svg.classList.add("il-dragging");
        }
        const [x, y] = this.bounded(this.t.k, drag.tx + dx, drag.ty + dy, { x: drag.tx, y: drag.ty });
        this.setTransform(this.t.k, x, y);
      },
      opt,
    );
    const end = () => {
      if (drag && drag.moved) {
        this.svg.classList.remove("il-dragging");
        this.suppressClick = true;
        setTimeout(() => (this.suppressClick = false), 0);
      }
      drag = null;
    };
    this.svg.addEventListener("pointerup", end, opt);
    this.svg.addEventListener("pointercancel", end, opt);
    this.svg.addEventListener(
      "wheel",
      (e) => {
        if (e.ctrlKey || e.metaKey) {
          e.preventDefault();
          const r = this.svg.getBoundingClientRect();
          this.zoomAt(Math.exp(-e.deltaY * 0.01), e.clientX - r.left, e.clientY - r.top);
        } else if (this.wheelPans()) {
          // as a scroller nested in a page: the graph pans while it has more to show that way, up to its edge;
          // at its edge the wheel is the page's (a notebook scrolls on past the widget), never a pan into blank
          const [dx, dy] = wheelPixels(e, this.rect());
          const [x, y] = this.bounded(this.t.k, this.t.x - dx, this.t.y - dy);
          if (Math.abs(x - this.t.x) < 0.5 && Math.abs(y - this.t.y) < 0.5) return;
          e.preventDefault();
          this.setTransform(this.t.k, x, y);
        } // else the document scrolls past the graph
      },
      { signal: ac.signal, passive: false },
    );
    this.svg.addEventListener(
      "click",
      (e) => {
        if (this.suppressClick) return;
        const g = e.target.closest("[data-item]");
        if (g && this.svg.contains(g)) this.onItem(this.byId.get(g.dataset.item), e);
      },
      opt,
    );
    live.add(this);
  }

  /**
   * The part of the graph a print shows, in graph units: all of it (with a margin) where it fits PRINT_BOX at
   * PRINT_MIN_ZOOM or more, else the part on screen, kept on the graph. Null before a graph is drawn.
   */
  printRect() {
    const { width, height } = this.size;
    if (!width || !height) return null;
    const pad = 12;
    const whole = { x: -pad, y: -pad, w: width + 2 * pad, h: height + 2 * pad };
    if (Math.min(PRINT_BOX.width / whole.w, PRINT_BOX.height / whole.h) >= PRINT_MIN_ZOOM) return whole;
    const v = this.visibleRect();
    const x = Math.max(-pad, Math.min(v.x, width + pad - v.w)),
      y = Math.max(-pad, Math.min(v.y, height + pad - v.h));
    return { x, y, w: Math.min(v.w, whole.w), h: Math.min(v.h, whole.h) };
  }

  /** `on`: draw printRect() to the SVG's box (a viewBox in place of the pan and zoom; lens.css gives the box the
   * rect's proportions in print); off: the pan and zoom as they were. */
  printView(on) {
    const r = on ? this.printRect() : null;
    if (r) {
      this.svg.setAttribute("viewBox", `${r.x.toFixed(1)} ${r.y.toFixed(1)} ${r.w.toFixed(1)} ${r.h.toFixed(1)}`);
      this.svg.setAttribute("preserveAspectRatio", "xMidYMin meet");
      this.svg.style.setProperty("--il-print-ratio", `${r.w.toFixed(1)} / ${r.h.toFixed(1)}`);
      this.svg.style.setProperty("--il-print-width", r.w.toFixed(1));
      this.viewport.removeAttribute("transform");
      this.svg.dataset.print = "1";
    } else if (this.svg.dataset.print) {
      this.svg.removeAttribute("viewBox");
      this.svg.removeAttribute("preserveAspectRatio");
      this.svg.style.removeProperty("--il-print-ratio");
      this.svg.style.removeProperty("--il-print-width");
      delete this.svg.dataset.print;
      this.setTransform(this.t.k, this.t.x, this.t.y, true);
    }
  }

  /** Whether a plain wheel pans the graph: always on a page of its own (the lens is the page: nothing to scroll
   * past); embedded, only after a click into the graph while the focus stays in the lens (the focusable element
   * around the graph, the lens's root), so that the wheel scrolls a notebook past the widget until then. */
  wheelPans() {
    if (!this.embedded) return true;
    if (this.engaged) {
      const scope = this.svg.parentElement && this.svg.parentElement.closest("[tabindex]");
      const active = this.svg.ownerDocument.activeElement;
      this.engaged = !!scope && !!active && scope.contains(active);
    }
    return this.engaged;
  }

  /** Show zoom `k` at translation (x, y). Any move but the opening's own (`opening`: open(), printView's restore)
   * ends the opening (this.opening): a pan, a zoom, a fit, a selection brought into view. */
  setTransform(k, x, y, opening = false) {
    if (!opening) this.opening = null;
    this.t = { k, x, y };
    this.viewport.setAttribute("transform", `translate(${x.toFixed(1)},${y.toFixed(1)}) scale(${k.toFixed(4)})`);
    this.svg.dataset.zoom = k.toFixed(3);
    for (const fn of this.listeners) fn(this.t);
  }

  /** Call `fn(transform)` after every move; returns the unsubscribe function. */
  onMove(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Forget the pane's kept size: the next rect() measures it (the page around it changed since, e.g. a legend
   * below it got its content, and the ResizeObserver has not told yet). */
  remeasure() {
    this.paneSize = null;
  }

  /** The pane's {width, height} in px: as last observed, else measured (a hidden pane measures 0 x 0). */
  rect() {
    const p = this.paneSize;
    if (p && p.width && p.height) return p;
    const r = this.svg.getBoundingClientRect();
    return { width: r.width, height: r.height };
  }

  /** The visible part of the graph, in graph coordinates. */
  visibleRect() {
    const r = this.rect();
    const { k, x, y } = this.t;
    return { x: -x / k, y: -y / k, w: (r.width || 600) / k, h: (r.height || 400) / k };
  }

  /** Move by (dx, dy) screen pixels, up to the graph's edge (keyboard pan). */
  panBy(dx, dy) {
    const [x, y] = this.bounded(this.t.k, this.t.x + dx, this.t.y + dy);
    this.setTransform(this.t.k, x, y);
  }

  /** Centre the view on graph point (gx, gy), kept on the graph (minimap clicks). */
  centreOn(gx, gy) {
    const r = this.rect();
    const k = this.t.k;
    const [x, y] = this.clamp(k, (r.width || 600) / 2 - gx * k, (r.height || 400) / 2 - gy * k);
    this.setTransform(k, x, y);
  }

  zoomAt(f, cx, cy) {
    const k = Math.min(4, Math.max(0.05, this.t.k * f));
    const r = k / this.t.k;
    this.setTransform(k, cx - (cx - this.t.x) * r, cy - (cy - this.t.y) * r);
  }

  zoomBy(f) {
    const r = this.rect();
    this.zoomAt(f, r.width / 2, r.height / 2);
  }

  /** Show all of the graph; `topAligned` fits the width only when the graph is very tall. */
  fit(topAligned = false) {
    const r = this.rect();
    const W = r.width || 600,
      H = r.height || 400,
      pad = 16;
    const { width, height } = this.size;
    if (!width || !height) return;
    let k = Math.min(1, (W - 2 * pad) / width, (H - 2 * pad) / height);
    if (topAligned && k < 0.45) {
      k = Math.min(1, (W - 2 * pad) / width);
      this.setTransform(k, (W - width * k) / 2, pad);
      return;
    }
    this.setTransform(k, (W - width * k) / 2, (H - height * k) / 2);
  }

  /**
   * The translations that keep the graph on screen at zoom `k`: [[x0, x1], [y0, y1]]. Along an axis where the
   * graph is smaller than the view, only the one that centres it; otherwise those that leave no empty margin
   * wider than `pad` on either side.
   */
  onGraph(k, pad = 16) {
    const r = this.rect();
    const range = (g, V) => (g + 2 * pad <= V ? [(V - g) / 2, (V - g) / 2] : [V - g - pad, pad]);
    return [range(this.size.width * k, r.width || 600), range(this.size.height * k, r.height || 400)];
  }

  /** Keep the graph on screen (onGraph): the translation (x, y) at zoom `k` moved to the nearest that does. */
  clamp(k, x, y, pad = 16) {
    const [[x0, x1], [y0, y1]] = this.onGraph(k, pad);
    return [Math.min(x1, Math.max(x0, x)), Math.min(y1, Math.max(y0, y))];
  }

  /**
   * A pan from `from` (the translation now) to (x, y) at zoom `k`, stopped at the graph's edge (onGraph): never
   * further off the graph than it was (a view a zoom left off-centre is not snapped back by a pan), so that a pan
   * that would only show blank moves nothing (the wheel then scrolls the page).
   */
  bounded(k, x, y, from = this.t) {
    const [[x0, x1], [y0, y1]] = this.onGraph(k);
    const keep = (v, lo, hi, at) => Math.min(Math.max(hi, at), Math.max(Math.min(lo, at), v));
    return [keep(x, x0, x1, from.x), keep(y, y0, y1, from.y)];
  }

  /** The first view of a graph (`openingView`: the rule of every page); `firstId`: its first box in execution order. */
  open(firstId) {
    const r = this.rect();
    const { width, height } = this.size;
    if (!width || !height) return;
    const boxes = [];
    for (const it of this.byId.values())
      if (it.box)
        boxes.push({ ...it.box, frame: it.type === "cluster", stub: it.type === "input" || it.type === "output" });
    const b = this.byId.get(firstId);
    const v = openingView(boxes, b && b.box, { W: r.width || 600, H: r.height || 400, pad: 16, width, height });
    const [x, y] = this.clamp(v.k, v.x, v.y);
    this.setTransform(v.k, x, y, true);
    this.opening = { firstId, W: r.width, H: r.height };
  }

  /** The pane was resized: open the graph again for its new size while the opening view is the one on screen
   * (this.opening), the pane shown (a hidden view's pane measures 0) and the page not printed. */
  reopen() {
    const o = this.opening;
    const p = this.paneSize;
    if (!o || !p || !p.width || !p.height || this.svg.dataset.print) return;
    if (typeof matchMedia === "function" && matchMedia("print").matches) return;
    if (Math.abs(p.width - o.W) < 0.5 && Math.abs(p.height - o.H) < 0.5) return;
    this.open(o.firstId);
  }

  /** Whether any part of box `id` is in the view. */
  shows(id) {
    const b = this.byId.get(id);
    if (!b || !b.box) return false;
    const r = this.rect();
    const { k, x, y } = this.t;
    const sx = b.box.x * k + x,
      sy = b.box.y * k + y;
    return sx + b.box.w * k > 0 && sy + b.box.h * k > 0 && sx < r.width && sy < r.height;
  }

  /** Scroll so that box `id` is visible (centered if it was off screen). */
  reveal(id) {
    this.opening = null; // a selection shown: the view is the user's (a resize keeps it)
    const b = this.byId.get(id);
    if (!b || !b.box) return;
    const r = this.rect();
    const { k, x, y } = this.t;
    const sx = b.box.x * k + x,
      sy = b.box.y * k + y,
      sw = b.box.w * k,
      sh = b.box.h * k;
    if (sx >= 0 && sy >= 0 && sx + sw <= r.width && sy + sh <= r.height) return;
    const kk = Math.max(k, 0.6);
    const [nx, ny] = this.clamp(
      kk,
      r.width / 2 - (b.box.x + b.box.w / 2) * kk,
      r.height / 2 - (b.box.y + b.box.h / 2) * kk,
    );
    this.setTransform(kk, nx, ny);
  }

  /**
   * Bring a frame (a kernel's cluster of FX ops, `id`) into view where it is not whole in it, as a graph opens
   * (openingView): at the view's zoom where readable, else WHOLE_ZOOM, zoomed out (not below WHOLE_ZOOM) where
   * its width then fits; along each axis centred where it fits, else from its start: its left edge and its title
   * (at its top) never cut (the FX view opened a selected kernel's 704 px cluster by one of its ops, centred:
   * 44% of it and its title's start off the pane's left edge).
   */
  revealFrame(id, pad = 16) {
    this.opening = null;
    const b = this.byId.get(id);
    if (!b || !b.box) return;
    const r = this.rect();
    const W = r.width || 600,
      H = r.height || 400;
    const { k, x, y } = this.t;
    const f = b.box;
    const sx = f.x * k + x,
      sy = f.y * k + y;
    if (sx >= 0 && sy >= 0 && sx + f.w * k <= W && sy + f.h * k <= H) return;
    const kk = Math.max(WHOLE_ZOOM, Math.min(Math.max(k, WHOLE_ZOOM), (W - 2 * pad) / f.w));
    const at = (start, size, V) => (size * kk + 2 * pad <= V ? (V - size * kk) / 2 - start * kk : pad - start * kk);
    const [nx, ny] = this.clamp(kk, at(f.x, f.w, W), at(f.y, f.h, H), pad);
    this.setTransform(kk, nx, ny);
  }

  /**
   * Draw a layout. `items` maps layout node ids to {type, lines, kind, name, kernel...};
   * `edges` are [{from, to, buffers}]; `clusters` maps cluster names to {kernel, fused, kind}.
   */
  draw(layout, items, edges, clusters = new Map(), decorate = () => {}) {
    this.viewport.replaceChildren();
    this.byId = new Map();
    this.itemEls = new Map();
    this.size = { width: layout.width, height: layout.height };
    const gClusters = svgEl("g", { class: "il-clusters" }, this.viewport);
    for (const c of layout.clusters) {
      const meta = clusters.get(c.name);
      if (!meta) continue;
      const g = svgEl(
        "g",
        {
          class: `il-cluster kind-${meta.kind}`,
          "data-cluster-node": meta.fused,
          "data-kernel": meta.kernel,
          "data-item": "c:" + c.name,
        },
        gClusters,
      );
      svgEl("rect", { x: c.x, y: c.y, width: c.w, height: c.h, rx: 6 }, g);
      const t = svgEl("text", { x: c.x + 8, y: c.y + 14, class: "il-cluster-label" }, g);
      const label = visible(meta.label || meta.kernel || meta.fused);
      const room = Math.max(8, Math.floor((c.w - 16) / 6.7)); // 11px monospace
      t.textContent = label.length > room ? label.slice(0, room - 1) + "…" : label;
      svgEl("title", {}, g).textContent = label;
      if (meta.shared) g.dataset.sharedKernel = meta.kernel;
      this.byId.set("c:" + c.name, { type: "cluster", ...meta, box: c });
    }
    const gEdges = svgEl("g", { class: "il-edges" }, this.viewport);
    const edgeMeta = new Map(edges.map((x) => [x.from + ">" + x.to, x]));
    for (const e of layout.edges) {
      const g = svgEl("g", { class: "il-edge", "data-from": e.tail, "data-to": e.head }, gEdges);
      const pts = e.pts;
      svgEl("path", { d: pathFor(pts) }, g);
      if (e.end && pts.length) svgEl("polygon", { points: arrowHead(pts[pts.length - 1], e.end) }, g);
      const meta = edgeMeta.get(e.tail + ">" + e.head);
      if (meta && meta.buffers.length) svgEl("title", {}, g).textContent = visible(meta.buffers.join(", "));
    }
    const gNodes = svgEl("g", { class: "il-nodes" }, this.viewport);
    const chars = this.charWidths(gNodes);
    for (const [id, box] of Object.entries(layout.nodes)) {
      const it = items.get(id);
      if (!it) continue;
      const cls = ["il-item", `il-${it.type}`, it.kind ? `kind-${it.kind}` : "", it.stub ? "il-stub" : ""].join(" ");
      const g = svgEl("g", { class: cls, "data-item": id }, gNodes);
      decorate(g, it);
      if (it.type === "input" || it.type === "output") {
        svgEl("ellipse", { cx: box.x + box.w / 2, cy: box.y + box.h / 2, rx: box.w / 2, ry: box.h / 2 }, g);
      } else {
        svgEl(
          "rect",
          { x: box.x, y: box.y, width: box.w, height: box.h, rx: it.type === "group" || it.type === "kgroup" ? 10 : 4 },
          g,
        );
        if (it.type === "node" || it.type === "group" || it.type === "kgroup")
          svgEl("rect", { class: "il-stripe", x: box.x, y: box.y, width: 5, height: box.h, rx: 2 }, g);
        // a box that writes a tensor in place: a folded corner, above the first line's text
        if (it.inPlace) {
          const r = box.x + box.w;
          svgEl("path", { class: "il-corner", d: `M${r - 9},${box.y} L${r},${box.y} L${r},${box.y + 9} Z` }, g);
        }
      }
      const centered = it.type === "input" || it.type === "output";
      it.lines.forEach((line, i) => {
        const t = svgEl(
          "text",
          {
            x: centered ? box.x + box.w / 2 : box.x + 12,
            y: box.y + (centered ? box.h / 2 - (it.lines.length - 1) * 7.5 + 4 + i * 15 : 19 + i * 15),
            class: i === 0 ? "il-t1" : "il-t2",
            "text-anchor": centered ? "middle" : "start",
          },
          g,
        );
        // the layout sized the box from an estimate of the font: a line the real font draws wider is cut to fit,
        // a stub's at its start (its end says which: `fc1.weight.grad`, `addmm[1] (saved)`)
        // (a stub's one line is drawn in the other lines' font, .il-stub text: measured with the first line's wider
        // mono font, "model.norm.weight" was cut to "…del.norm.weight" in an oval made for it, nu25 L1)
        const ch = chars[i === 0 && !it.stub ? 0 : 1];
        const room = ch ? Math.floor((box.w - (centered ? 8 : 16)) / ch) : 0;
        t.textContent = fitText(visible(line), room, centered);
      });
      svgEl("title", {}, g).textContent = visible(
        [it.title || it.lines.join("\n"), it.inPlace || ""].join("\n").trim(),
      );
      this.byId.set(id, { ...it, box });
      this.itemEls.set(id, g);
    }
  }

  /** The width of a character of a box's first line and of its other lines as this page draws them, measured once
   * in `parent` (an element of the drawn SVG); [0, 0] where nothing is laid out (a canvas drawn hidden). */
  charWidths(parent) {
    if (this.chars) return this.chars;
    const probe = (cls, text) => {
      const t = svgEl("text", { class: cls }, svgEl("g", { class: "il-item" }, parent));
      t.textContent = text;
      const w = t.getComputedTextLength ? t.getComputedTextLength() / text.length : 0;
      t.parentNode.remove();
      return w;
    };
    // the first line is monospace (every character as wide); the others' text, an average line of ops
    const chars = [
      probe("il-t1", "x".repeat(40)),
      probe("il-t2", "var_mean · add · rsqrt · permute · Reshape · 2 ops"),
    ];
    if (chars[0] && chars[1]) this.chars = chars; // kept once the page has laid the text out
    return chars;
  }

  /** Set `data-<attr>="true"` on exactly the boxes whose ids are in `ids`. */
  flag(attr, ids) {
    const name = "data-" + attr;
    for (const el of this.viewport.querySelectorAll(`[${name}]`)) el.removeAttribute(name);
    for (const id of ids) {
      const el = this.itemEls.get(id);
      if (el) el.setAttribute(name, "true");
    }
  }

  /** Toggle a class on the boxes whose ids are in `ids`. */
  mark(cls, ids) {
    for (const el of this.viewport.querySelectorAll("." + cls)) el.classList.remove(cls);
    for (const id of ids) {
      const el = this.itemEls.get(id);
      if (el) el.classList.add(cls);
      else for (const c of this.viewport.querySelectorAll(`[data-item="${CSS.escape(id)}"]`)) c.classList.add(cls);
    }
  }

  destroy() {
    this.abort.abort();
    if (this.ro) this.ro.disconnect();
    this.listeners.clear();
    live.delete(this);
    this.svg.remove();
  }
}

/**
 * The overview of a GraphCanvas (data-role="minimap"): every box as a small rectangle, the visible part
 * as a frame; click or drag in it to move the view there.
 */
export class Minimap {
  constructor(host, canvas) {
    this.canvas = canvas;
    this.el = document.createElement("div");
    this.el.className = "il-minimap";
    this.el.dataset.role = "minimap";
    this.el.title = "overview: click or drag to move the view";
    this.svg = svgEl("svg", { class: "il-minimap-svg", preserveAspectRatio: "xMidYMid meet" }, this.el);
    this.boxes = svgEl("g", { class: "il-minimap-boxes" }, this.svg);
    this.frame = svgEl("rect", { class: "il-minimap-view", "data-role": "minimap-view" }, this.svg);
    // folded, the overview is a small button in the pane's corner: at a graph's opening where it would cover a box
    // of the view (a 1000 x 700 cell's column runs under it), or when the user folds it
    const button = (cls, role, title, text) => {
      const b = Object.assign(document.createElement("button"), { type: "button", className: cls, title });
      b.dataset.role = role;
      b.textContent = text;
      return b;
    };
    this.unfold = button("il-minimap-toggle", "minimap-unfold", "show the overview of the graph", "map");
    this.fold = button("il-minimap-fold", "minimap-fold", "hide the overview", "×");
    this.el.appendChild(this.fold);
    this.folded = false; // at the opening: whether it would cover a box
    this.chosen = null; // the user's own choice (folded or not), kept from then on
    host.appendChild(this.el);
    host.appendChild(this.unfold);
    const ac = (this.abort = new AbortController());
    const choose = (folded) => (e) => {
      e.stopPropagation();
      this.chosen = folded;
      this.show();
    };
    this.fold.addEventListener("pointerdown", (e) => e.stopPropagation(), { signal: ac.signal });
    this.fold.addEventListener("click", choose(true), { signal: ac.signal });
    this.unfold.addEventListener("click", choose(false), { signal: ac.signal });
    let dragging = false;
    const go = (e) => {
      const m = this.svg.getScreenCTM();
      if (!m) return;
      const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse());
      this.canvas.centreOn(p.x, p.y);
    };
    this.el.addEventListener(
      "pointerdown",
      (e) => {
        dragging = true;
        this.el.setPointerCapture(e.pointerId);
        go(e);
        e.stopPropagation();
      },
      { signal: ac.signal },
    );
    this.el.addEventListener(
      "pointermove",
      (e) => {
        if (dragging) go(e);
      },
      { signal: ac.signal },
    );
    const stop = () => {
      dragging = false;
    };
    this.el.addEventListener("pointerup", stop, { signal: ac.signal });
    this.el.addEventListener("pointercancel", stop, { signal: ac.signal });
    this.el.addEventListener("wheel", (e) => e.stopPropagation(), { signal: ac.signal });
    this.unsub = canvas.onMove(() => this.follow());
  }

  /** Redraw the boxes after the canvas drew a new layout. */
  draw() {
    const { width, height } = this.canvas.size;
    this.svg.setAttribute("viewBox", `0 0 ${Math.max(1, width)} ${Math.max(1, height)}`);
    const parts = [];
    for (const [id, it] of this.canvas.byId) {
      if (!it.box || it.type === "cluster") continue;
      const b = it.box;
      const r = svgEl("rect", {
        x: b.x,
        y: b.y,
        width: b.w,
        height: b.h,
        class: `il-mm-box kind-${it.kind || "other"}`,
      });
      r.dataset.item = id;
      parts.push(r);
    }
    this.boxes.replaceChildren(...parts);
    this.frame.setAttribute("stroke-width", String(Math.max(width, height) / 120));
    this.follow();
  }

  follow() {
    const v = this.canvas.visibleRect();
    this.frame.setAttribute("x", v.x.toFixed(1));
    this.frame.setAttribute("y", v.y.toFixed(1));
    this.frame.setAttribute("width", Math.max(1, v.w).toFixed(1));
    this.frame.setAttribute("height", Math.max(1, v.h).toFixed(1));
  }

  /** Show the minimap only when the graph does not fit the view; at a graph's opening (`opening`), folded where
   * it would cover a box of the view, unless the user chose. */
  update(opening = false) {
    const v = this.canvas.visibleRect();
    const { width, height } = this.canvas.size;
    this.needed = !!width && !(v.w >= width && v.h >= height);
    if (this.needed && opening) this.folded = this.wouldCover();
    this.show();
  }

  show() {
    const folded = this.chosen ?? this.folded;
    this.el.hidden = !this.needed || folded;
    this.unfold.hidden = !this.needed || !folded;
  }

  /** Whether the unfolded minimap would lie over an item (a fused node, a module, an input or output stub) of the
   * view as it is. */
  wouldCover() {
    // measured as it would show, unfolded: its fold button shown and the unfold one hidden (the strip below the
    // pane holds them: the legend beside them wraps otherwise, and the pane's corner moves)
    const was = [this.el.hidden, this.unfold.hidden];
    this.el.hidden = false;
    this.unfold.hidden = true;
    const host = this.canvas.svg.getBoundingClientRect(),
      m = this.el.getBoundingClientRect();
    [this.el.hidden, this.unfold.hidden] = was;
    if (!m.width || !m.height) return false;
    const x0 = m.left - host.left,
      y0 = m.top - host.top,
      x1 = x0 + m.width,
      y1 = y0 + m.height;
    const { k, x, y } = this.canvas.t;
    for (const it of this.canvas.byId.values()) {
      if (!it.box || !COVERABLE.has(it.type)) continue;
      const b = it.box,
        bx = b.x * k + x,
        by = b.y * k + y;
      if (bx + b.w * k > x0 && bx < x1 && by + b.h * k > y0 && by < y1) return true;
    }
    return false;
  }

  destroy() {
    this.abort.abort();
    this.unsub();
    this.el.remove();
    this.unfold.remove();
  }
}
