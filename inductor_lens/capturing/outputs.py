"""The tensors of a call's output, and a backward through them (``backward=True`` of ``inspect``, the magic,
``time_kernels``): a sum of every floating-point tensor that requires grad, so any output shape works."""

from __future__ import annotations

from typing import Any


def backward_tensors(out: Any) -> list:
    """What a backward pass differentiates in ``out``: its ``loss`` (attribute or key) when that requires
    grad, else every tensor requiring grad inside it (tuples, lists, dicts, dataclasses, ``ModelOutput``)."""
    import dataclasses

    import torch

    loss = out.get("loss") if isinstance(out, dict) else getattr(out, "loss", None)
    if isinstance(loss, torch.Tensor) and loss.requires_grad:
        return [loss]
    found: list = []

    def walk(v: Any, depth: int) -> None:
        if depth > 8:
            return
        if isinstance(v, torch.Tensor):
            if v.requires_grad:
                found.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x, depth + 1)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name, None), depth + 1)

    walk(out, 0)
    return found


def backward(out: Any) -> None:
    """A backward pass through ``out`` (:func:`backward_tensors`) that leaves no gradient behind: the ``.grad`` of
    every leaf it reaches (the model's parameters, inputs that require grad) is put back as it was, ``None``
    included. It runs so that the backward graph compiles; a user's next training step must not find it in
    its gradients."""
    import torch

    tensors = backward_tensors(out)
    if not tensors:
        raise ValueError(
            "backward=True needs an output that requires grad (a parameter or an input with "
            "requires_grad=True must feed it)"
        )
    kept = [(t, None if t.grad is None else t.grad.detach().clone()) for t in _leaves(tensors)]
    try:
        sum(t.sum() for t in tensors).backward()
    finally:
        with torch.no_grad():
            for t, g in kept:
                t.grad = g


def _leaves(tensors: list) -> list:
    """The leaf tensors a backward from ``tensors`` accumulates gradients into (autograd's AccumulateGrad nodes)."""
    out, seen, todo = [], set(), [t.grad_fn for t in tensors if t.grad_fn is not None]
    out += [t for t in tensors if t.grad_fn is None and t.requires_grad]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        leaf = getattr(fn, "variable", None)
        if leaf is not None:
            out.append(leaf)
        todo += [nxt for nxt, _ in getattr(fn, "next_functions", ())]
    return out
