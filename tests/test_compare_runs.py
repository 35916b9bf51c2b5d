"""goodbench compare across runs: the spread between each side's runs (several files a side, or
`goodbench run --repeat N`), the verdict with and without it, the one-run caveat, and files of
repeated runs that validate."""
from __future__ import annotations

import contextlib
import copy
import json
import uuid
from pathlib import Path

import factories
import forging
import numpy as np
import pytest

from suite.cli import main
from suite.compare import engine as compare
from suite.compare import estimates as compare_estimates
from suite.compare import report as compare_report
from suite.compare import stats as compare_stats
from suite.figures import tta as tta_meter
from suite.record import results
from suite.run.session import _seeds_and_repeats
from suite.validate import check_document
from suite.validate.document_rules import _check_seeds
from workloads.pinned import SEEDS

GPT2 = forging.real("gpt2-124m")  # a real CPU smoke run of a throughput workload


# ---------------------------------------------------------------- the spread between runs
def drifting_runs(rng: np.random.Generator, runs: int, drift: float, steps: int = 100,
                  mean: float = 0.05, cv: float = 0.02) -> list[np.ndarray]:
    """Windows of ``runs`` runs of one configuration: each run's level moves by a relative
    ``drift`` (sd) from run to run (the machine's noise between runs), its steps by ``cv``."""
    return [mean * (1 + drift * rng.standard_normal()) * (1 + cv * rng.standard_normal(steps))
            for _ in range(runs)]


def side(windows: list[np.ndarray]) -> compare_stats.Estimate:
    """One side's steps/s: across its runs when it has several (as compare_estimates does)."""
    within = compare_stats.rate_estimate(windows)
    return compare_estimates.across(windows, list(range(len(windows))), "steps_per_s", within, "runs") \
        if len(windows) > 1 else within


def false_alarms(runs: int, sims: int = 300, drift: float = 0.04) -> float:
    """Share of identical BASE/NEW pairs (machine drift between runs, nothing changed) whose
    samples/s interval excludes 1."""
    rng = np.random.default_rng(11)
    alarms = 0
    for _ in range(sims):
        r = compare_stats.ratio_interval(side(drifting_runs(rng, runs, drift)), side(drifting_runs(rng, runs, drift)))
        assert r.low is not None and r.high is not None
        alarms += not r.low <= 1 <= r.high
    return alarms / sims


def test_the_noise_inside_one_run_does_not_see_the_drift_between_runs():
    """With 4% drift between runs and 2% noise between steps, one run a side calls identical
    code different most of the time; five runs a side keep it near the 5% a 95% interval allows."""
    assert false_alarms(1) > 0.5
    assert false_alarms(5) <= 0.08


def test_across_runs_is_the_mean_of_the_runs_with_the_spread_between_them():
    windows = [np.full(50, 0.10), np.full(50, 0.125), np.full(50, 0.08)]  # 10, 8 and 12.5 steps/s
    for w in windows:
        w += np.linspace(-1e-4, 1e-4, 50)  # a little noise inside each run
    est = side(windows)
    values = [1 / w.mean() for w in windows]
    assert est.spread == "runs" and est.n == 3 and est.df == 2
    assert est.value == pytest.approx(np.mean(values))
    assert est.log_se == pytest.approx(np.std(values, ddof=1) / np.sqrt(3) / np.mean(values))
    assert est.fallback is not None and est.fallback.spread == ""  # the batch-means estimate, kept


def test_runs_that_agree_by_chance_are_never_tighter_than_the_noise_inside_them():
    rng = np.random.default_rng(3)
    base = 0.05 * (1 + 0.05 * rng.standard_normal(400))
    windows = [base[:200], base[200:] * (base[:200].mean() / base[200:].mean())]  # equal means
    est = side(windows)
    assert est.log_se == pytest.approx(est.fallback.log_se)
    assert est.log_se > 0


# ---------------------------------------------------------------- documents of several runs
def with_runs(doc: dict, factors: list[float]) -> dict:
    """``doc`` with its one run repeated, the k-th run's step times those of a quiet machine
    (the run's mean, 1% noise) scaled by ``factors[k]``."""
    out = copy.deepcopy(doc)
    run = out["runs"][0]
    out["runs"] = []
    rng = np.random.default_rng(len(factors))
    for k, factor in enumerate(factors, 1):
        r = copy.deepcopy(run)
        quiet = np.mean(run["step_times_s"]) * (1 + 0.01 * rng.standard_normal(len(run["step_times_s"])))
        r["step_times_s"] = (quiet * factor).tolist()
        r["run_id"], r["repeat"] = uuid.uuid4().hex, k
        out["runs"].append(r)
    return out


def samples_row(base: dict, new: dict) -> compare.Row:
    column = compare.compare_documents(base, new)
    return next(r for p in column.pairs for r in p.rows if r.figure == "samples_per_s")


def test_one_run_a_side_is_judged_within_the_run_and_labelled():
    base, slower = with_runs(GPT2, [1.0]), with_runs(GPT2, [1.06])
    row = samples_row(base, slower)
    assert row.spread == compare.ONE_RUN and row.verdict == compare.SLOWER
    columns = [compare.compare_documents(base, slower)]
    gate = compare.Gate.parse(["5"])
    out = compare_report.text("base.json", base, columns, gate, gate.apply(columns), gate.unchecked(columns))
    assert "slower (one run, regression)" in out
    assert "one run per side cannot tell a real change from machine noise" in out
    assert "judged without the spread between files" in out
    # the interval of one run a side is the step-time interval it always was (batch means)
    b = compare_stats.rate_estimate([compare_estimates.window_times(base["runs"][0])])
    n = compare_stats.rate_estimate([compare_estimates.window_times(slower["runs"][0])])
    r = compare_stats.ratio_interval(b, n)
    assert (row.ratio, row.low, row.high) == pytest.approx((r.ratio, r.low, r.high))


def side_of_files(*factors: list[float]) -> dict:
    """One side of several files (compare BASE... --vs NEW...): a file of runs per list of factors."""
    return compare.merge_side([with_runs(GPT2, f) for f in factors])


