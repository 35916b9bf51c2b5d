"""The checks of :class:`goodbench.Benchmark`'s arguments, made when it is built: a value the
results file could not hold, or that the validator would refuse, is a one-line
:class:`GoodbenchError` before any training, never a refusal after it."""
from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from pathlib import Path
from typing import Any

from suite.record.errors import GoodbenchError
from suite.record.limits import MAX_ARRAY_ITEMS, MAX_INT
from suite.trust.labels import name_refusal

MAX_STEPS = MAX_ARRAY_ITEMS
"""The most steps a run may declare: its step times are one array of the file, whose length the
validator bounds (``suite.record.limits.MAX_ARRAY_ITEMS``)."""


def whole(label: str, value: Any, low: int = 1, high: int = MAX_INT) -> int:
    """``value`` as a whole number from ``low`` to ``high``, else a one-line error naming ``label``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise GoodbenchError(f"{label} must be a whole number from {low} to {high:,}, not {_shown(value)}")
    return value


def per_step(label: str, value: Any, max_steps: int) -> int:
    """A per-step count (samples, tokens): the run's total, ``value`` × ``max_steps``, is a number
    the event log holds (``train_samples``), so it stays within the validator's integers."""
    return whole(label, value, 1, MAX_INT // max_steps)


def global_batch(samples_per_step: Any, tokens_per_step: Any, samples_per_rank: Any, tokens_per_rank: Any,
                 max_steps: int, world_size: int) -> tuple[int, int | None]:
    """One step's global samples and tokens (None: not given), checked: as given, or each rank's
    share × ``world_size`` (the job's processes), one of the two ways for each."""
    if (samples_per_step is None) == (samples_per_rank is None):
        raise GoodbenchError("give samples_per_step (the global batch) or samples_per_rank (each rank's share "
                             "of it), one of them")
    if tokens_per_step is not None and tokens_per_rank is not None:
        raise GoodbenchError("give tokens_per_step (the global batch's) or tokens_per_rank (each rank's), not both")
    if samples_per_rank is not None and tokens_per_step is not None:
        raise GoodbenchError("samples_per_rank goes with tokens_per_rank: give both per rank, or both per step")
    if samples_per_step is not None:
        return per_step("samples_per_step", samples_per_step, max_steps), (
            None if tokens_per_step is None else per_step("tokens_per_step", tokens_per_step, max_steps))
    ranks = f" ({world_size} ranks)" if world_size > 1 else ""
    samples = per_step(f"samples_per_rank{ranks}", samples_per_rank, max_steps * world_size) * world_size
    tokens = None if tokens_per_rank is None else \
        per_step(f"tokens_per_rank{ranks}", tokens_per_rank, max_steps * world_size) * world_size
    return samples, tokens


def flops(value: Any) -> float | None:
    """``flops_per_step``: None (counted later) or a finite number of FLOPs, at least 1 (a step of
    10⁻³⁰⁰ FLOPs escapes every physical bound: trial 5)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise GoodbenchError(f"flops_per_step must be a number of model FLOPs, not {_shown(value)}")
    if not math.isfinite(value) or value < 1:
        raise GoodbenchError(f"flops_per_step must be a finite number of model FLOPs of at least 1 (forward and "
                             f"backward of one step), not {value!r}")
    return float(value)


def positive(label: str, value: Any) -> float:
    """A finite, positive number (``peak_tflops``), else a one-line error naming ``label``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) or value <= 0:
        raise GoodbenchError(f"{label} must be a finite, positive number, not {_shown(value)}")
    return float(value)


def name(label: str, value: Any, required: bool = True, description: bool = False) -> str:
    """Text the site's rows show (``name``, ``system_name``, and ``trains`` under the name): text the
    validator accepts (no control, bidirectional or invisible character, no word of the site's trust
    labels)."""
    if required and (not isinstance(value, str) or not value.strip()):
        raise GoodbenchError(f"{label} must be a non-empty name, not {_shown(value)}")
    why = name_refusal(value, description)
    if why is not None:
        raise GoodbenchError(f"{label}: {why}")
    return value


