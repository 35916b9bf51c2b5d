"""``goodbench reproduce FILE``: train a results file's runs again here and say whether
they reproduce (suite/run/reproduce/: planning, training, comparing and reporting)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from suite.commands.common import POSITIVE_FLOAT, output_path, range_type, say
from suite.record.errors import GoodbenchError, Usage
from suite.record.privacy import TMP as TMP_PLACEHOLDER
from suite.run import quiet
from suite.run.progress import ProgressPrinter, warn_if_busy
from suite.trust import signing

if TYPE_CHECKING:
    from suite.run.reproduce.planning import Plan

# own code's recorded command printed, nothing run (no --run-recorded-command): no reproduction, so
# neither 0 (`goodbench reproduce FILE && …` would read it as one) nor 1 (a run that differs)
NOTHING_RUN = 3
UNDER_LOAD = ("a throughput measured again now may read slower than recorded for that alone: a slower one is then "
              "called inconclusive, not \"differs\", and the reproduction says the re-run was under load "
              "(docs/rules.md; goodbench check says what runs, --wait-quiet SECONDS waits for it)")
"""What a reproduction started under load is told (:func:`suite.run.progress.warn_if_busy`)."""


def add_parser(commands) -> argparse.ArgumentParser:
    """``goodbench reproduce`` and its arguments."""
    p = commands.add_parser("reproduce", help="train a results file's runs again here and say whether they reproduce",
                            description="Re-run the recorded runs of FILE on this machine with the settings they "
                            "recorded, compare curve, throughput and time to target, and write a results file "
                            "naming FILE by sha256 (docs/rules.md, \"Reproducing a result\"). Exit 0 when every "
                            "run reproduced, 1 otherwise; own code's command printed and not run (no "
                            f"--run-recorded-command): {NOTHING_RUN}, nothing reproduced.")
    p.add_argument("file", metavar="FILE", help="the results file whose runs are trained again here")
    p.add_argument("--run", type=range_type(int, 0), action="append", metavar="N",
                   help="reproduce run N of FILE, from 0 (repeatable; default: every run)")
    p.add_argument("--tolerance", type=POSITIVE_FLOAT, default=20.0, metavar="PCT",
                   help="throughput tolerance: the ratio of the re-run's samples/s to the recorded, with "
                        "its 95%% interval, within 1 ± PCT%% (default 20, at most 50; a run whose interval is not within "
                        "it is measured on, --measure-for: wholly outside, it differs; across the edge, inconclusive)")
    p.add_argument("--measure-for", type=POSITIVE_FLOAT, default=None, metavar="SECONDS",
                   help="a run whose curve agrees but whose throughput's interval does not decide is trained again, "
                        "its re-runs pooled, until the interval decides or a cap: this many seconds of re-runs "
                        "(default 900), 8 re-runs or 240 batches, whichever comes first (docs/rules.md)")
    p.add_argument("--data-dir", help="directory holding dataset files (looked in first; for own code, the "
                   "sandboxed re-run's $GOODBENCH_DATA_DIR)")
    p.add_argument("--system-name", help="name of this system on the leaderboard")
    p.add_argument("--system-overrides", metavar="FILE",
                   help="JSON object correcting fields of the system description")
    p.add_argument("-o", "--output", type=output_path, help="results file of the reproduction (default: runs/<UTC time>-reproduction.json)")
    p.add_argument("--no-sign", action="store_true",
                   help="write the reproduction unsigned even when a signing key exists (goodbench keygen)")
    p.add_argument("--run-recorded-command", action="store_true",
                   help="own code (division own): run the command FILE recorded, `python SCRIPT ARGS`, in a sandbox "
                        "(bubblewrap) on a copy of its commit, which must be this git checkout's HEAD (check it out "
                        "first); without it, the command is printed, nothing runs and the exit status is "
                        f"{NOTHING_RUN} (docs/own-code.md)")
    p.add_argument("--sandbox-tmp-gib", type=POSITIVE_FLOAT, default=None, metavar="GIB",
                   help="own code, with --run-recorded-command: the size of the sandbox's private /tmp, in memory and "
                        "also its $HOME (caches), in GiB (default: a quarter of this machine's available memory, at "
                        "least 2); a re-run that fills it is not judged (docs/own-code.md)")
    quiet.add_argument(p, "before the first re-run starts", "then start it anyway, the re-run's load recorded "
                       "(a slower throughput measured under load is inconclusive, not \"differs\")")
    p.add_argument("--attest-code-read", metavar="COMMIT",
                   help="own code, with --run-recorded-command: state, signed with the reproduction, that you read "
                        "its code at COMMIT, the commit FILE recorded (at least 12 hex digits), and that it trains "
                        "what it evaluates; without it a trusted reviewer's reproduction of own code reads \"re-run\", "
                        "not \"reproduced\": re-running code reproduces whatever it does (docs/own-code.md)")
    return p


def run(args) -> int:
    """Train a file's runs again here and compare (suite/run/reproduce/); 0 when every run reproduced."""
    return _reproduce(args, ProgressPrinter())


