"""A hook registered on a compiled module after the compile: torch does not run it (dynamo does not guard on nn.Module
hooks, ``torch._dynamo.config.skip_nnmodule_hook_guards``) and says nothing; the capture says so, without a guard or
any change to what torch compiles (a new user's trial, nu19 item 9)."""

from __future__ import annotations

import torch
from torch._dynamo.utils import counters

import inductor_lens


def _steps():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    cm = torch.compile(m)
    x = torch.randn(4, 8)
    outs = [cm(x)]
    h = m[0].register_forward_hook(lambda mod, i, o: o * 0.5)
    outs.append(cm(x))  # the hook does not run
    h.remove()
    outs.append(cm(x))  # as compiled: nothing to say
    m[2].register_forward_pre_hook(lambda mod, i: (i[0] + 1,))
    outs.append(cm(x))  # nor this one
    return outs, m(x)


def test_a_hook_added_after_the_compile_is_said_not_to_run_and_nothing_torch_compiles_changes():
    torch._dynamo.reset()
    counters.clear()
    plain, eager = _steps()
    plain_stats = dict(counters["stats"])
    torch._dynamo.reset()
    counters.clear()
    with inductor_lens.capture() as cap:
        lens, _ = _steps()
    # the same graphs and results as without the lens (no guard added: no recompile at the hook changes)
    assert dict(counters["stats"]) == plain_stats and plain_stats["unique_graphs"] == 1, (plain_stats, counters)
    assert all(torch.equal(a, b) for a, b in zip(plain, lens))
    # torch's own evidence that the hooks did not run: the compiled outputs are all the first one, eager's differ
    assert all(torch.equal(o, plain[0]) for o in plain) and not torch.allclose(eager, plain[3])
    said = [d.message for d in cap.report.diagnostics if d.code == "hook_not_run"]
    assert len(said) == 2, said
    forward, pre = said
    assert forward.startswith("the forward hook _steps.<locals>.<lambda> (test_module_hooks.py:19) registered on `0`")
    assert "(Linear) after torch compiled it did not run at the call at test_module_hooks.py:20" in forward, forward
    assert pre.startswith("the forward pre-hook _steps.<locals>.<lambda> (test_module_hooks.py:23) registered on `2`")
    assert "test_module_hooks.py:24" in pre, pre
    for message in said:
        assert "torch._dynamo.config.skip_nnmodule_hook_guards = False" in message, message
