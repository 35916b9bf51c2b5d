"""Costs on the site: the MLPerf round and accelerator tables' cost column and the five price
columns of the downloads (accelerator-hours × the class's price, "no price" where the class has
none), the price table's page with every entry's source and date, and ``goodbench site``
pricing with the user's prices or refusing a hostile price file before it builds anything."""
from __future__ import annotations

import csv
import html
import re
import shutil
from pathlib import Path

import pytest
from markupsafe import escape

from suite.cli import main
from suite.cost import classes, hours, prices
from suite.mlperf import documents
from suite.site import formatting, mlperf_pages, price_page

REPO = Path(__file__).resolve().parent.parent
BUILT = {"built_at": "2026-11-28T00:00:00Z", "n_results": 0, "n_runs": 0}
WORDS = "not what the submitter paid"


def _pick() -> list[Path]:
    """Stored documents of one priced class, one class without a price and one without a score."""
    wanted = {"priced": None, "unpriced": None, "unscored": None}
    table = prices.load()
    for path in sorted((REPO / "results" / "mlperf").glob("*.json")):
        doc = documents.read(path)
        system = doc["system"]
        price = table.price_of(system.get("accelerator"), system.get("accelerator_memory_gib"))
        kind = ("unscored" if hours.mlperf(doc) is None else "priced" if price is not None else "unpriced")
        if wanted[kind] is None:
            wanted[kind] = path
        if all(wanted.values()):
            return list(wanted.values())  # type: ignore[arg-type]
    raise AssertionError(wanted)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cost-results")
    (folder / "mlperf").mkdir()
    for path in _pick():
        shutil.copy(path, folder / "mlperf" / path.name)
    return folder


