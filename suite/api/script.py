"""A script's own entry point, as goodbench's commands end: an expected failure (a missing
dataset, a refused argument, a refused model) is one line on stderr and exit status 1, never a
traceback; Ctrl-C is status 130. Imports no torch."""
from __future__ import annotations

import sys
from collections.abc import Callable

from suite.record.errors import GoodbenchError


def one_line_errors(main: Callable[[], object]) -> int:
    """Call ``main()``; its exit status: 0 when it returns, 1 with one ``error:`` line on stderr for
    a :class:`~suite.record.errors.GoodbenchError` (what goodbench refuses, and why), 130 on Ctrl-C.
    Use it as ``raise SystemExit(goodbench.one_line_errors(main))``."""
    try:
        main()
    except GoodbenchError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        return 130
    return 0
