"""What an MLPerf log's progress counters count, by benchmark and round.

``samples_count`` always counts samples. ``epoch_num`` (and ``first_epoch_num``) means what the
benchmark's reference implementation made it mean: epochs for the vision benchmarks, samples for
BERT, tokens for GPT-3. A counter whose unit is not in :data:`EPOCH_NUM_UNITS` gives no sample
count (throughput "not measured"), never a guessed one.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """What ``epoch_num`` counts for ``benchmark`` in rounds ``first_round`` … ``last_round``
    (inclusive, as ``(major, minor)``; None: open-ended)."""

    benchmark: str
    unit: str  # "epochs", "samples" or "tokens"
    first_round: tuple[int, int] = (0, 0)
    last_round: tuple[int, int] | None = None
    note: str = ""


EPOCH_NUM_UNITS: tuple[Unit, ...] = (
    Unit("resnet", "epochs", note="ImageNet epochs, 1-based; samples = epochs × train_samples"),
    Unit("ssd", "epochs"),
    Unit("retinanet", "epochs"),
    Unit("maskrcnn", "epochs"),
    Unit("unet3d", "epochs"),
    Unit("rnnt", "epochs"),
    Unit("bert", "samples", first_round=(1, 0), note="training sequences seen"),
    Unit("gpt3", "tokens", first_round=(3, 0),
         note="tokens seen; samples = tokens / max_sequence_length"),
)


def round_tuple(round_name: str) -> tuple[int, int]:
    """"v5.1" or "5.1.0" → (5, 1)."""
    parts = round_name.lstrip("v").split(".")
    return int(parts[0]), int(parts[1])


def epoch_num_unit(benchmark: str, round_name: str) -> str | None:
    """What ``epoch_num`` counts for this benchmark in this round, or None when unknown."""
    r = round_tuple(round_name)
    for u in EPOCH_NUM_UNITS:
        if u.benchmark == benchmark and u.first_round <= r and (u.last_round is None or r <= u.last_round):
            return u.unit
    return None


def samples_from(progress: float | None, unit: str | None, train_samples: float | None,
                 sequence_length: float | None) -> float | None:
    """Samples trained from a progress counter in ``unit``; None where it cannot be told (no
    counter, an unknown unit, or no ``train_samples``/``max_sequence_length`` to convert with)."""
    if progress is None:
        return None
    if unit == "samples":
        return float(progress)
    if unit == "epochs":
        return float(progress) * float(train_samples) if train_samples else None
    if unit == "tokens":
        return float(progress) / float(sequence_length) if sequence_length else None
    return None
