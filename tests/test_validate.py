"""The validator: the hostile corpus, a valid file, all problems listed, every workload, the CLI."""
from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import benchmark_script
import forging
import numpy as np
import pytest

from suite import cli
from suite import validate as v
from suite.figures import derive
from suite.record import mllog
from suite.validate import schema
from workloads import registry

CORPUS = Path(__file__).resolve().parent / "corpus"
EXPECTED: dict[str, str] = json.loads((CORPUS / "expected.json").read_text())
VALID = sorted((CORPUS / "valid").glob("*.json"))
REPO = Path(__file__).resolve().parent.parent


def test_corpus_is_large_and_every_expected_code_is_a_stable_code():
    assert len(EXPECTED) >= 30
    assert set(EXPECTED.values()) <= set(v.CODES)
    assert {p.name for p in CORPUS.glob("*.json")} - {"expected.json"} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_is_refused_with_its_code(name):
    problems = v.validate_file(CORPUS / name)
    codes = [p.code for p in problems]
    assert EXPECTED[name] in codes, [p.line(name) for p in problems]
    assert "internal-error" not in codes
    assert all(p.code in v.CODES for p in problems)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_file_passes(path):
    assert v.validate_file(path) == []


def _valid_doc() -> dict:
    return json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())


def test_every_problem_of_a_file_is_listed():
    doc = _valid_doc()
    run = doc["runs"][0]
    run["metrics"]["tta_s"] /= 2                             # tta-mismatch
    run["precision"] = "fp8"                                 # precision
    run["metrics"]["throughput"]["steps_per_s"] *= 3         # throughput-mismatch
    doc["created_at"] = "2099-01-01T00:00:00Z"               # future-timestamp
    doc["system"]["host"]["os"] = "Linux\x07"                 # control-char (walk: reported alone)
    assert [p.code for p in v.check_document(doc)] == ["control-char"]
    doc["system"]["host"]["os"] = "Linux"
    codes = {p.code for p in v.check_document(doc)}
    assert {"tta-mismatch", "precision", "throughput-mismatch", "future-timestamp"} <= codes


def test_schema_errors_of_one_run_do_not_hide_the_rules_of_another():
    doc = _valid_doc()
    second = copy.deepcopy(doc["runs"][0])
    second.update(seed=2, run_id="a" * 32)
    doc["runs"].append(second)
    doc["runs"][0]["seed"] = "one"                           # schema, in runs[0]
    doc["runs"][1]["metrics"]["tta_s"] /= 2                  # tta-mismatch, in runs[1]
    problems = v.check_document(doc)
    assert {(p.code, p.field.split(".")[0]) for p in problems} >= {("schema", "runs[0]"),
                                                                  ("tta-mismatch", "runs[1]")}


def test_file_over_the_size_limit_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(v.MAX_FILE_BYTES + 1)                    # sparse: nothing is written
    assert [p.code for p in v.validate_file(big)] == ["file-too-large"]


def test_directory_and_missing_file_are_unreadable(tmp_path):
    assert [p.code for p in v.validate_file(tmp_path)] == ["unreadable"]
    assert [p.code for p in v.validate_file(tmp_path / "absent.json")] == ["unreadable"]


def test_a_symbolic_link_is_refused_not_followed(tmp_path, capsys):
    secret = tmp_path / "secret.json"
    secret.write_text(VALID[0].read_text())  # valid: the link is refused for being a link
    link = tmp_path / "link.json"
    link.symlink_to(secret)
    (tmp_path / "system.json").symlink_to("/etc/passwd")
    for name in ("link.json", "system.json"):
        problems = v.validate_file(tmp_path / name)
        assert [(p.code, p.reason) for p in problems] == [("unreadable", "a symbolic link: give the file itself")]
    assert v.validate_file(secret) == []
    assert cli.main(["validate", str(link)]) == 1
    assert capsys.readouterr().out == f"{link}: a symbolic link: give the file itself [unreadable]\n"


def test_problem_lines_are_one_line_whatever_the_names():
    problem = v.Problem("schema", "a.b", "broken")
    assert problem.line("evil\nname.json") == "evil?name.json: a.b: broken [schema]"
    assert v.Problem("not-json", "", "x").line("f.json") == "f.json: x [not-json]"  # no "(file):" placeholder
    assert v.Problem("schema", "runs[0].seed", "x").line("f.json") == "f.json: runs[0].seed: x [schema]"


