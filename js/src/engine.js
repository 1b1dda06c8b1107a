// Main-thread client of the layout worker: one worker per page (shared by every view),
// requests matched by id, and a cache of layouts keyed by the DOT text.

const CACHE_LIMIT = 64;
/**
 * How long (in the page's time) a layout the user waits for is left to the worker before the page looks whether its
 * clock is virtual (see clockStandsStill), and again as often while it waits.
 */
export const LATE_MS = 500;

/**
 * Whether the page's clock stands still while this thread works: a headless browser's virtual time
 * (`chromium --headless --virtual-time-budget=N` for --screenshot or --print-to-pdf; Puppeteer's and Playwright's
 * Emulation.setVirtualTimePolicy) moves only between tasks, and then as fast as it can while the page is idle: it
 * never waits for a worker, so a graph laid out in one is never drawn (15 s of virtual time passed in
 * milliseconds; a worker's 50 ms answer never came). On a real clock performance.now() moves within a few dozen
 * reads (100 us steps at most); `now` for tests.
 */
export function clockStandsStill(now = () => performance.now(), reads = 20000) {
  const t = now();
  for (let i = 0; i < reads; i++) if (now() !== t) return false;
  return true;
}

export class LayoutEngine {
  /**
   * @param {string} workerSource the text of layout-worker.js
   *
   * Two workers at most: one for what the user asked for, and one, started on the first background request,
   * for layouts made ahead (the other compiles' graphs): a user's request never waits behind them (the
   * decoder's backward graph takes seconds of dot; "Expand all" right after the page opened waited 3 s).
   */
  constructor(workerSource, { printable = false } = {}) {
    this.source = workerSource;
    this.nextId = 1;
    this.cache = new Map();
    this.fore = this.spawn();
    this.back = null;
    this.local = null; // a promise of Graphviz on this thread (here()): where the clock is virtual, or for a print
    this.made = null; // that Graphviz once made: layoutNow() lays out with it
    this.printable = printable; // the page prints (index.js mount): a late layout makes Graphviz here too
  }

  /**
   * Graphviz on the page's own thread: the worker's script run here as a classic script (a blob: URL, as the
   * worker's), which leaves {layoutWith, instanceNow, instance} for us. A promise of {layout(dot)}. `now`: its
   * WebAssembly made synchronously (instanceNow): the script's load is a fetch, for which virtual time waits, and
   * the rest settles in microtasks; else compiled by the browser on its own threads (on a real clock: prepareHere).
   */
  here({ now = true } = {}) {
    if (!this.local) {
      this.local = new Promise((resolve, reject) => {
        const url = URL.createObjectURL(new Blob([this.source], { type: "text/javascript" }));
        const script = document.createElement("script");
        const done = () => {
          script.remove();
          URL.revokeObjectURL(url);
        };
        script.onload = () => {
          done();
          const api = globalThis.__inductorLensLayout;
          delete globalThis.__inductorLensLayout;
          if (!api) return reject(new Error("the layout engine did not load on the page"));
          (now ? api.instanceNow() : api.instance()).then((viz) => {
            this.made = { layout: (dot) => api.layoutWith(viz, dot) };
            performance.mark("il:layout-here"); // tests wait on it
            resolve(this.made);
          }, reject);
        };
        script.onerror = () => {
          done();
          reject(new Error("the layout engine could not load on the page"));
        };
        script.src = url;
        document.head.appendChild(script);
      });
      this.local.catch(() => {}); // the worker's answer is still awaited
    }
    return this.local;
  }

  /**
   * A layout the user waits for (id `id` of worker `w`): where it is still unanswered after LATE_MS and the page's
   * clock is virtual, made on this thread instead (the worker's later answer is dropped). On a real clock nothing
   * changes, except on a page that prints (`printable`): there Graphviz is made on this thread too (prepareHere), so
   * that a print meanwhile can lay the graph out (layoutNow). The check costs a few dozen clock reads per LATE_MS.
   */
  watch(w, id, dot) {
    const check = () => {
      const entry = w.pending.get(id);
      if (!entry) return;
      if (typeof document === "undefined" || !clockStandsStill()) {
        if (this.printable) this.prepareHere();
        entry.late = setTimeout(check, LATE_MS);
        return;
      }
      this.here().then(
        (local) => {
          const p = w.pending.get(id);
          if (!p) return;
          w.pending.delete(id);
          try {
            p.resolve({ ...local.layout(dot), here: true });
          } catch (e) {
            p.reject(e);
          }
        },
        () => {},
      );
    };
    w.pending.get(id).late = setTimeout(check, LATE_MS);
  }

