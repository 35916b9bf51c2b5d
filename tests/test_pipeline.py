"""One leaderboard pipeline (suite/leaderboard/pipeline.py): the site, its downloads and
``goodbench compare`` read the same files the same way (validated under the stored rules, every
figure recomputed), so a site built from two files and ``compare`` run on them find the same
figures; each entry carries its ranking group and the reason."""
from __future__ import annotations

import json

import factories
import numpy as np
import pandas as pd
import pytest

from suite import site
from suite.cli import main
from suite.figures import derive
from suite.leaderboard import pipeline
from suite.leaderboard.rows import RANKING_GROUPS
from suite.record import results

# compare's figure → the leaderboard entry's column
SAME = {"samples_per_s": "samples_per_s", "tokens_per_s": "tokens_per_s", "mfu": "mfu",
        "energy_per_sample": "energy_per_sample_j", "goodput": "goodput", "tta": "score_s"}


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    rng = np.random.default_rng(48)
    for name, system, level in (("a.json", "pipeline-alpha", 0.40), ("b.json", "pipeline-beta", 0.30)):
        doc = factories.synthetic_document(system, rng=rng, accelerator=0, goodput=True, mfu_level=level,
                                           workloads=("gpt2-124m", "lm-char"))
        results.write(folder / name, doc)
    out = tmp_path_factory.mktemp("site")
    site.build(folder, out)
    return folder, out


def _compared(folder, capsys) -> dict:
    assert main(["compare", str(folder / "a.json"), str(folder / "b.json"), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_site_and_compare_find_the_same_figures_in_the_same_files(two_files, capsys):
    folder, out = two_files
    assert derive.required_seeds("full", "throughput") == 1  # one run an entry: no median against a mean
    shown = pd.read_json(out / "compare.json", orient="records")  # the compare page's entries, downloaded
    data = _compared(folder, capsys)
    checked = 0
    for pair in data["new"][0]["pairs"]:
        for side, file in (("base", "a.json"), ("new", "b.json")):
            [entry] = shown[(shown["file"] == file) & (shown["workload"] == pair["workload"])
                            & (shown["scale"] == pair["scale"])].to_dict(orient="records")
            for row in pair["figures"]:
                column = SAME.get(row["figure"])
                if column is None or (row["figure"] != "tta" and entry["kind"] == "tta"):
                    continue  # step-time quantiles; a TTA entry's rates are medians over its seeds
                value, site_value = row[side], entry[column]
                if value is None or site_value is None or (isinstance(site_value, float) and np.isnan(site_value)):
                    assert value is None and (site_value is None or np.isnan(site_value)), (row, entry[column])
                    continue
                assert value == pytest.approx(site_value, rel=1e-9), (pair["key"], row["figure"], side)
                checked += 1
    assert checked >= 10


def test_every_reader_gets_the_same_entries_with_their_ranking_and_reason(two_files):
    folder, out = two_files
    board = pipeline.read(folder)
    assert not board.invalid and len(board.entries) == 4
    assert set(board.entries["ranking"]) <= set(RANKING_GROUPS)
    assert (board.entries["ranking"] == "ranked").all() and board.entries["ranking_reason"].isna().all()
    assert set(board.entries["trust"]) == {"unsigned"}
    shown = pd.read_json(out / "compare.json", orient="records")
    for entry in board.entries.to_dict(orient="records"):
        [same] = shown[(shown["file"] == entry["file"]) & (shown["workload"] == entry["workload"])].to_dict("records")
        assert same["samples_per_s"] == pytest.approx(entry["samples_per_s"], rel=1e-12)
        assert same["ranking"] == entry["ranking"]
    table = pipeline.table([(p.name, results.load(p)) for p in sorted(folder.glob("*.json"))])
    assert list(table["ranking"]) == list(board.entries["ranking"])


def test_compare_reads_a_file_as_the_leaderboard_does(tmp_path, capsys):
    """A file's own figures are never compared: compare recomputes them from the raw records, as
    the site does (a reported figure may be off by the validator's tolerance)."""
    doc = factories.synthetic_document("pipeline-gamma", rng=np.random.default_rng(3), accelerator=0,
                                       workloads=("gpt2-124m", "lm-char"))
    honest = tmp_path / "honest.json"
    results.write(honest, doc)
    for run in doc["runs"]:  # within the validator's tolerance: valid, but not what the raw records give
        metrics = run["metrics"]
        for key in ("energy_per_sample_j", "mfu"):
            if metrics.get(key) is not None:
                metrics[key] *= 1.004
    shifted = tmp_path / "shifted.json"
    results.write(shifted, doc)
    assert pipeline.read_file(shifted).figures["runs"] == pipeline.read_file(honest).figures["runs"]
    data = _compared_pair(honest, shifted, capsys)
    compared = 0
    for pair in data["new"][0]["pairs"]:
        for row in pair["figures"]:
            if row["figure"] in ("energy_per_sample", "mfu") and row["base"] is not None:
                assert row["base"] == row["new"], (pair["key"], row["figure"])
                compared += 1
    assert compared >= 3


def _compared_pair(base, new, capsys) -> dict:
    assert main(["compare", str(base), str(new), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_refuses_an_invalid_file_naming_its_first_problem(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "runs": []}')
    assert main(["compare", str(bad), str(bad)]) == 1
    assert "goodbench: error: not a valid results file: " in capsys.readouterr().err
