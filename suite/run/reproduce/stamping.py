"""Own code's re-run stamped on a second clock (docs/own-code.md, "Reproducing"): the recorded
``python SCRIPT ARGS`` runs in the sandbox with the write end of an edge channel, as under ``goodbench
run-own`` (:mod:`suite.run.own_launch`), and this process — the reviewer's goodbench, outside the
sandbox, on a clock the script does not run in — stamps each edge with the moment the kernel saw it
sent (a Unix socket's message; a pipe's line, off Linux, as it is read). The re-run's file,
read once the sandbox has exited, gets the ``second_clock`` record; the validator then holds the
reproduction's runs to it (rule ``second-clock``), so a script that replaces its clocks in the
re-run is refused there too.

Only the channel's write end (:func:`suite.record.edge_channel.pair`) goes into the sandbox (its number in ``$GOODBENCH_EDGE_FD``): nothing of
the sandbox's other guarantees changes. The command gets no terminal: its stdin is ``/dev/null``,
and what it prints is relayed line by line, made printable and prefixed
(:mod:`suite.run.reproduce.relay`). A one-node ``torchrun`` re-run is stamped as under ``goodbench
run-own --nproc-per-node``: a private folder of one socket per local rank
(:mod:`suite.run.rank_channels`), made in the re-run's scratch folder and bound into the sandbox, is
named in ``$GOODBENCH_EDGE_DIR``, and every rank's edges are stamped here (:func:`run_ranks`,
:func:`with_rank_clocks`)."""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from typing import Any

from suite.record import edges, results
from suite.record.errors import GoodbenchError
from suite.run import clock_record, own_launch, rank_record
from suite.run.edge_reader import EdgeReader, clock
from suite.run.rank_channels import RankChannels
from suite.run.reproduce import relay
from suite.run.reproduce.planning import CannotReproduce

GRACE_S = 2.0  # how long the channel's end is awaited once the sandbox has exited


def torchrun_ranks(argv: list[str]) -> int | None:
    """The processes of a one-node torchrun re-run ``[python, -m, torch.distributed.run, …,
    --nproc-per-node=N, …]`` (None: not a torchrun re-run)."""
    if argv[1:3] != ["-m", "torch.distributed.run"]:
        return None
    counts = [a.split("=", 1)[1] for a in argv[3:] if a.startswith("--nproc-per-node=")]
    return int(counts[0]) if counts and counts[0].isdigit() else None


def run_ranks(wrapped: list[str], env: dict[str, str], channels: RankChannels,
              timeout: float | None, started: Callable[[int], None] | None = None) -> tuple[int, int]:
    """Run the sandboxed torchrun ``wrapped`` (``channels``' folder bound in it), stamping every rank's
    edges until it ends: (its exit status, its pid). :class:`CannotReproduce` when it runs past
    ``timeout`` (it is stopped). ``started``: told the sandbox's pid once it has started."""
    output = relay.Relay()
    try:
        child = subprocess.Popen(wrapped, env=env, **_streams(output))
    except BaseException:
        channels.finish(0.0)
        output.finish()
        raise
    output.started()
    if started is not None:
        started(child.pid)
    try:
        status = _wait(child, timeout)
    finally:
        output.finish()
        if child.returncode is not None:
            channels.finish(GRACE_S)
    return status, child.pid


def with_rank_clocks(raw: bytes, status: int, pid: int, channels: RankChannels) -> bytes:
    """The torchrun re-run's file ``raw`` with the ``second_clock`` record of every rank's stamps;
    :class:`GoodbenchError` naming the rank where its edges cannot be believed or do not cover the runs."""
    first, others = channels.readers[0], channels.readers[1:]
    why = own_launch.why_not(status, first)
    why = f"rank 0: {why}" if why is not None else rank_record.why_not(others)
    if why is not None:
        raise GoodbenchError(why)
    raw = with_second_clock(raw, status, pid, first)
    doc: dict[str, Any] = json.loads(raw)
    doc["second_clock"]["runs"] += rank_record.entries(doc, others)
    lacking = rank_record.unstamped(doc)
    if lacking is not None:
        raise GoodbenchError(lacking)
    return results.dumps(doc).encode()


def environment(write_end: int) -> dict[str, str]:
    """What the sandbox's environment gets for the channel: ``$GOODBENCH_EDGE_FD`` naming its write end."""
    return {edges.ENV: str(write_end)}


