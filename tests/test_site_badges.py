"""The leaderboard tables' caveats as badges, and the columns no row has a value for.

Each caveat under a system (and under the signer on a system page) is a badge of a few words,
coloured as the run page colours the same words, with its whole sentence kept twice: as the
badge's ``title`` and, for a keyboard, a screen reader or paper, in a numbered note under the
table that the badge links to (``aria-describedby`` too). A column empty on every row of a table
is not shown there, and the table says so under itself; the CSV and JSON downloads keep every
column.
"""
from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import factories
import numpy as np
import pandas as pd
import pytest

from suite import site
from suite.figures import naming
from suite.leaderboard import pipeline
from suite.leaderboard.trust import UNSIGNED_WHY
from suite.site import columns, labels, tables
from suite.site.render import _environment
from suite.trust.labels import OWN_RERUN_TEXT

PAYLOAD = "<script>alert(1)</script>\"'><img src=x onerror=alert(1)>"
FP = "SHA256:" + "A" * 43
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def entries() -> pd.DataFrame:
    """Real entries: a GPU system's (energy, MFU measured) and a CPU's (neither), every workload at full scale."""
    gpu = factories.synthetic_document("badge-gpu", rng=np.random.default_rng(2), accelerator=0)
    cpu = factories.synthetic_document("badge-cpu", rng=np.random.default_rng(3), accelerator=5)
    return pipeline.table([("gpu.json", gpu), ("cpu.json", cpu)])


class _Page(HTMLParser):
    """The badges (links and plain), the notes by id, and the header keys of one rendered table."""

    def __init__(self):
        super().__init__()
        self.badges: list[dict] = []
        self.notes: dict[str, str] = {}
        self.tags: list[str] = []
        self._badge: dict | None = None
        self._note: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if "badge" in classes and self._note is None:
            self._badge = {"tag": tag, "classes": classes, "attrs": attrs, "text": ""}
        if tag == "li" and "-note-" in attrs.get("id", ""):
            self._note = attrs["id"]
            self.notes[self._note] = ""

    def handle_endtag(self, tag):
        if self._badge is not None and tag == self._badge["tag"]:
            self.badges.append(self._badge)
            self._badge = None
        if tag == "li":
            self._note = None

    def handle_data(self, data):
        if self._badge is not None:
            self._badge["text"] += data
        if self._note is not None:
            self.notes[self._note] += data


def _render(frame: pd.DataFrame, tmp_path: Path, table: list[str] | None = None) -> tuple[str, dict]:
    """``frame`` as one table page (the workload pages' columns, else ``table``): its HTML and its context."""
    [page] = tables.table_pages(frame, table or tables.ENTRY_TABLE, "t-x", "a table", tmp_path / "dl" / "t-x",
                                "../", False, lambda k: f"p{k}.html")
    template = _environment().from_string('{% from "_macros.html" import table %}{{ table(t) }}')
    return template.render(t=page), page


def _one(entries: pd.DataFrame, **fields) -> pd.DataFrame:
    """The GPU system's lm-char entry with ``fields`` set."""
    row = entries[(entries["system"] == "badge-gpu") & (entries["workload"] == "lm-char")].iloc[[0]].copy()
    for key, value in fields.items():
        row[key] = pd.Series([value], index=row.index, dtype=object)
    return row


