"""The report: a plain, torch-free record of what Inductor did.

Everything in inductor_lens renders a :class:`Report`. It is made of frozen dataclasses that
serialize to JSON (``Report.to_json``) and load back without torch (``load``); the JSON field
names are a public contract, documented in ``docs/report-schema.md`` and versioned by
``SCHEMA_VERSION``.

Names are stable and readable: compile ids look like ``"0/0 forward"``, fused nodes keep
Inductor's names (``op0_op1``), kernels keep theirs (``cpp_fused_add_cos_0``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Optional, Union

SCHEMA_VERSION = 1

#: Kinds a fused node may have. ``kind`` tells the widget how to colour a box.
FUSED_NODE_KINDS = ("pointwise", "reduction", "extern", "template", "foreach", "nop", "other")
#: Languages a kernel may be written in.
KERNEL_LANGUAGES = ("cpp", "triton", "extern", "other")
#: What ``Compile.graph_kind`` may be.
GRAPH_KINDS = ("inference", "forward", "backward")


class ReportError(ValueError):
    """A report could not be read: bad JSON, a newer schema, or a missing field."""


@dataclass(frozen=True)
class Frame:
    """One frame of a Python stack: where a line of code ran."""

    file: str
    line: int
    function: str
    code: str = ""


@dataclass(frozen=True)
class Trigger:
    """What made Inductor compile: the call of the user's code that started it.

    ``kind`` is ``first_call`` (dynamo traced a frame for the first time), ``recompile``
    (a guard failed; ``reason`` spells it out), ``lazy_backward`` (the backward graph is
    compiled at the first ``.backward()``), or ``unknown``.
    """

    kind: str
    reason: str
    user_stack: list[Frame] = field(default_factory=list)
    time_us: Optional[float] = None


@dataclass(frozen=True)
class Phase:
    """A span of the compile timeline; ``start_us`` is measured from the capture's start."""

    name: str
    start_us: float
    duration_us: float
    depth: int = 0


@dataclass(frozen=True)
class GraphNode:
    """A node of an FX graph."""

    name: str
    op: str
    target: str
    inputs: list[str] = field(default_factory=list)
    shape: Optional[list] = None
    dtype: Optional[str] = None
    user_stack: list[Frame] = field(default_factory=list)
    #: nn.Module path that produced the node, outermost first, e.g. ``["layers.0", "layers.0.mlp"]``.
    module_stack: list[str] = field(default_factory=list)
    #: The class of each module in ``module_stack``, e.g. ``["Block", "MLP"]`` (same length, or empty).
    module_types: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Graph:
    """An FX graph: its nodes in order, and its readable code."""

    nodes: list[GraphNode] = field(default_factory=list)
    code: str = ""


@dataclass(frozen=True)
class FusedNode:
    """A scheduler node: after fusion (``Compile.fused_nodes``) or before (``pre_fusion_nodes``).

    ``fx_nodes`` are post-grad node names; ``reads``/``writes`` are buffer names, from which the
    edges between nodes are drawn; ``members`` are the pre-fusion nodes it was fused from.
    """

    name: str
    kind: str
    fx_nodes: list[str] = field(default_factory=list)
    kernel: Optional[str] = None
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    estimated_runtime_us: Optional[float] = None
    module_stack: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Cost:
    """What one call of a kernel moves and computes; each number is null when unknown.

    ``bytes_read``/``bytes_written``: bytes of the buffers the kernel reads and writes (sizes x element size;
    a buffer made and used only inside a fused kernel is not counted). ``flops``: floating-point operations
    (2*M*K*N for a matmul; one per element and op for pointwise code). ``source`` says how each was obtained.
    """

    bytes_read: Optional[float] = None
    bytes_written: Optional[float] = None
    flops: Optional[float] = None
    source: str = ""


@dataclass(frozen=True)
class DeviceInfo:
    """The hardware a profile ran on and its peaks: ``peak_gbps`` (memory bandwidth, GB/s) and
    ``peak_tflops`` by dtype (``fp32``, ``tf32``, ``bf16``, ``fp16``); ``source`` names the datasheet or the
    measurement the numbers come from."""

    name: str
    peak_gbps: Optional[float] = None
    peak_tflops: dict[str, float] = field(default_factory=dict)
    source: str = ""


@dataclass(frozen=True)
class Kernel:
    """A generated kernel, or a call to an extern one (``language == "extern"``).

    ``source`` is exactly the text in the output code. ``user_stack`` holds one stack per
    distinct user source location of the ops in the kernel; ``compiler_stack`` is the stack
    inside torch when Inductor generated the kernel, outermost (the user's call) first.
    """

    name: str
    language: str
    source: str
    fused_nodes: list[str] = field(default_factory=list)
    fx_nodes: list[str] = field(default_factory=list)
    user_stack: list[list[Frame]] = field(default_factory=list)
    compiler_stack: list[Frame] = field(default_factory=list)
    #: Launch and build facts where torch exposes them: grid, num_warps, num_stages, autotune...
    metadata: dict = field(default_factory=dict)
    #: Measured device time, filled by ``inspect(..., profile=True)``: total_us, calls, per_call_us, share,
    #: mean_us, std_us, runs, achieved_gbps, achieved_tflops, peak_fraction, bound (see docs/report-schema.md).
    profile: Optional[dict] = None
    #: Bytes and FLOPs of one call (``Cost``), from Inductor's buffer accesses and the ops' shapes.
    cost: Optional[Cost] = None