  spawn() {
    const url = URL.createObjectURL(new Blob([this.source], { type: "text/javascript" }));
    const worker = new Worker(url);
    URL.revokeObjectURL(url);
    const pending = new Map();
    worker.onmessage = (ev) => {
      const { id, layout, error } = ev.data;
      const p = pending.get(id);
      if (!p) return;
      pending.delete(id);
      clearTimeout(p.late);
      if (error) p.reject(new Error(error));
      else p.resolve(layout);
    };
    worker.onerror = (ev) => {
      const err = new Error(`layout worker failed: ${ev.message || "unknown error"}`);
      for (const p of pending.values()) {
        clearTimeout(p.late);
        p.reject(err);
      }
      pending.clear();
    };
    return { worker, pending };
  }

  /**
   * Lay out a DOT graph; resolves to {width, height, nodes, edges, clusters, ms}. `background`: a layout
   * made ahead of need, on the second worker.
   */
  layout(dot, { background = false } = {}) {
    const hit = this.cache.get(dot);
    if (hit) {
      this.cache.delete(dot); // refresh LRU position
      this.cache.set(dot, hit);
      return hit;
    }
    const w = background ? (this.back = this.back || this.spawn()) : this.fore;
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => w.pending.set(id, { resolve, reject, dot }));
    w.worker.postMessage({ id, dot });
    if (!background) this.watch(w, id, dot);
    this.cache.set(dot, promise);
    promise.then(
      (layout) => (promise.value = layout), // for layoutNow
      () => this.cache.delete(dot),
    );
    while (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value);
    return promise;
  }

  /**
   * Graphviz made on this thread ahead of a print, on a real clock, while a layout the user waits for is late (watch):
   * a print cannot wait for the worker (beforeprint's listeners run, then the page is printed), so layoutNow lays
   * the graph out here. The browser compiles its WebAssembly on its own threads; this thread runs the script
   * (~1.5 MB) and decodes the module. Under virtual time nothing is done here: watch makes it synchronously.
   */
  prepareHere() {
    if (this.local || typeof document === "undefined" || clockStandsStill()) return;
    this.here({ now: false });
  }

  /**
   * `dot` laid out now, on this thread: the cached layout, else made with Graphviz made here (prepareHere), else
   * null. For a print (graphview.js printGraphs), which cannot wait for the worker: a request for the same DOT still
   * waiting on a worker gets this answer (the worker's is dropped), and the cache keeps it. Throws where Graphviz does.
   */
  layoutNow(dot) {
    const hit = this.cache.get(dot);
    if (hit && hit.value) return hit.value;
    if (!this.made) return null;
    const layout = { ...this.made.layout(dot), here: true };
    for (const w of [this.fore, this.back])
      for (const [id, p] of w ? w.pending : [])
        if (p.dot === dot) {
          w.pending.delete(id);
          clearTimeout(p.late);
          p.resolve(layout);
        }
    const done = hit || Promise.resolve(layout);
    done.value = layout;
    this.cache.set(dot, done);
    return layout;
  }
}

const engines = new Map();

/**
 * One engine per page for a given source loader key; `load` is called once and returns
 * the worker's source text (a promise). `options`: LayoutEngine's.
 */
export function sharedEngine(key, load, options = {}) {
  let p = engines.get(key);
  if (!p) {
    p = Promise.resolve()
      .then(load)
      .then((src) => new LayoutEngine(src, options));
    p.catch(() => engines.delete(key));
    engines.set(key, p);
  }
  return p;
}

/** gunzip bytes (Uint8Array/ArrayBuffer/DataView) to text with the browser's DecompressionStream. */
export async function gunzipText(bytes) {
  const u8 =
    bytes instanceof Uint8Array
      ? bytes
      : bytes instanceof DataView
        ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : new Uint8Array(bytes);
  const stream = new Blob([u8]).stream().pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

/** base64 text to bytes. */
export function fromBase64(b64) {
  const bin = atob(b64.replace(/\s+/g, ""));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
