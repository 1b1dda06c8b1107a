"""The report layer: what Inductor did, as plain, torch-free data.

- :mod:`.model`: the frozen dataclasses (``Report``, ``Compile``, ``FusedNode``, ``Kernel``, ...).
- :mod:`.rules`: every naming and classification rule the report applies (frame stages, short op names,
  labels, the user line of a fused node); decided once here, shipped in the JSON, drawn by the views.
- :mod:`.finish`: the derived fields a compile gets once it is built (labels, user lines, kernel runs, ...).
- :mod:`.io`, :mod:`.stream`, :mod:`.intern`, :mod:`.text`, :mod:`.builder`, :mod:`.check`, :mod:`.plain`:
  reading and writing (atomic, line layout, interned tables, type checks); :mod:`.schema`: the JSON Schema.
- :mod:`.outcome`: the diagnostics that say what became of a lensed run.

Nothing here imports torch, the analysis or the views; :mod:`.hooks` is how the dataclasses' convenience
methods reach them.
"""

from . import io as _io  # registers the I/O behind Report.to_json/from_dict/save_json and load  # noqa: F401
