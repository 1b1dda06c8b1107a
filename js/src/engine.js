// Main-thread client of the layout worker: one worker per page (shared by every view),
// requests matched by id, and a cache of layouts keyed by the DOT text.

const CACHE_LIMIT = 64;

export class LayoutEngine {
  /**
   * @param {string} workerSource the text of layout-worker.js
   *
   * Two workers at most: one for what the user asked for, and one, started on the first background request,
   * for layouts made ahead (the other compiles' graphs): a user's request never waits behind them (the
   * decoder's backward graph takes seconds of dot; "Expand all" right after the page opened waited 3 s).
   */
  constructor(workerSource) {
    this.source = workerSource;
    this.nextId = 1;
    this.cache = new Map();
    this.fore = this.spawn();
    this.back = null;
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
      if (error) p.reject(new Error(error));
      else p.resolve(layout);
    };
    worker.onerror = (ev) => {
      const err = new Error(`layout worker failed: ${ev.message || "unknown error"}`);
      for (const p of pending.values()) p.reject(err);
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
    const promise = new Promise((resolve, reject) => w.pending.set(id, { resolve, reject }));
    w.worker.postMessage({ id, dot });
    this.cache.set(dot, promise);
    promise.catch(() => this.cache.delete(dot));
    while (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value);
    return promise;
  }
}

const engines = new Map();

/**
 * One engine per page for a given source loader key; `load` is called once and returns
 * the worker's source text (a promise).
 */
export function sharedEngine(key, load) {
  let p = engines.get(key);
  if (!p) {
    p = Promise.resolve()
      .then(load)
      .then((src) => new LayoutEngine(src));
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
