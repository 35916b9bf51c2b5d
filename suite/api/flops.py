"""Model FLOPs of one training step, counted once by torch's FLOP counter
(``torch.utils.flop_counter.FlopCounterMode``: the matmuls, convolutions and attention of a
forward and backward pass as they run), for code whose FLOPs are not known analytically."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

from suite.record.errors import GoodbenchError


def count_flops(forward_backward: Callable[[], Any]) -> float:
    """The FLOPs torch counts while ``forward_backward()`` runs: one batch's forward and backward
    pass, without the optimizer's update (which is not model FLOPs). Activation recomputation
    inside it is counted too, which PaLM's model FLOPs leave out: count a step without it.
    The gradients of the tensors it used are left as they were before (:class:`_GradsKept`): the
    first step after it trains on its own batch's gradients alone, whether the loop zeroes them
    before or after its update. :class:`GoodbenchError` when nothing was counted."""
    with _GradsKept(), FlopCounterMode(display=False) as counter:
        forward_backward()
    total = float(counter.get_total_flops())
    if total <= 0:
        raise GoodbenchError("torch's FLOP counter counted no FLOPs in the function given: it must run "
                             "a forward and backward pass of one batch")
    return total


class _GradsKept(TorchFunctionMode):
    """Keeps the ``.grad`` of every leaf tensor that requires a gradient (the parameters) as a
    torch function first sees it, and puts it back on exit: the counted backward's gradients are
    not left in place for the first step to add its own to."""

    def __init__(self):
        super().__init__()
        self.kept: dict[int, tuple[Any, Any]] = {}  # id: (tensor, its grad before: a copy, or None)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for leaf in tree_leaves((args, kwargs)):
            if isinstance(leaf, torch.Tensor) and leaf.requires_grad and leaf.is_leaf and id(leaf) not in self.kept:
                grad = leaf.grad
                self.kept[id(leaf)] = (leaf, None if grad is None else grad.detach().clone())
        return func(*args, **kwargs)

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            for leaf, grad in self.kept.values():
                leaf.grad = grad
            self.kept.clear()