def test_a_difference_within_the_spread_between_files_gets_no_verdict_and_passes_the_gate():
    """The NEW files average 6% slower, but the files of each side spread by more than that."""
    base, new = side_of_files([0.92], [1.0], [1.08]), side_of_files([0.98], [1.06], [1.14])
    row = samples_row(base, new)
    assert row.spread == compare.ACROSS_FILES and row.verdict == compare.SAME
    assert row.ratio == pytest.approx(np.mean([1 / f for f in (0.98, 1.06, 1.14)])
                                      / np.mean([1 / f for f in (0.92, 1.0, 1.08)]), rel=1e-3)
    columns = [compare.compare_documents(base, new)]
    assert compare.Gate.parse(["5"]).apply(columns) == []
    assert compare_report.caveat_lines(columns) == []


def test_a_difference_beyond_the_spread_between_files_is_a_regression():
    base, new = side_of_files([0.99], [1.0], [1.01], [1.0]), side_of_files([1.10], [1.11], [1.09], [1.10])
    row = samples_row(base, new)
    assert row.spread == compare.ACROSS_FILES and row.verdict == compare.SLOWER
    columns = [compare.compare_documents(base, new)]
    assert [key for _, key, _ in compare.Gate.parse(["5"]).apply(columns)] == ["gpt2-124m@smoke"]
    text = compare_report.text("b", base, columns)
    assert "slower (regression)" in text and "cannot tell a real change" not in text


def test_files_are_the_units_not_their_runs():
    """Runs of one file agree closely and the files do not: the spread between files decides
    (runs of one process share its conditions), where counting runs would call it slower."""
    base, new = side_of_files([1.0, 1.001, 0.999], [1.06, 1.061, 1.059]), side_of_files([1.03, 1.031, 1.029], [1.09, 1.091, 1.089])
    row = samples_row(base, new)
    assert row.spread == compare.ACROSS_FILES and row.verdict == compare.SAME
    base_runs = with_runs(GPT2, [1.0, 1.001, 0.999, 1.06, 1.061, 1.059])
    new_runs = with_runs(GPT2, [1.03, 1.031, 1.029, 1.09, 1.091, 1.089])
    assert samples_row(base_runs, new_runs).spread == compare.ACROSS_RUNS


def test_one_file_of_several_runs_a_side_is_judged_across_its_runs_and_labelled():
    base, new = with_runs(GPT2, [0.99, 1.0, 1.01]), with_runs(GPT2, [1.10, 1.11, 1.09])
    columns = [compare.compare_documents(base, new)]
    row = next(r for r in columns[0].pairs[0].rows if r.figure == "samples_per_s")
    assert row.spread == compare.ACROSS_RUNS and row.verdict == compare.SLOWER
    text = compare_report.text("b", base, columns)
    assert "slower (one file)" in text and "one file per side cannot tell a real change" in text


def test_a_side_with_less_sets_the_level_of_both():
    assert samples_row(with_runs(GPT2, [0.9, 1.0, 1.1]), with_runs(GPT2, [1.0])).spread == compare.ONE_RUN
    assert samples_row(side_of_files([0.9], [1.0], [1.1]), with_runs(GPT2, [1.0, 1.01])).spread == compare.ACROSS_RUNS
    base, new = with_runs(GPT2, [0.9, 1.0, 1.1]), with_runs(GPT2, [1.0])
    pooled = compare_stats.rate_estimate([compare_estimates.window_times(r) for r in base["runs"]])
    assert samples_row(base, new).base == pytest.approx(pooled.value * GPT2["runs"][0]["metrics"]["samples_per_step"])


def test_a_side_without_a_complete_run_is_not_compared_and_raises_no_one_run_caveat():
    base, failed = with_runs(GPT2, [1.0, 1.01]), with_runs(GPT2, [1.0])
    failed["runs"][0]["status"] = "failed"
    columns = [compare.compare_documents(base, failed)]
    row = next(r for r in columns[0].pairs[0].rows if r.figure == "samples_per_s")
    assert row.verdict == compare.NOT_COMPARED and row.spread == "" and row.reason.startswith("NEW: failed run")
    assert compare_report.caveat_lines(columns) == []


def test_files_of_one_side_are_merged_and_must_agree():
    merged = compare.merge_side([with_runs(GPT2, [1.0]), with_runs(GPT2, [1.02])])
    assert len(merged["runs"]) == 2
    assert samples_row(merged, merged).spread == compare.ACROSS_FILES
    open_doc = with_runs(GPT2, [1.0])
    open_doc["settings"] = {**open_doc["settings"], "division": "open", "open_changes": ["gpt2-124m: x"]}
    mixed = compare.merge_side([GPT2, open_doc])
    pair = compare.compare_documents(mixed, GPT2).pairs[0]
    assert not pair.comparable and "mixed divisions" in pair.reason


# ---------------------------------------------------------------- the command line
@pytest.fixture
def files(tmp_path):
    """Two valid single-run files (the stored smoke run of gpt2-124m, the second under another run id)."""
    paths = []
    for name in ("a.json", "b.json"):
        path = tmp_path / name
        doc = copy.deepcopy(GPT2)
        if paths:
            doc["runs"][0]["run_id"] = uuid.uuid4().hex
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


