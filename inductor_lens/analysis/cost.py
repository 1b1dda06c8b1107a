"""What each kernel moves and computes: bytes read and written, FLOPs (``Kernel.cost``). Torch-free.

Two sources, and every ``Cost`` says which it used (``Cost.source``):

- **Inductor's own accounting** (bytes): at capture, for each scheduler node after fusion, the bytes of each
  buffer it reads and writes, as Inductor's scheduler counts them for its own cost model (buffer numel x
  element size, at most what the loops touch; a buffer made and consumed inside a fused kernel is left out).
  Two corrections read at capture too (``capturing/torchread._extra_reads``): the graph constants a kernel reads
  (under ``freezing``: frozen parameters, the weights packed for a GEMM template or oneDNN), which that accounting
  skips, are added at the size of their own buffers (MKL's packed copy of a weight not besides the weight: its call
  reads one of them); a buffer read only through an index (an embedding's table), which it counts whole in a fused
  kernel, counts one element per indexed load (rows gathered x row bytes, an upper bound). The source says each.
- **Shapes** (FLOPs always; bytes when Inductor's numbers are missing, e.g. a report from an older capture):
  from the post-grad graph's node shapes and dtypes. Matmuls ``2*M*K*N`` (``bmm`` times the batch),
  convolutions ``2 * output elements * (C_in / groups) * kernel size`` (a transposed one's input elements; their
  backward that for each gradient it computes, as ``torch.utils.flop_counter``; oneDNN's quantized convolution and
  linear so too, from their prepacked weight's logical shape: integer ops of int8, which the source says), attention
  ``4*B*H*L*S*E`` (QK^T and PV; the backward torch's five matmuls, the scores recomputed: 2.5x that where the head
  dims are equal; no discount for a causal mask; flex_attention so too, dense: an upper bound where its block mask
  skips blocks), pointwise code one FLOP per element and op, reductions one per input element (Inductor's online
  softmax four: the amax, subtraction, exp and sum it decomposes to); a generated kernel at most what Inductor's loop
  bodies do (``_lowered_to_loops``: its FX ops hold the origins of what it reads). Views, copies and memory-only ops count 0. A matmul, convolution or attention
  op whose extern kernel computes it counts there only: a generated kernel that carries the op as its origin (the
  channels-last copy of a convolution's input, a bias add fused after it) moves its data, it does not compute it.

A count that is an upper bound rather than a count (a Triton kernel's bytes capped at what its loops touch, a gathered
table's rows, flex_attention's dense FLOPs) is named in ``Cost.upper_bounds``, and a fraction of peak from it says "at
most" (``analysis/perf.against_peak``).

A symbolic size (a string such as ``"s0"`` in ``GraphNode.shape``) is counted at its hint
(``GraphNode.shape_hint``, the size seen at capture) and the source says so; with no hint it is unknown (null). A
kernel that reads or writes a tensor of a data-dependent size (an unbacked ``u0``: ``nonzero``, ``unique``, a boolean
mask), which has no hint, has unknown bytes and FLOPs: Inductor counts such a size as 0 in its own accounting.
"""

from __future__ import annotations

import math
import re
from typing import Optional

from ..report.model import Compile, Cost, GraphNode, Kernel
from ..report.rules import custom_namespace, short_op

#: Bytes per element of each dtype name as the report writes it (``str(torch.dtype)`` without ``torch.``).
DTYPE_BYTES = {
    "float64": 8,
    "double": 8,
    "float32": 4,
    "float": 4,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "int64": 8,
    "long": 8,
    "int32": 4,
    "int": 4,
    "int16": 2,
    "short": 2,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
    "complex64": 8,
    "complex128": 16,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
}

#: Ops whose result is a view of (or aliases) their first input: no bytes of their own (``analysis.memory``: a
#: saved view of a parameter costs nothing).
VIEW_OPS = frozenset(
    {
        "view",
        "_unsafe_view",
        "reshape",
        "permute",
        "expand",
        "squeeze",
        "unsqueeze",
        "t",
        "transpose",
        "slice",
        "select",
        "as_strided",
        "alias",
        "detach",
        "_reshape_alias",
        "reinterpret_tensor",
    }
)

_FREE_OPS = VIEW_OPS | frozenset(
    {
        "clone",
        "_to_copy",
        "copy",
        "copy_",
        "getitem",
        "full",
        "empty",
        "empty_strided",
        "zeros",
        "ones",
        "scalar_tensor",
        "iota",
        "arange",
        "lift_fresh_copy",
        "detach",
        "reinterpret_tensor",
        "cat",
        "constant_pad_nd",
        "index",
        "index_select",
        "gather",
        "embedding",
        "embedding_dense_backward",
        "split",
        "split_with_sizes",
        "unbind",
        "where",
        "fill",
        "new_zeros",
        "new_empty",
        "new_empty_strided",
        "inductor_seeds",
        "inductor_random",
        "inductor_lookup_seed",
        "randint",
        "rand",
        "randn",
        "bernoulli",
        "native_dropout",
        "_reshape_alias",
        "slice_scatter",
        "select_scatter",
    }
)
#: ``_foreach_`` ops that reduce each tensor of their list to one number: counted from what they read
_FOREACH_REDUCTIONS = frozenset({"_foreach_norm", "_foreach_max"})
_REDUCTIONS = frozenset(
    {
        "sum",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "prod",
        "var_mean",
        "var",
        "std",
        "argmax",
        "argmin",
        "logsumexp",
        "any",
        "all",
        "native_layer_norm",
        "_softmax",
    }
)
_ATTENTION = (
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_efficient_attention_forward",
    "_flash_attention_forward",
    "scaled_dot_product_attention",
)