def _download(out: Path) -> list[dict]:
    with open(out / "mlperf" / "all-results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_mlperf_line_carries_hours_price_cost_source_and_date(results, tmp_path):
    table = prices.load()
    mlperf_pages.write(tmp_path, results, BUILT, table)
    lines = _download(tmp_path)
    assert len(lines) == 3
    seen = set()
    for line in lines:
        if line["accelerator_hours"] == "":
            seen.add("no hours")
            assert line["cost_usd"] == ""
            continue
        acc_h = float(line["accelerator_hours"])
        assert acc_h == pytest.approx(int(line["accelerators"]) * float(line["score_minutes"]) / 60)
        if line["price_source"] == "no price":
            seen.add("no price")
            assert line["cost_usd"] == "" and line["price_per_accelerator_hour_usd"] == ""
        else:
            seen.add("priced")
            cls = classes.named(line["price_source"].split(":")[0])
            price = table.price(cls)
            assert float(line["price_per_accelerator_hour_usd"]) == pytest.approx(price.usd_per_hour)
            assert float(line["cost_usd"]) == pytest.approx(acc_h * price.usd_per_hour)
            assert line["price_date"] == price.date
        if line["energy_kwh"]:
            assert float(line["energy_cost_usd"]) == pytest.approx(float(line["energy_kwh"]) * table.electricity.usd_per_kwh)
        else:
            assert line["energy_cost_usd"] == ""
    assert seen == {"no hours", "no price", "priced"}
    pages = list((tmp_path / "mlperf").glob("v*.html")) + list((tmp_path / "mlperf").glob("acc-*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "cost (USD)" in text and WORDS in text
    cheapest = [text for page in pages if "Cheapest to target" in (text := page.read_text(encoding="utf-8"))]
    assert cheapest  # the priced one's round
    assert all("The cost, and so the front and its order, is the score's time only (MLPerf's score "
               "excludes init)" in " ".join(text.split()) for text in cheapest)  # review 14 #12: ordered by the score's time
    for page in (tmp_path / "mlperf").glob("history-*.html"):  # the cost history: each round's cheapest
        text = page.read_text(encoding="utf-8")
        assert "cheapest (USD)" in text and "cheapest by the score&#39;s time only" in text


def test_an_mlperf_cost_says_it_prices_the_score_time_only_and_gives_the_cost_with_init(results, tmp_path):
    """MLPerf's score leaves out initialization (its rule), goodbench's cost to target does not: the
    cost column's heading and tooltip, a note under the round and accelerator tables, the price page
    and the methodology say so, and a priced cost has under it the cost with the median run's init
    added (cost ÷ (1 − init share))."""
    from suite.site import about_pages

    mlperf_pages.write(tmp_path, results, BUILT, prices.load())
    priced = next(line for line in _download(tmp_path) if line["cost_usd"])
    init, train = float(priced["init_s_median"]), float(priced["time_to_train_s_median"])
    with_init = float(priced["cost_usd"]) * (init + train) / train
    page = " ".join((tmp_path / "mlperf" / mlperf_pages.round_page(priced["round"], priced["benchmark"]))
                    .read_text(encoding="utf-8").split())
    assert '>cost (USD), score time only</th>' in page
    assert "The score&#39;s time only: MLPerf&#39;s score leaves out initialization" in page  # the tooltip
    assert str(escape(mlperf_pages.COST_NOTE)) in page
    assert f" · ≈{formatting.usd(with_init)} with init</small>" in page
    assert float(priced["cost_with_init_usd_estimate"]) == pytest.approx(with_init)  # in the downloads too
    family = next((tmp_path / "mlperf").glob("acc-*.html")).read_text(encoding="utf-8")
    assert str(escape(mlperf_pages.COST_NOTE)) in " ".join(family.split())
    price_page.write(tmp_path, prices.load(), BUILT)
    about_pages.write(tmp_path, BUILT)
    for name in ("prices.html", "methodology.html"):
        text = " ".join((tmp_path / name).read_text(encoding="utf-8").split())
        assert "<strong>score time only (MLPerf excludes init)</strong>" in text, name


def test_the_users_price_prices_the_site(results, tmp_path):
    table = prices.load()
    priced = next(line for line in (mlperf_pages.write(tmp_path / "a", results, BUILT, table) and
                                    _download(tmp_path / "a")) if line["cost_usd"])
    cls = priced["price_source"].split(":")[0]
    mine = prices.override(table, [f"{cls}=1"])
    mlperf_pages.write(tmp_path / "b", results, BUILT, mine)
    again = next(line for line in _download(tmp_path / "b") if line["system"] == priced["system"])
    assert float(again["cost_usd"]) == pytest.approx(float(priced["accelerator_hours"]))  # × $1
    assert "user-supplied" in again["price_source"]


def test_the_price_page_lists_every_class_and_entry_with_source_and_date(tmp_path):
    table = prices.load()
    price_page.write(tmp_path, table, BUILT)
    page = (tmp_path / "prices.html").read_text(encoding="utf-8")
    assert "not what the submitter paid" in page and "no price" in page
    for cls in classes.CLASSES:
        assert cls.name in page
    for e in table.entries:
        assert e.address in page and e.date in page and e.provider in page
    assert "..2026" not in page  # a class's range of dates reads "2026-03-17 – 2026-11-28", wrapping at its spaces
    # and never inside a date, at its hyphens (as a phone's narrow card did)
    assert re.search(r'<span class="nowrap">\d{4}-\d\d-\d\d</span> – <span class="nowrap">\d{4}-\d\d-\d\d</span>', page)
    for e in table.entries:  # a page that states no date: "undated page, read …", its read day unbroken
        assert not e.undated or re.search(rf'undated pages?, read <span class="nowrap">{e.read}</span>', page)
    intro = " ".join(page.split("<p class=\"lead\">", 1)[1].split("</p>", 1)[0].split())
    assert "a list price of its date" not in intro and "where a page states no date" in intro  # review H #7


def test_site_refuses_a_hostile_price_file_before_building(tmp_path, capsys):
    bad = tmp_path / "prices.toml"
    bad.write_text('[[entry]]\nclass = "NVIDIA H100 SXM"\nprice_usd_per_hour = -1\n', encoding="utf-8")
    assert main(["site", "--results-dir", str(REPO / "results"), "--out", str(tmp_path / "out"),
                 "--price-file", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("goodbench: error: ") and not (tmp_path / "out").exists()


def test_goodbench_entries_cost_their_device_hours_at_their_class_price():
    import pandas as pd

    from suite.cost.entries import with_costs

    table = prices.load()
    frame = pd.DataFrame([
        {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_hours": 2.0},   # a priced class
        {"accelerator": "AMD EPYC 7763", "accelerator_hours": 0.01},          # a CPU: no price
        {"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_hours": None},  # a throughput entry
    ])
    out = with_costs(frame, table)
    h100 = table.price_of("NVIDIA H100 80GB HBM3").usd_per_hour
    assert out["cost_usd"][0] == pytest.approx(2.0 * h100) and out["price_per_accelerator_hour_usd"][0] == h100
    assert out["price_source"][1] == "no price" and pd.isna(out["cost_usd"][1])
    assert pd.isna(out["cost_usd"][2]) and WORDS in out["price_words"][0]
    assert out["energy_cost_usd"].isna().all()  # no energy measured in these rows
    measured = with_costs(frame.assign(energy_to_target_kwh=[2.0, None, None]), table)
    assert measured["energy_cost_usd"][0] == pytest.approx(2.0 * table.electricity.usd_per_kwh)


def test_a_cpu_entry_costs_its_core_hours_at_the_cpu_price_per_core_hour():
    import pandas as pd

    from suite.cost.entries import with_costs

    frame = pd.DataFrame([{"accelerator": "AMD EPYC", "accelerator_hours": 0.01, "core_hours": 0.02},
                          {"accelerator": "AMD EPYC", "accelerator_hours": None, "core_hours": None}])
    table = prices.load()
    cpu = table.price(classes.named("CPU"))
    out = with_costs(frame, table)
    if cpu is None:  # no CPU price in the shipped table: "no price", never a guess
        assert out["price_source"][0] == "no price" and pd.isna(out["cost_usd"][0])
    else:
        assert out["cost_usd"][0] == pytest.approx(0.02 * cpu.usd_per_hour) and out["price_source"][0].startswith("CPU: ")
    priced = with_costs(frame, prices.override(table, ["CPU=0.05"]))
    assert priced["cost_usd"][0] == pytest.approx(0.02 * 0.05)  # core-hours, not the one device's hours
    assert priced["price_source"][0].startswith("CPU: user-supplied") and pd.isna(priced["cost_usd"][1])


def test_a_workload_page_has_the_cost_column(tmp_path):
    from suite.site.builder import build_site

    results = tmp_path / "results"
    results.mkdir()
    for stored in (REPO / "results").glob("*.json"):
        shutil.copy(stored, results / stored.name)
    site = build_site(results, tmp_path / "out", workers=1).index.parent
    page = next((site / "workloads").glob("lm-char-*.html")).read_text(encoding="utf-8")
    assert "cost to target" in page and "core-hours" in page  # the stored runs are on a CPU: priced per core
    assert (site / "prices.html").is_file()
    run_pages = [p.read_text(encoding="utf-8") for p in (site / "runs").glob("*.html")]
    priced = [p for p in run_pages if "Cost to target" in p]  # the TTA runs' pages
    cpu = prices.load().price(classes.named("CPU"))
    assert priced and all("core-hours" in p for p in priced)  # a CPU: its cores × the time
    # a vCPU price applied per logical core, and the page says so (walkthrough 4 M2)
    assert all(("no price" in p) == (cpu is None) and ("per vCPU-hour (CPU)" in p) == (cpu is not None) for p in priced)
    # each says which cores it billed (review G #3), and the workload table's cell how many
    bases = (hours.AFFINITY, hours.SNAPSHOT_HOST, hours.RECORDED, hours.RECORDED_FEWER, hours.CAPPED)
    assert all(any(b in html.unescape(p) for b in bases) for p in priced)
    assert re.search(r"core-hours \(\d+ cores? billed × the time, self-reported\)", page)
    assert len(priced) < len(run_pages)  # throughput runs have no time to target


def test_a_run_page_costs_its_device_hours_at_its_class_price():
    from suite.site.run_page import cost_context

    price = prices.load().price_of("NVIDIA H100 80GB HBM3")
    found = cost_context({"metrics": {"tta_s": 7200.0}, "distributed": {"world_size": 4}}, price)
    assert found["hours"] == 8.0 and found["cost"] == f"${8 * price.usd_per_hour:.2f}" and WORDS in found["words"]
    assert cost_context({"metrics": {"tta_s": None}}, price) is None
    assert cost_context({"metrics": {"tta_s": 3600.0}}, None)["cost"] is None
    on_cpu = cost_context({"metrics": {"tta_s": 1800.0}}, None, cores=2, basis=hours.AFFINITY)  # a CPU: core-hours
    assert on_cpu["hours"] == 1.0 and on_cpu["unit"] == "core" and on_cpu["cost"] is None
    assert on_cpu["basis"] == hours.AFFINITY  # the page says what the cores billed are


def test_compare_prices_each_sides_time_to_target_with_the_users_price(tmp_path, capsys):
    import json

    import numpy as np
    from factories import synthetic_document

    from suite.record import results as record

    rng = np.random.default_rng(46)
    paths = [record.write(tmp_path / f"{i}.json", synthetic_document("h100-box", rng=rng, accelerator=0,
                                                                      workloads=("lm-char",)))
             for i in range(2)]
    assert main(["compare", str(paths[0]), str(paths[1]), "--format", "json", "--price", "NVIDIA H100=2"]) == 0
    lines = json.loads(capsys.readouterr().out)["cost_to_target"]
    assert len(lines) == 2
    for line in lines:
        assert line["price_per_accelerator_hour_usd"] == 2.0 and "user-supplied" in line["price_source"]
        assert line["cost_usd"] == pytest.approx(2.0 * line["accelerator_hours"])
    assert main(["compare", str(paths[0]), str(paths[1])]) == 0
    out = capsys.readouterr().out
    assert "cost to target" in out and "device-hours" in out and "list price of" in out
    assert main(["compare", str(paths[0]), str(paths[1]), "--price", "NVIDIA H100=-2"]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_cheapest_to_target_is_the_cost_time_pareto_front_of_every_round():
    from collections import defaultdict

    from suite.site import mlperf_model

    docs, _ = documents.load_all(REPO / "results")
    rows = [mlperf_model.row(d) for d in docs]
    mlperf_model.add_costs(rows, prices.load())
    mlperf_model.mark_carried(rows)
    groups = defaultdict(list)
    for r in rows:
        groups[(r.round, r.benchmark)].append(r)
    fronts = 0
    for members in groups.values():
        front = mlperf_model.cheapest_to_target(members)
        candidates = [r for r in members if r.complete and r.division == "closed" and r.cost_usd is not None
                      and r.carried_of is None]
        assert bool(front) == bool(candidates)
        fronts += bool(front)
        for r in candidates:
            better = [o for o in candidates if o.minutes < r.minutes and o.cost_usd < r.cost_usd]
            assert any(o is r for o in front) == (not better and not any(o.minutes == r.minutes and o.cost_usd < r.cost_usd
                                                           for o in candidates))
        assert [r.minutes for r in front] == sorted(r.minutes for r in front)
        assert [r.cost_usd for r in front] == sorted((r.cost_usd for r in front), reverse=True)
    assert fronts > 50
    power = prices.load().electricity.usd_per_kwh
    measured = [r for r in rows if r.energy_kwh is not None]
    assert measured and all(r.energy_cost_usd == pytest.approx(r.energy_kwh * power) for r in measured)
    assert all(r.energy_cost_usd is None for r in rows if r.energy_kwh is None)


@pytest.fixture(scope="module")
def every_mlperf_row():
    """Every stored MLPerf document as the pages' rows, priced with the shipped table."""
    from suite.site import mlperf_model

    docs, unreadable = documents.load_all(REPO / "results")
    assert not unreadable and len(docs) == 2173
    rows = [mlperf_model.row(d) for d in docs]
    mlperf_model.add_costs(rows, prices.load())
    mlperf_model.mark_carried(rows)
    return rows


def test_all_results_csv_of_every_document_carries_the_five_cost_columns(every_mlperf_row, tmp_path):
    """mlperf/all-results.csv as the site writes it, over all 2,173 documents: accelerator-hours =
    accelerators × the score in hours wherever the score is a time and the count known, cost =
    those hours × the class's price, and the price's source and date beside it ("no price" else)."""
    from suite.site.tables import downloads

    downloads(mlperf_pages.records(every_mlperf_row), tmp_path / "all-results")
    with open(tmp_path / "all-results.csv", newline="", encoding="utf-8") as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == 2173
    five = ["accelerator_hours", "price_per_accelerator_hour_usd", "cost_usd", "price_source", "price_date"]
    assert all(c in lines[0] for c in five)
    table, hours_n, priced, with_init = prices.load(), 0, 0, 0
    for line, r in zip(lines, every_mlperf_row):
        if line["score_minutes"] == "" or line["accelerators"] in ("", "0"):
            assert line["accelerator_hours"] == "" and line["cost_usd"] == ""
            continue
        hours_n += 1
        acc_h = float(line["accelerator_hours"])
        assert acc_h == pytest.approx(int(line["accelerators"]) * float(line["score_minutes"]) / 60, rel=1e-12)
        price = table.price_of(r.doc["system"].get("accelerator"), r.doc["system"].get("accelerator_memory_gib"))
        if price is None:
            assert line["price_source"] == "no price" and line["cost_usd"] == "" and line["price_date"] == ""
            continue
        priced += 1
        assert float(line["price_per_accelerator_hour_usd"]) == pytest.approx(price.usd_per_hour)
        assert float(line["cost_usd"]) == pytest.approx(acc_h * price.usd_per_hour, rel=1e-12)
        assert line["price_source"].startswith(price.cls.name) and line["price_date"] == price.date
        if line["init_s_median"] and line["time_to_train_s_median"]:  # cost ÷ (1 − init share)
            init, train = float(line["init_s_median"]), float(line["time_to_train_s_median"])
            assert float(line["cost_with_init_usd_estimate"]) == pytest.approx(float(line["cost_usd"]) * (init + train)
                                                                               / train, rel=1e-9)
            with_init += 1
        else:
            assert line["cost_with_init_usd_estimate"] == ""
    assert hours_n == 2068 and priced > 1000 and with_init > 1000
    assert all(line["cost_with_init_usd_estimate"] == "" for line in lines if line["cost_usd"] == "")


def test_the_pareto_chart_draws_the_front_and_every_other_priced_result(every_mlperf_row):
    from collections import defaultdict

    from suite.site import cost_charts, mlperf_model

    groups = defaultdict(list)
    for r in every_mlperf_row:
        groups[(r.round, r.benchmark)].append(r)
    drawn = 0
    for members in groups.values():
        front, weighed = mlperf_model.cheapest_to_target(members), mlperf_model.priced_new(members)
        svg = cost_charts.pareto(weighed, front, "t")
        if not front:
            assert svg is None
            continue
        drawn += 1
        svg = str(svg)
        assert svg.count('class="dot s1"') == len(front) and svg.count('class="dot faint"') == len(weighed) - len(front)
        assert ('class="series s1"' in svg) == (len(front) > 1) and "not what a submitter paid" in svg
        assert str(escape(cost_charts.ORDER)) in svg  # ordered by the score's time only (review 14 #12)
    assert drawn > 50


def test_the_cost_history_joins_each_rounds_cheapest_and_breaks_where_the_target_changed(every_mlperf_row):
    from suite.site import cost_charts

    bert = [r for r in every_mlperf_row if r.benchmark == "bert" and r.cost_usd is not None and r.complete
            and r.division == "closed"]
    rounds = sorted({r.round for r in bert}, key=lambda n: tuple(int(p) for p in n.lstrip("v").split(".")))
    priced = {rnd: [r for r in bert if r.round == rnd] for rnd in rounds}
    svg = str(cost_charts.history(rounds, priced, "t"))
    assert svg.count('class="dot s0"') == len(rounds) and svg.count('class="dot faint"') == len(bert)
    assert svg.count('class="series s0"') == 1
    cheapest = min(priced[rounds[-1]], key=lambda r: r.cost_usd)
    assert f"cheapest of {cheapest.round}: " in svg and str(escape(cost_charts.ORDER)) in svg
    assert f"(score time only; ≈{formatting.usd(cheapest.cost_with_init_usd)} with init)" in svg  # its tooltip
    assert str(cost_charts.history(rounds, priced, "t", {rounds[3]})).count('class="series s0"') == 2  # 3 + the rest
    assert cost_charts.history(rounds, {}, "t") is None


def test_the_cost_historys_cheapest_cell_keeps_the_cost_with_init(every_mlperf_row):
    """Review 14 #12: the cost history's cell of a round's cheapest replaced the sub that held
    "≈ $X with init" with its time and system; it keeps it and adds them."""
    bert = [r for r in every_mlperf_row if r.benchmark == "bert"]
    checked = 0
    for rnd in sorted({r.round for r in bert}):
        found = mlperf_pages._cheapest_cell(bert, rnd, None)
        if not found["v"]:  # no priced result charted that round
            continue
        r = min(mlperf_pages._priced_charted(bert, rnd, None), key=lambda r: r.cost_usd)
        assert found["sub"].endswith(f" · {formatting.num(r.minutes)} min · {r.family} × {r.count}")
        if r.cost_with_init_usd is not None:
            assert f"≈{formatting.usd(r.cost_with_init_usd)} with init · " in found["sub"]
            checked += 1
    assert checked >= 5


def test_a_price_per_hour_keeps_three_significant_digits_below_a_dollar():
    from suite.site.formatting import usd as price_usd  # a price per hour is an amount like any other

    assert (price_usd(0.0465), price_usd(0.0929), price_usd(2.84), price_usd(4.09625)) == ("$0.0465", "$0.0929",
                                                                                           "$2.84", "$4.10")
    assert price_usd(None) == "—"


def test_amounts_keep_three_significant_digits_below_a_dollar_in_plain_decimals():
    """Walkthrough 4, L7: compare printed a smoke run's cost as $7.23e-05. A new user's review: the
    site showed $0.0149 as "$0.01" (a third off) beside "$0.000487". One rule for the site, compare
    (the same function) and ``goodbench prices``."""
    from suite.commands.prices import usd as prices_usd
    from suite.compare.costs import usd as compare_usd
    from suite.site.formatting import usd

    assert compare_usd is usd is prices_usd
    assert [usd(v) for v in (7.23e-05, 0.000854, 0.0149, 0.42, 0.5, 0.9996, 12.345, 4512.2, 0.0, None)] == [
        "$0.0000723", "$0.000854", "$0.0149", "$0.42", "$0.50", "$1.00", "$12.35", "$4,512", "$0.00", "—"]
    assert [usd(v) for v in (0.0465, 0.04, 2.84, -0.0149)] == ["$0.0465", "$0.04", "$2.84", "-$0.0149"]


def test_compare_prices_a_cpu_result_per_core_hour(tmp_path, capsys):
    import json

    stored = REPO / "results" / "e05a95764b241756bb4542e64fcb74319bf62c71aa5387992615a9cbe4034571.json"
    doc = json.loads(stored.read_text(encoding="utf-8"))
    copy = tmp_path / "copy.json"
    shutil.copy(stored, copy)
    assert main(["compare", str(stored), str(copy), "--format", "json", "--price", "CPU=0.04"]) == 0
    lines = json.loads(capsys.readouterr().out)["cost_to_target"]
    cores = hours.billed_cores(doc)[0]  # the cores the run could use (here: the host's, no snapshots recorded)
    assert lines and all(line["core_hours"] == pytest.approx(cores * line["accelerator_hours"]) for line in lines)
    assert all(line["cost_usd"] == pytest.approx(0.04 * line["core_hours"]) for line in lines)
    assert main(["compare", str(stored), str(copy), "--price", "CPU=0.04"]) == 0
    out = capsys.readouterr().out
    assert "core-hours, $" in out and "at $0.04 per core-hour" in out  # three digits below a dollar, per core
    assert "e-0" not in out  # a cost of a hundredth of a cent in plain decimals, not $7.23e-05


def test_each_cheapest_to_target_says_how_many_carried_over_results_it_leaves_out(every_mlperf_row, tmp_path):
    """A fixed sentence said "(one carried over from an earlier round is left out)" on every round
    page with the view (a user's find: v0.7 BERT carries none, v2.1 ResNet 20). Each page now
    counts its own: complete closed-division results carried over, or says nothing of them."""
    from collections import defaultdict

    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in every_mlperf_row:
        groups[(r.round, r.benchmark)].append(r)
    counts = {}
    for key, members in groups.items():
        cheapest = mlperf_pages._cheapest(members)
        if cheapest is not None:
            counts[key] = cheapest["carried"]
            assert cheapest["carried"] == sum(r.complete and r.division == "closed" and r.carried_of is not None
                                              for r in members)
    zero, one, many = (next(k for k, n in counts.items() if test(n))
                       for test in (lambda n: n == 0, lambda n: n == 1, lambda n: n > 1))
    common = {"label": documents.LABEL, "derived": mlperf_pages.DERIVED, "cost_note": mlperf_pages.COST_NOTE,
              "checked": mlperf_pages.CHECKED, "checked_title": mlperf_pages.CHECKED_TITLE, **BUILT}
    (tmp_path / mlperf_pages.FOLDER).mkdir()
    mlperf_pages._round_pages(tmp_path, {k: groups[k] for k in (zero, one, many)}, common)
    said = {k: " ".join((tmp_path / mlperf_pages.FOLDER / mlperf_pages.round_page(*k)).read_text().split())
            for k in (zero, one, many)}
    assert "carried over from an earlier round" not in said[zero].split("Cheapest to target")[1].split("</p>")[0]
    assert "new in this round (1 carried over from an earlier round is left out)." in said[one]
    assert f"new in this round ({counts[many]} carried over from an earlier round are left out)." in said[many]


def test_an_accelerator_whose_results_name_no_count_has_no_largest_system(every_mlperf_row, tmp_path):
    """The accelerators table read "largest system 0" for NVIDIA V100 PCIe, whose results name no
    count (its own page shows "—"): unknown now, None, shown "—"; a family with counts keeps its largest."""
    families = {"NVIDIA V100 PCIe": [r for r in every_mlperf_row if r.family == "NVIDIA V100 PCIe"],
                "NVIDIA H100 SXM": [r for r in every_mlperf_row if r.family == "NVIDIA H100 SXM"]}
    assert families["NVIDIA V100 PCIe"] and all(r.count is None for r in families["NVIDIA V100 PCIe"])
    common = {"label": documents.LABEL, "derived": mlperf_pages.DERIVED, "cost_note": mlperf_pages.COST_NOTE,
              "checked": mlperf_pages.CHECKED, "checked_title": mlperf_pages.CHECKED_TITLE, **BUILT}
    (tmp_path / mlperf_pages.FOLDER).mkdir()
    found = {a["family"]: a["largest"] for a in mlperf_pages._accelerator_pages(tmp_path, families, common)}
    assert found["NVIDIA V100 PCIe"] is None and mlperf_pages.cell(found["NVIDIA V100 PCIe"])["text"] == "—"
    assert found["NVIDIA H100 SXM"] == max(r.count for r in families["NVIDIA H100 SXM"] if r.count)


def test_the_mlperf_index_accounts_for_every_result_without_a_score(every_mlperf_row):
    """A user's find: the index named 27 of the 59 results without a score (result logs absent);
    the other 32 have too few runs that count (dropped, or none left after the olympic rule), and
    are now counted too, so that the line's parts add up to every result."""
    counts = mlperf_pages.score_counts(every_mlperf_row)
    unscored_later = sum(bool(r.later) and r.minutes is None for r in every_mlperf_row)
    assert counts["absent_n"] > 0 and counts["dropped_n"] > 0
    assert counts["scored"] + unscored_later + counts["absent_n"] + counts["dropped_n"] == len(every_mlperf_row)
    assert all(r.status.startswith("no score: ") and ("runs dropped" in r.status or "no run left" in r.status)
               for r in every_mlperf_row if r.minutes is None and not r.later and not r.absent)


def test_goodbenchs_cost_to_target_is_priced_on_mlperfs_clock_as_its_pages_say(tmp_path):
    """A user's find: the methodology and prices pages said goodbench's cost to target counts from
    the run's start "initialization included", where every stored run's time to target starts at
    run_start, after it (MLPerf's clock). The pages now say so, and the hours priced are the time
    to target's, shorter than the run's wall time by its initialization at least."""
    import json

    from suite.record import mllog
    from suite.site import about_pages

    stored = sorted((REPO / "results").glob("*.json"))  # goodbench's own stored files
    runs = [r for p in stored for r in json.loads(p.read_text()).get("runs") or []
            if isinstance(r, dict) and (r.get("metrics") or {}).get("tta_s") is not None]
    assert runs
    for run in runs:
        events = {e.key: e for e in mllog.parse(run["event_log"])}
        init = events["init_stop"].time_ms - events["init_start"].time_ms
        assert run["metrics"]["tta_s"] <= run["wall_s"] - init / 1000 + 1e-6  # initialization not in it
    about_pages.write(tmp_path, BUILT)
    price_page.write(tmp_path, prices.load(), BUILT)
    for page in ("methodology.html", "prices.html"):
        text = " ".join(html.unescape((tmp_path / page).read_text()).split())
        assert "initialization included" not in text and "on MLPerf's clock" in text, page
