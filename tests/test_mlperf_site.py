"""The site's MLPerf Training pages: labelled as derived, ranked only among imports, browsable by
round × benchmark, benchmark history and accelerator, small pages, no hidden characters."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mlperf_logging")

from suite.mlperf import documents, importer, later_rules
from suite.site import mlperf_model, mlperf_pages
from suite.site.builder import build_site

REPO = Path(__file__).resolve().parent.parent
LOGS = Path(__file__).resolve().parent / "mlperf_logs"
DERIVED = "derived from MLPerf Training results, not an MLPerf result"
MAX_PAGE_BYTES = 1_000_000


def _hours_later(text: str, i: int) -> str:
    """The log as a run ``i`` hours later would stamp it: one run's log copied is one run (the
    importer counts a log stamping another's run_start and run_stop once)."""
    return re.sub(r'"time_ms": (\d+)', lambda m: f'"time_ms": {int(m[1]) + 3_600_000 * i}', text)


def _tree(root: Path, org: str, system: str, benchmark: str, round_dir: str, log: str, desc: str, n: int,
          edit=_hours_later, desc_edit=None) -> None:
    bench = root / round_dir / org / "results" / system / benchmark
    bench.mkdir(parents=True)
    (root / round_dir / org / "systems").mkdir(parents=True, exist_ok=True)
    described = json.loads((LOGS / desc).read_text())
    if desc_edit:
        described = desc_edit(described)
    (root / round_dir / org / "systems" / f"{system}.json").write_text(json.dumps(described), encoding="utf-8")
    text = (LOGS / log).read_text(encoding="latin-1")
    for i in range(n):
        (bench / f"result_{i}.txt").write_text(edit(text, i) + "\n" * i, encoding="latin-1")  # n logs, not copies


def _slower(minutes: int):
    def edit(text: str, i: int) -> str:
        """The run ``minutes + i`` minutes slower (faster where negative): every event after
        run_start stretched in time, so that run_stop stays after the evaluation that met the
        target (a run_stop moved before it is refused)."""
        events = [json.loads(line.split(":::MLLOG ", 1)[1]) for line in text.splitlines()]
        start = next(e["time_ms"] for e in events if e["key"] == "run_start")
        span = next(e["time_ms"] for e in events if e["key"] == "run_stop") - start
        factor = (span + 60_000 * (minutes + i)) / span
        for e in events:
            if e["time_ms"] > start:
                e["time_ms"] = start + round((e["time_ms"] - start) * factor)
        return "".join(":::MLLOG " + json.dumps(e) + "\n" for e in events)
    return edit


AMD_DESC, CISCO_DESC = "amd_MI300X_EPYC_9575F_pytorch_llama2_70b.json", "cisco_1xC885A_M8-8xH200-SXM-141GB.json"
AMD_LOG = "amd_llama2_70b_lora_result_1.txt"
HOSTILE = "Evil\u202eSYS\u2066 \x1b[31mred"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlperf-site")
    tree, results = root / "tree", root / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 10)
    # a second, slower submission of the same benchmark (the Cisco system's description)
    _tree(tree, "Cisco", "1xC885A_M8-8xH200-SXM-141GB", "llama2_70b_lora", "v5.1", AMD_LOG, CISCO_DESC, 10, _slower(3))
    # the AMD system "in an earlier round", slower, and an 8-node system of it: history and scaling
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.0", AMD_LOG, AMD_DESC, 10,
          _slower(10))
    _tree(tree, "AMD", "8xMI300X", "llama2_70b_lora", "v5.0", AMD_LOG, AMD_DESC, 10, _slower(-15),
          desc_edit=lambda d: {**d, "number_of_nodes": "8", "system_name": HOSTILE, "status": "preview"})
    _tree(tree, "Google", "cloud-tpu-v5p-1024-maxtext", "gpt3", "v4.0",
          "google_gpt3_result_0.txt", "google_cloud-tpu-v5p-1024-maxtext.json", 3)
    outcome = importer.run_import([tree], results, jobs=1)
    assert len(outcome.rows) == 5 and not outcome.problems, outcome.problems
    for stored in (REPO / "results").glob("*.json"):  # goodbench's own results beside them
        shutil.copy(stored, results / stored.name)
    built = build_site(results, root / "out", workers=1)
    return built.index.parent


