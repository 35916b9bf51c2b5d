"""A reproduction of own code describes bench box 7 in goodbench's words, not the
reviewed script's (suite/run/reproduce/observed.py; docs/own-code.md, "Reproducing"): trial 11's
script rewrote ``system.host.os`` in its re-run's file and the reviewer signed it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from suite.figures import load
from suite.record import results
from suite.record.errors import GoodbenchError
from suite.record.rules_version import RULES_VERSION
from suite.run import system
from suite.run.reproduce import observed
from suite.run.reproduce.observed import Observer

START = {"load_1m": 0.5, "cores": 2, "other_cores": 0.1, "busy": []}
END = {"load_1m": 1.5, "cores": 2, "other_cores": 1.2, "busy": [{"name": "other", "cores": 1.0}]}
DURING = {"cores": 2, "other_cores": 0.9, "busy": [{"name": "make", "cores": 0.9}], "seconds": 30.0}


def _scripts_file() -> dict:
    """A re-run's file as a hostile script leaves it: its own header, system and load."""
    run = {"run_id": "r0", "seed": 1, "device": "cpu", "host_load": {"start": {"load_1m": 0.0, "cores": 288,
           "other_cores": 0, "busy": []}, "end": {}, "gpu_other_processes_end": 0}}
    return {"schema_version": 1, "rules_version": 1, "suite": {"name": "goodbench", "version": "9.9"},
            "created_at": "2020-01-01T00:00:00Z",
            "system": {"name": "NVIDIA H100 x8", "accelerator": {"type": "cuda", "name": "NVIDIA H100"},
                       "host": {"os": "written by the reviewed script"}},
            "settings": {"division": "own"}, "runs": [run, dict(run, run_id="r1", seed=2)], "summary": {"x": 1}}


@pytest.fixture
def in_process(monkeypatch):
    """The description made in this process (the child's own function), not in a child importing
    torch again: seconds a test on a loaded machine. A test below runs the child itself."""
    monkeypatch.setattr(Observer, "system", lambda self, devices: observed.describe(devices, self.system_name,
                                                                                     self.overrides))


def test_the_re_runs_system_header_and_load_are_goodbenchs_own(in_process):
    raw = Observer().described(json.dumps(_scripts_file()).encode(), START, END, DURING)
    doc = json.loads(raw)
    here = system.describe(system.resolve_device("cpu"))
    assert doc["system"]["host"] == here["host"] and doc["system"]["accelerator"] == here["accelerator"]
    assert doc["system"]["name"] == here["name"] and doc["system"]["software"] == here["software"]
    assert doc["rules_version"] == RULES_VERSION and doc["schema_version"] == results.SCHEMA_VERSION
    assert doc["suite"] == results.new_document({}, {}, [])["suite"] and doc["created_at"] > "2026"
    assert [r["host_load"] for r in doc["runs"]] == \
        [{"start": START, "during": DURING, "end": END, "gpu_other_processes_end": None}] * 2
    # the watch over the re-run is weighed as a run's is: a slower re-run loaded in its middle is inconclusive
    assert "0.9 of 2 cores on average over it (make)" in str(load.under_load(doc["runs"][0]["host_load"]))
    assert doc["settings"] == {"division": "own"} and doc["summary"] == {"x": 1}  # the rest stays as written
    assert list(doc)[:5] == ["schema_version", "rules_version", "suite", "created_at", "system"]


def test_the_reviewer_names_the_system_and_a_run_naming_cuda_is_described_as_what_goodbench_sees(in_process):
    scripts = _scripts_file()
    for run in scripts["runs"]:
        run["device"] = "cuda:0"
    doc = json.loads(Observer("reviewer's box", {"host": {"cloud": "rack 4"}}).described(
        json.dumps(scripts).encode(), START, END))
    assert doc["system"]["name"] == "reviewer's box" and doc["system"]["host"]["cloud"] == "rack 4"
    assert doc["system"]["overridden"] == ["host.cloud"]
    import torch
    assert doc["system"]["accelerator"]["type"] == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("raw", [b"[]", b'{"runs": {}}', b'{"runs": [1]}', b"{}"])
