"""How far honest results files are from the validator's physical bounds: for each run, each bound's
slack — how many times over its bound the file's figure is, the factor a retime or an edit would
have to shrink it by before the rule refuses it (a number under 1 is a refusal).

    python benchmarks/physics_slack.py FILE... [--json OUT]

Bounds (suite/validate/physics_rules.py and suite/figures/clocks.py):
  ceiling  the rule ``above-ceiling``'s most model FLOP/s over the rate over the window
  peak     the table's dense peak (or the ceiling, the lesser) over the rate (GPU)
  cores    the recorded cores' most FLOP/s over the rate (CPU, ``cpu-too-fast``)
  step     the fastest step over the GPU's launch floor (``step-too-fast``)
  eval     the shortest evaluation over its floor (``eval-too-fast``; on a CPU, the cores')
  tta      the time to target over its floor (``tta-too-fast``)
  power    the lowest mean power over its floor (``power-band``: the class's, and the window's work)
  clock    each second-clock figure's allowance over its disagreement, the least (``second-clock``)

A bound that does not apply to a run (no window, no evaluation, no energy, one clock) is blank.
The GPU slot (benchmarks/gpu_session.sh) prints this table for the files it brought.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.figures import clocks, derive
from suite.figures import mfu as mfu_meter
from suite.record import results
from suite.validate import physics_rules as physics
from suite.validate.facts import pinned_of, run_facts
from suite.validate.shared import read_log

BOUNDS = ("ceiling", "peak", "cores", "step", "eval", "tta", "power", "clock")


def _over(figure: float | None, bound: float | None) -> float | None:
    return figure / bound if figure is not None and bound else None


def _eval_slack(doc: dict, run: dict, facts: dict, cpu: bool) -> float | None:
    log = read_log(run, facts)
    if log is None or not log.evals:
        return None
    if cpu:
        most, flops = physics.cpu_most(doc, run, run["precision"]), physics.eval_flops(doc, run, facts)
        least = flops / most[0] if most is not None and flops is not None else None
    else:
        floor = physics.eval_floor(doc, run, facts)
        least = floor[0] if floor is not None else None
    return _over(min(item.seconds for item in log.evals.values()), least)


def _clock_slack(doc: dict, run: dict, facts: dict, cpu: bool) -> float | None:
    entries = [e for e in (doc.get("second_clock") or {}).get("runs") or []
               if isinstance(e, dict) and e.get("run_id") == run["run_id"]]
    found = [c for e in entries for c in clocks.comparisons(run, e, int(facts["warmup_steps"] or 0), cpu)]
    slack = [(c.allowance_s + clocks.RELATIVE * abs(c.launcher)) / max(abs(c.own - c.launcher), 1e-12) for c in found]
    return min(slack) if slack else None


def run_slack(doc: dict, run: dict) -> dict[str, float | None]:
    """Each bound's slack for one run of ``doc`` (None where the bound does not apply)."""
    facts = run_facts(run, doc, pinned_of(run, doc))
    cpu = doc["system"]["accelerator"]["type"] == "cpu"
    rate = derive.flop_rate(run["metrics"]["flops_per_step"], facts["expected"])
    most = physics.cpu_most(doc, run, run["precision"]) if cpu else None
    tta = physics.tta_least(doc, run, facts)
    powers = [watts / least for _, watts, least, _, _ in physics.power_spans(doc, run) if least > 0]
    times = facts["times"]
    return {
        "ceiling": _over(physics.ceiling_rate(doc, run)[0], rate),
        "peak": None if cpu else _over(physics.fastest_rate(doc, run)[0], rate),
        "cores": _over(most[0], rate) if most is not None else None,
        "step": _over(float(times.min()), mfu_meter.GPU_STEP_FLOOR_S) if not cpu and len(times) else None,
        "eval": _eval_slack(doc, run, facts, cpu),
        "tta": _over(tta[0], tta[1]) if tta is not None else None,
        "power": min(powers) if powers else None,
        "clock": _clock_slack(doc, run, facts, cpu),
    }


def file_slack(path: Path) -> list[dict]:
    """One row per run of the results file at ``path``: what it is and each bound's slack."""
    doc = dict(results.load(path))
    acc = doc["system"]["accelerator"]
    rows = []
    for run in doc["runs"]:
        row = {"file": path.name, "workload": run["workload"]["id"], "seed": run["seed"], "scale": run["scale"],
               "device": f"{acc.get('name')} x{acc.get('count', 1)}", "precision": run["precision"]}
        try:
            row.update(run_slack(doc, run))
        except (KeyError, TypeError, ValueError) as exc:  # a file of older rules, or broken: said, not fatal
            row["error"] = f"{type(exc).__name__}: {exc}"
        rows.append(row)
    return rows


def _cell(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "" if value is None else "inf"
    return f"{value:,.3g}×" if value < 1000 else f"{value:,.0f}×"


def table(rows: list[dict]) -> str:
    """The rows as a text table, the least slack of each bound last."""
    head = f"{'file':<28} {'workload':<11} {'seed':>4} {'device':<22} " + " ".join(f"{b:>9}" for b in BOUNDS)
    lines = [head]
    for r in rows:
        cells = " ".join(f"{_cell(r.get(b)):>9}" for b in BOUNDS)
        lines.append(f"{r['file'][:28]:<28} {r['workload']:<11} {r['seed']:>4} {r['device'][:22]:<22} {cells}"
                     + (f"  ({r['error']})" if "error" in r else ""))
    least = {b: min((r[b] for r in rows if r.get(b) is not None), default=None) for b in BOUNDS}
    lines.append(f"{'least slack':<28} {'':<11} {'':>4} {'':<22} " + " ".join(f"{_cell(least[b]):>9}" for b in BOUNDS))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    rows = []
    for path in args.files:
        try:
            rows += file_slack(path)
        except (results.Unreadable, KeyError, TypeError) as exc:
            print(f"{path}: not read ({exc})", file=sys.stderr)
    if not rows:
        print("no run to report", file=sys.stderr)
        return 1
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
