"""goodbench compare: the interval's coverage on simulated step times and seeds, verdicts, the
regression gate, files that may not be compared, the output formats, and two real CPU smoke runs
where one workload is made genuinely slower (tests/slowed_run.py)."""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import factories
import forging
import numpy as np
import pytest

from suite.cli import main
from suite.compare import engine as compare
from suite.compare import estimates as compare_estimates
from suite.compare import stats as compare_stats
from suite.record import results
from workloads import registry

REPO = Path(__file__).resolve().parent.parent
REFERENCE = forging.STORED_CURRENT[0]  # a real CPU smoke result of the five workloads, current rules


# ---------------------------------------------------------------- simulated step times
def ar1(rng: np.random.Generator, n: int, phi: float, mean: float = 0.05, cv: float = 0.05) -> np.ndarray:
    """Step times around ``mean`` whose noise is an AR(1) series (lag-k correlation phi**k) of
    relative standard deviation ``cv``; phi = 0: independent steps."""
    from scipy.signal import lfilter

    e = rng.standard_normal(n + 100) * np.sqrt(1 - phi ** 2)
    e[0] = rng.standard_normal()  # x[0] ~ N(0, 1): unit variance throughout
    x = lfilter([1.0], [1.0, -phi], e)  # x[i] = phi * x[i-1] + e[i]
    return mean * (1 + cv * x[100:])


def gamma_steps(rng: np.random.Generator, n: int, mean: float = 0.05, cv: float = 0.05) -> np.ndarray:
    """Independent, right-skewed step times (gamma) of mean ``mean`` and relative spread ``cv``."""
    k = 1 / cv ** 2
    return rng.gamma(k, mean / k, n)