#: Linear layers of a frozen CPU graph (oneDNN, MKL), their ``.default`` overloads only: op -> the index of the
#: ``[out, in]`` weight among its inputs (``_linear_pointwise(X, W, B, ...)``, ``_mkl_linear(X, MKL_W, ORI_W, ...)``)
_LINEAR_PACKED = {"_linear_pointwise": 1, "_mkl_linear": 2}
#: Ops that run a whole layer, a recurrence or a solver as one fallback call: one FLOP per element of their result
#: (the rule for ops with no rule) would count a transformer layer's matmuls as a few hundred FLOPs
_COMPOSITE = frozenset(
    {
        "_transformer_encoder_layer_fwd",
        "_native_multi_head_attention",
        "lstm",
        "gru",
        "rnn_tanh",
        "rnn_relu",
        "_thnn_fused_lstm_cell",
        "_thnn_fused_gru_cell",
        "mkldnn_rnn_layer",
        "_cudnn_rnn",
        "miopen_rnn",
        "_cdist_forward",
        "cholesky",
        "triangular_solve",
        "_embedding_bag",
    }
)
_COMPOSITE_PREFIXES = ("linalg_", "_linalg_", "fft_", "_fft_", "_cudnn_rnn", "_weight_int")

#: The rules of ops an extern kernel computes (``node_flops``): counted in that kernel only.
_EXTERN_RULES = {
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "_int_mm",
    "_scaled_mm",
    "convolution",
    "convolution_backward",
    "attention",
}

#: ``convolution_backward``'s rule where the graph does not say which gradients it computes: both, an upper bound
CONV_BACKWARD_BOTH = (
    "convolution_backward (grad_input and grad_weight both counted: which it computes is not recorded, an upper bound)"
)
#: The rule of an attention's backward: torch's (``flop_counter.sdpa_backward_flop_count``), five matmuls: the
#: scores recomputed (QK^T), then dV, dP, dQ and dK
ATTENTION_BACKWARD_RULE = "attention backward (5 matmuls, the scores recomputed, as torch's flop counter)"


#: The weights' dtypes of oneDNN's quantized convolution and linear (``_quantized_flops``)
_QUANTIZED_WEIGHTS = ("int8", "uint8", "float8_e4m3fn")
#: The dtypes whose multiply-adds are integer ops (``Cost.integer_ops``), not floating-point ones
INTEGER_OPS = ("int8", "uint8")
#: oneDNN's dynamic-fp16 linears of a frozen CPU graph (``onednn.linear_dynamic_fp16(X, W, B)``, PT2E's
#: ``get_x86_inductor_linear_dynamic_fp16_config``): X float32, W the fp16 weight oneDNN prepacked, transposed
#: (``[K, N]``: torch's meta function sizes the result's last dim by ``W.shape[1]``); they compute in floating point
_DYNAMIC_FP16 = frozenset({"linear_dynamic_fp16", "linear_relu_dynamic_fp16"})


def quantized_rule(op: str, dtype: str) -> str:
    """The rule of a quantized ``op`` (``mm``, ``convolution``) on weights of ``dtype``: ``int8 mm (integer ops, not
    floating-point: 2 per int8 multiply-add)``."""
    kind = "integer ops, not floating-point" if "int" in dtype else f"{dtype} ops"
    return f"{dtype} {op} ({kind}: 2 per {dtype} multiply-add)"


def integer_dtype(rule: str) -> str:
    """The integer dtype of the ops ``rule`` counts (``quantized_rule`` on int8 weights: ``"int8"``), else ``""``."""
    dtype = rule.split(" ", 1)[0]
    return dtype if dtype in INTEGER_OPS and rule == quantized_rule(rule.split(" ")[1], dtype) else ""


def _computed_by_extern(rule: str) -> bool:
    """Whether ``rule`` counts an op an extern kernel computes (counted there only)."""
    return (
        rule in _EXTERN_RULES
        or rule.startswith(("convolution_backward", ATTENTION_BACKWARD_RULE))
        or any(rule == quantized_rule(op, rule.split(" ", 1)[0]) for op in ("mm", "convolution"))
    )


#: The rule of Inductor's online softmax (``prims.prepare_softmax_online``: a row's max and sum of exp(x - max), one
#: pass): one FLOP per input element and op of what it computes, the amax, the subtraction, the exp and the sum its
#: decomposition runs (``torch/_inductor/decomposition.py``)
ONLINE_SOFTMAX_RULE = "online softmax (max, x - max, exp, sum: 4 per input element)"

#: flex_attention's rule: counted as the dense attention it masks, so an upper bound where its block mask skips blocks
FLEX_RULE = "attention, dense (blocks a block mask skips counted too)"

#: Packed-weight ops with one overload: a graph that calls the packet (``mkl._mkl_linear``, as the frozen CPU graph's
#: pattern rewrite writes it) calls that one, ``.default``
_ONE_OVERLOAD = frozenset({"_mkl_linear"})