def _text(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _pages(site: Path) -> list[Path]:
    return [site / "mlperf.html", *sorted((site / "mlperf").glob("*.html"))]


def test_every_page_is_labelled_derived_small_and_free_of_hidden_characters(site):
    pages = _pages(site)
    assert len(pages) == 1 + 3 + 2 * 2 + 3  # index, round pages, histories (two views), accelerator families
    for page in pages:
        raw = page.read_bytes()
        assert len(raw) <= MAX_PAGE_BYTES, page.name
        text = raw.decode("utf-8")
        assert DERIVED in text and documents.LABEL.replace("'", "&#39;") in text, page.name
        for hidden in ("\u202e", "\u2066", "\x1b"):
            assert hidden not in text, (page.name, repr(hidden))
    round_page = site / "mlperf" / mlperf_pages.round_page("v5.0", "llama2_70b_lora")
    assert "Evil\\u202eSYS\\u2066 \\u001b[31mred" in round_page.read_text(encoding="utf-8")


def test_a_round_page_ranks_only_imported_results_of_its_round(site):
    page = _text(site / "mlperf" / mlperf_pages.round_page("v5.1", "llama2_70b_lora"))
    assert "MLPerf Training v5.1 · llama2_70b_lora" in page and "never against goodbench workloads" in page
    amd, cisco = page.index("SMCI300X"), page.index("Cisco UCS")
    assert amd < cisco  # the faster (AMD) submission ranks first
    assert re.search(r'<td data-label="#" class="num " data-v="1.0">1</td>', page) and re.search(r'data-v="2.0">2</td>', page)
    assert "https://github.com/mlcommons/training_results_v5.1/tree/main/AMD/results/" in page
    assert "AMD Instinct MI300X 192GB HBM3 × 8" in page
    assert page.count('class="gp-bars"') == 2 and page.count("<title>result_") == 20
    assert "Quality target (closed division, as the training rules name it): eval loss ≤ 0.925" in page
    gpt3 = _text(site / "mlperf" / mlperf_pages.round_page("v4.0", "gpt3"))
    # gpt3 logs no eval brackets: "not measured", never a zero
    assert "not measured" in gpt3 and "eval not measured" in gpt3 and "TPU-v5p × 512" in gpt3


def test_the_history_page_charts_the_best_score_per_round_and_size_naming_the_accelerator(site):
    page = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora"))
    assert '<svg class="chart"' in page and "closed division" in page
    chart = page[page.index('<svg class="chart"'):page.index("</svg>")]
    # two size classes (8 and 64 accelerators), rounds v5.0 and v5.1: three points
    assert chart.count("<circle") == 3
    assert "v5.0 · 9–64 accelerators" in chart and "AMD Instinct MI300X × 64" in chart
    assert "v5.1 · 1–8 accelerators" in chart and "(AMD, SMCI300X" in chart
    # each line labelled once with its size class, in the right margin, none on another
    labels = re.findall(r'<text class="point-label s\d" x="([0-9.]+)" y="([0-9.]+)">([^<]+)</text>', chart)
    assert sorted(text for _, _, text in labels) == ["1–8", "9–64"]
    assert len({x for x, _, _ in labels}) == 1 and abs(float(labels[0][1]) - float(labels[1][1])) >= 12
    table = page[page.index('id="history-table"'):]
    assert table.index(">v5.1<") < table.index(">v5.0<")  # newest round first
    assert "1–8 accelerators" in table and "9–64 accelerators" in table


def test_a_preview_systems_point_is_marked_and_the_available_view_leaves_it_out(site):
    """The 64-accelerator v5.0 system is described as "preview": hollow in the chart, marked in
    the table and the round page; the history's available-only view has no point of it."""
    page = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora"))
    chart = page[page.index('<svg class="chart"'):page.index("</svg>")]
    assert chart.count(' other"') == 1 and "AMD Instinct MI300X × 64" in chart and "; preview)" in chart
    assert "1 of these points is a preview or research system" in page
    assert "AMD Instinct MI300X × 64 · AMD · preview" in page
    assert f'href="{mlperf_pages.history_page("llama2_70b_lora", True)}"' in page
    available = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora", True))
    chart = available[available.index('<svg class="chart"'):available.index("</svg>")]
    assert chart.count("<circle") == 2 and " other" not in chart and "× 64" not in chart
    assert "1 closed-division result of preview or research systems left out" in available
    assert "9–64 accelerators" not in available[available.index('id="history-table"'):]
    round_page = _text(site / "mlperf" / mlperf_pages.round_page("v5.0", "llama2_70b_lora"))
    assert re.search(r'class="text category-other" data-v="" title="as the submission describes it: preview">preview<',
                     round_page)
    assert 'title="as the submission describes it: Available on-premise">available<' in round_page


@pytest.mark.parametrize(("written", "category"), [
    ("Available on-premise", "available"), ("onprem", "available"), ("cloud", "available"),
    ("Available in cloud", "available"), ("Preview", "preview"), ("preview", "preview"),
    ("research", "research"), ("Research, Development, or Internal (RDI)", "research"), ("", "—"), (None, "—")])
def test_availability_spellings_fold_into_mlperfs_three_categories(written, category):
    assert mlperf_model.category(written) == category


def test_an_accelerator_page_gathers_one_family_across_submitters_sizes_and_rounds(site):
    family = mlperf_model.family("AMD Instinct MI300X 192GB HBM3")
    page = _text(site / "mlperf" / mlperf_pages.accelerator_page(family))
    assert "AMD Instinct MI300X in MLPerf Training" in page
    table = page[page.index('id="results-table"'):]
    assert table.count("<tr>") == 1 + 3  # v5.1 and two v5.0 systems
    assert "scaling" in page and '<svg class="chart"' in page  # 8 and 64 accelerators in v5.0
    # scaling: the 64-accelerator system's accelerator-minutes against the 8-accelerator one's
    doc8 = next(d for d in documents.load_all(site.parent / "results")[0]
                if d["source"]["round"] == "v5.0" and d["system"]["accelerators"] == 8)
    doc64 = next(d for d in documents.load_all(site.parent / "results")[0] if d["system"]["accelerators"] == 64)
    expected = doc8["score"]["minutes"] * 8 / (doc64["score"]["minutes"] * 64)
    assert f'data-v="{float(expected)!r}"' in page


def test_the_index_leads_with_what_is_there(site):
    page = _text(site / "mlperf.html")
    assert "5 results (5 with an official score) from 3 rounds of MLPerf Training, v4.0 to v5.1" in page
    assert page.index('id="latest"') < page.index('id="matrix"') < page.index('id="accelerators"')
    assert "Newest round first (the last round it appears in), then most results" in page  # the table's order
    assert f'href="mlperf/{mlperf_pages.history_page("gpt3")}"' in page
    front = _text(site / "index.html")
    assert 'id="mlperf"' in front and 'href="mlperf.html"' in front
    assert "No goodbench workload has a ranked full-scale result yet. What is here:" in front
    # the front page leads with the latest round's leaders themselves, above goodbench's workloads
    assert front.index('id="mlperf-leaders"') < front.index("<h2>Workloads</h2>")
    # on a phone the leaders' cards fill the first screens: a line above them leads to goodbench's own sections
    contents = front[front.index('<nav class="contents"'):front.index("</nav>", front.index('<nav class="contents"'))]
    assert front.index('<nav class="contents"') < front.index('id="mlperf-leaders"')
    assert 'href="#workloads"' in contents and 'href="#systems"' in contents and 'href="#mlperf"' in contents
    assert 'id="workloads"' in front and 'id="systems"' in front
    leaders = front[front.index('id="leaders-table"'):front.index("</table>", front.index('id="leaders-table"'))]
    assert "MLPerf Training v5.1: the best closed-division score per benchmark" in front
    assert f'href="mlperf/{mlperf_pages.round_page("v5.1", "llama2_70b_lora")}"' in leaders
    assert "SMCI300X" in leaders and ">available<" in leaders and leaders.count("<tr>") == 1 + 1


def test_imported_systems_never_reach_goodbench_leaderboards(site):
    for page in [*(site / "workloads").rglob("*.html"), *(site / "systems").rglob("*.html"), site / "compare.html"]:
        text = page.read_text(encoding="utf-8")
        assert "SMCI300X" not in text and "tpu-v5p-1024" not in text, page
    assert "SMCI300X" not in (site / "runs.json").read_text(encoding="utf-8")


def test_no_page_without_imports(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    for stored in (REPO / "results").glob("*.json"):
        shutil.copy(stored, results / stored.name)
    out = build_site(results, tmp_path / "out", workers=1).index.parent
    assert not (out / "mlperf.html").exists()
    assert 'id="mlperf"' not in (out / "index.html").read_text(encoding="utf-8")


def test_a_bar_leaves_an_unmeasured_bucket_out():
    run = {"file": "result_0.txt", "counted": True, "train_s": 80.0, "init_s": 10.0, "other_s": 10.0,
           "unmeasured": {"eval_s": "no-eval-brackets"}}
    svg = str(mlperf_pages.goodput_bars([run]))
    assert svg.count('class="seg') == 3 and "eval not measured" in svg
    assert "not measured" in str(mlperf_pages.goodput_bars([]))


@pytest.mark.parametrize("written, family", [
    ("NVIDIA A100-SXM4-80GB (400W)", "NVIDIA A100 SXM 80GB"), ("NVIDIA A100-SXM-80GB CTS", "NVIDIA A100 SXM 80GB"),
    ("NVIDIA A100-PCIe-40GB (250W)", "NVIDIA A100 PCIe 40GB"), ("NVIDIA A100 - PCIe - 80 GB", "NVIDIA A100 PCIe 80GB"),
    ("NVIDIA H100-SXM5-80GB", "NVIDIA H100 SXM"), ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("H100 NVL Tensor Core GPU (PCIe)", "NVIDIA H100 NVL"), ("NVIDIA Blackwell GPU (GB200)", "NVIDIA GB200"),
    ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "NVIDIA B300"), ("Intel(R) Gaudi(R) 2 AI Accelerator", "Intel Gaudi2"),
    ("Habana Gaudi HL-205", "Habana Gaudi"), ("AMD Instinct MI325X 256GB HBM3E DLC", "AMD Instinct MI325X"),
    ("tpu-v3", "Google TPU v3"), ("TPU-trillium", "Google TPU Trillium"), ("Nvidia Tesla V100-SXM2-32GB", "NVIDIA V100 SXM2 32GB"),
    ("Some New Chip (700W)", "Some New Chip"),
])
def test_accelerator_families_group_spellings_of_one_part(written, family):
    assert mlperf_model.family(written) == family


def test_a_bare_tpu_takes_its_version_from_the_system_and_no_accelerator_is_cpu_only():
    assert mlperf_model.family("TPU", "tpu-v4-128") == "Google TPU v4"
    assert mlperf_model.family("N/A", "1-node-8s-cpx", 0) == mlperf_model.CPU_ONLY
    assert mlperf_model.size_class(8) == "1–8" and mlperf_model.size_class(4097) == "over 4,096"


def test_a_submission_with_runs_missing_is_marked_and_left_out_of_the_history(tmp_path):
    """A folder of 3 llama2_70b_lora logs (an official submission needs 10) keeps the score
    result_summarizer gives it, marked *, and the history does not chart it."""
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 3)
    outcome = importer.run_import([tree], results, jobs=1)
    assert len(outcome.rows) == 1 and not outcome.problems, outcome.problems
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v5.1", "llama2_70b_lora"))
    assert re.search(r'official submission needs 10 [^>]*>[0-9.]+\*<', page)
    assert "A score marked * comes from fewer runs" in page
    history = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora"))
    assert "<circle" not in history