def test_too_many_problems_are_bounded():
    doc = _valid_doc()
    doc["system"]["host"]["bad"] = ["\x01"] * 500
    problems = v.check_document(doc)
    assert len(problems) == v.MAX_PROBLEMS + 1
    assert problems[-1].code == "too-many-problems"


def test_python_values_that_json_cannot_hold_are_refused():
    doc = _valid_doc()
    doc["runs"][0]["wall_s"] = float("nan")
    doc["system"]["host"]["x"] = {1, 2}
    assert {p.code for p in v.check_document(doc)} == {"non-finite", "not-json-type"}
    assert [p.code for p in v.check_document("x" * 5000)] == ["too-long-string"]


def test_open_division_accepts_its_declared_global_batch_and_nothing_it_cannot_recompute():
    """An open run changes what goodbench run can change — the global batch (--global-batch),
    logged as global_batch_size — and its spec hash and per-step figures must be the pinned spec's
    at that batch; a spec the validator cannot recompute (the learning rate doubled) is refused."""
    import hashlib

    from workloads.base import canonical_json

    doc = _valid_doc()
    doc["settings"].update(division="open", open_changes=["lr doubled to 4e-3"])
    doc["runs"][0]["event_log"] = [line.replace('"value": "closed"', '"value": "open"')
                                   if '"submission_division"' in line else line for line in doc["runs"][0]["event_log"]]
    assert v.check_document(doc) == []  # the pinned spec, declared open: accepted
    pinned = registry.get("lm-char").pinned("smoke")
    pinned["spec"]["lr"] *= 2
    doc["runs"][0]["workload"]["spec_hash"] = hashlib.sha256(canonical_json(pinned).encode()).hexdigest()
    assert {p.code for p in v.check_document(doc)} == {"log-spec"}
    doc["settings"]["division"] = "closed"
    assert {p.code for p in v.check_document(doc)} >= {"division", "spec-hash"}


def test_timestamps_are_judged_against_the_given_now():
    doc = _valid_doc()
    created = dt.datetime.fromisoformat(doc["created_at"].replace("Z", "+00:00"))
    assert v.check_document(doc, now=created) == []
    codes = [p.code for p in v.check_document(doc, now=created - dt.timedelta(days=1))]
    assert codes == ["future-timestamp"]


@pytest.mark.parametrize("workload_id", sorted(registry.WORKLOADS))
@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_consistent_documents_of_every_registered_workload_pass(workload_id, scale):
    """Through the Workload interface only: a consistent document of any workload is valid,
    and editing one figure of it is caught."""
    bench = benchmark_script.load("validate_speed")
    workload = registry.get(workload_id)
    seeds = derive.required_seeds(scale, workload.kind)
    doc = bench.synthetic_document(workload_id, scale, seeds=seeds, rng=np.random.default_rng(1))
    doc = json.loads(json.dumps(doc))
    assert v.check_document(doc) == []
    doc["runs"][-1]["metrics"]["throughput"]["samples_per_s"] *= 1.5
    assert [p.code for p in v.check_document(doc)] == ["throughput-mismatch"]


def test_fast_schema_path_never_passes_what_the_full_schema_refuses():
    for name in sorted(EXPECTED):
        doc, problems = v.load(CORPUS / name)
        if problems or not isinstance(doc, dict) or v.walk(doc):
            continue
        if schema.CHECK.passes(doc):
            assert list(schema.CHECK._jsonschema.iter_errors(doc)) == []


def test_cli_validate_prints_one_line_per_problem_and_exits_1(capsys):
    bad = CORPUS / "step-times-one-missing.json"
    assert cli.main(["validate", str(bad), str(VALID[0])]) == 1
    out = capsys.readouterr().out.splitlines()
    problems = v.validate_file(bad)
    assert out[:len(problems)] == [p.line(str(bad)) for p in problems]
    assert out[-1] == f"{VALID[0]}: ok"
    assert len(out) == len(problems) + 1


