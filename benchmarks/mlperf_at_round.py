"""The scores ``goodbench import mlperf`` gives a round against result_summarizer *of the round's
own time*: mlperf-logging as it was when the round was published, taken from a git checkout or
mirror of mlcommons/logging.

Today's mlperf-logging fails some runs its round's checker passed (suite/mlperf/later_rules.py);
the import keeps today's verdict and adds the round's score (``score.at_round``). This checks
both against the round-era result_summarizer, run on the same tree::

    python benchmarks/mlperf_at_round.py --rounds-dir DIR --logging-repo LOGGING.git \\
        --at v1.1=beaf26d --at v2.1=35004c4 [--absent results/mlperf/absent-logs.txt]

(beaf26d: the last commit before v1.1 was published, 2021-11-03; 35004c4: before v2.1,
2022-11-01.) The round-era CSV names a system by its name and framework, not its folder: a
document is matched by (org, system name, framework, benchmark); where two rows share those, it
counts as matched when its score equals one of them.
"""
from __future__ import annotations

import argparse
import collections
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite.mlperf import documents

REPO = Path(__file__).resolve().parent.parent
REL_TOL = 1e-6
_META = {"division", "availability", "submitter", "system", "host_processor_model_name", "host_processors_count",
         "accelerator_model_name", "accelerators_count", "framework", "notes", "details_url", "code_url"}
_ORG_ALIASES = {"HabanaLabs": "Intel-HabanaLabs"}  # the org as the round-era CSV's URLs name it → its folder


def round_era_csv(logging_repo: Path, commit: str, tree: Path, ruleset: str, scratch: Path) -> Path:
    """result_summarizer of mlperf-logging at ``commit`` on ``tree`` (a round's checkout) → its CSV."""
    code = scratch / f"logging-{commit}"
    code.mkdir()
    archive = subprocess.run(["git", "-C", str(logging_repo), "archive", commit, "mlperf_logging"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(code)], input=archive, check=True)
    out = scratch / f"{tree.name}-{commit}.csv"
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run([sys.executable, "-m", "mlperf_logging.result_summarizer", f"{tree}/{{*}}", "training", ruleset,
                    "--csv", str(out)], env=env, check=True, capture_output=True, cwd=scratch)
    return out


def compare(rnd: str, csv_path: Path, folder: Path) -> collections.Counter:
    """Each document of ``rnd`` against the round-era CSV: counts by outcome, printing each difference."""
    old: dict[tuple, list[float]] = collections.defaultdict(list)
    with open(csv_path, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for r in rows:
        org = r["code_url"].split("/master/")[1].split("/")[0]
        org = _ORG_ALIASES.get(org, org)
        for bench, value in r.items():
            if bench not in _META and value:
                old[(org, r["system"].strip(), r["framework"].strip(), bench)].append(float(value))
    counts: collections.Counter = collections.Counter()
    for path in sorted(folder.glob("*.json")):
        doc = documents.read(path)
        if doc["source"]["round"] != rnd:
            continue
        key = (doc["source"]["org_folder"], doc["system"]["name"].strip(),
               (doc["system"].get("framework") or "").strip(), doc["benchmark"])
        then = (doc["score"].get("at_round") or {}).get("minutes")
        mine = doc["score"]["minutes"] if doc["score"]["minutes"] is not None else then
        kind = "at the round only" if then is not None else "today"
        theirs = old.get(key, [])
        if mine is None and not theirs:
            counts["no score (both)"] += 1
        elif mine is not None and any(math.isclose(mine, t, rel_tol=REL_TOL) for t in theirs):
            counts[f"equal, {kind}" + (" (name shared)" if len(theirs) > 1 else "")] += 1
        else:
            counts["differing"] += 1
            print(f"  {rnd} {'/'.join(key)}: {mine} here, {theirs or 'none'} by the round's result_summarizer")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds-dir", required=True, help="folder of round checkouts (v1.1/, v2.1/, …)")
    parser.add_argument("--logging-repo", required=True, help="a git checkout or mirror of mlcommons/logging")
    parser.add_argument("--at", action="append", required=True, metavar="ROUND=COMMIT",
                        help="a round and the mlperf-logging commit of its time, e.g. v1.1=beaf26d")
    parser.add_argument("--absent", help="the --absent list the import takes (result logs the copies lack)")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="mlperf-at-round-") as tmp:
        scratch = Path(tmp)
        for item in args.at:
            rnd, commit = item.split("=", 1)
            tree = Path(args.rounds_dir) / rnd
            ruleset = rnd.removeprefix("v") + ".0"
            results = scratch / f"results-{rnd}"
            command = [sys.executable, "-m", "suite", "import", "mlperf", str(tree), "--results-dir", str(results)]
            if args.absent:
                command += ["--absent", args.absent]
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=REPO)
            imported = time.perf_counter() - started
            started = time.perf_counter()
            table = round_era_csv(Path(args.logging_repo), commit, tree, ruleset, scratch)
            summarized = time.perf_counter() - started
            counts = compare(rnd, table, results / "mlperf")
            failed += counts["differing"]
            print(f"{rnd} against result_summarizer of mlperf-logging {commit} (import {imported:.1f} s, "
                  f"result_summarizer {summarized:.1f} s): "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