SYSTEM_NAME_ENV = "GOODBENCH_SYSTEM_NAME"
"""The variable through which ``goodbench run-own --system-name NAME`` names the system to the script's
:class:`goodbench.Benchmark` (:func:`system_name`)."""


def system_name(given: Any) -> str | None:
    """The name of the system the results file records: ``system_name=`` as given in code, else
    ``$GOODBENCH_SYSTEM_NAME`` (``goodbench run-own --system-name``), each a :func:`name`; None where
    neither names it. Both, differing, are refused: which one the file would hold is not clear."""
    import os

    if given is not None:
        name("system_name", given)
    launched = os.environ.get(SYSTEM_NAME_ENV) or None
    if launched is None:
        return given
    name(f"--system-name of goodbench run-own (${SYSTEM_NAME_ENV})", launched)
    if given is not None and given != launched:
        raise GoodbenchError(f"system_name={given!r} in code and --system-name {launched!r} of goodbench run-own "
                             "differ: give the name once")
    return launched


def path(label: str, value: Any) -> None:
    """A path given as text or a :class:`~pathlib.Path` (None where the argument is optional)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (str, Path)) or not str(value)):
        raise GoodbenchError(f"{label} must be a path, not {_shown(value)}")


def paths(label: str, value: Any) -> list[Path]:
    """A sequence of file paths (never one string, which would be read as its characters)."""
    if isinstance(value, (str, Path)) or not isinstance(value, Sequence) \
            or not all(isinstance(p, (str, Path)) for p in value):
        raise GoodbenchError(f"{label} must be a list of paths, not {_shown(value)}")
    return [Path(p) for p in value]


def command(value: Any) -> list[str] | None:
    """``command``: None (this process's) or a list of its words (never one string)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not value \
            or not all(isinstance(w, str) for w in value):
        raise GoodbenchError(f"command must be a non-empty list of its words (['python', 'train.py', ...]), "
                             f"not {_shown(value)}")
    return list(value)


def warmup(value: Any, max_steps: int) -> int:
    """The steps before the steady-state window: ``value``, or 10 (fewer in a shorter run)."""
    value = min(10, max_steps - 1) if value is None else value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < max_steps:
        raise GoodbenchError(f"warmup_steps must be a whole number from 0 to max_steps - 1, not {value!r}")
    return value


def seeds(value: Any) -> list[int]:
    """The runs' seeds: the first ``value`` pinned seeds, or the distinct seeds given."""
    from suite.run.runner import SEED_LIMIT
    from workloads.pinned import SEEDS

    chosen = list(SEEDS[:value]) if isinstance(value, int) else list(value)
    if not chosen or len(set(chosen)) != len(chosen) or \
            not all(isinstance(s, int) and 0 <= s < SEED_LIMIT for s in chosen):
        raise GoodbenchError(f"seeds: a number of runs from 1 to {len(SEEDS)}, or distinct seeds from 0 to "
                             f"{SEED_LIMIT - 1}, not {value!r}")
    return chosen


def held_to(against: str | None, scale: str, runs: int) -> Any:
    """The workload whose target at ``scale`` the ``runs`` are held to (None: a free job), once it
    has one and the runs are as many as a reference run's at that scale."""
    from suite.figures.derive import required_seeds
    from workloads import registry

    reference = None
    if against is not None:
        try:
            reference = registry.get(against)
        except registry.UnknownWorkload as exc:
            raise GoodbenchError(str(exc.args[0])) from None
        if reference.spec(scale).target is None:
            raise GoodbenchError(f"{against} has no quality target at {scale} scale: hold the runs to a "
                                 "time-to-accuracy workload, or make them a free job (against=None)")
    needed = required_seeds(scale, "tta" if against is not None else "throughput")
    if runs < needed:
        raise GoodbenchError(f"a {scale}-scale run held to a target needs {needed} seeds in one file, as a "
                             f"reference one does: seeds={needed}")
    return reference


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"
