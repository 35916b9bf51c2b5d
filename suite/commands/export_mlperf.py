"""``goodbench export mlperf FILE -o DIR``: a results file → an MLCommons submission tree."""
from __future__ import annotations

import argparse

from suite.commands.common import output_path


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench export mlperf`` and its arguments."""
    p = commands.add_parser("export", help="export a results file as an MLCommons submission tree")
    p.add_argument("target", choices=["mlperf"], help="what to export to: mlperf (MLCommons training)")
    p.add_argument("file", metavar="FILE", help="the goodbench results file to export")
    p.add_argument("-o", "--output", type=output_path, required=True, metavar="DIR", help="folder to write the tree into")
    p.add_argument("--org", help="the submitting organization (default: the system description's, else its name)")
    p.add_argument("--check", action="store_true",
                   help="run MLCommons' compliance checker on every exported log (needs mlperf-logging)")
    return p


def run(args) -> int:
    """``goodbench export mlperf FILE -o DIR``: a results file → an MLCommons submission tree."""
    from suite.mlperf.commands import export_command

    return export_command(args.file, args.output, args.org, args.check)