def coverage(draw, figure_estimate, true_ratio: float, sims: int, seed: int) -> float:
    """Share of ``sims`` simulated BASE/NEW pairs (NEW's step times ``true_ratio`` × BASE's
    distribution) whose interval covers the true ratio of the figure."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        base, new = draw(rng), draw(rng) * true_ratio
        r = compare_stats.ratio_interval(figure_estimate([base]), figure_estimate([new]))
        truth = 1 / true_ratio if figure_estimate is compare_stats.rate_estimate else true_ratio
        assert r.low is not None and r.high is not None
        hits += r.low <= truth <= r.high
    return hits / sims


@pytest.mark.parametrize("name, draw", [
    ("independent, skewed", lambda rng: gamma_steps(rng, 190)),
    ("AR(1) phi=0.5", lambda rng: ar1(rng, 190, 0.5)),
    ("AR(1) phi=0.8, short window", lambda rng: ar1(rng, 120, 0.8)),
    ("AR(1) phi=0.9, long window", lambda rng: ar1(rng, 2000, 0.9)),
])
def test_throughput_interval_covers_the_true_ratio(name, draw):
    """The 95% interval of a throughput ratio (batch means) covers the true ratio in at least
    93% of pairs drawn from one known distribution, NEW 10% slower, also when step times are
    autocorrelated."""
    assert coverage(draw, compare_stats.rate_estimate, 1.1, sims=400, seed=1) >= 0.93, name


def test_naive_interval_would_not_cover_autocorrelated_steps():
    """Why batch means: treating autocorrelated steps as independent (sd/√n) gives an interval
    that misses the true ratio far more often than 5% of the time."""
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(300):
        a, b = ar1(rng, 190, 0.8), ar1(rng, 190, 0.8)
        se = np.hypot(a.std(ddof=1) / np.sqrt(a.size) / a.mean(), b.std(ddof=1) / np.sqrt(b.size) / b.mean())
        ratio = a.mean() / b.mean()
        hits += ratio * np.exp(-1.96 * se) <= 1 <= ratio * np.exp(1.96 * se)
    assert hits / 300 < 0.85


@pytest.mark.slow
@pytest.mark.long  # a thousand simulated comparisons each
@pytest.mark.parametrize("name, draw", [
    ("independent, skewed", lambda rng: gamma_steps(rng, 190)),
    ("AR(1) phi=0.5", lambda rng: ar1(rng, 190, 0.5)),
])
def test_median_step_time_interval_covers_the_true_ratio(name, draw):
    """The p50 interval (moving-block bootstrap) covers the true ratio in ≥ 93% of pairs."""
    def p50(windows):
        return compare_stats.quantile_estimate(windows, 0.5, seed=int(windows[0][0] * 1e9))

    assert coverage(draw, p50, 1.1, sims=200, seed=3) >= 0.93, name


def test_tta_interval_over_seeds_covers_the_true_ratio():
    """TTA over 5 seeds a side (independent, log-normal times, NEW 10% slower): ≥ 93% coverage."""
    rng = np.random.default_rng(4)
    hits, sims = 0, 400
    for _ in range(sims):
        sides = []
        for scale in (1.0, 1.1):
            times = rng.lognormal(np.log(100 * scale), 0.05, 5)
            runs = [{"seed": s, "status": "complete", "metrics": {"tta_s": float(t)}} for s, t in enumerate(times)]
            sides.append(compare_estimates.tta_estimate(runs))
        r = compare_stats.ratio_interval(*sides)
        hits += r.low <= 1.1 <= r.high
    assert hits / sims >= 0.93


def test_batch_length_rule():
    """√n for independent steps; longer batches for autocorrelated ones; 5 to 30 batches."""
    rng = np.random.default_rng(5)
    assert compare_stats.batch_length(gamma_steps(rng, 190)) == 14
    assert compare_stats.batch_length(gamma_steps(rng, 10_000)) == 334  # at most 30 batches
    correlated = compare_stats.batch_length(ar1(rng, 1000, 0.9))
    assert correlated > 32 and 1000 // correlated >= 5
    assert compare_stats.batch_length(ar1(rng, 100, 0.95)) == 20  # at least 5 batches
    assert 2 < compare_stats.autocorrelation_time(ar1(rng, 5000, 0.5)) < 4  # (1 + 0.5) / (1 - 0.5) = 3


def test_quantile_without_enough_tail_has_no_interval():
    rng = np.random.default_rng(6)
    est = compare_stats.quantile_estimate([gamma_steps(rng, 190)], 0.99)
    assert est.log_se is None and "needs 1,000" in est.reason
    assert compare_stats.quantile_estimate([gamma_steps(rng, 1000)], 0.99).log_se is not None


# ---------------------------------------------------------------- verdicts and the gate
def _ratio(ratio, low, high):
    return compare_stats.Ratio(ratio, low, high, 20.0)


@pytest.mark.parametrize("figure, interval, expected", [
    ("samples_per_s", (0.8, 0.75, 0.85), compare.SLOWER),
    ("samples_per_s", (1.2, 1.1, 1.3), compare.FASTER),
    ("samples_per_s", (0.98, 0.95, 1.01), compare.SAME),
    ("step_time_p50", (1.2, 1.1, 1.3), compare.SLOWER),  # lower is better
    ("tta", (0.8, 0.7, 0.9), compare.FASTER),
    ("energy_per_sample", (1.02, 0.9, 1.15), compare.SAME),
])
def test_verdict_follows_the_interval_and_the_figure_direction(figure, interval, expected):
    assert compare.verdict(compare.BY_ID[figure], _ratio(*interval)) == expected
    assert compare.verdict(compare.BY_ID[figure], compare_stats.Ratio(0.5)) == compare.NO_INTERVAL


def test_gate_parse():
    assert compare.Gate.parse(["10"]).thresholds == {"samples_per_s": 0.1, "tta": 0.1}
    assert compare.Gate.parse(["10", "step_time_p99=25", "tta=5"]).thresholds == \
        {"samples_per_s": 0.1, "tta": 0.05, "step_time_p99": 0.25}
    for bad in ("ten", "-5", "speed=10", "tta=", "nan"):
        with pytest.raises(ValueError):
            compare.Gate.parse([bad])


def _column(rows: list[compare.Row]) -> compare.Column:
    return compare.Column("new.json", {}, [compare.Pair("w@smoke", "w", "smoke", True, rows=rows)], [], [])


def _row(figure: str, ratio: float, low: float, high: float) -> compare.Row:
    f = compare.BY_ID[figure]
    return compare.Row(f.id, f.label, f.better, 1.0, ratio, ratio, low, high,
                       compare.verdict(f, _ratio(ratio, low, high)))


def test_gate_fails_only_on_significant_regressions_beyond_the_threshold():
    """Rule: the verdict is `slower` (whole interval on the worse side) and the ratio is worse
    than the threshold."""
    gate = compare.Gate.parse(["10"])
    slower = _row("samples_per_s", 0.85, 0.80, 0.90)          # 15% worse, significant
    small = _row("samples_per_s", 0.95, 0.93, 0.97)           # 5% worse, significant
    unsure = _row("tta", 1.30, 0.90, 1.80)                    # 30% worse, not significant
    faster = _row("tta", 0.70, 0.60, 0.80)
    ungated = _row("step_time_p50", 1.50, 1.40, 1.60)         # not a gated figure
    found = gate.apply([_column([slower, small, unsure, faster, ungated])])
    assert [row for _, _, row in found] == [slower] and slower.regression and not small.regression


def test_gate_says_undecided_where_the_ratio_is_beyond_the_threshold_and_the_interval_is_not(capsys):
    """Walkthrough 4, M8: samples/s 0.440× [0.0753, 2.566] passed a 5% gate as if nothing were wrong.
    The rule stands (no regression without the whole interval on the worse side), but the gate's
    line says the figure is undecided, and --fail-on-undecided fails on it."""
    from suite.compare import report as compare_report

    wide = _row("samples_per_s", 0.440, 0.0753, 2.566)  # 56% worse, interval on both sides of 1
    within = _row("tta", 1.03, 0.90, 1.20)                # 3% worse: inside a 5% threshold
    columns = [_column([wide, within])]
    gate = compare.Gate.parse(["5"])
    assert gate.apply(columns) == [] and gate.undecided(columns) == [("new.json", "w@smoke", wide)]
    assert not gate.failed([], gate.undecided(columns), gate.unchecked(columns))
    out = compare_report.text("base.json", {}, columns, gate, [], [])
    line = next(x for x in out.splitlines() if x.startswith("regression gate"))
    assert line.startswith("regression gate (worse by samples/s > 5%, TTA score > 5%): passed, undecided: "
                           "w@smoke samples/s 0.440× [0.0753, 2.566] in NEW could be worse by more than 5%; ")
    assert "--repeat N" in line and "--fail-on-undecided" in line and "TTA score 1.030" not in line
    gate.fail_on_undecided = True
    assert gate.failed([], gate.undecided(columns), gate.unchecked(columns))
    assert "): FAILED, undecided: w@smoke samples/s" in compare_report.text("base.json", {}, columns, gate, [], [])
    data = json.loads(compare_report.as_json("base.json", {}, columns, gate, [], []))
    assert data["gate"]["failed"] is True and data["gate"]["fail_on_undecided"] is True
    assert [(u["figure"], u["ci95"]) for u in data["gate"]["undecided"]] == [("samples_per_s", [0.0753, 2.566])]


# ---------------------------------------------------------------- whole documents
@pytest.fixture(scope="module")
def reference() -> dict:
    return results.load(REFERENCE)


def test_a_file_compared_with_itself_changes_nothing(reference):
    column = compare.compare_documents(reference, reference)
    rows = [row for pair in column.pairs for row in pair.rows]
    assert column.pairs and all(p.comparable for p in column.pairs)
    assert {r.verdict for r in rows} <= {compare.SAME, compare.NO_INTERVAL, compare.NOT_MEASURED}
    assert any(r.verdict == compare.SAME for r in rows)
    assert all(r.ratio in (None, 1.0) for r in rows)
    # deterministic: the same input gives the same output, bootstrap included
    again = compare.compare_documents(reference, reference)
    assert [p.to_json() for p in again.pairs] == [p.to_json() for p in column.pairs]


def test_the_command_says_when_new_is_base_itself(capsys):
    """A new user's review: `goodbench compare a.json a.json` read "no significant change" and
    said nothing of comparing a file with itself."""
    assert main(["compare", str(REFERENCE), str(REFERENCE)]) == 0
    err = capsys.readouterr().err
    assert f"note: {REFERENCE} is the same results file as {REFERENCE}: its ratios are 1 by construction" in err


ANOTHER_HASH = (f"the pinned definition differs (BASE: spec hash {registry.get('gpt2-124m').spec_hash('smoke')[:12]}…, "
                "this goodbench's pinned gpt2-124m v1 smoke spec; NEW: spec hash 000000000000…, not this "
                "goodbench's pinned gpt2-124m v1 smoke spec (the file records only the hash, written by goodbench ")


@pytest.mark.parametrize("change, words", [
    (lambda run, doc: run.update(precision="bf16"), "precision differs (fp32 in BASE, bf16 in NEW)"),
    (lambda run, doc: run["workload"].update(spec_hash="0" * 64), ANOTHER_HASH),
    (lambda run, doc: run.update(distributed={"world_size": 8}), "world size differs (1 in BASE, 8 in NEW)"),
    (lambda run, doc: doc["settings"].update(division="open"), "division differs (closed in BASE, open in NEW)"),
])
def test_pairs_that_differ_are_not_comparable(reference, change, words):
    new = copy.deepcopy(reference)
    for run in new["runs"]:
        if run["workload"]["id"] == "gpt2-124m":
            change(run, new)
    pairs = {p.key: p for p in compare.compare_documents(reference, new).pairs}
    assert not pairs["gpt2-124m@smoke"].comparable and words in pairs["gpt2-124m@smoke"].reason
    assert not pairs["gpt2-124m@smoke"].rows  # nothing compared
    if "division" not in words:
        assert pairs["lm-char@smoke"].comparable


def test_another_scale_is_not_comparable(reference):
    new = copy.deepcopy(reference)
    new["runs"] = [r for r in new["runs"] if r["workload"]["id"] == "lm-char"]
    new["runs"][0]["scale"] = "full"
    column = compare.compare_documents(reference, new)
    pair = next(p for p in column.pairs if p.workload == "lm-char")
    assert not pair.comparable and pair.reason == "scale differs (smoke in BASE, full in NEW)"
    assert "lm-char@smoke" not in column.only_base and "gpt2-124m@smoke" in column.only_base


def test_energy_measured_another_way_is_not_comparable():
    b = compare_stats.Estimate(2.0, 0.01, 20.0)
    row = compare.compare_figure(compare.BY_ID["energy_per_sample"], b, b, ({"nvml-energy-counter"}, {"rapl"}))
    assert row.verdict == compare.NOT_COMPARABLE and "rapl" in row.reason


def test_tta_needs_two_seeds_a_side():
    one = [{"seed": 1, "status": "complete", "metrics": {"tta_s": 10.0}}]
    assert "not enough seeds" in compare_estimates.tta_estimate(one).reason
    two_missed = one + [{"seed": s, "status": "complete", "metrics": {"tta_s": None}} for s in (2, 3)]
    assert compare_estimates.tta_estimate(two_missed).value is None  # invalid score: never compared


# ---------------------------------------------------------------- the command
def test_cli_self_comparison_exits_0_in_every_format(capsys):
    for fmt in ("text", "markdown", "json"):
        assert main(["compare", str(REFERENCE), str(REFERENCE), "--format", fmt,
                     "--fail-on-regression", "10"]) == 0
        out = capsys.readouterr().out
        if fmt == "json":
            data = json.loads(out)
            verdicts = {f["verdict"] for p in data["new"][0]["pairs"] for f in p["figures"]}
            assert not verdicts & {"slower", "faster"} and data["gate"]["failed"] is False
        else:
            assert "slower" not in out and "faster" not in out and "passed" in out
    assert main(["compare", str(REFERENCE), str(REFERENCE), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["new"][0]["pairs"][0]["figures"][0]["figure"] == "samples_per_s"
    assert "gate" not in data


def test_cli_several_new_files_give_a_column_each(capsys):
    assert main(["compare", str(REFERENCE), str(REFERENCE), str(REFERENCE)]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("workload"))
    assert "NEW 1" in header and "NEW 2" in header and header.count("verdict") == 2


@pytest.mark.parametrize("argv", [
    ["compare", str(REFERENCE)],                                          # one file
    ["compare", str(REFERENCE), str(REFERENCE), "--fail-on-regression", "fast=10"],
    ["compare", str(REFERENCE), str(REFERENCE), "--fail-on-regression", "-3"],
    ["compare", str(REFERENCE), str(REFERENCE), "--format", "html"],
])
def test_cli_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_cli_refuses_unreadable_or_invalid_files(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    doc = json.loads(REFERENCE.read_text())
    doc["runs"][0]["metrics"]["throughput"]["samples_per_s"] *= 2  # no longer what the step times give
    bad.write_text(json.dumps(doc))
    assert main(["compare", str(REFERENCE), str(bad)]) == 1
    assert "not a valid results file" in capsys.readouterr().err
    assert main(["compare", str(REFERENCE), str(tmp_path / "missing.json")]) == 1


def test_cli_reports_incomparable_pairs(tmp_path, capsys):
    """Two valid files of one workload, one on a GPU (bf16), one on the CPU (fp32)."""
    rng = np.random.default_rng(7)
    paths = []
    for accelerator in (0, 5):  # an H100 (bf16), a CPU (fp32)
        doc = factories.synthetic_document("synthetic", rng=rng, accelerator=accelerator,
                                           scale="full", seeds=1, workloads=("gpt2-124m",))
        paths.append(results.write(tmp_path / f"{accelerator}.json", doc))
    assert main(["compare", *map(str, paths), "--fail-on-regression", "1", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    pair = data["new"][0]["pairs"][0]
    assert pair["comparable"] is False and "precision differs (bf16 in BASE, fp32 in NEW)" in pair["reason"]
    assert data["gate"]["failed"] is False  # the pair's reason is kept in the JSON's why
    assert data["gate"]["not_checked"][0]["why"] == f"not comparable: {pair['reason']}"
    assert main(["compare", *map(str, paths)]) == 0
    assert "not comparable [1]" in capsys.readouterr().out


# ---------------------------------------------------------------- real runs
def _run(out: Path, data_dir: Path, slower: str | None) -> subprocess.Popen:
    """A CPU smoke run of fashion-cnn then dlrm-small into ``out``, on one intra-op thread and
    pinned to the first CPU; ``slower``: the workload whose step tests/slowed_run.py slows down."""
    extra = ["--extra-matmuls", f"{slower}=20"] if slower else []
    cmd = [sys.executable, str(REPO / "tests" / "slowed_run.py"), *extra, "--",
           "run", "-w", "fashion-cnn", "-w", "dlrm-small", "--device", "cpu", "--scale", "smoke",
           "--data-dir", str(data_dir), "-o", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "GOODBENCH_OFFLINE": "1"}
    first_cpu = min(os.sched_getaffinity(0))
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, preexec_fn=lambda: os.sched_setaffinity(0, {first_cpu}))


@pytest.fixture(scope="module")
def real_pair(data_dir, tmp_path_factory) -> tuple[Path, Path]:
    """BASE and NEW: the same two smoke runs, NEW with dlrm-small's step made slower by real
    extra compute. Both run at the same time on the same CPU, so whatever else the machine does
    slows them alike; fashion-cnn, unchanged, runs first in both."""
    folder = tmp_path_factory.mktemp("compare-real")
    base, new = folder / "base.json", folder / "new.json"
    procs = [_run(base, data_dir, None), _run(new, data_dir, "dlrm-small")]
    for proc in procs:
        output, _ = proc.communicate(timeout=1800)
        assert proc.returncode == 0, output[-3000:]
    return base, new


@pytest.mark.slow
@pytest.mark.long
def test_real_slowdown_is_called_slower_and_fails_the_gate(real_pair, capsys):
    base, new = real_pair
    assert main(["compare", str(base), str(new), "--fail-on-regression", "10", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    pairs = {p["key"]: p for p in data["new"][0]["pairs"]}
    rate = next(f for f in pairs["dlrm-small@smoke"]["figures"] if f["figure"] == "samples_per_s")
    assert rate["verdict"] == "slower" and rate["regression"] and rate["ratio"] < 0.9
    assert [(r["key"], r["figure"]) for r in data["gate"]["regressions"]] == [("dlrm-small@smoke", "samples_per_s")]
    # the unchanged workload is not called slower
    same = next(f for f in pairs["fashion-cnn@smoke"]["figures"] if f["figure"] == "samples_per_s")
    assert same["verdict"] != "slower", same
    assert main(["compare", str(base), str(new)]) == 0  # no gate: the comparison alone exits 0
    assert main(["compare", str(base), str(base), "--fail-on-regression", "10"]) == 0


# ---------------------------------------------------------------- the site
@pytest.fixture(scope="module")
def site_out(tmp_path_factory) -> Path:
    """A site of three CPU smoke results of gpt2-124m: synthetic-alpha twice (2 days and 1 day
    ago), synthetic-beta once; their step times differ (tests/factories.py draws each file's
    mean step time)."""
    from suite import site

    folder = tmp_path_factory.mktemp("compare-site-results")
    rng = np.random.default_rng(11)
    for i, (name, days) in enumerate([("synthetic-alpha", 2.0), ("synthetic-alpha", 1.0), ("synthetic-beta", 1.5)]):
        doc = factories.synthetic_document(name, rng=rng, accelerator=5, scale="smoke", seeds=1,
                                           workloads=("gpt2-124m",), days_ago=days)
        results.write(folder / f"r{i}.json", doc)
    out = tmp_path_factory.mktemp("compare-site")
    site.build(folder, out)
    return out


def _compare_data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="compare-data">(.*?)</script>', text, re.S).group(1))


def test_site_compare_page_shows_intervals_and_verdicts(site_out):
    from suite.site import pages

    data = _compare_data(site_out / "compare.html")
    assert data["estimates"] and len(data["t"]) == compare_stats.T_DF_CAP
    rows = pages.compare_rows(data, "synthetic-alpha", "synthetic-beta")
    rate = next(r for r in rows if r["metric"] == "samples/s")
    ratio = float(rate["ratio"].rstrip("×"))
    assert rate["verdict"] == (compare.FASTER if ratio > 1 else compare.SLOWER) and "–" in rate["ci"]
    page = (site_out / "compare.html").read_text(encoding="utf-8")
    assert "95% CI" in page and f">{rate['verdict']}<" in page


def test_site_system_page_compares_the_latest_result_with_the_previous(site_out):
    from suite.site.names import safe_name

    page = (site_out / "systems" / f"{safe_name('synthetic-alpha')}.html").read_text(encoding="utf-8")
    assert "Latest result against the previous one" in page
    assert any(f">{v}<" in page for v in (compare.FASTER, compare.SLOWER))
    beta = (site_out / "systems" / f"{safe_name('synthetic-beta')}.html").read_text(encoding="utf-8")
    assert "Latest result against the previous one" not in beta  # one result: nothing to compare


NODE_DRIVER = r"""
const fs = require("fs");
const [page, script, first, second] = process.argv.slice(2);
const json = fs.readFileSync(page, "utf8").match(/id="compare-data">([\s\S]*?)<\/script>/)[1];
const listeners = {}, elements = {};
function element(id) {
  return elements[id] = elements[id] || {id, value: "", textContent: "", hidden: true,
    addEventListener: (kind, fn) => { listeners[id] = fn; }};
}
element("compare-data").textContent = json;
const body = {rows: [], get firstChild() { return this.rows[0] || null; },
              removeChild(r) { this.rows.splice(this.rows.indexOf(r), 1); },
              appendChild(r) { this.rows.push(r); }};