def _default_overload(target: str, op: str) -> bool:
    """Whether ``target`` calls ``op``'s ``.default`` overload: named, or the packet of an op that has no other."""
    return target.endswith(".default") or (op in _ONE_OVERLOAD and target.endswith("." + op))


def op_name(target: str) -> str:
    """``"aten.mm.default"`` -> ``"mm"``: the one short op name (``rules.short_op``)."""
    return short_op(target)


class _Sizes:
    """Numbers of elements and bytes of graph nodes, at their hints where a size is symbolic."""

    def __init__(self, nodes: list[GraphNode], shared: Optional["_Sizes"] = None):
        """``shared``: another ``_Sizes`` of the same graph whose indexes are reused (``used_hint`` is not)."""
        self.by_name = shared.by_name if shared is not None else {n.name: n for n in nodes}
        self.used_hint = False
        self._users: Optional[dict[str, set]] = shared.users if shared is not None else None
        self._extern: Optional[set] = shared._extern if shared is not None else None

    def extern_ops(self, compile: Compile) -> set:
        """The FX ops an extern kernel of ``compile`` computes (made once per graph)."""
        if self._extern is None:
            self._extern = {x for k in compile.kernels if k.language == "extern" for x in k.fx_nodes}
        return self._extern

    @property
    def users(self) -> dict[str, set]:
        """Node name -> the names of the nodes that read it (made once per graph, not once per kernel)."""
        if self._users is None:
            self._users = {}
            for n in self.by_name.values():
                for i in n.inputs:
                    self._users.setdefault(i, set()).add(n.name)
        return self._users

    def dims(self, name: str) -> Optional[list[int]]:
        node = self.by_name.get(name)
        if node is None or not isinstance(node.shape, list):
            return None
        if any(isinstance(d, list) for d in node.shape):
            return None  # a tuple of tensors
        if all(isinstance(d, int) for d in node.shape):
            return list(node.shape)
        hint = getattr(node, "shape_hint", None)
        if isinstance(hint, list) and len(hint) == len(node.shape) and all(isinstance(d, int) for d in hint):
            self.used_hint = True
            return list(hint)
        return None

    def numel(self, name: str) -> Optional[int]:
        d = self.dims(name)
        return None if d is None else math.prod(d)

    def list_numel(self, name: str) -> Optional[int]:
        """The elements of all the tensors of a node that makes a list of them (a ``_foreach_`` op: its shape is one
        shape per tensor, ``[[64], [32, 8], [5]]``), at the size hints where a size is symbolic; None where unknown."""
        node = self.by_name.get(name)
        if node is None:
            return None
        for shapes in (node.shape, getattr(node, "shape_hint", None)):
            if (
                isinstance(shapes, list)
                and shapes
                and all(isinstance(s, list) and all(isinstance(d, int) for d in s) for s in shapes)
            ):
                if shapes is not node.shape:
                    self.used_hint = True
                return sum(math.prod(s) for s in shapes)
        return None

    def inputs_numel(self, node: GraphNode) -> Optional[int]:
        """The elements of all of ``node``'s tensor inputs (a ``_foreach_norm`` reads each tensor of its list once)."""
        counts = [self.numel(i) for i in node.inputs]
        return None if not counts or None in counts else sum(counts)

    def nbytes(self, name: str) -> Optional[int]:
        node = self.by_name.get(name)
        n = self.numel(name)
        if n is None and node is not None and str(op_name(node.target)).startswith("_foreach_"):
            n = self.list_numel(name)  # a list of tensors of one dtype
        size = DTYPE_BYTES.get(str(node.dtype)) if node is not None else None
        return None if n is None or size is None else n * size


