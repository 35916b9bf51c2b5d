"""How many of the files not shown (refused by validation, or not stored by ``goodbench submit``)
name each workload, so that a workload page can point to them."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from suite.record.reading import parse, read_bounded


def by_workload(results_dir: Path, invalid: list[tuple[str, str]], ids: list[str]) -> dict[str, int]:
    """For each workload of ``ids``, how many files of ``invalid`` ((name, reason) as the index
    lists them) hold a run of it; a file that cannot be read or parsed names none."""
    counts: Counter[str] = Counter()
    for name, _ in invalid:
        raw, problems = read_bounded(Path(results_dir) / name)
        doc, problems = (None, problems) if problems or raw is None else parse(raw)
        runs = doc.get("runs") if isinstance(doc, dict) else None
        named = {run["workload"].get("id") for run in runs if isinstance(run, dict)
                 and isinstance(run.get("workload"), dict)} if isinstance(runs, list) else set()
        counts.update(w for w in ids if w in named)
    return dict(counts)