def test_cli_sides_of_several_files(files, capsys):
    assert main(["compare", files[0], files[1], "--vs", files[1], files[0], "--fail-on-regression", "5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"BASE   {files[0]} + {files[1]}")
    assert "cannot tell a real change" not in out and "regression gate" in out
    assert main(["compare", files[0], "--vs", files[1], "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["spread"], c["pairs"]) for c in data["caveats"]] == [(compare.ONE_RUN, ["gpt2-124m@smoke"])]
    row = next(f for f in data["new"][0]["pairs"][0]["figures"] if f["figure"] == "samples_per_s")
    assert row["spread"] == compare.ONE_RUN


def test_cli_refuses_a_file_or_a_run_given_twice_on_one_side(files, tmp_path, capsys):
    """Trial 15 #5: one file given twice on a side (or two files holding the same run) counted as
    independent sessions: zero-width intervals, and "faster"/"slower" on a ratio of 1.0000001."""
    copy_of_a = tmp_path / "copy-of-a.json"
    copy_of_a.write_text(Path(files[0]).read_text())
    shared = copy.deepcopy(GPT2)  # another file holding a's run
    shared["runs"][0]["step_times_s"][5] += 1e-6
    shared = forging.repair(shared)
    shared_path = tmp_path / "shared.json"
    shared_path.write_text(json.dumps(shared))
    for argv, why in [([files[0], str(copy_of_a), "--vs", files[1]],
                       f"BASE side: {files[0]} and {copy_of_a} are the same results file"),
                      ([files[0], "--vs", files[1], files[1]], f"NEW side: {files[1]} and {files[1]} are the same"),
                      ([files[1], "--vs", str(copy_of_a)], None),  # one file a side: not refused
                      ([files[1], files[0], "--vs", str(copy_of_a)],  # a's run on both sides
                       f"BASE and NEW sides: {files[0]} and {copy_of_a} are the same results file"),
                      ([files[0], "--vs", files[1], str(copy_of_a), str(shared_path)],
                       f"NEW side: {copy_of_a} and {shared_path} hold the same run ({GPT2['runs'][0]['run_id']})")]:
        with pytest.raises(SystemExit) if why else contextlib.nullcontext() as exc:
            assert main(["compare", *argv]) == 0
        err = capsys.readouterr().err
        if why:
            assert exc.value.code == 2 and why in err.strip().splitlines()[-1]


def test_cli_two_file_form_is_unchanged(files, capsys):
    assert main(["compare", files[0], files[1]]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith(f"NEW    {files[1]}")
    assert "one run per side cannot tell a real change from machine noise" in out


@pytest.mark.parametrize("argv", [["compare", "a.json", "--vs"], ["compare", "a.json"]])
def test_cli_vs_usage_errors_exit_2(argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


# ---------------------------------------------------------------- goodbench run --repeat
def test_repeats_follow_each_seed():
    s1, s2 = SEEDS[:2]
    assert _seeds_and_repeats(2, 3) == [(s1, 1), (s1, 2), (s1, 3), (s2, 1), (s2, 2), (s2, 3)]
    assert _seeds_and_repeats(1, 1) == [(s1, None)]  # a run made once carries no repeat number


@pytest.mark.parametrize("extra", [["-w", "dlrm-small"], ["-w", "gpt2-124m", "--checkpoint-every", "5"]])
def test_run_repeat_usage_errors_exit_2(extra, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", *extra, "--repeat", "2", "--device", "cpu", "-o", "never.json"])
    assert exc.value.code == 2
    assert "--repeat" in capsys.readouterr().err


def test_a_seed_may_repeat_only_numbered_and_only_for_throughput():
    def runs(kind: str, repeats: list[int | None]) -> list[tuple[int, dict]]:
        out = []
        for i, k in enumerate(repeats):
            run = {"workload": {"id": "w", "kind": kind}, "scale": "smoke", "seed": 1}
            if k is not None:
                run["repeat"] = k
            out.append((i, run))
        return out

    assert _check_seeds({}, runs("throughput", [1, 2, 3]), None) == []
    assert [p.code for p in _check_seeds({}, runs("throughput", [1, 1]), None)] == ["duplicate-seed"]
    assert [p.code for p in _check_seeds({}, runs("throughput", [None, None]), None)] == ["duplicate-seed"]
    assert [p.code for p in _check_seeds({}, runs("tta", [1, 2]), None)] == ["duplicate-seed"]


@pytest.mark.slow
def test_run_repeat_writes_runs_that_validate_and_compare_across(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["run", "-w", "gpt2-124m", "--scale", "smoke", "--device", "cpu", "--no-sign",
                 "--repeat", str(compare_estimates.MIN_UNITS), "-o", str(out)]) == 0  # the fewest runs with a spread between them
    doc = results.load(str(out))
    assert check_document(doc) == []  # rules v6: run-span, duplicate-steps, duplicate-seed among them
    runs = doc["runs"]
    assert [r["repeat"] for r in runs] == [1, 2] and len({r["seed"] for r in runs}) == 1
    assert len({r["run_id"] for r in runs}) == 2 and doc["settings"]["repeat"] == 2
    assert doc["summary"]["gpt2-124m@smoke"]["seeds"] == [runs[0]["seed"]]
    capsys.readouterr()
    assert main(["compare", str(out), "--vs", str(out), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = next(f for f in data["new"][0]["pairs"][0]["figures"] if f["figure"] == "samples_per_s")
    assert row["spread"] == compare.ACROSS_RUNS  # one file a side: across its runs, with the caveat
    assert [(c["spread"], c["pairs"]) for c in data["caveats"]] == [(compare.ACROSS_RUNS, ["gpt2-124m@smoke"])]


# ---------------------------------------------------------------- what one run a side says (walkthrough 4)
def noisy(doc: dict, factor: float, sigma: float, seed: int = 3) -> dict:
    """``doc`` with its one run's step times scaled by ``factor`` and spread by a log-normal
    noise of mean 1 and ``sigma`` (a machine under heavy load)."""
    out = copy.deepcopy(doc)
    run = out["runs"][0]
    rng = np.random.default_rng(seed)
    times = np.asarray(run["step_times_s"])
    run["step_times_s"] = (times * factor * rng.lognormal(-sigma ** 2 / 2, sigma, times.size)).tolist()
    run["run_id"] = uuid.uuid4().hex
    return out


@pytest.fixture
def read_as(monkeypatch):
    """``goodbench compare``'s files read as the documents given by name (the engine's input,
    without the validator: these step times were edited)."""
    from suite.commands import compare as compare_command

    docs: dict[str, dict] = {}
    monkeypatch.setattr(compare_command, "_valid_document", lambda path, stale_out=None: docs[path])
    return docs


def test_cli_fails_on_an_undecided_gated_figure_only_when_asked(read_as, capsys):
    read_as.update({"base.json": with_runs(GPT2, [1.0]), "new.json": noisy(GPT2, 1.2, 1.0, seed=0)})
    row = samples_row(read_as["base.json"], read_as["new.json"])
    assert row.verdict == compare.SAME and row.ratio < 0.95 and row.spread == compare.ONE_RUN  # undecided
    assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5"]) == 0
    gate_line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("regression gate"))
    assert ": passed, undecided: gpt2-124m@smoke samples/s " in gate_line
    assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5", "--fail-on-undecided"]) == 1
    assert ": FAILED, undecided: gpt2-124m@smoke samples/s " in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:  # nothing to judge undecided without the gate's thresholds
        main(["compare", "base.json", "new.json", "--fail-on-undecided"])
    assert exc.value.code == 2 and "--fail-on-regression" in capsys.readouterr().err


def test_the_gate_sorts_its_figures_once_per_command_in_every_format(read_as, capsys, monkeypatch):
    """Regressions and undecided figures come from one pass (:meth:`Gate.judge`), made once a
    command: its verdict, its lines and its exit status all read that pass."""
    read_as.update({"base.json": with_runs(GPT2, [1.0]), "new.json": noisy(GPT2, 1.2, 1.0, seed=0),
                    "slow.json": with_runs(GPT2, [1.06])})
    passes = []
    real = compare.Gate._sort
    monkeypatch.setattr(compare.Gate, "_sort", lambda self, columns: passes.append(1) or real(self, columns))
    for fmt, strict, status in (("text", [], 0), ("json", [], 0), ("markdown", ["--fail-on-undecided"], 1)):
        passes.clear()
        assert main(["compare", "base.json", "new.json", "slow.json", "--fail-on-regression", "5",
                     "--format", fmt, *strict]) == 1  # slow.json: a regression
        assert passes == [1], fmt
        out = capsys.readouterr().out
        assert "samples/s" in out and ("undecided" in out)
        passes.clear()
        assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5", "--format", fmt, *strict]) == status
        assert passes == [1], fmt
        capsys.readouterr()
    columns = [compare.compare_documents(read_as["base.json"], read_as[n], n) for n in ("new.json", "slow.json")]
    gate = compare.Gate.parse(["5"])
    assert gate.undecided(columns) and not any(r.regression for c in columns for p in c.pairs for r in p.rows)
    regressions, undecided = gate.judge(columns)
    assert (regressions, undecided) == (gate.apply(columns), gate.undecided(columns))
    assert [key for file, key, row in regressions] == ["gpt2-124m@smoke"] and regressions[0][2].regression
    assert {file for file, _, _ in regressions} == {"slow.json"} and {file for file, _, _ in undecided} == {"new.json"}


def test_cli_fail_on_undecided_fails_on_a_new_file_whose_run_failed(tmp_path, capsys):
    """Review 14 #5: --fail-on-undecided ("fail where it cannot tell") passed a NEW file whose run
    failed: its figures are "not compared", listed as not checked, and the gate passed with exit 0.
    Trial 15 #4: the gate alone fails on it too (a workload that crashed is no pass). A file read
    and validated as the command reads every file (no stand-in reader)."""
    failed = forging.repair(_with_failed_run(GPT2))
    assert check_document(failed) == []
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    base.write_text(json.dumps(GPT2))
    new.write_text(json.dumps(failed))
    gate = ["--fail-on-regression", "5"]
    # a gated figure BASE measured that NEW has no complete run of fails the rule alone too (trial 15 #4)
    for strict in ([], ["--fail-on-undecided"]):
        assert main(["compare", str(base), str(new), *gate, *strict]) == 1
        out = capsys.readouterr().out
        assert "regression gate (worse by samples/s > 5%, TTA score > 5%): FAILED" in out
        assert ("  measured in BASE, lost in NEW (this fails the gate): gpt2-124m@smoke samples/s "
                "(NEW: failed run") in out and "not checked" not in out
    assert main(["compare", str(base), str(new), *gate, "--fail-on-undecided", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)["gate"]
    assert data["failed"] is True and data["regressions"] == [] and data["undecided"] == []
    assert data["not_checked"] == []
    assert [(u["figure"], u["verdict"], u["why"].startswith("NEW: failed run")) for u in data["lost_in_new"]] == \
        [("samples_per_s", compare.NOT_COMPARED, True)]
    # BASE's run failed instead: NEW is not worse by it, so only --fail-on-undecided fails it
    assert main(["compare", str(new), str(base), *gate]) == 0
    out = capsys.readouterr().out
    assert "): passed" in out and "  not checked: gpt2-124m@smoke samples/s (not compared, NEW)" in out
    assert main(["compare", str(new), str(base), *gate, "--fail-on-undecided"]) == 1
    assert ("  not checked (--fail-on-undecided: the gate cannot tell them, so they fail it): "
            "gpt2-124m@smoke samples/s (not compared, NEW)") in capsys.readouterr().out
    # a figure measured on neither side (a throughput workload's TTA score) is not the gate's: the
    # same base against itself passes the strict gate
    assert main(["compare", str(base), str(base), *gate, "--fail-on-undecided"]) == 0
    assert "not checked" not in capsys.readouterr().out
    # no interval (a p99 of a smoke window: an interval needs 1,000 steps) fails it too
    assert main(["compare", str(base), str(base), "--fail-on-regression", "step_time_p99=20"]) == 0
    capsys.readouterr()
    assert main(["compare", str(base), str(base), "--fail-on-regression", "step_time_p99=20",
                 "--fail-on-undecided"]) == 1
    assert "step time p99 (no interval, NEW)" in capsys.readouterr().out


def _with_failed_run(doc: dict) -> dict:
    """``doc`` with its one run failed part-way (status, error and its log's run_stop saying so)."""
    out = copy.deepcopy(doc)
    factories.set_status(out["runs"][0], "failed", "RuntimeError after 40 of 150 steps")
    return out


@pytest.mark.parametrize("kind", ["no interval", "partial", "one side", "not reached", "reached in NEW only"])
def test_fail_on_undecided_fails_on_every_gated_figure_it_could_not_judge(kind):
    """Under --fail-on-undecided, a gated figure the gate could not judge fails it: no interval,
    not compared (a partial side), measured on one side only (energy where NEW has no meter; a
    TTA score NEW reached and BASE did not). Without it, each passes as "not checked". A NEW
    that has no complete run, or whose complete runs never reached the target BASE reached, fails
    the gate alone."""
    f = compare.BY_ID["tta"]
    e = compare.BY_ID["energy_per_sample"]
    row = {"no interval": compare.Row(f.id, f.label, f.better, 60.0, 90.0, 1.5, None, None, compare.NO_INTERVAL,
                                      "not enough seeds (1 converged; an interval needs 2 per side)"),
           "partial": compare.Row(f.id, f.label, f.better, 60.0, None, None, None, None, compare.NOT_COMPARED,
                                  "NEW: partial run: not compared"),
           "one side": compare.Row(e.id, e.label, e.better, 0.5, None, None, None, None, compare.NOT_MEASURED,
                                   "NEW: no energy counter"),
           "not reached": compare.Row(f.id, f.label, f.better, 60.0, None, None, None, None, compare.NOT_REACHED,
                                      "NEW: no seed reached the target"),
           "reached in NEW only": compare.Row(f.id, f.label, f.better, None, 60.0, None, None, None,
                                              compare.NOT_MEASURED, "BASE: no seed reached the target")}[kind]
    columns = [compare.Column("new.json", {}, [compare.Pair("w@smoke", "w", "smoke", True, rows=[row])], [], [])]
    gate = compare.Gate.parse(["5", "energy_per_sample=5"])
    unchecked = gate.unchecked(columns)
    assert unchecked == [("new.json", "w@smoke", row)] and gate.undecided(columns) == []
    assert gate.failed([], [], unchecked) is (kind in ("partial", "not reached"))  # fails alone
    gate.fail_on_undecided = True
    assert gate.failed([], [], unchecked)
    assert json.loads(compare_report.as_json("base.json", {}, columns, gate, [], unchecked))["gate"]["failed"] is True
    absent = compare.Row(f.id, f.label, f.better, None, None, None, None, None, compare.NOT_MEASURED,
                         "throughput workload: no target")  # measured on neither side: not the gate's
    assert gate.unchecked([compare.Column("new.json", {}, [compare.Pair("w@smoke", "w", "smoke", True,
                                                                        rows=[absent])], [], [])]) == []


def test_a_workload_of_base_missing_from_new_fails_the_gate(tmp_path, capsys):
    """Trial 15 #4: a NEW without 4 of BASE's 5 workloads passed ``--fail-on-regression 5
    --fail-on-undecided``: workloads only in BASE were never the gate's. Each gated figure BASE
    measured of a workload NEW has no run of now fails the gate, with or without the flag."""
    new = tmp_path / "new.json"
    new.write_text(json.dumps(GPT2))
    base = "tests/fixtures/reference-smoke.json"
    for strict in ([], ["--fail-on-undecided"]):
        assert main(["compare", base, str(new), "--fail-on-regression", "5", *strict]) == 1
        out = capsys.readouterr().out
        assert "regression gate (worse by samples/s > 5%, TTA score > 5%): FAILED" in out
        assert ("  measured in BASE, lost in NEW (this fails the gate): lm-char@smoke samples/s, "
                "TTA score (no run of it, NEW); fashion-cnn@smoke samples/s, TTA score (no run of it, NEW); "
                "llama-1b@smoke samples/s (no run of it, NEW); dlrm-small@smoke samples/s, TTA score "
                "(no run of it, NEW)") in out
    assert main(["compare", base, str(new), "--fail-on-regression", "goodput=5", "--format", "json"]) == 1
    missing = json.loads(capsys.readouterr().out)["gate"]["lost_in_new"]
    assert {(m["key"], m["figure"]) for m in missing} == {(k, "goodput") for k in (
        "lm-char@smoke", "fashion-cnn@smoke", "llama-1b@smoke", "dlrm-small@smoke")}
    assert all(m["why"] == f"only in BASE: {new} has no run of it" and m["verdict"] == compare.MISSING
               for m in missing)
    assert main(["compare", base, str(new)]) == 0  # no gate: listed, no failure


def _pair_of(rows: list[tuple[str, str, float, float, float]]) -> compare.Column:
    """A column of one pair judged within one run, from (figure, verdict-giving ratio, low, high)."""
    out = []
    for fid, ratio, low, high in rows:
        f = compare.BY_ID[fid]
        out.append(compare.Row(f.id, f.label, f.better, 1.0, ratio, ratio, low, high,
                               compare.verdict(f, compare_stats.Ratio(ratio, low, high, 20.0)),
                               spread=compare.ONE_RUN))
    return compare.Column("new.json", {}, [compare.Pair("lm-char@smoke", "lm-char", "smoke", True, rows=out)], [], [])


def test_verdicts_that_point_different_ways_are_explained_under_the_table():
    """Walkthrough 4, M4: "no significant change" in samples/s beside "faster" in the p50 read as
    a contradiction; a note says what each measures. Verdicts that agree get no note."""
    apart = [_pair_of([("samples_per_s", 1.094, 0.404, 2.963), ("step_time_p50", 0.262, 0.116, 0.595)])]
    text = compare_report.text("base.json", {}, apart)
    note = next(x for x in text.splitlines() if x.startswith("lm-char@smoke: samples/s no significant change "
                                                             "beside step time p50 faster is no contradiction"))
    assert "mean" in note and "median" in note and "one run a side" in note
    assert "no contradiction" in compare_report.markdown("base.json", {}, apart)
    assert json.loads(compare_report.as_json("base.json", {}, apart))["notes"] == [note]
    agree = [_pair_of([("samples_per_s", 0.8, 0.7, 0.9), ("step_time_p50", 1.25, 1.1, 1.4)])]
    assert "no contradiction" not in compare_report.text("base.json", {}, agree)
    assert compare_report.disagreement_lines(agree) == []


def test_a_partial_side_is_not_compared_rather_than_not_measured():
    """Walkthrough 4, M3: an interrupted BASE read "goodput not measured" though goodbench show
    prints its goodput: it was measured, and only complete runs are compared."""
    base, new = with_runs(GPT2, [1.0]), with_runs(GPT2, [1.0])
    base["runs"][0]["status"] = "partial"
    columns = [compare.compare_documents(base, new)]
    rows = {r.figure: r for r in columns[0].pairs[0].rows}
    assert rows["goodput"].verdict == compare.NOT_COMPARED and rows["samples_per_s"].verdict == compare.NOT_COMPARED
    assert rows["goodput"].reason.startswith("BASE: partial run: not compared (only complete runs are")
    assert rows["mfu"].verdict == compare.NOT_MEASURED  # not measured on the CPU: on NEW's side too
    text = compare_report.text("base.json", base, columns)
    goodput = next(x for x in text.splitlines() if x.strip().startswith("goodput"))
    assert "not compared [" in goodput and "not measured" not in goodput
    gate = compare.Gate.parse(["5"])
    assert [row.figure for _, _, row in gate.unchecked(columns)] == ["samples_per_s"]  # said, never passed silently


def test_goodput_reads_as_a_percentage_in_the_text_and_a_fraction_in_json():
    """Walkthrough 4, M7: compare printed goodput as 0.9229 where show and the site print 92.3%."""
    columns = [compare.compare_documents(GPT2, GPT2)]
    value = next(r for r in columns[0].pairs[0].rows if r.figure == "goodput").base
    shown = f"{100 * value:.3g}%"
    line = next(x for x in compare_report.text("a.json", GPT2, columns).splitlines() if x.strip().startswith("goodput"))
    assert line.split()[1:3] == [shown, shown]
    assert f"| goodput | {shown} | {shown} |" in compare_report.markdown("a.json", GPT2, columns)
    data = json.loads(compare_report.as_json("a.json", GPT2, columns))
    assert next(f for f in data["new"][0]["pairs"][0]["figures"] if f["figure"] == "goodput")["base"] == value


# ---------------------------------------------------------------- what the gate loses in NEW (review A #5, #11)
LM = forging.real("lm-char")  # a real CPU smoke run of a TTA workload: one seed, which reached the target


def seeds(doc: dict, times: list[float | None]) -> dict:
    """``doc`` with its one run repeated as one seed per time to target (None: the seed ran to
    its end without reaching the target)."""
    out = copy.deepcopy(doc)
    run = out["runs"][0]
    out["runs"] = []
    for k, tta in enumerate(times, 1):
        r = copy.deepcopy(run)
        r["run_id"], r["seed"] = uuid.uuid4().hex, k
        r["metrics"]["tta_s"] = tta
        out["runs"].append(r)
    return out


def test_a_new_whose_seeds_never_reach_the_target_base_reached_fails_the_gate(read_as, capsys):
    """Review A #5a: NEW's runs complete but none reaches the target, so it has no TTA score:
    "not measured" on one side, which passed the gate (``failed = False``). It is the largest TTA
    regression there is: lost in NEW, and it fails the gate on its line, with or without the flag."""
    never = seeds(LM, [None])
    assert compare_estimates.tta_estimate(never["runs"]).missed
    read_as.update({"base.json": LM, "new.json": never})
    for strict in ([], ["--fail-on-undecided"]):
        assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5", *strict]) == 1
        out = capsys.readouterr().out
        assert "regression gate (worse by samples/s > 5%, TTA score > 5%): FAILED" in out
        assert ("  measured in BASE, lost in NEW (this fails the gate): lm-char@smoke TTA score "
                "(NEW: no seed reached the target, NEW)") in out and "not checked" not in out
        assert f"{compare.NOT_REACHED} [" in next(x for x in out.splitlines() if x.strip().startswith("TTA score"))
    assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5", "--format", "json"]) == 1
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["failed"] is True and gate["not_checked"] == []
    assert gate["lost_in_new"] == [{"new": "new.json", "key": "lm-char@smoke", "figure": "tta",
                                    "verdict": compare.NOT_REACHED, "why": "NEW: no seed reached the target"}]


def test_a_new_whose_tta_score_is_invalid_where_base_had_a_valid_one_fails_the_gate():
    """Review A #5a: too few of NEW's seeds converged (2 of 3 missed: at most 1 may) while
    BASE's three did: NEW's score is invalid by the rules, so lost. One seed missing leaves a
    valid score, but against a BASE whose seeds all reached the target it is lost too (below)."""
    gate = compare.Gate.parse(["5"])
    base = seeds(LM, [14.0, 15.0, 16.0])
    for times, verdict in (([14.0, None, None], compare.NOT_REACHED), ([14.0, 15.0, None], compare.MISSED_MORE)):
        columns = [compare.compare_documents(base, seeds(LM, times), "new.json")]
        row = next(r for r in columns[0].pairs[0].rows if r.figure == "tta")
        unchecked = gate.unchecked(columns)
        assert gate.failed(*gate.judge(columns), unchecked)
        assert [(key, r.figure) for _, key, r in unchecked if gate.lost(r)] == [("lm-char@smoke", "tta")]
        assert row.verdict == verdict
        if verdict == compare.NOT_REACHED:
            assert row.reason.startswith("NEW: TTA score invalid: 2 seeds") and row.new is None
        else:
            assert row.new == 15.0


def tta_gate(base: list[float | None], new: list[float | None], specs: tuple[str, ...] = ("5",)):
    """(whether the gate fails, NEW's TTA row, the gate's lost rows) of BASE's and NEW's seeds."""
    gate = compare.Gate.parse(list(specs))
    columns = [compare.compare_documents(seeds(LM, base), seeds(LM, new), "new.json")]
    row = next(r for r in columns[0].pairs[0].rows if r.figure == "tta")
    unchecked = gate.unchecked(columns)
    return gate.failed(*gate.judge(columns), unchecked), row, [r for _, _, r in unchecked if gate.lost(r)]


@pytest.mark.parametrize("new", [[14.0, 15.0, None], [15.0, 15.5, None], [14.0, 16.5, None]])
def test_a_new_with_a_seed_that_no_longer_reaches_the_target_fails_the_gate(new, read_as, capsys):
    """Review C #5: the score drops one missed seed as the slowest, so NEW 14, 15 s and a miss
    scored as BASE 14, 15, 16 s: "no significant change", and the gate passed a convergence
    regression (also at 15, 15.5 and 14, 16.5: ratio 1.10, undecided). A larger share of NEW's
    seeds missing the target is lost: the gate fails on its line, with the reason, flag or not;
    the table keeps the score (the olympic mean) and its interval, and the JSON lists it under
    ``lost_in_new`` with its verdict."""
    base = [14.0, 15.0, 16.0]
    failed, row, lost = tta_gate(base, new)
    assert failed and lost == [row] and row.verdict == compare.MISSED_MORE and not row.regression
    assert row.new == tta_meter.score(dict(enumerate(new)))["olympic_mean_s"] == new[1]  # the faster seed dropped
    assert row.ratio == pytest.approx(row.new / 15.0) and row.low is not None
    assert row.reason.startswith("NEW: 1 of 3 seeds missed the target, BASE: 0 of 3; the scores alone: ")
    read_as.update({"base.json": seeds(LM, base), "new.json": seeds(LM, new)})
    for strict in ([], ["--fail-on-undecided"]):
        assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5", *strict]) == 1
        out = capsys.readouterr().out
        assert "regression gate (worse by samples/s > 5%, TTA score > 5%): FAILED" in out
        assert ("  target missed more often in NEW (this fails the gate): lm-char@smoke TTA score "
                "(NEW: 1 of 3 seeds missed the target, BASE: 0 of 3, NEW)") in out
        assert "undecided:" not in out and "lost in NEW" not in out
        tta_line = next(x for x in out.splitlines() if x.strip().startswith("TTA score"))
        assert f"{compare.MISSED_MORE} [" in tta_line and "×" in tta_line
    assert main(["compare", "base.json", "new.json", "--fail-on-regression", "5", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    gate = data["gate"]
    assert gate["failed"] is True and gate["regressions"] == [] and gate["undecided"] == []
    assert [x["figure"] for x in gate["not_checked"]] == []
    assert gate["lost_in_new"] == [{"new": "new.json", "key": "lm-char@smoke", "figure": "tta",
                                    "verdict": compare.MISSED_MORE, "why": row.reason}]
    figure = next(f for f in data["new"][0]["pairs"][0]["figures"] if f["figure"] == "tta")
    assert figure["verdict"] == compare.MISSED_MORE and figure["new"] == row.new and figure["ci95"] is not None
    assert main(["compare", "base.json", "new.json", "--format", "markdown", "--fail-on-regression", "5"]) == 1
    assert "- target missed more often in NEW (this fails the gate): lm-char@smoke TTA score" \
        in capsys.readouterr().out


@pytest.mark.parametrize("base, new, lost, why", [
    # as many seeds a side: the counts
    ([14.0, 15.0, None], [14.0, 15.0, None], False, None),  # equal misses: judged by the scores, as before
    ([14.0, 15.0, None], [14.0, 17.0, None], False, None),
    ([14.0, 15.0, None], [14.0, 15.0, 16.0], False, None),  # NEW misses fewer: no regression
    ([14.0, 15.0, 16.0], [14.0, 15.0, 16.0], False, None),
    # other seed counts: the share missed
    ([14.0, 15.0, 16.0], [14.0, 15.0, 16.0, 15.5, None], True,
     "NEW: 1 of 5 seeds missed the target, BASE: 0 of 3 (a larger share: 20% against 0%)"),
    ([14.0, 15.0, 16.0, 15.5, None], [14.0, 15.0, None], True,
     "NEW: 1 of 3 seeds missed the target, BASE: 1 of 5 (a larger share: 33% against 20%)"),
    ([14.0, 15.0, None], [14.0, 15.0, 16.0, 15.5, None], False, None),  # 1 of 5 against 1 of 3: a smaller share
    ([14.0, 15.0, 16.0, 15.5, None], [14.0, 15.0, 16.0, 15.5, None, 15.0], False, None),
    ([14.0, 15.0, None, 15.0, 16.0, 15.5], [14.0, 15.0, 16.0, 15.5, None], True,  # 1 of 6 against 1 of 5
     "NEW: 1 of 5 seeds missed the target, BASE: 1 of 6 (a larger share: 20% against 17%)"),
])
def test_seeds_missed_are_compared_by_count_or_by_share(base, new, lost, why):
    """The symmetric cases: equal misses pass as before (the scores decide), fewer in NEW is no
    regression, and with other seed counts a side the share missed is compared (strictly larger
    in NEW: lost, both counts and shares given)."""
    failed, row, lost_rows = tta_gate(base, new)
    assert (row.verdict == compare.MISSED_MORE) is lost and bool(lost_rows) is lost
    if lost:
        assert failed and row.reason.startswith(why + "; the scores alone: ")
    else:
        assert row.verdict in (compare.SAME, compare.SLOWER, compare.FASTER) and not failed


def test_a_seed_missed_more_often_in_new_only_fails_a_gate_on_the_tta_score():
    """The loss is the TTA score's: a gate on samples/s alone passes (the table still says it),
    and without a gate nothing fails. BASE's seeds missing while NEW's reach is never lost."""
    failed, row, lost = tta_gate([14.0, 15.0, 16.0], [14.0, 15.0, None], ("samples_per_s=5",))
    assert not failed and lost == [] and row.verdict == compare.MISSED_MORE
    failed, row, lost = tta_gate([14.0, 15.0, None], [14.0, 15.0, 16.0], ("tta=5",))
    assert not failed and lost == [] and row.verdict == compare.SAME


def test_a_target_base_never_reached_and_new_reaches_is_no_regression(read_as, capsys):
    """The symmetric case: BASE's seeds never reached the target and NEW's did. NEW is not worse
    by it: "not checked", which passes unless --fail-on-undecided. Neither side reaching it is
    not checked either (the gate cannot tell), never lost."""
    read_as.update({"never.json": seeds(LM, [None]), "never2.json": seeds(LM, [None]), "lm.json": LM})
    for new in ("lm.json", "never2.json"):
        assert main(["compare", "never.json", new, "--fail-on-regression", "5"]) == 0
        out = capsys.readouterr().out
        assert "): passed" in out and "lost in NEW" not in out
        assert "  not checked: lm-char@smoke TTA score (" in out
        assert main(["compare", "never.json", new, "--fail-on-regression", "5", "--fail-on-undecided"]) == 1
        assert "  not checked (--fail-on-undecided" in capsys.readouterr().out
    assert main(["compare", "never.json", "lm.json", "--fail-on-regression", "5", "--format", "json"]) == 0
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["lost_in_new"] == [] and gate["not_checked"] == [
        {"new": "lm.json", "key": "lm-char@smoke", "figure": "tta", "why": "BASE: no seed reached the target"}]


def test_a_workload_new_runs_only_at_another_scale_is_missing_at_base_scale(read_as, capsys):
    """Review A #5b: NEW ran gpt2-124m only at another scale than BASE: "scale differs", not
    comparable, passed the gate (``failed = False``) and the JSON's why lost the scale. BASE's
    figures at its scale are now missing in NEW (the gate fails), and the reason names both."""
    other = copy.deepcopy(GPT2)
    other["runs"][0]["scale"] = "full"
    both = copy.deepcopy(GPT2)
    both["runs"] += other["runs"]
    both["runs"][1]["run_id"] = uuid.uuid4().hex
    read_as.update({"base.json": GPT2, "full.json": other, "both.json": both})
    why = "scale differs (smoke in BASE, full in NEW)"
    for strict in ([], ["--fail-on-undecided"]):
        assert main(["compare", "base.json", "full.json", "--fail-on-regression", "5", *strict]) == 1
        out = capsys.readouterr().out
        assert "regression gate (worse by samples/s > 5%, TTA score > 5%): FAILED" in out
        assert (f"  measured in BASE, lost in NEW (this fails the gate): gpt2-124m@smoke samples/s ({why}: "
                "full.json has no run of it at smoke, NEW)") in out and "not checked" not in out
        assert "not comparable [1]" in out and f"[1] {why}" in out  # the table still says why
    assert main(["compare", "base.json", "full.json", "--fail-on-regression", "5", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["new"][0]["pairs"][0]["reason"] == why and data["gate"]["not_checked"] == []
    assert data["gate"]["lost_in_new"] == [
        {"new": "full.json", "key": "gpt2-124m@smoke", "figure": "samples_per_s", "verdict": compare.MISSING,
         "why": f"{why}: full.json has no run of it at smoke"}]
    # NEW ran it at BASE's scale too: compared there, and the other scale is only in NEW
    assert main(["compare", "base.json", "both.json", "--fail-on-regression", "50"]) == 0
    out = capsys.readouterr().out
    assert "only in NEW: gpt2-124m@full" in out and "lost in NEW" not in out


def test_a_side_of_several_files_refuses_a_run_without_a_run_id(read_as, capsys):
    """Review A #11: the --vs duplicate check tells runs apart by run_id and skipped a run without
    one, silently. A side of two files or more now refuses it (usage error, one line, naming the
    file and the run); a side of one file, where nothing can be counted twice, is not refused by
    the check. (The schema requires a run id: only a file read without the schema checked lacks one.)"""
    anonymous = with_runs(GPT2, [1.0])
    del anonymous["runs"][0]["run_id"]
    read_as.update({"a.json": with_runs(GPT2, [1.0]), "b.json": with_runs(GPT2, [1.01]), "anon.json": anonymous})
    with pytest.raises(SystemExit) as exc:
        main(["compare", "a.json", "--vs", "b.json", "anon.json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and "NEW side: anon.json: runs[0] has no run id, so it cannot be told from the " \
        "side's other runs" in err[-1]
    assert compare.repeated(["anon.json"], [anonymous]) is None  # one file a side: nothing to count twice


def test_a_side_of_several_files_is_priced_by_the_score_the_table_shows_in_either_order(read_as, capsys):
    """A side of two files (``compare A B --vs C``) holds seed 1 twice: its cost to target was
    priced from the leaderboard's entry of the merged runs, keyed by seed, so the file named last
    set it alone (a new user saw it change with the order). Now it is the side's TTA score as the
    comparison computes it, over every run of every file: the same in either order."""
    read_as.update({"a.json": seeds(LM, [10.0]), "b.json": seeds(LM, [30.0]), "c.json": seeds(LM, [12.0])})
    for name in ("a.json", "b.json", "c.json"):
        read_as[name]["runs"][0]["run_id"] = uuid.uuid4().hex  # one run per file, told apart
    priced = []
    for base in (["a.json", "b.json"], ["b.json", "a.json"]):
        assert main(["compare", *base, "--vs", "c.json", "--format", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        [tta] = [f for f in out["new"][0]["pairs"][0]["figures"] if f["figure"] == "tta"]
        [side, _] = out["cost_to_target"]
        assert tta["base"] == pytest.approx(20.0)  # the mean of the side's two seeds' times
        assert side["accelerator_hours"] == pytest.approx(results.world_size(LM["runs"][0]) * 20.0 / 3600)
        priced.append(side["accelerator_hours"])
    assert priced[0] == priced[1]


def test_a_run_on_both_sides_is_a_usage_error_unless_both_sides_are_the_same_files(read_as, capsys):
    """``compare A B --vs B`` compared B's run with itself, and gave its verdict with no word (a new
    user's find; ``compare B B`` notes it): a run on both sides is now a usage error naming the
    file, or both files where a copy holds it; the same files on both sides, in any order, are the
    check of the statistics ``compare X X`` is, with its note."""
    read_as.update({"a.json": with_runs(GPT2, [1.0]), "b.json": with_runs(GPT2, [1.01])})
    read_as["copy.json"] = read_as["b.json"]
    for argv, said in ((["a.json", "b.json", "--vs", "b.json"], "b.json is on both"),
                       (["a.json", "b.json", "--vs", "copy.json"], "b.json and copy.json are the same results file")):
        with pytest.raises(SystemExit) as exc:
            main(["compare", *argv])
        err = capsys.readouterr().err.strip().splitlines()
        assert exc.value.code == 2 and err[-1].endswith(
            f"BASE and NEW sides: {said}: a run on both sides would be compared with itself"), err
    assert main(["compare", "a.json", "b.json", "--vs", "b.json", "a.json"]) == 0
    assert "note: both sides are the same results files (b.json + a.json): their ratios are 1 by construction" \
        in capsys.readouterr().err
    assert main(["compare", "a.json", "--vs", "b.json"]) == 0
    assert "note:" not in capsys.readouterr().err


def test_a_side_of_one_file_whose_runs_have_no_run_id_is_compared_and_priced(read_as, capsys):
    """A side of one file is compared whether or not its runs carry run ids (they only tell apart
    the runs of several files on one side): its cost to target was priced through the
    leaderboard's entries, which read each run's ``run_id`` and raised KeyError. Now priced as the
    same file with ids is, as BASE, as NEW and as a --vs side of one file."""
    anonymous = copy.deepcopy(LM)
    for run in anonymous["runs"]:
        del run["run_id"]
    read_as.update({"lm.json": LM, "anon.json": anonymous})
    for argv in (["lm.json", "anon.json"], ["anon.json", "lm.json"], ["lm.json", "--vs", "anon.json"]):
        assert main(["compare", *argv, "--format", "json"]) == 0
        priced = json.loads(capsys.readouterr().out)["cost_to_target"]
        assert [c["side"] for c in priced] == [argv[0], argv[-1]]
        assert priced[0]["accelerator_hours"] is not None
        assert {**priced[0], "side": None} == {**priced[1], "side": None}
        assert main(["compare", *argv]) == 0
        assert f"  {argv[-1]}: lm-char smoke on " in capsys.readouterr().out
