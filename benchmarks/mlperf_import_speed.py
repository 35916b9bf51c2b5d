"""``goodbench import mlperf`` against MLCommons' ``result_summarizer``: speed on whole rounds, and
the official scores, round by round, compared on the same trees.

Whole rounds (``--rounds-dir``: a folder of ``v5.1/``, ``v5.0/`` … each a checkout of MLCommons'
``training_results_vX.Y``; see docs/mlperf.md for how to bring them)::

    python benchmarks/mlperf_import_speed.py --rounds-dir DIR --speed v4.0,v4.1,v5.0,v5.1 \\
        --summarizer v5.0,v5.1 [--compare all] [--reference-dir DIR]

- ``--speed``: the import of those rounds in one command (``python -m suite import mlperf
  <rounds> --json``, two worker processes on two cores), against result_summarizer on each
  ``--summarizer`` round; wall time, CPU time (its workers included) and the peak of the summed
  resident memory of each command's process tree (sampled every 20 ms).
- ``--compare``: for each round (``all``: every round folder with a ruleset in mlperf-logging),
  the import of that round alone, and result_summarizer on the same tree — the whole round
  (``python -m mlperf_logging.result_summarizer "<round>/{*}" training <ruleset> --csv``); where
  it stops with an exception, org by org; for an org it stops on, benchmark by benchmark with
  its own scoring function (``_compute_strong_score_standalone``), without the power score
  where that is what stops it. Every score of the import is matched with result_summarizer's
  (by org, submitter, system folder and benchmark) at 1e-6 relative, as is the energy score.

result_summarizer runs on a copy (hard links; ``scaling.json`` copied, which its RCP step
rewrites) and its outputs are kept under ``--reference-dir`` (reused when present for the same
mlperf-logging: delete the folder to run it again). Every time is of a process of its own on
this machine, with the load average before and after, as other jobs may share the CPU.

The shared sample (``../shared/mlperf-training``, two rounds, five submissions) is the quick
form: ``python benchmarks/mlperf_import_speed.py --sample DIR [--copies N] [--repeat R]``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE_ROUNDS = {"v4.0": "4.0.0", "v5.1": "5.1.0"}
REL_TOL = 1e-6


# ---------------------------------------------------------------- measuring a command
def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def measure(cmd: list[str], cwd: Path, check: bool = True) -> dict:
    """Wall s, CPU s (with children), peak tree RSS, exit status and output of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def sample():
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": peak[0] / 2 ** 20, "rc": proc.returncode,
            "stdout": out, "stderr": err}


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


# ---------------------------------------------------------------- result_summarizer
def ruleset(round_name: str) -> str:
    major, minor = round_name.lstrip("v").split(".")[:2]
    return f"{major}.{minor}.0"


def scratch_copy(src: Path, dest: Path) -> None:
    """``src`` at ``dest`` as hard links, but ``scaling.json`` copied (result_summarizer rewrites it)."""
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run(["cp", "-al", str(src), str(dest)], check=True)
    for path in dest.rglob("scaling.json"):
        data = path.read_bytes()
        path.unlink()
        path.write_bytes(data)


def _orgs(tree: Path) -> list[str]:
    return sorted(p.name for p in tree.iterdir() if (p / "results").is_dir() and (p / "systems").is_dir())