def node_flops(node: GraphNode, sizes: _Sizes) -> tuple[Optional[float], str]:
    """FLOPs of one post-grad node from its shapes, and what rule gave them (``""``: none applies)."""
    if node.op != "call_function":
        return 0.0, ""
    # the op it runs: a lowering pattern's Python function (freezing's conv + relu) is counted as the op it lowers to
    target = node.wraps or node.target
    op = op_name(target)
    ins = [sizes.dims(i) for i in node.inputs]
    if op in ("mm", "addmm", "bmm", "baddbmm", "_int_mm", "_scaled_mm"):
        a, b = (ins[1], ins[2]) if op in ("addmm", "baddbmm") and len(ins) >= 3 else (ins[:2] + [None, None])[:2]
        # ``_int_mm``: int8 x int8 -> int32, integer multiply-adds
        held = sizes.by_name.get(node.inputs[0]) if op == "_int_mm" and node.inputs else None
        rule = quantized_rule("mm", str(held.dtype)) if held is not None and str(held.dtype) in INTEGER_OPS else op
        if a is None or b is None or len(a) < 2 or len(b) < 2:
            return None, rule
        batch = math.prod(a[:-2]) if len(a) > 2 else 1
        return 2.0 * batch * a[-2] * a[-1] * b[-1], rule
    if op in _DYNAMIC_FP16:  # a float linear on fp16 weights oneDNN prepacked, transposed: [K, N]
        x, w = (ins + [None, None])[:2]
        if x is None or w is None or len(w) != 2 or not x or x[-1] != w[0]:
            return None, f"{op}: its prepacked weight is not recognised: its FLOPs are not known from its shapes"
        return 2.0 * math.prod(x[:-1]) * w[0] * w[1], "mm"
    if str(target).startswith(("onednn.q", "torch.ops.onednn.q")):  # int8 conv/linear on prepacked weights
        return _quantized_flops(node, op, ins, sizes)
    packed = op in _LINEAR_PACKED or op == "_convolution_pointwise"
    if packed and not _default_overload(str(target), op):
        # the other overloads (``.binary``: ``X, other, W``; the in-place ``_convolution_pointwise_``) take the
        # weight elsewhere, and the node's inputs are deduplicated: not guessed
        return None, f"{op} ({str(target).rsplit('.', 1)[-1]}): its FLOPs are not known from its shapes"
    if op in ("convolution", "_convolution_pointwise"):
        x, w = (ins + [None, None])[:2]
        fwd = _conv_flops(x, w, sizes.dims(node.name))
        return fwd, "convolution"
    if op == "convolution_backward":  # (grad_output, input, weight, ...): each gradient asked for, the forward's count
        go, x, w = (ins + [None, None, None])[:3]
        fwd = _conv_flops(x, w, go)
        asked = _conv_grads(node, sizes)
        if asked is None:
            return (None if fwd is None else 2 * fwd), CONV_BACKWARD_BOTH
        rule = f"convolution_backward ({' and '.join(asked) or 'no gradient of input or weight'})"
        return (None if fwd is None else len(asked) * fwd), rule
    base = op[: -len("_backward")] if op.endswith("_backward") else op
    if base in _ATTENTION:
        q, k, v = (ins[1:4] if op.endswith("_backward") else ins[:3]) if len(ins) >= 3 else (None, None, None)
        if q is None or k is None or v is None or len(q) < 2 or len(k) < 2:
            return None, "attention"
        if op.endswith("_backward"):  # torch's: QK^T recomputed, dV, dP, dQ, dK
            return 2.0 * math.prod(q[:-1]) * k[-2] * (3 * q[-1] + 2 * v[-1]), ATTENTION_BACKWARD_RULE
        return 2.0 * math.prod(q[:-1]) * k[-2] * q[-1] + 2.0 * math.prod(q[:-1]) * k[-2] * v[-1], "attention"
    if base == "flex_attention":  # query, key, value first, forward and backward: its dense count, an upper bound
        q, k, v = ins[:3] if len(ins) >= 3 else (None, None, None)
        if q is None or k is None or v is None or len(q) < 2 or len(k) < 2:
            return None, FLEX_RULE
        if op.endswith("_backward"):  # torch's, as an SDPA's backward: QK^T recomputed, dV, dP, dQ, dK
            return 2.0 * math.prod(q[:-1]) * k[-2] * (3 * q[-1] + 2 * v[-1]), FLEX_RULE
        return 2.0 * math.prod(q[:-1]) * k[-2] * q[-1] + 2.0 * math.prod(q[:-1]) * k[-2] * v[-1], FLEX_RULE
    if op in _LINEAR_PACKED and len(ins) > _LINEAR_PACKED[op]:  # oneDNN/MKL's linear of a frozen CPU graph
        x, w = ins[0], ins[_LINEAR_PACKED[op]]
        if x is None or w is None or len(w) != 2:
            return None, "mm"
        return 2.0 * math.prod(x[:-1]) * w[1] * w[0], "mm"
    if op in _COMPOSITE or op.startswith(_COMPOSITE_PREFIXES):
        return None, f"{op} runs a whole layer (or a solver) as one call: its FLOPs are not known from its shapes"
    if op in _FREE_OPS:
        return 0.0, ""
    ns = custom_namespace(target)
    if ns:
        return None, f"{ns}::{op} is a custom op: what it computes is not known from its shapes"
    if op in _REDUCTIONS:
        n = sizes.numel(node.inputs[0]) if node.inputs else None
        return (None if n is None else float(n)), "per element"
    if op.startswith("_foreach_"):  # one op over a list of tensors (an optimizer's step): each tensor's elements
        n = sizes.list_numel(node.name) if op not in _FOREACH_REDUCTIONS else sizes.inputs_numel(node)
        return (None if n is None else float(n)), "per element"
    if op == "prepare_softmax_online":  # (max, sum of exp(x - max)) of a row, a tuple: counted from its input
        n = sizes.numel(node.inputs[0]) if node.inputs else None
        return (None if n is None else 4.0 * n), ONLINE_SOFTMAX_RULE
    n = sizes.numel(node.name)
    return (None if n is None else float(n)), "per element"


def _conv_flops(x: Optional[list], w: Optional[list], out: Optional[list]) -> Optional[float]:
    """FLOPs of a convolution from its input, weight and output shapes (two per multiply-add, the bias not counted:
    ``torch.utils.flop_counter.conv_flop_count``): each element of the side whose channels are the weight's first dim
    (the output of a convolution, ``[C_out, C_in/groups, *k]``; the input of a transposed one, ``[C_in, C_out/groups,
    *k]``) multiplies ``weight.shape[1] * kernel size`` weights. The graph keeps no ``transposed`` flag: it is told
    from the channels (a transposed convolution's input has the weight's first dim, its output not, or the other way
    round), and where both have it (as many channels in as out), from the sizes (a transposed convolution makes its
    output larger; a convolution made larger by its padding alone, or a transposed one smaller, is counted as the
    other); where the sizes are equal too, both count the same."""
    if x is None or w is None or out is None or len(w) < 3 or len(x) != len(w) or len(out) != len(w):
        return None
    by_weight = math.prod(w[1:])
    if out[1] == w[0] and (x[1] != w[0] or math.prod(out[2:]) <= math.prod(x[2:])):
        return 2.0 * math.prod(out) * by_weight
    if x[1] == w[0]:  # transposed
        return 2.0 * math.prod(x) * by_weight
    return None