def _reproduce(args, progress: ProgressPrinter) -> int:
    """Plan, train (here or under torchrun), write, report; the exit status (0: every run
    reproduced, 1: a run differs or is inconclusive)."""
    from suite.figures.reproducibility import MAX_THROUGHPUT_TOLERANCE
    from suite.run import launch
    from suite.run.reproduce.comparison import REPRODUCED, UNDECIDED
    from suite.run.reproduce.inputs import chosen, read_original, this_machine
    from suite.run.reproduce.planning import plan
    from suite.run.reproduce.reporting import load_notes, report_lines
    from suite.run.reproduce.training import default_output, train
    from workloads.own import implementation_name

    if not 0 < args.tolerance <= 100 * MAX_THROUGHPUT_TOLERANCE:
        raise Usage(f"--tolerance {args.tolerance:g}: a percentage above 0 and at most "
                    f"{100 * MAX_THROUGHPUT_TOLERANCE:g} (the rules' bound, docs/rules.md)")
    tolerance = args.tolerance / 100
    original = read_original(args.file)
    indexes = chosen(original, args.run)
    code_read = None
    if args.attest_code_read is not None:  # refused here for a reference workload's file, before anything runs
        from suite.run.reproduce import attestation

        code_read = attestation.code_read(original.doc["settings"], args.attest_code_read,
                                run_recorded_command=args.run_recorded_command, sign=not args.no_sign)
    if original.doc["settings"].get("division") == "own":
        return _reproduce_own(args, original, indexes, tolerance, code_read)
    if getattr(args, "sandbox_tmp_gib", None) is not None:
        raise Usage("--sandbox-tmp-gib sizes the sandbox own code's recorded command runs in: FILE holds runs of "
                    "goodbench's workloads, trained again here without one")
    the_plan = plan(original, indexes, args.data_dir, this_machine())
    out = Path(args.output) if args.output else default_output()
    if not launch.in_torchrun():  # the launcher, or the one process: rank 0 reports the rest
        say(f"reproducing {len(indexes)} run{'s' if len(indexes) != 1 else ''} of {args.file} "
            f"(sha256 {original.sha256[:12]}…) on this machine: {the_plan.describe()}")
        for note in the_plan.notes:
            say(f"note: {note}")
        _wait_and_warn(args)
    if not args.no_sign and not launch.in_torchrun():
        signing.load_key()  # an unreadable signing key fails here, before torchrun or training
    if the_plan.layout.world_size > 1 and not launch.in_torchrun():
        return _launch(args, the_plan, out)
    overrides = None
    if args.system_overrides:
        from suite.run.overrides import load_overrides

        overrides = load_overrides(args.system_overrides)
    found = train(the_plan, out, data_dir=args.data_dir, tolerance=tolerance, progress=progress, report=say,
                  system_name=args.system_name, system_overrides=overrides,
                  command=["goodbench", *args.argv], sign=not args.no_sign, cap=_cap(args))
    if found is None:  # another rank: rank 0 reports
        return 0
    for line in [*report_lines(found), *load_notes([original.doc["runs"][i] for i in indexes], found.comparisons,
                                                   implementation_name(original.doc))]:
        print(line, flush=True)  # the load, said beside the verdicts
    n = len(found.comparisons)
    done = sum(c.verdict == REPRODUCED for c in found.comparisons)
    undecided = sum(c.verdict.startswith(UNDECIDED) for c in found.comparisons)
    print(f"reproduction written to {out} (names {Path(args.file).name} by sha256 {original.sha256[:12]}…): "
          f"{done} of {n} run{'s' if n != 1 else ''} reproduced"
          + (f", {undecided} inconclusive" if undecided else ""), flush=True)
    print(signing.closing_line(found.doc, args.no_sign), flush=True)
    if found.interrupted:
        from suite.run.signals import sigterm_received

        say("interrupted: the reproduction holds the runs trained again before it")
        return 143 if sigterm_received() else 130
    if launch.in_torchrun():
        return 0  # the launcher reads the verdicts from the file: a differing run is no failed worker
    return 0 if found.reproduced else 1


