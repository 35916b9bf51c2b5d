"""Pinned synthetic token data for the throughput language-model workloads (no download).

Tokens come from a fixed random first-order Markov chain over ``vocab_size`` tokens: every
token has ``branching`` successors drawn once from a generator seeded with ``seed``, and the
next token is one of them, uniformly. A model can learn it, so the loss really falls from
ln(vocab_size) towards the chain's entropy, at most ln(branching) nats per token. Streams are
drawn on the CPU and stepped on the device, so every device holds the same tokens.
:func:`synthetic_lm_job` builds the run that the synthetic-token workloads share (their jobs:
workloads/gpt2/job.py, workloads/llama/job.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from workloads.lm.job import LanguageModelJob
from workloads.lm.spec import SyntheticLMSpec
from workloads.parallel import SINGLE, Parallel

# Streams are generated as chains of this many tokens stepped side by side, then laid end to
# end: one token in 4096 is a fresh uniform start rather than a successor.
_CHAIN_LENGTH = 4096


@dataclass(frozen=True)
class MarkovSource:
    """A pinned random Markov chain over ``vocab_size`` tokens with ``branching`` successors each."""

    vocab_size: int
    branching: int
    seed: int

    def successors(self) -> torch.Tensor:
        """The (vocab_size, branching) successor table, identical for a given source."""
        gen = torch.Generator(device="cpu").manual_seed(self.seed)
        return torch.randint(self.vocab_size, (self.vocab_size, self.branching), generator=gen)

    def stream(self, n_tokens: int, stream_seed: int,
               device: torch.device | str = "cpu") -> torch.Tensor:
        """``n_tokens`` int64 tokens of the chain on ``device``, pinned by ``stream_seed``.

        The random draws are made on the CPU and the chain is stepped on ``device``: the
        stepping is exact integer indexing, so every device yields the same tokens.
        """
        gen = torch.Generator(device="cpu").manual_seed(self.seed * 1_000_003 + stream_seed)
        length = min(_CHAIN_LENGTH, n_tokens)
        chains = -(-n_tokens // length)
        choice = torch.randint(self.branching, (length, chains), generator=gen, dtype=torch.uint8)
        start = torch.randint(self.vocab_size, (chains,), generator=gen)
        table = self.successors().to(device)
        choice = choice.to(device)
        out = torch.empty(length, chains, dtype=torch.long, device=device)
        out[0] = start.to(device)
        for i in range(1, length):
            out[i] = table[out[i - 1], choice[i].long()]
        return out.t().reshape(-1)[:n_tokens].contiguous()


def source(spec: SyntheticLMSpec) -> MarkovSource:
    """The pinned Markov chain a spec's tokens come from."""
    return MarkovSource(spec.vocab_size, spec.branching, spec.data_seed)


def synthetic_lm_job(spec: SyntheticLMSpec, model: nn.Module, *, device: torch.device, seed: int,
                     precision: str, parallel: Parallel = SINGLE,
                     compile: str = "off") -> LanguageModelJob:
    """A language-model run on the spec's pinned train (stream seed 0) and held-out (1) tokens."""
    chain = source(spec)
    return LanguageModelJob(spec, model, chain.stream(spec.train_tokens, stream_seed=0, device=device),
                            chain.stream(spec.val_tokens, stream_seed=1, device=device),
                            device=device, seed=seed, precision=precision, parallel=parallel,
                            compile=compile)