OWN = {"implementation": "tiny-mlp", "kind": "tta", "division": "own"}
# each caveat: the fields that make it, its whole sentence (or a part it must hold), its badges
# (words, tone) — never words that read better than the sentence
CAVEATS = {
    "name shared": ({"system_note": f"name shared with another signer's system \u201cbadge-gpu ({FP[:19]}…)\u201d, "
                                    "stored first"},
                    "name shared with another signer's system \u201cbadge-gpu (SHA256:AAAAAAAAAAAA…)\u201d, stored first",
                    [("name shared", "warn")]),
    "name resembles": ({"system_note": "name resembles \u201cbadge-gpu (unsigned)\u201d, a system of unsigned files, "
                                       "stored first"},
                       "name resembles \u201cbadge-gpu (unsigned)\u201d, a system of unsigned files, stored first",
                       [("name resembles another's", "warn")]),
    "own code, one clock": (OWN, f"own code \u201ctiny-mlp\u201d (own division; its quality by goodbench's pinned "
                                 f"evaluator, run in the submitter's process: self-reported; {labels.OWN_TIMING})",
                            [("own code, self-reported", "warn"), ("one clock, never ranked", "warn")]),
    "own code, two clocks": ({**OWN, "second_clock": True}, labels.TWO_CLOCKS,
                             [("own code, self-reported", "warn"), ("two clocks, self-reported", "warn")]),
    "own code, two clocks, GPU": ({**OWN, "second_clock": True, "gpu_steps": True}, labels.TWO_CLOCKS + labels.GPU_STEPS,
                                  [("own code, self-reported", "warn"), ("two clocks, GPU steps self-timed", "warn")]),
    "own code, short steps": ({**OWN, "short_steps": True}, labels.SHORT_STEPS,
                              [("own code, self-reported", "warn"), ("steps too short, never ranked", "warn")]),
    "own code, free job": ({**OWN, "kind": "throughput"}, "own code \u201ctiny-mlp\u201d, a free job (never ranked; ",
                           [("own code, never ranked", "warn"), ("one clock, never ranked", "warn")]),
    "copy of a signed run": ({"copy_status": "copy", "copy_of": FP}, "copy of a run signed by SHA256:AAAAAAAAAAAA…, "
                             "not ranked", [("copy, not ranked", "bad")]),
    "copy of an unsigned run": ({"copy_status": "copy", "copy_of": None},
                                "copy of an unsigned run stored first, not ranked", [("copy, not ranked", "bad")]),
    "disputed": ({"copy_status": "disputed", "copy_of": FP},
                 "disputed: the same run as one signed by SHA256:AAAAAAAAAAAA… and stored first, not ranked",
                 [("disputed, not ranked", "bad")]),
    "reproduced": ({"trust": "reproduced", "reproduced_runs": "1 of 5 runs", "reviewed_by": "Audit team"},
                   "reproduced by a trusted reviewer: 1 of 5 runs (Audit team)",
                   [("unsigned; reproduced: 1 of 5 runs", "good")]),
    "reproduced and re-run": ({"trust": "reproduced", "reproduced_runs": "1 of 5 runs", "rerun_runs": "2 of 5 runs",
                               "reviewed_by": "Audit team", **OWN},
                              f"re-run by a trusted reviewer: 2 of 5 runs, {OWN_RERUN_TEXT}",
                              [("unsigned; reproduced: 1 of 5 runs", "good"),
                               ("re-run, code not read: 2 of 5 runs", "warn")]),
    "re-run": ({"trust": "rerun", "rerun_runs": "1 of 1 run", "reviewed_by": "Audit team", **OWN},
               f"re-run by a trusted reviewer: 1 of 1 run (Audit team): {OWN_RERUN_TEXT}",
               [("unsigned; re-run, code not read: 1 of 1 run", "warn")]),
    "differs": ({"trust": "differs", "reviewed_by": "Audit team"},
                "unsigned; a trusted reviewer's reproduction differs (Audit team)",
                [("unsigned; reproduction differs", "bad")]),
    # a signed row keeps its signature beside what a reproduction found (walkthrough 5, L10)
    "signed, differs": ({"trust": "differs", "reviewed_by": "Audit team", "signer": FP},
                        "signed by SHA256:AAAAAAAAAAAA…; a trusted reviewer's reproduction differs (Audit team)",
                        [("signed; reproduction differs", "bad")]),
    "signed, inconclusive": ({"trust": "signed", "signer": FP, "inconclusive_runs": "1 of 1 run",
                              "reviewed_by": "Audit team"},
                             "signed by SHA256:AAAAAAAAAAAA…; a trusted reviewer's reproduction was inconclusive: "
                             "1 of 1 run (Audit team)",
                             [("signed; reproduction inconclusive: 1 of 1 run", "plain")]),
    "signed": ({"trust": "signed", "signer": FP}, "signed by SHA256:AAAAAAAAAAAA…, not reproduced",
               [("signed, not reproduced", "plain")]),
    "under load": ({"under_load": "1 of 3 runs measured under load (self-reported)"}, columns.UNDER_LOAD,
                   [("under load", "bad")]),
    "load not recorded": ({"load_recorded": False}, columns.LOAD_NOT_RECORDED, [("load not recorded", "warn")]),
    "older rules": ({"stale_rules": "stored under rules v3; today's rules (v9) find 2 problems in it (first: log-header)",
                     "rules_version": 3},
                    "stored under rules v3; today's rules (v9) find 2 problems in it (first: log-header)",
                    [("older rules (v3)", "warn")]),
}
# the grey badges, once shown bare (no number, no title, no note): each has its note, which says why
CAVEATS["no known peak"] = ({"known_peak": False}, columns.PEAK_WHY, [("no known peak, not ranked", "plain")])
CAVEATS["unsigned"] = ({"trust": "unsigned", "signer": None}, f"unsigned, not reproduced: {UNSIGNED_WHY}",
                       [("unsigned, not reproduced", "plain")])
