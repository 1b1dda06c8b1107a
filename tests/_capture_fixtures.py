"""Session fixtures: each test model is compiled and captured ONCE per test session.

CPU compiles take 5-30 s on the CI machine, so tests share these reports and must not mutate
them (reports are frozen dataclasses). torch is imported inside each fixture, never at collection: tests
that need no compile (model, JS, recorded reports) never load it.
"""

import os

import pytest

import inductor_lens

CAPTURE_FIXTURES = (
    "sin_cos_report",
    "training_report",
    "break_recompile_report",
    "stack_training_report",
    "sequential_mlp_report",
    "nested_sequential_training_report",
    "aoti_pair",
    "gru_unrolled_report",
)


def _once_per_run(tmp_path_factory, name: str, capture):
    """``capture()``'s report, captured once for the whole run: under pytest-xdist every worker is a session
    of its own, so the first worker that needs the report captures it and writes it to the run's shared
    temporary folder, and the other workers load that file (a capture written and loaded back is equal to
    it: tests/report/test_report_io.py). A capture that fails is not written: the next worker tries it itself."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return capture()
    from filelock import FileLock

    from inductor_lens.report import io as report_io

    shared = tmp_path_factory.getbasetemp().parent  # one folder per run, shared by its workers
    path = shared / f"{name}.json"
    with FileLock(str(path) + ".lock"):
        if path.exists():
            return inductor_lens.load(path)
        report = capture()
        report_io.save_json(report, path)
        return report


@pytest.fixture(scope="session")
def sin_cos_report(tmp_path_factory):
    """The user's example: ``sin(x)**2 + cos(x)**2``, first call inside the capture."""

    def capture():
        import torch

        from tests import models

        with inductor_lens.capture(strict=True, title="sin_cos") as cap:
            compiled = torch.compile(models.sin_cos)
            compiled(torch.randn(64))
        return cap.report

    return _once_per_run(tmp_path_factory, "sin_cos_report", capture)


@pytest.fixture(scope="session")
def training_report(tmp_path_factory):
    """One training step of an MLP (forward + lazily compiled backward), with Inductor's own
    provenance tracking on, so kernel links can be checked against torch's mapping."""

    def capture():
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

    return _once_per_run(tmp_path_factory, "training_report", capture)


@pytest.fixture(scope="session")
def stack_training_report(tmp_path_factory):
    """One training step of ``models.Stack``: four repeated residual blocks (the Memory view folds them)."""

    def capture():
        import torch

        from tests import models

        torch.manual_seed(0)
        model = models.Stack()
        with inductor_lens.capture(strict=True, title="stack training step") as cap:
            compiled = torch.compile(model)
            compiled(torch.randn(4, 8)).pow(2).sum().backward()
        return cap.report

    return _once_per_run(tmp_path_factory, "stack_training_report", capture)


@pytest.fixture(scope="session")
def break_recompile_report(tmp_path_factory):
    """A graph break (two frames) and a shape change (a recompile with a failed guard)."""

    def capture():
        import torch

        from tests import models

        with inductor_lens.capture(strict=True, title="graph break and recompile") as cap:
            compiled = torch.compile(models.with_graph_break, dynamic=False)
            compiled(torch.randn(8))
            compiled(torch.randn(4, 4))
        return cap.report

    return _once_per_run(tmp_path_factory, "break_recompile_report", capture)


@pytest.fixture(scope="session")
def sequential_mlp_report(tmp_path_factory):
    """The forward of an ``nn.Sequential`` MLP of torch's layers, built and compiled in
    ``tests/sequential_models.py``: no op has a line of its own."""

    def capture():
        from tests import sequential_models

        return sequential_models.sequential_mlp()

    return _once_per_run(tmp_path_factory, "sequential_mlp_report", capture)


@pytest.fixture(scope="session")
def nested_sequential_training_report(tmp_path_factory):
    """A training step of nested Sequentials (an OrderedDict of parts, a ModuleList spread into one, a Sequential
    subclass naming its layers in ``__init__``), built and compiled in ``tests/sequential_models.py``."""

    def capture():
        from tests import sequential_models

        return sequential_models.nested_training_step()

    return _once_per_run(tmp_path_factory, "nested_sequential_training_report", capture)


@pytest.fixture(scope="session")
def gru_unrolled_report(tmp_path_factory):
    """One training step of an ``nn.GRUCell`` unrolled over 3 time steps (``models.unrolled_gru``): one module
    called three times in one graph, whose backward torch ties partly to no forward op."""

    def capture():
        import torch

        from tests import models

        torch.manual_seed(0)
        cell = torch.nn.GRUCell(4, 8)
        with inductor_lens.capture(strict=True, title="GRUCell x3 training step") as cap:
            compiled = torch.compile(models.unrolled_gru)
            compiled(cell, torch.randn(3, 2, 4), torch.zeros(2, 8)).sum().backward()
        return cap.report

    return _once_per_run(tmp_path_factory, "gru_unrolled_report", capture)


@pytest.fixture(scope="session")
def aoti_pair(tmp_path_factory):
    """``models.TwoInputs`` exported with a dynamic batch, packaged by AOTInductor, loaded and run on a batch of 7:
    once plain, then once under the capture, in this process. An AOTInductor build costs about 13 CPU-s of gcc, so
    the observer test (the two give the same results) and test_names.py's (the capture's report: names, trigger,
    kernels) share these two; tests/conftest.py schedules them on one worker (``SHARED``). A namespace: ``plain``,
    ``lensed`` (the packages' outputs), ``eager`` (the model's), ``report`` (the capture's), ``ep`` (the program
    exported under it) and ``events`` (the capture's ``on_event`` messages)."""
    import types

    import torch

    from tests import models

    torch.manual_seed(0)
    model = models.TwoInputs().eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    folder = tmp_path_factory.mktemp("aoti")
    x7, y7 = (torch.randn(7, n, generator=torch.Generator().manual_seed(7)) for n in (16, 4))

    # the C++ wrapper unoptimised (gcc -O0 for it, the kernels as ever): ~1.2 of a build's ~7 CPU-s, the same code
    # for both builds; the option is torch's (2.7+), left as it is where it is not there
    wrapper = "aot_inductor.compile_wrapper_opt_level"
    quick = {wrapper: "O0"} if hasattr(torch._inductor.config.aot_inductor, "compile_wrapper_opt_level") else {}

    def build_and_run(package):
        ep = torch.export.export(
            model, (torch.randn(4, 16), torch.randn(4, 4)), dynamic_shapes=({0: batch}, {0: batch})
        )
        with torch._inductor.config.patch(quick):
            pkg = torch._inductor.aoti_compile_and_package(ep, package_path=str(folder / package))  # the call site
        return ep, torch._inductor.aoti_load_package(pkg)(x7, y7)

    _, plain = build_and_run("plain.pt2")
    events: list[str] = []
    with inductor_lens.capture(on_event=events.append) as cap:
        ep, lensed = build_and_run("lens.pt2")
    return types.SimpleNamespace(
        plain=plain, lensed=lensed, eager=model(x7, y7), report=cap.report, ep=ep, events=events
    )
