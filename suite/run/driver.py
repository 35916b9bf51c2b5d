"""What every run does alike, whoever drives its loop: goodbench's runner (:mod:`suite.run.runner`,
:mod:`suite.run.session`) and the library around one's own loop (:mod:`suite.api.benchmark`,
:mod:`suite.api.run`) call these for a run's opening, its record's head and end, its cadence
checks and status wording, its finished-record file, the document's ``settings`` section, and
the document put together, sealed, written and validated."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import torch

from suite.figures import derive
from suite.meters import host_load
from suite.record import mllog, reading, results, unsaved
from suite.run import distributed
from suite.run.files import FINISHED
from suite.run.instruments import Instruments, open_run_instruments
from suite.run.record import finish
from suite.run.signals import Terminated
from suite.run.state import LoopState, RunOptions
from suite.trust import signing
from suite.trust.labels import names_withheld
from workloads.parallel import Parallel

ERROR_LINE = 300  # the characters of an error's first line that a record keeps


def workload_section(workload: Any, scale: str) -> dict[str, Any]:
    """A record's ``workload``: the id, version, spec hash at ``scale`` and kind."""
    return {"id": workload.id, "version": workload.version,
            "spec_hash": workload.spec_hash(scale), "kind": workload.kind}


def record_head(run_key: bytes | None, workload: dict[str, Any] | None, scale: str, seed: int,
                device: Any, precision: str) -> dict[str, Any]:
    """A run's record as it starts: its id (signed by ``run_key`` where given), what it trains,
    ``partial`` until it ends."""
    return {**signing.new_run_id(run_key), "workload": workload, "scale": scale, "seed": seed,
            "device": str(device), "precision": precision, "status": "partial", "error": None,
            "started_at": results.utc_now()}


class Opened(NamedTuple):
    """A run as it opens: its event log, the events earlier processes of it logged, its loop
    state, its instruments (started) and the machine's load before its clock."""

    log: mllog.EventLog
    prior: list[mllog.Event]
    state: LoopState
    instruments: Instruments
    load_at_start: dict[str, Any]


def open_run(directory: Path | None, device: Any, parallel: Parallel, *, held: bool = False) -> Opened:
    """Open a run: its event log (rank 0's, in ``directory`` where it keeps files; ``held``: its
    events reach the file once released), the events of its earlier processes as rank 0 read
    them, the machine's load, its loop state and its instruments (started); its initialization
    begins (``init_start`` logged)."""
    log = mllog.EventLog(directory / "events.log" if directory is not None and parallel.is_main else None, held=held)
    prior = mllog.parse(distributed.broadcast(log.all_lines(), parallel))
    load_at_start = host_load.snapshot()  # before the clock starts: not the run's time
    state = LoopState(init_start=time.time())
    instruments = open_run_instruments(device, parallel, resumed=bool(prior))
    instruments.start()
    log.start("init_start", time_s=state.init_start)
    return Opened(log, prior, state, instruments, load_at_start)


def at_cadence(step: int, every: int, max_steps: int) -> bool:
    """True after a step at a cadence of ``every`` steps (logging, evaluation), and after the last."""
    return step > 0 and (step % every == 0 or step == max_steps)


def first_line(exc: BaseException, limit: int = ERROR_LINE) -> str:
    """The first line of what ``exc`` says, cut to ``limit`` characters."""
    return (str(exc).splitlines() or [""])[0][:limit]


def steps_done(step: int, max_steps: int) -> str:
    """How far a run came before it ended early, as its ``error`` says."""
    return f"after {step} of at most {max_steps} steps"


def ended_by(exc: BaseException, done: str = "") -> str:
    """A record's ``error`` for a run that ``exc`` ended (``done``: how far it came); an
    interrupt's reads ``interrupted (SIGTERM|KeyboardInterrupt) <done>`` for the runner and the
    library alike (its status is "partial")."""
    if isinstance(exc, KeyboardInterrupt):
        why = "SIGTERM" if isinstance(exc, Terminated) else "KeyboardInterrupt"
        return f"interrupted ({why}){' ' + done if done else ''}"
    return f"{type(exc).__name__}{' ' + done if done else ''}: {first_line(exc)}"


def close_record(record: dict[str, Any], workload: Any, scale: str, options: RunOptions, precision: str,
                 state: LoopState, log: mllog.EventLog, instruments: Instruments, *, flags: Any,
                 load_at_start: dict[str, Any], sections: dict[str, Any] | None = None, alone: bool = False) -> bool:
    """End a run's record: the precision ``flags`` it trained with, its clock stopped and its figures
    filled (:func:`suite.run.record.finish`; ``alone``: apart from its peers), ``sections`` (the
    library's pinned evaluation), the machine's load at its start and end and the other processes'
    over the run (rank 0's watch). Returns whether it ended alone."""
    record["precision_flags"] = flags
    alone = finish(record, workload, scale, options, precision, state, log, instruments, alone=alone)
    record.update(sections or {})
    record["host_load"] = {"start": names_withheld(load_at_start), "end": names_withheld(host_load.snapshot()),
                           "during": names_withheld(instruments.load_during()),
                           "gpu_other_processes_end": instruments.other_gpu_processes()}
    return alone