# under the score: the runs not in it
CAVEATS["partial run"] = ({"partial_runs": 1}, f"1 partial run: {columns.INCOMPLETE_WHY}", [("1 partial run", "warn")])
# under samples/s: the share of the steady loop its runs waited for batches (the split is the run's own clock)
CAVEATS["batch waits"] = ({"batch_wait_share": 0.3}, "batch waits 30% of the steady loop: samples/s of rules before "
                          "v10 counts the steps' own time, not the waits between them, and where a step ends and its "
                          "batch wait begins is the run's own clock (self-reported)",
                          [("batch waits 30%, self-reported", "warn")])
# under an energy figure no other record of the file checked (rule stream-energy)
CAVEATS["energy self-reported"] = ({"energy_unchecked": "the file holds no power sampled over the run"},
                                   "energy self-reported: not checked against the power sampled beside the energy "
                                   "counter, since the file holds no power sampled over the run",
                                   [("energy self-reported", "warn")])


@pytest.mark.parametrize("kind", list(CAVEATS))
def test_each_caveat_is_a_badge_with_its_whole_sentence_in_its_title_and_its_note(entries, tmp_path, kind):
    fields, sentence, badges = CAVEATS[kind]
    page, context = _render(_one(entries, **fields), tmp_path)
    [said] = [c for cell in context["rows"][0] for c in cell["caveats"] if sentence in c["text"]]
    assert [(b["words"], b["tone"]) for b in said["badges"]] == badges
    # the sentence says more than its badges: never a note that only repeats them
    assert all(said["text"] != w and len(said["text"]) > len(w) + 10 for w, _ in badges)
    parsed = _Page()
    parsed.feed(page)
    note_id = f"t-x-note-{said['n']}"
    for words, tone in badges:
        [badge] = [b for b in parsed.badges if b["tag"] == "a" and b["text"] == f"{words}{said['n']}"]
        assert f"badge-{tone}" in badge["classes"]
        # the mouse's tooltip, and a link (and a description) for a keyboard and a screen reader
        assert badge["attrs"]["title"] == said["text"]
        assert badge["attrs"]["href"] == f"#{note_id}" and badge["attrs"]["aria-describedby"] == note_id
    # the note, printed under the table: its badges' words, then the whole sentence
    assert parsed.notes[note_id] == " ".join(w for w, _ in badges) + " " + said["text"]
    assert "Each badge above in full:" in page


