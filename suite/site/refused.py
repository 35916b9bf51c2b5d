"""How many of the files not shown (refused by validation, or not stored by ``goodbench submit``)
name each workload, so that a workload page can point to them. The builder reads each file once
(:func:`suite.leaderboard.rows.read_stored_parsed`) and hands over the workload ids it saw
(:func:`workload_ids`); nothing here reads a file again."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping


def workload_ids(doc: object) -> list[str]:
    """The workload ids (strings only) that the runs of a parsed document name, sorted, once each.
    Refused files are the input here, so any shape counts as naming none: ``runs`` not a list, a
    run or its ``workload`` not an object, an id that is not a string (a list, an object, …)."""
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list):
        return []
    workloads = [run["workload"] for run in runs if isinstance(run, dict) and isinstance(run.get("workload"), dict)]
    return sorted({w["id"] for w in workloads if isinstance(w.get("id"), str)})


def by_workload(named: Mapping[str, Iterable[str]], ids: Iterable[str]) -> dict[str, int]:
    """For each workload of ``ids``, how many refused files hold a run of it; ``named``: each
    refused file's name to the workload ids its runs name (:func:`workload_ids`)."""
    wanted = set(ids)
    counts: Counter[str] = Counter()
    for workloads in named.values():
        counts.update(w for w in set(workloads) if w in wanted)
    return dict(counts)
