"""Own code run with uncommitted changes cannot be reproduced (walk 5: it passed run-own, validate
and submit unsaid, and the reviewer was told to check out "git commit … with uncommitted changes"):
the Benchmark says so loudly at its start and where it writes the file, and submit says it of the
stored file."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import forging
from quick_ceiling import quick_ceiling
from test_own_code import _git_repo

import goodbench
from suite.cli import main
from workloads import own, registry

FIXTURE = Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json"  # its code recorded with uncommitted changes


def test_a_benchmark_of_uncommitted_code_says_at_its_start_and_end_that_it_cannot_be_reproduced(tmp_path, capsys,
                                                                                                 monkeypatch):
    import torch

    quick_ceiling(monkeypatch)
    code = tmp_path / "train.py"
    code.write_text("# the loop\n")
    _git_repo(tmp_path)
    code.write_text("# the loop, changed and not committed\n")
    commit = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    bench = goodbench.Benchmark("dirty-mlp", samples_per_step=4, max_steps=3, warmup_steps=1, device="cpu",
                                code=[code], out=tmp_path / "dirty.json", sign=False, flops_per_step=1e6)
    with bench:
        for run in bench.runs():
            for _ in range(3):
                with run.step() as s:
                    s.loss = torch.tensor(1.0)
    err = capsys.readouterr().err
    start = [line for line in err.splitlines() if line.startswith("WARNING: ")]
    assert start == [f"WARNING: uncommitted changes in the code (at git commit {commit[:12]}): no commit a reviewer "
                     "checks out holds what ran. This run cannot be reproduced by anyone: commit and run again to be "
                     "reproducible (commit before you run, docs/own-code.md)"]
    assert err.index("WARNING: ") < err.index("training, at most 3 steps")  # before anything is measured
    end = f"{bench.path}: not reproducible: uncommitted changes in the code (at git commit {commit[:12]})"
    assert end in err and err.rstrip().endswith("commit and run again to be reproducible")


def test_committed_code_or_code_in_no_work_tree_is_not_called_unreproducible():
    assert own.uncommitted({"git_commit": "ab" * 20, "git_dirty": False, "files": {}}) is None
    assert own.uncommitted({"git_commit": None, "git_dirty": None, "files": {}}) is None  # no git: nothing to say here
    doc = json.loads(FIXTURE.read_text())
    doc["settings"]["implementation"]["code"]["git_dirty"] = False
    assert own.unreproducible_line(doc) is None
    assert own.unreproducible_line({**doc, "settings": {**doc["settings"], "division": "reference"}}) is None


def test_submit_says_a_file_of_uncommitted_code_is_not_reproducible(tmp_path, capsys):
    doc = json.loads(FIXTURE.read_text())
    commit = doc["settings"]["implementation"]["code"]["git_commit"]
    path = tmp_path / "own.json"
    path.write_text(FIXTURE.read_text())
    assert main(["submit", str(path), "--results-dir", str(tmp_path / "results")]) == 0  # stored all the same
    said = capsys.readouterr().out.splitlines()
    assert said[-1] == (f"not reproducible: uncommitted changes in the code (at git commit {commit[:12]}): no commit "
                        "a reviewer checks out holds what ran; commit and run again to be reproducible")


def test_a_reviewer_is_told_in_one_line_that_uncommitted_code_cannot_be_reproduced(tmp_path, capsys, monkeypatch):
    """Walk 5, M6: the reviewer was told to check out "git commit … with uncommitted changes"; now
    `reproduce` refuses it in one line, before anything is copied or run, with or without
    --run-recorded-command, and never calls that commit the one to check out."""
    from suite.run.reproduce import own as own_reproduce
    from suite.run.reproduce.planning import CannotReproduce

    doc = json.loads(FIXTURE.read_text())
    commit = doc["settings"]["implementation"]["code"]["git_commit"]
    assert doc["settings"]["implementation"]["code"]["git_dirty"] is True
    path = tmp_path / "dirty.json"
    path.write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--run-recorded-command"]):
        assert main(["reproduce", str(path), *extra]) == 1
        err = capsys.readouterr().err
        assert f"error: cannot reproduce: uncommitted changes in the code (at git commit {commit[:12]})" in err
        assert err.rstrip().endswith("its submitter must commit and run again to be reproducible")
        assert "the commit to check out" not in err
    try:
        own_reproduce.runnable_command(doc["settings"], tmp_path)
    except CannotReproduce as refused:
        assert str(refused).startswith("cannot reproduce: uncommitted changes")
    else:
        raise AssertionError("runnable_command ran uncommitted code")
    assert own_reproduce.own_code_steps(doc["settings"], tmp_path).startswith("cannot reproduce: uncommitted")


def test_a_recorded_command_naming_a_path_outside_the_code_is_called_unreproducible_and_submit_says_so(tmp_path,
                                                                                                       capsys):
    """A new user ran the README's `goodbench run-own examples/plain_loop.py --out own.json --data-dir
    DATA`: run-own, validate and submit took the file unsaid, and the reviewer's reproduction refused
    it for the absolute --data-dir. The same rule now speaks where the file is made and stored,
    saying what to do instead; a relative path, or the data folder in $GOODBENCH_DATA_DIR, passes."""
    doc = json.loads(FIXTURE.read_text())
    doc["settings"]["implementation"]["code"]["git_dirty"] = False
    section = doc["settings"]["implementation"]
    assert section["command"][0] in ("python", "torchrun")
    script_at = 2 if section["command"][0] == "python" else 3
    section["command"] = [*section["command"][:script_at], "--out", "own.json", "--data-dir", "/data/sets"]
    line = own.unreproducible_line(doc)
    assert line is not None and line.startswith("not reproducible as recorded: the recorded argument '/data/sets' "
                                                "names a path outside the copy of the code")
    assert line.endswith("name a data folder as $GOODBENCH_DATA_DIR instead (a reviewer gives theirs: reproduce "
                         "--data-dir) and run again")
    section["command"][-1] = "data/sets"  # inside the code: a re-run may name it
    assert own.unreproducible_line(doc) is None
    section["command"][-1] = "/data/sets"
    path = tmp_path / "own.json"
    doc["settings"]["command"] = section["command"]
    for run in doc["runs"]:  # its spec hash, which covers the command, made again (as run-own writes it)
        run["workload"]["spec_hash"] = registry.of_run(run, doc).spec_hash(run["scale"])
        forging.set_logged(run, goodbench_spec_hash=run["workload"]["spec_hash"])
    path.write_text(json.dumps(doc))
    assert main(["submit", str(path), "--results-dir", str(tmp_path / "results")]) == 0  # stored all the same
    assert capsys.readouterr().out.splitlines()[-1] == line
