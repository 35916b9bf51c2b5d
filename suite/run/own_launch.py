"""``goodbench run-own SCRIPT ARGS``: own code run as a child with a second clock (docs/own-code.md,
"A second clock"). Torch-free.

The script runs with this Python, the write end of a channel named in ``$GOODBENCH_EDGE_FD`` (a
socket, :mod:`suite.record.edge_channel`); the library writes a line at every step and evaluation
edge (:mod:`suite.api.edges`), which this process stamps on its own clock with the moment the
kernel saw it sent (:mod:`suite.run.edge_reader`). When the script ends, the file it
wrote gets a ``second_clock`` record — this process's stamps, the child's pid, the tolerance and
how far the clocks agree (:mod:`suite.figures.clocks`) — and is signed here (under run-own the
library leaves signing to its launcher), written atomically over the child's, and validated.
Where the edges cannot be believed (the channel closed early, flooded, garbled), the file is left as
the child wrote it: one clock, unsigned, and the reason is the error.

With ``--nproc-per-node N`` the script runs as a one-node torchrun job (:func:`launch_ranks`): each
rank writes its edges to its own socket (:mod:`suite.run.rank_channels`), all stamped on this
process's one clock, and the record holds an entry per run per rank (:mod:`suite.run.rank_record`)."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from suite.meters import host_load
from suite.record import edge_channel, edges, results
from suite.record.errors import GoodbenchError
from suite.run import rank_record
from suite.run.clock_journal import Journal
from suite.run.clock_record import record
from suite.run.edge_reader import EdgeReader, clock
from suite.run.rank_channels import RankChannels
from suite.run.stops import Stops, start_own_group


def launch(script: str, args: list[str], grace_s: float = 2.0,
           extra_env: dict[str, str] | None = None, stops: Stops | None = None,
           say: Callable[[str], None] | None = None) -> tuple[int, subprocess.Popen, EdgeReader]:
    """Run ``python SCRIPT ARGS`` with the edge channel (and ``extra_env`` in its environment), stamping
    its edges until it ends; its exit status. ``stops``: where a Ctrl-C or SIGTERM is noted (and
    SIGTERM passed on); ``say``: where a script silent for long is said (:mod:`suite.run.own_stall`)."""
    if not Path(script).is_file():
        raise GoodbenchError(f"{script}: no such script")
    stops = stops or Stops()
    read_end, write_end = edge_channel.pair()
    env = {**os.environ, **(extra_env or {}), edges.ENV: str(write_end), **launcher_environment()}
    journal = Journal(script, args)  # its stamps kept across a kill, where the script names a checkpoint directory
    origin, started_at_s = clock(), time.time()  # the wall clock: what links this process's stamps to another's
    try:
        child = subprocess.Popen([sys.executable, script, *args], pass_fds=(write_end,), env=env)
    finally:
        os.close(write_end)
    stops.started(child)
    journal.started(child.pid, started_at_s, origin)
    reader = EdgeReader(read_end, origin, journal)
    status = _wait(child, stops, [reader], origin, say)
    stops.hold_interrupts()  # the second clock is added from here on, whatever the keyboard says
    reader.finish(grace_s)
    reader.journal.close()
    return status, child, reader


def launcher_environment() -> dict[str, str]:
    """This launcher's pid for the script's environment: a rank's load watch leaves it out of the
    other processes (:func:`suite.meters.host_load.own_ancestors`), though torchrun's ranks are in
    groups of their own."""
    return {host_load.LAUNCHER_PID: str(os.getpid())}


def torchrun_command(script: str, args: list[str], nproc: int) -> list[str]:
    """``python -m torch.distributed.run --standalone --nproc-per-node=N SCRIPT ARGS`` with this Python;
    :class:`GoodbenchError` where torch cannot be imported here (checked without importing it)."""
    from suite.record import dependencies

    if nproc < 1:
        raise GoodbenchError(f"--nproc-per-node must be 1 or more, not {nproc}")
    if not dependencies.findable("torch"):
        raise GoodbenchError(f"--nproc-per-node needs torch (torch.distributed.run), which {sys.executable} "
                             "cannot import")
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}", script, *args]


def launch_ranks(script: str, args: list[str], nproc: int, grace_s: float = 2.0,
                 extra_env: dict[str, str] | None = None, stops: Stops | None = None,
                 say: Callable[[str], None] | None = None) -> tuple[int, subprocess.Popen, RankChannels]:
    """Run ``SCRIPT ARGS`` as a one-node torchrun job of ``nproc`` ranks (``extra_env`` in its
    environment), each rank's edges read from its own channel (:mod:`suite.run.rank_channels`) and
    stamped on this process's clock until the job ends; its exit status, the torchrun process and
    the channels (readers in rank order). ``stops`` and ``say``: as :func:`launch`'s."""
    if not Path(script).is_file():
        raise GoodbenchError(f"{script}: no such script")
    stops = stops or Stops()
    command = torchrun_command(script, args, nproc)
    journal = Journal(script, args)  # every rank's stamps kept across a kill, in one journal
    origin, started_at_s = clock(), time.time()
    channels = RankChannels(nproc, origin, journal=journal)
    try:
        # torchrun in a process group of its own: a stop sent to the launcher's whole group reaches it once,
        # passed on by Stops (Ctrl-C as SIGINT). Killed with this process: no file can be sealed then, and its
        # ranks end at once as their channels lose their reader (suite.api.edges); SIGTERM, sent again as each
        # thread of this process ends, would come twice and end torchrun's shutdown midway
        child = start_own_group(command, death_signal=signal.SIGKILL,
                                env={**os.environ, **(extra_env or {}), **channels.environment(),
                                     **launcher_environment()})
    except BaseException:
        channels.finish(0.0)
        channels.close()
        raise
    stops.started(child)
    journal.started(child.pid, started_at_s, origin)  # before any rank can name the journal: torchrun starts them
    status = _wait(child, stops, channels.readers, origin, say)  # torchrun hands the stops to the ranks
    stops.hold_interrupts()
    channels.finish(grace_s)
    channels.close()
    journal.close()
    return status, child, channels


