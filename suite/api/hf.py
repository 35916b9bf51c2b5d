"""``goodbench.hf.Measure``: a Hugging Face ``TrainerCallback`` that measures a
``Trainer.train()`` as one :class:`~suite.api.run.Run` (docs/own-code.md). Optional:
``pip install 'goodbench[hf]'``.

Each optimizer step is one step: the step clock runs from ``on_step_begin`` to ``on_step_end``
(the Trainer fetches the step's batches before ``on_step_begin``: that time is in no step, and
data waits are "not measured"). A run held to a workload's target is
evaluated by goodbench's pinned evaluator at the declared cadence and once before the first step
(the model called on token ids, its ``.logits``) and stops the trainer at the target; a free job's evaluations are the Trainer's
own at the cadence (``eval_steps`` = ``eval_every``), their numeric metrics put on the curve.
Under torchrun the Trainer trains with DDP on torchrun's processes, every rank's callback measuring
them. A Trainer whose global batch (``per_device_train_batch_size`` × ``gradient_accumulation_steps``
× its world size) is not the Benchmark's ``samples_per_step`` is refused before its first step:
declare ``samples_per_rank`` and the Benchmark multiplies it by the world size."""
from __future__ import annotations

import contextlib
from typing import Any

import torch
from transformers import TrainerCallback

from suite.api.run import Run
from suite.api.world import check_batch, check_world


class Measure(TrainerCallback):
    """Measure one ``Trainer.train()`` as ``run``. ``count_flops_on``: a batch (the model's
    keyword inputs, ``labels`` among them) whose forward and backward are counted once, at the
    start of training, when the run's FLOPs per step are not given."""

    def __init__(self, run: Run, count_flops_on: dict[str, torch.Tensor] | None = None):
        self.run, self.batch = run, count_flops_on
        self._evaluating = contextlib.ExitStack()
        self._evaluation: Any = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        check_world(self.run.parallel, args.world_size, "the Trainer")
        check_batch(self.run.bench.samples_per_step, args.per_device_train_batch_size, args.world_size,
                    "the Trainer", args.gradient_accumulation_steps)
        if self.run.bench.flops_per_step is None and self.batch is not None and model is not None:
            inputs = {k: v.to(self.run.device) for k, v in self.batch.items()}
            self.run.count_flops(lambda: model(**inputs).loss.backward())
            model.zero_grad(set_to_none=True)

    def on_step_begin(self, args, state, control, model=None, **kwargs):
        run = self.run
        if run.bench.against is not None and not run.evaluated_untrained and model is not None:  # the untrained model
            run.evaluate_pinned(model, lambda ids: model(input_ids=ids).logits)
        run.begin_step()

    def on_step_end(self, args, state, control, model=None, **kwargs):
        run = self.run
        run.end_step(None)
        if not run.due_for_evaluation():
            return
        if run.bench.against is not None:
            if model is not None and run.evaluate_pinned(model, lambda ids: model(input_ids=ids).logits):
                control.should_training_stop = True  # the target is met
        elif control.should_evaluate:  # the Trainer's evaluation follows: its edges are the run's
            self._evaluation = self._evaluating.enter_context(run.evaluation())

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if self._evaluation is None:
            return
        self._evaluation.quality = {k: float(v) for k, v in (metrics or {}).items()
                                    if isinstance(v, (int, float)) and not isinstance(v, bool)
                                    and not k.endswith(("_runtime", "_per_second"))}
        self._evaluation = None
        self._evaluating.close()
