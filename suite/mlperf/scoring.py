"""The official score of one system × benchmark, as MLCommons' result_summarizer computes it.

result_summarizer (``_compute_strong_score_standalone``) reads every ``result_*.txt`` of the
benchmark folder; a run that fails the compliance check (which also fails a run below the
quality target or with ``status: aborted``) or lacks ``run_start``/``run_stop`` is dropped;
more dropped runs than the benchmark allows (1; 4 for unet3d) give no score; otherwise the
olympic average (``_compute_olympic_average``: the fastest run and, unless a dropped run already
stands for it, the slowest are left out) times the RCP factor of the folder's ``scaling.json``
(``_get_scaling_factor``). Where the folder has power logs, the energy score is the same olympic
average of the runs' energies, ordered by their times (``_index_olympic_average``), times the
same factor. The functions used are MLCommons' own; only the loop over runs, whose per-run part
ran in :func:`suite.mlperf.ingest.read_loglines`, is here.

Two guards differ from result_summarizer, for trees it would score absurdly: an RCP factor that
is not a finite number from 1 to :data:`MAX_RCP_FACTOR` (MLCommons' RCP step never sets one
below 1; the published ones are 1.0003 to 1.19) gives no score, and so does a score that is not
a finite number.

The required run count (``benchmark_meta.get_result_file_counts``) is reported beside the
score: result_summarizer scores whatever runs the folder holds, and so does this.
"""
from __future__ import annotations

import math
import os
from functools import cache

from suite.mlperf import files

MAX_RCP_FACTOR = 10.0


def max_dropped(benchmark: str) -> int:
    """Runs the olympic rule may drop (result_summarizer: 4 for unet3d, else 1)."""
    return 4 if benchmark == "unet3d" else 1


def required_runs(benchmark: str) -> int | None:
    """The runs an official submission of ``benchmark`` needs (None: a benchmark MLCommons'
    table does not know)."""
    from mlperf_logging.benchmark_meta import get_result_file_counts

    return get_result_file_counts("training").get(benchmark)


def scaling_factor(folder: str | os.PathLike) -> float:
    """The RCP factor of the benchmark folder's ``scaling.json`` (1.0 without one); ValueError
    for one that cannot be read or holds no plausible factor (see the module docstring)."""
    from suite.record.reading import parse

    path = os.path.join(folder, "scaling.json")
    if not os.path.lexists(path):
        return 1.0
    try:
        doc, problems = parse(files.read_bytes(path))
    except files.Unreadable as exc:
        raise ValueError(f"scaling.json: {exc}") from None
    if problems or not isinstance(doc, dict) or "scaling_factor" not in doc:
        why = problems[0].reason if problems else "no scaling_factor in it"
        raise ValueError(f"scaling.json cannot be read: {why}")
    factor = doc["scaling_factor"]
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 1.0 <= factor <= MAX_RCP_FACTOR:
        raise ValueError(f"scaling.json: the RCP factor {str(factor)[:40]!r} is not a number from 1 to "
                         f"{MAX_RCP_FACTOR:g} (MLCommons' RCP step sets none below 1)")
    return float(factor)


def official_score(benchmark: str, runs: list[dict], factor: float | None, has_power: bool = False,
                   factor_problem: str | None = None) -> dict:
    """The score of ``runs`` (summaries from :func:`suite.mlperf.ingest.read_loglines`, in the
    folder's order; a run that could not be read counts as dropped) with the RCP ``factor``
    (None: it could not be read, ``factor_problem`` says why)."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    counted = [r for r in runs if r.get("counted")]
    scores = [r["score_minutes"] for r in counted]
    dropped = len(runs) - len(scores)
    allowed = max_dropped(benchmark)
    required = required_runs(benchmark)
    out: dict = {"minutes": None, "rcp_scaling_factor": factor, "runs": len(runs), "runs_counted": len(scores),
                 "runs_dropped": dropped, "required_runs": required}
    if factor is None:
        out["status"] = f"no score: {factor_problem}"
    elif dropped > allowed:
        out["status"] = (f"no score: {dropped} runs dropped (non-compliant, not converged or "
                         f"unreadable), at most {allowed} allowed")
    else:
        average = rs._compute_olympic_average(list(scores), dropped, allowed)
        minutes = float("nan") if average is None else average * factor
        if average is None:
            out["status"] = "no score: no run left after the olympic rule"
        elif not math.isfinite(minutes) or minutes <= 0:
            out["status"] = "no score: the olympic average times the RCP factor is not a finite, positive time"
        else:
            out["minutes"] = minutes
            out["status"] = "ok" if required is None or len(runs) >= required else (
                f"ok, but {len(runs)} runs where an official submission needs {required} "
                "(result_summarizer scores them all the same)")
    if has_power:
        out.update(_energy_score(counted, dropped, allowed, factor if out["minutes"] is not None else None))
    return out


def _energy_score(counted: list[dict], dropped: int, allowed: int, factor: float | None) -> dict:
    """result_summarizer's power score: the runs' energies ordered by their times, olympic
    average, times the RCP factor; or why there is none."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    if factor is None:
        return {"energy_j": None, "energy_status": "not measured: the submission has no score"}
    missing = [r for r in counted if r.get("energy_j") is None]
    if missing:
        first = missing[0]
        return {"energy_j": None, "energy_status": f"not measured: {first['file']}: "
                f"{first.get('energy_note') or 'no energy'}"[:400]}
    scores = [r["score_minutes"] for r in counted]
    index = [i for i, _ in sorted(enumerate(scores), key=lambda pair: pair[1])]
    average = rs._index_olympic_average([r["energy_j"] for r in counted], index, dropped, allowed)
    if average is None or not math.isfinite(average * factor):
        return {"energy_j": None, "energy_status": "not measured: no run left after the olympic rule"}
    return {"energy_j": average * factor,
            "energy_status": "measured: result_summarizer's power score (olympic average of the runs' energies × RCP factor, J)"}


@cache
def quality_target(ruleset: str, benchmark: str) -> str | None:
    """The closed division's quality target of ``benchmark`` in ``ruleset``, as MLCommons' rule
    writes it (``closed_<benchmark>.yaml``: the ``eval_accuracy`` check one evaluation must
    pass, e.g. ``v['value'] >= 0.340 and v['value'] < 1.0``); None where the round has none."""
    import yaml
    from mlperf_logging.compliance_checker import mlp_compliance

    path = os.path.join(os.path.dirname(mlp_compliance.__file__), f"training_{ruleset}", f"closed_{benchmark}.yaml")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        records = yaml.load(fh, Loader=yaml.BaseLoader) or []
    for record in records:
        key = record.get("KEY") if isinstance(record, dict) else None
        if isinstance(key, dict) and key.get("NAME") == "eval_accuracy" and key.get("ATLEAST_ONE_CHECK"):
            return " ".join(str(key["ATLEAST_ONE_CHECK"]).split())[:300]
    return None
