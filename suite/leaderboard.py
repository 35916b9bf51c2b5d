"""Results files → one row per (file, workload), aggregated over seeds with pandas."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from suite.meters import tta
from suite.validate import check_document, load

COLUMNS = ["file", "system", "accelerator", "count", "workload", "kind", "scale", "seeds",
           "score_s", "ci95_low_s", "ci95_high_s", "tta_valid", "samples_per_s", "tokens_per_s",
           "mfu", "energy_per_sample_j", "created_at", "suite_version"]


def load_valid(results_dir: Path) -> tuple[list[tuple[str, dict]], list[tuple[str, str]]]:
    """(name, document) of every valid file, and (name, first problem) of every invalid one."""
    valid, invalid = [], []
    for path in sorted(Path(results_dir).glob("*.json")):
        doc, problems = load(path)
        problems = problems or check_document(doc)
        if problems:
            invalid.append((path.name, problems[0].line(path.name)))
        else:
            valid.append((path.name, doc))
    return valid, invalid


def rows(name: str, doc: dict) -> list[dict]:
    """One row per workload of one document: medians over seeds, TTA scored over seeds."""
    by_workload: dict[str, list[dict]] = {}
    for run in doc["runs"]:
        by_workload.setdefault(run["workload"]["id"], []).append(run)
    out = []
    for wid, runs in by_workload.items():
        complete = [r for r in runs if r["status"] == "complete"]
        tputs = [r["metrics"]["throughput"] for r in complete if r["metrics"]["throughput"]]
        kind = runs[0]["workload"]["kind"]
        score = tta.score({r["seed"]: r["metrics"]["tta_s"] for r in runs}) if kind == "tta" else None
        ci = score["ci95_s"] if score and score["ci95_s"] else (None, None)
        out.append({
            "file": name,
            "system": doc["system"]["name"],
            "accelerator": doc["system"]["accelerator"]["name"],
            "count": doc["system"]["accelerator"]["count"],
            "workload": wid,
            "kind": kind,
            "scale": runs[0]["scale"],
            "seeds": len(runs),
            "score_s": score["olympic_mean_s"] if score else None,
            "ci95_low_s": ci[0],
            "ci95_high_s": ci[1],
            "tta_valid": score["valid"] if score else None,
            "samples_per_s": _median([t["samples_per_s"] for t in tputs]),
            "tokens_per_s": _median([t["tokens_per_s"] for t in tputs if t["tokens_per_s"]]),
            "mfu": _median([r["metrics"]["mfu"] for r in complete if r["metrics"]["mfu"] is not None]),
            "energy_per_sample_j": _median([r["metrics"]["energy_per_sample_j"] for r in complete
                                            if r["metrics"]["energy_per_sample_j"] is not None]),
            "created_at": doc["created_at"],
            "suite_version": doc["suite"]["version"],
        })
    return out


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def table(results: list[tuple[str, dict]]) -> pd.DataFrame:
    """All rows of all valid documents as one DataFrame."""
    return pd.DataFrame([row for name, doc in results for row in rows(name, doc)], columns=COLUMNS)


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in leaderboard order: TTA ascending (valid first), else throughput descending."""
    if frame.empty:
        return frame
    tta_rows = frame[frame["kind"] == "tta"].sort_values(["tta_valid", "score_s"], ascending=[False, True],
                                                         na_position="last")
    tput_rows = frame[frame["kind"] != "tta"].sort_values("samples_per_s", ascending=False, na_position="last")
    return pd.concat([tta_rows, tput_rows])