@dataclass(frozen=True)
class FusionDecision:
    """Inductor considered fusing ``node1`` with ``node2`` and refused, for ``reason``.

    ``node1``/``node2`` are pre-fusion node names; ``fused1``/``fused2`` the post-fusion nodes
    that hold them, so the widget can show the refusal on the boxes a user sees.
    """

    node1: str
    node2: str
    reason: str
    fused1: Optional[str] = None
    fused2: Optional[str] = None


@dataclass(frozen=True)
class Compile:
    """One Inductor graph compilation."""

    id: str
    compile_id: str
    graph_kind: str
    trigger: Trigger
    #: Name of the compiled Python function (the frame dynamo traced).
    frame: str = ""
    phases: list[Phase] = field(default_factory=list)
    graphs: dict[str, Graph] = field(default_factory=dict)
    fused_nodes: list[FusedNode] = field(default_factory=list)
    pre_fusion_nodes: list[FusedNode] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    output_code: str = ""
    fusion_decisions: list[FusionDecision] = field(default_factory=list)
    graph_inputs: list[str] = field(default_factory=list)
    graph_outputs: list[str] = field(default_factory=list)
    guards: str = ""

    def kernel(self, name: str) -> Kernel:
        """The kernel called ``name``; ``KeyError`` names the ones there are."""
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel {name!r} in compile {self.id!r} (kernels: {[k.name for k in self.kernels]})")

    def fused_node(self, name: str) -> FusedNode:
        """The post-fusion node called ``name``."""
        for n in self.fused_nodes:
            if n.name == name:
                return n
        raise KeyError(f"no fused node {name!r} in compile {self.id!r}")


@dataclass(frozen=True)
class GraphBreak:
    """Dynamo stopped tracing here and split the function into several compiled frames."""

    reason: str
    user_stack: list[Frame] = field(default_factory=list)


@dataclass(frozen=True)
class CompileCall:
    """A call of ``torch.compile`` seen during the capture: it only wraps the function."""

    target: str
    backend: str
    user_stack: list[Frame] = field(default_factory=list)
    time_us: Optional[float] = None


@dataclass(frozen=True)
class Report:
    """Everything one capture recorded. See ``docs/report-schema.md``."""

    torch_version: str
    device: str
    compiles: list[Compile] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    compile_calls: list[CompileCall] = field(default_factory=list)
    title: str = ""
    created: str = ""
    schema_version: int = SCHEMA_VERSION
    #: The device a profile ran on and its peaks (``inspect(..., profile=True)``).
    device_info: Optional[DeviceInfo] = None
    #: The profiled step as a whole: measured and attributed device time, the unattributed remainder, and
    #: roll-ups by source line, nn.Module and kernel kind (see docs/report-schema.md).
    profile: Optional[dict] = None

    # -- access ---------------------------------------------------------------------------
    def compile(self, id: str) -> Compile:
        """The compile whose ``id`` (``"0/0 forward"``) or ``compile_id`` (``"0/0"``) is given."""
        for c in self.compiles:
            if c.id == id:
                return c
        for c in self.compiles:
            if c.compile_id == id:
                return c
        raise KeyError(f"no compile {id!r} (compiles: {[c.id for c in self.compiles]})")

    @property
    def kernels(self) -> list[Kernel]:
        """All kernels of all compiles, in order."""
        return [k for c in self.compiles for k in c.kernels]

    def summary(self) -> str:
        """A few lines of plain text: compiles, kernels, breaks, diagnostics."""
        lines = [f"inductor_lens report: {len(self.compiles)} compile(s), {len(self.kernels)} kernel(s), "
                 f"{len(self.graph_breaks)} graph break(s); torch {self.torch_version} on {self.device}"]
        for c in self.compiles:
            lines.append(f"  {c.id}: {c.frame or '?'} [{c.trigger.kind}] {len(c.fused_nodes)} fused node(s), "
                         f"kernels: {', '.join(k.name for k in c.kernels) or '-'}")
        if self.profile and self.profile.get("device_total_us") is not None:
            p = self.profile
            share = p.get("unattributed_share")
            lines.append(f"  profile ({p.get('device')}): {p['device_total_us']:.1f} us per step, "
                         f"{p.get('attributed_us', 0):.1f} us in kernels"
                         + (f", unattributed: {share:.0%}" if share is not None else ""))
        for d in self.diagnostics:
            lines.append(f"  ! {d}")
        return "\n".join(lines)

    def __repr__(self) -> str:  # cheap on purpose: never dumps sources
        return (f"<inductor_lens.Report: {len(self.compiles)} compile(s), {len(self.kernels)} kernel(s), "
                f"{len(self.graph_breaks)} graph break(s), torch {self.torch_version}, {self.device}>")

    # -- serialization --------------------------------------------------------------------
    def to_dict(self) -> dict:
        return _to_plain(self)

    def to_json(self, indent: Optional[int] = None) -> str:
        """The report as JSON; ``load(report.to_json()) == report``."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> "Report":
        if not isinstance(data, dict):
            raise ReportError(f"a report is a JSON object, not {type(data).__name__}")
        version = data.get("schema_version")
        if not isinstance(version, int):
            raise ReportError("not an inductor_lens report: no integer 'schema_version'")
        if version > SCHEMA_VERSION:
            raise ReportError(f"report schema_version {version} is newer than this inductor_lens reads "
                              f"({SCHEMA_VERSION}): upgrade inductor-lens")
        return _from_plain(cls, data, "report")

    # -- views (imported lazily: the model never needs them) -------------------------------
    def widget(self, **kwargs):
        """The interactive :class:`inductor_lens.LensWidget` for this report."""
        from .widget import LensWidget
        return LensWidget(self, **kwargs)

    def save_html(self, path: Union[str, os.PathLike]) -> str:
        """Write one self-contained HTML page that shows this report offline; returns its path."""
        from .html import save_html
        return save_html(self, path)

    def diff(self, other: "Report", pairs=None):
        """Compare this report (A) with ``other`` (B): see :func:`inductor_lens.diff.diff`."""
        from .diff import diff
        return diff(self, other, pairs=pairs)

    def save_json(self, path: Union[str, os.PathLike]) -> str:
        """Write the report as JSON; returns the path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())
        return os.fspath(path)

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            return self.widget()._repr_mimebundle_(include=include, exclude=exclude)
        except Exception:  # no widget machinery (plain terminal): fall back to text
            return {"text/plain": self.summary()}


