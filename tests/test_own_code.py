"""goodbench as a library for one's own loop (suite/api/, docs/own-code.md): a loop measured by
``goodbench.Benchmark`` writes a file of the own division that every rule holds like a reference
run's, the leaderboard shows it (a free job never ranked), and a forged one is refused."""
from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from forging import codes, repair, set_logged
from test_forgery_physics import sped_up
from torch import nn

import goodbench
from suite import validate as v
from suite.figures import naming
from suite.leaderboard import pipeline
from suite.leaderboard import rows as leaderboard
from suite.record import claims
from suite.record.errors import GoodbenchError
from suite.site.builder import build_site
from suite.store.files import submit
from workloads import own, registry

REPO = Path(__file__).resolve().parent.parent
BATCH, WIDTH, HIDDEN = 16, 32, 256


def _regression_batch(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(BATCH, WIDTH, generator=gen)
    return x, x.sum(dim=1, keepdim=True)


def _train_mlp(run: goodbench.Run, steps: int) -> None:
    """An MLP learning the sum of its inputs: an ordinary loop, its steps measured by ``run``."""
    model = nn.Sequential(nn.Linear(WIDTH, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(run.seed)
    x, y = _regression_batch(gen)
    run.count_flops(lambda: nn.functional.mse_loss(model(x), y).backward())
    optimizer.zero_grad()
    held = _regression_batch(torch.Generator().manual_seed(0))

    def quality() -> dict[str, float]:
        with torch.no_grad():
            return {"val_mse": float(nn.functional.mse_loss(model(held[0]), held[1]))}

    for _ in range(steps):
        with run.data_wait():
            x, y = _regression_batch(gen)
        with run.step() as s:
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            s.loss = loss
        if run.due_for_evaluation():
            run.evaluate(quality)


def free_job(tmp_path: Path, *, steps: int = 30, seeds: int = 1, name: str = "tiny-mlp", **kw) -> goodbench.Benchmark:
    """A free job: a small MLP learning a sum, measured by the library (its FLOPs counted)."""
    bench = goodbench.Benchmark(name, trains="an MLP learning the sum of its inputs", samples_per_step=BATCH,
                                max_steps=steps, warmup_steps=5, eval_every=10, log_every=5, device="cpu",
                                seeds=seeds, code=[__file__], out=tmp_path / f"{name}.json", sign=False, **kw)
    with bench:
        for run in bench.runs():
            _train_mlp(run, steps)
    return bench


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> goodbench.Benchmark:
    return free_job(tmp_path_factory.mktemp("own"), seeds=2)


def test_a_measured_free_job_writes_a_valid_file_of_the_own_division(measured):
    assert measured.problems == []
    doc = json.loads(measured.path.read_text())
    assert doc["settings"]["division"] == "own" and v.check_document(doc) == []
    implementation = doc["settings"]["implementation"]
    assert implementation["against"] is None and implementation["spec"]["flops_source"] == "counted"
    # torch's counter on the MLP: per weight and sample 2 FLOPs forward, 2 for the weight's gradient
    # and 2 for the input's — but the first layer's input needs no gradient, so the step computes
    # 4 there: what ran, below PaLM's analytic 6N
    assert implementation["spec"]["flops_per_step"] == BATCH * (4 * WIDTH * HIDDEN + 6 * HIDDEN * 1)
    assert implementation["code"]["files"] == {"tests/test_own_code.py": implementation["code"]["files"][
        "tests/test_own_code.py"]}  # named by its path in the work tree
    runs = doc["runs"]
    assert [r["seed"] for r in runs] == [1, 2] and {r["status"] for r in runs} == {"complete"}
    run = runs[0]
    assert run["workload"] == {"id": own.FREE_JOB, "version": 1, "kind": "throughput",
                               "spec_hash": registry.of_run(run, doc).spec_hash("smoke")}
    assert [p["step"] for p in run["curve"]] == [10, 20, 30] and "val_mse" in run["curve"][0]
    window = run["metrics"]["throughput"]["window"]
    assert (window["first_step"], window["last_step"]) == (6, 30)
    assert run["goodput"]["badput_s"]["data_wait"] > 0  # the data waits were timed apart
    assert run["metrics"]["share_of_ceiling"] > 0
    watched = run["host_load"]["during"]  # the other processes over the whole run, beside its start and end
    assert watched["seconds"] > 0 and watched["cores"] == run["host_load"]["start"]["cores"]


def test_the_library_says_its_progress_and_takes_a_peak(tmp_path, capsys):
    """Without progress=, the loop's steps and evaluations are said on stderr as goodbench run says
    them (a 31-line loop was once silent for minutes); peak_tflops= gives MFU a peak where the
    table has none (a CPU), recorded as the override it is (never ranked)."""
    bench = free_job(tmp_path, peak_tflops=0.5)
    err = capsys.readouterr().err
    assert "[tiny-mlp seed 1] training, at most 30 steps" in err  # named as the code is
    assert "[tiny-mlp seed 1] step 10/30  loss " in err and "ETA" in err and "[tiny-mlp seed 1] eval at step 10: val_mse " in err
    doc = json.loads(bench.path.read_text())
    assert doc["settings"]["peak_tflops_override"] == 0.5 and v.check_document(doc) == []
    run = doc["runs"][0]
    assert run["metrics"]["peak_flops"] == 0.5e12 and run["metrics"]["mfu"] > 0
    with pytest.raises(GoodbenchError, match="flops"):
        goodbench.Benchmark("x", samples_per_step=1, max_steps=2, peak_tflops=float("nan"), sign=False)


def test_a_free_job_is_shown_on_the_site_and_never_ranked(measured, tmp_path):
    store = tmp_path / "results"
    stored = submit(measured.path, store)
    doc = json.loads(stored.read_text())
    doc["settings"]["scale"] = "full"  # even at full scale, on a known device: never ranked
    frame = pipeline.table([(stored.name, json.loads(stored.read_text()))])
    assert list(frame["implementation"]) == ["tiny-mlp"]
    full = frame.assign(scale="full", known_peak=True)
    assert not leaderboard.rankable(full).any()
    build_site(store, tmp_path / "site")
    system = next((tmp_path / "site" / "systems").glob("*.html")).read_text()
    assert "own code \u201ctiny-mlp\u201d, a free job (never ranked; one clock (self-timed): timed in the " \
        "submitter&#39;s process, self-reported, never ranked)" in system
    page = next(p for p in (tmp_path / "site" / "runs").glob("*.html") if "tiny-mlp" in p.read_text())
    text = page.read_text()
    assert "a free job, held to no goodbench target, never ranked" in text
    # by its name, not "own" (the page found is either seed's)
    assert re.search(r"<title>tiny-mlp smoke seed [12] · goodbench</title>", text)
    assert re.search(r"<h1>tiny-mlp <small>own code</small> · smoke · seed [12]</h1>", text)
    # issue 44, finding 6: no clock outside the submitter's process stamped this file's timings
    assert '<strong class="status-partial" id="own-timing">one clock (self-timed): timed in the submitter&#39;s ' \
        "process, self-reported, never ranked</strong>" in text and "so it is never ranked: run it with goodbench " \
        "run-own for a second clock" in text
    for table in [system, next((tmp_path / "site" / "workloads").glob("own-*.html")).read_text()]:
        assert table.count("tiny-mlp") and "one clock (self-timed): timed in the submitter&#39;s process" in table
    assert "Declared implementation and step" in text
    # the index lists the free jobs' page, whose table ranks none of them
    index = (tmp_path / "site" / "index.html").read_text()
    assert "own code, free jobs" in index and "never ranked: each its own job" in index  # not "no ranked result yet"
    # no pinned workload: no version, and no target at any scale (a new user read "v1" and "full-scale target")
    assert "own code, free jobs</a></td>" in index and "none, at any scale: measured and shown, never ranked" in index
    free = next((tmp_path / "site" / "workloads").glob("own-*.html")).read_text()
    assert "Own code, free jobs — never ranked" in free and "tiny-mlp" in free
    # each row names its code and what it declares it trains, not its system alone
    assert list(frame["trains"]) == ["an MLP learning the sum of its inputs"]
    row = free.split("<tbody>")[1].split("</tbody>")[0]
    assert ">own code \u201ctiny-mlp\u201d</span>" in row and ">trains an MLP learning the sum of its inputs</small>" in row
    assert 'title="what the own code declares it trains (self-reported): an MLP learning the sum of its inputs"' in row
    # its system's page names it as goodbench show does, not "own"
    shown = naming.workload_label(doc["runs"][0], own.implementation_name(doc))
    assert shown == "own: tiny-mlp" and f">{shown}</a><br><small class=\"sub own\"" in system and ">own</a>" not in system


def test_validate_says_a_file_timed_by_one_clock_is_never_ranked(measured, capsys):
    """A new user validated a plain ``python`` run's file, read "ok", and learnt only at submit that
    it would never be ranked: validate says so, and what adds the second clock."""
    from suite.cli import main

    assert main(["validate", str(measured.path)]) == 0
    line, loaded = capsys.readouterr().out.strip(), "measured under load (self-reported)"  # this run's load: said where it was
    said = (f"{measured.path}: ok; own code timed by one clock (self-timed): shown, never ranked — "
            "`goodbench run-own SCRIPT ARGS` adds a second clock (a free job is never ranked either way)")
    assert line == said or (line.startswith(f"{said}; ") and loaded in line), line
    assert main(["validate", str(REPO / "tests" / "fixtures" / "own-loaded-short-steps.json")]) == 0
    assert "ok; own code: its median step (2.7 ms) is under the 5 ms the second clock holds on a CPU, so the " \
           "board counts it as one clock (self-timed), never ranked" in capsys.readouterr().out
    assert main(["validate", str(REPO / "tests" / "fixtures" / "own-stored-losses.json")]) == 0
    line = capsys.readouterr().out.strip()  # two clocks: nothing to add of them; its load, as show and run-own say it
    assert "own-stored-losses.json: ok; 1 of 1 runs measured under load (self-reported); " in line
    assert line.endswith(": flagged and left out of the site's comparisons")


def test_every_own_row_says_its_timings_come_from_the_submitters_process():
    """Issue 44, finding 6: own code could replace the clocks of its own process; a row no second clock
    stamped (goodbench run-own) says so, held to a target or a free job."""
    from suite.site.columns import _own_text
    from suite.site.labels import OWN_TIMING

    assert OWN_TIMING == "one clock (self-timed): timed in the submitter's process, self-reported, never ranked"
    for kind in ("tta", "throughput"):
        assert OWN_TIMING in (_own_text({"implementation": "mine", "kind": kind}) or "")
        assert OWN_TIMING in (_own_text({"implementation": "mine", "kind": kind, "second_clock": False}) or "")
    assert _own_text({"implementation": None, "kind": "tta"}) is None  # goodbench's own runs: no such line


def test_a_forged_own_file_is_refused_like_a_reference_one(measured):
    doc = json.loads(measured.path.read_text())
    halved = copy.deepcopy(doc)
    for run in halved["runs"]:
        run["step_times_s"] = [t / 2 for t in run["step_times_s"]]
    assert "stream-step-times" in codes(repair(halved))  # the log's step blocks contradict it
    edited = copy.deepcopy(doc)
    edited["runs"][0]["curve"][-1]["val_mse"] /= 10
    assert "stream-curve" in codes(repair(edited))
    # sped up to three times the run's own matmul ceiling (the bound is at most twice it), the log
    # rewritten to agree: refused. The factor follows the share measured, which swings a hundredfold with
    # the machine's load (0.02% to 4% seen): a fixed one made steps of zero on a quiet machine
    share = doc["runs"][0]["metrics"]["share_of_ceiling"]
    assert share > 0
    assert "above-ceiling" in codes(repair(sped_up(copy.deepcopy(doc), 3 / share)))
    # its declared step changed (MFU doubled): the spec hash, and the log's copy of it, refuse it
    doubled = copy.deepcopy(doc)
    doubled["settings"]["implementation"]["spec"]["flops_per_step"] *= 2
    for run in doubled["runs"]:
        run["metrics"]["flops_per_step"] *= 2
    assert "spec-hash" in codes(repair(doubled))
    for run in doubled["runs"]:
        run["workload"]["spec_hash"] = registry.of_run(run, doubled).spec_hash("smoke")
    assert "log-spec" in codes(repair(doubled))


def test_the_own_division_and_its_section_go_together(measured):
    doc = json.loads(measured.path.read_text())
    closed = copy.deepcopy(doc)
    closed["settings"]["division"] = "closed"
    assert "division" in codes(closed)
    bare = copy.deepcopy(doc)
    del bare["settings"]["implementation"]
    assert "division" in codes(bare)
    held = copy.deepcopy(doc)
    held["settings"]["implementation"]["against"] = "no-such-workload"
    assert "unknown-workload" in codes(held)
    held["settings"]["implementation"]["against"] = "gpt2-124m"  # a throughput workload: no target to hold to
    assert "implementation" in codes(held)


def test_the_loop_is_held_to_what_it_declared(tmp_path, capsys):
    bench = goodbench.Benchmark("bad", samples_per_step=4, flops_per_step=100.0, max_steps=3, eval_every=2,
                                warmup_steps=1, device="cpu", out=tmp_path / "bad.json", sign=False)
    with pytest.raises(GoodbenchError, match="beyond max_steps=3"), bench:
        run = next(bench.runs())
        with run.step():
            pass
        with pytest.raises(GoodbenchError, match="not at the declared evaluation cadence"):
            run.evaluate(lambda: {"x": 1.0})
        with pytest.raises(GoodbenchError, match="a free job has no pinned evaluator"):
            run.evaluate_pinned(lambda ids: ids)
        with pytest.raises(GoodbenchError, match="before the first step"):
            run.count_flops(lambda: None)
        for _ in range(3):
            with run.step():
                pass
    # the run so far is still written, and says how it ended
    doc = json.loads((tmp_path / "bad.json").read_text())
    assert doc["runs"][0]["status"] == "failed" and "beyond max_steps" in doc["runs"][0]["error"]
    from suite import cli  # valid, as a record of a failure; "ok" alone read as a result to a new user

    assert v.check_document(doc) == []
    capsys.readouterr()
    assert cli.main(["validate", str(tmp_path / "bad.json")]) == 0
    assert capsys.readouterr().out.strip().endswith(
        ": ok (a valid record, but none of its 1 run completed: failed; it measures nothing to compare or rank)")
    with pytest.raises(GoodbenchError, match="never overwritten"):
        goodbench.Benchmark("bad", samples_per_step=4, max_steps=3, device="cpu", out=tmp_path / "bad.json").start()
    with pytest.raises(GoodbenchError, match="no quality target"):
        goodbench.Benchmark("x", samples_per_step=4, max_steps=3, against="gpt2-124m")
    with pytest.raises(GoodbenchError, match="unknown workload"):
        goodbench.Benchmark("x", samples_per_step=4, max_steps=3, against="nope")


@pytest.mark.slow  # trains, evaluates on lm-char's text and builds a site: 7 s (the fast loop stays under 3 minutes)
def test_a_run_held_to_lm_char_is_evaluated_by_the_pinned_evaluator(tmp_path, data_dir):
    """The plain-loop example's model against lm-char's smoke target, a few steps: the quality on
    its curve is goodbench's evaluation (the same windows as the reference's)."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import plain_loop
    finally:
        sys.path.remove(str(REPO / "examples"))
    bench = goodbench.Benchmark("plain", samples_per_step=32, tokens_per_step=32 * 64, max_steps=20,
                                warmup_steps=5, eval_every=10, against="lm-char", scale="smoke", device="cpu",
                                out=tmp_path / "plain.json", sign=False, data_dir=str(data_dir))
    with bench:
        for run in bench.runs():
            plain_loop.train(run, 32, 64)
            with pytest.raises(GoodbenchError, match="pinned evaluator"):
                run.evaluate(lambda: {"val_loss": 0.1})
    assert bench.problems == []
    doc = json.loads(bench.path.read_text())
    run = doc["runs"][0]
    assert run["workload"]["id"] == "lm-char" and run["workload"]["kind"] == "tta"
    assert run["metrics"]["target"] == {"metric": "val_loss", "direction": "min", "value": 2.4}
    assert [p["step"] for p in run["curve"]] == [10, 20] and 2.4 < run["curve"][-1]["val_loss"] < 4.5
    # on lm-char's page its smoke row has a table of its own, apart from the reference suite's (a new
    # user found their own code's row in the reference's table, told apart by a paragraph in its cell)
    from suite.site import builder
    from suite.site.names import safe_name
    from suite.store.files import submit

    results = tmp_path / "results"
    submit(REPO / "tests" / "corpus" / "valid" / "lm-char-smoke.json", results)
    submit(bench.path, results)
    builder.build(results, tmp_path / "site")
    page = (tmp_path / "site" / "workloads" / f"{safe_name('lm-char')}.html").read_text()
    closed = page.index("Smoke scale — not ranked (a quick check, not a benchmark); score: time to")
    assert "— closed division" in page[closed:closed + 300]
    apart = page.index("— own division", closed)
    assert "own code" not in page[closed:apart] and "own code" in page[apart:]


@pytest.mark.slow  # 45 s at load 9 on 2 cores
def test_the_free_job_example_runs_under_run_own_with_two_clocks_and_no_data(tmp_path):
    """examples/free_job.py, the shortest own-code script the docs show first: no dataset, its
    steps long enough on a CPU for the second clock to hold them (5 ms)."""
    from suite.figures import clock_cover

    out = tmp_path / "own-free.json"
    env = {k: v for k, v in __import__("os").environ.items() if k != "GOODBENCH_DATA_DIR"}
    done = subprocess.run([sys.executable, "-m", "suite", "run-own", str(REPO / "examples" / "free_job.py"),
                           "--out", str(out), "--steps", "40", "--device", "cpu"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "second clock added (1 run, the clocks agree), unsigned, valid" in done.stderr, done.stderr[-2000:]
    doc = json.loads(out.read_text())
    [run] = doc["runs"]
    assert run["status"] == "complete" and [p["step"] for p in run["curve"] if "val_mse" in p] == [25, 40]  # and at the last step
    assert clock_cover.stamped(doc, run["run_id"]), "the board would show it as one clock (self-timed)"


def test_reproduce_says_how_to_run_own_code_again(measured, tmp_path, monkeypatch):
    from suite.run.reproduce.planning import own_code_steps

    doc = json.loads(measured.path.read_text())
    text = own_code_steps(doc["settings"], REPO)
    assert "goodbench runs its recorded command" in text and "1 of its 1 named files are here" in text
    assert "`python -m pytest" in text or "`python " in text
    assert "0 of its 1 named files are here" in own_code_steps(doc["settings"], tmp_path)


def test_an_own_runs_figures_are_held_to_its_declaration(measured):
    """Review findings: metrics not tied to the declared step, and open_changes switching off the
    spec hash, let forged own files through."""
    doc = json.loads(measured.path.read_text())
    inflated = copy.deepcopy(doc)
    for run in inflated["runs"]:
        run["metrics"]["flops_per_step"] *= 100
    assert "pinned-value" in codes(repair(inflated))
    tokens = copy.deepcopy(doc)
    for run in tokens["runs"]:
        run["metrics"]["tokens_per_step"] = 10 ** 6
    assert "pinned-value" in codes(repair(tokens))
    # a thousand times faster with the run's FLOPs cut to match: its declaration still says otherwise
    faster = sped_up(copy.deepcopy(doc), 1000)
    for run in faster["runs"]:
        run["metrics"]["flops_per_step"] /= 1000
    assert "pinned-value" in codes(repair(faster))
    changed = copy.deepcopy(doc)
    changed["settings"]["open_changes"] = ["x"]
    changed["settings"]["implementation"]["spec"]["warmup_steps"] = 20
    found = codes(repair(changed))
    assert {"division", "spec-hash"} <= found


def test_what_no_record_refuses_an_own_file_that_declares_too_few_flops(measured):
    """Documented limit (docs/own-code.md): the declaration itself is the submitter's word. A run
    claimed a thousand times faster that also declares a thousandth of its FLOPs — declaration,
    metrics, spec hash and the log's claim all rewritten — passes the FLOP-based bounds; only a
    reproduction shows it. This test pins that the limit is what the docs say, no more."""
    doc = sped_up(json.loads(measured.path.read_text()), 1000)
    doc["settings"]["implementation"]["spec"]["flops_per_step"] /= 1000
    for run in doc["runs"]:
        run["metrics"]["flops_per_step"] /= 1000
        run["workload"]["spec_hash"] = registry.of_run(run, doc).spec_hash("smoke")
    for run in doc["runs"]:
        set_logged(run, **{claims.SPEC_HASH: run["workload"]["spec_hash"]})
    assert codes(repair(doc)) == set()


def test_a_run_stops_at_its_target_and_a_full_scale_one_needs_five_seeds(tmp_path):
    with pytest.raises(GoodbenchError, match="needs 5 seeds"):
        goodbench.Benchmark("x", samples_per_step=4, max_steps=3, against="lm-char", scale="full")
    bench = goodbench.Benchmark("given", samples_per_step=4, flops_per_step=10.0, max_steps=4, eval_every=2,
                                warmup_steps=1, device="cpu", out=tmp_path / "given.json", sign=False)
    with bench:
        run = next(bench.runs())
        with pytest.raises(GoodbenchError, match="given or counted, not both"):
            run.count_flops(lambda: None)
        for _ in range(4):
            with run.step():
                pass
        with pytest.raises(GoodbenchError, match="iterate it once"):
            next(bench.runs())
    assert bench.problems == []


def test_own_code_is_not_exported_as_an_mlperf_submission(measured, tmp_path):
    from suite.mlperf.export import export

    with pytest.raises(GoodbenchError, match="own code"):
        export(measured.path, tmp_path / "tree")


def test_reproduce_reads_only_files_inside_the_work_tree(measured, tmp_path):
    from suite.run.reproduce.planning import own_code_steps

    (tmp_path / "inside.py").write_text("x = 1\n")
    digest = __import__("hashlib").sha256(b"x = 1\n").hexdigest()
    hostile = {"implementation": {"name": "h", "command": ["python", "x.py"], "code": {
        "git_commit": None, "git_dirty": None,
        "files": {"/etc/hostname": "0" * 64, "../escape.py": digest, "inside.py": digest}}}}
    (tmp_path.parent / "escape.py").write_text("x = 1\n")
    assert "1 of its 3 named files are here" in own_code_steps(hostile, tmp_path)


TRAIN_SCRIPT = '''
import torch, goodbench
from torch import nn
bench = goodbench.Benchmark("script-mlp", samples_per_step=16, max_steps=40, warmup_steps=5, eval_every=20,
                            device="cpu", code=[__file__], out="orig.json", sign=False)
with bench:
    for run in bench.runs():
        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        gen = torch.Generator().manual_seed(run.seed)
        def batch():
            x = torch.randn(16, 8, generator=gen)
            return x, x.sum(dim=1, keepdim=True)
        x, y = batch()
        run.count_flops(lambda: nn.functional.mse_loss(model(x), y).backward())
        opt.zero_grad()
        for _ in range(40):
            x, y = batch()
            with run.step() as s:
                loss = nn.functional.mse_loss(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
                s.loss = loss
            if run.due_for_evaluation():
                run.evaluate(lambda: {"train_mse": float(loss)})
print(bench.path, bench.problems)
'''
# the training loop's steps sleep, so that each has a length on any clock (an MLP's step is ~1 ms)
SLEEPING = TRAIN_SCRIPT.replace("                s.loss = loss\n",
                                "                s.loss = loss; __import__('time').sleep(0.01)\n")


def _git_repo(folder: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "code"]):
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                       env={**__import__("os").environ, **env})


@pytest.mark.slow  # trains twice and re-runs in the sandbox: ~22 s of the fast loop
def test_reproduce_runs_own_code_again_from_a_checkout_when_asked(tmp_path, monkeypatch, capsys):
    """`goodbench reproduce` of an own file prints the recorded command and runs nothing unless
    asked; asked, it runs it from a checkout of the recorded commit (GOODBENCH_OUT takes the
    file), compares by seed, and the reproduction validates. The re-run gets the write end of an
    edge channel (docs/own-code.md, "Reproducing"): the reproduction carries a second clock, which
    agrees with the script's own and saw its steps' sleep."""
    from suite.cli import main

    (tmp_path / "train.py").write_text(SLEEPING)
    _git_repo(tmp_path)
    done = subprocess.run([sys.executable, "train.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("[]"), done.stderr[-2000:]
    original = json.loads((tmp_path / "orig.json").read_text())
    assert "second_clock" not in original and v.check_document(original) == []  # plain python: one clock, valid
    code = original["settings"]["implementation"]["code"]
    assert original["settings"]["implementation"]["command"] == ["python", "train.py"]
    assert list(code["files"]) == ["train.py"] and code["workdir"] == "." and code["git_commit"]
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "orig.json", "-o", "repro.json", "--no-sign"]) == 3  # shown, not run: nothing reproduced
    assert "python train.py" in capsys.readouterr().err and not (tmp_path / "repro.json").exists()
    # --measure-for 1: one re-run, whatever the load (measuring on is tested in test_measuring.py)
    assert main(["reproduce", "orig.json", "-o", "repro.json", "--no-sign", "--run-recorded-command",
                 "--measure-for", "1"]) in (0, 1)
    printed = capsys.readouterr().out
    assert "run 0: own: script-mlp smoke seed 1" in printed and "bit-identical" in printed  # same code, seed, machine
    repro = json.loads((tmp_path / "repro.json").read_text())
    assert repro["settings"]["reproduces"]["sha256"] == __import__("hashlib").sha256(
        (tmp_path / "orig.json").read_bytes()).hexdigest()
    assert v.check_document(repro) == []
    [entry] = repro["second_clock"]["runs"]
    assert entry["run_id"] == repro["runs"][0]["run_id"] != original["runs"][0]["run_id"]
    assert entry["agreement"]["agree"] is True and len(entry["step_s"]) == 40
    assert sorted(entry["step_s"])[20] >= 0.01  # the launcher outside the sandbox saw the steps' sleep
    # the code changed: not at hand, and nothing runs
    (tmp_path / "train.py").write_text(SLEEPING + "# changed\n")
    assert main(["reproduce", "orig.json", "-o", "repro-2.json", "--no-sign", "--run-recorded-command"]) != 0
    assert "0 of its 1 named files are here" in capsys.readouterr().err
    assert not (tmp_path / "repro-2.json").exists()


@pytest.mark.parametrize("command", [["python", "-c", "open('pwned', 'w')"], ["bash", "train.py"],
                                     ["python", "other.py"], ["python"], []])
def test_reproduce_runs_no_command_but_python_on_a_checked_out_code_file(tmp_path, command):
    """A results file is anyone's text: the command goodbench runs again is `python SCRIPT ...`
    with SCRIPT a file the original names, here with its recorded sha256, tracked by git in a
    checkout of the recorded commit — never a program, a -c string, or a file of a virtual
    environment whose hash anyone can know."""
    from suite.run.reproduce.own import runnable_command
    from suite.run.reproduce.planning import CannotReproduce

    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "other.py").write_text("print('other')\n")
    (tmp_path / "-c.py").write_text("print('hi')\n")  # a file named like python's option
    _git_repo(tmp_path)
    commit = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    venv = tmp_path / ".venv" / "lib"
    venv.mkdir(parents=True)
    (venv / "tool.py").write_text("print('hi')\n")  # the same bytes, untracked
    digest = __import__("hashlib").sha256(b"print('hi')\n").hexdigest()
    files = {"train.py": digest, ".venv/lib/tool.py": digest}
    settings = {"implementation": {"command": command, "code": {"files": files, "git_commit": commit}}}
    with pytest.raises(CannotReproduce, match="goodbench runs no other command"):
        runnable_command(settings, tmp_path)
    settings["implementation"]["command"] = ["python", ".venv/lib/tool.py", "x"]
    with pytest.raises(CannotReproduce, match="not tracked by git"):
        runnable_command(settings, tmp_path)
    settings["implementation"]["command"] = ["python", "train.py", "--steps", "3"]
    assert runnable_command(settings, tmp_path) == ([sys.executable, "train.py", "--steps", "3"], tmp_path / ".")
    settings["implementation"]["code"]["files"]["-c.py"] = digest
    settings["implementation"]["command"] = ["python", "-c.py"]
    with pytest.raises(CannotReproduce, match="goodbench runs no other command"):  # never read as an option
        runnable_command(settings, tmp_path)
    settings["implementation"]["command"] = ["torchrun", "--nproc-per-node=2", "train.py", "--steps", "3"]
    assert runnable_command(settings, tmp_path)[0] == [sys.executable, "-m", "torch.distributed.run", "--standalone",
                                                       "--nproc-per-node=2", "train.py", "--steps", "3"]
    for torchrun, why in ((["--nnodes=2", "--nproc-per-node=2", "train.py"], "several nodes"),
                          (["--nproc-per-node=999", "train.py"], "from 1 to 64"),
                          (["--nproc-per-node=2", "-c", "open('pwned', 'w')"], "goodbench runs no other command")):
        settings["implementation"]["command"] = ["torchrun", *torchrun]
        with pytest.raises(CannotReproduce, match=why):
            runnable_command(settings, tmp_path)
    settings["implementation"]["command"] = ["python", "train.py", "--steps", "3"]
    settings["implementation"]["code"]["git_commit"] = "0" * 40
    with pytest.raises(CannotReproduce, match="checkout of the commit it recorded"):
        runnable_command(settings, tmp_path)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.slow  # a re-run measured on: 13 s of the fast loop
def test_a_reproduction_of_own_code_measures_again_when_its_throughput_cannot_be_told(measured, tmp_path,
                                                                                     monkeypatch):
    """As a reference reproduction does: a curve that agrees with a throughput the interval cannot
    place (here every comparison is made to ask) runs the recorded command again, each run's
    re-runs pooled, until they decide or the cap (here 2 re-runs) is reached; the last re-run is
    the reproduction, each comparison keeping the first measurement's ratio and its measuring,
    the file valid."""
    from suite.run.reproduce import comparison, measuring, own
    from suite.run.reproduce.inputs import read_original
    from suite.run.reproduce.sandbox_tmp import Use

    original = read_original(str(measured.path))
    runs: list[bytes] = []

    def rerun(settings, where, timeout, out, observer, tmp):  # the same code trained again, in this process
        runs.append(free_job(tmp_path / f"rerun-{len(runs)}", seeds=2).path.read_bytes())
        return runs[-1], Use(peak=0, full=False)

    monkeypatch.setattr(own, "code_at_hand", lambda settings, where: True)
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: (["python", "train.py"], where))
    monkeypatch.setattr(own.sandbox, "bwrap", lambda: "bwrap")
    monkeypatch.setattr(own, "_rerun", rerun)
    monkeypatch.setattr(comparison.Comparison, "unsettled", property(lambda c: True))
    stop = measuring.Measuring._stop  # a first re-run never settles it here: at least two
    monkeypatch.setattr(measuring.Measuring, "_stop", lambda m: len(m.records) >= 2 and stop(m))
    said: list[str] = []
    found = own.reproduce(original, [0, 1], tmp_path / "repro.json", 0.1, report=said.append,
                          cap=measuring.Cap(measurements=2))
    assert len(runs) == 2 and "the recorded command runs again" in said[0]
    assert [c.measurements for c in found.comparisons] == [2, 2] and all(c.first_ratio for c in found.comparisons)
    assert len(said) == 3 and all(" measured 2 times (" in line for line in said[1:])
    written = json.loads((tmp_path / "repro.json").read_text())
    entries = written["settings"]["reproduces"]["runs"]
    assert [r["measurements"] for r in entries] == [2, 2]
    assert all(r["measuring"]["measurements"] == 2 and r["measuring"]["stopped"] in ("decisive", "cap", "undecidable")
               and r["measuring"]["seconds"] > 0 for r in entries)
    assert v.check_document(written) == []
    assert written["runs"][0]["run_id"] in runs[1].decode()  # the last re-run is the reproduction
    # a "reproduction" that hands the original's runs back, untrained, is refused
    handed_back = copy.deepcopy(written)
    handed_back["settings"]["reproduces"]["runs"][0]["original_run_id"] = handed_back["runs"][0]["run_id"]
    assert [p.code for p in v.check_document(handed_back)] == ["reproduces"]


def test_the_re_run_of_own_code_gets_a_fresh_checkpoint_folder(tmp_path, monkeypatch):
    from suite.run.edge_reader import EdgeReader, clock
    from suite.run.reproduce import own
    from suite.run.reproduce.planning import CannotReproduce

    seen: list[dict] = []

    def fake_run(argv, env, ends, timeout, started=None):
        assert env == {}  # bwrap itself is given no environment: its init process's is readable inside
        env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}  # bwrap --setenv NAME VALUE
        assert env["GOODBENCH_EDGE_FD"] == str(ends[1])  # the edge channel's write end, stamped outside
        os.close(ends[1])
        seen.append(env)
        Path(env[own.OUT_VARIABLE]).write_text("{}")
        reader = EdgeReader(ends[0], clock())
        reader.finish(1.0)
        return 0, 1, reader  # a script that wrote its file and no edge

    monkeypatch.setattr(own, "copy_code", lambda settings, where, dest: dest.mkdir())
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: (["python", "train.py"], where))
    monkeypatch.setattr(own.sandbox, "check", lambda writable, where: None)
    monkeypatch.setattr(own.stamping, "run", fake_run)
    for _ in range(2):  # its file, with no edge to stamp, is refused: its times would be its own word
        with pytest.raises(CannotReproduce, match="the re-run has no second clock "):
            own._rerun({}, tmp_path, None, tmp_path / "repro.json", own.BARE)
    folders = [Path(env[own.CHECKPOINT_VARIABLE]) for env in seen]
    assert folders[0] != folders[1] and not any(f.exists() for f in folders)


def test_a_re_run_that_leaves_a_tree_deeper_than_python_recurses_leaves_no_scratch(tmp_path, monkeypatch, capsys):
    """A script that left thousands of nested folders in its writable output folder made the scratch
    cleanup die of a RecursionError, the scratch copy left on disk and no re-run kept: the re-run
    is judged as any other, and nothing of its scratch stays."""
    import tempfile

    from test_tempfiles import DEEP, deep_tree

    from suite.run.edge_reader import EdgeReader, clock
    from suite.run.reproduce import own
    from suite.run.reproduce.planning import CannotReproduce

    def fake_run(argv, env, ends, timeout, started=None):
        env = {argv[i + 1]: argv[i + 2] for i, a in enumerate(argv) if a == "--setenv"}
        os.close(ends[1])
        Path(env[own.OUT_VARIABLE]).write_text("{}")
        deep_tree(Path(env[own.OUT_VARIABLE]).parent, DEEP)
        reader = EdgeReader(ends[0], clock())
        reader.finish(1.0)
        return 0, 1, reader

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(own, "copy_code", lambda settings, where, dest: dest.mkdir())
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: (["python", "train.py"], where))
    monkeypatch.setattr(own.sandbox, "check", lambda writable, where: None)
    monkeypatch.setattr(own.stamping, "run", fake_run)
    with pytest.raises(CannotReproduce, match="the re-run has no second clock "):
        own._rerun({}, tmp_path, None, tmp_path / "repro.json", own.BARE)
    assert os.listdir(scratch) == [] and "scratch" not in capsys.readouterr().err


@pytest.mark.parametrize("first_flops", [1.0, 1e18])
def test_a_stopped_benchmark_measures_the_ceiling_again_only_where_a_run_stood_above_it(tmp_path, monkeypatch,
                                                                                         first_flops):
    """As ``goodbench run`` (tests/test_session.py): a script stopped by Ctrl-C measures the ceiling
    once more where a run stood above the one measured before it (its file refused otherwise), not
    measured on, and only there."""
    import time

    from suite.api import benchmark
    from suite.run import session

    measured = []

    def ceiling(device, precision, n=None):
        measured.append(precision)
        return {"flops": first_flops if len(measured) == 1 else 2.0}  # measured again: still below the run

    monkeypatch.setattr(session, "matmul_ceiling", ceiling)
    monkeypatch.setattr(benchmark, "matmul_ceiling", ceiling)
    bench = goodbench.Benchmark("stopped", samples_per_step=4, flops_per_step=1e6, max_steps=50, warmup_steps=2,
                                device="cpu", out=tmp_path / "stopped.json", sign=False)
    with pytest.raises(KeyboardInterrupt), bench:
        for run in bench.runs():
            for step in range(1, 51):
                with run.step():
                    time.sleep(0.002)
                if step == 30:  # 28 steady steps: a throughput figure
                    raise KeyboardInterrupt
    doc = json.loads((tmp_path / "stopped.json").read_text())
    assert doc["settings"]["interrupted"] is True and doc["runs"][0]["metrics"]["throughput"] is not None
    kept = doc["settings"]["matmul_ceiling"]["fp32"]
    assert measured == (["fp32", "fp32"] if first_flops == 1.0 else ["fp32"])
    assert ("at_end" in kept) is (first_flops == 1.0)
