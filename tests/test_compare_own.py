"""goodbench compare of two versions of one's own code (docs/compare.md#own-code-two-versions-of-ones-code):
held to the declaration, not the spec hash (which also covers the code and command), with what
differs in code or command shown; a declaration that differs is named field by field; a reference
workload's spec hash told against this goodbench's pinned spec."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import forging
import pytest

from suite.cli import main
from suite.compare import definition
from suite.compare import engine as compare
from suite.record import results
from workloads import registry

OWN = Path(__file__).parent / "fixtures" / "own-2-ranks-killed.json"  # a real run-own file, 2 seeds
SCRIPT = "tests/own_resume_job.py"  # the file its code names


@pytest.fixture(scope="module")
def base() -> dict:
    return results.load(OWN)


def another_version(doc: dict, *, digest: str = "b" * 64, out: str = "own-signed.json") -> dict:
    """``doc`` as the next version of its code would write it: another sha256 of its script and
    another output path in its command, the spec hash and the log's header recomputed (what
    run-own writes), so that the file still validates."""
    new = copy.deepcopy(doc)
    impl = new["settings"]["implementation"]
    impl["code"]["files"][SCRIPT] = digest
    impl["command"] = [out if arg == "own.json" else arg for arg in impl["command"]]
    new["settings"]["command"] = impl["command"]
    for run in new["runs"]:
        run["workload"]["spec_hash"] = registry.of_run(run, new).spec_hash(run["scale"])
        forging.set_logged(run, goodbench_spec_hash=run["workload"]["spec_hash"])
    return new


def only_pair(column: compare.Column) -> compare.Pair:
    assert len(column.pairs) == 1 and not column.only_base and not column.only_new
    return column.pairs[0]


def test_two_versions_of_own_code_are_compared_and_what_differs_is_shown(base):
    new = another_version(base)
    assert new["runs"][0]["workload"]["spec_hash"] != base["runs"][0]["workload"]["spec_hash"]
    pair = only_pair(compare.compare_documents(base, new))
    assert pair.comparable and pair.reason is None and not pair.differences
    samples = next(r for r in pair.rows if r.figure == "samples_per_s")
    assert samples.base == samples.new and samples.verdict == compare.SAME  # the same step times
    assert pair.own_code is not None
    assert pair.own_code["differs"] == [
        f"own code differs: BASE {SCRIPT} a85ea14bf773… (commit ba548505bfc9, uncommitted changes), "
        f"NEW {SCRIPT} bbbbbbbbbbbb… (commit ba548505bfc9, uncommitted changes)",
        f"command differs: BASE `torchrun --nproc-per-node=2 {SCRIPT} own.json own.ckpt --kill-seed 2 --kill-after 25`, "
        f"NEW `torchrun --nproc-per-node=2 {SCRIPT} own-signed.json own.ckpt --kill-seed 2 --kill-after 25`"]
    assert pair.own_code["base"]["files"] == {SCRIPT: base["settings"]["implementation"]["code"]["files"][SCRIPT]}
    assert pair.own_code["new"]["files"] == {SCRIPT: "b" * 64}


def test_the_same_code_shows_no_difference(base):
    pair = only_pair(compare.compare_documents(base, base))
    assert pair.comparable and pair.own_code is not None and pair.own_code["differs"] == []


def test_the_code_s_name_and_what_it_trains_are_shown_not_compared(base):
    new = copy.deepcopy(base)
    new["settings"]["implementation"].update(name="resume-mlp-fused", trains="the same MLP, fused")
    pair = only_pair(compare.compare_documents(base, new))
    assert pair.comparable
    assert pair.own_code is not None and pair.own_code["differs"] == [
        "name differs: BASE 'resume-mlp', NEW 'resume-mlp-fused'",
        "trains differs: BASE 'a 2-layer MLP on a synthetic sine teacher', NEW 'the same MLP, fused'"]


@pytest.mark.parametrize("field, value, shown", [
    ("samples_per_step", 32, ("16", "32")),
    ("tokens_per_step", 64, ("null", "64")),
    ("flops_per_step", 77824.0, ("38912.0", "77824.0")),
    ("warmup_steps", 5, ("3", "5")),
    ("max_steps", 80, ("40", "80")),
    ("precision", "bf16", ("fp32", "bf16")),
])
def test_a_declaration_that_differs_is_not_comparable_and_named(base, field, value, shown):
    new = another_version(base)
    new["settings"]["implementation"]["spec"][field] = value
    pair = only_pair(compare.compare_documents(base, new))
    words = f"declared {field} differs ({shown[0]} in BASE, {shown[1]} in NEW)"
    assert not pair.comparable and pair.reason == words and not pair.rows
    assert pair.differences == [{"what": f"declared {field}", "base": shown[0], "new": shown[1], "text": words}]
    assert pair.own_code is not None and pair.own_code["differs"][0].startswith("own code differs")


def test_a_side_of_files_that_declare_differently_is_comparable_with_nothing(base):
    other = copy.deepcopy(base)
    other["settings"]["implementation"]["spec"]["samples_per_step"] = 32
    pair = only_pair(compare.compare_documents(compare.merge_side([base, other]), base))
    assert not pair.comparable
    assert pair.reason == f"declared samples_per_step differs ({definition.MIXED} in BASE, 16 in NEW)"


def test_two_sides_of_mixed_declarations_are_not_comparable(base):
    other = copy.deepcopy(base)
    other["settings"]["implementation"]["spec"]["samples_per_step"] = 32
    side = compare.merge_side([base, other])
    pair = only_pair(compare.compare_documents(side, side))
    assert not pair.comparable
    assert pair.reason == f"declared samples_per_step differs ({definition.MIXED} in BASE, {definition.MIXED} in NEW)"


def test_a_side_of_files_of_two_versions_says_so(base):
    side = compare.merge_side([base, another_version(base)])
    pair = only_pair(compare.compare_documents(side, base))
    assert pair.comparable and pair.own_code is not None
    assert pair.own_code["differs"] == [
        f"own code differs: BASE {definition.MIXED}, NEW {SCRIPT} a85ea14bf773… (commit ba548505bfc9, "
        "uncommitted changes)",
        f"command differs: BASE {definition.MIXED}, NEW `torchrun --nproc-per-node=2 {SCRIPT} own.json own.ckpt "
        "--kill-seed 2 --kill-after 25`"]


def test_the_site_still_holds_own_code_to_its_spec_hash(base):
    """The site's pages do not show the code, so its entries of two versions are not compared."""
    new = another_version(base)
    summaries = [compare.entry_summary(doc, doc["runs"]) for doc in (base, new)]
    why, rows = compare.compare_summaries(*summaries)
    assert why == (f"the pinned definition differs (BASE: spec hash {base['runs'][0]['workload']['spec_hash'][:12]}…; "
                   f"NEW: spec hash {new['runs'][0]['workload']['spec_hash'][:12]}…; the entries record only the hash)")
    assert rows == {}