def _conv_grads(node: GraphNode, sizes: _Sizes) -> Optional[list[str]]:
    """The gradients a ``convolution_backward`` node computes of ``grad_input`` and ``grad_weight`` (its
    ``output_mask``, which the graph does not keep): those its graph reads, by the name of the ``getitem`` that takes
    each (``GraphNode.output``; AOT autograd asks for a gradient only where one is used). None where the graph does
    not say (a report made before ``output`` was recorded)."""
    parts = [sizes.by_name.get(u) for u in sizes.users.get(node.name, ())]
    if not parts or any(p is None or not p.output for p in parts):
        return None
    named = {p.output for p in parts if p is not None}
    return [g for g in ("grad_input", "grad_weight") if g in named]


def _quantized_flops(node: GraphNode, op: str, ins: list, sizes: _Sizes) -> tuple[Optional[float], str]:
    """FLOPs of a oneDNN quantized convolution or linear (``onednn.qconv_pointwise``, ``qconv2d_pointwise``,
    ``qlinear_pointwise`` and their ``.tensor``/``.binary`` overloads) from its prepacked weight's logical shape,
    which the graph keeps on the weight's node and torch's own meta functions size the result from: a convolution's
    ``[C_out, C_in/groups, *kernel]`` (``2 * output elements * C_in/groups * kernel size``), a linear's ``[K, N]``
    (transposed when packed: ``2 * M * K * N``). Two per multiply-accumulate of the weight's dtype (int8): the rule
    says so. The inputs are the node's tensor arguments, deduplicated, the scales and zero points among them where
    they are tensors: the weight is the one input of the weight's dtype whose shape fits the result's, else the count
    is unknown."""
    out = sizes.dims(node.name)
    x = ins[0] if ins else None
    unknown = (
        None,
        f"{op}: a quantized call whose prepacked weight is not recognised: its FLOPs are not known from its shapes",
    )
    if out is None or x is None:
        return unknown
    conv = op.startswith("qconv")
    fits = []
    for name, w in zip(node.inputs[1:], ins[1:]):
        held = sizes.by_name.get(name)
        if w is None or held is None or str(held.dtype) not in _QUANTIZED_WEIGHTS:
            continue
        if conv and len(w) == len(out) == len(x) >= 3 and w[0] == out[1] and w[1] and x[1] % w[1] == 0:
            fits.append((name, w))
        elif not conv and len(w) == 2 and w[0] == x[-1] and w[1] == out[-1]:
            fits.append((name, w))
    if len(fits) != 1:
        return unknown
    name, w = fits[0]
    dtype = str(sizes.by_name[name].dtype)
    if conv:
        return 2.0 * math.prod(out) * w[1] * math.prod(w[2:]), quantized_rule("convolution", dtype)
    return 2.0 * math.prod(x[:-1]) * w[0] * w[1], quantized_rule("mm", dtype)


def _shape_bytes(kernel: Kernel, compile: Compile, sizes: _Sizes) -> tuple[Optional[float], Optional[float]]:
    """Bytes from shapes: the kernel's inputs from outside it, and its results used outside it."""
    nodes = [sizes.by_name[n] for n in kernel.fx_nodes if n in sizes.by_name]
    if not nodes:
        return None, None
    inside = {n.name for n in nodes}
    users = sizes.users
    read = written = 0
    seen: set = set()
    for n in nodes:
        for i in n.inputs:
            if i in inside or i in seen:
                continue
            seen.add(i)
            b = sizes.nbytes(i)
            if b is None:
                return None, None
            read += b
        # an in-place op (``_foreach_add_``: an optimizer's step) writes what it read, used or not
        in_place = str(op_name(n.target)).endswith("_") and not str(op_name(n.target)).endswith("__")
        if users.get(n.name, set()) - inside or kernel.language == "extern" or in_place:
            b = sizes.nbytes(n.name)
            if b is None:
                return None, None
            written += b
    return float(read), float(written)


#: A size symbol torch makes for a data-dependent size (an unbacked SymInt: ``u0``; an input's size is ``s0``)
_UNBACKED = re.compile(r"\bu\d+\b")


def _data_dependent(kernel: Kernel, sizes: _Sizes) -> list[str]:
    """The sizes of ``kernel``'s ops, and of what they read, known only when the graph runs: an unbacked symbol with
    no hint (``u0`` of a ``nonzero``), in order."""
    names = dict.fromkeys(kernel.fx_nodes)
    for n in kernel.fx_nodes:
        node = sizes.by_name.get(n)
        if node is not None:
            names.update(dict.fromkeys(node.inputs))
    out: dict[str, None] = {}

    def walk(shape: list, hint: list) -> None:  # a node that yields several tensors has a list of shapes
        hint = hint if isinstance(hint, list) and len(hint) == len(shape) else [None] * len(shape)
        for d, h in zip(shape, hint):
            if isinstance(d, list):
                walk(d, h)
            elif isinstance(d, str) and not isinstance(h, int):
                out.update(dict.fromkeys(_UNBACKED.findall(d)))

    for n in names:
        node = sizes.by_name.get(n)
        if node is not None and isinstance(node.shape, list):
            walk(node.shape, node.shape_hint)
    return list(out)


