"""``goodbench.Benchmark``: goodbench's meters around the user's own training loop, writing one
standard results file of the ``own`` division (docs/own-code.md).

The loop calls it; it drives what goodbench's runner drives around a reference job
(:mod:`suite.run.runner`): the step clock (CUDA events on a GPU, no per-step host sync), the
warm-up and the steady-state window, the energy meter read at the window's edges, telemetry, the
MLPerf-format event log with its step blocks, evaluations, checkpoints and data waits, and at the
end each run's record, its figures and goodput (:func:`suite.run.record.finish`). The file is
validated by the same rules as a reference run's, the implementation's declaration standing for
the pinned spec (:mod:`workloads.own`)::

    bench = goodbench.Benchmark("my-gpt", samples_per_step=32, tokens_per_step=32 * 64,
                                max_steps=300, eval_every=50, against="lm-char", scale="smoke")
    with bench:                       # measures the matmul ceiling; writes the file at the end
        for run in bench.runs():      # one run per seed, its RNGs seeded
            model, optimizer = build()
            run.count_flops(lambda: loss_of(model, *batch()).backward())
            run.evaluate_pinned(model)    # the untrained model, before the first step
            for step in range(bench.max_steps):
                with run.data_wait():
                    x, y = batch()
                with run.step() as s:
                    s.loss = train_step(model, optimizer, x, y)
                if run.due_for_evaluation() and run.evaluate_pinned(model):
                    break
    print(bench.path, bench.problems)
"""
from __future__ import annotations

import functools
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from suite.api import arguments, script
from suite.api.edges import EdgePipe, forget_orphaned, on_orphaned
from suite.api.run import FLOPS_AGREE, Run
from suite.figures import derive
from suite.meters.ceiling import MOST_SECONDS_AGAIN, again_when_stopped, matmul_ceiling, measured_again
from suite.mlperf.fields import submission as mlperf_submission
from suite.record import privacy, results
from suite.record.errors import GoodbenchError
from suite.run import distributed, driver, files, session, signals, system
from suite.run.progress import ProgressPrinter, say, warn_if_busy
from suite.run.runner import check_precision
from suite.run.state import RunOptions
from suite.trust import signing
from workloads import own
from workloads.base import Workload
from workloads.parallel import SINGLE, Parallel
from workloads.pinned import SCALES


