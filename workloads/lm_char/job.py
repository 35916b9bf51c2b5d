"""lm-char's job (``LmChar.job``): the language-model run on the characters of its text."""
from __future__ import annotations

from pathlib import Path

import torch

from workloads.lm.gpt import GPT
from workloads.lm.job import LanguageModelJob
from workloads.lm_char.spec import TINY_SHAKESPEARE, LmChar, LmCharSpec
from workloads.parallel import SINGLE, Parallel


def encode_characters(text: str) -> tuple[torch.Tensor, list[str]]:
    """Characters → ids over the sorted character set of ``text`` (at most 256 characters)."""
    chars = sorted(set(text))
    codes = torch.tensor([ord(c) for c in chars])
    points = torch.frombuffer(bytearray(text.encode("utf-32-le")), dtype=torch.int32).long()
    return torch.searchsorted(codes, points).to(torch.uint8), chars


def build_job(workload: LmChar, spec: LmCharSpec, *, device: torch.device, seed: int, precision: str,
              files: dict[str, Path], parallel: Parallel = SINGLE, compile: str = "off") -> LanguageModelJob:
    """lm-char's job: the text's characters, the first ``train_fraction`` to train on and the
    rest to validate on, and a GPT over its character set."""
    data, chars = encode_characters(files[TINY_SHAKESPEARE.name].read_text(encoding="utf-8"))
    split = int(spec.train_fraction * len(data))
    torch.manual_seed(seed)
    model = GPT(workload.model_config(spec, len(chars)))
    return LanguageModelJob(spec, model, data[:split].to(device=device, dtype=torch.long),
                            data[split:].to(device=device, dtype=torch.long),
                            device=device, seed=seed, precision=precision, parallel=parallel,
                            compile=compile)
