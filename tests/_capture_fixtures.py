"""Session fixtures: each test model is compiled and captured ONCE per test session.

CPU compiles take 5-30 s on the CI machine, so tests share these reports and must not mutate
them (reports are frozen dataclasses).
"""

import pytest
import torch

import inductor_lens
from tests import models


@pytest.fixture(scope="session")
def sin_cos_report():
    """The user's example: ``sin(x)**2 + cos(x)**2``, first call inside the capture."""
    with inductor_lens.capture(strict=True, title="sin_cos") as cap:
        compiled = torch.compile(models.sin_cos)
        compiled(torch.randn(64))
    return cap.report


@pytest.fixture(scope="session")
def training_report():
    """One training step of an MLP (forward + lazily compiled backward), with Inductor's own
    provenance tracking on, so kernel links can be checked against torch's mapping."""
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
    with inductor_lens.capture(strict=True, title="graph break and recompile") as cap:
        compiled = torch.compile(models.with_graph_break, dynamic=False)
        compiled(torch.randn(8))
        compiled(torch.randn(4, 4))
    return cap.report
