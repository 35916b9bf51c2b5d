"""Model FLOPs of one training step, counted once by torch's FLOP counter
(``torch.utils.flop_counter.FlopCounterMode``: the matmuls, convolutions and attention of a
forward and backward pass as they run), for code whose FLOPs are not known analytically."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from suite.record.errors import GoodbenchError


def count_flops(forward_backward: Callable[[], Any]) -> float:
    """The FLOPs torch counts while ``forward_backward()`` runs: one batch's forward and backward
    pass, without the optimizer's update (which is not model FLOPs). Activation recomputation
    inside it is counted too, which PaLM's model FLOPs leave out: count a step without it.
    :class:`GoodbenchError` when nothing was counted."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        forward_backward()
    total = float(counter.get_total_flops())
    if total <= 0:
        raise GoodbenchError("torch's FLOP counter counted no FLOPs in the function given: it must run "
                             "a forward and backward pass of one batch")
    return total
