"""What one call of an Inductor Triton kernel can touch at most, read from its source. Torch-free.

Inductor counts a kernel's bytes as the sizes of the buffers it reads and writes. A kernel that gathers or
scatters (an embedding's ``tl.load(in_ptr2 + (r0_1 + 768*tmp9))``, an ``nll_loss`` picking one logit a
row) touches only some rows of a large buffer, and the second stage of a split reduction is attributed the
FX ops of the whole reduction. The kernel's own loops bound both: each ``tl.load``/``tl.store`` runs at most
once per point of the dimensions its address depends on (``xnumel``, ``r0_numel``... are literals in the
source for static shapes), and each ``tmpN = ...`` computes at most one value per point of the kernel.

:func:`triton_bounds` gives those upper bounds for Inductor's pointwise and reduction kernels
(``triton_poi_``, ``triton_per_``, ``triton_red_``), or ``None`` when anything is not plainly known
(symbolic sizes, block pointers, templates): then nothing is capped.
"""

from __future__ import annotations

import math
import re
from typing import Optional

#: Bytes per element of a Triton pointer type in a kernel's signature (``'*fp32'``).
ELEMENT_BYTES = {
    "fp64": 8,
    "i64": 8,
    "u64": 8,
    "fp32": 4,
    "i32": 4,
    "u32": 4,
    "fp16": 2,
    "bf16": 2,
    "i16": 2,
    "u16": 2,
    "i8": 1,
    "u8": 1,
    "i1": 1,
    "fp8e4nv": 1,
    "fp8e5": 1,
    "fp8e4b15": 1,
    "fp8e4b8": 1,
    "fp8e5b16": 1,
}
_KINDS = ("triton_poi_", "triton_per_", "triton_red_")
_NUMEL = re.compile(r"^\s*([xyz]|r\d_)numel = (\d+)\s*$", re.M)
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::\s*tl\.constexpr\s*)?=\s*(.+)$")
_FOR = re.compile(r"^\s*for\s+([A-Za-z_]\w*)\s+in\s+")
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?!\w)(?!\s*\()")  # not an attribute, not a call
_STRING = re.compile(r"'[^']*'|\"[^\"]*\"")
_SIGNATURE = re.compile(r"'signature':\s*\{([^}]*)\}")
_PARAM = re.compile(r"'(\w+)':\s*'([^']*)'")
_ACCESS = re.compile(r"\btl\.(load|store|atomic_add|atomic_max|atomic_min|atomic_xchg|atomic_cas)\(")
_OPERATOR = re.compile(r"\*\*|==|!=|<=|>=|[-+*/%<>&|^~]|(?<![\w.])(?!tl\b)\w+\(|\.\w+\(")
_TUPLE = re.compile(r"^\s*[A-Za-z_]\w*\s*,\s*[A-Za-z_]\w*.*=")
#: Sub-kernels of a combo kernel, program ids and ranges outside the index variables: not followed.
_UNKNOWN = re.compile(
    r"\bpid_offset\b|\bnum_xblocks|^\s*(?!xoffset|yoffset|zoffset)\w+\s*=.*tl\.program_id|"
    r"^\s*(?![xyz]index|r\d_index|r\d_base|rindex|rbase)\w+\s*=.*tl\.arange",
    re.M,
)
_MODULES = frozenset({"tl", "libdevice", "tl_math", "triton_helpers", "math", "None", "True", "False"})


def _dims_of_base(name: str) -> Optional[set]:
    m = re.fullmatch(r"([xyz])(?:index|offset|base)|(r\d_)(?:index|offset|base)|r(?:index|offset|base)", name)
    if not m:
        return None
    return {m.group(1) or m.group(2) or "r0_"}


def _first_argument(text: str, start: int) -> str:
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        i += 1
    return text[start:i]


def triton_bounds(
    name: str, source: str, extents: Optional[dict[str, int]] = None
) -> Optional[tuple[float, float, float]]:
    """``(bytes read, bytes written, operations)`` that one call of the kernel cannot exceed, or ``None``.

    Bytes are the distinct elements the kernel's accesses can address, each buffer (``in_ptr0``...) counted once
    per call: an access repeated at the same address (the second pass of a two-pass reduction re-reading the row
    the first pass read, a weight row every program reloads) is not counted again, since its data is in the cache
    the first access filled; different addresses of one buffer add up, to at most the buffer's size where
    ``extents`` gives it (the kernel's parameter -> the elements its argument spans, ``Kernel.launch``)."""
    if not name.startswith(_KINDS) or "@triton.jit" not in source:
        return None
    sig = _SIGNATURE.search(source)
    body = _STRING.sub("''", source[source.index("@triton.jit") :])
    found = _NUMEL.findall(body)
    numels = {d: int(n) for d, n in found}
    if "x" not in numels or sig is None or len(found) != len(numels) or _UNKNOWN.search(body):
        return None  # a combo kernel (sizes per sub-kernel), or a form this reading does not follow
    params = dict(_PARAM.findall(sig.group(1)))  # name -> '*fp32' (a pointer) or 'i32' (a scalar)
    dims: dict[str, set] = {}
    same = _Canonical()
    ops = 0
    #: (buffer, "read"/"written") -> {the address's canonical form: its bytes}
    sites: dict[tuple[str, str], dict[str, float]] = {}

    def dims_of(expr: str) -> Optional[set]:
        out: set = set()
        for word in _NAME.findall(expr):
            if word in _MODULES or word in params or word.isupper() or word.endswith("numel"):
                continue  # scalars (one value per call), constants, sizes
            d = dims.get(word, _dims_of_base(word))
            if d is None:
                return None  # a name this reading does not know (a block pointer, a template's index...)
            out |= d
        return out

    def accesses(line: str) -> bool:
        """Each access of ``line`` into ``sites``; False where one is not plainly known."""
        for access in _ACCESS.finditer(line):
            arg = _first_argument(line, access.end())
            if "program_id" in arg or "arange" in arg:
                return False  # an address over a range of its own
            words = _NAME.findall(arg)
            kind = params.get(words[0], "") if words else ""
            if not kind.startswith("*") or kind[1:] not in ELEMENT_BYTES:
                return False
            d = dims_of(arg)
            if d is None or not d <= numels.keys():
                return False
            nbytes = float(math.prod(numels[k] for k in d) * ELEMENT_BYTES[kind[1:]])
            where = same.of(arg)
            ways = ("read",) if access.group(1) == "load" else ("written",)
            if access.group(1) not in ("load", "store"):
                ways = ("read", "written")  # an atomic reads what it updates too
            for way in ways:
                sites.setdefault((words[0], way), {})[where] = nbytes
        return True

    for line in body.splitlines()[1:]:  # after the ``def`` line
        if line.count("(") != line.count(")") or line.count("[") != line.count("]") or _TUPLE.match(line):
            return None  # a statement over several lines, or several names assigned at once
        loop = _FOR.match(line)
        if loop:
            if _dims_of_base(loop.group(1)) is None:
                return None  # a loop of its own (tl.static_range...): its points are not a known size
            dims[loop.group(1)] = _dims_of_base(loop.group(1))
            continue
        if not accesses(line):
            return None
        m = _ASSIGN.match(line)
        if not m or m.group(1).endswith("numel") or m.group(1).isupper():
            continue
        target, rhs = m.group(1), m.group(2)
        if _dims_of_base(target) is not None:  # xindex, r0_offset...: a dimension itself, whatever it adds up
            dims[target] = _dims_of_base(target)
            continue
        load = rhs.startswith("tl.load(")
        d = dims_of(_first_argument(rhs, len("tl.load(")) if load else rhs)
        if d is None:
            return None
        dims[target] = d
        same.name(target, rhs)
        if target.startswith("tmp") and not load and not rhs.startswith("tl.full("):
            ops += max(1, len(_OPERATOR.findall(rhs)))  # Inductor writes one op a line; count every operator
    read = written = 0.0
    for (buffer, way), by_address in sites.items():
        nbytes = sum(by_address.values())
        held = (extents or {}).get(buffer)
        if held is not None:
            nbytes = min(nbytes, float(held * ELEMENT_BYTES[params[buffer][1:]]))
        if way == "read":
            read += nbytes
        else:
            written += nbytes
    return read, written, float(math.prod(numels.values()) * max(ops, 1))


class _Canonical:
    """The same value under any name: each assigned name stands for its expression with the names in it replaced by
    theirs, so that ``in_ptr0 + (r0_1 + 4096*x0)`` in a second loop, or an index loaded again into another ``tmp``,
    is known as the address an earlier access used."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.ids: dict[str, str] = {}

    def of(self, expr: str) -> str:
        """``expr`` with every name replaced by what it stands for, spaces dropped."""
        return _NAME.sub(lambda m: self.names.get(m.group(1), m.group(1)), expr.replace(" ", ""))

    def name(self, target: str, expr: str) -> None:
        """``target`` now stands for ``expr``: one short token per distinct expression, so nothing grows."""
        self.names[target] = self.ids.setdefault(self.of(expr), f"@{len(self.ids)}")
