"""The structured-trace records a capture keeps, and how each is read: one table, record kind -> reader,
as tlparse has one parser per artifact.

The in-process log handler (``adapter``) keeps only the kinds listed here, and the builder (``build``) reads
each kept record through its reader, counting the records whose reader failed (each count becomes one
``hook_failed`` diagnostic). Plain Python: no torch.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

_ID_KEYS = ("frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "has_payload")


def _json(payload: Any) -> Any:
    return json.loads(payload) if isinstance(payload, (str, bytes)) else payload


def _text(payload: Any) -> str:
    return "" if payload is None else str(payload)


def _metadata_only(payload: Any) -> None:
    return None


#: kind (a top-level metadata key, or an artifact's name) -> reader of its payload
READERS: dict[str, Callable[[Any], Any]] = {
    "str": _metadata_only,  # interned file names of dynamo_start stacks
    "dynamo_start": _metadata_only,  # the user's call stack, in the metadata
    "compilation_metrics": _metadata_only,  # frame name, failure type and reason
    "chromium_event": _json,  # phase begin/end events
    "dynamo_output_graph": _text,
    "inductor_post_grad_graph": _text,
    "dynamo_cpp_guards_str": _text,
    "dynamo_guards": _text,
    "recompile_reasons": _text,
    "dynamo_graph_break_reason": _text,
    "triton_kernel_info": _json,
    "inductor_provenance_tracking_node_mappings": _json,
    "inductor_aot_wrapper_code": _text,  # AOTInductor: the C++ wrapper (graph_dump records)
    "inductor_aot_kernel_code": _text,  # AOTInductor: the C++ kernels
}


def record_kind(metadata: dict) -> Optional[str]:
    """The kind of a ``torch.__trace`` record: its first non-id metadata key, or the artifact's name."""
    key = next((k for k in metadata if k not in _ID_KEYS), None)
    if key in ("artifact", "graph_dump"):
        art = metadata.get(key)
        return str(art.get("name", "artifact")) if isinstance(art, dict) else "artifact"
    return key


def wanted(metadata: dict) -> bool:
    """Whether the capture keeps this record (the log handler's filter)."""
    return record_kind(metadata) in READERS