def per_benchmark(org: Path, rules: str, out: Path) -> None:
    """result_summarizer's own scoring, one benchmark folder at a time (an org its CLI stops on);
    without the power score where that is what stops it."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    rows = []
    for system_folder in rs._get_sub_folders(os.path.join(org, "results")):
        system = os.path.basename(system_folder)
        try:
            desc = rs._load_system_desc(str(org), system)
        except Exception as exc:  # as the CLI: the system is left out
            rows.append({"system": system, "error": f"{type(exc).__name__}: {exc}"})
            continue
        for bench_folder in rs._get_sub_folders(system_folder):
            bench = rs._benchmark_alias(os.path.basename(bench_folder))
            has_power = rs._has_power(bench_folder)
            row = {"submitter": desc.get("submitter"), "system": system, "benchmark": bench}
            try:
                score, power, _ = rs._compute_strong_score_standalone(
                    bench, system, has_power, bench_folder, "training", rules, desc)
                row.update(minutes=score, energy=power)
            except Exception as exc:
                row["crash"] = f"{type(exc).__name__}: {exc}"
                if has_power:
                    score, _, _ = rs._compute_strong_score_standalone(
                        bench, system, False, bench_folder, "training", rules, desc)
                    row.update(minutes=score, energy=None)
            rows.append(row)
    out.write_text(json.dumps(rows, indent=1))


def summarize_round(rounds_dir: Path, rnd: str, scratch: Path, reference: Path) -> dict:
    """result_summarizer on a copy of the round (org by org, then benchmark by benchmark, where
    it stops); its CSV/JSON outputs under ``reference/<round>/``; returns {wall_s, cpu_s,
    peak_rss_mib, how}, read back from there when it ran before."""
    from importlib.metadata import version

    folder = reference / rnd
    done = folder / "timing.json"
    stamp = {"mlperf_logging": version("mlperf-logging")}
    if done.is_file() and json.loads(done.read_text()).get("mlperf_logging") == stamp["mlperf_logging"]:
        return json.loads(done.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tree = scratch / rnd
    scratch_copy(rounds_dir / rnd, tree)
    rules = ruleset(rnd)
    summarizer = [sys.executable, "-m", "mlperf_logging.result_summarizer"]
    run = measure([*summarizer, f"{tree}/{{*}}", "training", rules, "--csv", str(folder / "round.csv")],
                  scratch, check=False)
    runs, how = [run], "whole round"
    if run["rc"] != 0:
        how = "org by org (the whole round stops: " + run["stderr"].strip().splitlines()[-1][:120] + ")"
        for csv in folder.glob("round*"):
            csv.unlink()
        for org in _orgs(tree):
            scratch_copy(rounds_dir / rnd / org, tree / org)
            one = measure([*summarizer, str(tree / org), "training", rules, "--csv", str(folder / f"org-{org}.csv")],
                          scratch, check=False)
            runs.append(one)
            if one["rc"] != 0:
                for csv in folder.glob(f"org-{org}*"):
                    csv.unlink()
                scratch_copy(rounds_dir / rnd / org, tree / org)
                runs.append(measure([sys.executable, __file__, "--per-benchmark", str(tree / org), rules,
                                     str(folder / f"bench-{org}.json")], scratch))
                how += f"; {org} benchmark by benchmark"
    shutil.rmtree(tree, ignore_errors=True)
    timing = {**stamp, "wall_s": sum(r["wall_s"] for r in runs), "cpu_s": sum(r["cpu_s"] for r in runs),
              "peak_rss_mib": max(r["peak_rss_mib"] for r in runs), "how": how}
    done.write_text(json.dumps(timing, indent=1))
    return timing


def summarizer_scores(folder: Path) -> dict:
    """(org or None, submitter, system folder, benchmark) → (minutes, energy, what stopped it)
    from result_summarizer's outputs in ``folder``."""
    import pandas as pd

    ref: dict = {}
    for path in sorted(folder.glob("*_detailed.csv")):
        org = path.name[4:-len("_detailed.csv")] if path.name.startswith("org-") else None
        table = pd.read_csv(path)
        benches = sorted({c.split(":")[0] for c in table.columns if ":" in c})
        for _, r in table.iterrows():
            submitter, system = r["details_url"].split("/blob/main/", 1)[1].rsplit("/systems/", 1)
            for b in benches:
                factor = r.get(f"{b}:rcp_scaling_factor")
                if factor is None or (isinstance(factor, float) and math.isnan(factor)):
                    continue  # no such benchmark folder for this system
                t, e = r.get(f"{b}:time_to_train"), r.get(f"{b}:Energy")
                ref[(org, submitter.strip(), system[:-len(".json")], b)] = (
                    None if pd.isna(t) else float(t), None if pd.isna(e) else float(e), None)
    for path in sorted(folder.glob("bench-*.json")):
        org = path.name[len("bench-"):-len(".json")]
        for r in json.loads(path.read_text()):
            if "benchmark" in r:
                ref[(org, str(r["submitter"]).strip(), r["system"], r["benchmark"])] = (
                    r.get("minutes"), r.get("energy"), r.get("crash"))
    return ref


def compare(documents: list[dict], ref: dict) -> dict:
    """The import's scores against result_summarizer's: counts, and one line per difference."""
    out = {"scores": 0, "exact": 0, "differ": [], "energy": 0, "energy_exact": 0, "no_score_both": 0,
           "summarizer_stopped": 0}
    close = lambda a, b: (a is None) == (b is None) and (a is None or math.isclose(a, b, rel_tol=REL_TOL))
    for doc in documents:
        key = (doc["source"]["org_folder"], doc["submitter"], doc["source"]["system_folder"], doc["benchmark"])
        found = ref.pop(key, None) or ref.pop((None, *key[1:]), None)
        mine = doc["score"]["minutes"]
        name = "/".join((key[0], key[2], doc["source"]["benchmark_folder"]))
        if found is None:
            if mine is not None:
                out["scores"] += 1
                out["differ"].append(f"{name}: {mine:.6g} min here, no row in result_summarizer's output")
            continue
        theirs, energy, stopped = found
        if theirs is None and mine is None:
            out["no_score_both"] += 1
        else:
            out["scores"] += 1
            if close(theirs, mine):
                out["exact"] += 1
            else:
                out["differ"].append(f"{name}: {mine} min here, {theirs} min by result_summarizer "
                                     f"({doc['score']['status'][:100]})")
        mine_e = doc["score"].get("energy_j")
        if energy is not None or mine_e is not None or stopped:
            out["energy"] += 1
            out["summarizer_stopped"] += bool(stopped)
            if close(energy, mine_e):
                out["energy_exact"] += 1
            else:
                out["differ"].append(f"{name}: energy {mine_e} J here, {energy} by result_summarizer"
                                     + (f" (it stops: {stopped})" if stopped else ""))
    for key, (theirs, _, _) in ref.items():
        if theirs is not None:
            out["scores"] += 1
            out["differ"].append(f"{key[0] or key[1]}/{key[2]}/{key[3]}: {theirs} min by result_summarizer, "
                                 "no document here")
    return out


