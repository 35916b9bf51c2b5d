"""Tokens per step read from a log's embedded source where its hyperparameters state them as
plain products, without running it; and the tokens per second the logged times give. Any other
form (a schedule of batch sizes, a value computed at run time) is "not in the log"."""
from __future__ import annotations

import math
import re

# 2024's form: a batch size in sequences and a sequence length
# (``[ \t]``, never ``\s``, under MULTILINE: ``^\s*`` would run over every following blank line at
# each line start, quadratic in a hostile source)
_PRODUCT = r"(\d{1,12}(?:[ \t]*\*[ \t]*\d{1,12}){0,8})"
_BATCH = re.compile(rf"^[ \t]*batch_size[ \t]*:[ \t]*int[ \t]*=[ \t]*{_PRODUCT}[ \t]*#[ \t]*batch size, in sequences, "
                    "across all", re.MULTILINE)
_SEQUENCE = re.compile(rf"^[ \t]*sequence_length[ \t]*:[ \t]*int[ \t]*=[ \t]*{_PRODUCT}[ \t]*#", re.MULTILINE)
# 2025's form: one sequence of seq_len tokens per GPU and step
_SEQ_LEN = re.compile(rf"^[ \t]*seq_len[ \t]*=[ \t]*{_PRODUCT}[ \t]*#", re.MULTILINE)
_PER_GPU = re.compile(r"^train_batch_size[ \t]*=[ \t]*world_size[ \t]*\*[ \t]*args\.seq_len[ \t]*$", re.MULTILINE)
MAX_TOKENS_PER_STEP = 10 ** 9  # the history's largest: about 10^6; a product beyond this is not read
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
    if batch and sequence and _product(batch.group(1)) * _product(sequence.group(1)) <= MAX_TOKENS_PER_STEP:
        return (_product(batch.group(1)) * _product(sequence.group(1)),
                f"batch_size {batch.group(1).strip()} sequences × sequence_length {sequence.group(1).strip()}")
    seq_len = _SEQ_LEN.search(source) if "train_batch_size = world_size * args.seq_len" in source else None
    if seq_len and _PER_GPU.search(source) and gpus and gpus * _product(seq_len.group(1)) <= MAX_TOKENS_PER_STEP:
        return (gpus * _product(seq_len.group(1)),
                f"{gpus} GPUs × seq_len {seq_len.group(1).strip()} tokens (train_batch_size = world_size * seq_len)")
    return None, NOT_IN_LOG


def rates(tokens: int | None, steps: int | None, seconds: float | None, gpus: int | None) -> tuple[float | None, float | None]:
    """(tokens/s, tokens/s per GPU) over the record clock: tokens per step × steps / train_time."""
    if not tokens or not steps or not seconds or seconds <= 0:
        return None, None
    overall = tokens * steps / seconds
    return round(overall, 1), (round(overall / gpus, 1) if gpus else None)