global.document = {
  getElementById: element,
  querySelector: () => body,
  querySelectorAll: () => ["workload", "metric", "a", "b", "ratio", "95% CI", "verdict (first)", "better"]
    .map(textContent => ({textContent})),
  createElement: () => ({cells: [], textContent: "", appendChild(c) { this.cells.push(c); },
                         setAttribute(k, v) { this[k] = v; }}),
  addEventListener: (kind, fn) => { listeners.ready = fn; },
};
eval(fs.readFileSync(script, "utf8"));
listeners.ready();
element("compare-a").value = first;
element("compare-b").value = second;
listeners["compare-a"]();
if (body.rows.some(r => r.cells[5]["data-label"] !== "95% CI")) throw new Error("a cell without its column's name");
console.log(JSON.stringify(body.rows.map(r => r.cells.map(c => c.textContent))));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the page's script")
@pytest.mark.parametrize("first, second", [("synthetic-alpha", "synthetic-beta"), ("synthetic-beta", "synthetic-alpha")])
def test_site_script_gives_the_engines_verdicts(site_out, tmp_path, first, second):
    """The compare page's script, redrawing the table for a pair, shows the intervals and
    verdicts that suite/compare/engine.py gives for it."""
    from suite.site import pages

    driver = tmp_path / "driver.js"
    driver.write_text(NODE_DRIVER)
    script = REPO / "suite" / "site" / "static" / "compare.js"
    out = subprocess.run(["node", str(driver), str(site_out / "compare.html"), str(script), first, second],
                         capture_output=True, text=True, check=True).stdout
    drawn = json.loads(out)
    want = pages.compare_rows(_compare_data(site_out / "compare.html"), first, second)
    assert [(r[1], r[5], r[6]) for r in drawn] == [(w["metric"], w["ci"], w["verdict"]) for w in want]