def test_cli_validate_never_shows_a_traceback(capsys):
    files = [str(CORPUS / name) for name in sorted(EXPECTED)]
    assert cli.main(["validate", *files]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    # each line a problem with its code, or the note that a file is valid under the older rules it records
    assert all(line.endswith("]") or ": valid under rules v" in line for line in captured.out.splitlines())


def test_many_files_in_worker_processes_give_the_serial_verdicts_in_order(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    paths = [VALID[0], bad] * 3
    assert v.validate_files(paths, workers=2) == v.validate_files(paths, workers=1)
    assert [bool(p) for p in v.validate_files(paths, workers=2)] == [False, True] * 3


def test_an_event_log_line_that_is_not_json_is_a_goodput_problem_not_an_internal_error():
    doc = json.loads(forging.REFERENCE.read_text())  # a real smoke run of the current rules, with goodput
    run = next(r for r in doc["runs"] if r.get("goodput"))
    run["event_log"][3] = ":::MLLOG {not json"
    problems = v.check_document(doc)
    assert [p.code for p in problems] == ["goodput-mismatch"]
    assert "event log cannot be read" in problems[0].reason


def test_a_pause_is_the_sum_of_the_logs_paused_events_as_kills_are_its_failures():
    """``faults.paused_s`` (Ctrl-Z under the supervisor) is recomputed from the event log's ``paused``
    events: a pause the log lacks, or a logged one the record leaves out, is refused."""
    doc = json.loads((CORPUS / "valid" / "lm-char-killed-resumed.json").read_text())
    run = next(r for r in doc["runs"] if r.get("faults"))
    assert v.check_document(doc) == []
    run["faults"]["paused_s"] = 4.5
    problems = v.check_document(doc)
    assert [(p.code, p.field.rsplit(".", 2)[-2:]) for p in problems] == [("goodput-mismatch", ["faults", "paused_s"])]
    at = next(i for i, line in enumerate(run["event_log"]) if '"key": "failure"' in line)
    time_ms = json.loads(run["event_log"][at].split(" ", 1)[1])["time_ms"]
    run["event_log"].insert(at, mllog.format_event(mllog.Event(
        time_ms=time_ms, event_type=mllog.POINT_IN_TIME, key="paused", value=4.5,
        metadata={"file": "run/job_control.py", "lineno": 0, "signal": "SIGTSTP"})))
    assert v.check_document(doc) == []
    del run["faults"]["paused_s"]
    assert [p.code for p in v.check_document(doc)] == ["goodput-mismatch"]


def test_the_word_joiner_is_a_control_character_since_rules_v2():
    doc = _valid_doc()
    doc["system"]["name"] = "fast\u2060box"
    assert [p.code for p in v.check_document(doc)] == ["control-char"]


# ---------------------------------------------------------------- text that hides itself
@pytest.mark.parametrize("char, what", [
    ("\u061c", "Arabic letter mark (Cf)"), ("\u00ad", "soft hyphen (Cf)"), ("\U000e0041", "tag letter A (Cf)"),
    ("\U000e0001", "language tag (Cf)"), ("\ue000", "private use (Co)"), ("\U000f0000", "private use plane 15 (Co)"),
    ("\u0378", "unassigned (Cn)"), ("\ufffe", "noncharacter (Cn)"), ("\u00a0", "no-break space (Zs)"),
    ("\u2009", "thin space (Zs)"), ("\u3000", "ideographic space (Zs)"), ("\u3164", "Hangul filler"),
    ("\u115f", "Hangul choseong filler"), ("\u1160", "Hangul jungseong filler"), ("\uffa0", "halfwidth Hangul filler"),
    ("\u2800", "Braille blank"), ("\u034f", "combining grapheme joiner"), ("\ufe0f", "variation selector 16"),
    ("\U000e0100", "variation selector 17"), ("\u180b", "Mongolian variation selector"), ("\u17b4", "Khmer inherent vowel"),
])
def test_an_invisible_character_in_a_name_is_refused_and_shown_escaped(char, what):
    """Two system names that look the same are two systems: every character that draws nothing
    (or whatever a font puts there) is refused — since rules v7 as invisible-char, so a file
    stored under older rules keeps its status — and printed escaped."""
    from suite.record import text

    name = f"H100{char}"
    assert v.has_control_chars(name), what
    assert [p.code for p in v.walk({"system": name})] == ["invisible-char"]
    assert [p.code for p in v.walk({name: 1})] == ["invisible-char"]  # keys too
    shown = v.printable(name)
    assert shown.startswith("H100\\") and shown.isprintable() and not v.has_control_chars(shown)
    assert text.safe(name) == "H100?"


def test_controls_keep_their_code_and_ordinary_text_of_every_script_passes():
    for char in ("\x00", "\n", "\x7f", "\x85", "\u200b", "\u202e", "\u2066", "\u2028", "\ufeff"):
        assert [p.code for p in v.walk({"s": f"a{char}b"})] == ["control-char"], repr(char)
    for ok in ("NVIDIA H100 80GB HBM3", "ok é", "e\u0301", "東京 ラボ", "서울 연구소", "Zürich – Lab", "μ-arch ≥ 2",
               "مختبر", "🚀 lab", "\u0915\u094d\u0937"):
        assert not v.has_control_chars(ok) and v.walk({"s": ok}) == [] and v.printable(ok) == ok, ok


def test_an_invisible_character_in_a_file_stored_under_older_rules_is_waived_not_refused():
    doc = json.loads((CORPUS / "valid" / "gpt2-2-ranks-killed.json").read_text())  # written under v6
    doc["system"]["host"]["os"] += "\u3164"
    doc["rules_version"] = 6
    problems, waived = v.check_stored(doc)
    assert problems == [] and [p.code for p in waived] == ["invisible-char"]
    doc["rules_version"] = v.RULES_VERSION
    assert [p.code for p in v.check_stored(doc)[0]] == ["invisible-char"]


# ---------------------------------------------------------------- work bounded by the input
def test_a_file_of_99999_empty_runs_runs_no_rule_and_lists_at_most_the_limit(tmp_path, monkeypatch):
    """400 KB of ``{}`` runs once took 77–101 s and 6 GB: every schema error collected, sorted and
    each run handed to the rules. The listing stops once full, and no rule runs then (which runs
    passed the schema is no longer known)."""
    doc = json.loads(VALID[0].read_text())
    doc["runs"] = [{}] * 99_999
    path = tmp_path / "empty-runs.json"
    path.write_text(json.dumps(doc))
    assert 390_000 < path.stat().st_size < 420_000
    called = []
    monkeypatch.setattr(v, "check_run", lambda *a: called.append(a) or [])
    problems = v.validate_file(path)
    assert len(problems) == v.MAX_PROBLEMS + 1 and called == []
    assert {p.code for p in problems[:-1]} == {"schema"} and problems[0].field == "runs[0]"
    assert (problems[-1].code, problems[-1].reason) == ("too-many-problems", "more than 100 problems: the rest "
                                                                             "are not listed")


def test_the_rules_stop_once_the_listing_is_full(monkeypatch):
    doc = json.loads(VALID[0].read_text())
    doc["runs"] = [copy.deepcopy(doc["runs"][0]) for _ in range(300)]
    for i, run in enumerate(doc["runs"]):
        run["run_id"] = f"{i:032x}"
        run["seed"] = 1  # each a duplicate-seed problem but the first, from a document rule
    monkeypatch.setattr(v, "rules", lambda scope: () if scope == v.RUN else
                        tuple(r for r in v.registry.rules(scope) if r.name == "_check_seeds"))
    problems = v.check_document(doc)
    assert len(problems) == v.MAX_PROBLEMS + 1 and {p.code for p in problems[:-1]} == {"duplicate-seed"}
    checked = []
    monkeypatch.setattr(v, "check_run", lambda run, where, d: checked.append(where) or [v.Problem("x", where, "")])
    monkeypatch.setattr(v, "rules", lambda scope: ())
    problems = v.check_document(doc)
    assert len(checked) == v.MAX_PROBLEMS + 1 and len(problems) == v.MAX_PROBLEMS + 1


def test_the_walk_of_99999_empty_objects_takes_a_fraction_of_a_second():
    """The walk pauses the garbage collector: each path it keeps is a new container, and the
    collector traversed the whole document again and again (measured here: 0.04 s paused, up to
    2.6 s not, on 2 shared cores). The bound is loose: the machine is shared."""
    import time

    doc = {"runs": [{}] * 99_999}
    start = time.process_time()
    assert v.walk(doc) == []
    assert time.process_time() - start < 5.0


@pytest.mark.parametrize("name", ["AMD EPYC  x1", " AMD EPYC x1", "AMD EPYC x1 ", "Zu\u0308rich lab"])
def test_a_system_name_not_in_its_shown_form_is_refused(name):
    """Two names HTML shows alike (doubled or end spaces) or one name typed otherwise (NFD
    "Zürich") are refused, the log's copy of the name edited alike; the runner writes every
    name in its shown form (suite/run/system.py)."""
    from suite.record.text import normal_name

    assert {p.code for p in _named_system(name)} == {"name-form"}
    assert normal_name(name) in ("AMD EPYC x1", "Z\u00fcrich lab") and normal_name(normal_name(name)) == normal_name(name)
    assert v.check_document(json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())) == []


def _named_system(name: str) -> list:
    """What the validator finds in the valid corpus file with its system named ``name`` (the log's
    copy of the name edited alike)."""
    doc = json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())
    doc["system"]["name"] = name
    for run in doc["runs"]:
        forging.edit_log(run, lambda e: forging.moved(e, value=name) if e.key == "submission_platform" else e)
    return v.check_document(forging.repair(doc))


