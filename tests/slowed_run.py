"""Run ``goodbench`` with one workload's training step made genuinely slower, for the tests of
``goodbench compare``:

    python tests/slowed_run.py [--extra-matmuls WORKLOAD=K ...] -- run -w ... -o FILE

Every training step of WORKLOAD then also multiplies two fixed 256×256 fp32 matrices K times,
on the step's own thread pool, inside the timed step. That is real compute — what a slower
kernel in a changed training stack costs — so the step slows down in proportion on a busy
machine as on an idle one, where a change of thread count would depend on how many cores other
processes leave free. The model, the data and the spec are untouched (same spec hash, same
losses); the other workloads of the run are not changed.
"""
from __future__ import annotations

import sys


def slow_down(workload_id: str, matmuls: int) -> None:
    """Make ``workload_id``'s jobs do ``matmuls`` extra 256×256 products per training step."""
    import torch

    from workloads import registry

    cls = type(registry.get(workload_id))
    build = cls.build

    def slowed_build(self, *args, **kwargs):
        job = build(self, *args, **kwargs)
        step = job.train_step
        extra = torch.randn(256, 256, generator=torch.Generator().manual_seed(0))

        def train_step(*a, **k):
            loss = step(*a, **k)
            for _ in range(matmuls):
                torch.mm(extra, extra)
            return loss

        job.train_step = train_step
        return job

    cls.build = slowed_build


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    ours, rest = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    while ours:
        flag, spec, *ours = ours
        if flag != "--extra-matmuls" or "=" not in spec:
            print(f"unknown option {flag} {spec}", file=sys.stderr)
            return 2
        workload_id, count = spec.split("=", 1)
        slow_down(workload_id, int(count))
    from suite.cli import main as goodbench

    return goodbench(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