def _wait(child: subprocess.Popen, stops: Stops, readers: Sequence[EdgeReader], origin: float,
          say: Callable[[str], None] | None, poll_s: float = 5.0) -> int:
    """Wait for the script's process and return its exit status; a Ctrl-C (which reached the script
    too, or is passed on to torchrun in its own group: it writes its file) is noted in ``stops`` and
    the wait goes on. Every ``poll_s`` a script
    silent for long is said through ``say`` (:class:`suite.run.own_stall.StallWatch`)."""
    from suite.run.own_stall import StallWatch

    watch = StallWatch(say, os.getpid()) if say is not None else None
    ended = _exit_handle(child) if watch is not None else None
    try:
        while True:
            try:
                # asleep until the child ends or poll_s pass (Popen.wait(timeout) polls at 20 Hz)
                if ended is not None and not select.select([ended], [], [], poll_s)[0]:
                    raise subprocess.TimeoutExpired(child.args, poll_s)
                return child.wait(timeout=poll_s if watch is not None else None)
            except subprocess.TimeoutExpired:
                if watch is not None:
                    watch.check(readers, clock() - origin)
            except KeyboardInterrupt:
                stops.interrupted()
    finally:
        if ended is not None:
            os.close(ended)


def _exit_handle(child: subprocess.Popen) -> int | None:
    """A descriptor readable once ``child`` has ended (Linux's pidfd), or None where there is none
    (another system, an old kernel): :func:`_wait` then falls back on Popen's polling wait."""
    try:
        return os.pidfd_open(child.pid) if hasattr(os, "pidfd_open") else None
    except OSError:
        return None


def seal(path: Path, reader: EdgeReader, pid: int, ranks: Sequence[EdgeReader] = ()) -> dict[str, Any]:
    """Add the second clock to the file the child wrote at ``path``, signed when the child asked, and
    write it atomically over it; returns the document. ``ranks``: the readers of ranks 1, 2, … of a
    torchrun job (``reader`` is rank 0's), whose entries join the record (:mod:`suite.run.rank_record`)."""
    from suite.trust import signing

    try:
        doc: dict[str, Any] = dict(results.load(path))
    except results.Unreadable as exc:
        raise GoodbenchError(str(exc)) from None
    if "second_clock" in doc or "signature" in doc:
        raise GoodbenchError(f"{path} holds a second clock or a signature already: the child's file is not "
                             "the library's under run-own")
    sign = reader.written is not None and reader.written[0]
    key = signing.load_key() if sign else None
    renamed: dict[str, str] = {}
    if key is not None:  # ids bound to the key before the record names them
        before = [r.get("run_id") for r in doc["runs"]]
        signing.bind_runs(doc, signing.public_bytes(key))
        renamed = {str(old): r["run_id"] for old, r in zip(before, doc["runs"]) if old != r["run_id"]}
    for seen in reader.runs:
        seen.run_id = renamed.get(seen.run_id, seen.run_id)
    journal = getattr(reader, "journal", None)  # run-own's: the stamps of the processes before this one
    if journal is None:
        doc["second_clock"] = record(doc, reader.runs, pid)
        doc["second_clock"]["runs"] += rank_record.entries(doc, ranks)
    else:  # every rank's runs joined with their segments in the journal
        from suite.run import own_segments

        doc["second_clock"] = own_segments.record(journal, doc, reader.runs, pid, renamed, ranks)
    lacking = rank_record.unstamped(doc)
    if lacking is not None:
        raise GoodbenchError(lacking)
    if key is not None:
        doc = signing.sign(doc, key)
    doc = json.loads(results.dumps(doc))
    results.write(path, doc, overwrite=True)
    return doc


def why_not(status: int, reader: EdgeReader) -> str | None:
    """Why the child's edges cannot be added to a file (None: they can)."""
    if reader.broken is not None:
        return f"its edge channel was not believed ({reader.broken})"
    if reader.written is None:
        ended = f"ended by signal {-status}" if status < 0 else f"ended with status {status}"
        return f"the script {ended} without naming a results file on its edge channel (it closed the channel, wrote no file, or made no goodbench.Benchmark)"
    return None