def test_a_run_its_rounds_checker_counted_is_not_struck_on_a_row_scored_that_way():
    run = {"file": "result_0.txt", "counted": False, "at_round": True, "why": "Required AT_LEAST_ONE …",
           "init_s": 120.0, "eval_s": 30.0, "train_s": 900.0, "other_s": 1.0}
    assert 'class="dropped"' in str(mlperf_pages.goodput_bars([run]))
    bar = str(mlperf_pages.goodput_bars([run], at_round=True))
    assert 'class="dropped"' not in bar and "counted by its round&#39;s checker, not today&#39;s" in bar


def test_a_bucket_below_the_clocks_resolution_reads_zero_in_the_goodput_bar():
    """Float noise (the 'other' bucket of a subtraction: 5.68e-14 s) is 0 s, never printed as a time."""
    run = {"file": "result_0.txt", "counted": True, "init_s": 120.0, "eval_s": 30.0, "train_s": 900.0,
           "other_s": 5.68e-14}
    bar = str(mlperf_pages.goodput_bars([run]))
    assert "other 0 s" in bar and "e-14" not in bar and "init 120 s" in bar


WEIGHTS = "Required AT_LEAST_ONE occurrence of 'weights_initialization' but found 0"
LAMB = "Required EXACTLY_ONE occurrence of 'opt_lamb_epsilon' but found 0"