def _documents(folder: Path) -> list[dict]:
    from suite.mlperf import documents

    return [documents.read(p) for p in sorted((folder / "mlperf").glob("*.json"))]


def _import(rounds: list[Path], results: Path) -> dict:
    shutil.rmtree(results, ignore_errors=True)
    run = measure([sys.executable, "-m", "suite", "import", "mlperf", *map(str, rounds), "--results-dir",
                   str(results), "--json"], REPO, check=False)
    if run["rc"] != 0 and not (results / "mlperf").is_dir():
        raise SystemExit(f"the import failed ({run['rc']}):\n{run['stderr'][-2000:]}")
    run["documents"] = len(json.loads(run["stdout"]))
    return run


def _round_files(tree: Path) -> tuple[int, int]:
    n = size = 0
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink():
            n += 1
            size += path.stat().st_size
    return n, size


# ---------------------------------------------------------------- the two measurements
def speed(rounds_dir: Path, rounds: list[str], summarized: list[str], scratch: Path, reference: Path) -> None:
    files = sum(_round_files(rounds_dir / r)[0] for r in rounds)
    size = sum(_round_files(rounds_dir / r)[1] for r in rounds)
    print(f"rounds {', '.join(rounds)}: {files:,} files, {size / 1e9:.2f} GB; {os.cpu_count()} CPUs; load {_load()}")
    timings = {r: summarize_round(rounds_dir, r, scratch, reference) for r in summarized}
    print(f"load before the import {_load()}")
    run = _import([rounds_dir / r for r in rounds], scratch / "imported")
    print(f"load after {_load()}")
    print(f"{'command':<44} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}")
    for r, t in timings.items():
        print(f"{'result_summarizer ' + r:<44} {t['wall_s']:>8.1f} {t['cpu_s']:>8.1f} {t['peak_rss_mib']:>13.0f}  ({t['how']})")
    total = sum(t["wall_s"] for t in timings.values())
    print(f"{'goodbench import mlperf ' + ' '.join(rounds):<44} {run['wall_s']:>8.1f} {run['cpu_s']:>8.1f} "
          f"{run['peak_rss_mib']:>13.0f}  ({run['documents']} documents)")
    print(f"import of {len(rounds)} rounds / result_summarizer on {' + '.join(summarized)}: "
          f"{run['wall_s']:.1f} / {total:.1f} s = {run['wall_s'] / total:.3f} (the target: under 0.25)")


def exactness(rounds_dir: Path, rounds: list[str], scratch: Path, reference: Path) -> int:
    print(f"{'round':<6} {'scores':>6} {'exact':>6} {'differ':>6} {'none':>5} {'energy':>9} "
          f"{'import s':>9} {'summarizer s':>13}  how result_summarizer ran")
    failures = 0
    notes = []
    for rnd in rounds:
        timing = summarize_round(rounds_dir, rnd, scratch, reference)
        run = _import([rounds_dir / rnd], scratch / f"imported-{rnd}")
        found = compare(_documents(scratch / f"imported-{rnd}"), summarizer_scores(reference / rnd))
        failures += len(found["differ"])
        print(f"{rnd:<6} {found['scores']:>6} {found['exact']:>6} {len(found['differ']):>6} {found['no_score_both']:>5} "
              f"{found['energy_exact']:>4}/{found['energy']:<4} {run['wall_s']:>9.1f} {timing['wall_s']:>13.1f}  {timing['how']}")
        notes += [f"  {rnd} {line}" for line in found["differ"]]
    print("scores: systems × benchmarks with an official score by either tool; none: no score by both; "
          "energy: energy scores equal (or \"not measured\" where result_summarizer stops) / compared")
    print("\n".join(notes) or "no difference")
    return 1 if failures else 0