@pytest.mark.parametrize("name", ["NVIDIA H100 x8 - reproduced by a trusted reviewer (MLCommons)",
                                  "H100 x8 (Verified)", "DGX \uff32\uff45\uff50\uff52\uff4f\uff44\uff55\uff43\uff45\uff44",
                                  "lab box, unsigned", "a reviewer's pick", "H100 disputed-free"])
def test_a_system_name_that_reads_as_a_trust_label_is_refused(name):
    """Finding 10 of issue 44: a system name made of the site's own trust phrases read as the site's
    label. The refused words are those of suite/trust/labels.py's phrases (full-width letters
    folded), the log's copy of the name edited alike."""
    found = _named_system(name)
    assert {p.code for p in found} == {"name-trust"}, found
    assert found[0].field == "system.name"


def test_the_refused_words_are_the_sites_own_trust_phrases_and_ordinary_names_pass():
    from suite.leaderboard import trust
    from suite.site.labels import copy_words
    from suite.trust import labels

    for phrase in [*trust.TEXT.values(), copy_words("disputed", "x")["lead"], copy_words("copy", None)["lead"]]:
        assert labels.trust_words_in(phrase), phrase  # every label the site gives would be refused as a name
    assert {"reproduced", "trusted", "signed", "disputed", "verified"} <= labels.TRUST_WORDS
    for ordinary in ["NVIDIA H100 80GB HBM3 x8", "DGX-A100 (Acme Corp)", "Designed in Zürich", "signal-lab-01",
                     "AMD EPYC x1", "synthetic H100", "my-laptop"]:
        assert labels.trust_words_in(ordinary) == [], ordinary