def _unscored(ruleset: str, benchmark: str, whys: list[tuple[str, str]]) -> dict:
    """A no-score document of ``ruleset``/``benchmark`` whose runs dropped with (status, first message)."""
    return {"score": {"minutes": None, "status": f"no score: {len(whys)} runs dropped (non-compliant, not converged "
                                                    "or unreadable), at most 1 allowed"},
            "source": {"ruleset": ruleset, "benchmark_folder": benchmark},
            "runs": [{"counted": False, "status": status, "why": why} for status, why in whys]}


def test_no_score_by_a_check_changed_after_the_round_is_said_with_the_commit():
    """v1.1's weights-initialization checks were warnings at the round, failures since
    mlcommons/logging 4c04112; v2.1's closed BERT asked for opt_epsilon until d82b94d."""
    ok = ("success", WEIGHTS)
    assert "4c04112" in later_rules.stricter_since(_unscored("1.1.0", "minigo", [ok] * 10))
    assert "d82b94d" in later_rules.stricter_since(_unscored("2.1.0", "bert", [("success", LAMB)] * 10))
    # one run that did not converge is a drop the round allowed anyway; two are not
    assert later_rules.stricter_since(_unscored("1.1.0", "resnet", [("aborted", WEIGHTS)] + [ok] * 4))
    assert later_rules.stricter_since(_unscored("1.1.0", "resnet", [("aborted", WEIGHTS)] * 2 + [ok] * 3)) is None
    # another ruleset, another benchmark, another first message, or a score: nothing to say
    assert later_rules.stricter_since(_unscored("1.0.0", "minigo", [ok] * 10)) is None
    assert later_rules.stricter_since(_unscored("2.1.0", "resnet", [("success", LAMB)] * 5)) is None
    assert later_rules.stricter_since(_unscored("1.1.0", "minigo", [("success", "CHECK for 'x' failed")] * 10)) is None
    scored = _unscored("1.1.0", "minigo", [ok] * 10)
    scored["score"]["minutes"] = 12.0
    assert later_rules.stricter_since(scored) is None
    # no score for another reason: a bad scaling.json, logs absent from the copy, a drop allowed anyway
    factor = _unscored("1.1.0", "minigo", [ok] * 10)
    factor["score"]["status"] = "no score: scaling.json cannot be read: no scaling_factor in it"
    assert later_rules.stricter_since(factor) is None
    absent = _unscored("1.1.0", "minigo", [ok] * 10)
    absent["source"]["absent"] = ["result_9.txt"]
    assert later_rules.stricter_since(absent) is None
    assert later_rules.stricter_since(_unscored("1.1.0", "minigo", [ok])) is None


