// Main-thread client of the layout worker: one worker per page (shared by every view),
// requests matched by id, and a cache of layouts keyed by the DOT text.

const CACHE_LIMIT = 64;

export class LayoutEngine {
  /** @param {string} workerSource the text of layout-worker.js */
  constructor(workerSource) {
    const url = URL.createObjectURL(new Blob([workerSource], { type: "text/javascript" }));
    this.worker = new Worker(url);
    URL.revokeObjectURL(url);
    this.nextId = 1;
    this.pending = new Map();
    this.cache = new Map();
    this.worker.onmessage = (ev) => {
      const { id, layout, error } = ev.data;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (error) p.reject(new Error(error));
      else p.resolve(layout);
    };
    this.worker.onerror = (ev) => {
      const err = new Error(`layout worker failed: ${ev.message || "unknown error"}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  /** Lay out a DOT graph; resolves to {width, height, nodes, edges, clusters, ms}. */
  layout(dot) {
    const hit = this.cache.get(dot);
    if (hit) {
      this.cache.delete(dot);  // refresh LRU position
      this.cache.set(dot, hit);
      return hit;
    }
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.worker.postMessage({ id, dot });
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
    p = Promise.resolve().then(load).then((src) => new LayoutEngine(src));
    p.catch(() => engines.delete(key));
    engines.set(key, p);
  }
  return p;
}

/** gunzip bytes (Uint8Array/ArrayBuffer/DataView) to text with the browser's DecompressionStream. */
export async function gunzipText(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes
    : bytes instanceof DataView ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
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
