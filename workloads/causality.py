"""The causality probe of a language model's pinned evaluation (:mod:`workloads.evaluation`): the
evaluation's batches and the probe's calls are given to the model alike, so that it cannot tell
which of its calls are probed.

At every evaluation, windows drawn at random from every evaluated batch (their number:
:data:`PROBE_SHARE`) are given to the model again as *twins*: each window's tokens from a
random cut on (anywhere from its second position to its last) replaced by another held-out
stretch's, whose token at the cut differs. The twins fill whole calls of the evaluation's batch
shape, each at its window's row, and the evaluation's batches and the probe's calls are made in one random order, every
input a fresh contiguous tensor of the same shape, dtype and device. A causal model's
log-probabilities before each cut are the same in a window and its twin; the probe keeps the
largest difference (:class:`workloads.evaluation.Probe`). The draws are secret (a generator
seeded from :mod:`secrets`) and new at every evaluation, so a model that reads a later token at
any position of any window risks the twin whose cut is there: one that reads ahead in a share
``p`` of its positions passes each twin with probability about ``1 - p``.

What no probe of this kind sees: a model that remembers its earlier calls (it can hand a twin the
log-probabilities it gave the window), or one that holds the held-out text (docs/own-code.md)."""
from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from workloads.evaluation import Logits, Probe
from workloads.pinned import CAUSAL_TOLERANCE

PROBE_SHARE = 8  # one call of twins per this many evaluated batches (at least one call)
REDRAWS = 16     # draws of a twin's tail until its token at the cut differs from the window's


def twin_calls(batches: int) -> int:
    """How many calls of twins probe an evaluation of ``batches`` batches."""
    return max(1, math.ceil(batches / PROBE_SHARE)) if batches else 0