def _symbolic(kernel: Kernel, sizes: _Sizes) -> bool:
    names = set(kernel.fx_nodes)
    for n in kernel.fx_nodes:
        node = sizes.by_name.get(n)
        if node is not None:
            names.update(node.inputs)
    return any(
        isinstance(d, str)
        for n in names
        if n in sizes.by_name
        for d in (sizes.by_name[n].shape if isinstance(sizes.by_name[n].shape, list) else [])
    )


def kernel_cost(
    kernel: Kernel, compile: Compile, inductor_bytes: Optional[dict] = None, _graph: Optional[_Sizes] = None
) -> Cost:
    """The ``Cost`` of one call of ``kernel``.

    ``inductor_bytes`` maps a fused node name to ``(read_bytes, write_bytes)`` dicts (buffer -> bytes), as
    the capture read them from Inductor's scheduler, optionally followed by the graph constants the node reads and
    the buffers it gathers from (``constants, gathers``: name -> bytes, ``torchread._extra_reads``); without them
    bytes come from shapes. A kernel that the
    output code calls from several places (Inductor emits identical code once: the same block of every
    layer) costs the mean of its call sites, each counted over its own fused nodes: the profile's time is
    per call too (``per_call_us``), and summing the sites counted every layer's buffers in one call.
    """
    sites = [s for s in kernel.call_sites if s]
    fx_of = {n.name: n.fx_nodes for n in compile.fused_nodes} if len(sites) > 1 else {}
    if len(sites) > 1 and all(f in fx_of for s in sites for f in s):
        import dataclasses

        costs = [
            _one_call(
                dataclasses.replace(
                    kernel, fused_nodes=list(s), call_sites=[list(s)], fx_nodes=[x for f in s for x in fx_of[f]]
                ),
                compile,
                inductor_bytes,
                _graph,
            )
            for s in sites
        ]

        def mean(values: list) -> Optional[float]:
            return None if any(v is None for v in values) else sum(values) / len(values)

        kinds = {c.integer_ops for c in costs}
        return Cost(
            bytes_read=mean([c.bytes_read for c in costs]),
            bytes_written=mean([c.bytes_written for c in costs]),
            flops=mean([c.flops for c in costs]),
            source=f"{costs[0].source}; the mean of its {len(sites)} call sites",
            upper_bounds=[
                u for u in ("bytes_read", "bytes_written", "flops") if any(u in c.upper_bounds for c in costs)
            ],
            integer_ops=kinds.pop() if len(kinds) == 1 else "",
        )
    return _one_call(kernel, compile, inductor_bytes, _graph)


def _nbytes(n: float) -> str:
    return f"{int(n):,} B"


def _constant_text(name: str, names: dict[str, str]) -> str:
    """A graph constant as the cost's source says it: by the parameters it comes from, Inductor's name beside it
    (``fc1.weight (packed for MKL, _frozen_param7)``, ``fc1.bias (_frozen_param1)``; ``Compile.constant_names``), or
    by Inductor's name alone where it was not traced."""
    shown = names.get(name, "")
    if not shown:
        return name
    return f"{shown[:-1]}, {name})" if shown.endswith(")") else f"{shown} ({name})"


def _extra_read_notes(
    kernel: Kernel, sizes: _Sizes, reads: dict, consts: dict, gathers: dict, names: Optional[dict] = None
) -> str:
    """What the capture added to Inductor's accounting of a kernel's reads, said after "bytes: Inductor's buffer
    accesses"; ``reads`` and ``consts`` are changed in place:

    - a buffer read only through an index (``gathers``: an embedding's table) counts the most its indexed loads can
      fetch (each load one element: rows gathered x row bytes, an upper bound) where Inductor counts it whole;
    - the graph constants it reads (``consts``: frozen parameters, packed weights), which Inductor's accounting
      leaves out, are added; MKL's packed copy of a weight (``mkl._mkl_linear(X, packed, weight, ...)``: the call
      reads the one or the other, as its batch size matches the packing's or not) is left out for the weight.

    A constant is said by the parameters it comes from where the capture traced it (``names``:
    ``Compile.constant_names``)."""
    names = names or {}
    said = []
    for name, bound in gathers.items():
        if name in reads and bound < reads[name]:
            said.append(
                f"{name} gathered through an index: {_nbytes(bound)} (one element per indexed load, an upper bound on "
                f"the rows fetched), not the whole {_nbytes(reads[name])} Inductor counts"
            )
            reads[name] = bound
        elif name in consts:  # a constant's count is bounded at capture already
            consts[name] = min(consts[name], bound)
            said.append(
                f"{_constant_text(name, names)} (a graph constant) gathered through an index: {_nbytes(consts[name])} "
                "(one element per indexed "
                "load, an upper bound on the rows fetched), not the whole table"
            )
    for packed, weight in _mkl_packed(kernel, sizes):
        if packed in consts and weight in consts:
            held = consts.pop(packed)
            said.append(
                f"MKL's packed copy of the weight, {_constant_text(packed, names)}, {_nbytes(held)} held, left out: the "
                f"call reads it or the weight it packs, {_constant_text(weight, names)}, counted once"
            )
    if consts:
        largest = sorted(consts.items(), key=lambda kv: -kv[1])
        listed = ", ".join(f"{_constant_text(n, names)} {_nbytes(b)}" for n, b in largest[:3])
        if len(largest) > 3:
            listed += f" and {len(largest) - 3} more, {_nbytes(sum(b for _, b in largest[3:]))}"
        said.append(
            "and the graph constants it reads (frozen parameters, packed weights), which Inductor's accounting leaves "
            f"out: {listed}"
        )
    return (", " if said else "") + "; ".join(said)


