"""Session fixtures: each test model is compiled and captured ONCE per test session.

CPU compiles take 5-30 s on the CI machine, so tests share these reports and must not mutate
them (reports are frozen dataclasses). torch is imported inside each fixture, never at collection: tests
that need no compile (model, JS, recorded reports) never load it.
"""

import pytest

import inductor_lens

CAPTURE_FIXTURES = ("sin_cos_report", "training_report", "break_recompile_report")


@pytest.fixture(scope="session")
def sin_cos_report():
    """The user's example: ``sin(x)**2 + cos(x)**2``, first call inside the capture."""
    import torch
    from tests import models
    with inductor_lens.capture(strict=True, title="sin_cos") as cap:
        compiled = torch.compile(models.sin_cos)
        compiled(torch.randn(64))
    return cap.report


@pytest.fixture(scope="session")
def training_report():
    """One training step of an MLP (forward + lazily compiled backward), with Inductor's own
    provenance tracking on, so kernel links can be checked against torch's mapping."""
    import torch
    from tests import models
    torch.manual_seed(0)
    model = models.MLP()
    with torch._inductor.config.patch({"trace.provenance_tracking_level": 1}):
        with inductor_lens.capture(strict=True, title="mlp training step") as cap:
            compiled = torch.compile(model)
            loss = compiled(torch.randn(4, 16)).pow(2).sum()
            loss.backward()
    return cap.report


@pytest.fixture(scope="session")
def break_recompile_report():
    """A graph break (two frames) and a shape change (a recompile with a failed guard)."""
    import torch
    from tests import models
    with inductor_lens.capture(strict=True, title="graph break and recompile") as cap:
        compiled = torch.compile(models.with_graph_break, dynamic=False)
        compiled(torch.randn(8))
        compiled(torch.randn(4, 4))
    return cap.report
