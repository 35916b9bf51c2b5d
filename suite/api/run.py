"""One seeded run of a :class:`goodbench.Benchmark` (:mod:`suite.api.benchmark`): the calls the
user's loop makes at each step, evaluation and checkpoint, adapted to the runner's pieces
(:mod:`suite.run.driver`, :mod:`suite.run.loop`, :mod:`suite.run.files`, :mod:`suite.run.record`)."""
from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from suite.record import claims, edges
from suite.record.errors import GoodbenchError
from suite.record.mllog import EVAL_REFUSED, START_EVAL
from suite.run import distributed, driver, files, loop, signals
from suite.run.record import log_header
from suite.run.runner import seed_everything
from workloads.evaluation import ModelRefused
from workloads.pinned import START_FLOORS

FLOPS_AGREE = 1e-6  # FLOPs counted again in a later run must be the first run's (one declared step)


@dataclass
class StepMarks:
    """What the loop tells of the step it is in (:meth:`Run.step`): its number and its training
    ``loss`` (a tensor or a number; read at the logging cadence only)."""

    number: int
    loss: Any = None


class Run:
    """One seeded run of a :class:`Benchmark`: the loop's calls to goodbench's meters.

    It starts when made (initialization: data, model, optimizer — left out of the run's clock,
    as MLPerf's is) and the run's clock starts at its first step, or, for a run held to a target,
    as its start evaluation (:meth:`evaluate_pinned` before the first step) ends: whatever the code
    does after it is inside time to train. With the Benchmark's
    ``checkpoint_dir``, its event log is kept in its run directory as it is written, and a run
    that an earlier process began goes on from its newest checkpoint (:meth:`restore`)."""

    def __init__(self, bench: Any, seed: int):  # its Benchmark (suite.api.benchmark imports this module)
        self.bench, self.seed = bench, seed
        self.device = bench.device
        self.record = driver.record_head(bench.options.run_key, None, bench.scale, seed, bench.device, bench.precision)
        self.parallel = bench.parallel
        self.directory = bench.run_dir(seed)
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
        # the run's event log is rank 0's; the events of the processes that ran it before, as rank 0 read them.
        # This process's events reach the file once its header is logged and, going on from an earlier
        # process, its checkpoint was accepted: one refused, or killed in its initialization, adds nothing
        self.log, self.prior, self.state, self.instruments, self.load_at_start = driver.open_run(
            self.directory, bench.device, self.parallel, held=True)
        from workloads.training import set_precision

        self.precision_flags = set_precision(bench.device, bench.precision)
        seed_everything(seed)
        self._training = self._ended = self._initialized = self._restore_called = self._resumed = False
        self._clock_started = False  # run_start logged (at the first step, or as the start evaluation ends)
        self._started_at: float | None = None  # perf_counter as the start evaluation started the clock
        self._evaluated_here = False  # this process called evaluate_pinned before its first step
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
        ``forward_backward()`` runs a forward and backward pass of one batch, during initialization
        (before :meth:`evaluate_pinned`, which starts the run's clock). Recorded as counted; a later
        run's count must agree. Returns them."""
        from suite.api.flops import count_flops

        if self._training or self._clock_started:
            raise GoodbenchError("count the FLOPs during initialization, before run.evaluate_pinned(model), whose "
                                 "start evaluation starts the run's clock, and before the first step")
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
        if not self._resumed:
            self._start_clock()
        self._end_initialization()
        bench = self.bench
        self.log.release()
        self.clock, self.blocks, self.warm_last, self.timed_before = loop.begin_steps(
            self.state, self.log, self.device, bench.warmup_steps)
        self._training = True
        # the seconds since the start evaluation started the clock: inside time to train (None: it starts here)
        on_clock = None if self._started_at is None else round(time.perf_counter() - self._started_at, 3)
        bench.progress("run_start", workload=bench.name, seed=self.seed,  # the lines name the code
                       max_steps=bench.max_steps, after_start_eval_s=on_clock)

    def _start_clock(self) -> None:
        """End initialization and start the run's clock (``run_start``, stamped by the second clock), once."""
        if self._clock_started:
            return
        self._end_initialization()
        self.log.release()
        loop.start_clock(self.state, self.log, self.instruments.energy, self.parallel)
        self.edges.edge(edges.START, 0)
        self._clock_started = True

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
        if self._training or self._restore_called or self._clock_started or self._evaluated_here:
            raise GoodbenchError("restore() once, during initialization, before the first step and before "
                                 "run.evaluate_pinned(model), whose start evaluation starts the run's clock")
        self._restore_called = True
        if not self.prior:  # the run's first process: its clock starts at its first step (or start evaluation)
            return None
        self._end_initialization()
        holder = _StateHolder()
        bench = self.bench
        workload = bench.workload()
        self.state = files.resume(holder, workload, bench.scale, self.log, self.prior, self.state, self.directory,
                                  self.parallel, self.instruments.energy, self.instruments.load)
        self._resumed = True
        self.log.release()
        bench.progress("resumed", workload=workload.id, seed=self.seed, step=self.state.step,
                       skipped=files.skipped_here(self.log))
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
        signals.stop_if_signalled()  # one lost in a callback, or held in a hold whose block raised
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

    def _between_steps(self, doing: str) -> None:
        """:class:`GoodbenchError` unless the run is between two steps, after its first (where one
        evaluates and saves checkpoints)."""
        if not self._training or self._open_step is not None:
            raise GoodbenchError(f"{doing} between steps, after the first one")

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
        """The evaluation of the untrained model, before the run's first step: recorded, and
        :class:`ModelRefused` when it meets the target already or scores below the workload's start
        floor (:data:`workloads.pinned.START_FLOORS`: trained before it). The run's clock starts as it
        ends (``run_start``): what the code does between it and the first step is time to train."""
        bench = self.bench
        self._evaluated_here = True  # restore() after it is refused alike in a run's first process and a later one
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
        floor = START_FLOORS.get(bench.against or "")
        if floor is not None and isinstance(quality.get(floor[0]), (int, float)) and quality[floor[0]] < floor[1]:
            raise ModelRefused(f"the untrained model's {floor[0]} is {quality[floor[0]]:.4g}, below {bench.against}'s "
                               f"start floor of {floor[1]:g} (an untrained model scores near the uniform loss): it "
                               "was trained before its start evaluation, off the run's clock, so it is not graded")
        self.edges.edge(edges.START_EVAL, 0)  # its end on the second clock: run_start's stamp follows at once
        self._start_clock()
        self._started_at = time.perf_counter()

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
        self._between_steps("evaluate")
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
        self._between_steps("save a checkpoint")
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
        self._between_steps("save a checkpoint")
        self._flush()
        bench = self.bench
        files.save_checkpoint(_StateHolder(dict(state)), self.state.step, self.state, self.log, self.directory,
                              bench.workload().spec_hash(bench.scale), self.instruments.energy, self.device,
                              self.parallel, self.instruments.load)
        self.edges.edge(edges.CHECKPOINT, self.state.step)  # the launcher journals its stamps up to here

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
        # its block ends where its last finished step did (an error or interrupt inside a step)
        loop.flush_step_times(self.clock, self.state, self.blocks, self.timed_before, self.parallel, ending=True)
        if isinstance(error, KeyboardInterrupt):
            signals.caught()  # this run ends here: a later one is not stopped by it
        if error is not None:
            self.record.update(status="partial" if isinstance(error, KeyboardInterrupt) else "failed",
                               error=driver.ended_by(error, driver.steps_done(self.state.step, bench.max_steps)))
        else:
            done = self.state.tta_s is not None or self.state.step == bench.max_steps
            self.record.update(status="complete" if done else "partial",
                               error=None if done else f"stopped after {self.state.step} of {bench.max_steps} steps, "
                                                       "before its target or its step budget")
            if self.state.step == 0:  # a loop that never entered run.step(): said, not only written (a new user's find)
                self.record["error"] = NO_STEP
                bench.progress("warnings", warnings=[NO_STEP])
        pinned = {"pinned_evaluation": self.pinned_evaluation()} if bench.against is not None else {}
        driver.close_record(self.record, bench.workload(), bench.scale, bench.options, bench.precision, self.state,
                            self.log, self.instruments, flags=self.precision_flags, load_at_start=self.load_at_start,
                            sections=pinned)
        # among the runs first: what follows (an fsync, a pipe write) can be interrupted, and the run is written all the same
        bench.records.append(self.record)
        driver.keep_finished(self.directory, bench.run_settings(self.seed), self.record, self.parallel)
        if self.directory is not None and self.record["status"] != "partial":  # kept: the launcher journals the run
            self.edges.edge(edges.KEPT, self.state.step)


NO_STEP = ("the run recorded no step: the loop never entered `with run.step():` (wrap each optimizer step in it), "
           "so nothing was measured")
"""What a run that ended without a step says, on the console and as its record's error."""


class _StateHolder:
    """The loop's own state as :mod:`suite.run.files` saves and loads a job's (``state_dict``,
    ``load_state_dict``)."""

    def __init__(self, state: dict[str, Any] | None = None):
        self.state = state

    def state_dict(self) -> dict[str, Any]:
        return self.state or {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.state = state