def test_a_file_without_runs_is_refused(raw):
    with pytest.raises(GoodbenchError, match="holds no runs"):
        Observer().described(raw, START, END)


# trains like test_own_code's script, then, re-run under reproduce, prints what rewrites a terminal
# and rewrites its file's description of the machine before it exits
HOSTILE_TAIL = r'''
import json, os, sys
if os.environ.get("HOME") == "/tmp/home":  # the sandbox's (the library takes GOODBENCH_OUT out of the environment)
    sys.stdout.write("\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\rgoodbench reproduce: every run reproduced [FAKE]\n")
    sys.stdout.write("stdin: %r\n" % sys.stdin.read())
    sys.stdout.write("CONCEAL\x1b[8m")
    sys.stdout.flush()
    doc = json.load(open(bench.path))
    doc["system"]["host"]["os"] = "written by the reviewed script"
    doc["system"]["name"] = "NVIDIA H100 x8"
    for run in doc["runs"]:
        run["host_load"]["start"]["cores"] = 288
    json.dump(doc, open(bench.path, "w"))
'''


@pytest.mark.slow  # trains once, then again in the sandbox
def test_a_hostile_re_run_reaches_no_terminal_and_describes_no_machine(tmp_path, monkeypatch, capfd):
    """The re-run's escape sequences reach goodbench's output escaped, on ``[re-run] `` lines, its
    stdin is empty, and the signed reproduction's system and load are goodbench's, not the ones the
    script wrote into its file."""
    from test_own_code import TRAIN_SCRIPT, _git_repo

    from suite import validate as v
    from suite.cli import main

    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(tmp_path / "config"))
    assert main(["keygen"]) == 0
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "train.py").write_text(TRAIN_SCRIPT + HOSTILE_TAIL)
    _git_repo(checkout)
    env = {k: val for k, val in os.environ.items() if k != "GOODBENCH_OUT"}
    done = subprocess.run([sys.executable, "train.py"], cwd=checkout, capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.chdir(checkout)
    capfd.readouterr()
    status = main(["reproduce", "orig.json", "-o", str(tmp_path / "repro.json"), "--run-recorded-command",
                   "--system-name", "bench box 7", "--measure-for", "1"])  # one re-run is enough here
    said = capfd.readouterr()
    assert status in (0, 1), said.out + said.err
    assert "\x1b" not in said.out + said.err and "\r" not in said.out + said.err
    lines = said.out.splitlines()
    assert "[re-run] \\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b[2K\\u000dgoodbench reproduce: every run " \
           "reproduced [FAKE]" in lines
    assert "[re-run] stdin: ''" in lines and "[re-run] CONCEAL\\u001b[8m" in lines
    assert not [line for line in lines if "FAKE" in line and not line.startswith("[re-run] ")]
    assert (tmp_path / "repro.json").is_file(), said.out[-2000:] + said.err[-2000:]
    repro = json.loads((tmp_path / "repro.json").read_text())
    here = system.describe(system.resolve_device("cpu"), "bench box 7")
    assert repro["system"]["name"] == "bench box 7" and repro["system"]["host"] == here["host"]
    assert all(run["host_load"]["start"]["cores"] == os.cpu_count() for run in repro["runs"])
    assert all(run["host_load"]["during"]["seconds"] > 0 for run in repro["runs"])  # watched over the re-run, here
    assert repro.get("signature") and v.check_document(repro) == []


def _bench(**kwargs):
    import goodbench

    return goodbench.Benchmark("script-mlp", samples_per_step=16, max_steps=40, device="cpu", out="orig.json",
                               sign=False, **kwargs)


def test_under_reproduce_the_library_records_the_name_goodbench_gives_not_the_scripts(monkeypatch):
    """``$GOODBENCH_RERUN_SYSTEM_NAME`` (set by reproduce in the sandbox) names the system in place of the
    script's ``system_name=``, so that its event log agrees with goodbench's description; empty, the
    accelerator's own name; a name the site would read as a label is refused as ``system_name=`` is."""
    monkeypatch.setenv("GOODBENCH_RERUN_SYSTEM_NAME", "bench box 7")
    assert _bench(system_name="the author's rig").system_name == "bench box 7"
    monkeypatch.setenv("GOODBENCH_RERUN_SYSTEM_NAME", "")
    assert _bench(system_name="the author's rig").system_name is None
    monkeypatch.setenv("GOODBENCH_RERUN_SYSTEM_NAME", "box - reproduced by a trusted reviewer")
    with pytest.raises(GoodbenchError, match="system_name"):
        _bench()
    monkeypatch.delenv("GOODBENCH_RERUN_SYSTEM_NAME", raising=False)
    assert _bench(system_name="the author's rig").system_name == "the author's rig"  # goodbench run-own: its own


def test_the_machine_is_described_in_a_child_that_imports_nothing_of_the_reviewed_checkout(tmp_path):
    """On a GPU, describing the device initialises CUDA; done in goodbench's reproducing process
    after the first re-run, its context would sit on the GPU through the next re-runs (their memory,
    and "another process on the GPU" to them). The description comes from a child of goodbench's own,
    which a reproduction starts from the reviewed checkout: the child must not import that
    checkout's ``torch.py`` (or a ``suite/`` of a fork) outside the sandbox, with the reviewer's home
    and key in reach — it runs with ``-P`` from goodbench's own folder (one child: torch takes seconds)."""
    planted = tmp_path / "ran"
    (tmp_path / "torch.py").write_text(f"open({str(planted)!r}, 'w').write('outside the sandbox')\n")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "__init__.py").write_text(f"open({str(planted)!r}, 'w').write('a fork')\n")
    code = ("import json, sys\n"
            "from suite.run.reproduce.observed import Observer\n"
            "raw = json.dumps({'runs': [{'run_id': 'r0', 'device': 'cuda:0'}]}).encode()\n"
            "doc = json.loads(Observer('bench box 7').described(raw, {}, {}))\n"
            "print(doc['system']['name'], doc['system']['host']['cpu_logical_cores'] is not None, 'torch' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=300, check=True,
                          cwd=tmp_path, env=env)  # this process: goodbench's, the checkout last on its path
    assert done.stdout.split() == ["bench", "box", "7", "True", "False"], done.stdout + done.stderr
    assert not planted.exists()