def test_every_badge_is_a_numbered_link_with_a_title_and_a_note_that_explains_it(entries, tmp_path):
    """No badge is bare: "no known peak, not ranked" and "unsigned, not reproduced" (once grey
    spans without a number, a title or a note) link to a note that says why, as every badge does."""
    row = _one(entries, known_peak=False, trust="unsigned", signer=None, partial_runs=1, under_load="x")
    for table in (tables.ENTRY_TABLE, tables.SYSTEM_TABLE):
        page, context = _render(row, tmp_path, table)
        parsed = _Page()
        parsed.feed(page)
        body = page.split("<tbody>")[1].split("</tbody>")[0]
        assert parsed.badges and '<span class="badge' not in body  # in the table every badge is a link
        for badge in parsed.badges:
            note_id = badge["attrs"]["aria-describedby"]
            assert badge["tag"] == "a" and badge["attrs"]["href"] == f"#{note_id}" and badge["attrs"]["title"]
            words = badge["text"].rstrip("0123456789")
            assert badge["text"] == f"{words}{note_id.rsplit('-', 1)[1]}"
            # the note: the badge's words, then a sentence that says more than them
            assert parsed.notes[note_id].startswith(words) and len(badge["attrs"]["title"]) > len(words) + 10
        peak = [b for b in parsed.badges if b["text"].startswith("no known peak, not ranked")]
        assert len(peak) == 1 and peak[0]["attrs"]["title"] == columns.PEAK_WHY  # on both pages alike
        assert "a CPU has none" in columns.PEAK_WHY and "no MFU" in columns.PEAK_WHY


def test_a_system_pages_signer_cell_has_the_badges_and_an_unsigned_one_reads_not_reproduced(entries, tmp_path):
    row = _one(entries, trust="unsigned", signer=None, under_load="1 of 3 runs measured under load (self-reported)",
               known_peak=False)
    page, context = _render(row, tmp_path, tables.SYSTEM_TABLE)
    signer = context["rows"][0][[h["key"] for h in context["headers"]].index("signer")]
    assert signer["text"] == "unsigned"
    # as under the system on a workload page: the row's peak too (the system page has no system column)
    assert [(c["text"], c["badges"][0]["words"]) for c in signer["caveats"]] == [
        (f"not reproduced: {UNSIGNED_WHY}", "not reproduced"), (columns.PEAK_WHY, "no known peak, not ranked"),
        (columns.UNDER_LOAD, "under load")]
    assert f'title="{columns.UNDER_LOAD}"' in page.replace("&#39;", "'")


def test_every_badge_of_a_row_is_noted_once_per_page_and_numbered_in_order(entries, tmp_path):
    rows = pd.concat([_one(entries, under_load="x", load_recorded=False, energy_unchecked=None),
                      _one(entries, under_load="y", energy_unchecked=None)])
    page, context = _render(rows, tmp_path)
    # the rows' own "unsigned, not reproduced" is noted too (first met), as every badge is
    assert [(n["n"], n["text"]) for n in context["notes"]] == [
        (1, f"unsigned, not reproduced: {UNSIGNED_WHY}"), (2, columns.UNDER_LOAD), (3, columns.LOAD_NOT_RECORDED)]
    assert page.count('id="t-x-note-2"') == 1 and page.count('href="#t-x-note-2"') == 2
    assert page.count('id="t-x-note-1"') == 1 and page.count('href="#t-x-note-1"') == 2


@pytest.mark.parametrize("kind", list(CAVEATS))
def test_no_badge_reads_better_than_its_sentence(entries, tmp_path, kind):
    """Read off the rendered page, each caveat's badges against its whole sentence: where the sentence
    says self-reported or not ranked, a badge says so or warns; where it says a GPU's steps are the
    submitter's word, a badge names them; only a reproduction is green."""
    fields, sentence, _ = CAVEATS[kind]
    page, _ = _render(_one(entries, **fields), tmp_path)
    parsed = _Page()
    parsed.feed(page)
    [(note_id, said)] = [(i, n) for i, n in parsed.notes.items() if sentence in n]
    badges = [(b["text"].rstrip("0123456789"), next(c[len("badge-"):] for c in b["classes"] if c.startswith("badge-")))
              for b in parsed.badges if b["attrs"].get("aria-describedby") == note_id]
    assert badges and said.startswith(" ".join(w for w, _ in badges) + " ")
    words = " ".join(w for w, _ in badges)
    if "self-reported" in said and kind != "under load":
        assert "self-reported" in words or "never ranked" in words, kind
    if "not ranked" in said or "never ranked" in said:
        assert "ranked" in words, kind
    if "CUDA events" in said:  # the steps compared with the second clock's span only: the badge says whose word they are
        assert "GPU steps self-timed" in words, kind
    assert all(tone != "good" for w, tone in badges if not w.split("; ")[-1].startswith("reproduced")), kind
    assert {tone for _, tone in badges} <= set(columns.TONES)


