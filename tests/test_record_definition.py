"""One definition of the results record: the JSON Schema (suite/schema/results-v1.json) is the
source. The typed view (suite/record/results.py) names exactly the schema's fields, and what derive writes
is what the schema defines (docs/results-format.md is held to the schema by tests/test_docs.py)."""
from __future__ import annotations

import pytest

from suite.figures import derive
from suite.record import results
from suite.schema import results_schema
from workloads.base import Target

SCHEMA = results_schema(results.SCHEMA_VERSION)


def _node(*path: str) -> dict:
    """The schema's object at ``path``: "#name" enters $defs, a name a property (through $ref and
    a nullable oneOf)."""
    node = SCHEMA
    for key in path:
        node = SCHEMA["$defs"][key[1:]] if key.startswith("#") else node["properties"][key]
        if "$ref" in node:
            node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        if "oneOf" in node:
            (node,) = [n for n in node["oneOf"] if n.get("type") == "object"]
    return node


def _fields(node: dict) -> set[str]:
    """The fields an object of the schema may hold (a map of named statistics: its required ones)."""
    return set(node.get("properties", {})) or set(node.get("required", ()))


TYPED_VIEW = {
    results.Document: (),
    results.Run: ("#run",),
    results.WorkloadRef: ("#run", "workload"),
    results.Goodput: ("#run", "goodput"),
    results.Metrics: ("#run", "metrics"),
    results.Target: ("#run", "metrics", "target"),
    results.Throughput: ("#run", "metrics", "throughput"),
    results.Window: ("#run", "metrics", "throughput", "window"),
    results.StepTimes: ("#run", "metrics", "throughput", "step_time_s"),
}


@pytest.mark.parametrize("typed, path", TYPED_VIEW.items(), ids=lambda x: getattr(x, "__name__", None))
def test_the_typed_view_names_exactly_the_schemas_fields(typed, path):
    node = _node(*path) if path else SCHEMA
    assert set(typed.__annotations__) == _fields(node)


def test_metrics_is_closed_in_the_schema():
    assert _node("#run", "metrics")["additionalProperties"] is False
    assert _node("#run", "metrics", "target")["additionalProperties"] is False


@pytest.mark.parametrize("target", [None, Target("val_loss", "min", 1.5)], ids=["throughput", "tta"])
def test_derive_writes_only_what_the_schema_defines(target):
    steps = [0.2] * 5 + [0.1] * 30
    curve = [{"step": 25, "time_s": 4.0, "train_loss": 1.7, "val_loss": 1.4}] if target else []
    metrics = derive.metrics(flops_per_step=1e9, samples_per_step=8, tokens_per_step=None,
                             step_times_s=steps, warmup_steps=5, resumed_at=[12], peak_flops=1e12,
                             peak_source="table", ceiling=5e11, target=target, tta_s=4.0 if target else None,
                             curve=curve, energy_method="nvml", energy_status="ok", energy=(50.0, 40.0, 20.0))
    assert set(metrics) <= _fields(_node("#run", "metrics"))
    assert set(metrics["throughput"]) <= _fields(_node("#run", "metrics", "throughput"))
    assert "segments" in metrics["throughput"]["window"]  # a resume cuts the window
    assert set(metrics["throughput"]["window"]) <= _fields(_node("#run", "metrics", "throughput", "window"))
    if target:
        assert set(metrics["target"]) == _fields(_node("#run", "metrics", "target"))
        assert metrics["final_quality"] == {"train_loss": 1.7, "val_loss": 1.4}
