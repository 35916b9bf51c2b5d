"""``goodbench peaks [NAME]``: the peak table MFU uses, or the entry a device name resolves to."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench peaks`` and its arguments."""
    p = commands.add_parser("peaks", help="the peak table MFU uses, or the entry a device name resolves to",
                            description="The peak table MFU and the validator use; with NAME, the entry that "
                            "device name resolves to, or exit status 1 where it resolves to none (its results "
                            "are not ranked), so that a script can tell.")
    p.add_argument("name", nargs="*", metavar="NAME",
                   help='a device name as torch or NVML reports it (NVIDIA H100 80GB HBM3: quotes not needed)')
    return p


def cpu_line() -> str:
    """What the validator holds a CPU to: no peak (it depends on the part), a ceiling floor and a power band."""
    from suite.figures import mfu

    return (f"CPU: no peak known (it depends on the part, its cores and clocks): not ranked; its measured "
            f"matmul ceiling at least {mfu.CPU_CEILING_FLOOR_FLOPS / 1e9:g} GFLOP/s, its RAPL package power "
            f"{mfu.CPU_PACKAGE_FLOOR_W:g}–{mfu.CPU_PACKAGE_CEILING_W:g} W per package.")


def run(args) -> int:
    """The peak table MFU and the validator use, or the entry one device name resolves to."""
    from suite.figures import mfu, report

    args.name = " ".join(args.name) or None  # its words, as the shell split them
    if args.name is None:
        distinct: dict[str, mfu.Peak] = {}
        for listed in mfu.PEAKS:  # an entry matched by two spellings ("gaudi2", "gaudi 2") once
            distinct.setdefault(listed.name, listed)
        print(report.peak_table(distinct.values()))
        print(report.measured_line(distinct.values()))
        print("dense: without 2:4 sparsity (datasheets' sparse figures halved); fp32: the rate "
              "without tensor cores; TDP: the board power, the validator's bound on mean power "
              "(+10%; — where the vendor publishes none); a result on a device without both is "
              "not ranked (\"no known peak\"). A MIG slice gets no peak.")
        print(cpu_line())
        return 0
    entry = mfu.find_peak(args.name)
    if entry is None:
        named = mfu.candidates(args.name)
        if mfu.words(args.name) is None:
            why = " (a name that is not plain ASCII matches no entry)"
        elif len(named) > 1:
            why = f" (it names {len(named)} entries, {', '.join(p.name for p in named)}: which ran is not known)"
        else:
            why = " (a MIG slice: a fraction of the GPU's SMs)" if mfu.is_mig(args.name) else ""
        print(f"{args.name}: no known peak — pass --peak-tflops{why}; its results are not ranked")
        return 1  # a script can tell (a new user's find: it exited 0)
    print(f"{args.name}: {entry.name} (picked by the words {', '.join(entry.match)}"
          f"{'; not ' + ', '.join(entry.exclude) if entry.exclude else ''})")
    print(report.peak_table([entry]))
    print(report.measured_line([entry]))
    return 0
