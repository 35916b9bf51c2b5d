"""A small own training loop that keeps checkpoints in goodbench's run directory and, when
asked, kills itself (SIGKILL: no handler runs, as with a lost node) after a chosen step of a
chosen seed; the same command run again goes on from the newest checkpoint
(tests/test_own_resume.py)::

    python tests/own_resume_job.py OUT CHECKPOINT_DIR [--kill-seed S (--kill-after N [--kill-group] | --pause-after N)]

``--kill-group`` kills its whole process group instead, a moment later (under ``goodbench run-own``:
the launcher with it, as a lost node or a terminal's Ctrl-C would; tests/test_own_resume_clock.py).
``--pause-after N`` kills nothing: after step N of seed S (in its first process) each process writes
``OUT.paused-RANK`` and sleeps :data:`PAUSE_S` before going on, a moment in which a test kills it
from outside, mid-seed and past the checkpoint before (tests/test_own_group_kill.py).
"""
from __future__ import annotations

import argparse
import os
import signal
import time

import torch
from own_job_step import measured_step, say_written, use_quick_ceiling  # beside this script
from torch import nn

import goodbench

GROUP_KILL_AFTER_S = 1.0  # the moment the launcher is given before its group goes: as a kill a while after a save
PAUSE_S = 5.0  # --pause-after: how long each process waits to be killed before it goes on


def train(run: goodbench.Run, kill_after: int | None, group: bool = False,
          pause: tuple[int, str] | None = None) -> None:
    """``pause``: ``(N, OUT)`` of --pause-after N and the results file OUT, or None."""
    bench = run.bench
    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = torch.Generator().manual_seed(run.seed)  # the batches' position: saved with the model
    teacher = torch.randn(8, 1, generator=torch.Generator().manual_seed(0))
    held_out = torch.randn(256, 8, generator=torch.Generator().manual_seed(99))

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(bench.samples_per_step, 8, generator=data)
        return x, torch.sin(x @ teacher)

    x, y = batch()
    run.count_flops(lambda: nn.functional.mse_loss(model(x), y).backward())
    optimizer.zero_grad(set_to_none=True)
    saved = run.restore()  # None in a run's first process
    if saved is not None:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        data.set_state(saved["data"])
    for step in range(run.steps_done + 1, bench.max_steps + 1):
        measured_step(run, model, optimizer, batch)
        if run.due_for_evaluation():
            with torch.no_grad():
                run.evaluate(lambda: {"val_mse": float(nn.functional.mse_loss(model(held_out),
                                                                             torch.sin(held_out @ teacher)))})
        if step % 10 == 0:
            run.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "data": data.get_state()})
        if pause is not None and step == pause[0]:
            marker = f"{pause[1]}.paused-{os.environ.get('RANK', '0')}"
            with open(f"{marker}.new", "w") as written:  # whole when seen: the test reads the pid at once
                written.write(f"{os.getpid()}\n")
            os.replace(f"{marker}.new", marker)
            time.sleep(PAUSE_S)
        if step == kill_after and group:
            time.sleep(GROUP_KILL_AFTER_S)
            os.killpg(0, signal.SIGKILL)
        if step == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("checkpoint_dir")
    parser.add_argument("--kill-seed", type=int, default=None)
    parser.add_argument("--kill-after", type=int, default=None)
    parser.add_argument("--kill-group", action="store_true")
    parser.add_argument("--pause-after", type=int, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    use_quick_ceiling()
    bench = goodbench.Benchmark("resume-mlp", trains="a 2-layer MLP on a synthetic sine teacher",
                                samples_per_step=16, max_steps=40, warmup_steps=3, eval_every=10, log_every=5,
                                seeds=2, device="cpu", code=[__file__], out=args.out, sign=False,
                                checkpoint_dir=args.checkpoint_dir)
    with bench:
        for run in bench.runs():
            first_process = not run.prior
            chosen = run.seed == args.kill_seed and first_process
            pause = (args.pause_after, args.out) if chosen and args.pause_after is not None else None
            train(run, args.kill_after if chosen else None, args.kill_group, pause)
    say_written(bench)


if __name__ == "__main__":
    main()