def _mkl_packed(kernel: Kernel, sizes: _Sizes) -> list[tuple[str, str]]:
    """``(packed, weight)`` constant names of each MKL linear ``kernel`` calls (``mkl._mkl_linear(X, packed, weight,
    bias, batch_size)``), as the graph's ``get_attr`` nodes name the constants."""
    if kernel.language != "extern":
        return []
    out = []
    for name in kernel.fx_nodes:
        node = sizes.by_name.get(name)
        if node is None or op_name(node.wraps or node.target) != "_mkl_linear" or len(node.inputs) < 3:
            continue
        held = [sizes.by_name.get(i) for i in node.inputs[1:3]]
        if all(h is not None and h.op == "get_attr" for h in held):
            out.append((str(held[0].target), str(held[1].target)))
    return out


def _one_call(kernel: Kernel, compile: Compile, inductor_bytes: Optional[dict], shared: Optional[_Sizes]) -> Cost:
    graph = compile.graphs.get("post_grad")
    sizes = _Sizes(graph.nodes if graph else [], shared)
    unknown = _data_dependent(kernel, sizes)
    if unknown:  # Inductor's accounting counts such a size as 0: "writes 0 B" of a nonzero's result
        return Cost(
            bytes_read=None,
            bytes_written=None,
            flops=None,
            source=f"unknown: data-dependent sizes ({', '.join(unknown)}), known only when the graph runs",
        )
    notes = []
    upper: list[str] = []  # which counts are upper bounds (Cost.upper_bounds)
    bytes_read = bytes_written = None
    per_node = [inductor_bytes.get(f) for f in kernel.fused_nodes] if inductor_bytes else []
    if per_node and all(p is not None and p[0] is not None for p in per_node):
        reads: dict = {}
        writes: dict = {}
        consts: dict = {}
        gathers: dict = {}
        for r, w, *extra in per_node:
            for k, v in r.items():
                reads[k] = max(reads.get(k, 0), v)
            for k, v in (w or {}).items():
                writes[k] = max(writes.get(k, 0), v)
            for into, got in zip((consts, gathers), extra):
                for k, v in (got or {}).items():
                    into[k] = max(into.get(k, 0), v)
        bytes_read, bytes_written = float(sum(reads.values())), float(sum(writes.values()))
        if kernel.language == "extern" and bytes_read + bytes_written == 0 and not consts:
            bytes_read = bytes_written = None  # Inductor does not count some fallbacks (multi-output)
        else:
            if any((n in reads and b < reads[n]) or n in consts for n, b in gathers.items()):
                upper.append("bytes_read")  # rows gathered x row bytes: rows may repeat
            notes.append(
                "bytes: Inductor's buffer accesses"
                + _extra_read_notes(kernel, sizes, reads, consts, gathers, compile.constant_names)
            )
            bytes_read = float(sum(reads.values()) + sum(consts.values()))
            if _symbolic(kernel, sizes):
                sizes.used_hint = True  # Inductor counted them at its size hints
    if bytes_read is None:
        bytes_read, bytes_written = _shape_bytes(kernel, compile, sizes)
        if bytes_read is not None:
            notes.append("bytes: shapes x element size")
    flops: Optional[float] = 0.0
    rules: list[str] = []
    elsewhere = sizes.extern_ops(compile) if kernel.language != "extern" else set()
    skipped: list[str] = []
    integer: dict[str, float] = {}  # integer ops by dtype, of ``flops``
    for name in kernel.fx_nodes:
        node = sizes.by_name.get(name)
        if node is None:
            continue
        f, rule = node_flops(node, sizes)
        if name in elsewhere and _computed_by_extern(rule):
            skipped.append(f"{rule} ({name})")  # its extern kernel computes it: here it is only an origin
            continue
        if f is None:
            flops = None
            custom = rule if rule.endswith("not known from its shapes") else ""
            notes.append(
                f"flops: unknown, {custom or f'{op_name(node.target)} ({name}) has no recorded shape to count from'}"
            )
            break
        flops += f
        if rule in (FLEX_RULE, CONV_BACKWARD_BOTH) and f and "flops" not in upper:
            upper.append("flops")  # dense: its block mask may skip blocks; both gradients counted
        if integer_dtype(rule):
            integer[integer_dtype(rule)] = integer.get(integer_dtype(rule), 0.0) + f
        if rule and f and rule not in rules:
            rules.append(rule)
    if not kernel.fx_nodes or not sizes.by_name:
        if flops is not None:
            notes.append("flops: unknown, no FX op of this kernel was recorded")
        flops = None
    integer_ops = _integer_ops(flops, integer, notes)
    if flops is not None:
        notes.append("flops: " + (", ".join(rules) if rules else "none (memory-only ops)") + " from shapes")
        if skipped:
            notes.append(f"{', '.join(skipped)} left out: its extern kernel computes it")
    flops = _lowered_to_loops(kernel, flops, per_node, notes, upper)
    if kernel.language == "triton":
        bytes_read, bytes_written, flops, bounded = _within_loops(kernel, bytes_read, bytes_written, flops, notes)
        upper += [b for b in bounded if b not in upper]
    if sizes.used_hint:
        notes.append("symbolic sizes counted at their hints")
    if bytes_read is None and flops is None:
        notes.append("unknown: no shapes or buffer sizes recorded for its ops")
    upper = [
        u for u in upper if {"bytes_read": bytes_read, "bytes_written": bytes_written, "flops": flops}[u] is not None
    ]
    return Cost(
        bytes_read=bytes_read,
        bytes_written=bytes_written,
        flops=flops,
        source="; ".join(notes),
        upper_bounds=upper,
        integer_ops=integer_ops if flops is not None else "",
    )


