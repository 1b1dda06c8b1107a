"""The widget of a large report: it opens with the shown compile only and fetches the others through custom
messages (inductor_lens.views.frontend.pack_opening / pack_compiles, js/src/index.js fetchPending)."""

import base64
import gzip
import json

import pytest

import inductor_lens
from inductor_lens.report import lazy
from inductor_lens.views.widget import LensWidget, engine_gz, pack_report


@pytest.fixture
def lazy_widget(tmp_path, training_report, monkeypatch):
    """A widget of the training step (2 compiles) loaded from its file, with the 'large report' bar at 1."""
    path = tmp_path / "train.json"
    training_report.save_json(path)
    loaded = inductor_lens.load(path)
    monkeypatch.setattr(LensWidget, "WHOLE_COMPILES", 1)
    return loaded, LensWidget(loaded)


def _unpack(data: bytes) -> dict:
    from inductor_lens.report import intern as _intern

    return _intern.expand(json.loads(gzip.decompress(data)))


def test_a_large_reports_widget_opens_with_the_shown_compile_and_answers_for_the_others(lazy_widget, training_report):
    loaded, w = lazy_widget
    fwd, bwd = training_report.compiles
    assert w.compile == fwd.id and w._pending == [bwd.id]
    assert lazy.pending(loaded.compiles[1])  # opening the widget built nothing of the held-back compile
    opening = _unpack(w._report)
    assert opening["pending"] == [bwd.id]
    # the report's own facts are of every compile, the held-back ones included (not of the stubs)
    assert (opening["views"], opening["profiled"]) == (training_report.views, training_report.profiled)
    shown, stub = opening["compiles"]
    assert len(shown["kernels"]) == len(fwd.kernels) and stub["kernels"] == [] and stub["graphs"] == {}
    assert (stub["id"], stub["label"], stub["trigger"]["kind"]) == (bwd.id, bwd.label, bwd.trigger.kind)
    # what the compile picker says of a stub (its box count, why it compiled) is the whole compile's
    assert (stub["box_count"], stub["contents"], stub["why"]) == (bwd.box_count, bwd.contents, bwd.why)
    assert bwd.box_count == sum(not n.is_glue for n in bwd.fused_nodes) > 0
    whole = len(pack_report(training_report))
    assert len(w._report) < whole
    sent = []
    w.send = lambda content, buffers=None: sent.append((content, buffers))
    w._on_msg(w, {"type": "compiles", "id": "c1", "ids": [bwd.id, "no such compile"]}, [])
    ((content, buffers),) = sent
    assert content == {"type": "compiles", "id": "c1"}
    (got,) = _unpack(buffers[0])["compiles"]
    assert inductor_lens.load(dict(training_report.to_dict(), compiles=[got])).compiles[0] == bwd
    print(f"comm at open: {len(w._report)} bytes (whole report: {whole}); backward compile: {len(buffers[0])}")


_LAZY_JS = """
async ({bundle, report, engine, second}) => {
  const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bundle], {type: "text/javascript"}));
  const mod = await import(url);
  const handlers = new Map();
  const asked = [];
  const state = {_report: new DataView(b64(report).buffer), selected: "", view: "kernels", compile: "", _mode: "lens"};
  const reply = (msg, buf) => setTimeout(() => (handlers.get("msg:custom") || []).forEach((f) => f(msg, [new DataView(b64(buf).buffer)])), 0);
  const model = {
    get: (k) => state[k], set: (k, v) => { state[k] = v; }, save_changes() {},
    on(ev, fn) { if (!handlers.has(ev)) handlers.set(ev, new Set()); handlers.get(ev).add(fn); },
    off(ev, fn) { if (handlers.has(ev)) handlers.get(ev).delete(fn); },
    async send(msg) {
      if (msg.type === "engine") reply({type: "engine", id: msg.id}, engine);
      if (msg.type === "compiles") { asked.push(msg.ids); reply({type: "compiles", id: msg.id}, await window.pyCompiles(msg.ids)); }
    },
  };
  const el = document.createElement("div");
  document.body.appendChild(el);
  const wait = async (ok) => { const t0 = performance.now(); while (!ok() && performance.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 20)); return ok(); };
  await mod.default.render({model, el});
  const root = () => el.querySelector(".il-root");
  const rows = () => [...el.querySelectorAll('[data-view="kernels"] [data-role="kernel-row"]')].map((r) => r.dataset.kernel);
  await wait(() => rows().length > 0);
  const first = rows();
  const arrived = await wait(() => root() && root().dataset.pending === "0");
  state.compile = second;
  (handlers.get("change:compile") || []).forEach((f) => f());
  await wait(() => rows().join() !== first.join());
  return {first, arrived, asked, second: rows(), error: root() && root().dataset.pendingError};
}
"""