@pytest.mark.parametrize("name", ["NVIDIA H100 x8 - repr\u0585d\u057dced by a tr\u057dsted re\u0475iewer",  # Armenian, Cyrillic
                                  "NVIDIA H100 x8 \u2014 \u0280\u1d07\u1d18\u0280\u1d0f\u1d05\u1d1c\u1d04\u1d07\u1d05",  # small capitals
                                  "H100 x8 (2 clocks)", "H100 x8, two-clock timed", "H100 dual clock box",
                                  "\u13d2\u13ac\u13e2 H100",  # Cherokee
                                  # trial 7: an accent on a letter of each word, clocks counted otherwise, symbols
                                  "AMD EPYC x2 - reproduce\u1e0d by a \u1e6drusted reviewe\u1e5b",
                                  "AMD EPYC x2 (\u2161 clocks, agree)", "box, clocks x2", "tw\u00f6 cl\u00f6cks",
                                  "double-clocked box", "r\u212eproduc\u212ed", "repr\u2218duced"])
def test_a_name_spelling_a_label_in_look_alike_letters_or_counting_clocks_is_refused(name):
    """The sixth trial's names (N1, N11): letters of other scripts and Latin small capitals spell a
    label's words as well as plain letters, and "2 clocks" reads as the two-clock label. A name
    the site shows is written in Latin letters (accents allowed); clocks counted read as a label."""
    from suite.trust import labels

    found = _named_system(name)
    assert {p.code for p in found} == {"name-trust"}, found
    assert labels.name_refusal(name) is not None


@pytest.mark.parametrize("name", ["AMD EPYC x1 two clocks\u2019", "AMD EPYC x1 \u2018reproduced\u2019 _signed_",
                                  "resume-mlp 'reproduced' 'two clocks'", "two_clocks", "re'produced", "__reproduced__",
                                  "H100 x8 'reproduced' by a 'trusted' 'reviewer'", "audited'",
                                  # trial 8's suggestive names: clocks counted otherwise, other claims
                                  "three clocks", "triple-clocked", "dual-timer", "clocks agree", "tvvo clocks",
                                  "stamped by goodbench run-own", "validated box", "vetted", "attested", "repro'd",
                                  # trial 13: "re-run", a label of the site's, is two function words apart
                                  "ACME H100 node (re-run)", "ACME H100 re-run, code read", "ACME H100 node, rerun"])
def test_a_label_in_quotes_underscores_or_other_claim_words_is_refused(name):
    """Trial 8: an apostrophe or an underscore held a label's word together with its quotes
    ("\u2018reproduced\u2019", "two_clocks"), and counts or claims the label list lacked passed."""
    found = _named_system(name)
    assert {p.code for p in found} == {"name-trust"}, found


