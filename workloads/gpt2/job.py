"""gpt2-124m's job (``Gpt2.job``): a GPT on the spec's pinned synthetic tokens."""
from __future__ import annotations

from pathlib import Path

import torch

from workloads.gpt2.spec import Gpt2, Gpt2Spec
from workloads.lm.gpt import GPT
from workloads.lm.job import LanguageModelJob
from workloads.lm.synthetic import synthetic_lm_job
from workloads.parallel import SINGLE, Parallel


def build_job(workload: Gpt2, spec: Gpt2Spec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> LanguageModelJob:
    """gpt2-124m's job: a GPT (initialized from ``seed``) on the spec's tokens; no files."""
    torch.manual_seed(seed)
    return synthetic_lm_job(spec, GPT(workload.model_config(spec)), device=device, seed=seed,
                            precision=precision, parallel=parallel, compile=compile)