def test_a_failing_description_is_one_line(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(GoodbenchError, match=r"describing this machine failed \(exit status 1\)"):
        Observer().system(["cpu"])


def test_a_description_that_is_not_one_is_one_line(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/echo")
    with pytest.raises(GoodbenchError, match="gave no description"):
        Observer().system(["cpu"])


def test_goodbench_started_with_the_reviewed_checkout_on_its_import_path_refuses_to_re_run_it(tmp_path, monkeypatch):
    """``python -m suite reproduce`` run from the reviewed checkout puts it first on goodbench's own
    import path: a ``torch.py`` there would run in goodbench's process, outside the sandbox."""
    from suite.commands.reproduce import _refuse_the_checkout_on_the_import_path as refuse

    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    with pytest.raises(GoodbenchError, match=r"on its import path .*python -P -m suite\) with PYTHONPATH not naming "
                                             r"the reviewed checkout \(a source clone of goodbench needs PYTHONPATH"):
        refuse(tmp_path)  # never "PYTHONPATH unset": a source clone of goodbench could not import it then
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path[1:]])  # python -c's entry: the working folder
    with pytest.raises(GoodbenchError):
        refuse(tmp_path)
    monkeypatch.setattr(sys, "path", sys.path[1:])
    refuse(tmp_path)  # not on the path: goes on
    import suite

    refuse(Path(suite.__file__).parent.parent)  # goodbench's own checkout: the code already running