def test_cli_help_names_every_figure(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(f in text for f in compare.FIGURE_IDS)


def test_text_is_coloured_only_when_asked(reference):
    from suite.compare import report as compare_report

    slower = copy.deepcopy(reference)
    for run in slower["runs"]:
        run["step_times_s"] = [2 * t for t in run["step_times_s"]]
        tput = run["metrics"]["throughput"]
        tput["window"]["seconds"] *= 2
    columns = [compare.compare_documents(reference, slower)]
    plain = compare_report.text("a.json", reference, columns)
    coloured = compare_report.text("a.json", reference, columns, colour=True)
    assert "\033[" not in plain and "slower" in plain
    assert "\033[31mslower" in coloured
    assert [len(line) for line in plain.splitlines()] == \
        [len(re.sub(r"\033\[\d+m", "", line)) for line in coloured.splitlines()]  # same alignment


def test_markdown_shows_a_files_text_literally(tmp_path, capsys):
    """``--format markdown`` is for a pull-request comment, which GitHub renders: a system's name
    and software are the submitter's text, and their tags, images and mentions were pasted in as
    Markdown."""
    doc = json.loads(REFERENCE.read_text())
    doc["system"]["software"]["torch"] = ("<img src=x onerror=alert(1)> @everyone ![i](https://evil.example/i.png) *x* "
                                          "#12 $x$ www.evil.example")
    hostile = tmp_path / "hostile`.json"
    hostile.write_text(json.dumps(doc))
    assert main(["compare", str(REFERENCE), str(hostile), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    joiner = "\u2060"  # GitHub links mentions, references and addresses in text whatever its escapes
    assert (rf"\<img src=x onerror=alert(1)\> @{joiner}everyone \!\[i\](https:{joiner}//evil.example/i.png) \*x\* "
            rf"#{joiner}12 \$x\$ www{joiner}.evil.example") in out
    assert "<img" not in out.replace(r"\<img", "") and "hostile'.json" in out


def test_the_gate_passes_no_new_file_todays_rules_refuse(capsys):
    """Trial V: a NEW file backdated to rules v5, its event log deleted and its steps halved, was
    compared 2x faster and passed ``--fail-on-regression`` with a note on stderr. The gate now fails
    for a NEW file today's rules refuse (here the CPU reference stored under rules v1, which they
    refuse); a BASE of older rules is still compared, with the note."""
    stored = Path(__file__).resolve().parent.parent / "results"
    v9 = str(stored / "d9324eedd0eaf7af78877a527895ae324debb1b5a3ad8f65aa5405e40e61432c.json")
    v1 = str(stored / "8e82ba8c459a194248fd0d7d7f25f6b0ee46ac9d3792cec754eec25b31c94dab.json")
    assert main(["compare", v9, v1, "--fail-on-regression", "samples_per_s=1000"]) == 1
    said = capsys.readouterr().err
    assert f"the regression gate fails: {v1} is refused by today's rules (the note above says why)" in said
    assert main(["compare", v1, v9, "--fail-on-regression", "samples_per_s=1000"]) == 0  # an older BASE
    assert f"note: {v1}: " in capsys.readouterr().err
    assert main(["compare", v9, v1]) == 0  # without a gate: compared, the note said


def test_the_legend_names_a_default_named_system_once_and_a_named_one_with_its_accelerator():
    """A new user read "AMD EPYC x1 · AMD EPYC × 1": the default system name is the accelerator's
    count and name, said twice; it is said once now, and a system named otherwise keeps both."""
    from suite.compare import report as compare_report

    doc = json.loads(json.dumps(forging.real("dlrm-small")))
    accelerator = doc["system"]["accelerator"]
    doc["system"]["name"] = f"{accelerator['name']} x{accelerator['count']}"
    said = compare_report._identity(doc)
    assert said.startswith(f"{doc['system']['name']} · torch ") and " × " not in said
    doc["system"]["name"] = "Lab box"
    assert compare_report._identity(doc).startswith(f"Lab box · {accelerator['name']} × {accelerator['count']} · ")
