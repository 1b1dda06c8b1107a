// The kernel-source highlighter's tokens, per line (what the panel fills each `.il-line` with, after the paint).

import assert from "node:assert/strict";
import test from "node:test";
import { highlightLines } from "../src/code.js";

// shaped like Inductor's output (the JS fixtures carry no kernel sources)
const TRITON = `@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    """a docstring
    over two lines"""
    xoffset = tl.program_id(0) * XBLOCK
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tl.store(out_ptr0 + (x0), tmp0, xmask)`;
const CPP = `extern "C"  void kernel(const float* in_ptr0, float* out_ptr0)
{
    /* a comment
       over two lines */
    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1024L); x0+=static_cast<int64_t>(1L))
    {
        auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
        out_ptr0[static_cast<int64_t>(x0)] = tmp0;
    }
}`;

for (const [lang, src, kwLine, kw] of [
  ["triton", TRITON, 1, "def"],
  ["cpp", CPP, 4, "for"],
]) {
  test(`${lang}: every line's tokens spell the line exactly; keywords are marked on their own line`, () => {
    const lines = highlightLines(src, lang);
    const want = src.split("\n");
    assert.equal(lines.length, want.length);
    lines.forEach((parts, i) => assert.equal(parts.map((p) => p.text).join(""), want[i], `line ${i + 1}`));
    const tok = lines[kwLine].find((p) => p.text === kw);
    assert.ok(tok, `${kw} is its own token on line ${kwLine + 1}`);
    assert.equal(tok.cls[tok.cls.length - 1], "hljs-keyword");
    // a token spanning two lines (docstring, block comment) keeps its class on both
    const second = lines[3].filter((p) => p.text.trim());
    assert.ok(
      second.length && second.every((p) => /hljs-(string|comment)/.test(p.cls.join(" "))),
      JSON.stringify(lines[3]),
    );
  });
}

test("unknown languages and huge sources are not highlighted", () => {
  assert.equal(highlightLines("x = 1", "cuda-ptx"), null);
  assert.equal(highlightLines("x = 1\n".repeat(80000), "python"), null);
});
