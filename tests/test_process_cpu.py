"""benchmarks/process_cpu.py: the CPU time of a command's processes, its children's included."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import benchmark_script
import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "process_cpu.py"
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")

# a parent that starts a child spinning its CPU for 0.6 s, then a child that sleeps 0.5 s, both with
# PROCESS_CPU_TEST=child in the environment they start with (the parent started without it)
BURN = ("import os, subprocess, sys, time\n"
        "os.environ['PROCESS_CPU_TEST'] = 'child'  # set after this process started: its children's alone\n"
        "code = 'import time\\nend = time.process_time() + 0.6\\nwhile time.process_time() < end: pass'\n"
        "subprocess.run([sys.executable, '-c', code], check=True)\n"
        "subprocess.run([sys.executable, '-c', 'import time; time.sleep(0.5)'], check=True)\n")


def test_a_childs_cpu_time_is_counted_and_its_exit_status_passed_on():
    process_cpu = benchmark_script.load("process_cpu")
    status, ours = process_cpu.sample([sys.executable, "-c", BURN], every=0.05, by_env="PROCESS_CPU_TEST")
    assert status == 0
    children = [(line, cpu) for line, cpu, _ in ours.values() if "subprocess" not in line]  # not the parent
    spinning = [cpu for line, cpu in children if "process_time" in line]
    sleeping = [cpu for line, cpu in children if "sleep(0.5)" in line]
    assert len(ours) == 3 and len(spinning) == len(sleeping) == 1, ours
    assert 0.4 <= spinning[0] <= 1.5 and sleeping[0] < 0.3  # at most a reading's interval lost
    assert sorted(str(value) for _, _, value in ours.values()) == ["None", "child", "child"]  # as each started
    table = process_cpu.report(ours, top=5, by_env="PROCESS_CPU_TEST")
    assert table.startswith("3 processes, ") and "0 s to 2 s: 3 processes" in table
    assert "costliest values of PROCESS_CPU_TEST" in table and table.splitlines()[-2].endswith(" 2  child")


def test_the_command_line_runs_the_command_and_prints_the_table():
    done = subprocess.run([sys.executable, str(SCRIPT), "--every", "0.05", "--", sys.executable, "-c",
                           "import sys; sys.exit(3)"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and done.stderr.startswith("1 process, "), done.stderr
    assert subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True).returncode == 2
