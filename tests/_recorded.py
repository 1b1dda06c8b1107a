"""The reports recorded on a GPU (``tests/fixtures/gpu_*``), each loaded once per process and shared by the tests
that only read it: the Llama-3-8B-shaped step takes about 2 CPU-seconds to load, and five tests read it. Reports are
never changed in place (frozen dataclasses; ``docs/report-schema.md``), so sharing one is as good as loading it
again; a test about loading itself, or one that needs a report of its own, calls ``inductor_lens.load``.
``tests/conftest.py`` keeps the files that read the 32-layer reports on one worker (``SHARED``), so that they load
them once per run."""

from __future__ import annotations

import functools
import pathlib

import inductor_lens

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


@functools.lru_cache(maxsize=None)
def recorded(name: str):
    """The report in ``tests/fixtures/NAME`` (``NAME`` with its extension), loaded once in this process."""
    return inductor_lens.load(FIXTURES / name)
