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

import contextlib
import math
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from suite.api import arguments
from suite.api.edges import EdgePipe
from suite.api.evaluators import ModelRefused
from suite.figures import derive
from suite.meters import host_load
from suite.meters.ceiling import matmul_ceiling
from suite.meters.clock import StepClock
from suite.mlperf.fields import submission as mlperf_submission
from suite.record import claims, edges, mllog, privacy, results
from suite.record.errors import GoodbenchError
from suite.record.mllog import EVAL_REFUSED, START_EVAL
from suite.run import distributed, driver, files, loop, session, system
from suite.run.instruments import open_run_instruments
from suite.run.progress import ProgressPrinter
from suite.run.record import finish, log_header
from suite.run.runner import SEED_LIMIT, check_precision, seed_everything
from suite.run.state import LoopState, RunOptions
from suite.trust import signing
from workloads import own, registry
from workloads.base import Workload
from workloads.parallel import SINGLE, Parallel
from workloads.pinned import SCALES, SEEDS

FLOPS_AGREE = 1e-6  # FLOPs counted again in a later run must be the first run's (one declared step)


@dataclass
class StepMarks:
    """What the loop tells of the step it is in (:meth:`Run.step`): its number and its training
    ``loss`` (a tensor or a number; read at the logging cadence only)."""

    number: int
    loss: Any = None