def test_a_hostile_caveat_stays_escaped_in_the_badge_its_title_and_its_note(entries, tmp_path):
    note = f"name shared with another signer's system \u201c{PAYLOAD} ({FP[:19]}…)\u201d, stored first"
    row = _one(entries, system_note=note, implementation=PAYLOAD, kind="tta", division="own",
               stale_rules=f"stored under rules v3; {PAYLOAD}", rules_version=3, system_shown=PAYLOAD)
    page, context = _render(row, tmp_path)
    assert PAYLOAD not in page and "<script" not in page and "<img" not in page
    parsed = _Page()
    parsed.feed(page)
    assert {"script", "img"}.isdisjoint(parsed.tags)
    assert not [b for b in parsed.badges if any(k.startswith("on") for k in b["attrs"])]
    titles = [b["attrs"].get("title", "") for b in parsed.badges]
    assert sum(PAYLOAD in t for t in titles) >= 3  # read back as text: the name, the own code, the rules
    assert sum(PAYLOAD in n for n in parsed.notes.values()) == 3


def test_a_column_empty_on_every_row_is_not_shown_and_said_so_once(entries, tmp_path):
    cpu = entries[(entries["system"] == "badge-cpu") & (entries["workload"].isin(["lm-char", "gpt2-124m"]))]
    page, context = _render(cpu, tmp_path)
    keys = [h["key"] for h in context["headers"]]
    for key in ("mfu", "energy_to_target_kwh", "energy_per_sample_j", "energy_per_token_j"):
        assert key not in keys and f"c-{key}" not in page
    assert {"rank", "system", "samples_per_s", "tokens_per_s", "run"} <= set(keys)
    hidden = {d["label"]: d["why"] for d in context["hidden"]}
    assert hidden["MFU"].startswith("no dense peak for the device")
    # each column named once, with its reasons over the rows (a throughput entry has no time to target)
    why = hidden["energy to target"]
    assert "a throughput result: it trains, but to no target, so it has no time to target" in why
    assert "no time to train" not in why
    assert "not measured: no energy counter was read on the device" in why
    assert hidden["energy per sample, energy per token"].startswith("not measured")
    assert page.count("Not shown, as no row here has a value (absent, never zero):") == 1
    assert sum(label.split(", ").count("energy to target") for label in hidden) == 1
    assert all(len(row) == len(keys) for row in context["rows"])


def test_a_column_one_row_has_a_value_for_is_kept_with_its_dashes_explained(entries, tmp_path):
    page, context = _render(entries[entries["workload"] == "lm-char"], tmp_path)
    keys = [h["key"] for h in context["headers"]]
    assert {"mfu", "energy_per_sample_j", "energy_to_target_kwh"} <= set(keys)
    k = keys.index("energy_per_sample_j")
    assert [row[k]["text"] == "—" for row in context["rows"]].count(False) >= 1  # the GPU's value
    assert any(row[k]["text"] == "—" for row in context["rows"])  # and the CPU's dash, said why under the table
    assert any("energy per sample" in d["label"] for d in context["dashes"])
    assert not any("energy per sample" in d["label"] or d["label"] == "MFU" for d in context["hidden"])