@pytest.mark.parametrize("name", ["H100 x8 reproducible", "H100 x8 (reproduces)", "H100 x8 reproduce",
                                  "H100 x8 confirmed", "H100 x8 trustworthy", "H100 x8 genuine", "H100 x8 verifiably",
                                  "H100 x8 (the original)", "H100 x8 re-ran", "H100 x8 2-clk", "H100 x8 bi-clocked",
                                  "H100 x8 dual-timed", "H100 x8 twice timed", "H100 x8 cross-timed",
                                  "H100 re-producible", "trust worthy box", "H100 authenticated", "reproducer-cluster"])
def test_a_claims_other_words_and_clocks_counted_otherwise_are_refused(name):
    """Trial 16: the stems of the claims ("reproducible", "trustworthy", "verifiably", "confirmed",
    "genuine") and clocks counted in other words ("2-clk", "bi-clocked", "twice timed") passed,
    as did "the original" and "re-ran"."""
    found = _named_system(name)
    assert {p.code for p in found} == {"name-trust"}, found


def test_real_systems_names_pass_the_claim_stems():
    """What the stems leave alone: names of real systems and words that only begin alike
    ("Genoa", "Confidential VM", "Verilator", "con firmware", "Audi Tech", "Timer test box")."""
    from suite.trust import labels

    for name in ["DGX H100 x8", "Lab box, 2x H100", "AMD EPYC x1", "Verda 8x H200", "NVIDIA GH200 480GB",
                 "RunPod 8x H100 SXM", "Trillium TPU v6e", "Vertex AI A100", "Jetson AGX Orin", "AWS p5.48xlarge",
                 "Azure ND H100 v5", "Apple M2 Ultra", "Tesla V100 x4", "Oracle BM.GPU.H100.8", "CoreWeave HGX H100",
                 "Genoa 9654 x2", "Confidential VM H100", "Audi Tech cluster", "con firmware lab", "Reprocessing box",
                 "Time-series lab A100", "Cross-node 2x A100", "Bi-socket EPYC", "Dual EPYC 9654", "Paired A100s",
                 "Verilator farm", "Veritas node", "runtime-lab H100", "Origin PC H100", "Lab timing box",
                 "Google Cloud a3-highgpu-8g", "Intel Xeon Platinum 8480+"]:
        assert labels.label_refusal(name) is None, name


def test_names_in_latin_letters_with_accents_and_a_clock_not_counted_pass():
    from suite.trust import labels

    for name in ["Lab \u00d8rsted DGX H100 (Z\u00fcrich)", "\u0141\u00f3d\u017a cluster", "Stra\u00dfe 1 box",
                 "H100 boost clock 1980 MHz", "AMD EPYC 7742 64-Core Processor", "NVIDIA H100 80GB HBM3",
                 "H100 \u00d78", "Lab's box, 2x H100", "O'Brien lab DGX", "Savvy node_4", "Clockwork A100",
                 "Timer test box", "Prerun cluster"]:
        assert labels.label_refusal(name) is None, name
    assert labels.foreign_letters("\u0280\u1d07p \u0440\u0435p \u5bcc") == ["\u0280", "\u0435", "\u0440", "\u1d07", "\u5bcc"]


def test_an_accelerator_name_holding_a_label_is_refused():
    """The sixth trial's A3: the accelerator's name, shown on every row, carried "reproduced by a
    trusted reviewer" after the peak table's name (which still matched), the log edited alike."""
    doc = json.loads((CORPUS / "valid" / "lm-char-smoke-as-h100-derived.json").read_text())
    old = doc["system"]["accelerator"]["name"]
    new = old + " - reproduced by a trusted reviewer"
    doc["system"]["accelerator"]["name"] = new
    for run in doc["runs"]:
        forging.edit_log(run, lambda e: forging.moved(e, value=new) if e.key == "goodbench_accelerator" else e)
    found = v.check_document(forging.repair(doc))
    assert [(p.code, p.field) for p in found] == [("name-trust", "system.accelerator.name")], found


