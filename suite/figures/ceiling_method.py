"""The method text of a measured matmul ceiling: written from the measurement's own numbers
(:mod:`suite.meters.ceiling`) and read back by the validator, so that what the text claims (the
matrix size, the precision, how many timed batches and measurements) is held to the record."""
from __future__ import annotations

import re

MOST_MEASUREMENTS_AGAIN = 10
"""The most measurements the ceiling measured again after the runs makes (suite/meters/ceiling.py)."""
AGAIN = ("; the fastest of {made} such measurements, made after the runs while a run's model FLOP/s stood "
         "above the ceiling")
_FIRST = re.compile(r"torch\.mm (\d+)x(\d+) (\w+), random data, (\d+) warm-up products, fastest of (\d+) timed batches")
_AGAIN = re.compile(re.escape(AGAIN).replace(r"\{made\}", r"(\d+)"))


def first(n: int, precision: str, warmup: int, trials: int) -> str:
    """The method of one measurement: ``trials`` timed batches of ``n×n`` products."""
    return f"torch.mm {n}x{n} {precision}, random data, {warmup} warm-up products, fastest of {trials} timed batches"


def again(method: str, made: int) -> str:
    """The method of the fastest of ``made`` measurements made after the runs."""
    return method + AGAIN.format(made=made)


def claims(text: str) -> dict | None:
    """What a method text claims (``n``, ``precision``, ``batches``, and ``made`` where it was
    measured again), or None where it is not a text goodbench writes."""
    found = _FIRST.match(text)
    if found is None or found[1] != found[2]:
        return None
    rest = text[found.end():]
    made = _AGAIN.fullmatch(rest) if rest else None
    if rest and made is None:
        return None
    out = {"n": int(found[1]), "precision": found[3], "batches": int(found[5])}
    return {**out, "made": int(made[1])} if made else out