def keep_finished(directory: Path | None, settings: dict[str, Any], record: dict[str, Any], parallel: Parallel) -> None:
    """Keep a finished run's record with what it answers (:func:`suite.run.files.finished_record`),
    rank 0's, where the run keeps files; a partial run is not kept (its successor goes on with it)."""
    if directory is not None and parallel.is_main and record["status"] != "partial":
        results.write_atomic(directory / FINISHED,
                             json.dumps({"settings": settings, "record": record}, allow_nan=False))


def distributed_settings(parallel: Parallel) -> dict[str, Any]:
    """``settings.distributed`` of a torchrun run: its ranks and how they split the work."""
    return {"world_size": parallel.world_size, "nnodes": parallel.nnodes, "backend": parallel.backend,
            "parallel": parallel.mode, "micro_batch": parallel.micro_batch}


def settings(*, scale: str, device: Any, workloads: list[str], seeds_per_workload: int | None,
             repeat: int = 1, peak_tflops: float | None, checkpoint_every: int | None = None,
             inject_failures: Sequence[int] = (), failure_rate_per_hour: float | None = None,
             compile: str = "off", skipped: Sequence[dict] = (), interrupted: bool, aborted: str | None = None,
             division: str, open_changes: Sequence[str] = (), command: list[str], matmul_ceiling: dict,
             parallel: Parallel) -> dict[str, Any]:
    """The document's ``settings`` section (the session, and the library's implementation, added
    by its caller)."""
    section = {
        "scale": scale, "device": str(device), "workloads": workloads, "seeds_per_workload": seeds_per_workload,
        **({"repeat": repeat} if repeat > 1 else {}),
        "peak_tflops_override": peak_tflops, "checkpoint_every": checkpoint_every,
        "inject_failures": list(inject_failures), "failure_rate_per_hour": failure_rate_per_hour,
        "compile": compile,
        "cpu_threads": torch.get_num_threads(),  # a CPU curve can depend on it (docs/rules.md)
        "skipped": list(skipped), "interrupted": interrupted, "aborted": aborted,
        "division": division, "open_changes": list(open_changes), "command": command,
        "matmul_ceiling": matmul_ceiling,
    }
    if parallel.distributed:
        section["distributed"] = distributed_settings(parallel)
    return section


def document(system: dict[str, Any], settings: dict[str, Any], runs: list[dict]) -> dict[str, Any]:
    """The results document of ``runs``, with its summary."""
    doc = results.new_document(system, settings, runs)
    doc["summary"] = derive.summary(runs)
    return doc


def sealed(doc: dict[str, Any], key: Any) -> dict[str, Any]:
    """``doc`` signed with ``key`` (:func:`suite.trust.signing.seal`); as it is without one."""
    return signing.seal(doc, key) if key is not None else doc


def write_validated(doc: dict[str, Any], write: Callable[[dict[str, Any]], Path],
                    out: Path) -> tuple[dict[str, Any], Path, list, str | None]:
    """Write ``doc`` (``write``, to ``out``), then validate it as the file holds it: the document read
    back (whose bytes are ``doc``'s), its path, the validator's problems (with ``file-too-large``
    where its bytes are over the limit every reader applies), and None. Where ``out``
    cannot be written (a full disk, any OSError) the document is kept elsewhere
    (:func:`suite.record.unsaved.keep`; printed on stdout when no folder takes it), and the
    fourth is the line that says where: nothing measured is lost. ``goodbench run`` and the library
    both end so."""
    from suite.validate import check_document

    text = results.dumps(doc)
    doc = json.loads(text)  # as the file holds it
    said = None
    try:
        path = write(doc)
    except OSError as exc:
        kept = unsaved.keep(out, doc)
        said, path = unsaved.line(out, exc, kept), kept or out
        if kept is None:
            print(results.dumps(doc), end="", flush=True)
    return doc, path, reading.too_large(len(text.encode())) + check_document(doc), said


def refused_advice(problems: Sequence[Any]) -> str:
    """What a writer says after a file it wrote was found invalid: submit and compare refuse it,
    and, where the runs outran the matmul ceiling measured under load, to measure on a quiet
    machine."""
    codes = sorted({p.code for p in problems})
    advice = ("the matmul ceiling, measured while other processes used the machine, read lower than the "
              "runs then reached: run again on a quiet machine (goodbench check; goodbench run --wait-quiet 600)"
              if "above-ceiling" in codes else "see docs/rules.md for each rule")
    return f"this results file breaks the rules ({', '.join(codes)}): submit and compare refuse it; {advice}"


def validated_line(path: str, problems: Sequence[Any]) -> str:
    """What a writer says of the file it validated (:func:`write_validated`), in one line:
    ``validated: ok``, or how many problems the validator found and the first of them
    (``goodbench validate FILE`` lists them all)."""
    if not problems:
        return "validated: ok"
    many = f"{len(problems)} problems (`goodbench validate {path}` lists them), the first" \
        if len(problems) > 1 else "1 problem"
    return f"validated: {many}: {problems[0].line(path)}"
