"""The workload registry: id → workload, in the order of the default suite."""
from __future__ import annotations

from workloads.base import Workload
from workloads.dlrm_small.spec import DlrmSmall
from workloads.fashion_cnn.spec import FashionCnn
from workloads.gpt2.spec import Gpt2
from workloads.llama.spec import Llama1B
from workloads.lm_char.spec import LmChar

WORKLOADS: dict[str, Workload] = {
    w.id: w for w in (LmChar(), Gpt2(), FashionCnn(), Llama1B(), DlrmSmall())}


class UnknownWorkload(KeyError):
    """No workload has this id."""


def get(workload_id: str) -> Workload:
    """The workload with this id, or :class:`UnknownWorkload` listing the known ones."""
    try:
        return WORKLOADS[workload_id]
    except KeyError:
        raise UnknownWorkload(
            f"unknown workload {workload_id!r}; known: {', '.join(WORKLOADS)}") from None