# ---------------------------------------------------------------- the shared sample
def scratch_tree(sample: Path, dest: Path, copies: int) -> int:
    """``sample``'s rounds with every org ``copies`` times; returns the number of result files."""
    n = 0
    for rnd in SAMPLE_ROUNDS:
        for org in sorted(p for p in (sample / rnd).iterdir() if p.is_dir()):
            for k in range(copies):
                target = dest / rnd / (org.name if k == 0 else f"{org.name}-{k}")
                shutil.copytree(org, target)
                n += sum(1 for _ in target.rglob("result_*.txt"))
    for path in dest.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # the sample is read-only; the copies are not
    return n


def sample_speed(sample: Path, copies: int, repeat: int) -> None:
    rows: dict[str, list[dict]] = {"result_summarizer": [], "goodbench import": []}
    with tempfile.TemporaryDirectory(prefix="mlperf-speed-") as tmp:
        scratch = Path(tmp)
        files = 0
        for i in range(repeat):
            order = ["result_summarizer", "goodbench import"]
            if i % 2:
                order.reverse()
            for tool in order:
                tree = scratch / f"tree-{i}-{tool.split()[0]}"
                files = scratch_tree(sample, tree, copies)
                if tool == "result_summarizer":
                    runs = [measure([sys.executable, "-m", "mlperf_logging.result_summarizer",
                                     f"{tree / rnd}/{{*}}", "training", rules], scratch)
                            for rnd, rules in SAMPLE_ROUNDS.items()]
                    rows[tool].append({"wall_s": sum(r["wall_s"] for r in runs), "cpu_s": sum(r["cpu_s"] for r in runs),
                                       "peak_rss_mib": max(r["peak_rss_mib"] for r in runs)})
                else:
                    run = _import([tree], scratch / f"imported-{i}")
                    assert run["documents"] == 5 * copies
                    rows[tool].append(run)
                shutil.rmtree(tree)
    print(f"{files} result files, {copies} cop{'y' if copies == 1 else 'ies'} of the sample's orgs, "
          f"{repeat} repeats, {os.cpu_count()} CPUs, load {_load()}")
    print(f"{'tool':<18} {'wall s (median)':>16} {'CPU s (median)':>15} {'peak RSS MiB (max)':>19}")
    med = {}
    for tool, found in rows.items():
        med[tool] = statistics.median(r["wall_s"] for r in found)
        print(f"{tool:<18} {med[tool]:>16.2f} {statistics.median(r['cpu_s'] for r in found):>15.2f} "
              f"{max(r['peak_rss_mib'] for r in found):>19.0f}")
    print(f"import / result_summarizer wall time: {med['goodbench import'] / med['result_summarizer']:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds-dir", help="folder of round checkouts (v5.1/, v5.0/, …)")
    parser.add_argument("--speed", default="", help="rounds imported in one command, e.g. v4.0,v4.1,v5.0,v5.1")
    parser.add_argument("--summarizer", default="v5.0,v5.1", help="rounds result_summarizer is timed on")
    parser.add_argument("--compare", default="", help="rounds to compare score by score (all: every round)")
    parser.add_argument("--reference-dir", help="where result_summarizer's outputs are kept (default: a temp folder)")
    parser.add_argument("--sample", default=str(REPO.parent / "shared" / "mlperf-training"))
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-benchmark", nargs=3, metavar=("ORG", "RULESET", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.per_benchmark:
        per_benchmark(Path(args.per_benchmark[0]), args.per_benchmark[1], Path(args.per_benchmark[2]))
        return 0
    if not args.rounds_dir:
        if not (Path(args.sample) / "expected-scores.json").is_file():
            raise SystemExit(f"no MLPerf Training sample at {args.sample}")
        sample_speed(Path(args.sample), args.copies, args.repeat)
        return 0
    from mlperf_logging.compliance_checker.mlp_compliance import rule_choices

    rounds_dir = Path(args.rounds_dir)
    known = [p.name for p in rounds_dir.iterdir() if p.is_dir() and re.fullmatch(r"v\d+\.\d+", p.name)
             and ruleset(p.name) in rule_choices()]
    pick = lambda text: sorted(known if text == "all" else [r for r in text.split(",") if r],
                               key=lambda r: tuple(int(x) for x in r[1:].split(".")), reverse=True)
    with tempfile.TemporaryDirectory(prefix="mlperf-bench-") as tmp:
        scratch = Path(tmp)
        reference = Path(args.reference_dir) if args.reference_dir else scratch / "reference"
        status = 0
        if args.speed:
            speed(rounds_dir, pick(args.speed), pick(args.summarizer), scratch, reference)
        if args.compare:
            status = exactness(rounds_dir, pick(args.compare), scratch, reference)
    return status


if __name__ == "__main__":
    sys.exit(main())
