"""Per-workload summary of a results document: seeds, time-to-accuracy score, throughput.

Only complete runs count towards a figure: a failed or partial run's TTA, throughput or MFU
is never scored (its seed counts as not having reached the target)."""
from __future__ import annotations

import numpy as np

from suite.figures import tta
from suite.record import results


def groups(runs: list[dict]) -> dict[str, list[dict]]:
    """``runs`` grouped by ``"workload@scale"``, in order of first appearance."""
    out: dict[str, list[dict]] = {}
    for run in runs:
        out.setdefault(f"{run['workload']['id']}@{run['scale']}", []).append(run)
    return out


def counts(run: dict) -> bool:
    """Whether a run's figures count: only a ``complete`` run's do."""
    return run["status"] == "complete"


def complete_runs(runs: list[dict]) -> list[dict]:
    """The runs whose figures count (see :func:`counts`)."""
    return [r for r in runs if counts(r)]


def median(values: list) -> float | None:
    """Median of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return float(np.median(present)) if present else None


def tta_by_seed(group: list[dict]) -> dict[int, float | None]:
    """A workload × scale's times to target by seed (None: the run did not count or missed)."""
    return {r["seed"]: r["metrics"]["tta_s"] if counts(r) else None for r in group}


def summarize(runs: list[dict]) -> dict[str, dict]:
    """For each workload × scale in ``runs``: the seeds, the MLPerf-style TTA score over them
    (TTA workloads), and the median steady-state throughput and MFU of the complete runs."""
    out = {}
    for key, group in groups(runs).items():
        complete = complete_runs(group)
        kind = group[0]["workload"]["kind"]
        out[key] = {
            "workload": group[0]["workload"]["id"],
            "scale": group[0]["scale"],
            "kind": kind,
            "seeds": list(dict.fromkeys(r["seed"] for r in group)),  # a seed repeated (--repeat) once
            "complete": len(complete),
            "tta": tta.score(tta_by_seed(group)) if kind == "tta" else None,
            "samples_per_s_median": median([results.samples_per_s(r) for r in complete]),
            "tokens_per_s_median": median([results.tokens_per_s(r) for r in complete]),
            "mfu_median": median([r["metrics"]["mfu"] for r in complete]),
        }
    return out
