"""A real IPython kernel for the view tests: run code, collect what the notebook would receive.

``ipython_kernel``: one kernel for the session (starting one and importing torch in it costs about 5 CPU-s), with
the extension loaded; the magic's tests (tests/views/test_magic.py, test_cells_kernel.py) share it, so they are
scheduled together (tests/conftest.py: SHARED). A test in it must not assume it is the kernel's first."""

from __future__ import annotations

import os
import pathlib
import queue
from dataclasses import dataclass, field

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent


@dataclass
class Execution:
    """What one ``execute_request`` produced: the reply and every iopub message for it."""

    reply: dict
    messages: list = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["status"]

    def of_type(self, *types: str) -> list:
        return [m for m in self.messages if m["msg_type"] in types]

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == "stdout")

    @property
    def stderr(self) -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == "stderr")

    @property
    def outputs(self) -> list:
        """Output-area events in order: display_data, update_display_data, execute_result, error, stream."""
        return self.of_type("display_data", "update_display_data", "execute_result", "error", "stream")

    @property
    def errors(self) -> list:
        return [m["content"] for m in self.of_type("error")]

    def texts(self) -> str:
        """All text/plain of displays and results, and error texts, joined."""
        parts = []
        for m in self.outputs:
            c = m["content"]
            if "data" in c:
                parts.append(c["data"].get("text/plain", ""))
            elif m["msg_type"] == "error":
                parts.append(f"{c['ename']}: {c['evalue']}\n" + "\n".join(c["traceback"]))
            else:
                parts.append(c.get("text", ""))
        return "\n".join(parts)

    def widget_views(self) -> list:
        return [
            m
            for m in self.of_type("display_data", "update_display_data")
            if "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
        ]


class Kernel:
    def __init__(self, cwd: str):
        from jupyter_client.manager import start_new_kernel  # not at collection: most tests need no kernel

        env = dict(os.environ)
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=cwd, env=env)

    def execute(self, code: str, timeout: float = 300.0) -> Execution:
        msg_id = self.kc.execute(code, allow_stdin=False, store_history=True)
        messages = []
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no kernel output for {timeout} s while running:\n{code}") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            messages.append(msg)
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        return Execution(reply["content"], messages)

    def ok(self, code: str, timeout: float = 300.0) -> Execution:
        """Run ``code``; fail with the kernel's own traceback if it raised."""
        ex = self.execute(code, timeout)
        assert ex.status == "ok", f"cell failed:\n{code}\n---\n{ex.texts()}"
        return ex

    def value(self, expr: str):
        """The value of a Python literal expression evaluated in the kernel."""
        import ast

        ex = self.ok(f"print(repr(({expr})))")
        return ast.literal_eval(ex.stdout.strip())

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture(scope="session")
def ipython_kernel(tmp_path_factory):
    """A real kernel with ``%load_ext inductor_lens``, torch, inductor_lens and ``report_for`` imported; its working
    folder is ``.cwd``."""
    cwd = tmp_path_factory.mktemp("kernel")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p)
    k = Kernel(str(cwd))
    k.cwd = cwd
    k.ok("%load_ext inductor_lens\nimport torch, inductor_lens\nfrom inductor_lens.views.magic import report_for")
    yield k
    k.shutdown()