def load(source: Union[str, os.PathLike, bytes, dict]) -> Report:
    """Load a report from a path, a JSON string, bytes, or an already parsed dict."""
    if isinstance(source, dict):
        return Report.from_dict(source)
    if isinstance(source, bytes):
        source = source.decode("utf-8")
    text: str
    if isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no report at {path!r} (pass a path to a .json report or a JSON string)")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:
        text = source
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"report is not valid JSON: {e}") from None
    return Report.from_dict(data)


def json_schema() -> dict:
    """A JSON Schema (draft 2020-12) of the report, generated from these dataclasses.

    ``docs/report.schema.json`` is this, committed; a test keeps the two equal.
    """
    defs: dict = {}

    def schema_of(tp: Any) -> dict:
        origin = typing.get_origin(tp)
        if dataclasses.is_dataclass(tp):
            name = tp.__name__
            if name not in defs:
                defs[name] = {}  # placeholder: recursion guard
                hints = _hints(tp)
                props, required = {}, []
                for f in dataclasses.fields(tp):
                    props[f.name] = schema_of(hints[f.name])
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                        required.append(f.name)
                doc = " ".join((tp.__doc__ or "").split())
                defs[name] = {"type": "object", "description": doc, "properties": props, "required": required}
            return {"$ref": f"#/$defs/{name}"}
        if origin in (Union, getattr(types, "UnionType", Union)):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            inner = schema_of(args[0]) if len(args) == 1 else {}
            return {"anyOf": [inner, {"type": "null"}]}
        if origin is list:
            (item,) = typing.get_args(tp) or (Any,)
            return {"type": "array", "items": schema_of(item)}
        if origin is dict:
            args = typing.get_args(tp)
            return {"type": "object", "additionalProperties": schema_of(args[1]) if len(args) == 2 else {}}
        return {str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"},
                bool: {"type": "boolean"}, list: {"type": "array"}, dict: {"type": "object"}}.get(tp, {})

    root = schema_of(Report)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "inductor_lens report",
            "description": f"schema_version {SCHEMA_VERSION}", **root, "$defs": defs}


# -- plain <-> dataclass -----------------------------------------------------------------------

def _to_plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_plain(v) for v in obj]
    return obj


_HINTS: dict = {}


def _hints(cls) -> dict:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _from_plain(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ReportError(f"{where}: expected an object for {tp.__name__}, got {type(value).__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in value:
                kwargs[f.name] = _from_plain(hints[f.name], value[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ReportError(f"{where}: missing field {f.name!r} of {tp.__name__}")
        return tp(**kwargs)
    if origin in (Union, getattr(types, "UnionType", Union)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _from_plain(args[0], value, where) if len(args) == 1 else value
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        if not isinstance(value, list):
            raise ReportError(f"{where}: expected a list, got {type(value).__name__}")
        return [_from_plain(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        if not isinstance(value, dict):
            raise ReportError(f"{where}: expected an object, got {type(value).__name__}")
        return {k: _from_plain(item, v, f"{where}.{k}") for k, v in value.items()}
    return value
