"""``goodbench data``: the pinned dataset files — where they are looked for, which are here,
fetching the missing ones with their sha256 checked, and checking a folder."""
from __future__ import annotations

import argparse


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench data`` and its subcommands."""
    p = commands.add_parser("data", help="the pinned dataset files: list, fetch, verify a folder, where they are looked for")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every pinned file, its workloads, size, sha256, source and where it is found")
    listing.add_argument("--data-dir", help="a folder looked in first (as `run --data-dir`)")
    fetch = actions.add_parser("fetch", help="copy the missing files into the cache (or --to), each checked against its sha256")
    fetch.add_argument("-w", "--workload", action="append", metavar="ID",
                       help="only this workload's files (repeatable; default every workload's)")
    fetch.add_argument("--mirror", metavar="DIR_OR_URL",
                       help="a folder or URL holding the files under their names (default: each file's canonical URL)")
    fetch.add_argument("--to", metavar="DIR", help="the folder to fill (default the user cache, where `run` looks)")
    fetch.add_argument("--data-dir", help="a folder looked in first: files already there are not fetched")
    verify = actions.add_parser("verify", help="check the pinned files in a folder: found, missing or a wrong sha256 "
                                "(exit 1 unless every one is there whole; 2 where DIR is no folder)")
    verify.add_argument("folder", metavar="DIR", help="the folder to check (files under their pinned names)")
    verify.add_argument("-w", "--workload", action="append", metavar="ID",
                        help="only this workload's files (repeatable; default every workload's)")
    actions.add_parser("where", help="the folders looked in, in order, and whether downloads are allowed")
    return p


def run(args) -> int:
    """Run the data subcommand; 0, or 1 when a file could not be fetched, or a folder verified lacks a
    file or holds a wrong copy (or is not there)."""
    return {"list": _list, "fetch": _fetch, "verify": _verify, "where": _where}[args.action](args)


def _pinned(workload_ids: list[str] | None = None) -> dict:
    """File name → (its DataFile, the ids of the workloads that read it), for ``workload_ids``
    (default every workload); Usage for an unknown id (exit 2, as ``run -w`` says it)."""
    from suite.record.errors import Usage
    from workloads import registry

    ids = workload_ids or list(registry.WORKLOADS)
    files: dict = {}
    for wid in ids:
        try:
            workload = registry.get(wid)
        except registry.UnknownWorkload:
            raise Usage(f"unknown workload {wid}; known: {', '.join(registry.WORKLOADS)}") from None
        for f in workload.data_files:
            files.setdefault(f.name, (f, []))[1].append(wid)
    return dict(sorted(files.items()))


def _where(args) -> int:
    import os

    from workloads import data

    print("goodbench looks for each dataset file, in order, in:")
    print("  --data-dir DIR, when given")
    print(f"  $GOODBENCH_DATA_DIR: {os.environ.get('GOODBENCH_DATA_DIR') or '— (not set)'}")
    print(f"  the user cache: {data.cache_dir()}")
    print("then downloads it from its canonical URL into the user cache"
          + (" — not now: GOODBENCH_OFFLINE=1" if data.offline() else "")
          + "; every file is used only once its sha256 matches the pinned one")
    return 0


def _said_missing(data_dir) -> None:
    """A note on stderr, before the files' lines, where ``--data-dir`` or ``$GOODBENCH_DATA_DIR``
    names no folder (a typo?), rather than every file "no" there."""
    from suite.commands.common import say
    from workloads import data

    if (why := data.missing_folder(data_dir)) is not None:
        say(f"note: {why}")


def _list(args) -> int:
    from workloads import data

    _said_missing(args.data_dir)
    print(f"{'file':<44} {'workloads':<12} {'bytes':>11}  {'sha256':<13} here")
    for name, (f, wids) in _pinned().items():
        found = data.presence(f, args.data_dir)
        where = f"{found.status} ({found.path})" if found.path else found.status
        print(f"{name:<44} {','.join(wids):<12} {f.size:>11,}  {f.sha256[:12]}… {where}")
        print(f"{'':<44} from {f.url}")
    print("here: yes = a copy with the pinned sha256 where `run` looks (`goodbench data where`); "
          "no: `goodbench data fetch` gets it (`--mirror DIR` from a copy without a network), or give "
          "--data-dir DIR (or set GOODBENCH_DATA_DIR) where a copy is")
    return 0


def _fetch(args) -> int:
    from pathlib import Path

    from workloads import data

    _said_missing(args.data_dir)
    _check_mirror(args.mirror)
    failed = 0
    for name, (f, _) in _pinned(args.workload).items():
        found = data.presence(f, args.data_dir)
        if found.status == "yes":
            print(f"{name}: here ({found.path})")
            continue
        if args.mirror is None and data.offline():
            print(f"{name}: not fetched: GOODBENCH_OFFLINE=1 (give --mirror DIR)")
            failed += 1
            continue
        print(data.fetching(f, data.source_url(f, args.mirror)), flush=True)  # said first: it may take minutes
        try:
            dest = data.fetch(f, args.mirror, None if args.to is None else Path(args.to))
        except (OSError, ValueError) as exc:
            offline = args.mirror is None and isinstance(exc, OSError)  # the network, not the file
            print(f"{name}: not fetched: {exc}" + ("; without a network, copy the files from a folder "
                                                   "that holds them: goodbench data fetch --mirror DIR" if offline else ""))
            failed += 1
            continue
        print(f"{name}: fetched into {dest} (sha256 {f.sha256[:12]}… checked)")
    return 1 if failed else 0


def _check_mirror(mirror: str | None) -> None:
    """A ``--mirror`` folder (not a URL) that does not exist or is not a folder, said once as a usage
    error before any file is tried (a typo would have read as each file's unreadable URL)."""
    from pathlib import Path

    from suite.record.errors import Usage

    if mirror is None or "://" in mirror or Path(mirror).is_dir():
        return
    what = "a file, not a folder" if Path(mirror).exists() else "no such folder (a typo?)"
    raise Usage(f"--mirror {mirror}: {what}; give the folder (or URL) that holds the dataset files under their names")


def _verify(args) -> int:
    from pathlib import Path

    from suite.record.errors import Usage
    from workloads import data

    folder, wrong, missing = Path(args.folder), 0, 0
    pinned = _pinned(args.workload)
    if not folder.is_dir():  # a usage error, said as --mirror's is (exit 2)
        raise Usage(f"{folder}: {'not a folder' if folder.exists() else 'no such folder (a typo?)'}; give the "
                    "folder that holds the dataset files under their names")
    for name, (f, wids) in pinned.items():
        path = folder / name
        if not path.is_file():
            missing += 1
            print(f"{name}: missing ({', '.join(wids)} cannot run from this folder)")
        elif data.sha256_of(path) != f.sha256:
            wrong += 1
            print(f"{name}: WRONG sha256 (not the pinned {f.sha256[:12]}…): `run` refuses it")
        else:
            print(f"{name}: ok")
    print(f"{folder}: {len(pinned) - wrong - missing} ok, {missing} missing, {wrong} wrong")
    return 1 if wrong or missing else 0
