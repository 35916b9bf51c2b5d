"""MLPerf's required keys in goodbench's event log, with goodbench's values.

MLCommons' compliance checker (``training_<ruleset>/common.yaml``) requires, besides the
intervals goodbench always logged: ``submission_org``, ``submission_platform``,
``submission_division``, ``submission_benchmark``, ``cache_clear``, ``train_samples``,
``eval_samples`` and ``gradient_accumulation_steps``; and progress as ``samples_count`` (or
``epoch_num``) in the metadata of ``block_start``/``block_stop``, ``eval_start``/``eval_stop``
and ``eval_accuracy``. goodbench logs them with these values:

| key | value |
|---|---|
| ``cache_clear`` | ``false``: goodbench does not drop the OS page cache before a run |
| ``submission_org`` | the system description's ``organization`` (``--system-overrides``), else its ``name`` |
| ``submission_platform`` | the system description's ``name`` (``--system-name``) |
| ``submission_division`` | the results file's division: ``open`` with open-division changes, else ``closed`` |
| ``submission_benchmark`` | the workload id |
| ``train_samples`` | samples of the run's training budget: ``max_steps`` × global batch |
| ``eval_samples`` | samples one evaluation reads (the workload's eval set or eval batches × batch) |
| ``gradient_accumulation_steps`` | micro-batches per step on a rank (1 without ``--micro-batch``) |
| ``goodbench_scale`` | ``smoke`` or ``full`` (goodbench's own key) |
| ``goodbench_max_steps`` | the spec's ``max_steps``; logs written before this key was renamed call it ``max_steps``, which is an MLPerf key that means something else |

``samples_count`` is the samples trained before the event: ``(first_step - 1)`` × global batch at
a ``block_start``, ``last_step`` × global batch at a ``block_stop``, ``step`` × global batch at
an evaluation and at ``run_stop``. goodbench's own step fields stay beside it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from suite.record.text import normal_name

# goodbench's name for the spec's max_steps, and the name logs written before it used
MAX_STEPS_KEY, LEGACY_MAX_STEPS_KEY = "goodbench_max_steps", "max_steps"
SCALE_KEY = "goodbench_scale"


@dataclass(frozen=True)
class Submission:
    """The submission keys a run's log carries (from the system description and the division)."""

    org: str
    platform: str
    division: str = "closed"


def submission(system_name: str | None, overrides: dict | None, fallback: str, division: str) -> Submission:
    """The submission keys of a suite run: org and platform from the system description as
    ``goodbench run`` records it (its ``name``: ``--system-name`` or ``fallback``, the
    accelerator's name; its ``organization`` when ``--system-overrides`` sets one)."""
    overrides = overrides or {}
    given = overrides.get("name")  # --system-overrides may rename the system, as describe() does
    # the name as describe() writes it (suite/run/system.py): the log's copy must be the same string
    name = normal_name(given if isinstance(given, str) and given.strip() else system_name or "") \
        or normal_name(fallback)
    org = overrides.get("organization")
    return Submission(org=normal_name(org) if isinstance(org, str) and org.strip() else name,
                      platform=name, division=division)


def eval_samples(spec: Any) -> int:
    """Samples one evaluation reads, from the workload spec's pinned eval fields."""
    for field in ("eval_samples", "test_images"):
        value = getattr(spec, field, None)
        if isinstance(value, int) and value > 0:
            return value
    batches = getattr(spec, "eval_batches", None)
    return int(batches) * int(spec.batch_size) if isinstance(batches, int) else int(spec.batch_size)


def header(workload_id: str, spec: Any, scale: str, samples_per_step: int, accumulation: int,
           sub: Submission) -> list[tuple[str, Any]]:
    """The (key, value) events of MLPerf's run description, in the order MLCommons' checker
    needs them (``submission_division`` before ``init_stop``, ``goodbench_scale`` before the
    values a rule file checks per scale)."""
    return [
        ("cache_clear", False),
        ("submission_org", sub.org),
        ("submission_platform", sub.platform),
        ("submission_division", sub.division),
        ("submission_benchmark", workload_id),
        (SCALE_KEY, scale),  # before the values a rule file checks per scale
        (MAX_STEPS_KEY, int(spec.max_steps)),
        ("train_samples", int(spec.max_steps) * int(samples_per_step)),
        ("eval_samples", eval_samples(spec)),
        ("gradient_accumulation_steps", int(accumulation)),
    ]


def max_steps(events) -> int | None:
    """The spec's ``max_steps`` a log recorded, under its current or its legacy key."""
    for e in events:
        if getattr(e, "key", None) in (MAX_STEPS_KEY, LEGACY_MAX_STEPS_KEY):
            return e.value if isinstance(e.value, int) else None
    return None
