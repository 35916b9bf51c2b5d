"""Layer 2, one generic walk of the whole document: nesting depth, array and object sizes, string
lengths, control characters, non-finite or out-of-range numbers. Iterative, never recursive."""
from __future__ import annotations

import gc
import math
from collections.abc import Iterable
from typing import Any

from suite.record.limits import (
    MAX_ARRAY_ITEMS,
    MAX_DEPTH,
    MAX_INT,
    MAX_KEY_CHARS,
    MAX_OBJECT_KEYS,
    MAX_PROBLEMS,
    MAX_STRING_CHARS,
)
from suite.record.text import CONTROL_CHARS, field_path, has_control_chars
from suite.validate.registry import Problem, code
from suite.validate.shared import V7

# too-deep, non-finite and number-too-large are registered with the bytes layer (suite.record.reading)
code("too-many-items", "an array or object over the size limit")
code("too-long-string", "a string or key over the length limit")
code("control-char", "a control, bidi-override, zero-width or surrogate character in a string")
code("invisible-char", "a format, private-use, unassigned, separator, non-ASCII space or invisible filler "
                       "character in a string (suite/record/text.py)", since=V7)
code("not-json-type", "a value that JSON cannot hold")


def walk(doc: Any) -> list[Problem]:
    """One pass over every value: depth, sizes, strings, numbers. Iterative, never recursive.

    The cyclic garbage collector is paused meanwhile: the walk makes no cycle, but each path it
    keeps is a new container, and the collector would traverse the whole document again and
    again (a 400 KB file of 99,999 empty objects: 0.04 s without it, up to 2.6 s with it)."""
    if not isinstance(doc, (dict, list)):  # a bare value: check it as the only item of a list
        return [Problem(p.code, p.field.removeprefix("[0]"), p.reason) for p in walk([doc])]
    paused = gc.isenabled()
    gc.disable()
    try:
        return _walk(doc)
    finally:
        if paused:
            gc.enable()


def _walk(doc: dict | list) -> list[Problem]:
    problems: list[Problem] = []
    stack: list[tuple[Any, tuple]] = [(doc, ())]
    while stack and len(problems) <= MAX_PROBLEMS:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            problems.append(Problem("too-deep", field_path(path), f"nesting deeper than {MAX_DEPTH} levels"))
            continue
        if isinstance(node, dict):
            if len(node) > MAX_OBJECT_KEYS:
                problems.append(Problem("too-many-items", field_path(path), f"{len(node)} keys, over {MAX_OBJECT_KEYS}"))
                continue
            items: Iterable[tuple[Any, Any]] = node.items()
        else:
            if len(node) > MAX_ARRAY_ITEMS:
                problems.append(Problem("too-many-items", field_path(path), f"{len(node)} items, over {MAX_ARRAY_ITEMS}"))
                continue
            if len(node) > 16 and _numbers_ok(node):
                continue  # the common case (step times): all finite numbers in range, checked in C
            items = enumerate(node)
        for key, value in items:
            if type(key) is str:
                _check_string(key, MAX_KEY_CHARS, path, problems, "key")
            elif not isinstance(key, int):
                problems.append(Problem("not-json-type", field_path(path), f"a {type(key).__name__} key"))
                continue
            kind = type(value)
            if kind is float:
                if not math.isfinite(value):
                    problems.append(Problem("non-finite", field_path(path + (key,)), f"{value} is not a finite number"))
            elif kind is str:
                _check_string(value, MAX_STRING_CHARS, path + (key,), problems, "string")
            elif kind is int:
                if not -MAX_INT <= value <= MAX_INT:
                    problems.append(Problem("number-too-large", field_path(path + (key,)), "an integer beyond 2^63"))
            elif kind is dict or kind is list:
                stack.append((value, path + (key,)))
            elif value is not None and kind is not bool:
                problems.append(Problem("not-json-type", field_path(path + (key,)), f"a {kind.__name__} value"))
    return problems


def _numbers_ok(values: list) -> bool:
    """True when every item is a finite number (or bool) within the integer range."""
    kinds = set(map(type, values))
    if not kinds <= {float, int, bool}:
        return False
    if float in kinds and not all(map(math.isfinite, values)):
        return False
    return int not in kinds or (max(values) <= MAX_INT and min(values) >= -MAX_INT)


def _check_string(text: str, limit: int, path: tuple, problems: list[Problem], what: str) -> None:
    if len(text) > limit:
        problems.append(Problem("too-long-string", field_path(path), f"a {what} of {len(text)} characters, over {limit}"))
    if CONTROL_CHARS.search(text):
        problems.append(Problem("control-char", field_path(path), f"a {what} holds a control or invisible character"))
    elif has_control_chars(text):
        problems.append(Problem("invisible-char", field_path(path),
                                f"a {what} holds a format, private-use, unassigned, separator or invisible character"))