def run(wrapped: list[str], env: dict[str, str], ends: tuple[int, int],
        timeout: float | None, started: Callable[[int], None] | None = None) -> tuple[int, int, EdgeReader]:
    """Run the sandboxed ``wrapped`` command (the edge channel's write end passed in, closed here once it
    has started), stamping its edges until it ends: (its exit status, its pid, the reader).
    :class:`CannotReproduce` when it runs past ``timeout`` (it is stopped). ``started``: told the
    sandbox's pid once it has started."""
    read_end, write_end = ends
    try:
        output = relay.Relay()
    except BaseException:
        for fd in ends:
            os.close(fd)
        raise
    origin = clock()
    try:
        child = subprocess.Popen(wrapped, env=env, pass_fds=(write_end,), **_streams(output))
    except BaseException:
        for fd in ends:
            os.close(fd)
        output.finish()
        raise
    os.close(write_end)
    output.started()
    if started is not None:
        started(child.pid)
    reader = EdgeReader(read_end, origin)
    try:
        status = _wait(child, timeout)
    finally:
        output.finish()
        if child.returncode is not None:
            reader.finish(GRACE_S)
    return status, child.pid, reader


def _streams(output: relay.Relay) -> dict[str, Any]:
    """The sandboxed command's standard streams: no terminal to read, its output relayed (:mod:`relay`)."""
    return {"stdin": subprocess.DEVNULL, "stdout": output.stdout, "stderr": output.stderr}


def _wait(child: subprocess.Popen, timeout: float | None) -> int:
    """The sandboxed ``child``'s exit status; :class:`CannotReproduce` when it runs past ``timeout``.
    Past it, or on SIGTERM or Ctrl-C while it runs, the sandbox is stopped before goodbench goes on
    (bwrap --die-with-parent: everything in the sandbox goes with it)."""
    try:
        return child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        raise CannotReproduce(f"the recorded command ran longer than {timeout:g} s and was stopped") from None
    except BaseException:
        child.kill()
        child.wait()
        raise


def with_second_clock(raw: bytes, status: int, pid: int, reader: EdgeReader) -> bytes:
    """The re-run's file ``raw`` with the ``second_clock`` record of ``reader``'s stamps;
    :class:`GoodbenchError` saying why where the edges cannot be believed or do not cover its runs."""
    why = own_launch.why_not(status, reader)
    if why is not None:
        raise GoodbenchError(why)
    doc: dict[str, Any] = json.loads(raw)
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), list):
        raise GoodbenchError("the re-run's file holds no runs")
    if "second_clock" in doc or "signature" in doc:
        raise GoodbenchError("the re-run's file holds a second clock or a signature already: not the library's")
    doc["second_clock"] = clock_record.record(doc, reader.runs, pid)
    return results.dumps(doc).encode()


def disagreement(raw: bytes) -> str | None:
    """Where the re-run's two clocks disagree most (a run's figure on both), or None when every run's
    agree: said after the first re-run, before any measuring on. On a CPU the steady steps' sum is
    held to the second clock's sum rule too (:func:`suite.figures.clock_cover.window_flaw`): steps
    each claimed a few milliseconds short pass the per-step agreement, and a re-run measured on
    them would read faster than goodbench's clock saw it (trial 17: 0.99 s claimed, 1.257 s stamped)."""
    from suite.figures import clock_cover, clocks

    doc = json.loads(raw)
    for entry in doc["second_clock"]["runs"]:
        if entry["agreement"]["agree"] is not True:
            worst = max(entry["agreement"]["figures"],
                        key=lambda f: abs(f["own_s"] - f["launcher_s"]) / max(abs(f["launcher_s"]), 1e-9))
            rank = f"rank {entry['rank']}, " if "rank" in entry else ""
            return (f"{rank}run {entry['run_id']}: {worst['what']} {worst['own_s']:.6g} s on its clock, "
                    f"{worst['launcher_s']:.6g} s on goodbench's")
    for run in doc["runs"]:
        off = clock_cover.window_flaw(doc, run)
        if off is not None:
            return (f"run {run.get('run_id')}: its steady steps add up to {off.own:.6g} s on its clock, "
                    f"{off.launcher:.6g} s on goodbench's, further apart than the {clocks.RELATIVE:.0%} + "
                    f"{1000 * clocks.WINDOW_S:g} ms the second clock holds a CPU run's steps to")
    return None


def keep_stamped(doc: dict[str, Any]) -> None:
    """``doc``'s second clock (a reproduction's, after its runs were chosen) naming only its runs."""
    section = doc.get("second_clock")
    if isinstance(section, dict) and isinstance(section.get("runs"), list):
        ids = {r.get("run_id") for r in doc["runs"]}
        section["runs"] = [e for e in section["runs"] if isinstance(e, dict) and e.get("run_id") in ids]
        if not section["runs"]:
            doc.pop("second_clock")
