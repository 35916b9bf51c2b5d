"""``goodbench peaks [NAME]``: the peak table MFU uses, or the entry a device name resolves to."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench peaks`` and its arguments."""
    p = commands.add_parser("peaks", help="the peak table MFU uses, or the entry a device name resolves to")
    p.add_argument("name", nargs="?", metavar="NAME",
                   help='a device name as torch or NVML reports it ("NVIDIA H100 80GB HBM3")')
    return p


def run(args) -> int:
    """The peak table MFU and the validator use, or the entry one device name resolves to."""
    from suite import report
    from suite.meters import mfu

    if args.name is None:
        print(report.peak_table(mfu.PEAKS))
        print("dense: without 2:4 sparsity (datasheets' sparse figures halved); fp32: the rate "
              "without tensor cores; TDP: the board power, the validator's bound on mean power "
              "(+10%). A MIG slice gets no peak.")
        return 0
    entry = mfu.find_peak(args.name)
    if entry is None:
        slice_ = " (a MIG slice: a fraction of the GPU's SMs)" if mfu.is_mig(args.name) else ""
        print(f"{args.name}: no peak known — pass --peak-tflops{slice_}")
        return 0
    print(f"{args.name}: {entry.name}")
    print(report.peak_table([entry]))
    return 0
