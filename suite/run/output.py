"""Where ``goodbench run`` writes: the results file's name reserved before training
(:class:`suite.record.results.Reservation`) and agreed by every rank, and the checkpoint folder
beside it, removed once every run completed, else kept for ``--resume``."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from suite.record.errors import GoodbenchError, error_text
from suite.run import launch
from suite.run.progress import say

if TYPE_CHECKING:
    from suite.record.results import Reservation


def refuse_taken_output(out: Path) -> None:
    """Refuse ``-o FILE`` at once when a results file or a live run holds the name, as reserving it
    would (:class:`suite.record.results.Reservation`); the name is reserved for good just before training."""
    if not out.exists():
        return
    if out.is_dir():
        raise GoodbenchError(f"{out} is a folder: -o names the results file to write (e.g. {out / 'results.json'})")
    from suite.record import results

    try:
        reservation = results.Reservation.take(out)  # an abandoned (empty, unlocked) reservation is taken over
        if reservation.taken_over:
            say(f"{out} was left empty by a run that was killed; taking it over")
        reservation.release()
    except results.NameTaken as exc:
        raise GoodbenchError(str(exc)) from None
    except OSError:
        pass  # reserving it later says why


def agreed_paths(args, scale: str, parallel, preflight=None) -> tuple[Path, str | None, Reservation | None]:
    """The results file and checkpoint root, chosen by rank 0 and agreed by every rank, and
    rank 0's reservation of the results file's name (:class:`suite.record.results.Reservation`; None
    on the other ranks). ``preflight`` (rank 0, first) raises what would fail the file. After
    torchrun restarted the workers, the run resumes from the results file's ``.ckpt``
    directory (``out.json`` → ``out.ckpt``)."""
    from suite.run import checkpoint, distributed

    answer: tuple = (None, None, None)
    reservation = None
    if parallel.is_main:
        try:
            if preflight is not None:
                preflight()
            out, reservation = reserve_output(args, scale)
            resume = args.resume
            if resume is None and launch.restart_count() > 0 \
                    and out.with_suffix(".ckpt").is_dir():
                resume = str(out.with_suffix(".ckpt"))
            wanted = bool(args.checkpoint_every or args.inject_failure or args.failure_rate)
            answer = (str(out), checkpoint.choose_root(out, resume, wanted), None)
        except GoodbenchError as exc:
            if reservation is not None:
                reservation.release()
                reservation = None
            answer = (None, None, str(exc))
        except BaseException:  # an interrupt (Ctrl-C, SIGTERM) before the run holds it: no empty file left
            if reservation is not None:
                reservation.release()
            raise
    out, root, error = distributed.broadcast(answer, parallel)
    if error:
        raise GoodbenchError(error)
    return Path(out), root, reservation


def reserve_output(args, scale: str) -> tuple[Path, Reservation]:
    """Reserve the results file's name before training (:class:`suite.record.results.Reservation`):
    a name taken by a file or by another run fails at once with ``-o``; a default name taken
    (another run started in the same second) falls back to the next free one, and says so.
    Returns (path, reservation)."""
    from suite.record import results

    first = out = output_path(args, scale)
    for n in range(2, 101):
        try:
            reservation = results.Reservation.take(out)
        except results.NameTaken as exc:
            if args.output:
                raise GoodbenchError(str(exc)) from None
            out = first.with_name(f"{first.stem}-{n}{first.suffix}")
            continue
        except OSError as exc:
            raise GoodbenchError(f"cannot write the results file {out}: {results.cannot_write(out, exc)}") from None
        if out != first:
            say(f"{first} is taken (another run started in the same second): writing {out}")
        return out, reservation
    raise GoodbenchError(f"{first} and 99 names after it are taken; give -o FILE")


def output_path(args, scale: str) -> Path:
    return Path(args.output) if args.output else Path("runs") / (
        dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + f"-{scale}.json")


def checkpoints_after(args, checkpoint_dir: str | None, out: Path, doc: dict) -> None:
    """Remove ``<results file>.ckpt/`` once every run completed (the results file holds every
    run's event log; nothing is left to resume), else keep it and say what it is for. A
    ``--resume`` directory is the user's: kept."""
    if checkpoint_dir is None or not Path(checkpoint_dir).exists():
        return
    settings = doc["settings"]
    done = not settings["interrupted"] and not settings["aborted"] \
        and all(r["status"] == "complete" for r in doc["runs"])
    if args.resume is not None:
        say(f"checkpoints kept in {checkpoint_dir} (a --resume directory is not removed)")
    elif not done:
        say(f"checkpoints kept in {checkpoint_dir}: not every run completed; "
            f"`goodbench run … --resume {checkpoint_dir} -o NEW.json` continues the runs "
            "not finished (finished ones are kept, not trained again)")
    elif Path(checkpoint_dir) == out.with_suffix(".ckpt"):
        import shutil

        try:
            shutil.rmtree(checkpoint_dir)
            say(f"checkpoints removed ({checkpoint_dir}): every run completed, and "
                f"{out} holds their event logs")
        except OSError as exc:
            say(f"checkpoints kept in {checkpoint_dir}: removing them failed ({error_text(exc)})")
