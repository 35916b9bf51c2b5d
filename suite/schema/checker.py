"""Checking a document against a JSON Schema with whichever library this machine has.

Two libraries can do it, and a machine may have both, one or neither (the GPU image has neither:
docs/measurement.md, "The GPU machine as it is"):

- **jsonschema** lists every error (draft 2020-12), what ``goodbench validate`` shows;
- **fastjsonschema** compiles the schema into a yes/no check that passes the common, valid
  document fast; where jsonschema is missing, its first error is the one error reported.

With neither, :meth:`SchemaCheck.errors` returns None: the caller says the schema was not
checked, and never that the document passed. The libraries are imported on first use, so that
importing goodbench never needs them.
"""
from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from suite.record import dependencies

JSONSCHEMA, FASTJSONSCHEMA = "jsonschema", "fastjsonschema"


def engine() -> str | None:
    """The library that reports schema errors here: jsonschema (every error), fastjsonschema
    (the first error), or None (the schema cannot be checked)."""
    installed = dependencies.installed
    return JSONSCHEMA if installed(JSONSCHEMA) else FASTJSONSCHEMA if installed(FASTJSONSCHEMA) else None


UNCHECKED = ("the JSON Schema could not be checked here: neither jsonschema nor fastjsonschema is "
             "installed (`goodbench info` lists what is missing)")
"""What a caller says of a document whose schema no library could check."""


@dataclass(frozen=True)
class SchemaError:
    """One place where a document breaks the schema: the path of keys and indexes, and why."""

    path: tuple[str | int, ...]
    message: str


class SchemaCheck:
    """A schema, checked by :func:`engine`'s library. ``prepare`` turns the schema into the one
    the libraries compile (a copy: inlined references, items left to faster code)."""

    def __init__(self, schema: Callable[[], dict]):
        self._schema = schema

    @functools.cached_property
    def _jsonschema(self):
        import jsonschema

        return jsonschema.Draft202012Validator(self._schema())

    @functools.cached_property
    def _compiled(self) -> Callable[[Any], Any]:
        """The fastjsonschema check; every keyword goodbench's schemas use means the same in its
        draft 7 as in 2020-12, and their references are inlined (no ``$defs`` left)."""
        import fastjsonschema

        schema = {k: v for k, v in self._schema().items() if k not in ("$schema", "$defs")}
        return fastjsonschema.compile(schema)

    def passes(self, doc: Any) -> bool:
        """True when the compiled check passes ``doc``; False when it does not, or cannot run here."""
        if not dependencies.installed(FASTJSONSCHEMA):
            return False
        try:
            self._compiled(doc)
            return True
        except Exception:  # any failure: let the error-listing path speak
            return False

    def errors(self, doc: Any, limit: int) -> list[SchemaError] | None:
        """At most ``limit`` errors of ``doc`` in document order (jsonschema: every error up to
        ``limit``, the work bounded by it; fastjsonschema alone: its first error); [] when valid;
        None when no library can check it here."""
        if self.passes(doc):
            return []
        which = engine()
        if which == JSONSCHEMA:
            found = itertools.islice(self._jsonschema.iter_errors(doc), limit)
            return sorted((SchemaError(tuple(e.absolute_path), e.message) for e in found),
                          key=lambda e: list(map(str, e.path)))
        if which == FASTJSONSCHEMA:
            return self._first_error(doc)
        return None

    def _first_error(self, doc: Any) -> list[SchemaError]:
        import fastjsonschema

        try:
            self._compiled(doc)
        except fastjsonschema.JsonSchemaValueException as exc:
            # its path starts at "data" and gives indexes as digit strings; its message at the name
            path = tuple(int(p) if isinstance(p, str) and p.isdigit() else p for p in (exc.path or [])[1:])
            message = exc.message.removeprefix(f"{exc.name} ") if exc.name else exc.message
            return [SchemaError(path, f"{message} (the first error only: jsonschema, which lists "
                                      "every error, is not installed)")]
        except Exception as exc:  # a document the compiled code cannot even walk
            return [SchemaError((), f"not checkable: {type(exc).__name__}")]
        return []

