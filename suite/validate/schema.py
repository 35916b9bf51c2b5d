"""Layer 3, the JSON Schema (draft 2020-12, suite/schema/) and the schema version.

A compiled yes/no check (fastjsonschema) passes the common, valid document fast; a document it
does not pass goes through jsonschema, which lists every error."""
from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import jsonschema

from suite.results import SCHEMA_VERSION
from suite.schema import results_schema
from suite.validate.registry import Problem, code
from suite.validate.text import field_path, safe

code("schema-version", "schema_version other than the one this suite reads")
code("schema", "the JSON Schema is not met")


@functools.cache
def _fast_check() -> Callable[[Any], Any] | None:
    """A compiled yes/no schema check (fastjsonschema), or None where it is not installed.

    It decides nothing alone: a document it does not pass goes through :func:`_validator`,
    which lists every error. Every keyword the schema uses means the same in its draft 7.
    """
    try:
        import fastjsonschema
    except ImportError:
        return None
    schema = dict(_validator().schema)
    schema.pop("$schema", None)
    schema.pop("$defs", None)
    return fastjsonschema.compile(schema)


def _schema_passes(doc: Any) -> bool:
    check = _fast_check()
    if check is None:
        return False
    try:
        check(doc)
        return True
    except Exception:  # any failure: let the full validator speak
        return False


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """The schema validator, built once. ``step_times_s`` items are checked by
    :func:`check_step_times` with numpy instead (the same rule, two orders of magnitude faster)."""
    schema = copy.deepcopy(results_schema(SCHEMA_VERSION))
    schema["$defs"]["run"]["properties"]["step_times_s"].pop("items")
    return jsonschema.Draft202012Validator(_inline_refs(schema, schema["$defs"]))


def _inline_refs(node: Any, defs: dict) -> Any:
    """The schema with every local ``#/$defs/x`` reference replaced by its target (none is
    recursive): the same schema, without a reference lookup per instance."""
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        if ref.startswith("#/$defs/") and len(node) == 1:
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def schema_problems(doc: Any) -> list[Problem]:
    """The schema version, then every error of the JSON Schema (but ``step_times_s`` items)."""
    if isinstance(doc, dict) and doc.get("schema_version") != SCHEMA_VERSION:
        return [Problem("schema-version", "schema_version",
                        f"unsupported schema version {safe(repr(doc.get('schema_version')))} "
                        f"(this suite reads {SCHEMA_VERSION})")]
    if _schema_passes(doc):
        return []
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [Problem("schema", field_path(e.absolute_path), safe(e.message, 200)) for e in errors]


def check_step_times(run: dict, where: str) -> list[Problem]:
    """The schema's rule on ``step_times_s`` items: numbers, each positive."""
    times = run["step_times_s"]
    if not set(map(type, times)) <= {int, float}:
        return [Problem("schema", f"{where}.step_times_s", "a step time that is not a number")]
    if times and min(times) <= 0:
        return [Problem("time-order", f"{where}.step_times_s", "a step time that is not positive")]
    return []