class Benchmark:
    """One measured session of the user's own training code: one run per seed, written as one
    results file when it ends.

    ``name`` and ``trains`` say what the code is and what it trains. ``against``: a goodbench
    workload whose quality target at ``scale`` the runs are held to, evaluated by goodbench's
    pinned evaluator (:meth:`Run.evaluate_pinned`); None: a free job, measured and shown, never
    ranked. ``samples_per_step`` (and ``tokens_per_step``) are one optimizer step's global batch;
    ``flops_per_step`` its model FLOPs (forward and backward, no recompute), else counted once by
    :meth:`Run.count_flops`. ``max_steps`` is the step budget, ``warmup_steps`` the steps before
    the steady-state window (default 10, fewer in a shorter run), ``eval_every`` the evaluation
    cadence (default: the last step only), ``log_every`` the loss's.
    ``seeds``: how many runs (the first of goodbench's pinned seeds 1, 2, …) or which seeds; a
    full-scale run held to a target needs 5, as a reference one does. ``code``: files whose
    sha256 identify the code (with the git commit of the work tree holding the first);
    ``command``: how to run it again (default: ``python SCRIPT ARGS`` of this process, the script by
    its path in the work tree). The file is written
    to ``out`` (never over an existing file; ``$GOODBENCH_OUT`` overrides it, as ``goodbench
    reproduce`` sets it for a re-run), signed when a signing key exists (``sign``).
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
    pipe (:mod:`suite.api.edges`) and leaves signing to the launcher, which adds its second clock
    to the file first."""

    def __init__(self, name: str, *, samples_per_step: int, max_steps: int, trains: str = "",
                 against: str | None = None, scale: str = "smoke", tokens_per_step: int | None = None,
                 flops_per_step: float | None = None, warmup_steps: int | None = None, eval_every: int | None = None,
                 log_every: int = 10, precision: str = "fp32", device: str | torch.device = "auto",
                 seeds: int | Sequence[int] = 1, code: Sequence[str | Path] = (),
                 command: Sequence[str] | None = None, out: str | Path = "goodbench-own.json",
                 system_name: str | None = None, sign: bool = True, data_dir: str | None = None,
                 checkpoint_dir: str | Path | None = None, progress: Callable[..., None] | None = None,
                 peak_tflops: float | None = None):
        arguments.name("name", name)
        arguments.text("trains", trains)
        if system_name is not None:
            arguments.name("system_name", system_name)
        arguments.whole("max_steps", max_steps, 1, arguments.MAX_STEPS)
        arguments.per_step("samples_per_step", samples_per_step, max_steps)
        if tokens_per_step is not None:
            arguments.per_step("tokens_per_step", tokens_per_step, max_steps)
        flops_per_step = arguments.flops(flops_per_step)
        for label, where in (("out", out), ("checkpoint_dir", checkpoint_dir), ("data_dir", data_dir)):
            arguments.path(label, where)
        for label, value in (("log_every", log_every), ("eval_every", eval_every or max_steps)):
            arguments.whole(label, value)
        if not isinstance(sign, bool) or not (progress is None or callable(progress)):
            raise GoodbenchError("sign must be True or False, and progress a callable or None")
        if peak_tflops is not None:
            arguments.flops(peak_tflops)  # finite and positive, as a step's FLOPs
        self.peak_tflops = peak_tflops
        warmup_steps = min(10, max_steps - 1) if warmup_steps is None else warmup_steps
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or not 0 <= warmup_steps < max_steps:
            raise GoodbenchError(f"warmup_steps must be a whole number from 0 to max_steps - 1, not {warmup_steps!r}")
        if scale not in SCALES:
            raise GoodbenchError(f"scale must be one of {', '.join(SCALES)}, not {scale!r}")
        self.seeds = list(SEEDS[:seeds]) if isinstance(seeds, int) else list(seeds)
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or \
                not all(isinstance(s, int) and 0 <= s < SEED_LIMIT for s in self.seeds):
            raise GoodbenchError(f"seeds: a number of runs from 1 to {len(SEEDS)}, or distinct seeds from 0 to "
                                 f"{SEED_LIMIT - 1}, not {seeds!r}")
        self.reference: Workload | None = None
        if against is not None:
            try:
                self.reference = registry.get(against)
            except registry.UnknownWorkload as exc:
                raise GoodbenchError(str(exc.args[0])) from None
            if self.reference.spec(scale).target is None:
                raise GoodbenchError(f"{against} has no quality target at {scale} scale: hold the runs to a "
                                     "time-to-accuracy workload, or make them a free job (against=None)")
        needed = derive.required_seeds(scale, "tta" if against is not None else "throughput")
        if len(self.seeds) < needed:
            raise GoodbenchError(f"a {scale}-scale run held to a target needs {needed} seeds in one file, as a "
                                 f"reference one does: seeds={needed}")
        check_precision(precision)
        self.name, self.trains, self.against, self.scale = name, trains, against, scale
        self.samples_per_step, self.tokens_per_step, self.flops_per_step = samples_per_step, tokens_per_step, flops_per_step
        self.flops_source = "given"
        self.max_steps, self.warmup_steps, self.log_every = max_steps, warmup_steps, log_every
        self.eval_every = eval_every or max_steps
        self.precision, self.sign, self.data_dir = precision, sign, data_dir
        self.device = system.resolve_device(device) if isinstance(device, str) else device
        # GOODBENCH_OUT: where `goodbench reproduce` has the re-run of recorded own code write its file
        # (taken by the process's first Benchmark only: the re-run's file is its)
        self.out, self.system_name = Path(os.environ.pop("GOODBENCH_OUT", "") or out), system_name
        # GOODBENCH_CHECKPOINT_DIR: a fresh folder for a re-run's checkpoints (`goodbench reproduce`), never
        # the original's, whose finished runs would be handed back untrained
        fresh = os.environ.pop("GOODBENCH_CHECKPOINT_DIR", "")
        self.checkpoint_dir = Path(fresh or checkpoint_dir) if checkpoint_dir is not None else None
        self.code = arguments.paths("code", code)
        # $GOODBENCH_EDGE_FD: `goodbench run-own` launched this process and stamps its edges on its own clock
        # (the first Benchmark's; rank 0's under torchrun)
        self.edges = EdgePipe.from_env() if os.environ.get("RANK", "0") == "0" else EdgePipe(None)
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
        self._workload: Workload | None = None
        self._evaluator: Callable[[Any], dict[str, float]] | None = None

    # ------------------------------------------------------------------ the session
    def __enter__(self) -> Benchmark:
        self.start()
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if not self._started or self._ended:
            return
        if error is not None and self.parallel.distributed:
            # the peers may be anywhere in their loop: no collective can be matched, so nothing is put
            # together or written (with checkpoint_dir, the finished runs' records are kept, and the same
            # command goes on); torchrun ends the job
            self._ended = True
            if self.current is not None:
                self.current.instruments.stop()
            return
        if self.current is not None:
            self.current.end(error)
        if error is not None and not self.records:
            self._ended = True  # nothing measured to write: the error says why
            return
        self.end(interrupted=isinstance(error, KeyboardInterrupt))

    def start(self) -> None:
        """Measure the device's matmul ceiling (the bound every run's FLOP rate is held to) and
        open the session the runs belong to."""
        if self._started:
            raise GoodbenchError("this Benchmark has started already: one Benchmark writes one file")
        self.parallel = distributed.from_env(self.device.type)
        if self.parallel.distributed:
            import torch.distributed as dist

            self._joined = not dist.is_initialized()
            self.device = distributed.init(self.parallel, self.device)
        exists = f"{self.out} exists: a results file is never overwritten (give another out=)"
        distributed.agree(exists if self.parallel.is_main and self.out.exists() else None, self.parallel)
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
        self.options = RunOptions(
            device=self.device, matmul_ceiling={self.precision: self.ceiling["flops"]}, run_key=run_key,
            peak_tflops=self.peak_tflops,
            session=self.session["id"], accelerator=(acc["name"], acc["count"]), parallel=self.parallel,
            submission=mlperf_submission(self.system_name, None, f"{acc['name']} x{acc['count']}", own.DIVISION))
        if self.against is not None:
            from suite.api.evaluators import evaluator

            self._evaluator = evaluator(self.against, self.scale, self.device, self.data_dir)
        self._started = True

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
        and vocabulary, :class:`suite.api.evaluators.CharacterData`; fashion-cnn: its images,
        :class:`suite.api.evaluators.ImageData`; dlrm-small: its teacher's clicks,
        :class:`suite.api.evaluators.ClickData`); None for a free job."""
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
                                 "before the first step")
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
            if self.current is not None:
                self.current.end(None)
            if not self.records:
                raise GoodbenchError("no run was recorded: no results file written")
            whole = True
            return self._write(interrupted) if self.parallel.is_main else None  # rank 0's records hold every rank's times
        finally:
            if self._joined:
                distributed.shutdown(wait=whole)

    def _write(self, interrupted: bool) -> Path:
        doc = driver.document(system.describe(self.device, self.system_name), self._settings(interrupted),
                              self.records)
        if not self.edges.open:  # under run-own the launcher signs, its record added
            doc = driver.sealed(doc, self._key)
        doc, self.path, problems = driver.write_validated(doc, lambda held: results.write(self.out, held))
        self.problems = [p.line(str(self.path)) for p in problems]
        self.edges.written(str(self.path.resolve()), self._key is not None)
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


class Run:
    """One seeded run of a :class:`Benchmark`: the loop's calls to goodbench's meters.

    It starts when made (initialization: data, model, optimizer — left out of the run's clock,
    as MLPerf's is) and the run's clock starts at its first step. With the Benchmark's
    ``checkpoint_dir``, its event log is kept in its run directory as it is written, and a run
    that an earlier process began goes on from its newest checkpoint (:meth:`restore`)."""

    def __init__(self, bench: Benchmark, seed: int):
        self.bench, self.seed = bench, seed
        self.device = bench.device
        self.record = driver.record_head(bench.options.run_key, None, bench.scale, seed, bench.device, bench.precision)
        self.load_at_start = host_load.snapshot()
        self.parallel = parallel = bench.parallel
        self.directory = bench.run_dir(seed)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        # the run's event log is rank 0's; the events of the processes that ran it before, as rank 0 read them.
        # This process's events reach the file once its header is logged and, going on from an earlier
        # process, its checkpoint was accepted: one refused, or killed in its initialization, adds nothing
        self.log = mllog.EventLog(self.directory / "events.log" if self.directory is not None and parallel.is_main
                                  else None, held=True)
        self.prior = mllog.parse(distributed.broadcast(self.log.all_lines(), parallel))
        self.state = LoopState(init_start=time.time())
        self.instruments = open_run_instruments(bench.device, parallel, resumed=bool(self.prior))
        self.instruments.start()
        self.log.start("init_start", time_s=self.state.init_start)
        from workloads.training import set_precision

        self.precision_flags = set_precision(bench.device, bench.precision)
        seed_everything(seed)
        self._training = self._ended = self._initialized = self._restore_called = self._resumed = False
        self._open_step: int | None = None  # a step whose window and block are open (a data wait began it)
        # the pinned evaluation (a run held to a target): the untrained model's quality, a refusal, the probes
        started = [e for e in self.prior if e.key == START_EVAL]  # an earlier process's run evaluated it
        self._start_quality: dict[str, Any] | None = dict(claims.quality(started[0])) if started else None
        self._refused: dict[str, Any] | None = None
        self._probes: list[Any] = []
        self._pending: list[tuple[str, Any, dict[str, Any]]] = []  # events held until the log's header
        self.warm_last = bench.warmup_steps  # this process's warm-up ends after this step
        self.timed_before = 0  # steps timed by earlier processes
        self.edges = bench.edges
        self.edges.edge(edges.RUN, seed, self.record["run_id"])
        bench.progress("run", seed=seed)

    @property
    def data(self) -> Any:
        """:attr:`Benchmark.data`: the pinned data of the workload the run is held to."""
        return self.bench.data

    def count_flops(self, forward_backward: Callable[[], Any]) -> float:
        """Count one step's model FLOPs with torch's FLOP counter (:func:`suite.api.flops.count_flops`):
        ``forward_backward()`` runs a forward and backward pass of one batch, during initialization.
        Recorded as counted; a later run's count must agree. Returns them."""
        from suite.api.flops import count_flops

        if self._training:
            raise GoodbenchError("count the FLOPs during initialization, before the first step")
        bench = self.bench
        if bench.flops_source == "given" and bench.flops_per_step is not None:
            raise GoodbenchError("flops_per_step was given to the Benchmark: a step's FLOPs are given or counted, "
                                 "not both")
        counted = count_flops(forward_backward)
        if self.parallel.distributed:  # each rank computes its share of the global batch
            counted = float(sum(distributed.gather(counted, self.parallel)))
        if bench._workload is not None and abs(counted - (bench.flops_per_step or 0)) > FLOPS_AGREE * counted:
            raise GoodbenchError(f"this run's step counts {counted:.6g} FLOPs, the first run's count was "
                                 f"{bench.flops_per_step:.6g}: every run of one file trains the step it declares")
        if bench._workload is None:
            bench.flops_per_step, bench.flops_source = counted, "counted"
        return counted

    @property
    def steps_done(self) -> int:
        """The optimizer steps the run has finished: after :meth:`restore`, those of its checkpoint
        (the loop goes on from the next: ``for step in range(run.steps_done + 1, max_steps + 1)``)."""
        return self.state.step

    def _end_initialization(self) -> None:
        """Log the run's header and end its initialization (``init_stop``)."""
        if self._ended:
            raise GoodbenchError(f"the run of seed {self.seed} has ended")
        if self._initialized:
            return
        bench = self.bench
        workload = bench.workload()
        self.record["workload"] = driver.workload_section(workload, bench.scale)
        log_header(self.log, workload, bench.scale, self.seed, self.device, bench.options, bench.precision,
                   self.instruments.energy)
        self.log.event(claims.PRECISION_FLAGS, self.precision_flags)
        for key, value, metadata in self._pending:  # the start evaluation and its refusal, after the header
            self.log.event(key, value, metadata)
        self._pending.clear()
        loop.end_initialization(self.state, self.log, self.device)
        self._initialized = True

    def _begin_training(self) -> None:
        """End initialization and start the run's clock (MLPerf's ``run_start``), or go on with the
        clock of the run an earlier process began (:meth:`restore`)."""
        if self.prior and not self._resumed:
            raise GoodbenchError(f"{self.directory} holds the event log of an earlier process's run of seed "
                                 f"{self.seed}: call run.restore() before the first step (and load the state "
                                 "it returns), or give a new checkpoint_dir to start again")
        self._end_initialization()
        bench = self.bench
        self.log.release()
        if not self._resumed:
            loop.start_clock(self.state, self.log, self.instruments.energy, self.parallel)
            self.edges.edge(edges.START, 0)
        self.clock = StepClock(self.device)
        self.warm_last = self.state.step + bench.warmup_steps
        self.timed_before = len(self.state.step_times)
        self.blocks = mllog.StepBlocks(self.log, self.warm_last)
        self._training = True
        bench.progress("run_start", workload=bench.name, seed=self.seed,  # the lines name the code
                       max_steps=bench.max_steps)

    def restore(self) -> Any:
        """Go on with a run an earlier process began and did not finish (the Benchmark's
        ``checkpoint_dir`` holds its event log): load its newest intact checkpoint written by
        :meth:`save` — the loop's state, the RNGs and the run's own record so far — and return
        the state the loop saved (None: the run starts from step 0, by then a fresh run or one
        with no intact checkpoint). Call it during initialization, after the FLOPs are known,
        and load what it returns into the model and optimizer; the loop goes on from step
        :attr:`steps_done` + 1. The steps the earlier process did after that checkpoint are
        counted as lost work, its time in the badput."""
        if self.directory is None:
            raise GoodbenchError("no checkpoint_dir was given to the Benchmark: there is nothing to restore from")
        if self._training or self._restore_called:
            raise GoodbenchError("restore() once, during initialization, before the first step")
        self._restore_called = True
        if not self.prior:  # the run's first process: its clock starts at its first step
            return None
        self._end_initialization()
        holder = _StateHolder()
        bench = self.bench
        workload = bench.workload()
        self.state = files.resume(holder, workload, bench.scale, self.log, self.prior, self.state, self.directory,
                                  self.parallel)
        self._resumed = True
        self.log.release()
        bench.progress("resumed", workload=workload.id, seed=self.seed, step=self.state.step)
        return holder.state

    # ------------------------------------------------------------------ the loop
    def _open(self) -> int:
        """Open the next step: the energy window at the first steady step, the log's step block."""
        if self._refused is not None:
            raise ModelRefused(self._refused["reason"])
        if not self._training:
            bench = self.bench
            if bench.against is not None and self._start_quality is None:
                raise GoodbenchError(f"a run held to {bench.against}'s target is evaluated before it trains: call "
                                     "run.evaluate_pinned(model) once before the first step (the untrained model's "
                                     "quality is recorded, and a model at the target already is refused)")
            self._begin_training()
        if self._open_step is None:
            step = self.state.step + 1
            if self.state.tta_s is not None:
                raise GoodbenchError(f"the target was met at step {self.state.step}: a run stops training there, "
                                     "as time to target is measured to its first qualifying evaluation")
            if step > self.bench.max_steps:
                raise GoodbenchError(f"step {step} is beyond max_steps={self.bench.max_steps}, the budget declared")
            loop.open_step(step, self.warm_last, self.state, self.blocks, self.instruments.energy, self.device)
            self._open_step = step
        return self._open_step

    @contextlib.contextmanager
    def data_wait(self) -> Iterator[None]:
        """Time the fetch of the next step's batch as a data wait (badput), apart from the step."""
        self._open()
        self.clock.fetch()
        yield

    def begin_step(self) -> int:
        """Start the clock of one optimizer step; returns its number (1, 2, …)."""
        step = self._open()
        self.edges.edge(edges.BEGIN, step)  # outside the step's clock, as is the end's
        self.clock.start()
        return step

    def end_step(self, loss: Any = None) -> None:
        """Stop the step's clock; ``loss`` (a tensor or a number) is logged at the ``log_every``
        cadence (under torchrun: the mean of the ranks' losses)."""
        step = self._open_step
        if step is None:
            raise GoodbenchError("end_step() without begin_step()")
        self.clock.stop()
        self.edges.edge(edges.END, step)
        self.blocks.step_done(step, None)
        self.state.step, self._open_step = step, None
        bench = self.bench
        log_point = driver.at_cadence(step, bench.log_every, bench.max_steps)
        if log_point or step == self.warm_last:  # every rank flushes at the same steps
            self._flush()
        if not log_point:
            return
        value = None if loss is None else float(loss.detach() if isinstance(loss, torch.Tensor) else loss)
        given = [v for v in distributed.gather(value, self.parallel) if v is not None]
        if given:
            loop.log_loss(torch.tensor(sum(given) / len(given), dtype=torch.float64), step, self.state, self.log,
                          bench.progress)

    @contextlib.contextmanager
    def step(self) -> Iterator[StepMarks]:
        """One optimizer step, timed: ``with run.step() as s: …; s.loss = loss``."""
        marks = StepMarks(self.begin_step())
        yield marks
        self.end_step(marks.loss)

    def _flush(self) -> None:
        loop.flush_step_times(self.clock, self.state, self.blocks, self.timed_before, self.parallel)

    # ------------------------------------------------------------------ evaluation and checkpoints
    def due_for_evaluation(self) -> bool:
        """True after a step at the declared evaluation cadence (every ``eval_every`` steps, and the last)."""
        return driver.at_cadence(self.state.step, self.bench.eval_every, self.bench.max_steps)

    def evaluate(self, quality: Callable[[], Mapping[str, float]]) -> bool:
        """A free job's evaluation: ``quality()`` gives its metrics ({name: value}), timed as
        evaluation (out of the steady window, in the eval badput) and put on the curve."""
        with self.evaluation() as found:
            found.quality = {str(k): float(v) for k, v in quality().items()}
        return found.met

    @contextlib.contextmanager
    def evaluation(self) -> Iterator[loop.Evaluation]:
        """A free job's evaluation by its own code inside the block, timed as :meth:`evaluate`'s:
        ``with run.evaluation() as ev: ev.quality["val_mse"] = ...`` (a framework's validation
        loop, which a callback can only mark the edges of)."""
        if self.bench.against is not None:
            raise GoodbenchError(f"a run held to {self.bench.against}'s target is evaluated by goodbench's pinned "
                                 "evaluator: run.evaluate_pinned(model)")
        with self._evaluating() as found:
            yield found

    def evaluate_pinned(self, model: Any, logits_of: Callable[..., torch.Tensor] | None = None) -> bool:
        """Evaluate ``model`` with the pinned evaluator of the workload the run is held to (in
        eval mode, without gradients): ``logits_of(inputs)`` gives the logits (default:
        ``model(inputs)``; lm-char's inputs are token ids — a Hugging Face model:
        ``lambda ids: model(input_ids=ids).logits`` —, fashion-cnn's normalized images;
        dlrm-small's are two, ``(dense, sparse)``, and the model gives one click logit per sample).
        True once the target is met (stop training then). Called once before the first step, it
        evaluates the untrained model (recorded; the first step needs it). :class:`ModelRefused`
        when the evaluation refuses the model — it reads later tokens (lm-char's causality
        probe), or meets the target untrained —: the refusal is recorded and the run reaches no
        target."""
        evaluator = self.bench._evaluator
        if evaluator is None:
            raise GoodbenchError("a free job has no pinned evaluator: run.evaluate(quality)")
        if self._refused is not None:
            raise ModelRefused(self._refused["reason"])
        was_training = getattr(model, "training", False)
        if was_training:
            model.eval()
        try:
            if not self._training:  # before the first step: the untrained model
                self._evaluate_at_start(evaluator, logits_of or model)
                return False
            with self._evaluating() as found:
                found.quality = self._graded(evaluator, logits_of or model)
        except ModelRefused as exc:
            self._refuse(self.state.step, str(exc))
            raise
        finally:
            if was_training:
                model.train()
        return found.met

    def _graded(self, evaluator: Callable[..., dict[str, float]], logits_of: Callable[..., Any]) -> dict[str, float]:
        """The pinned evaluator's quality of ``logits_of``, its probe kept; :class:`ModelRefused`
        on every rank when rank 0's evaluation refused the model."""
        try:
            quality, why = evaluator(logits_of), None
        except ModelRefused as exc:
            quality, why = {}, str(exc)
        probe = getattr(evaluator, "last_probe", None)
        if probe is not None:
            self._probes.append(probe)
        why = distributed.broadcast(why, self.parallel)  # rank 0's verdict, as its figures decide
        if why is not None:
            raise ModelRefused(why)
        return quality

    def _evaluate_at_start(self, evaluator: Callable[..., dict[str, float]], logits_of: Callable[..., Any]) -> None:
        """The evaluation of the untrained model, before the run's first step (out of its clock,
        in its initialization): recorded, and :class:`ModelRefused` when it meets the target
        already."""
        bench = self.bench
        if self._start_quality is not None:
            if self.prior:
                return  # the run's first process evaluated it (its log holds it)
            raise GoodbenchError("the run was evaluated before its first step already: once per run")
        if self.state.step:
            raise GoodbenchError(f"the run goes on from step {self.state.step} of an earlier process whose log "
                                 "holds no evaluation before training: start a new session (another checkpoint_dir)")
        quality = distributed.broadcast(self._graded(evaluator, logits_of), self.parallel)
        self._start_quality = quality
        target = bench.reference.spec(bench.scale).target if bench.reference is not None else None
        self._log_event(START_EVAL, quality.get(target.metric) if target is not None else None,
                        {"step": 0, "quality": quality})
        if target is not None and target.metric in quality and target.met(quality[target.metric]):
            raise ModelRefused(f"the model meets {bench.against}'s target ({target.describe()}: {target.metric} "
                               f"{quality[target.metric]:.4g}) before any training: a run held to a target reaches "
                               "it by training, so it is not graded")

    def _refuse(self, step: int, reason: str) -> None:
        """Record that the pinned evaluation at ``step`` refused the model: the run reaches no target."""
        if self._refused is None:
            self._refused = {"step": step, "reason": reason[:1000]}
            self._log_event(EVAL_REFUSED, reason[:1000], {"step": step})

    def _log_event(self, key: str, value: Any, metadata: dict[str, Any]) -> None:
        """Log an event now, or once the log's header is (an evaluation before it)."""
        if self._initialized:
            self.log.event(key, value, metadata)
        else:
            self._pending.append((key, value, metadata))

    def pinned_evaluation(self) -> dict[str, Any] | None:
        """The record's ``pinned_evaluation`` (None for a free job): the untrained model's quality
        (``start``), a refusal (``refused``: the step and why), and the causality probes
        (``probe``: the largest difference seen, its tolerance, the evaluations probed and their
        seconds; None where the model is given no answer to read)."""
        if self.bench.against is None:
            return None
        probe = None
        if self._probes:
            worst = max(self._probes, key=lambda p: p.max_difference)
            difference = worst.max_difference if math.isfinite(worst.max_difference) else None  # NaN logits
            probe = {"kind": "causality", "max_difference": difference, "tolerance": worst.tolerance,
                     "evaluations": len(self._probes), "seconds": sum(p.seconds for p in self._probes)}
        return {"start": self._start_quality, "refused": self._refused, "probe": probe}

    @contextlib.contextmanager
    def _evaluating(self) -> Iterator[loop.Evaluation]:
        if not self._training or self._open_step is not None:
            raise GoodbenchError("evaluate between steps, after the first one")
        if not self.due_for_evaluation():
            raise GoodbenchError(f"step {self.state.step} is not at the declared evaluation cadence (every "
                                 f"{self.bench.eval_every} steps, and the last): check run.due_for_evaluation()")
        if self.state.curve and self.state.curve[-1]["step"] == self.state.step:
            raise GoodbenchError(f"step {self.state.step} was evaluated already")
        self._flush()
        bench = self.bench
        self.edges.edge(edges.EVAL_START, self.state.step)
        with loop.evaluation(bench.workload().spec(bench.scale), self.state.step, self.device, self.state,
                             self.log, self.instruments.energy, bench.progress, self.parallel) as found:
            yield found
        self.edges.edge(edges.EVAL_STOP, self.state.step)

    @property
    def evaluated_untrained(self) -> bool:
        """True once the model was evaluated before training (by this process or the run's first):
        a run held to a target calls :meth:`evaluate_pinned` once before its first step."""
        return self._start_quality is not None

    @property
    def target_met(self) -> bool:
        """True once an evaluation met the target of the workload the run is held to."""
        return self.state.tta_s is not None

    @contextlib.contextmanager
    def checkpoint(self) -> Iterator[None]:
        """Time a checkpoint save (the user's code inside) as checkpointing badput, out of the window."""
        if not self._training or self._open_step is not None:
            raise GoodbenchError("save a checkpoint between steps, after the first one")
        self._flush()
        with files.checkpoint_save(self.state.step, self.state, self.log, self.instruments.energy, self.device,
                                   self.parallel):
            yield

    def save(self, state: Mapping[str, Any]) -> None:
        """Save a checkpoint the run can go on from (:meth:`restore`), timed as checkpointing badput
        out of the window: ``state`` (tensors and plain containers: the model's and optimizer's
        state dicts, the data's position) with the RNGs and the run's record so far, written
        atomically to the run directory with its sha256, the newest two kept. Under torchrun
        every rank calls it; rank 0's ``state`` is saved (the same on every rank, as DDP's
        model and optimizer are) with each rank's RNGs."""
        if self.directory is None:
            raise GoodbenchError("no checkpoint_dir was given to the Benchmark: use run.checkpoint() to time "
                                 "a save of one's own, or give checkpoint_dir= to save one the run can go on from")
        if not self._training or self._open_step is not None:
            raise GoodbenchError("save a checkpoint between steps, after the first one")
        self._flush()
        bench = self.bench
        files.save_checkpoint(_StateHolder(dict(state)), self.state.step, self.state, self.log, self.directory,
                              bench.workload().spec_hash(bench.scale), self.instruments.energy, self.device,
                              self.parallel)

    # ------------------------------------------------------------------ the end
    def end(self, error: BaseException | None) -> None:
        """Stop the run's clock and put its record together (``error``: what ended it early)."""
        if self._ended:
            return
        bench = self.bench
        if bench.current is self:
            bench.current = None
        if not self._training:
            if error is not None and (bench.flops_per_step is None or (self.prior and not self._resumed)):
                self._ended = True  # it failed in initialization, before its step (or its past) was known: no record
                self.instruments.stop()
                return
            self._begin_training()
        self._ended = True
        self._open_step = None  # a step begun and never ended (an error inside it) is not a step
        self._flush()
        if error is not None:
            self.record.update(status="partial" if isinstance(error, KeyboardInterrupt) else "failed",
                               error=driver.ended_by(error, driver.steps_done(self.state.step, bench.max_steps)))
        else:
            done = self.state.tta_s is not None or self.state.step == bench.max_steps
            self.record.update(status="complete" if done else "partial",
                               error=None if done else f"stopped after {self.state.step} of {bench.max_steps} steps, "
                                                       "before its target or its step budget")
        self.record["precision_flags"] = self.precision_flags
        finish(self.record, bench.workload(), bench.scale, bench.options, bench.precision, self.state, self.log,
               self.instruments)
        if bench.against is not None:
            self.record["pinned_evaluation"] = self.pinned_evaluation()
        self.record["host_load"] = driver.host_load_section(self.load_at_start, self.instruments)
        if self.directory is not None and self.parallel.is_main and self.record["status"] != "partial":  # a successor skips it
            driver.keep_finished(self.directory, bench.run_settings(self.seed), self.record)
        bench.records.append(self.record)


class _StateHolder:
    """The loop's own state as :mod:`suite.run.files` saves and loads a job's (``state_dict``,
    ``load_state_dict``)."""

    def __init__(self, state: dict[str, Any] | None = None):
        self.state = state

    def state_dict(self) -> dict[str, Any]:
        return self.state or {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state = state
