"""Layer 3, the JSON Schema (draft 2020-12, suite/schema/) and the schema version.

The schema is checked by whichever library this machine has (:mod:`suite.schema.checker`):
jsonschema lists every error (at most :data:`MAX_PROBLEMS`: the work is bounded by what is
shown), fastjsonschema alone gives the first; with neither, the document gets one problem,
``schema-unchecked``, and is never said to pass."""
from __future__ import annotations

import copy
from typing import Any

from suite.record.limits import MAX_PROBLEMS
from suite.record.results import SCHEMA_VERSION
from suite.record.text import field_path, safe
from suite.schema import results_schema
from suite.schema.checker import UNCHECKED, SchemaCheck
from suite.validate.registry import Problem, code

code("schema-version", "schema_version other than the one this suite reads")
code("schema", "the JSON Schema is not met")
code("schema-unchecked", "the JSON Schema could not be checked here (neither jsonschema nor fastjsonschema "
                         "is installed): validate again where one is")


def _prepared() -> dict:
    """The results schema as checked: every local ``#/$defs/x`` reference inlined (none is
    recursive), and ``step_times_s`` items left to the frame rule
    :func:`suite.validate.run_rules._check_step_time_values` (the same rule, two orders of
    magnitude faster)."""
    schema = copy.deepcopy(results_schema(SCHEMA_VERSION))
    schema["$defs"]["run"]["properties"]["step_times_s"].pop("items")
    return _inline_refs(schema, schema["$defs"])


CHECK = SchemaCheck(_prepared)


def _inline_refs(node: Any, defs: dict) -> Any:
    """The schema with every local ``#/$defs/x`` reference replaced by its target."""
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        if ref.startswith("#/$defs/") and len(node) == 1:
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


NOT_RESULTS = "not a goodbench results file"
"""What the first problem of a document that is no results file at all says (no object, no
``schema_version``): a caller adds no "not a valid results file" to it."""


def schema_problems(doc: Any) -> list[Problem]:
    """The schema version, then the errors of the JSON Schema (but ``step_times_s`` items): at
    most :data:`MAX_PROBLEMS` + 1, in document order; ``schema-unchecked`` where no library can
    check it."""
    if not isinstance(doc, dict):  # a list, a string: not a results file at all (not a schema error to read)
        return [Problem("schema", "", f"not a JSON object but {_kind(doc)}: {NOT_RESULTS}")]
    if "schema_version" not in doc:  # the projection `project` writes, a config file, {}
        return [Problem("schema-version", "schema_version", f"no schema_version: {NOT_RESULTS} "
                        "(goodbench run and run-own write one)")]
    if doc.get("schema_version") != SCHEMA_VERSION:
        return [Problem("schema-version", "schema_version",
                        f"unsupported schema version {safe(repr(doc.get('schema_version')))} "
                        f"(this suite reads {SCHEMA_VERSION})")]
    errors = CHECK.errors(doc, MAX_PROBLEMS + 1)
    if errors is None:
        return [Problem("schema-unchecked", "", UNCHECKED)]
    return [Problem("schema", field_path(e.path), safe(e.message, 200)) for e in errors]


def _kind(value: Any) -> str:
    """What a JSON value is, in a word: "an array", "a string", "a number", "true", "null"."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    return "a number"
