"""One speedrun training log → its figures: the validations, the last step and train_time, the
GPUs of its nvidia-smi table, the software versions, the peak memory and the embedded source;
every text taken from the log has its control characters written as ``\\uXXXX``
(:func:`~suite.record.text.printable`), as a stored document holds none.

Formats of the history: modded-nanogpt's ``step:N/M val_loss:… train_time:…ms step_avg:…ms``
lines (``train_time`` in ms, or in s in some later logs), and llm.c's ``s:N trl:…`` / ``s:N tel:…``
lines, which hold the loss and no time at all.
"""
from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterator

from suite.record.text import printable
from suite.speedrun import flops, throughput

SEPARATOR = b"=" * 100  # a modded-nanogpt log prints its source, then this line
# Every pattern runs in time linear in the log (a hostile log is up to 64 MiB): no ``\s`` that
# spans lines under MULTILINE, no unbounded ``.*`` between two parts that can both repeat.
_STEP = re.compile(rb"^step:(\d+)/(\d+) ([^\n]*)$", re.MULTILINE)
_VAL = re.compile(rb"step:(\d+)/(\d+)[ \t]{1,8}val_loss[ \t]{0,8}:[ \t]{0,8}(\S{1,64})"
                  rb"(?:[^\n]{0,200}?train_time[ \t]{0,8}:[ \t]{0,8}([0-9.]+)(ms|s)\b)?")
_VAL_LIKE = re.compile(rb"val[ _\t-]{0,8}loss", re.IGNORECASE)  # a line that looks like a validation
_TIME = re.compile(rb"train_time:([0-9.]+)(ms|s)\b")
_AVG = re.compile(rb"step_avg:(\S{1,64}?)ms")
_LLMC_VAL = re.compile(rb"^s:(\d+) tel:(\S+)", re.MULTILINE)
_LLMC_STEP = re.compile(rb"^s:(\d+) ", re.MULTILINE)
_TORCH = re.compile(rb"^Running [Pp]y[Tt]orch (\S+)(?: compiled for CUDA (\S+))?", re.MULTILINE)
_TRITON = re.compile(rb"^Running Triton version (\S+)", re.MULTILINE)
_PYTHON = re.compile(rb"^Running [Pp]ython (\S+)", re.MULTILINE)
_GPU = re.compile(rb"^\|[ \t]+(\d{1,4})[ \t]+(NVIDIA [^|\n]{0,120}?)[ \t]+(?:On|Off)[ \t]+\|", re.MULTILINE)
_PEAK = re.compile(rb"^peak memory (?:allocated|consumption): (\d+) MiB", re.MULTILINE)
TAIL_BYTES = 1 << 16  # the last step line is looked for here first
HEADER_BYTES = 1 << 16  # the versions and nvidia-smi table follow the source within this
SOURCE_CHARS = 1 << 18  # the source's patterns are searched in its first 256 KiB (the history's largest: about 100 kB)
MAX_STEP = 10 ** 9  # a step number beyond this is no run of the history (its longest: about 10^4 steps)
MAX_SECONDS = 10 ** 7  # a train_time beyond this (about 116 days) is no run of the history
MAX_FIGURE = 10 ** 9  # a loss, step_avg or memory figure beyond this is not read as one


UNREAD_NOTE = "their losses are not counted"


class BadNumber(ValueError):
    """A number of a log that is not one (``1.2.3``, ``.``, non-finite, beyond its bound): the
    log is not read, one line says why."""


def _int(raw: bytes, bound: int = MAX_STEP) -> int:
    if len(raw) > len(str(bound)) or int(raw) > bound:
        raise BadNumber(f"a number beyond {bound:,} ({raw[:20].decode('ascii', 'replace')}…)")
    return int(raw)


def _validations(data: bytes) -> tuple[list[list], int]:
    """Each ``step:N/M val_loss:X`` line, with or without its ``train_time:`` (spacing around the
    colons tolerated): [step, val_loss, train_time in s or ``None``]; and the number of lines
    opening with ``step:`` that look like one (``val_loss``, ``val loss``, any case) and were not
    read. The lines are found by ``loss`` (rare) rather than by ``step:`` (every step)."""
    found = []
    unread = 0
    at = data.find(b"loss")
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        m = _VAL.match(data, start, end)
        if m:
            seconds = None if m.group(4) is None else round(_seconds(m.group(4), m.group(5)), 3)
            found.append([_int(m.group(1)), _number(m.group(3)), seconds])
        elif data.startswith(b"step:", start) and _VAL_LIKE.search(data, start, end):
            unread += 1
        at = data.find(b"loss", end)
    return found, unread


def _number(raw: bytes) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and abs(value) <= MAX_FIGURE else None


def _seconds(value: bytes, unit: bytes) -> float:
    """A train_time in seconds; :class:`BadNumber` for one that is not a number or beyond
    :data:`MAX_SECONDS`."""
    try:
        seconds = float(value) / 1000.0 if unit == b"ms" else float(value)
    except ValueError:
        raise BadNumber(f"a train_time that is not a number ({value[:20].decode('ascii', 'replace')})") from None
    if not 0 <= seconds <= MAX_SECONDS:
        raise BadNumber(f"a train_time beyond {MAX_SECONDS:,} s")
    return seconds


def _step_lines_back(data: bytes) -> Iterator[re.Match]:
    """The ``step:N/M …`` lines, last first, looked for from the end (a search for the text, not
    a walk over every line; each line is looked at once)."""
    end = len(data)
    while end > 0:
        at = data.rfind(b"\nstep:", 0, end)
        start = at + 1 if at >= 0 else 0
        if at < 0 and not data.startswith(b"step:"):
            return
        stop = data.find(b"\n", start)
        stop = len(data) if stop < 0 else stop
        m = _STEP.match(data, start, stop)
        if m:
            yield m
        if start == 0:
            return
        end = at