def test_round_and_history_pages_mark_a_no_score_from_a_later_check(tmp_path):
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 10)
    importer.run_import([tree], results, jobs=1)
    stored = next((results / "mlperf").iterdir())
    doc = documents.read(stored)
    # the same document as if it were v1.1 minigo, every run failing the weights-initialization check
    doc["source"].update(round="v1.1", ruleset="1.1.0", benchmark_folder="minigo")
    doc["benchmark"] = "minigo"
    doc["score"] = {"minutes": None, "rcp_scaling_factor": None, "runs": 10, "runs_counted": 0, "runs_dropped": 10,
                    "required_runs": 10, "status": "no score: 10 runs dropped, at most 1 allowed"}
    for run in doc["runs"]:
        run.update(counted=False, why=WEIGHTS)
        run.pop("score_minutes", None)
    stored.write_text(json.dumps(doc))
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v1.1", "minigo"))
    assert "no score†" in page and "1 of 1 results here have no score" in page and "4c04112" in page
    history = _text(site / "mlperf" / mlperf_pages.history_page("minigo"))
    assert "fails the runs of 1 of 1 closed-division results first on a check changed after the round" in history
    assert "1 have no score and are missing from this history" in history
    assert "1 more have none because today's checker fails them first on checks changed after" in _text(site / "mlperf.html")
    # with the score its round's checker gave it: on the pages, marked, and in the history
    doc["score"]["at_round"] = {"minutes": 31.5, "status": "ok", "runs_counted": 10}
    doc["score"]["rcp_scaling_factor"] = 1.0
    for run in doc["runs"]:  # runs of 31.5 min: a stored score must be its runs' (documents.disagreement)
        run.update(at_round=True, time_to_train_s=31.5 * 60)
    stored.write_text(json.dumps(doc))
    site = build_site(results, tmp_path / "out2", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v1.1", "minigo"))
    assert re.search(r">31\.5†<", page) and "1 of them are scored as the round's own checker scored them" in page
    history = _text(site / "mlperf" / mlperf_pages.history_page("minigo"))
    assert "1 of them are here with the score their round's own checker gave them" in history and "31.5†" in history
    assert "of which 1 of v1.1 as their round's own checker scored them" in _text(site / "mlperf.html")


def test_results_whose_logs_the_copy_lacked_are_marked_and_said(tmp_path):
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 4)
    folder = "v5.1/AMD/results/MI300X_EPYC_9575F_pytorch_llama2_70b/llama2_70b_lora"
    absent = "".join(f"{folder}/result_{i}.txt\n" for i in range(4, 10))
    outcome = importer.run_import([tree], results, jobs=1, absent=absent)
    assert outcome.rows[0]["score_minutes"] is None
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v5.1", "llama2_70b_lora"))
    assert "no score‡" in page and "lacked 6 of their result logs" in page
    history = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora"))
    assert "v5.1: 1 of 1 closed-division results are missing from this history: the copy" in history
    assert "1 without a score because the copy of their round imported lacked" in _text(site / "mlperf.html")
    # the round's best, with a result whose logs the copy lacked beside it, may not be the best
    _tree(tree, "Cisco", "1xC885A_M8-8xH200-SXM-141GB", "llama2_70b_lora", "v5.1", AMD_LOG, CISCO_DESC, 10)
    importer.run_import([tree], results, jobs=1, absent=absent)
    site = build_site(results, tmp_path / "out2", workers=1).index.parent
    assert "‡ may not be the best" in _text(site / "mlperf.html")
    # said in full under the leaders' table, on the MLPerf index and the front page: a phone shows no tooltip
    for page in (site / "mlperf.html", site / "index.html"):
        legend = _text(page).split('<p class="meta legend">', 1)[1].split("</p>", 1)[0]
        assert legend.startswith("‡ may not be the best: the copy of the round imported lacked the logs"), page


