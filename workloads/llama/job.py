"""llama-1b's job (``Llama1B.job``): a Llama on the spec's pinned synthetic tokens."""
from __future__ import annotations

from pathlib import Path

import torch

from workloads.llama.model import Llama
from workloads.llama.spec import Llama1B, LlamaSpec
from workloads.lm.job import LanguageModelJob
from workloads.lm.synthetic import synthetic_lm_job
from workloads.parallel import SINGLE, Parallel


def build_job(workload: Llama1B, spec: LlamaSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> LanguageModelJob:
    """llama-1b's job: a Llama (initialized from ``seed``, once, on ``device``) on the spec's tokens; no files."""
    torch.manual_seed(seed)
    return synthetic_lm_job(spec, Llama(workload.model_config(spec), device=device), device=device, seed=seed,
                            precision=precision, parallel=parallel, compile=compile)