def _last_step_line(data: bytes) -> re.Match | None:
    """The last ``step:N/M …`` line."""
    return next(_step_lines_back(data), None)


def _last_timed_line(data: bytes) -> tuple[re.Match, re.Match, int] | None:
    """The last ``step:N/M …`` line with a ``train_time:``, that time's match and the number of
    step lines after it (none in the history), or ``None``."""
    for after, line in enumerate(_step_lines_back(data)):
        time = _TIME.search(line.group(3))
        if time:
            return line, time, after
    return None


def _gpus(data: bytes) -> tuple[str | None, int | None]:
    rows: dict[int, str] = {}
    for m in _GPU.finditer(data):
        rows.setdefault(_int(m.group(1)), printable(m.group(2).decode("ascii", "replace").strip()))
    if not rows:
        return None, None
    name = Counter(rows.values()).most_common(1)[0][0]
    return name, len(rows)


def _first(pattern: re.Pattern, data: bytes, group: int = 1) -> str | None:
    m = pattern.search(data)
    if m is None or m.group(group) is None:
        return None
    return printable(m.group(group).decode("ascii", "replace"))


def source_span(data: bytes) -> tuple[int, int]:
    """(start, end) of the embedded source: before the first separator line, or between the first
    two when the log opens with one (the logs of 2024); (0, -1) when there is no separator."""
    if data.startswith(SEPARATOR):
        start = data.find(b"\n") + 1
        return start, data.find(SEPARATOR, start)
    return 0, data.find(SEPARATOR)


def parse_log(data: bytes) -> dict:
    """The figures of one log (bytes as read): ``format`` is ``modded-nanogpt``, ``llm.c`` or
    ``none`` (no line of a known form); a figure the log does not show is ``None``, and
    ``notes`` says why in words. :class:`BadNumber` where a number is not one or beyond its
    bound (the log is then not read)."""
    notes: list[str] = []
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        notes.append("not UTF-8: read as bytes, its text shown with replacement characters")
    validations, unread = _validations(data)
    if unread:
        notes.append(f"{unread} validation-looking step line(s) not read: {UNREAD_NOTE}")
    last = _last_step_line(data)
    run: dict = {"format": "none", "planned_step": None, "final_step": None, "validations": validations,
                 "train_time_s": None, "untimed_step_lines": None, "step_avg_ms": None, "reached_planned_step": None}
    if last is not None:
        run["format"] = "modded-nanogpt"
        run["final_step"], run["planned_step"] = _int(last.group(1)), _int(last.group(2))
        run["reached_planned_step"] = run["final_step"] >= run["planned_step"]
        timed = _last_timed_line(data)
        if timed:
            line, time, after = timed
            run["train_time_s"] = round(_seconds(time.group(1), time.group(2)), 3)
            run["untimed_step_lines"] = after
            avg = _AVG.search(line.group(3))
            if avg:
                run["step_avg_ms"] = _number(avg.group(1))
            if after:
                notes.append(f"its last {after} step line(s) have no train_time: the time and step_avg are those of "
                             f"step {_int(line.group(1))}, the last line that has one")
    else:
        llmc_vals = [[_int(m.group(1)), _number(m.group(2)), None] for m in _LLMC_VAL.finditer(data)]
        if llmc_vals:
            run["format"] = "llm.c"
            run["validations"] = llmc_vals
            steps = [_int(m.group(1)) for m in _LLMC_STEP.finditer(data, max(0, len(data) - TAIL_BYTES))]
            run["final_step"] = max(steps) if steps else llmc_vals[-1][0]
            notes.append("llm.c log: its s:/trl:/tel: lines hold no time, so no train_time is in the log")
        else:
            notes.append("no training line of a known form (step:N/M … or llm.c's s:N tel:…)")
    run["val_loss"] = run["validations"][-1][1] if run["validations"] else None
    start, cut = source_span(data)
    first_step = data.find(b"\nstep:", max(cut, 0))
    header = data[max(cut, 0):min(max(cut, 0) + HEADER_BYTES, len(data) if first_step < 0 else first_step)]
    run["gpu"], run["gpus"] = _gpus(header)
    run["torch"] = _first(_TORCH, header)
    run["cuda"] = _first(_TORCH, header, 2)
    run["triton"] = _first(_TRITON, header)
    run["python"] = _first(_PYTHON, header)
    peak = _first(_PEAK, data[-TAIL_BYTES:])
    run["peak_memory_mib"] = _int(peak.encode(), MAX_FIGURE) if peak else None
    source = data[start:cut] if cut > start else b""
    run["source_sha256"] = hashlib.sha256(source).hexdigest() if source else None
    text = source[:SOURCE_CHARS].decode("utf-8", "replace")
    tokens, how = throughput.tokens_per_step(text, run["gpus"])
    run["tokens_per_step"], run["tokens_per_step_from"] = tokens, how
    run["tokens_per_s"], run["tokens_per_s_per_gpu"] = throughput.rates(
        tokens, run["final_step"], run["train_time_s"], run["gpus"])
    run["flops_per_token"], run["flops_per_token_from"] = flops.per_token(text)
    run["mfu_estimate"], run["mfu_peak"] = flops.estimate(run["flops_per_token"], run["tokens_per_s_per_gpu"], run["gpu"])
    run["notes"] = [printable(n) for n in notes]
    run["tokens_per_step_from"], run["flops_per_token_from"] = (
        printable(run["tokens_per_step_from"]), printable(run["flops_per_token_from"]))
    return run
