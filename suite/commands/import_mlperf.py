"""``goodbench import mlperf PATH...``: MLPerf Training results → results/mlperf/; ``goodbench import
speedrun DIR``: a modded-nanogpt checkout (the NanoGPT speedrun) → results/speedrun/."""
from __future__ import annotations

import argparse

from suite.commands.common import POSITIVE_INT


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench import mlperf`` and its arguments."""
    p = commands.add_parser("import", help="import MLPerf Training results (derived documents under results/mlperf/) "
                                           "or the NanoGPT speedrun's history (results/speedrun/)")
    p.add_argument("source", choices=["mlperf", "speedrun"],
                   help="what to import: mlperf (MLCommons training results) or speedrun (a checkout of "
                        "KellerJordan/modded-nanogpt: its README's record tables and its records/ logs)")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a submission tree (<org>/results/<system>/<benchmark>/result_N.txt) or a round's checkout; "
                        "for speedrun, the checkout's folder")
    p.add_argument("--results-dir", default="results",
                   help="documents go to DIR/mlperf/ or DIR/speedrun/ (default: results)")
    p.add_argument("--round", help="the MLPerf round (v5.1) when no folder above the tree names it")
    p.add_argument("--jobs", type=POSITIVE_INT, help="processes reading logs (default: the usable cores)")
    p.add_argument("--json", action="store_true", help="print one JSON object per system × benchmark")
    p.add_argument("--replace", action="store_true",
                   help="replace a stored document imported from other source files (kept and named otherwise)")
    p.add_argument("--absent", metavar="FILE",
                   help="result files the published round has and this copy lacks, one per line as "
                        "<round>/<org>/results/<system>/<benchmark>/<file>: kept as absent runs, and their "
                        "system × benchmark gets no score")
    return p


def run(args) -> int:
    """``goodbench import mlperf PATH ...`` or ``goodbench import speedrun DIR``."""
    if args.source == "speedrun":
        from suite.speedrun.commands import import_command as import_speedrun

        return import_speedrun(args.paths, args.results_dir, args.jobs, args.json)
    from suite.mlperf.commands import import_command

    return import_command(args.paths, args.results_dir, args.round, args.jobs, args.json, args.replace, args.absent)