class Benchmark:
    """One measured session of the user's own training code: one run per seed, written as one
    results file when it ends.

    ``name`` and ``trains`` say what the code is and what it trains. ``against``: a goodbench
    workload whose quality target at ``scale`` the runs are held to, evaluated by goodbench's
    pinned evaluator (:meth:`Run.evaluate_pinned`); None: a free job, measured and shown, never
    ranked. ``samples_per_step`` (and ``tokens_per_step``) are one optimizer step's global batch;
    or give ``samples_per_rank`` (and ``tokens_per_rank``), each rank's share of it, and the
    Benchmark multiplies them by the job's world size (1 outside torchrun: the same script declares
    the global batch under ``torchrun --nproc-per-node N`` as in one process).
    ``flops_per_step`` is the global step's model FLOPs (forward and backward, no recompute),
    else counted once by :meth:`Run.count_flops`. ``max_steps`` is the step budget,
    ``warmup_steps`` the steps before the steady-state window (default 10, fewer in a shorter
    run), ``eval_every`` the evaluation cadence (default: the last step only), ``log_every`` the
    loss's.
    ``seeds``: how many runs (the first of goodbench's pinned seeds 1, 2, …) or which seeds; a
    full-scale run held to a target needs 5, as a reference one does. ``code``: files whose
    sha256 identify the code (with the git commit of the work tree holding the first);
    ``command``: how to run it again (default: ``python SCRIPT ARGS`` of this process, the script by
    its path in the work tree). The file is written
    to ``out`` (never over an existing file; ``$GOODBENCH_OUT`` overrides it, as ``goodbench
    reproduce`` sets it for a re-run), signed when a signing key exists (``sign``).
    ``system_name``: the system's name on the leaderboard, or ``$GOODBENCH_SYSTEM_NAME`` (what
    ``goodbench run-own --system-name`` gives; both, differing, are refused).
    ``checkpoint_dir``: where the session keeps what a killed process's successor needs to go on
    (its id and measured ceiling, each run's event log, the checkpoints :meth:`Run.save` writes,
    each finished run's record): the same command run again continues the session, skips the
    finished runs, and each unfinished run goes on from its newest checkpoint (:meth:`Run.restore`),
    the steps done after it counted as lost work.
    Under torchrun every rank makes the Benchmark and runs the same loop (the process group is
    joined here unless the code joined it; a GPU rank trains on ``cuda:LOCAL_RANK``): the
    step's figures are the global batch's, each rank's FLOPs counted on its share and summed,
    and rank 0 writes the file with every rank's step times (docs/own-code.md).
    Launched by ``goodbench run-own``, it writes each step's and evaluation's edge to the launcher's
    edge channel (:mod:`suite.api.edges`: a socket the kernel stamps as sent) and leaves signing to the launcher, which adds its second clock
    to the file first."""

    def __init__(self, name: str, *, samples_per_step: int | None = None, max_steps: int, trains: str = "",
                 against: str | None = None, scale: str = "smoke", tokens_per_step: int | None = None,
                 samples_per_rank: int | None = None, tokens_per_rank: int | None = None,
                 flops_per_step: float | None = None, warmup_steps: int | None = None, eval_every: int | None = None,
                 log_every: int = 10, precision: str = "fp32", device: str | torch.device = "auto",
                 seeds: int | Sequence[int] = 1, code: Sequence[str | Path] = (),
                 command: Sequence[str] | None = None, out: str | Path = "goodbench-own.json",
                 system_name: str | None = None, sign: bool = True, data_dir: str | None = None,
                 checkpoint_dir: str | Path | None = None, progress: Callable[..., None] | None = None,
                 peak_tflops: float | None = None):
        script.refusals_in_one_line()  # a refused argument below, or any later refusal: one line, not a traceback
        arguments.name("name", name)
        arguments.name("trains", trains, required=False, description=True)  # shown under the name on every row
        system_name = arguments.system_name(system_name)  # or goodbench run-own --system-name's
        arguments.whole("max_steps", max_steps, 1, arguments.MAX_STEPS)
        # the job's processes: torchrun's world (the one start() joins), else 1
        samples, tokens_per_step = arguments.global_batch(
            samples_per_step, tokens_per_step, samples_per_rank, tokens_per_rank, max_steps,
            distributed.from_env("cpu").world_size)
        flops_per_step = arguments.flops(flops_per_step)
        for label, where in (("out", out), ("checkpoint_dir", checkpoint_dir), ("data_dir", data_dir)):
            arguments.path(label, where)
        arguments.whole("log_every", log_every, 1, arguments.MAX_STEPS)
        arguments.whole("eval_every", max_steps if eval_every is None else eval_every, 1, arguments.MAX_STEPS)  # 0 was "none"
        if not isinstance(sign, bool) or not (progress is None or callable(progress)):
            raise GoodbenchError("sign must be True or False, and progress a callable or None")
        if peak_tflops is not None:
            arguments.positive("peak_tflops", peak_tflops)
        self.peak_tflops = peak_tflops
        warmup_steps = arguments.warmup(warmup_steps, max_steps)
        if scale not in SCALES:
            raise GoodbenchError(f"scale must be one of {', '.join(SCALES)}, not {scale!r}")
        self.seeds = arguments.seeds(seeds)
        self.reference: Workload | None = arguments.held_to(against, scale, len(self.seeds))
        check_precision(precision)
        self.name, self.trains, self.against, self.scale = name, trains, against, scale
        self.samples_per_step: int = samples  # the global batch's, as the rules hold it
        self.tokens_per_step, self.flops_per_step = tokens_per_step, flops_per_step
        self.flops_source = "given"
        self.max_steps, self.warmup_steps, self.log_every = max_steps, warmup_steps, log_every
        self.eval_every = eval_every or max_steps
        self.precision, self.sign, self.data_dir = precision, sign, data_dir
        self.device = system.resolve_device(device) if isinstance(device, str) else device
        # GOODBENCH_OUT: where `goodbench reproduce` has the re-run of recorded own code write its file
        # (taken by the process's first Benchmark only: the re-run's file is its)
        self.out, self.system_name = Path(os.environ.pop("GOODBENCH_OUT", "") or out), system_name
        # GOODBENCH_RERUN_SYSTEM_NAME: the name `goodbench reproduce` gives the reviewer's machine (empty:
        # the accelerator's own, "<name> x<count>"), never the one the re-run's script passes for its author's
        named = os.environ.pop("GOODBENCH_RERUN_SYSTEM_NAME", None)
        if named is not None:
            self.system_name = arguments.name("system_name", named) if named else None
        # GOODBENCH_CHECKPOINT_DIR: a fresh folder for a re-run's checkpoints (`goodbench reproduce`), never
        # the original's, whose finished runs would be handed back untrained
        fresh = os.environ.pop("GOODBENCH_CHECKPOINT_DIR", "")
        self.checkpoint_dir = Path(fresh or checkpoint_dir) if checkpoint_dir is not None else None
        self.code = arguments.paths("code", code)
        # $GOODBENCH_EDGE_FD (one process) or $GOODBENCH_EDGE_DIR (each rank of a torchrun job): `goodbench
        # run-own` launched this process and stamps its edges on its own clock (the first Benchmark's)
        self.edges = EdgePipe.for_process()
        self.command = arguments.command(command)  # None: this process's
        # by default the runner's lines on stderr: steps, evaluations, ETA (suite/run/progress.py), from
        # one process only (torchrun's rank 0), as goodbench run says them
        self.progress = progress or (ProgressPrinter() if os.environ.get("RANK", "0") == "0"
                                     else (lambda *a, **k: None))
        self.path: Path | None = None  # where the results file was written, once it is
        self.problems: list[str] = []  # what the validator says of it (empty: valid)
        self.records: list[dict[str, Any]] = []
        self.current: Run | None = None  # the run now training
        self._started = self._ended = self._iterated = False
        self._identity: dict[str, Any] | None = None
        self.parallel: Parallel = SINGLE  # this process's place under torchrun (set by start())
        self._joined = False  # the process group was joined here (and is left at the end)
        self._stopped_by: BaseException | None = None  # the error that ended the session (end())
        self._workload: Workload | None = None
        self._reservation: results.Reservation | None = None  # rank 0's hold on out, from start()
        self._evaluator: Callable[[Any], dict[str, float]] | None = None
        self._signals: dict | None = None  # the handlers SIGTERM's (and SIGINT's) replaced while the session runs
        self._installed: dict | None = None  # the session's own handlers (put back only where still set)

    # ------------------------------------------------------------------ the session
    def __enter__(self) -> Benchmark:
        self.start()  # one that fails has put SIGTERM's handler back (__exit__ is not called)
        return self

    def __exit__(self, kind, error, traceback) -> None:
        ours = self._signals is not None  # SIGTERM became Terminated by this session's handler
        try:
            if error is None:
                self._exit(error)
            else:  # a second signal (SIGTERM sent to the job's group and passed on by run-own too) is held
                with signals.holding():  # what was held is dropped: the error that ended the session goes on
                    self._exit(error)
        except signals.Terminated as stopped:  # SIGTERM held while the file was written, raised after it
            if ours and type(stopped) is signals.Terminated:
                signals.killed_if_uncaught(stopped, self._stopped_line())
            raise
        finally:
            self._restore_signals()
        if ours and type(error) is signals.Terminated:
            signals.killed_if_uncaught(error, self._stopped_line())

    def _exit(self, error: BaseException | None) -> None:
        if not self._started or self._ended:
            return
        if error is not None and self.parallel.distributed:
            # the peers may be anywhere in their loop: no collective can be matched, so nothing is put
            # together or written (with checkpoint_dir, the finished runs' records are kept, and the same
            # command goes on); torchrun ends the job
            self._ended = True
            if self.current is not None:
                self.current.instruments.stop()
            self._let_go()
            return
        if self.current is not None and error is not None:  # held by __exit__; else end() ends it, held there
            self.current.end(error)
        if error is not None and not self.records:
            self._ended = True  # nothing measured to write: the error says why
            self._let_go()
            return
        self._stopped_by = error  # Ctrl-C or SIGTERM: whether the ceiling is measured again (end())
        self.end(interrupted=isinstance(error, KeyboardInterrupt))

    def start(self) -> None:
        """Measure the device's matmul ceiling (the bound every run's FLOP rate is held to) and
        open the session the runs belong to."""
        if self._started:
            raise GoodbenchError("this Benchmark has started already: one Benchmark writes one file")
        self._stop_on_sigterm()
        try:
            self.parallel = distributed.from_env(self.device.type)
            if self.parallel.distributed:
                import torch.distributed as dist

                self._joined = not dist.is_initialized()
                self.device = distributed.init(self.parallel, self.device)
            distributed.agree(self._reserve() if self.parallel.is_main else None, self.parallel)
            self._open_session()
        except BaseException:  # no session: the name is free again (nothing was measured), SIGTERM's handler back
            self._let_go()
            self._restore_signals()
            raise

    def _open_session(self) -> None:
        """Measure the matmul ceiling and open the session (or continue a killed process's), once
        :attr:`out` is reserved."""
        if self.parallel.is_main:
            warn_if_busy()  # as goodbench run says it: a run measured now is flagged and left out of the site's comparisons
            self._warn_if_uncommitted()
        self._key = signing.load_key() if self.sign else None
        run_key = signing.public_bytes(self._key) if self._key is not None else None
        acc = system.accelerator(self.device)
        if self.checkpoint_dir is None:
            self.ceiling = matmul_ceiling(self.device, self.precision)
            self.session = distributed.broadcast({"id": uuid.uuid4().hex, "started_at": results.utc_now()},
                                                 self.parallel)
        else:  # a successor of a killed process continues its session, with the ceiling it measured
            kept = RunOptions(device=self.device, checkpoint_dir=str(self.checkpoint_dir), parallel=self.parallel)
            self.checkpoint_dir.mkdir(parents=True, exist_ok=True)
            self.ceiling = session.matmul_ceilings([self.precision], kept, self.progress)[self.precision]
            self.session = session.start_session(kept)
            self.edges.journal(self.session["id"], str(self.checkpoint_dir.resolve()))
        self.options = RunOptions(
            device=self.device, matmul_ceiling={self.precision: self.ceiling["flops"]}, run_key=run_key,
            peak_tflops=self.peak_tflops,
            session=self.session["id"], accelerator=(acc["name"], acc["count"]), parallel=self.parallel,
            submission=mlperf_submission(self.system_name, None, f"{acc['name']} x{acc['count']}", own.DIVISION))
        if self.against is not None:
            from workloads.evaluation import evaluator

            self._evaluator = evaluator(self.against, self.scale, self.device, self.data_dir)
        self._started = True

    def _reserve(self) -> str | None:
        """Reserve :attr:`out` before any training, as ``goodbench run`` reserves its ``-o``
        (:class:`suite.record.results.Reservation`): a folder that cannot be written fails now, not
        after the runs. Why it cannot be reserved (None: reserved)."""
        try:
            self._reservation = results.Reservation.take(self.out)
        except results.ReservedElsewhere as exc:
            return exc.saying("Benchmark another out=")
        except results.NameTaken:
            return (f"{self.out} exists: a results file is never overwritten (give Benchmark another out=, "
                    "or your script's option that sets it, such as --out)")
        except OSError as exc:
            return f"cannot write the results file {self.out}: {results.cannot_write(self.out, exc)}"
        if self._reservation.taken_over:  # as goodbench run says it (suite.run.output)
            say(f"{self.out} was left empty by a run that was killed; taking it over")
        # a process whose run-own launcher is gone ends at once (os._exit): its empty placeholder goes first
        on_orphaned(self._let_go)
        return None

    def _let_go(self) -> None:
        """Free :attr:`out` when nothing was written into its reservation (also from the thread
        that finds run-own's launcher gone: :meth:`Reservation.release` removes only its own
        still-empty file)."""
        reservation, self._reservation = self._reservation, None
        if reservation is not None:
            forget_orphaned(self._let_go)
            reservation.release()

    def runs(self) -> Iterator[Run]:
        """One started :class:`Run` per seed, in order; each ends when the loop asks for the next
        (or when the session ends)."""
        if not self._started:
            raise GoodbenchError("start the Benchmark first: with goodbench.Benchmark(...) as bench: ...")
        if self._iterated:
            raise GoodbenchError("bench.runs() gives each seed's run once: iterate it once")
        self._iterated = True
        for seed in self.seeds:
            finished = self._finished_record(seed)
            if finished is not None:  # a finished run of the session this one continues
                self.records.append(finished)
                self.progress("finished", workload=finished["workload"]["id"], seed=seed, status=finished["status"])
                continue
            run = Run(self, seed)
            self.current = run
            yield run
            self._end_run(run)

    def _end_run(self, run: Run) -> None:
        """End ``run`` (its record put together, kept and added to :attr:`records`) with SIGTERM and
        Ctrl-C held, as ``goodbench run`` holds them (:func:`suite.run.runner.run_one`): one that
        came meanwhile is raised after, so that the runs so far, this one with them, are written."""
        with signals.holding(deliver=True):
            run.end(None)

    def run_dir(self, seed: int) -> Path | None:
        """The directory of the run of ``seed`` in :attr:`checkpoint_dir` (None without one)."""
        return self.checkpoint_dir / f"seed{seed}" if self.checkpoint_dir is not None else None

    def run_settings(self, seed: int) -> dict[str, Any]:
        """What makes a finished run's kept record the answer to the run of ``seed``: the same
        implementation and declared step (its FLOPs apart, which may be counted again), seed,
        device kind and model."""
        par = self.parallel
        return {"name": self.name, "trains": self.trains, "against": self.against, "scale": self.scale,
                "seed": seed, "device": self.device.type, "device_name": system.device_name(self.device),
                "world_size": par.world_size, "parallel": par.mode if par.distributed else None,
                **{k: v for k, v in self.implementation()["spec"].items() if k not in ("flops_per_step", "flops_source")}}

    def _finished_record(self, seed: int) -> dict[str, Any] | None:
        """The kept record of the run of ``seed`` when it finished in the session this one continues;
        the FLOPs per step its record holds become this session's (one declared step)."""
        found = files.finished_record(self.run_dir(seed), self.run_settings(seed), self.parallel)
        if found is None:
            return None
        flops = found["metrics"]["flops_per_step"]
        if self.flops_per_step is not None and abs(flops - self.flops_per_step) > FLOPS_AGREE * flops:
            raise GoodbenchError(f"the finished run of seed {seed} in {self.run_dir(seed)} trained {flops:.6g} FLOPs "
                                 f"per step, not {self.flops_per_step:.6g}: one file declares one step; start a "
                                 "new session (another checkpoint_dir)")
        if self.flops_per_step is None:  # counted by the earlier process (or given to it)
            self.flops_per_step, self.flops_source = flops, "counted"
            if self._spec_hash() != found["workload"]["spec_hash"]:
                self.flops_source = "given"
        if self._spec_hash() != found["workload"]["spec_hash"]:
            raise GoodbenchError(f"the finished run of seed {seed} in {self.run_dir(seed)} declared another step "
                                 "(its spec hash differs: the code, its command or the declared step changed): one "
                                 "file declares one step; run the same command again, or start a new session "
                                 "(another checkpoint_dir)")
        self.workload()  # the declaration is fixed from here: a later count must agree with it
        return found

    def _spec_hash(self) -> str:
        return own.own_workload(self.implementation(), self.scale, self.reference).spec_hash(self.scale)

    @property
    def data(self) -> Any:
        """The pinned data of the workload the runs are held to (lm-char: its encoded text, split
        and vocabulary, :class:`workloads.lm_char.evaluator.CharacterData`; fashion-cnn: its images,
        :class:`workloads.fashion_cnn.evaluator.ImageData`; dlrm-small: its teacher's clicks,
        :class:`workloads.dlrm_small.evaluator.ClickData`); None for a free job."""
        return getattr(self._evaluator, "data", None)

    def implementation(self) -> dict[str, Any]:
        """``settings.implementation``: what the code is, its identity, command and declared step."""
        from suite.run.identity import code_identity, default_command

        if self._identity is None:
            self._identity, root = code_identity(self.code)
            if self.command is None:
                self.command = default_command(list(sys.argv), root, self.parallel.local_world_size,
                                               self.parallel.nnodes)
        return {"kind": own.DIVISION, "name": self.name, "trains": self.trains, "against": self.against,
                "code": self._identity, "command": privacy.public_command(self.command or [])[0],
                "spec": {"samples_per_step": self.samples_per_step, "tokens_per_step": self.tokens_per_step,
                         "flops_per_step": self.flops_per_step, "flops_source": self.flops_source,
                         "warmup_steps": self.warmup_steps, "max_steps": self.max_steps,
                         "eval_every": self.eval_every, "log_every": self.log_every, "precision": self.precision}}

    def workload(self) -> Workload:
        """The implementation as a workload (:func:`workloads.own.own_workload`), once its FLOPs are known."""
        if self.flops_per_step is None or not self.flops_per_step > 0:
            raise GoodbenchError("no model FLOPs per step: give flops_per_step=, or call run.count_flops(...) "
                                 "before the first step (and before run.evaluate_pinned(model))")
        if self._workload is None:
            self._workload = own.own_workload(self.implementation(), self.scale, self.reference)
        return self._workload

    def end(self, interrupted: bool = False) -> Path | None:
        """Write the runs so far as one results file (signed where a key exists), validated;
        returns its path (also :attr:`path`; the validator's lines are :attr:`problems`), on
        rank 0 (None on the other ranks of a torchrun job)."""
        if not self._started or self._ended:
            raise GoodbenchError("end() a Benchmark that started and has not ended")
        self._ended = True
        whole = False  # every rank came this far: leave the process group together
        try:
            stopped: KeyboardInterrupt | None = None
            if self.current is not None:
                try:
                    self._end_run(self.current)
                except KeyboardInterrupt as exc:  # held while the run ended: it is kept, written, then raised
                    interrupted, stopped = True, exc
            if not self.records:
                raise GoodbenchError("no run was recorded: no results file written")
            needed = derive.fastest_device_rate(self.records, self.precision)
            by = stopped or self._stopped_by
            if not interrupted or again_when_stopped(self.ceiling, needed,  # stopped: once, where the file needs it
                                                     isinstance(by, signals.Terminated)):
                try:  # measured again after the runs, on every rank as before them (ceiling.with_end)
                    if interrupted:
                        self.progress("ceiling", precision=self.precision, again=True, most_s=MOST_SECONDS_AGAIN,
                                      stopped=True)
                    again = functools.partial(matmul_ceiling, self.device, self.precision, n=self.ceiling.get("n"))
                    self.ceiling = measured_again(self.ceiling, again, needed,
                                                  most_seconds=0.0 if interrupted else MOST_SECONDS_AGAIN)
                except KeyboardInterrupt as exc:  # stopped while measuring it again: the runs are kept, then it stops
                    interrupted, stopped = True, exc
                except (RuntimeError, MemoryError) as exc:  # out of memory (the loop's tensors still held): the runs are kept
                    self.progress("ceiling_not_again", precision=self.precision, why=driver.ended_by(exc))
            whole = True
            with signals.holding() as held:  # a second Ctrl-C or SIGTERM now would drop the runs so far
                path = self._write(interrupted) if self.parallel.is_main else None  # rank 0's records hold every rank's times
            if stopped is None and not interrupted:  # a signal held while the file was written
                stopped = held.interrupt
            if stopped is not None:
                raise stopped
            return path
        finally:
            self._let_go()
            if self._joined:
                distributed.shutdown(wait=whole)
            self._restore_signals()

    def _warn_if_uncommitted(self) -> None:
        """Say at the session's start, and loudly, that the code has uncommitted changes: nothing it
        measures can be reproduced (a submitter once learned it from the reviewer)."""
        why = own.uncommitted(self.implementation()["code"])
        if why:
            say(f"WARNING: {why}. This run cannot be reproduced by anyone: {own.COMMIT_FIRST} "
                "(commit before you run, docs/own-code.md)")

    def _stop_on_sigterm(self) -> None:
        """While the session runs, SIGTERM (Slurm, ``timeout``, ``docker stop``, torchrun stopping its
        ranks) stops it as Ctrl-C does: the runs so far are written, the running one as partial. Only
        where SIGTERM still has its default action, in the main thread (a handler of the code's own is
        left alone); the previous handlers come back when the session ends."""
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            self._signals = signals.stop_on_sigterm()
            self._installed = signals.installed(self._signals)

    def _stopped_line(self) -> str:
        """What a script stopped by SIGTERM says as it ends (:func:`suite.run.signals.killed_if_uncaught`)."""
        if not self.parallel.is_main:  # rank 0 writes, and says where
            return f"goodbench: rank {self.parallel.rank}: stopped by SIGTERM"
        kept = f"the runs so far are in {self.path}" if self.path is not None and self.path.exists() else \
            "no results file was written"
        return f"goodbench: stopped by SIGTERM; {kept}"

    def _restore_signals(self) -> None:
        """Put back the handlers the session replaced, where its own are still set (a framework's
        handler installed meanwhile is left alone), and forget what they noted."""
        previous, self._signals = self._signals, None
        if previous is not None:
            signals.restore(previous, self._installed)

    def _write(self, interrupted: bool) -> Path:
        doc = driver.document(system.describe(self.device, self.system_name), self._settings(interrupted),
                              self.records)
        launched = self.edges.open  # under run-own: the launcher signs, its record added, and ends with what it says
        if not launched:
            doc = driver.sealed(doc, self._key)
        reservation = self._reservation
        assert reservation is not None  # rank 0 reserved out in start()
        doc, self.path, problems, unsaved = driver.write_validated(doc, reservation.write, self.out)
        self.problems = [p.line(str(self.path)) for p in problems]
        if unsaved is not None and self.path == self.out:  # kept nowhere, printed on stdout: no file to name
            raise GoodbenchError(unsaved)
        self.edges.written(str(self.path.resolve()), self._key is not None)  # the launcher adds its clock there
        if unsaved is not None:
            raise GoodbenchError(unsaved)
        if not launched and (unreproducible := own.unreproducible_line(doc)):
            say(f"{self.path}: {unreproducible}")
        return self.path

    def _settings(self, interrupted: bool) -> dict[str, Any]:
        implementation = self.implementation()
        section = driver.settings(
            scale=self.scale, device=self.device, workloads=[self.workload().id], seeds_per_workload=len(self.seeds),
            peak_tflops=self.peak_tflops, interrupted=interrupted, division=own.DIVISION,
            command=implementation["command"], matmul_ceiling={self.precision: self.ceiling}, parallel=self.parallel)
        # the order its files have held: distributed first, the command last
        spread = {"distributed": section.pop("distributed")} if "distributed" in section else {}
        command = section.pop("command")
        return {**spread, **section, "session": self.session, "implementation": implementation, "command": command}
