"""``goodbench project FILE``: project a run's goodput to N GPUs with failures."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from suite.commands.common import output_path, range_type
from suite.record.errors import GoodbenchError, Usage
from suite.record.text import count, safe

# goodbench project's inputs: beyond these the model says nothing useful (and floats overflow)
PROJECT_GPUS = range_type(int, 1, 1_000_000)
PROJECT_MTBF_HOURS = range_type(float, 1e-3, 1e9)
PROJECT_RESTART_S = range_type(float, 0, 1e7)
PROJECT_CHECKPOINT_STEPS = range_type(int, 1, 1_000_000_000)


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench project`` and its arguments."""
    p = commands.add_parser("project", help="project a run's goodput to N GPUs with failures")
    p.add_argument("file", metavar="FILE", help="a results file whose run saved checkpoints and was restarted")
    p.add_argument("--gpus", type=PROJECT_GPUS, help="a GPU count to add to the table (1 … 1,000,000)")
    p.add_argument("--mtbf-hours", type=PROJECT_MTBF_HOURS, required=True,
                   help="mean time between failures of one GPU, in hours (0.001 … 1e9)")
    p.add_argument("--restart-seconds", type=PROJECT_RESTART_S,
                   help="restart cost in seconds, 0 … 1e7 (default: measured in FILE)")
    p.add_argument("--checkpoint-every", type=PROJECT_CHECKPOINT_STEPS, metavar="STEPS",
                   help="checkpoint interval in steps, 1 … 1e9 (default: Young/Daly optimum)")
    p.add_argument("--run", type=range_type(int, 0), default=0, metavar="INDEX",
                   help="which run of FILE, from 0 (default 0)")
    p.add_argument("-o", "--output", type=output_path, help="JSON output, never over a file but an earlier projection (default: FILE with "
                        ".projection.json; in the working folder where FILE is in a results store)")
    return p


def run(args) -> int:
    """Project run ``--run`` of FILE to the GPU counts of the table, print it and write it as JSON; 0."""
    from suite.figures import projection, report
    from suite.record import results
    from suite.validate import load

    doc, problems = load(args.file)
    if problems:
        raise GoodbenchError(f"cannot read {problems[0].line(args.file)}")
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        raise GoodbenchError(f"{args.file}: no runs to project from")
    if not 0 <= args.run < len(runs):
        allowed = "must be 0" if len(runs) == 1 else f"must be between 0 and {len(runs) - 1}"
        raise Usage(f"{args.file} has {count(len(runs), 'run')}; --run {allowed}")
    try:
        measured = projection.measured_from_run(runs[args.run], args.restart_seconds)
    except projection.CannotProject as exc:
        raise GoodbenchError(f"{args.file}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GoodbenchError(f"{args.file}: run {args.run} lacks what a projection needs ({exc!r})") from None
    out, earlier = _output(args)  # refused before the table is printed
    counts = tuple(sorted(set(projection.GPU_COUNTS) | ({args.gpus} if args.gpus else set())))
    rows = projection.table(measured, args.mtbf_hours, counts, args.checkpoint_every)
    print(report.projection(measured, args.mtbf_hours, rows))
    payload = json.dumps({"source": args.file, "mtbf_hours": args.mtbf_hours, "measured": measured.__dict__,
                          "points": rows}, indent=1, allow_nan=False)
    try:  # over an earlier projection only; never over a file that appeared meanwhile
        results.write_atomic(out, payload, overwrite=earlier)
    except FileExistsError:
        raise GoodbenchError(f"{safe(str(out), 200)} exists; goodbench project never overwrites a file "
                             "(give another -o)") from None
    print(f"projection {'rewritten' if earlier else 'written'} to {out}")
    return 0


def _output(args) -> tuple[Path, bool]:
    """Where the projection goes: ``-o``, else FILE with ``.projection.json`` — in the working folder
    where FILE is in a results store, where only ``goodbench submit`` writes — and whether an earlier
    projection is there to be replaced (another MTBF tried). Never another file that exists (the
    results file it read, given as ``-o``, was replaced) nor a path in a store."""
    from suite.store import naming

    out = Path(args.output) if args.output else Path(args.file).with_suffix(".projection.json")
    if not args.output and naming.store_reason(out.parent) is not None:
        out = Path(out.name)
    shown = safe(str(out), 200)
    store = naming.store_reason(out.parent)
    if store is not None:
        raise GoodbenchError(f"{shown} is in a results store ({store}), where only goodbench submit writes: "
                             "give -o a path outside it")
    if not out.exists() and not out.is_symlink():
        return out, False
    if _is_projection(out):
        return out, True
    raise GoodbenchError(f"{shown} exists and is no projection; goodbench project never overwrites another "
                         "file (give another -o)")


def _is_projection(path: Path) -> bool:
    """Whether ``path`` is a regular file holding what :func:`run` writes (a JSON object with its keys)."""
    from suite.record.reading import read_bounded

    raw, _ = read_bounded(path)
    try:
        doc = json.loads(raw) if raw is not None else None
    except ValueError:
        return False
    return isinstance(doc, dict) and set(doc) == {"source", "mtbf_hours", "measured", "points"}
