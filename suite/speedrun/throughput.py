"""Tokens per step read from a log's embedded source where its hyperparameters state them as
plain products, without running it; and the tokens per second the logged times give. Any other
form (a schedule of batch sizes, a value computed at run time) is "not in the log"."""
from __future__ import annotations

import math
import re

# 2024's form: a batch size in sequences and a sequence length
_BATCH = re.compile(r"^\s*batch_size\s*:\s*int\s*=\s*(\d+(?:\s*\*\s*\d+)*)\s*#\s*batch size, in sequences, across all",
                    re.MULTILINE)
_SEQUENCE = re.compile(r"^\s*sequence_length\s*:\s*int\s*=\s*(\d+(?:\s*\*\s*\d+)*)\s*#", re.MULTILINE)
# 2025's form: one sequence of seq_len tokens per GPU and step
_SEQ_LEN = re.compile(r"^\s*seq_len\s*=\s*(\d+(?:\s*\*\s*\d+)*)\s*#", re.MULTILINE)
_PER_GPU = re.compile(r"^train_batch_size\s*=\s*world_size\s*\*\s*args\.seq_len\s*$", re.MULTILINE)
NOT_IN_LOG = "not in the log"


def _product(text: str) -> int:
    return math.prod(int(part) for part in text.split("*"))


def tokens_per_step(source: str, gpus: int | None) -> tuple[int | None, str]:
    """(tokens per optimizer step, how it was read) from the embedded source; (None, "not in the
    log") when it states them in no form read here."""
    if "batch size, in sequences, across all" in source:  # the patterns are searched only where they can match
        batch, sequence = _BATCH.search(source), _SEQUENCE.search(source)
    else:
        batch = sequence = None
    if batch and sequence:
        return (_product(batch.group(1)) * _product(sequence.group(1)),
                f"batch_size {batch.group(1).strip()} sequences × sequence_length {sequence.group(1).strip()}")
    seq_len = _SEQ_LEN.search(source) if "train_batch_size = world_size * args.seq_len" in source else None
    if seq_len and _PER_GPU.search(source) and gpus:
        return (gpus * _product(seq_len.group(1)),
                f"{gpus} GPUs × seq_len {seq_len.group(1).strip()} tokens (train_batch_size = world_size * seq_len)")
    return None, NOT_IN_LOG


def rates(tokens: int | None, steps: int | None, seconds: float | None, gpus: int | None) -> tuple[float | None, float | None]:
    """(tokens/s, tokens/s per GPU) over the record clock: tokens per step × steps / train_time."""
    if not tokens or not steps or not seconds or seconds <= 0:
        return None, None
    overall = tokens * steps / seconds
    return round(overall, 1), (round(overall / gpus, 1) if gpus else None)