def test_what_own_code_declares_it_trains_may_not_read_as_a_label():
    """Trial 13: what own code declares it trains stands under its name on every leaderboard row;
    "reproduced by a trusted reviewer, two clocks agree" there passed the validator and the pull
    request's check."""
    doc = json.loads((Path(__file__).parent / "fixtures" / "own-stored-losses.json").read_text())
    doc["settings"]["implementation"]["trains"] = "reproduced by a trusted reviewer, two clocks agree"
    found = [(p.field, p.reason) for p in v.check_document(doc) if p.code == "name-trust"]
    assert [field for field, _ in found] == ["settings.implementation.trains"] and "'reproduced'" in found[0][1]
    # a description may hold Greek letters (read through the look-alikes), a name may not
    from suite.trust import labels

    for text in ["a \u03bcP-scaled GPT-2 (\u03b22=0.95)", "a CNN, weight decay \u03bb=0.1, init \u03c3=0.02"]:
        assert labels.label_refusal(text, description=True) is None and labels.label_refusal(text) is not None
    for spelt in ["r\u0435pr\u03bfd\u03bcced by one", "\u03f2opy of GPT-2", "\u0280\u1d07\u1d18\u0280\u1d0f model"]:
        assert labels.label_refusal(spelt, description=True) is not None, spelt  # look-alikes, small capitals


def test_a_name_cut_for_a_row_never_spells_a_label_the_whole_does_not_hold():
    """Trial 13: "fast char-level GPT, 2 layer: reproducedly tuned" passes, and was shown cut at 40
    characters as "… 2 layer: reproduced…". A cut ends after a whole word; a word too long to keep
    is cut within itself past half the limit, longer than any label's word."""
    from suite.figures.naming import OWN_NAME_CHARS, own_name
    from suite.record.text import cut_words
    from suite.trust import labels

    for name in ["fast char-level GPT, 2 layer: disputedness tuned", "fast char-level GPT, 2 layers: disputedly",
                 "a" * 30 + " rankedness-and-more", "a-" * 14 + "disputedly", "x" * 31 + "_signedness"]:
        assert labels.label_refusal(name) is None, name
        shown = own_name(name)
        assert len(shown) <= OWN_NAME_CHARS + 1 and labels.trust_words_in(shown) == [], (name, shown)
    assert own_name("fast char-level GPT, 2 layer: disputedness tuned") == "fast char-level GPT, 2 layer…"
    assert labels.label_refusal("fast char-level GPT, 2 layer: reproducedly tuned")  # a claim's stem: refused whole
    assert cut_words("b" * 60, 40) == "b" * 40 + "…"  # one word: cut within it
    assert max(map(len, labels.TRUST_WORDS)) < OWN_NAME_CHARS // 2 - 2  # what a cut within a word keeps is longer


def test_a_run_killed_inside_its_warm_up_and_resumed_validates():
    """The trust audit's honest run, as `goodbench run -w lm-char --scale smoke --checkpoint-every 2
    --inject-failure 4` wrote it (one process, killed at step 4, resumed from the step-2
    checkpoint): its window begins after the resumed worker's warm-up, and it validates."""
    from suite.record import mllog

    doc = json.loads((CORPUS / "valid" / "lm-char-killed-at-4-resumed-from-2.json").read_text())
    [run] = doc["runs"]
    resumed = [e.metadata["step"] for e in mllog.parse(run["event_log"]) if e.key == "checkpoint_load_stop"]
    warmup = registry.get("lm-char").spec("smoke").warmup_steps
    assert resumed == [2] and run["metrics"]["throughput"]["window"]["first_step"] == 2 + warmup + 1
    assert v.check_document(doc) == []


def test_free_text_the_run_page_shows_beside_its_labels_cannot_carry_one():
    """Trial 7 (B23, B25, A0): a label in the ceiling's method or as the energy meter, and a
    straggler spread no rank's times give, were shown on the run page as goodbench's words."""
    label = "reproduced by a trusted reviewer (two clocks, audited)"
    honest = json.loads((REPO / "tests" / "fixtures" / "own-2-ranks-killed.json").read_text())
    assert v.check_document(honest) == []
    method = copy.deepcopy(honest)
    method["settings"]["matmul_ceiling"]["fp32"]["method"] = label
    assert sorted((p.code, p.field) for p in v.check_document(method)) == [  # no method goodbench writes (trial 15)
        ("ceiling-implausible", "settings.matmul_ceiling.fp32.method"), ("name-trust", "settings.matmul_ceiling.fp32.method")]
    meter = copy.deepcopy(honest)
    meter["runs"][0]["metrics"]["energy_method"] = label
    assert [(p.code, p.field) for p in v.check_document(meter)] == [("log-energy", "runs[0].metrics.energy_method")]
    spread = copy.deepcopy(honest)
    spread["runs"][0]["distributed"]["straggler_spread"] = 3.0
    assert [(p.code, p.field) for p in v.check_document(spread)] == [
        ("distributed-batch", "runs[0].distributed.straggler_spread")]


