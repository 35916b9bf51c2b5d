"""MLPerf event-log lines read as MLCommons' parser reads them, one at a time, safe on any line.

Each round's parser (``mlp_parser.ruleset_<NNN>``) has its token (``:::MLLOG `` from v0.7 on,
``:::MLL`` in v0.6) and its ``string_to_logline``. A line without the token is not a log line
(shell noise); a line with it is cut to start at its last token — what ``strip_and_dedup``'s
``re.sub(".*" + TOKEN, TOKEN, line)`` does, which also drops rank prefixes such as ``0: `` —
stripped, and parsed. MLCommons' parser turns a ``ValueError`` into a failed line and lets any
other exception out (a missing ``time_ms``: ``KeyError``; 100,000 ``[``: ``RecursionError``),
which stops result_summarizer; here every exception of a line makes it a failed line, which
fails the run's compliance check as a parsing error does, and nothing else.

Most lines of a log carry keys that no compliance rule reads (losses, learning rates, tracked
statistics). For those, a JSON-form line (v0.7 on) is only checked to parse — what
``string_to_logline`` reads: the JSON, then ``time_ms`` as a float and ``key``, ``value`` and
``metadata`` present — and not built into a log line; a line that fails is failed all the same.
"""
from __future__ import annotations

import importlib
import json
from collections.abc import Container, Iterator
from functools import cache
from typing import Any

_MESSAGE_CHARS = 300
_EXCERPT_CHARS = 120


@cache
def _module(ruleset: str):
    """MLCommons' parser module of ``ruleset`` ("5.1.0": ``mlp_parser.ruleset_510``)."""
    return importlib.import_module(
        f"mlperf_logging.compliance_checker.mlp_parser.ruleset_{ruleset.replace('.', '')}")


def one_line(text: object, limit: int = _MESSAGE_CHARS) -> str:
    """``text`` on one line (runs of white space as one space), cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


JSON_TOKEN = ":::MLLOG "
_decode = json.JSONDecoder().decode  # what json.loads(text) does with no arguments


def stream(handle, ruleset: str, failed: list[tuple[str, str]] | None,
           keep: Container[str] | None = None) -> Iterator[Any]:
    """The parsed lines of an open text file, in order, as ``ruleset``'s parser gives them; a
    line that does not parse is appended to ``failed`` as (excerpt, reason) and skipped. Line
    numbers count the token lines, as MLCommons' parser numbers them. With ``keep``, only lines
    of those keys are yielded; the others are still checked to parse (a JSON-form line as
    ``string_to_logline`` reads it: the JSON, ``time_ms`` as a float, ``key``, ``value`` and
    ``metadata`` present)."""
    module = _module(ruleset)
    to_logline, token, make = module.string_to_logline, module.TOKEN, module.LogLine
    fast = token == JSON_TOKEN
    lineno = 0
    for raw in handle:
        at = raw.rfind(token)
        if at < 0:
            continue
        line = raw[at:].strip()
        try:
            if fast:  # string_to_logline of rulesets 0.7.0 on, without parsing the line twice
                m = _decode(line[len(JSON_TOKEN):])
                time_ms = float(m["time_ms"])
                key, value = m["key"], {"value": m["value"], "metadata": m["metadata"]}
                if keep is None or key in keep:
                    yield make(line, time_ms, key, value, lineno)
            else:
                ll = to_logline(lineno, line)
                if keep is None or ll.key in keep:
                    yield ll
        except RecursionError:
            if failed is not None:
                failed.append((line[:_EXCERPT_CHARS], "nested too deeply to parse"))
        except Exception as exc:  # any line MLCommons' parser cannot take
            if failed is not None:
                failed.append((line[:_EXCERPT_CHARS], one_line(f"{type(exc).__name__}: {exc}", 200)))
        lineno += 1
