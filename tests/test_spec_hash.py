"""Spec hashes: pinned literally, so any change to a pinned value fails here until re-pinned
(with a version bump of the workload); and every pinned value really is covered by the hash.

The per-step figures a stored file is checked against (samples, tokens and FLOPs per step) and
the eval samples are code, outside the hash: they are pinned here too, so that a change to a FLOP
model, which makes every stored result of that workload fail ``pinned-value``, is never silent
(docs/workloads.md, "Changing a pinned figure")."""
from __future__ import annotations

import copy
import dataclasses

import pytest

from workloads import registry
from workloads.base import Target
from workloads.pinned import SCALES

# Changing one of these needs a version bump of that workload, and results of the old version
# no longer validate against the new spec.
PINNED = {
    ("lm-char", "smoke"): "6407264f9a02d5d8e8e8ad0d45f5cb520fd46465cc4d58c28067759b9ea8ddb5",
    ("lm-char", "full"): "82edcb554878abba276359e0ba406ac0197009394f4079e240699edaf8a5e1ba",
    ("gpt2-124m", "smoke"): "25308034fcfbd9b106c0767f5d0538f79120d560a79e66d8f0a49be203aec63d",
    ("gpt2-124m", "full"): "eed8914f23da9f39ba479c15260a5fbbaad029c142ba89a9b8883ce0e2144d02",
    ("fashion-cnn", "smoke"): "43b38985d18f8de1a7f058c48b6a3b0d005d8541a5695d9af1ebebb5e5de64ad",
    ("fashion-cnn", "full"): "153cafd46dbf3be5e435cd2d0894e0a4cb501009b2629fdd91dc1a6871241161",
    ("llama-1b", "smoke"): "9f40f8693a965cfe333faeca9b0c536aa74215890e9fa36aa381628bff0da2c7",
    ("llama-1b", "full"): "71c0f05429b1dfcfae3782925c06b063c039db117cded7cd93fe7a4c8add54a5",
    ("dlrm-small", "smoke"): "f3621046fac04a034a1873afdb204bb273845fa5676bf23a560cc8fd635c1e0c",
    ("dlrm-small", "full"): "88f577a5168edd4d27064e0419dc971d078d72cd49c94a2a4af353e1a7717a98",
}

# (flops_per_step, samples_per_step, tokens_per_step, eval_samples) of each variant
FIGURES = {
    ("lm-char", "smoke"): (5344591872, 32, 2048, 256),
    ("lm-char", "full"): (1162585571328, 64, 16384, 12800),
    ("gpt2-124m", "smoke"): (3023831040, 16, 1024, 64),
    ("gpt2-124m", "full"): (14004554563584, 16, 16384, 320),
    ("fashion-cnn", "smoke"): (1755881472, 64, None, 2000),
    ("fashion-cnn", "full"): (111330066432, 256, None, 10000),
    ("llama-1b", "smoke"): (3023831040, 16, 1024, 64),
    ("llama-1b", "full"): (67339819155456, 4, 8192, 40),
    ("dlrm-small", "smoke"): (13148160, 256, None, 32768),
    ("dlrm-small", "full"): (11403264000, 8192, None, 1048576),
}
FIGURE_NAMES = ("flops_per_step", "samples_per_step", "tokens_per_step", "eval_samples")

CASES = [(w, s) for w in registry.WORKLOADS for s in SCALES]


def figures(workload_id: str, scale: str) -> tuple:
    """The per-step figures and eval samples today's code gives one variant."""
    workload = registry.get(workload_id)
    spec = workload.spec(scale)
    return (workload.flops_per_step(spec), workload.samples_per_step(spec), workload.tokens_per_step(spec),
            workload.eval_samples(spec))


def test_every_variant_is_pinned():
    missing = {case: registry.get(case[0]).spec_hash(case[1]) for case in CASES if case not in PINNED}
    assert not missing, "pin these in PINNED: " + ", ".join(f"{k}: {v!r}" for k, v in missing.items())
    assert set(PINNED) == set(CASES), f"no such variant: {sorted(set(PINNED) - set(CASES))}"
    missing_figures = {case: figures(*case) for case in CASES if case not in FIGURES}
    assert not missing_figures, "pin these in FIGURES: " + ", ".join(f"{k}: {v!r}" for k, v in missing_figures.items())
    assert set(FIGURES) == set(CASES), f"no such variant: {sorted(set(FIGURES) - set(CASES))}"


@pytest.mark.parametrize("workload_id,scale", CASES)
def test_spec_hash_is_pinned(workload_id, scale):
    digest = registry.get(workload_id).spec_hash(scale)
    assert (workload_id, scale) in PINNED, f"not pinned: add ({workload_id!r}, {scale!r}): {digest!r} to PINNED"
    assert digest == PINNED[workload_id, scale]


@pytest.mark.parametrize("workload_id,scale", CASES)
def test_per_step_figures_are_pinned(workload_id, scale):
    """A changed figure refuses every stored result of the workload [pinned-value]: it needs a version
    bump, said in the failure."""
    now = figures(workload_id, scale)
    assert (workload_id, scale) in FIGURES, f"not pinned: add ({workload_id!r}, {scale!r}): {now!r} to FIGURES"
    changed = [f"{name} {before!r} -> {after!r}" for name, before, after in zip(FIGURE_NAMES, FIGURES[workload_id, scale], now)
               if before != after]
    assert not changed, (
        f"{workload_id} {scale}: {'; '.join(changed)}. Every stored result of {workload_id} records the old "
        "figure and will be refused [pinned-value] (dropped from the leaderboard). If the change is meant, bump "
        f"{workload_id}'s version, re-pin its hashes and these figures, and say so in docs/rules.md "
        "(docs/workloads.md, 'Changing a pinned figure')")


def _perturbed(value):
    """A different value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return value + (value[-1] if value else 1,)
    if isinstance(value, Target):
        return dataclasses.replace(value, value=value.value + 0.01)
    if value is None:
        return Target("x", "min", 1.0)
    raise TypeError(f"no perturbation for {value!r}")


def _with_spec(workload, scale, spec):
    clone = copy.copy(workload)
    clone.variants = {**workload.variants, scale: spec}
    return clone


@pytest.mark.parametrize("workload_id,scale", CASES)
def test_changing_any_pinned_value_changes_the_hash(workload_id, scale):
    workload = registry.get(workload_id)
    spec = workload.spec(scale)
    base = workload.spec_hash(scale)
    seen = {base}
    for field in dataclasses.fields(spec):
        changed = _with_spec(workload, scale, dataclasses.replace(
            spec, **{field.name: _perturbed(getattr(spec, field.name))}))
        digest = changed.spec_hash(scale)
        assert digest not in seen, f"{workload_id}/{scale}: {field.name} is not covered"
        seen.add(digest)
    bumped = copy.copy(workload)
    bumped.version = workload.version + 1
    assert bumped.spec_hash(scale) != base
    other_scale = "full" if scale == "smoke" else "smoke"
    assert workload.spec_hash(other_scale) != base
    if workload.data_files:
        moved = copy.copy(workload)
        moved.data_files = (dataclasses.replace(workload.data_files[0], sha256="0" * 64),
                            *workload.data_files[1:])
        assert moved.spec_hash(scale) != base