@pytest.mark.parametrize("where", ["status", "method"])
def test_a_label_in_small_capitals_in_text_shown_as_goodbenchs_own_is_refused(where):
    """Trial 11: "ʀᴇᴘʀᴏᴅᴜᴄᴇᴅ ʙʏ ᴀ ᴛʀᴜꜱᴛᴇᴅ ʀᴇᴠɪᴇᴡᴇʀ" in a figure's status was shown unmarked on the run
    page (text there was checked for the labels' words, not for letters that are not Latin)."""
    doc = json.loads((REPO / "tests" / "fixtures" / "own-2-ranks-killed.json").read_text())
    said = "ok: ʀᴇᴘʀᴏᴅᴜᴄᴇᴅ ʙʏ ᴀ ᴛʀᴜꜱᴛᴇᴅ ʀᴇᴠɪᴇᴡᴇʀ"
    if where == "status":
        doc["runs"][0]["metrics"]["mfu_status"] = said
        field = "runs[0].metrics.mfu_status"
    else:
        doc["settings"]["matmul_ceiling"]["fp32"]["method"] = said
        field = "settings.matmul_ceiling.fp32.method"
    [found] = [p for p in v.check_document(doc) if p.code != "ceiling-implausible"]  # a method goodbench never writes
    assert (found.code, found.field) == ("name-trust", field) and "not a Latin letter" in found.reason


@pytest.mark.parametrize("created", ["2026-11-29T12:10:33", "2026-11-29"])
def test_a_creation_time_without_its_time_zone_is_refused_not_a_traceback(created, tmp_path):
    """Trial 10: a ``created_at`` with no time zone ended ``goodbench validate`` and ``goodbench
    site`` (for a whole results folder) in "can't compare offset-naive and offset-aware datetimes"."""
    from suite.site import builder

    doc = json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())
    doc["created_at"] = created
    assert "schema" in {p.code for p in v.check_document(doc)}
    results = tmp_path / "results"
    results.mkdir()
    (results / "x.json").write_text(json.dumps(doc))
    assert cli.main(["validate", str(results / "x.json")]) == 1
    builder.build(results, tmp_path / "site")
    assert "x.json" in (tmp_path / "site" / "index.html").read_text()


@pytest.mark.parametrize("value", ["x", 1.5, -1e-300, [1], True])
def test_settings_that_is_not_an_object_is_refused_by_the_schema_as_stored_too(value):
    """The rules version a stored file is held to is read before the schema: a ``settings`` that
    is not an object raised AttributeError there (validate, compare, reproduce, export and the
    site, which then built no page for anyone). It is one schema problem."""
    doc = json.loads((CORPUS / "valid" / "lm-char-smoke.json").read_text())
    doc["settings"] = value
    problems, waived = v.check_stored(doc)
    assert [p.code for p in problems] == ["schema"] and not waived
    assert "is not of type 'object'" in problems[0].reason


@pytest.mark.parametrize(("text", "said"), [
    ("{}", "schema_version: no schema_version: not a goodbench results file (goodbench run and run-own write one)"),
    ('{"total_runs": 2}', "schema_version: no schema_version: not a goodbench results file"),
    ("[1, 2]", "not a JSON object but an array: not a goodbench results file"),
    ('"x"', "not a JSON object but a string: not a goodbench results file"),
    ("null", "not a JSON object but null: not a goodbench results file")])
def test_a_file_that_is_no_results_file_is_called_so_once(text, said, tmp_path, capsys):
    """A new user's find: `{}` (or the projection `project` writes) read "unsupported schema
    version None", a JSON array jsonschema's "[1, 2] is not of type 'object'", and compare said
    "not a valid results file: not a results file of this suite: …". Each is now one plain line,
    said once, by validate, compare and submit alike."""
    from suite.leaderboard.pipeline import read_file
    from suite.record.errors import GoodbenchError

    path = tmp_path / "x.json"
    path.write_text(text)
    assert cli.main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.startswith(f"{path}: {said}")
    with pytest.raises(GoodbenchError) as refused:
        read_file(path)
    assert str(refused.value).startswith(f"{path}: {said}")  # compare's reading: no second "not a … file"
    assert cli.main(["submit", str(path), "--results-dir", str(tmp_path / "results")]) == 1
    assert capsys.readouterr().out.startswith(f"refused: {path}: {said}")
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").glob("*.json"))