def test_a_table_without_tokens_hides_tokens_but_not_a_column_of_one_value(entries, tmp_path):
    fashion = entries[entries["workload"] == "fashion-cnn"]
    _, context = _render(fashion, tmp_path)
    keys = [h["key"] for h in context["headers"]]
    assert "tokens_per_s" not in keys and "energy_per_token_j" not in keys
    assert {d["label"]: d["why"] for d in context["hidden"]}["tokens/s"] == "the workload has no tokens (not a language model)"
    one = fashion.copy()
    one["tokens_per_s"] = [12.5] + [np.nan] * (len(one) - 1)  # one row measured it: shown
    _, context = _render(one, tmp_path)
    assert "tokens_per_s" in [h["key"] for h in context["headers"]]


def test_downloads_keep_every_column_whatever_the_page_hides(entries, tmp_path):
    cpu = entries[(entries["system"] == "badge-cpu") & (entries["workload"] == "lm-char")]
    _, context = _render(cpu, tmp_path)
    assert "mfu" not in [h["key"] for h in context["headers"]]
    csv_path, json_path = tmp_path / "dl" / "t-x.csv", tmp_path / "dl" / "t-x.json"
    assert pd.read_csv(csv_path).columns.tolist() == cpu.columns.tolist()
    assert list(json.loads(json_path.read_text())[0]) == cpu.columns.tolist()
    # the same bytes as the downloads alone write: hiding a column on the page changes no file
    tables.downloads(cpu, tmp_path / "plain" / "t-x")
    assert csv_path.read_bytes() == (tmp_path / "plain" / "t-x.csv").read_bytes()
    assert json_path.read_bytes() == (tmp_path / "plain" / "t-x.json").read_bytes()


def test_a_built_site_shows_own_codes_and_the_loads_caveats_as_badges(tmp_path):
    """The stored fixtures end to end: own code measured under load, its steps too short for the second clock."""
    folder = tmp_path / "results"
    folder.mkdir()
    for name in ("own-loaded-short-steps.json", "reference-smoke.json"):
        shutil.copyfile(FIXTURES / name, folder / name)
    site.build(folder, tmp_path / "out")
    pages = [p.read_text() for p in (tmp_path / "out" / "workloads").glob("*.html")]
    page = next(p for p in pages if "own code" in p and "under load" in p)
    parsed = _Page()
    parsed.feed(page)
    under = [b for b in parsed.badges if b["tag"] == "a" and b["text"].startswith("under load")]
    assert under and all(b["attrs"]["title"] == columns.UNDER_LOAD and "badge-bad" in b["classes"] for b in under)
    assert parsed.notes[under[0]["attrs"]["aria-describedby"]] == f"under load {columns.UNDER_LOAD}"
    short = [b for b in parsed.badges if b["tag"] == "a" and b["text"].startswith("steps too short, never ranked")]
    assert short and labels.SHORT_STEPS in short[0]["attrs"]["title"]
    assert labels.SHORT_STEPS in parsed.notes[short[0]["attrs"]["aria-describedby"]]


def test_the_world_size_column_says_processes_with_what_it_counts_and_its_downloads_keep_world_size(entries, tmp_path):
    """The column of a row's world size sits right after "#": headed "ranks" it read as a ranking
    (an unranked row: "—", then "1"). Its header names what it counts and says it in full as its
    tooltip; the CSV and JSON downloads keep their column's name."""
    rows = entries[entries["workload"] == "lm-char"]
    page, context = _render(rows, tmp_path)
    [head] = [h for h in context["headers"] if h["key"] == "world_size"]
    assert head["label"] == "processes" and head["title"] == columns.WORLD_SIZE_TITLE
    assert "world size" in head["title"] and "processes" in head["title"]
    assert f'scope="col" title="{columns.WORLD_SIZE_TITLE}">processes</th>' in page
    assert ">ranks</th>" not in page and 'data-label="ranks"' not in page
    assert "world_size" in pd.read_csv(tmp_path / "dl" / "t-x.csv").columns
    assert "world_size" in json.loads((tmp_path / "dl" / "t-x.json").read_text())[0]
    # a column without a tooltip has no empty one
    [rank] = [h for h in context["headers"] if h["key"] == "rank"]
    assert rank["title"] is None and '<th data-kind="num" scope="col">#</th>' in page


