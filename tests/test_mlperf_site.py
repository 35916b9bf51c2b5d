"""The site's "MLPerf Training (imported)" page: labelled as derived, ranked only among imports."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("mlperf_logging")

from suite.mlperf import importer
from suite.site import mlperf_pages
from suite.site.builder import build_site

REPO = Path(__file__).resolve().parent.parent
LOGS = Path(__file__).resolve().parent / "mlperf_logs"


def _tree(root: Path, org: str, system: str, benchmark: str, round_dir: str, log: str, desc: str, n: int,
          edit=lambda text, i: text) -> None:
    bench = root / round_dir / org / "results" / system / benchmark
    bench.mkdir(parents=True)
    (root / round_dir / org / "systems").mkdir(parents=True, exist_ok=True)
    shutil.copy(LOGS / desc, root / round_dir / org / "systems" / f"{system}.json")
    text = (LOGS / log).read_text(encoding="latin-1")
    for i in range(n):
        (bench / f"result_{i}.txt").write_text(edit(text, i), encoding="latin-1")


def _slower(text: str, i: int) -> str:
    """The run ``i`` minutes slower: run_stop (and what follows it) later by i minutes."""
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if '"run_stop"' in line)
    import json
    body = json.loads(lines[at].split(":::MLLOG ", 1)[1])
    body["time_ms"] += 60_000 * (i + 3)
    lines[at] = ":::MLLOG " + json.dumps(body)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlperf-site")
    tree, results = root / "tree", root / "results"
    _tree(tree, "AMD", "MI300X_EPYC_9575F_pytorch_llama2_70b", "llama2_70b_lora", "v5.1",
          "amd_llama2_70b_lora_result_1.txt", "amd_MI300X_EPYC_9575F_pytorch_llama2_70b.json", 3)
    # a second, slower submission of the same benchmark (the Cisco system's description)
    _tree(tree, "Cisco", "1xC885A_M8-8xH200-SXM-141GB", "llama2_70b_lora", "v5.1",
          "amd_llama2_70b_lora_result_1.txt", "cisco_1xC885A_M8-8xH200-SXM-141GB.json", 3, _slower)
    _tree(tree, "Google", "cloud-tpu-v5p-1024-maxtext", "gpt3", "v4.0",
          "google_gpt3_result_0.txt", "google_cloud-tpu-v5p-1024-maxtext.json", 3)
    outcome = importer.run_import([tree], results, jobs=1)
    assert len(outcome.rows) == 3 and not outcome.problems
    for stored in (REPO / "results").glob("*.json"):  # goodbench's own results beside them
        shutil.copy(stored, results / stored.name)
    built = build_site(results, root / "out", workers=1)
    return built.index.parent


def test_the_page_is_labelled_derived_and_ranks_only_imported_results(site):
    page = " ".join((site / "mlperf.html").read_text(encoding="utf-8").split())
    assert "not an MLPerf result" in page and "never against goodbench workloads" in page
    assert "MLPerf Training v5.1 · llama2_70b_lora" in page and "MLPerf Training v4.0 · gpt3" in page
    assert page.index("v5.1 · llama2_70b_lora") < page.index("v4.0 · gpt3")  # newest round first
    section = page[page.index('id="v5_1-llama2_70b_lora"'):page.index('id="v4_0-gpt3"')]
    amd, cisco = section.index("SMCI300X"), section.index("Cisco UCS")
    assert amd < cisco  # the faster (AMD) submission ranks first
    assert "<td>1</td>" in section and "<td>2</td>" in section
    assert "https://github.com/mlcommons/training_results_v5.1/tree/main/AMD/results/" in section
    assert "AMD Instinct MI300X 192GB HBM3 × 8" in section
    assert section.count('class="gp-bars"') == 2 and section.count("<title>result_") == 6
    # gpt3 logs no eval brackets: "not measured", never a zero
    gpt3 = page[page.index('id="v4_0-gpt3"'):]
    assert "not measured" in gpt3 and "eval not measured" in gpt3 and "TPU-v5p × 512" in gpt3
    # the link from the index, in a section of its own
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="mlperf"' in index and 'href="mlperf.html#v5_1-llama2_70b_lora"' in index


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
