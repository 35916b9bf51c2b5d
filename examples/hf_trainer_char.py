"""A Hugging Face ``Trainer`` measured by goodbench: a small GPT-2 built from its config (no
download) trained on Tiny Shakespeare's characters with ``goodbench.hf.Measure``, held to
lm-char's smoke target. One command on the CPU (from a clone: ``pip install -e ".[hf]"``):

    python examples/hf_trainer_char.py --out own-hf.json

Under torchrun the Trainer is data parallel, each rank training 32 windows a step (a step's
global batch: 32 × the ranks): ``goodbench run-own --nproc-per-node 2 examples/hf_trainer_char.py``.
"""
# ruff: noqa: E402  (the imports after ARGS: --help answers before torch and the framework load)
from __future__ import annotations

from framework_arguments import arguments

ARGS = arguments(__doc__, "own-hf.json") if __name__ == "__main__" else None  # --help before torch loads

import tempfile

import torch
from torch.utils.data import Dataset

try:
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
except ModuleNotFoundError:  # one line, as goodbench's own commands say it
    raise SystemExit('this example needs Hugging Face transformers: pip install -e ".[hf]" (from a clone of '
                     "goodbench; pip install 'goodbench[hf]' from an index)") from None

import goodbench
import goodbench.hf


class Windows(Dataset):
    """Random windows of the training text, drawn once per run from its seed; GPT-2 shifts the
    labels itself."""

    def __init__(self, ids: torch.Tensor, context: int, count: int, seed: int):
        gen = torch.Generator().manual_seed(seed)
        self.starts = torch.randint(len(ids) - context - 1, (count,), generator=gen)
        self.ids, self.context = ids, context

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        window = self.ids[int(self.starts[i]):int(self.starts[i]) + self.context]
        return {"input_ids": window, "labels": window}


def main() -> None:
    args = ARGS if ARGS is not None else arguments(__doc__, "own-hf.json")
    batch, context = 32, 64  # per device: the Benchmark declares them × the job's ranks
    bench = goodbench.Benchmark(
        "hf-trainer-gpt2-char", trains="a 2-layer GPT-2 (transformers, from its config) on Tiny Shakespeare",
        against="lm-char", scale="smoke", samples_per_rank=batch, tokens_per_rank=batch * context,
        max_steps=args.steps, eval_every=50, log_every=10, device=args.device, seeds=args.seeds,
        code=[__file__], out=args.out, data_dir=args.data_dir)
    with bench, tempfile.TemporaryDirectory() as scratch:
        for run in bench.runs():
            data = run.data
            config = GPT2Config(vocab_size=len(data.vocab), n_positions=context, n_embd=128, n_layer=2, n_head=4,
                                resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
            model = GPT2LMHeadModel(config)
            train = Windows(data.train.cpu(), context, bench.samples_per_step * args.steps, run.seed)
            settings = TrainingArguments(
                output_dir=scratch, max_steps=args.steps, per_device_train_batch_size=batch, learning_rate=2e-3,
                lr_scheduler_type="cosine", warmup_steps=20, weight_decay=0.1, adam_beta2=0.99, max_grad_norm=1.0,
                logging_steps=10, save_strategy="no", eval_strategy="no", report_to=[], seed=run.seed,
                use_cpu=args.device == "cpu", dataloader_num_workers=0, disable_tqdm=True,
                ddp_find_unused_parameters=False)  # under torchrun: DDP over its ranks
            sample = {k: v.unsqueeze(0).repeat(batch, 1) for k, v in train[0].items()}
            trainer = Trainer(model=model, args=settings, train_dataset=train,
                              callbacks=[goodbench.hf.Measure(run, count_flops_on=sample)])
            trainer.train()
    if bench.path is not None:  # the process that wrote the file (rank 0 under torchrun)
        print(f"results written to {bench.path}")
        for line in bench.problems:
            print(f"validator: {line}")


if __name__ == "__main__":
    raise SystemExit(goodbench.one_line_errors(main))  # a missing dataset or a refusal: one line, no traceback
