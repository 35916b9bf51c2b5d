"""Per-workload summary of a results document: seeds, time-to-accuracy score, throughput."""
from __future__ import annotations

import numpy as np

from suite.meters import tta


def summarize(runs: list[dict]) -> dict[str, dict]:
    """For each workload × scale in ``runs``: the seeds, the MLPerf-style TTA score over them
    (TTA workloads), and the median steady-state throughput and MFU of the complete runs."""
    groups: dict[str, list[dict]] = {}
    for run in runs:
        groups.setdefault(f"{run['workload']['id']}@{run['scale']}", []).append(run)
    out = {}
    for key, group in groups.items():
        complete = [r for r in group if r["status"] == "complete"]
        tputs = [r["metrics"]["throughput"] for r in complete if r["metrics"]["throughput"]]
        kind = group[0]["workload"]["kind"]
        out[key] = {
            "workload": group[0]["workload"]["id"],
            "scale": group[0]["scale"],
            "kind": kind,
            "seeds": [r["seed"] for r in group],
            "complete": len(complete),
            "tta": tta.score({r["seed"]: r["metrics"]["tta_s"] if r["status"] == "complete" else None
                              for r in group}) if kind == "tta" else None,
            "samples_per_s_median": _median([t["samples_per_s"] for t in tputs]),
            "tokens_per_s_median": _median([t["tokens_per_s"] for t in tputs if t["tokens_per_s"]]),
            "mfu_median": _median([r["metrics"]["mfu"] for r in complete if r["metrics"]["mfu"] is not None]),
        }
    return out


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None
