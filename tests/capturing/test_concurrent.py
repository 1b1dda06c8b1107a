"""Concurrent captures (issue 10 section 2): process-wide hooks, reference-counted; records go to the
captures active on the compiling thread; nothing leaks whatever the exit order."""

import logging
import threading
import warnings

import torch

import inductor_lens
from tests import models


def _state():
    import torch._inductor.codegen.cpp as cpp
    import torch._inductor.compile_fx as cfx
    import torch._inductor.debug as debug
    from torch._dynamo.callback import callback_handler
    from torch._inductor.graph import GraphLowering
    from torch._inductor.scheduler import WhyNoFuse

    trace = logging.getLogger("torch.__trace")
    return {
        "functions": (
            torch.compile,
            torch._logging.trace_structured,  # rebound in every torch module while a capture listens
            torch._logging._internal.trace_structured,
            debug.log_ir_pre_fusion,
            debug.log_ir_post_fusion,
            debug.set_kernel_post_grad_provenance_tracing,
            cpp.set_kernel_post_grad_provenance_tracing,
            cfx.compile_fx,
            GraphLowering.__dict__["save_output_code"],
            GraphLowering.compile_to_module,
            WhyNoFuse.__call__,
            torch._dynamo.reset,
        ),
        "caches": (
            torch._inductor.config.fx_graph_cache,
            torch._functorch.config.enable_autograd_cache,
            torch._inductor.config.force_disable_caches,
        ),
        "warning_filters": list(warnings.filters),
        # torch's own LazyTraceHandler removes itself at the first structured record, lens or not
        "trace_logger": (
            trace.level,
            trace.propagate,
            [h for h in trace.handlers if type(h).__name__ != "LazyTraceHandler"],
        ),
        "callbacks": (list(callback_handler.start_callbacks), list(callback_handler.end_callbacks)),
    }


def _hooked(state):
    return any(getattr(getattr(f, "__func__", f), "_inductor_lens_hook", False) for f in state["functions"])


def _overlap(first_out: str) -> None:
    before = _state()
    assert not _hooked(before)
    a, b = inductor_lens.capture(), inductor_lens.capture(reset=False)
    a.__enter__()
    b.__enter__()
    assert _hooked(_state()) and _state()["caches"] == (False, False, before["caches"][2])
    torch.compile(models.sin_cos)(torch.randn(8))
    first, second = (a, b) if first_out == "a" else (b, a)
    first.__exit__(None, None, None)
    assert _hooked(_state())  # the other capture is still active: its hooks stay
    torch.compile(models.with_graph_break)(torch.randn(8))
    second.__exit__(None, None, None)
    assert _state() == before
    # both saw the compile made while both were active; only the one still active saw the later ones
    assert [c.frame for c in first.report.compiles] == ["sin_cos"]
    assert [c.frame for c in second.report.compiles][0] == "sin_cos" and len(second.report.compiles) > 1


def test_overlapping_captures_a_exits_first():
    _overlap("a")


def test_overlapping_captures_b_exits_first():
    _overlap("b")


def test_a_capture_inside_another_does_not_reset_dynamo_under_it():
    """A nested capture with the default ``reset=True`` reset dynamo under the enclosing one: a function the outer
    capture had compiled compiled again in it (dynamo's frames 3 where a plain run makes 2), which the outer report
    called a first call. The inner capture leaves dynamo as it is, records what compiles anew, and says why it does
    not reset (``reset_skipped``)."""
    from torch._dynamo.utils import counters

    f, g = torch.compile(models.sin_cos), torch.compile(models.with_graph_break)
    x = torch.randn(8)
    with inductor_lens.capture() as outer:
        counters.clear()
        f(x)
        with inductor_lens.capture() as inner:
            f(x)  # compiled already: no compile
            g(x)
        f(x)
        frames = dict(counters["frames"])
    assert [c.frame for c in outer.report.compiles].count("sin_cos") == 1
    assert "sin_cos" not in [c.frame for c in inner.report.compiles] and inner.report.compiles
    assert {c.frame for c in inner.report.compiles} <= {c.frame for c in outer.report.compiles}
    assert [d.code for d in inner.report.diagnostics] == ["reset_skipped"]
    assert "reset_skipped" not in [d.code for d in outer.report.diagnostics]
    torch._dynamo.reset()
    counters.clear()
    f(x)
    f(x)
    g(x)
    f(x)
    assert frames == dict(counters["frames"])  # as many frames as without the lens


def test_two_threads_each_get_only_their_own_compile():
    before = _state()
    reports, errors = {}, []
    both_inside = threading.Barrier(2, timeout=600)
    turns = {"sin": threading.Event(), "mlp": threading.Event()}
    turns["sin"].set()

    def work(name, fn, x):
        # both captures are active at once; the compiles take turns, so that what each thread compiled is
        # known (torch's config values are per thread: each thread's capture turns its caches off)
        try:
            with inductor_lens.capture(reset=False) as cap:
                both_inside.wait()
                turns[name].wait(600)
                torch.compile(fn)(x)
                turns["mlp"].set()
                both_inside.wait()
            reports[name] = cap.report
        except BaseException as e:  # surfaced below
            errors.append(e)

    torch._dynamo.reset()
    threads = [
        threading.Thread(target=work, args=("sin", models.sin_cos, torch.randn(8))),
        threading.Thread(target=work, args=("mlp", models.MLP(), torch.randn(2, 16))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert _state() == before
    assert [c.frame for c in reports["sin"].compiles] == ["sin_cos"]
    assert reports["mlp"].compiles and all(c.frame == "MLP.forward" for c in reports["mlp"].compiles)
    assert not any("sin" in k.name for k in reports["mlp"].kernels)


def test_a_compile_on_a_thread_without_a_capture_is_not_hidden_by_a_cache_hit():
    """On a GPU the lazy backward compiles on the autograd engine's device thread, which no capture entered;
    torch's config is per thread, so the caches the capture turned off are still on there, and an FX-graph
    cache hit (a graph compiled before, in this process or an earlier one) would skip fusion and codegen.
    Here a plain thread compiles a function whose graph is already in the FX-graph cache while a capture is
    active on the main thread: the compile must be whole, and the thread's cache flags come back after."""
    import torch._inductor.config as inductor_config

    flags = []

    def compile_in_a_thread():
        torch.compile(models.sin_cos)(torch.randn(24))
        flags.append(inductor_config.fx_graph_cache)

    torch._dynamo.reset()
    torch.compile(models.sin_cos)(torch.randn(24))  # the FX-graph cache now holds this graph
    with inductor_lens.capture() as cap:  # resets dynamo: the thread's call compiles again
        t = threading.Thread(target=compile_in_a_thread)
        t.start()
        t.join()
    (compiled,) = cap.report.compiles
    assert compiled.kernels and compiled.fused_nodes and compiled.output_code
    assert flags == [True]  # the thread's own setting, restored after its compile