def test_the_score_legend_spells_out_rcp_and_the_double_dagger_only_where_used():
    rcp, dagger = {"sub": "RCP\u00a01.0039"}, {"sub": "‡ may not be the best"}
    assert mlperf_pages.score_legend([[{"text": "x"}, rcp]]) == [mlperf_pages.RCP_WORDS]
    assert mlperf_pages.score_legend([[rcp], [dagger]]) == [mlperf_pages.RCP_WORDS, mlperf_pages.MAYBE_NOT_BEST]
    assert mlperf_pages.score_legend([[{"sub": None}]]) == []
    assert mlperf_pages.RCP_WORDS.startswith("RCP: MLCommons' Reference Convergence Points")


def test_a_log_saying_status_absent_is_not_a_log_the_copy_lacked(tmp_path):
    """Only the import's own list (source.absent) marks ‡: a run whose log says "absent" does not."""
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 10,
          lambda text, i: text.replace('"status": "success"', '"status": "absent"') if i == 0 else _hours_later(text, i))
    outcome = importer.run_import([tree], results, jobs=1)
    doc = documents.read(next((results / "mlperf").iterdir()))
    assert doc["runs"][0]["status"] == "absent" and "absent" not in doc["source"]
    assert mlperf_model.row(doc).absent == 0 and outcome.rows[0]["score_minutes"] is not None


@pytest.mark.parametrize(("written", "ranked"), [("closed", "closed"), ("Closed", "closed"), ("close", "closed"),
                                                 ("Open", "open"), (None, "—"), ("research", "research")])
def test_divisions_spelled_otherwise_rank_with_their_division(written, ranked):
    """v0.7 Fujitsu wrote "Closed", v1.0 PCL "close": ranked and charted with the closed division."""
    assert mlperf_model.division(written) == ranked


def test_a_result_carried_over_from_an_earlier_round_is_marked_and_the_history_shows_the_best_new_one(tmp_path):
    """The same 10 llama2_70b_lora logs published in v5.0 and again in v5.1 (as v4.1's gpt3 repeats
    v4.0's run): the v5.1 row says "carried over from v5.0", and v5.1's history point is the best
    *new* result, the slower Cisco one, not the repeat."""
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.0", AMD_LOG, AMD_DESC, 10,
          _slower(10))
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 10,
          _slower(10))
    _tree(tree, "Cisco", "1xC885A_M8-8xH200-SXM-141GB", "llama2_70b_lora", "v5.1", AMD_LOG, CISCO_DESC, 10, _slower(25))
    outcome = importer.run_import([tree], results, jobs=1)
    assert len(outcome.rows) == 3 and not outcome.problems, outcome.problems
    docs, _ = documents.load_all(results)
    rows = [mlperf_model.row(d) for d in docs]
    mlperf_model.mark_carried(rows)
    assert sorted((r.round, r.submitter, r.carried_from) for r in rows) == [
        ("v5.0", "AMD", None), ("v5.1", "AMD", "v5.0"), ("v5.1", "Cisco", None)]
    _, _, best = mlperf_model.history(rows)
    assert best[("v5.1", "1–8")].submitter == "Cisco" and best[("v5.0", "1–8")].submitter == "AMD"
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v5.1", "llama2_70b_lora"))
    assert page.count("carried over from v5.0") == 1
    history = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora"))
    assert "its round's best <em>new</em> result: 1 closed-division result whose runs an earlier round" in history


@pytest.mark.parametrize("wanted, placed", [
    ([50.0, 52.0, 120.0], [50.0, 62.0, 120.0]),      # pushed apart downwards
    ([10.0], [20.0]),                                 # never above the top
    ([240.0, 250.0, 251.0], [226.0, 238.0, 250.0]),   # past the bottom: the run moves up
    ([20.0, 100.0, 100.0], [20.0, 100.0, 112.0]),     # only the two that collide move
])
def test_history_labels_are_spread_apart_within_the_plot(wanted, placed):
    from suite.site.mlperf_charts import _spread
    assert _spread(wanted, 20.0, 250.0, 12.0) == placed