def test_an_own_code_row_names_its_code_and_what_it_trains(entries, tmp_path):
    """A new user's free job read only "newuser2 laptop" on the free-jobs page (its code named in a
    badge's note alone, what it trains on its run page alone) and "own" on its system's page: the
    row names its code, under the system (a workload page has no workload column) or in the
    workload column as ``goodbench show`` writes it, with what it declares it trains, cut, in full
    as the tooltip."""
    name, trains = "newuser2-wide-mlp", "a wide 3-layer MLP on a synthetic sine teacher, with dropout and weight decay"
    free = _one(entries, implementation=name, trains=trains, division="own", workload="own", kind="throughput")
    page, context = _render(free, tmp_path)
    system = context["rows"][0][[h["key"] for h in context["headers"]].index("system")]
    assert [(line["text"], line["small"]) for line in system["lines"]] == [
        (f"own code \u201c{name}\u201d", False), ("trains a wide 3-layer MLP on a synthetic sine teacher…", True)]
    assert system["lines"][1]["title"] == f"what the own code declares it trains (self-reported): {trains}"
    # in the row, between the system's link and its badges
    row = page.split("<tbody>")[1]
    assert (row.index(">badge-gpu</a>") < row.index(f"<span class=\"own\" title=\"the own code&#39;s name "
                                                    f"(self-reported): {name}\">own code \u201c{name}\u201d</span>")
            < row.index('<small class="sub own" title="what the own code declares it trains (self-reported): '
                        f'{trains}">trains a wide 3-layer MLP on a synthetic sine teacher…</small>')
            < row.index('class="caveats"'))
    # a system page: the workload column in goodbench show's words, then what it trains
    for workload, shown in (("own", f"own: {name}"), ("lm-char", f"own: {name} (held to lm-char)")):
        row = _one(entries, implementation=name, trains=trains, division="own", workload=workload)
        page, context = _render(row, tmp_path, tables.SYSTEM_TABLE)
        cell = context["rows"][0][[h["key"] for h in context["headers"]].index("workload")]
        assert cell["text"] == shown == naming.workload_label({"workload": {"id": workload}}, name)
        assert [line["text"] for line in cell["lines"]] == ["trains a wide 3-layer MLP on a synthetic sine teacher…"]
        assert f'.html">{shown}</a><br><small class="sub own"' in page
    # goodbench's own workloads' rows: as before
    plain = _one(entries)
    _, context = _render(plain, tmp_path, tables.SYSTEM_TABLE)
    assert context["rows"][0][0]["text"] == "lm-char" and context["rows"][0][0]["lines"] == []
    _, context = _render(plain, tmp_path)
    assert context["rows"][0][1]["lines"] == []
    # a name and no words of what it trains: the name alone
    _, context = _render(_one(entries, implementation=name, trains=None, division="own", workload="own"), tmp_path)
    assert [line["text"] for line in context["rows"][0][1]["lines"]] == [f"own code \u201c{name}\u201d"]


def test_own_codes_name_and_what_it_trains_stay_escaped_and_cut(entries, tmp_path):
    name, trains = PAYLOAD + "\u202e" + "x" * 5000, "\u202e" + PAYLOAD * 200
    row = _one(entries, implementation=name, trains=trains, division="own", workload="own", kind="throughput")
    for table in (tables.ENTRY_TABLE, tables.SYSTEM_TABLE):
        page, context = _render(row, tmp_path, table)
        body = page.split("<tbody>")[1].split("</tbody>")[0]
        assert "<script" not in body and "<img" not in body and "\u202e" not in page
        parsed = _Page()
        parsed.feed(page)
        assert {"script", "img"}.isdisjoint(parsed.tags)
        lines = [line for cell in context["rows"][0] for line in cell["lines"]]
        said = [line["text"] for line in lines] + [c["text"] for c in context["rows"][0] if c["lines"]]
        assert all(len(text) < 120 for text in said), said  # cut in the row
        assert all(len(line["title"]) < 500 for line in lines)  # and in its tooltip
        assert any(naming.own_name(name) in text for text in said)  # as goodbench show cuts it
        assert len(body) < 20_000
