// The widget's requests to its kernel (inductor_lens.views.frontend.answer_request) over the comm's custom
// messages, matched by id. No DOM: `npm test` drives these with a stand-in model.

let nextRequest = 1;

/** The bytes of a comm buffer (a DataView, an ArrayBuffer or a typed array) as a Uint8Array. */
export function asBytes(b) {
  if (b instanceof Uint8Array) return b;
  if (b instanceof DataView) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  return new Uint8Array(b.buffer || b);
}

/**
 * Ask the Python side for something; the answer comes as custom messages with the same id. One message, or
 * several parts (`part` 0, 1, ... with `last: true` on the final one: the exported page, so that no message
 * holds all of it). Resolves with the first message and the buffers of every part, in order; the time-out runs
 * from the request and again from each part.
 * @returns {Promise<{msg: object, buffers: Array<any>}>}
 */
export function request(model, type, timeoutMs = 60000, extra = {}) {
  const id = `${type}-${nextRequest++}-${Date.now()}`;
  return new Promise((resolve, reject) => {
    let timer = null;
    let first = null;
    const buffers = [];
    const done = () => {
      clearTimeout(timer);
      model.off("msg:custom", handler);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        done();
        reject(
          new Error(
            `no answer from the kernel to ${type}: is it running? A lens saved in a notebook needs the kernel that ` +
              "made it: re-run its cell",
          ),
        );
      }, timeoutMs);
    };
    function handler(msg, bufs) {
      if (!msg || msg.id !== id) return;
      if (msg.error) {
        done();
        reject(new Error(msg.error));
        return;
      }
      const parted = typeof msg.part === "number";
      if (parted && msg.part !== (first ? first.parts : 0)) {
        done();
        reject(new Error(`part ${msg.part} of the answer to ${type} came out of order`));
        return;
      }
      if (!first) first = { msg, parts: 0 };
      first.parts += 1;
      for (const b of bufs || []) buffers.push(b);
      if (!parted || msg.last) {
        done();
        resolve({ msg: first.msg, buffers });
      } else arm();
    }
    arm();
    model.on("msg:custom", handler);
    model.send({ ...extra, type, id });
  });
}
