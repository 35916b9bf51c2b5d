"""``goodbench list``: the workloads and whether their data is here."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench list`` and its arguments."""
    p = commands.add_parser("list", help="list the workloads and whether their data is here")
    p.add_argument("--data-dir", help="directory holding dataset files")
    return p


def run(args) -> int:
    """Print every workload, its targets at full and smoke scale (a CPU run is smoke) and whether
    its data files are here; 0."""
    from suite.commands.common import say
    from workloads import data, registry

    if (why := data.missing_folder(args.data_dir)) is not None:  # before a table of "no"s
        say(f"note: {why}")
    print(f"{'id':<12} {'ver':>3}  {'kind':<10} {'target: full scale':<22} {'smoke (a CPU run)':<22} "
          f"{'data':<34} present")
    notes: list[str] = []
    for w in registry.WORKLOADS.values():
        target, smoke = w.spec("full").target, w.spec("smoke").target
        files = _data_summary([f.name for f in w.data_files])
        found = {f: data.presence(f, args.data_dir) for f in w.data_files}
        # the worst of its files: one corrupt or missing file stops the workload
        present = next((s for s in ("corrupt", "no", "unverified")
                        if any(p.status == s for p in found.values())), "yes" if found else "—")
        print(f"{w.id:<12} {w.version:>3}  {w.kind:<10} {target.describe() if target else '—':<22} "
              f"{smoke.describe() if smoke else '—':<22} {files:<34} {present}")
        print(f"{'':<12}      {w.task}")
        for f, p in found.items():
            if p.status == "corrupt":
                notes.append(f"{p.path}: size or sha256 differs from the pinned {f.sha256[:12]}…; "
                             "`goodbench run` refuses it")
            elif p.status == "unverified":
                notes.append(f"{p.path}: {f.size / 2**20:.0f} MiB, sha256 not checked by `list` "
                             "(`goodbench run` checks it)")
    print("present: yes = every file found with its pinned sha256 (in --data-dir, "
          "$GOODBENCH_DATA_DIR or the user cache); no: `goodbench data fetch` gets it, or give "
          "--data-dir DIR (or set GOODBENCH_DATA_DIR) where a copy is; — = synthetic data, nothing to find")
    for note in notes:
        print(note)
    return 0


def _data_summary(names: list[str]) -> str:
    """"synthetic (none)", the one file, or "<dir>/ (N files)"."""
    if not names:
        return "synthetic (none)"
    if len(names) == 1:
        return names[0]
    folders = {n.rsplit("/", 1)[0] for n in names}
    return f"{folders.pop()}/ ({len(names)} files)" if len(folders) == 1 else f"{len(names)} files"