def _data_dir_for_the_rerun(data_dir: str | None) -> None:
    """The reviewer's ``--data-dir`` as the sandboxed re-run's ``$GOODBENCH_DATA_DIR``, bound into
    the sandbox read-only as that variable's folder is (suite/run/reproduce/sandbox.py): the
    recorded command names no data folder (an absolute path there is refused), so the folder is
    the reviewer's to give (a new user's --data-dir was ignored, and the re-run found no data).
    Usage where it is no folder."""
    import os

    from workloads import data

    if data_dir is None:
        return
    wrong = data.missing_folder(data_dir)
    if wrong is not None:
        raise Usage(wrong)
    os.environ["GOODBENCH_DATA_DIR"] = str(Path(data_dir).resolve())


def _reproduce_own(args, original, indexes: list[int], tolerance: float, code_read: dict | None) -> int:
    """Own code's runs: its recorded command, printed in full, run again in a sandbox on a copy of
    its code only when the user asks (``--run-recorded-command``; suite/run/reproduce/own.py), the
    re-run compared by seed, with the reviewer's attestation of reading the code where given
    (``code_read``, suite/run/reproduce/attestation.py); 0 when every run reproduced,
    :data:`NOTHING_RUN` when the command was only printed."""
    import shlex

    from suite.record.results import NameTaken
    from suite.run.reproduce import attestation, own, sandbox, sandbox_tmp
    from suite.run.reproduce.comparison import REPRODUCED, UNDECIDED
    from suite.run.reproduce.reporting import attestation_line, load_notes, report_lines
    from suite.run.reproduce.training import default_output
    from workloads.own import implementation_name

    settings = original.doc["settings"]
    out = Path(args.output) if args.output else default_output()
    shown = shlex.join(own.recorded_command(settings))
    folder = own.workdir(settings)
    where = "its work tree's root" if folder == "." else f"the folder {folder} of its work tree"
    commit = own.recorded_commit(settings)
    dirty = own.uncommitted_refusal(settings)
    at = "with no git commit recorded" if not commit else f"at git commit {commit} with uncommitted changes" if dirty \
        else f"at git commit {commit} (the commit to check out here)"
    say(f"{args.file} (sha256 {original.sha256[:12]}…) holds runs of own code {at}; its recorded command, run from "
        f"{where}:\n    {shown}")
    if TMP_PLACEHOLDER in shown:
        say(f"({TMP_PLACEHOLDER}: a temporary folder's path, shortened for privacy when the file was written; the "
            "re-run writes its file where goodbench says, not there)")
    if dirty:
        raise GoodbenchError(dirty)
    if not own.code_at_hand(settings, Path(".")):
        raise GoodbenchError(own.own_code_steps(settings, Path(".")))
    own.runnable_command(settings, Path("."))  # refused here, before anything runs, if it may not run
    if not args.run_recorded_command:  # nothing reproduced: not 0, which `&&` reads as a reproduction
        say(f"nothing was run: read the command above — its script is the checked-out code (this checkout's HEAD is "
            f"the recorded commit, {str(commit)[:12]}), its arguments are the file's — and pass --run-recorded-command "
            f"to run it (exit status {NOTHING_RUN}: nothing reproduced)")
        return NOTHING_RUN
    _refuse_the_checkout_on_the_import_path(Path("."))
    _data_dir_for_the_rerun(args.data_dir)
    _wait_and_warn(args)  # as for a reference run: the re-run's load, measured here, is recorded and said
    from suite.run.signals import stop_on_sigterm

    # SIGTERM (timeout, Slurm, docker stop) ends the reproduction as Ctrl-C does: the sandbox stopped,
    # its scratch copy and the reserved output name removed, "stopped by SIGTERM" said, exit 143
    stop_on_sigterm()
    from suite.api import arguments
    from suite.run.overrides import load_overrides
    from suite.run.reproduce.observed import Observer

    if args.system_name is not None:  # refused now, not after the re-run
        arguments.name("--system-name", args.system_name)
    observer = Observer(args.system_name, load_overrides(args.system_overrides))  # this machine, in goodbench's words
    tmp = sandbox_tmp.size(getattr(args, "sandbox_tmp_gib", None), sandbox.bounds_tmp())
    say(tmp.line())
    try:  # the key is read by goodbench once the sandboxed re-run has ended, never before
        found = own.reproduce(original, indexes, out, tolerance,
                              load_key=(lambda: None) if args.no_sign else signing.load_key, report=say, cap=_cap(args),
                              code_read=code_read, observer=observer, tmp=tmp)
    except NameTaken as exc:
        raise GoodbenchError(str(exc)) from None
    for line in [*report_lines(found), *load_notes([original.doc["runs"][i] for i in indexes], found.comparisons,
                                                   implementation_name(original.doc))]:
        print(line, flush=True)  # the load, said beside the verdicts
    done = sum(c.verdict == REPRODUCED for c in found.comparisons)
    undecided = sum(c.verdict.startswith(UNDECIDED) for c in found.comparisons)
    print(f"reproduction written to {out} (names {Path(args.file).name} by sha256 {original.sha256[:12]}…): "
          f"{done} of {len(found.comparisons)} runs reproduced"
          + (f", {undecided} inconclusive" if undecided else ""), flush=True)
    attested = attestation_line(code_read, done, attestation.OPTION)
    if attested is not None:  # after no run reproduced, nothing of what a reproduction reads
        print(attested, flush=True)
    print(signing.closing_line(found.doc, args.no_sign), flush=True)
    return 0 if found.reproduced else 1