def _lowered_to_loops(kernel: Kernel, flops: Optional[float], per_node: list, notes: list, upper: list):
    """``flops`` of a generated kernel, lowered to the arithmetic its loops do where they do less (by more than 1%):
    Inductor's own loop bodies, iterations x arithmetic ops of each (``torchread.loop_flops``, the fifth of each
    node's ``inductor_bytes``, recorded at capture). Its FX ops are the origins Inductor names, which hold those of
    the buffers it reads: a kernel that turns a layer norm's variance into ``rsqrt(var / 64 + eps) / 64`` lists the
    ``var_mean`` and the residual ``add`` an earlier kernel reduced, 169,520 FLOPs for the 4,160 its two loops do
    (nu23 D2). The loop count is an upper bound (common subexpressions of fused nodes are computed once), which
    ``upper`` says; ``notes`` says why."""
    if flops is None or kernel.language not in ("cpp", "triton") or not per_node:
        return flops
    loops = [p[4] if p is not None and len(p) > 4 else None for p in per_node]
    if any(n is None for n in loops):
        return flops
    counted = float(sum(loops))
    if counted >= flops * 0.99:
        return flops
    notes.append(
        f"flops lowered to its loops' arithmetic ({counted:,.0f}, iterations x arithmetic ops of Inductor's loop "
        f"bodies: an upper bound), not the {flops:,.0f} of its FX ops: those hold the origins of what it reads, "
        "ops kernels before it computed"
    )
    if "flops" not in upper:
        upper.append("flops")
    return counted


def _integer_ops(flops: Optional[float], integer: dict[str, float], notes: list) -> str:
    """``Cost.integer_ops``: the integer dtype of the ops counted where they are most of them (a quantized matmul or
    convolution, with a float epilogue fused after it), else ``""``; ``notes`` says where both kinds are counted."""
    if flops is None or not integer:
        return ""
    dtype, count = max(integer.items(), key=lambda kv: kv[1])
    if len(integer) > 1 or count < flops:
        notes.append(
            f"of its {flops:,.0f} ops, {sum(integer.values()):,.0f} are integer ops and {flops - sum(integer.values()):,.0f}"
            " floating-point ones, counted together"
        )
    return dtype if 2 * count >= flops else ""


def _within_loops(kernel: Kernel, bytes_read, bytes_written, flops, notes: list):
    """The counts, each lowered to what the kernel's loops can touch where it is above that by more than 1%
    (``triton_bounds``: gathers, scatters, the second stage of a split reduction, each buffer's distinct extent once
    per call), and the names of those lowered (``Cost.upper_bounds``); ``notes`` says which."""
    from .triton_bounds import triton_bounds

    bounds = triton_bounds(kernel.name, kernel.source, _extents(kernel))
    if bounds is None:
        return bytes_read, bytes_written, flops, []
    out, capped = [], []
    for what, value, bound in (
        ("bytes_read", bytes_read, bounds[0]),
        ("bytes_written", bytes_written, bounds[1]),
        ("flops", flops, bounds[2]),
    ):
        if value is not None and value > bound * 1.01:
            out.append(bound)
            capped.append(what)
        else:
            out.append(value)
    if capped:
        said = " and ".join(w.replace("_", " ") for w in capped)
        notes.append(
            f"{said} capped at what the kernel's loops touch (indexed or split access, each buffer's distinct "
            "elements once: an upper bound)"
        )
    return (*out, capped)


def _extents(kernel: Kernel) -> dict[str, int]:
    """The kernel's pointer parameter -> the elements its argument spans (``1 + sum((size - 1) * stride)``), from the
    recorded launch (``Kernel.launch``), for the arguments whose sizes and strides are plain ints."""
    out: dict[str, int] = {}
    for a in kernel.launch.args if kernel.launch is not None else []:
        shape, stride = a.shape, a.stride
        if not a.param or not isinstance(shape, list) or not isinstance(stride, list) or len(shape) != len(stride):
            continue
        if all(isinstance(x, int) and not isinstance(x, bool) for x in shape + stride):
            out[a.param] = 0 if 0 in shape else 1 + sum((n - 1) * abs(st) for n, st in zip(shape, stride))
    return out


def with_costs(compile: Compile, inductor_bytes: Optional[dict] = None) -> list[Kernel]:
    """The compile's kernels, each with its ``cost``."""
    import dataclasses

    graph = compile.graphs.get("post_grad")
    shared = _Sizes(graph.nodes if graph else [])  # one index of the graph for all its kernels
    return [dataclasses.replace(k, cost=kernel_cost(k, compile, inductor_bytes, shared)) for k in compile.kernels]
