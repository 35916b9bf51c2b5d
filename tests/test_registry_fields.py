"""Fields every registered workload must declare (seed_spread, eval_samples): refused at
registration and at lookup with a one-line message naming the field and the checklist."""
from __future__ import annotations

import copy

import pytest

from suite.figures import reproducibility
from workloads import registry


@pytest.mark.parametrize("workload_id", list(registry.WORKLOADS))
def test_every_registered_workload_declares_seed_spread_and_eval_samples(workload_id):
    workload = registry.WORKLOADS[workload_id]
    assert registry.checked(workload) is workload
    assert workload.seed_spread is not None and workload.seed_spread > 0
    assert all(workload.eval_samples(spec) > 0 for spec in workload.variants.values())


def _without(field: str):
    workload = copy.copy(registry.get("dlrm-small"))
    if field == "seed_spread":
        workload.seed_spread = None  # type: ignore[misc]
    else:
        workload.eval_samples = lambda spec: None  # type: ignore[method-assign]
    return workload


@pytest.mark.parametrize("field", ["seed_spread", "eval_samples"])
def test_a_workload_without_a_required_field_is_refused_naming_it(field, monkeypatch):
    workload = _without(field)
    with pytest.raises(registry.IncompleteWorkload) as caught:
        registry.checked(workload)
    message = str(caught.value)
    assert f"'dlrm-small' declares no {field}" in message and "docs/workloads.md" in message
    assert "\n" not in message
    monkeypatch.setitem(registry.WORKLOADS, "dlrm-small", workload)  # a registry line, bypassing the check
    with pytest.raises(registry.IncompleteWorkload, match=field):
        registry.get("dlrm-small")


def test_a_bound_never_credits_a_spread_to_a_workload_that_measured_none():
    """An id the suite does not know is bound by the suite's largest spread, said as such."""
    basis = reproducibility.measured("no-such-workload", "cpu", None, "probe").basis
    largest = max(reproducibility.SEED_SPREAD, key=reproducibility.SEED_SPREAD.get)
    assert f"the suite's largest seed-to-seed spread ({largest}'s" in basis
    assert "not measured for no-such-workload" in basis
    own = reproducibility.measured("gpt2-124m", "cpu", None, "probe").basis
    assert "gpt2-124m's seed-to-seed spread (0.0078)" in own


@pytest.mark.parametrize("sha256,size", [("", 1), ("A" * 64, 1), ("a" * 63, 1), ("g" * 64, 1), ("a" * 64, 0)])
def test_a_malformed_data_pin_is_refused_naming_the_workload_and_field(sha256, size):
    """An empty, upper-case or short sha256 (or no size) is the pin's fault, not the data copy's."""
    import dataclasses

    workload = copy.copy(registry.get("fashion-cnn"))
    first = dataclasses.replace(workload.data_files[0], sha256=sha256, size=size)
    workload.data_files = (first, *workload.data_files[1:])  # type: ignore[misc]
    field = "sha256" if size else "size"
    with pytest.raises(registry.IncompleteWorkload,
                       match=f"workload 'fashion-cnn' data file {first.name}: {field} .* is not"):
        registry.checked(workload)


def test_a_key_error_inside_the_check_is_not_an_unknown_workload(monkeypatch):
    """The lookup comes first and the check after it, outside its ``except KeyError``: a KeyError
    the check raises is the check's own error, never "unknown workload"."""
    workload = copy.copy(registry.get("dlrm-small"))
    monkeypatch.setitem(registry.WORKLOADS, "dlrm-small", workload)  # a registry line, not checked yet

    def broken(w):
        raise KeyError("a key the check needed")

    monkeypatch.setattr(registry, "checked", broken)
    with pytest.raises(KeyError) as caught:
        registry.get("dlrm-small")
    assert not isinstance(caught.value, registry.UnknownWorkload) and "a key the check needed" in str(caught.value)
    for unknown in ("no-such-workload", ["dlrm-small"], {"id": "dlrm-small"}):
        with pytest.raises(registry.UnknownWorkload, match="unknown workload"):
            registry.get(unknown)  # type: ignore[arg-type]


def test_each_workload_is_checked_once_not_at_every_lookup(monkeypatch):
    calls: list[str] = []
    real = registry.checked
    monkeypatch.setattr(registry, "checked", lambda w: calls.append(w.id) or real(w))
    for _ in range(3):
        for workload_id in registry.WORKLOADS:
            registry.get(workload_id)
    assert calls == []  # each was checked at registration
    workload = copy.copy(registry.get("dlrm-small"))
    monkeypatch.setitem(registry.WORKLOADS, "dlrm-small", workload)
    for _ in range(3):
        assert registry.get("dlrm-small") is workload
    assert calls == ["dlrm-small"]  # a line put in without the check: checked at its first lookup only
