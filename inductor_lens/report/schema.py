"""The JSON Schema of the report (``json_schema()``), generated from the model's dataclasses; ``docs/report.schema.json`` is it, committed."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Union

from .model import SCHEMA_VERSION, Report
from .plain import hints as _hints


def json_schema() -> dict:
    """A JSON Schema (draft 2020-12) of :class:`~inductor_lens.model.Report`, generated from its dataclasses."""
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
        return {
            str: {"type": "string"},
            int: {"type": "integer"},
            float: {"type": "number"},
            bool: {"type": "boolean"},
            list: {"type": "array"},
            dict: {"type": "object"},
        }.get(tp, {})

    root = schema_of(Report)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "inductor_lens report",
        "description": f"schema_version {SCHEMA_VERSION}, the expanded form (what load() returns; the "
        "written form stores stacks and guard lines once in 'interned', see "
        "docs/report-schema.md)",
        **root,
        "$defs": defs,
    }
