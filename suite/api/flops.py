"""Model FLOPs of one training step, counted once by torch's FLOP counter
(``torch.utils.flop_counter.FlopCounterMode``: the matmuls, convolutions and attention of a
forward and backward pass as they run), for code whose FLOPs are not known analytically.
Imports torch only when called."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from suite.record.errors import GoodbenchError


def count_flops(forward_backward: Callable[[], Any]) -> float:
    """The FLOPs torch counts while ``forward_backward()`` runs: one batch's forward and backward
    pass, without the optimizer's update (which is not model FLOPs). Activation recomputation
    inside it is counted too, which PaLM's model FLOPs leave out: count a step without it.
    The gradients of the tensors it used are left as they were before (:func:`_grads_kept`): the
    first step after it trains on its own batch's gradients alone, whether the loop zeroes them
    before or after its update. :class:`GoodbenchError` when nothing was counted."""
    from torch.utils.flop_counter import FlopCounterMode

    with _grads_kept(), FlopCounterMode(display=False) as counter:
        forward_backward()
    total = float(counter.get_total_flops())
    if total <= 0:
        raise GoodbenchError("torch's FLOP counter counted no FLOPs in the function given: it must run "
                             "a forward and backward pass of one batch")
    return total


def _tensors(value: Any) -> Iterator[Any]:
    """The objects inside ``value``'s tuples, lists and dicts (a torch function's arguments), in order."""
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    else:
        yield value


def _grads_kept() -> Any:
    """A torch function mode that keeps the ``.grad`` of every leaf tensor that requires a gradient
    (the parameters) as a torch function first sees it, and puts it back on exit: the counted
    backward's gradients are not left in place for the first step to add its own to.

    A gradient held before is written back into the same tensor (``copy_``), so gradients that are
    views of one flat buffer (DDP's ``gradient_as_bucket_view``, an optimizer's contiguous
    gradients) stay views of it; one that was None is None again. A parameter no torch function
    is called with in Python (one used only inside a compiled graph or a C++ extension) is not
    seen, and keeps the counted backward's gradient."""
    import torch
    from torch.overrides import TorchFunctionMode

    class GradsKept(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            # id: (tensor, its grad before or None, a copy of that grad's values or None)
            self.kept: dict[int, tuple[Any, Any, Any]] = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            for leaf in _tensors((args, kwargs)):
                if isinstance(leaf, torch.Tensor) and leaf.requires_grad and leaf.is_leaf and id(leaf) not in self.kept:
                    grad = leaf.grad
                    self.kept[id(leaf)] = (leaf, grad, None if grad is None else grad.detach().clone())
            return func(*args, **kwargs)

        def __exit__(self, *exc):
            try:
                return super().__exit__(*exc)
            finally:
                with torch.no_grad():
                    for leaf, grad, values in self.kept.values():
                        if grad is not None:
                            grad.copy_(values)
                        if leaf.grad is not grad:
                            leaf.grad = grad
                self.kept.clear()

    return GradsKept()
