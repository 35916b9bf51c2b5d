"""The launcher side of a distributed run: ``goodbench run --nproc-per-node N`` re-runs itself
under ``python -m torch.distributed.run`` (:func:`torchrun_command`) with the same arguments and one
output path, and waits for the workers. Reads only the environment and the arguments (the launcher
has loaded torch to resolve the device, and runs its threads); the workers' side is
:mod:`suite.run.distributed`."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

from suite.run import child_python, death_once
from suite.run.stops import Stops, start_own_group

# The variables torchrun sets for every worker (torch.distributed.run documentation).
TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK")


def in_torchrun() -> bool:
    """True inside a worker started by torchrun."""
    return all(name in os.environ for name in TORCHRUN_VARS[:3])


def launch(argv: list[str], out: str, nproc_per_node: int, nnodes: int = 1,
           node_rank: int | None = None, rdzv_endpoint: str | None = None,
           max_restarts: int = 0) -> int:
    """Run ``goodbench <argv>`` under torchrun, every rank writing to ``out``, and return
    torchrun's exit status (130 after Ctrl-C, once the workers have written what they have).
    Raises ValueError for launch options torchrun cannot take."""
    import tempfile

    from suite.run.signals import STOP_NOTE_ENV

    cmd = torchrun_command(worker_argv(argv, out), nproc_per_node, nnodes, node_rank,
                           rdzv_endpoint, max_restarts=max_restarts)
    print("launching: " + " ".join(cmd), file=sys.stderr, flush=True)
    handle, note = tempfile.mkstemp(prefix="goodbench-stop-")  # where SIGTERM is noted for the workers
    os.close(handle)
    env = {**launch_env(child_python.environment()), STOP_NOTE_ENV: note}  # its ranks: -P too
    try:
        # torchrun in a process group of its own: a stop sent to the launcher's whole group reaches it once,
        # passed on by Stops; it ends with the launcher (a SIGKILL of it: the kernel's death signal, once
        # per thread of this process, which death_once passes on once as SIGTERM: the workers write)
        proc = start_own_group(cmd, death_signal=death_once.DEATH_SIGNAL, env=env)
    except BaseException:
        os.unlink(note)
        raise
    try:
        with Stops(pass_on=lambda child: stop_workers(child, note)) as stops:
            stops.started(proc)
            while True:  # Ctrl-C passed on to torchrun: wait until rank 0 has written what it has
                try:
                    status = proc.wait()
                    return stops.status if stops.status is not None else status
                except KeyboardInterrupt:
                    stops.interrupted()
                    print("interrupted: waiting for the workers to stop and write the runs so far",
                          file=sys.stderr, flush=True)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(note)


def stop_workers(torchrun: subprocess.Popen, note: str) -> None:
    """Pass the launcher's SIGTERM on as SIGINT, which torchrun hands to every worker, having noted
    SIGTERM in ``note`` (``$GOODBENCH_STOP_NOTE``): the workers write the runs so far, as after
    Ctrl-C, recorded as SIGTERM (:class:`suite.run.signals.Stopped`)."""
    with contextlib.suppress(OSError), open(note, "w", encoding="ascii") as f:
        f.write("SIGTERM")
    torchrun.send_signal(signal.SIGINT)


def torchrun_command(argv: list[str], nproc_per_node: int, nnodes: int = 1,
                     node_rank: int | None = None, rdzv_endpoint: str | None = None,
                     rdzv_id: str = "goodbench", max_restarts: int = 0) -> list[str]:
    """The ``python -P -m suite.run.death_once -m torch.distributed.run … -m suite -- <argv>`` line
    that re-launches a run (:mod:`suite.run.child_python`: no working folder on the launcher's or its
    ranks' import path; :mod:`suite.run.death_once`: the launcher's death reaches torchrun once).

    One node without an endpoint uses ``--standalone``; otherwise a c10d rendezvous at
    ``rdzv_endpoint`` (``--node-rank`` is passed when given; c10d assigns ranks otherwise).
    ``--`` ends torchrun's options: its argparse would otherwise read a worker argument that is
    a prefix of one of its options as that option (``--run`` as ``--run-path``: refused as
    ambiguous). The worker drops the ``--`` where torchrun passes it on (:func:`script_argv`).
    """
    cmd = child_python.command("-m", "suite.run.death_once", "-m", "torch.distributed.run", f"--nproc-per-node={nproc_per_node}",
                               f"--nnodes={nnodes}", f"--max-restarts={max_restarts}")
    if rdzv_endpoint is None and nnodes == 1:
        cmd.append("--standalone")
    else:
        if rdzv_endpoint is None:
            raise ValueError("a run over several nodes needs --rdzv-endpoint HOST:PORT")
        cmd += ["--rdzv-backend=c10d", f"--rdzv-endpoint={rdzv_endpoint}", f"--rdzv-id={rdzv_id}"]
        if node_rank is not None:
            cmd.append(f"--node-rank={node_rank}")
    return cmd + ["-m", "suite", "--", *argv]


def script_argv(argv: list[str]) -> list[str]:
    """The arguments ``python -m suite`` runs with: ``argv`` without a leading ``--`` (the end of
    torchrun's options, :func:`torchrun_command`, which some Python versions' argparse pass on
    to the script)."""
    return argv[1:] if argv[:1] == ["--"] else list(argv)


def launch_env(environ: dict[str, str]) -> dict[str, str]:
    """The environment torchrun is started with: ``environ`` plus
    ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` (unless set), so that workers restarted after a
    failure get a fresh store; with the store shared, a restarted worker can read the address
    of a dead one and fail to connect (pytorch/pytorch#135712, seen here with gloo)."""
    return {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1", **environ}


def restart_count() -> int:
    """How many times torchrun restarted this run's workers (0 on the first attempt)."""
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


def restarts_left() -> int:
    """How many more times torchrun will restart the workers after this attempt fails."""
    return max(0, int(os.environ.get("TORCHELASTIC_MAX_RESTARTS", "0")) - restart_count())


# goodbench run's launch options: consumed by the launcher, not passed to the workers (the
# launcher waits for quiet before torchrun starts them). Known here by their full names only:
# goodbench run takes no abbreviated options (suite/commands/run.py), so none reaches a worker
# as ``--wait`` for ``--wait-quiet``
LAUNCH_OPTIONS = ("--nproc-per-node", "--nnodes", "--node-rank", "--rdzv-endpoint",
                  "--max-restarts", "--wait-quiet")


def worker_argv(argv: list[str], output: str) -> list[str]:
    """``argv`` without the launch options, and with ``-o output`` (every rank agrees on it)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in LAUNCH_OPTIONS + ("-o", "--output"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return [*out, "-o", output]