def _chosen(batches: int, batch_size: int, calls: int, gen: torch.Generator) -> torch.Tensor:
    """(batch, row) of each window given a twin, in the twins' order: the ``k``-th call of twins
    holds windows ``k·batch_size`` to ``(k+1)·batch_size − 1``, each at its own window's row (every
    row once a call), so that a kernel whose rounding depends on a row's place in the batch (a GPU's,
    in bf16) gives a window and its twin the same. Every batch gives the same number of windows,
    give or take one, at distinct rows drawn at random."""
    count = calls * batch_size
    per = torch.full((batches,), count // batches)
    per[torch.randperm(batches, generator=gen)[:count - int(per.sum())]] += 1
    order = torch.randperm(batches, generator=gen)
    # each batch's windows side by side (at most batch_size of them: calls <= batches), so their
    # places modulo batch_size, and the rows drawn for those places, differ
    batch_of = torch.repeat_interleave(order, per[order])
    rows = torch.randperm(batch_size, generator=gen)
    chosen = torch.stack([batch_of, rows[torch.arange(count) % batch_size]], dim=1)
    return chosen.view(calls, batch_size, 2)[:, torch.argsort(rows)].reshape(count, 2)


def _tails(text: torch.Tensor, originals: torch.Tensor, cuts: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A stretch of ``text`` for each window, as long as it, whose token at the window's cut differs
    from the window's (redrawn up to :data:`REDRAWS` times). Which rows still match is read on the
    host (``nonzero``) at each redraw: up to :data:`REDRAWS` + 1 waits for the device, once an
    evaluation, before its first call."""
    count, length = originals.shape
    span = torch.arange(length, device=text.device)
    rows = torch.arange(count, device=text.device)
    starts = torch.randint(len(text) - length + 1, (count,), generator=gen).to(text.device)
    tails = text[starts[:, None] + span]
    for _ in range(REDRAWS):
        same = (tails[rows, cuts] == originals[rows, cuts]).nonzero().flatten()
        if not len(same):
            break
        again = torch.randint(len(text) - length + 1, (len(same),), generator=gen).to(text.device)
        tails[same] = text[again[:, None] + span]
    return tails


def _moved(now: torch.Tensor, then: torch.Tensor, cuts: torch.Tensor) -> torch.Tensor:
    """The largest change of a log-probability before each row's cut between two sets of logits
    (n, length, vocab), compared in fp32, a 0-d tensor on their device (not a number where either
    holds none: read once, at the end, so that a GPU is not waited for at every call; the twins'
    draws wait for it before the first, :func:`_tails`)."""
    a, b = F.log_softmax(now.float(), dim=-1), F.log_softmax(then.float(), dim=-1)
    moved = torch.where(a == b, 0.0, (a - b).abs()).amax(dim=-1)  # -inf at both: unmoved
    before = torch.arange(now.shape[1], device=now.device)[None, :] < cuts[:, None]
    return torch.where(before, moved, 0.0).amax()


def probed(logits_of: Logits, batches: list[torch.Tensor], text: torch.Tensor,
           graded: Callable[[int, torch.Tensor], None], checked: Callable[[torch.Tensor, torch.Tensor], None],
           tolerance: float = CAUSAL_TOLERANCE, gen: torch.Generator | None = None) -> Probe:
    """Give the model each of ``batches`` (token ids, each (batch, length)) and the probe's calls of
    twins (held-out ``text`` in their tails), in one random order; ``checked(x, logits)`` sees the
    logits of every call (it raises on a wrong shape), ``graded(index, logits)`` those of each
    evaluated batch. The draws come from ``gen`` (a given generator) or a secret seed."""
    gen = gen or torch.Generator(device="cpu").manual_seed(secrets.randbits(63))
    count, (batch_size, length) = len(batches), batches[0].shape if batches else (0, 0)
    calls = twin_calls(count) if length > 1 else 0
    start = time.perf_counter()
    chosen = _chosen(count, batch_size, calls, gen) if calls else torch.zeros((0, 2), dtype=torch.long)
    originals = torch.stack([batches[int(i)][int(r)] for i, r in chosen]) if calls else None
    cuts = torch.randint(1, max(2, length), (len(chosen),), generator=gen)
    twins: list[torch.Tensor] = []
    if originals is not None:
        on = cuts.to(originals.device)
        later = torch.arange(length, device=originals.device)[None, :] >= on[:, None]
        twins = list(torch.where(later, _tails(text, originals, on, gen), originals).split(batch_size))
    order = torch.randperm(count + len(twins), generator=gen).tolist()
    probe_s = time.perf_counter() - start
    of_batch: dict[int, list[int]] = {}
    for j, (i, _) in enumerate(chosen.tolist()):
        of_batch.setdefault(i, []).append(j)
    first: dict[int, torch.Tensor] = {}  # a twin pair's logits, whichever came first
    found: list[torch.Tensor] = []
    for index in order:
        tick = time.perf_counter()
        x = (batches[index] if index < count else twins[index - count]).clone(memory_format=torch.contiguous_format)
        logits = logits_of(x)
        checked(x, logits)
        if index < count:
            pairs = [(j, int(chosen[j, 1])) for j in of_batch.get(index, [])]
            graded(index, logits)
        else:
            pairs = [(j, j % batch_size) for j in range((index - count) * batch_size, (index - count + 1) * batch_size)]
            # (j % batch_size is twin j's window's row: _chosen)
            probe_s += time.perf_counter() - tick
        tick = time.perf_counter()
        ready = [(j, row) for j, row in pairs if j in first]
        for j, row in pairs:
            if j not in first:
                first[j] = logits[row].detach().clone()
        if ready:
            now = torch.stack([logits[row] for _, row in ready])
            then = torch.stack([first.pop(j) for j, _ in ready])
            found.append(_moved(now, then, cuts[[j for j, _ in ready]].to(now.device)))
        probe_s += time.perf_counter() - tick
    tick = time.perf_counter()
    worst = float(torch.stack(found).max()) if found else 0.0
    probe_s += time.perf_counter() - tick
    return Probe(worst if worst == worst else float("inf"), tolerance, len(chosen), int(cuts.sum()), probe_s)
