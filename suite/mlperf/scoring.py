"""The official score of one system × benchmark, as MLCommons' result_summarizer computes it.

result_summarizer (``_compute_strong_score_standalone``) reads every ``result_*.txt`` of the
benchmark folder; a run that fails the compliance check (which also fails a run below the
quality target or with ``status: aborted``) or lacks ``run_start``/``run_stop`` is dropped;
more dropped runs than the benchmark allows (1; 4 for unet3d) give no score; otherwise the
olympic average (``_compute_olympic_average``: the fastest run and, unless a dropped run already
stands for it, the slowest are left out) times the RCP factor of the folder's ``scaling.json``
(``_get_scaling_factor``). The functions used are MLCommons' own; only the loop over runs,
whose per-run part ran in :func:`suite.mlperf.ingest.read_run`, is here.

The required run count (``benchmark_meta.get_result_file_counts``) is reported beside the
score: result_summarizer scores whatever runs the folder holds, and so does this.
"""
from __future__ import annotations

import json


def max_dropped(benchmark: str) -> int:
    """Runs the olympic rule may drop (result_summarizer: 4 for unet3d, else 1)."""
    return 4 if benchmark == "unet3d" else 1


def required_runs(benchmark: str) -> int | None:
    """The runs an official submission of ``benchmark`` needs (None: a benchmark MLCommons'
    table does not know)."""
    from mlperf_logging.benchmark_meta import get_result_file_counts

    return get_result_file_counts("training").get(benchmark)


def scaling_factor(folder: str) -> float:
    """The RCP factor of the benchmark folder's ``scaling.json`` (1.0 without one)."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    try:
        return float(rs._get_scaling_factor(folder))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"scaling.json cannot be read: {exc}") from None


def official_score(benchmark: str, runs: list[dict], factor: float) -> dict:
    """The score of ``runs`` (summaries from :func:`suite.mlperf.ingest.read_run`; a run that
    could not be read counts as dropped) with the RCP ``factor``."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    scores = [r["score_minutes"] for r in runs if r.get("counted")]
    dropped = len(runs) - len(scores)
    allowed = max_dropped(benchmark)
    required = required_runs(benchmark)
    out = {"minutes": None, "rcp_scaling_factor": factor, "runs": len(runs),
           "runs_counted": len(scores), "runs_dropped": dropped, "max_dropped": allowed,
           "required_runs": required,
           "method": "MLCommons result_summarizer: olympic average of the compliant runs "
                     "(fastest and slowest left out; a dropped run stands for the slowest) × RCP factor"}
    if dropped > allowed:
        out["status"] = (f"no score: {dropped} runs dropped (non-compliant, not converged or "
                         f"unreadable), at most {allowed} allowed")
        return out
    average = rs._compute_olympic_average(list(scores), dropped, allowed)
    if average is None:
        out["status"] = "no score: no run left after the olympic rule"
        return out
    out["minutes"] = average * factor
    out["status"] = "ok" if required is None or len(runs) >= required else (
        f"ok, but {len(runs)} runs where an official submission needs {required} "
        "(result_summarizer scores them all the same)")
    return out