def test_each_table_has_csv_and_json_downloads_with_the_exact_values(site):
    """As goodbench's own tables: every round, history and accelerator table links its rows as CSV
    and JSON beside the page, and the index links every imported result, a line each."""
    import pandas as pd

    name = mlperf_pages.round_page("v5.1", "llama2_70b_lora")
    page = _text(site / "mlperf" / name)
    stem = name[:-len(".html")]
    assert f'<a href="{stem}.csv" download>CSV</a> <a href="{stem}.json" download>JSON</a>' in page
    frame = pd.read_csv(site / "mlperf" / f"{stem}.csv")
    records = json.loads((site / "mlperf" / f"{stem}.json").read_text())
    assert list(frame.columns) == mlperf_pages.RECORD_COLUMNS and len(frame) == len(records) == 2
    docs = {d["submitter"]: d for d in documents.load_all(site.parent / "results")[0] if d["source"]["round"] == "v5.1"}
    for line in records:  # unrounded: the document's own score
        assert line["score_minutes"] == docs[line["submitter"]]["score"]["minutes"]
        assert line["quality_target_text"] == "eval loss ≤ 0.925" and line["accelerators"] == 8
    history = site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora").replace(".html", ".json")
    assert sorted((p["round"], p["size_class"]) for p in json.loads(history.read_text())) == [
        ("v5.0", "1–8"), ("v5.0", "9–64"), ("v5.1", "1–8")]
    index = _text(site / "mlperf.html")
    assert '<a href="mlperf/all-results.csv" download>CSV</a>' in index
    assert len(json.loads((site / "mlperf" / "all-results.json").read_text())) == 5


def test_no_page_shows_a_raw_python_none(site):
    """Every page of a site built from the repository's results and an import: no "None" in what a
    reader sees (a missing value reads "—", "not measured" or words; the precision flags as words)."""
    pages = [p for p in site.rglob("*.html")]
    assert len(pages) > 10
    for page in pages:
        text = re.sub(r"<script\b.*?</script>", "", page.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"<[^>]+>", " ", text)
        assert not re.search(r"\bNone\b", text), (page.name, re.search(r".{60}\bNone\b.{20}", text, re.S))


def test_carried_over_results_across_a_rename_and_into_the_available_view():
    """On the shipped history: v5.0's Dell rgat and ASUS retinanet hold v4.1's gnn and ssd runs
    (renamed benchmarks are one history), and a preview result published again once available
    (Intel's CPU-only dlrm, v0.7 → v1.0) is the available view's point in its later round."""
    docs, _ = documents.load_all(REPO / "results")
    if len(docs) < 1000:
        pytest.skip("the shipped MLPerf history is not here")
    rows = [mlperf_model.row(d) for d in docs]
    mlperf_model.mark_carried(rows)
    renamed = {(r.benchmark, r.submitter, r.carried_from) for r in rows
               if r.round == "v5.0" and r.benchmark in ("rgat", "retinanet") and r.carried_from}
    assert renamed == {("rgat", "Dell", "v4.1"), ("retinanet", "ASUSTeK", "v4.1")}
    dlrm, _ = mlperf_model.history_rows("dlrm", rows)
    available = mlperf_model.history(dlrm, ("available",))[2]
    point = available[("v1.0", mlperf_model.CPU_ONLY)]
    assert point.carried_from == "v0.7" and point.carried_of.category == "preview"
    assert ("v1.0", mlperf_model.CPU_ONLY) not in mlperf_model.history(dlrm)[2]  # charted at v0.7 there


def _misspelt(desc: dict) -> dict:
    """A v0.7 SIAT/Tencent description: the division under the key ``divison``."""
    desc = dict(desc)
    desc["divison"] = desc.pop("division")
    return desc


def _no_division(desc: dict) -> dict:
    desc = dict(desc)
    desc.pop("division")
    return desc


def test_a_division_under_a_misspelt_key_or_only_in_the_logs_is_read_and_its_source_shown(tmp_path):
    """v0.7 SIAT and Tencent wrote ``"divison": "closed"``: the result ranks in the closed division,
    the document names where it was read, and the round page says it under the division; a
    description with no division at all takes the logs' ``submission_division``; one that states
    it names no source (the documents of every other result keep their bytes)."""
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 10)
    _tree(tree, "Cisco", "1xC885A_M8-8xH200-SXM-141GB", "llama2_70b_lora", "v5.1", AMD_LOG, CISCO_DESC, 10,
          _slower(3), desc_edit=_misspelt)
    _tree(tree, "Cisco", "2xC885A_M8-8xH200-SXM-141GB", "llama2_70b_lora", "v5.1", AMD_LOG, CISCO_DESC, 10,
          _slower(5), desc_edit=_no_division)
    outcome = importer.run_import([tree], results, jobs=1)
    assert len(outcome.rows) == 3 and not outcome.problems, outcome.problems
    docs, _ = documents.load_all(results)
    by_system = {d["source"]["system_folder"]: d for d in docs}
    assert "division_source" not in by_system["MI300X_EPYC_9575F_pytorch_llama2_70b"]
    misspelt = by_system["1xC885A_M8-8xH200-SXM-141GB"]
    assert (misspelt["division"], misspelt["division_source"]) == ("closed", "system description, key spelt \u201cdivison\u201d")
    logged = by_system["2xC885A_M8-8xH200-SXM-141GB"]
    assert (logged["division"], logged["division_source"]) == ("closed", "result logs' submission_division")
    rows = mlperf_model.rank_rows([mlperf_model.row(d) for d in docs])
    assert [(r.division, r.rank) for r in rows] == [("closed", 1), ("closed", 2), ("closed", 3)]
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v5.1", "llama2_70b_lora"))
    assert page.count('<small class="sub">as \u201cdivison\u201d</small>') == 1
    assert page.count('<small class="sub">from the logs</small>') == 1
    assert 'title="read from the system description, key spelt \u201cdivison\u201d: closed"' in page
    assert 'title="read from the result logs&#39; submission_division: closed"' in page
    assert 'title="read from the system description: closed"' in page