@pytest.mark.browser
def test_the_held_back_compile_arrives_in_the_browser_and_is_drawn(chromium_browser, lazy_widget, training_report):
    from tests._browser_fixtures import STATIC

    loaded, w = lazy_widget
    fwd, bwd = training_report.compiles
    context = chromium_browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.expose_function("pyCompiles", lambda ids: base64.b64encode(w._answer_compiles(ids)).decode())
    try:
        page.goto("about:blank")
        got = page.evaluate(
            _LAZY_JS,
            {
                "bundle": (STATIC / "lens.js").read_text(encoding="utf-8"),
                "report": base64.b64encode(w._report).decode(),
                "engine": base64.b64encode(engine_gz()).decode(),
                "second": bwd.id,
            },
        )
        kernels = lambda c: list(dict.fromkeys(n.kernel for n in c.fused_nodes if n.kernel))  # noqa: E731
        assert got["first"] == kernels(fwd), got
        assert got["arrived"] and got["asked"] == [[bwd.id]] and not got["error"], got
        assert got["second"] == kernels(bwd) and kernels(bwd), got  # drawn from the compile that arrived
        assert errors == []
    finally:
        context.close()


def test_the_opening_payload_says_the_views_of_every_compile_not_of_the_stubs(tmp_path):
    """The opening payload is the report less its compiles plus the shown one: its ``views`` (the tabs) and
    ``profiled`` are the whole report's (the roofline and memory tabs open for a profiled GPU step)."""
    import pathlib

    from inductor_lens.views.frontend import pack_opening

    fixture = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gpu_memory_gpt2.json.gz"
    path = tmp_path / "gpu.json"
    inductor_lens.load(fixture).save_json(path)
    report = inductor_lens.load(path)
    small = min(report.compiles, key=lambda c: lazy.count(c))
    data, pending = pack_opening(report, small.id)
    opening = _unpack(data)
    assert {"roofline", "memory"} <= set(report.views) and report.profiled
    assert (opening["views"], opening["profiled"]) == (report.views, True)
    assert len(pending) == len(report.compiles) - 1


_NO_KERNEL_JS = """
async ({bundle, report}) => {
  const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bundle], {type: "text/javascript"}));
  const mod = await import(url);
  const state = {_report: new DataView(b64(report).buffer), selected: "", view: "fusion", compile: "", _mode: "lens"};
  const model = {  // a widget restored from a notebook's saved state: no kernel answers what it asks
    get: (k) => state[k], set: (k, v) => { state[k] = v; }, save_changes() {}, on() {}, off() {}, send() {},
  };
  const el = document.createElement("div");
  document.body.appendChild(el);
  await mod.default.render({model, el});
  window.lensHost = el;
}
"""


@pytest.mark.browser
def test_a_widget_whose_kernel_is_gone_says_what_its_graph_waits_for(chromium_browser, training_report):
    """A notebook saved with its widget state and reopened without its kernel drew "laying out 3 boxes…" for as
    long as anyone looked (the layout engine comes from the kernel): it says, after a while, that it waits for the
    kernel, and the widget's plain text (what a notebook shows where it cannot draw it) says how to see it again."""
    from tests._browser_fixtures import STATIC

    w = LensWidget(training_report)
    assert "re-run the cell" in w._repr_mimebundle_()[0]["text/plain"]
    context = chromium_browser.new_context()
    page = context.new_page()
    try:
        page.clock.install()  # "after a while" (app.js ENGINE_WAIT_MS) is run ahead, not waited for
        page.goto("about:blank")
        page.evaluate(
            _NO_KERNEL_JS,
            {
                "bundle": (STATIC / "lens.js").read_text(encoding="utf-8"),
                "report": base64.b64encode(w._report).decode(),
            },
        )
        page.clock.run_for(6000)
        page.wait_for_function(
            "() => [...window.lensHost.querySelectorAll('.il-message')].some((m) => "
            "m.textContent.includes('waiting for the kernel, which sends the layout engine'))",
            timeout=60000,
        )
    finally:
        context.close()
