"""The workload registry: id → workload, in the order of the default suite."""
from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from workloads import own
from workloads.base import Workload, canonical_json
from workloads.data import pin_problem
from workloads.dlrm_small.spec import DlrmSmall
from workloads.fashion_cnn.spec import FashionCnn
from workloads.gpt2.spec import Gpt2
from workloads.llama.spec import Llama1B
from workloads.lm_char.spec import LmChar
from workloads.pinned import SCALES


class IncompleteWorkload(ValueError):
    """A workload that leaves out a field every registered workload declares."""


CHECKLIST = "docs/workloads.md, 'Adding a workload'"


def checked(workload: Workload) -> Workload:
    """``workload``, once it declares what the rules need of every registered workload: its measured
    ``seed_spread`` (how far a re-run may drift) and ``eval_samples`` at each scale (the floor of
    ``eval-too-fast``/``tta-too-fast``), and data files pinned by a well-formed sha256 and size;
    :class:`IncompleteWorkload` naming the field otherwise."""
    if workload.seed_spread is None:
        raise IncompleteWorkload(f"workload {workload.id!r} declares no seed_spread (its measured seed-to-seed "
                                 f"spread; {CHECKLIST})")
    for file in workload.data_files:
        problem = pin_problem(file)
        if problem is not None:
            raise IncompleteWorkload(f"workload {workload.id!r} {problem}; {CHECKLIST}")
    for scale in SCALES:
        if workload.eval_samples(workload.spec(scale)) is None:
            raise IncompleteWorkload(f"workload {workload.id!r} declares no eval_samples at {scale} scale (the "
                                     f"samples one evaluation runs forward; {CHECKLIST})")
    return workload


_CHECKED: dict[int, Workload] = {}
"""The workloads :func:`checked` passed, by ``id()`` (the object kept, so that its id is not reused)."""


def _checked_once(workload: Workload) -> Workload:
    """:func:`checked`, once per workload object: at registration, and at the first lookup of one
    put in :data:`WORKLOADS` without it."""
    if _CHECKED.get(id(workload)) is not workload:
        checked(workload)
        _CHECKED[id(workload)] = workload
    return workload


WORKLOADS: dict[str, Workload] = {
    w.id: _checked_once(w) for w in (LmChar(), Gpt2(), FashionCnn(), Llama1B(), DlrmSmall())}


class UnknownWorkload(KeyError):
    """No workload has this id."""


def get(workload_id: str) -> Workload:
    """The workload with this id, or :class:`UnknownWorkload` listing the known ones
    (:class:`IncompleteWorkload` for one registered without a required field: checked once per
    workload, outside the lookup, so that an error of the check is never read as an unknown id)."""
    try:
        workload = WORKLOADS[workload_id]
    except (KeyError, TypeError):  # TypeError: an id that is no string (a list, an object) cannot be one
        raise UnknownWorkload(
            f"unknown workload {workload_id!r}; known: {', '.join(WORKLOADS)}") from None
    return _checked_once(workload)


def of_run(run: Mapping[str, Any], doc: Mapping[str, Any]) -> Workload:
    """The workload a run of ``doc`` trained: this suite's, by the run's id; in the own division,
    the submitter's implementation as its file declares it (:func:`workloads.own.own_workload`).
    :class:`UnknownWorkload` or :class:`workloads.own.NotOwn` when there is none."""
    settings = doc.get("settings")
    if not isinstance(settings, Mapping) or settings.get("division") != own.DIVISION:
        return get(run["workload"]["id"])
    implementation = settings.get("implementation")
    try:
        key = canonical_json(implementation)
    except (TypeError, ValueError):
        raise own.NotOwn("settings.implementation is not plain JSON") from None
    return _own(key, run["scale"])


@functools.lru_cache(maxsize=256)
def _own(implementation_json: str, scale: str) -> Workload:
    """An own implementation's workload, once per declaration and scale (validation and the site ask often)."""
    import json

    implementation = json.loads(implementation_json)
    against = implementation.get("against") if isinstance(implementation, dict) else None
    reference = get(against) if isinstance(against, str) else None
    if against is not None and reference is None:
        raise own.NotOwn("settings.implementation.against is not a workload id")
    return own.own_workload(implementation, scale, reference)
