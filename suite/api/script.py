"""A script's own entry point, as goodbench's commands end: an expected failure (a missing
dataset, a refused argument, a refused model) is one line on stderr and exit status 1, never a
traceback; Ctrl-C is status 130. Imports no torch.

A script that does not wrap its ``main`` gets the one line too: a :class:`~goodbench.Benchmark`,
when built, puts :func:`refusals_in_one_line` before the interpreter's exception hook, which
shortens goodbench's own refusals only and hands every other exception to the hook it found.
A refusal is that one line only, never handed on (docs/own-code.md): a crash reporter's hook sees
none, as a script that reports refusals catches them itself."""
from __future__ import annotations

import sys
from collections.abc import Callable

from suite.record.errors import GoodbenchError


def refusals_in_one_line() -> None:
    """Make ``sys.excepthook`` end the script in one ``error:`` line (status 1, as Python exits on
    any uncaught exception) for an uncaught :class:`~suite.record.errors.GoodbenchError`, not
    handed on, and pass any other exception to the hook in place before (its traceback as ever). Once per process:
    a second call, or one after a hook of its own was chained, changes nothing."""
    previous = sys.excepthook
    if getattr(previous, _OURS, False):
        return

    def hook(kind, exc, tb):
        if isinstance(exc, GoodbenchError):
            print(f"error: {exc}", file=sys.stderr, flush=True)
        else:
            previous(kind, exc, tb)

    setattr(hook, _OURS, True)
    sys.excepthook = hook


_OURS = "goodbench_refusals_in_one_line"  # marks the hook this module chained


def one_line_errors(main: Callable[[], object]) -> int:
    """Call ``main()``; its exit status: 0 when it returns, 1 with one ``error:`` line on stderr for
    a :class:`~suite.record.errors.GoodbenchError` (what goodbench refuses, and why) or a
    :class:`~suite.run.loop.LossNotFinite` (the loss went NaN: the run is written as failed), 130 on Ctrl-C.
    Use it as ``raise SystemExit(goodbench.one_line_errors(main))``."""
    try:
        main()
    except GoodbenchError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    except RuntimeError as exc:  # a loss gone NaN (its run written as failed): one line too; torch is not imported here
        loop = sys.modules.get("suite.run.loop")  # loaded wherever one was raised
        if loop is None or not isinstance(exc, loop.LossNotFinite):
            raise
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr, flush=True)
        return 130
    return 0
