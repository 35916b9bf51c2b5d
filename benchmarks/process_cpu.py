"""The CPU time of every process a command starts, read from ``/proc`` while it runs: where a test
group's time goes (README.md, "Tests"). Linux only.

    python benchmarks/process_cpu.py -- python -m pytest -m "slow and not long and not rehearsal" -n auto --dist loadfile

Every ``--every`` seconds it reads each process's CPU time (user + system) and parent; a process
is the command's when its parent was, at this reading or the one before (once counted, it stays
counted after its parent ends). What it cannot see: a process that starts and ends between two
readings (and a child it leaves behind), and each process's CPU time after its last reading (so
the figures are a little low). It prints the total, the processes by
CPU time (under 2 s, 2–4 s, 4 s or more) and the costliest kinds of command; with ``--by-env NAME``,
also the costliest values of the environment variable NAME each process started with — under
pytest, ``--by-env PYTEST_CURRENT_TEST`` names the test that started each child (a pytest worker's
own time, its variable set after it started, is under "(not set)").
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
BANDS = ((0.0, 2.0), (2.0, 4.0), (4.0, float("inf")))


def _read(pid: str) -> tuple[str, int, float] | None:
    """``(parent pid, start time in ticks, CPU seconds)`` of ``pid``, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after the command name, which may hold spaces
    return fields[1], int(fields[19]), (int(fields[11]) + int(fields[12])) / TICK


def _command(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _environment_value(pid: str, name: str) -> str | None:
    """The value of ``name`` in the environment ``pid`` started with (None: not set, or unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = f.read().split(b"\0")
    except OSError:
        return None
    prefix = name.encode() + b"="
    return next((e[len(prefix):].decode(errors="replace") for e in entries if e.startswith(prefix)), None)


def sample(command: list[str], every: float,
           by_env: str | None = None) -> tuple[int, dict[tuple[str, int], list]]:
    """Run ``command``, reading ``/proc`` every ``every`` seconds until it ends: its exit status and,
    for each of its processes (by pid and start time), ``[command line, CPU seconds, value]``: the
    value of the environment variable ``by_env`` it started with (None: not asked, or not set)."""
    child = subprocess.Popen(command)
    ours: dict[tuple[str, int], list] = {}
    live: dict[str, tuple[str, int]] = {}  # pid → key, for the processes seen alive last time
    while True:
        done = child.poll() is not None
        now: dict[str, tuple[str, int]] = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            read = _read(pid)
            if read is None:
                continue
            parent, started, cpu = read
            key = (pid, started)
            if key in ours:
                ours[key][1] = cpu
            elif pid == str(child.pid) or parent in live or parent in now:
                value = _environment_value(pid, by_env) if by_env else None
                ours[key] = [_command(pid), cpu, value]  # read once, when first seen
            else:
                continue
            now[pid] = key
        live = now
        if done:
            return child.returncode, ours
        time.sleep(every)


def kind(command_line: str) -> str:
    """A command line shortened to its kind: the program's name and its first arguments, paths cut."""
    words = [re.sub(r"^/\S*/", "", word) for word in command_line.split()[:5]]
    return " ".join(words)[:100]


def _processes(count: int) -> str:
    return f"{count} process" if count == 1 else f"{count} processes"


def report(ours: dict[tuple[str, int], list], top: int, by_env: str | None = None) -> str:
    """The table: total, the bands, the costliest kinds (and values of ``by_env``, where asked)."""
    cpus = [cpu for _, cpu, _ in ours.values()]
    lines = [f"{_processes(len(ours))}, {sum(cpus):.0f} CPU-seconds"]
    for low, high in BANDS:
        band = [c for c in cpus if low <= c < high]
        median = f", median {statistics.median(band):.1f} s" if band else ""
        span = f"{low:g} s or more" if high == float("inf") else f"{low:g} s to {high:g} s"
        lines.append(f"  {span}: {_processes(len(band))}, {sum(band):.0f} CPU-seconds{median}")
    by_kind: dict[str, list[float]] = collections.defaultdict(list)
    by_value: dict[str, list[float]] = collections.defaultdict(list)
    for command_line, cpu, value in ours.values():
        by_kind[kind(command_line)].append(cpu)
        by_value["(not set)" if value is None else value].append(cpu)
    lines.extend(_costliest(by_kind, top, "kinds of command (CPU-seconds, processes, command)"))
    if by_env:
        lines.extend(_costliest(by_value, top, f"values of {by_env} (CPU-seconds, processes, value)"))
    return "\n".join(lines)


def _costliest(groups: dict[str, list[float]], top: int, what: str) -> list[str]:
    lines = [f"the {top} costliest {what}:"]
    for name, spent in sorted(groups.items(), key=lambda item: -sum(item[1]))[:top]:
        lines.append(f"  {sum(spent):8.1f} {len(spent):4d}  {name}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.2, help="seconds between readings (default 0.2)")
    parser.add_argument("--top", type=int, default=25, help="how many kinds of command to list")
    parser.add_argument("--by-env", metavar="NAME",
                        help="also group by the value of this environment variable each process started with")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: python benchmarks/process_cpu.py -- COMMAND ARGS")
    status, ours = sample(command, args.every, args.by_env)
    print(report(ours, args.top, args.by_env), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