def _wait_and_warn(args) -> None:
    """Before the first re-run: wait for quiet where ``--wait-quiet`` asks, then warn if other
    processes still use the machine (:data:`UNDER_LOAD`), as ``run`` and ``run-own`` do."""
    if getattr(args, "wait_quiet", None) is not None:
        quiet.wait(args.wait_quiet, "re-running anyway")
    warn_if_busy(UNDER_LOAD)


def _cap(args):
    """The cap on measuring a throughput on (suite/run/reproduce/measuring.py), ``--measure-for`` applied."""
    from suite.run.reproduce.measuring import Cap

    return Cap() if getattr(args, "measure_for", None) is None else Cap(seconds=args.measure_for)


def _launch(args, the_plan: Plan, out: Path) -> int:
    """Run this command under torchrun with the original's world size, as ``goodbench run
    --nproc-per-node`` does (suite/run/launch.py), and take the exit status from the verdicts rank 0
    wrote."""
    from suite.record import results
    from suite.run import launch
    from suite.run.reproduce.reporting import exit_status

    try:
        reservation = results.Reservation.take(out)
    except results.NameTaken as exc:
        raise GoodbenchError(str(exc)) from None
    reservation.close()  # unlocked: rank 0 takes it over
    try:
        status = launch.launch(args.argv, str(out), the_plan.layout.world_size)
    finally:
        reservation.release()  # the name is free again when the workers wrote nothing
    if status in (130, 143):
        return status
    try:
        doc = results.load(out)
    except (results.Unreadable, OSError):
        raise GoodbenchError(f"the workers wrote no reproduction (torchrun's exit status {status})") from None
    return exit_status(dict(doc))


def _refuse_the_checkout_on_the_import_path(checkout: Path) -> None:
    """Refuse to re-run own code when goodbench's process still has the reviewed ``checkout`` on its
    import path: a ``torch.py`` there would be imported by goodbench, outside the sandbox, with the
    reviewer's key in reach. goodbench's commands drop the working folder before their first import
    (suite/import_path.py); this is for a process that was not started as one (``python -c`` calling
    the CLI). goodbench's own checkout is not refused (its modules are the code already running)."""
    here = checkout.resolve()
    if here == Path(__file__).resolve().parents[2]:  # goodbench's own checkout: the code already running
        return
    if any((Path(entry or ".").resolve() == here) for entry in sys.path):
        raise GoodbenchError(f"goodbench runs with {here} on its import path (a process not started as the "
                             "`goodbench` command nor as python -m suite, which drop it): a module of the reviewed checkout would "
                             "run outside the sandbox; run the `goodbench` command (or python -P -m suite) "
                             "with PYTHONPATH not naming the reviewed checkout (a source clone of goodbench needs "
                             "PYTHONPATH naming goodbench's own folder)")