def test_the_logs_give_the_division_only_where_every_log_read_states_the_same_one():
    from suite.mlperf import division

    assert division.decide({"division": "Closed", "divison": "open"}, ["open"]) == ("Closed", None)
    assert division.decide({"divison": "open"}, ["closed"]) == ("open", division.MISSPELT)
    assert division.decide({}, ["open", "open"]) == ("open", division.LOGS)
    assert division.decide({}, ["open", "closed"]) == (None, None)
    assert division.decide({}, ["open", None]) == (None, None)
    assert division.decide({"division": ""}, []) == (None, None)


def test_a_tree_not_checked_against_mlcommons_published_round_says_source_not_verified(tmp_path):
    """Trial 14 F9: any tree was shown as "derived from published MLPerf Training results"; now a
    score from files not checked against the round's pinned commit says "source not verified", and
    a --round that is not the tree's own is named."""
    tree, results = tmp_path / "tree", tmp_path / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1", AMD_LOG, AMD_DESC, 10)
    outcome = importer.run_import([tree / "v5.1"], results, jobs=1, round_arg="v5.0")
    doc = documents.read(outcome.rows[0]["document"])
    assert doc["source"]["round_note"] == "round v5.0 given by --round; the tree's path says v5.1"
    assert "verified" not in doc["source"] and outcome.rows[0]["source_not_verified"]
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = _text(site / "mlperf" / mlperf_pages.round_page("v5.0", "llama2_70b_lora"))
    assert "source not verified" in page and "given by --round" in (site / "mlperf" / mlperf_pages.round_page(
        "v5.0", "llama2_70b_lora")).read_text(encoding="utf-8")
    assert "source not verified" in _text(site / "mlperf.html")  # the index's best-of cell too
    history = _text(site / "mlperf" / mlperf_pages.history_page("llama2_70b_lora"))  # trial V: and the history's
    assert "source not verified" in history and "source not verified: round v5.0 given by --round" in history
    # review 14 #13: --round's reason is both source.not_verified and source.round_note: said once
    assert mlperf_model.row(doc).unverified == "round v5.0 given by --round; the tree's path says v5.1"
    assert mlperf_pages.CHECKED in _text(site / "mlperf.html")  # every page: the importer's word
    plain = importer.run_import([tree], tmp_path / "plain", jobs=1).rows[0]
    assert plain["source_not_verified"] == "the tree is not a git checkout"


def test_a_verified_source_is_said_to_be_the_importers_word_not_the_sites():
    """Review 14 (#3): the site showed a stored ``source.verified`` as checked, with no mark, though
    it holds no log to check it and anyone can edit the document. The score's tooltip now says the
    importer checked it when it imported and the document is its word (self-reported); an energy
    whose power logs the importer did not check (imported before it did, #4) says so."""
    stored = sorted((Path(__file__).resolve().parent.parent / "results" / "mlperf").glob("*.json"))
    if not stored:
        pytest.skip("no imported documents under results/mlperf")
    doc = documents.read(stored[0])
    commit = doc["source"]["verified"]["commit"]
    r = mlperf_model.row(doc)
    assert (r.unverified, r.checked) == (None, commit)
    title = mlperf_pages._score(r)["title"]
    assert f"source checked against MLCommons' commit {commit[:12]} at import: the importer's word" in title
    assert "self-reported" in title and "cannot check that again" in mlperf_pages.CHECKED_TITLE
    assert "source not verified" not in (mlperf_pages._score(r)["sub"] or "")
    line = mlperf_pages.records([r]).iloc[0]
    assert line["source_checked_at_import_self_reported"] == commit and not line["power_logs_not_verified"]
    r.energy_kwh, r.power_unchecked = 1.0, True
    energy = mlperf_pages._energy(r)
    assert "power logs not verified" in energy["sub"] and "imported before goodbench checked them" in energy["title"]
    doc["source"]["verified"]["power_logs"] = 3
    doc["score"]["energy_j"] = 3.6e6
    assert not mlperf_model.row(doc).power_unchecked or mlperf_model.row(doc).energy_kwh is None
