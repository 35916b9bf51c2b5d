"""``goodbench site``: render the results directory into a static, self-contained site."""
from __future__ import annotations

import math
import shutil
from importlib.resources import files
from pathlib import Path

import jinja2

from suite import __version__, leaderboard
from suite.results import utc_now, write_atomic
from workloads import registry


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(files("goodbench_site").joinpath("templates"))),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    return env


def _num(value, digits: int = 3) -> str:
    """A figure for a table cell; "—" for missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def build(results_dir: str | Path, out_dir: str | Path) -> Path:
    """Render ``results_dir`` into ``out_dir``; returns the path of ``index.html``."""
    out_dir = Path(out_dir)
    valid, invalid = leaderboard.load_valid(Path(results_dir))
    frame = leaderboard.ranked(leaderboard.table(valid))
    sections = []
    for workload in registry.WORKLOADS.values():
        subset = frame[frame["workload"] == workload.id] if not frame.empty else frame
        target = workload.spec("full").target
        sections.append({
            "id": workload.id, "version": workload.version, "task": workload.task, "kind": workload.kind,
            "target": target.describe() if target else "throughput workload",
            "ranked": _records(subset[subset["scale"] == "full"]) if not subset.empty else [],
            "smoke": _records(subset[subset["scale"] == "smoke"]) if not subset.empty else [],
        })
    html = _environment().get_template("index.html").render(
        sections=sections, invalid=invalid, suite_version=__version__, built_at=utc_now(),
        n_results=len(valid))
    static = out_dir / "static"
    static.mkdir(parents=True, exist_ok=True)
    for asset in files("goodbench_site").joinpath("static").iterdir():
        if asset.is_file():
            shutil.copyfile(str(asset), static / asset.name)
    return write_atomic(out_dir / "index.html", html)


def _records(frame) -> list[dict]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]