def test_a_reference_workload_s_open_change_is_named():
    doc = results.load(forging.REFERENCE)
    new = copy.deepcopy(doc)
    new["runs"] = [r for r in new["runs"] if r["workload"]["id"] == "lm-char"]
    new["runs"][0]["workload"]["spec_hash"] = "1" * 64
    new["settings"].update(division="open", open_changes=["lm-char: global batch 64 (pinned 32)"])
    pair = next(p for p in compare.compare_documents(doc, new).pairs if p.key == "lm-char@smoke")
    assert not pair.comparable
    told = next(d for d in pair.differences if d["what"] == "spec hash")
    assert told["text"] == (
        f"the pinned definition differs (BASE: spec hash {registry.get('lm-char').spec_hash('smoke')[:12]}…, "
        "this goodbench's pinned lm-char v1 smoke spec; NEW: spec hash 111111111111…, with its open-division "
        "change (lm-char: global batch 64 (pinned 32)))")
    assert {d["what"] for d in pair.differences} == {"spec hash", "division", "open-division changes"}


def test_cli_compares_two_versions_of_own_code(base, tmp_path, capsys):
    """As a user runs it: two valid files of one script, another sha256 and --out between them."""
    a = results.write(tmp_path / "mlp.json", json.loads(OWN.read_text()))
    b = results.write(tmp_path / "mlp-signed.json", another_version(json.loads(OWN.read_text())))
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "not comparable" not in out and "own@smoke  samples/s" in out
    assert "own@smoke: two versions of own code (held to the same declaration):\n  own code differs: BASE " in out
    assert "\n  command differs: BASE `torchrun" in out
    assert main(["compare", str(a), str(b), "--format", "markdown"]) == 0
    assert "- own@smoke: two versions of own code (held to the same declaration):\n  - own code differs: BASE " \
        in capsys.readouterr().out
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    pair = json.loads(capsys.readouterr().out)["new"][0]["pairs"][0]
    assert pair["comparable"] is True and pair["differences"] == []
    assert [line.split(":")[0] for line in pair["own_code"]["differs"]] == ["own code differs", "command differs"]
    assert pair["own_code"]["new"]["command"][3] == "own-signed.json"


def test_own_code_against_a_reference_run_of_its_workload_says_which_side_is_which(base):
    reference = forging.real("lm-char")
    mine = copy.deepcopy(reference)
    impl = {**base["settings"]["implementation"], "against": "lm-char"}
    mine["settings"].update(division="own", implementation=impl)
    pair = only_pair(compare.compare_documents(reference, mine))
    assert not pair.comparable and pair.own_code is None
    assert pair.reason.startswith(
        f"own code on one side only (BASE: spec hash {registry.get('lm-char').spec_hash('smoke')[:12]}…, this "
        "goodbench's pinned lm-char v1 smoke spec; NEW: own code, held to its declaration); ")
    assert "division differs (closed in BASE, own in NEW)" in pair.reason
