"""Signed results: the key, signing and checking a file, run ids bound to the key, one run stored
once, the owner's file winning over a stolen copy, and what the site shows (docs/rules.md,
"Signed results")."""
from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import os
import stat
from pathlib import Path

import factories
import forging
import numpy as np
import pandas as pd
import pytest

from suite import cli
from suite.leaderboard import pipeline
from suite.leaderboard import rows as leaderboard
from suite.record import results
from suite.site.builder import build_site
from suite.site.names import run_slug, safe_name, system_slug
from suite.store.files import Refused, stored_files, submit, submit_noted
from suite.trust import ownership, signing
from suite.validate import check_document, validate_file

REPO = Path(__file__).resolve().parent.parent
CORPUS_VALID = sorted((REPO / "tests" / "corpus" / "valid").glob("*.json"))
STORED = forging.STORED_CURRENT  # the stored results written under the current rules


def _key(tmp_path: Path, name: str):
    """A fresh key of its own (in ``tmp_path/name``) and its fingerprint."""
    path, fp = signing.keygen(tmp_path / name)
    return signing.load_key(path.parent), fp


def _document(name: str = "synthetic-lab", seed: int = 7, **kwargs) -> dict:
    """A valid full-scale gpt2-124m result on an H100 (rankable), one run."""
    kwargs = {"accelerator": 0, "scale": "full", "workloads": ("gpt2-124m",), **kwargs}
    return factories.synthetic_document(name, rng=np.random.default_rng(seed), **kwargs)


def _renamed(doc: dict, name: str) -> dict:
    """``doc`` (changed in place) with its system renamed, in its runs' event logs too: an edit
    that tells one story, which only a signature can tell from the original."""
    doc["system"]["name"] = name
    for run in doc["runs"]:
        run["event_log"] = factories.relogged(run["event_log"], values={"submission_platform": name})
    return doc


def _codes(doc: dict) -> list[tuple[str, str]]:
    return [(p.code, p.field) for p in check_document(doc)]


def _write(path: Path, doc: dict) -> Path:
    results.write(path, doc)
    return path


def _tree(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.iterdir())}


# ---------------------------------------------------------------- the key
def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites_it(monkeypatch, capsys):
    config = Path(os.environ["GOODBENCH_CONFIG_DIR"]) / "nested"  # the tests' own, never ~/.config
    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(config))
    assert signing.config_dir() == config and signing.load_key() is None
    assert cli.main(["keygen"]) == 0
    out = capsys.readouterr().out
    key_file = config / signing.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    fp = signing.fingerprint(signing.public_bytes(signing.load_key()))
    assert fp in out and str(key_file) in out
    assert fp.startswith("SHA256:") and len(fp) == 7 + 43  # unpadded base64 of 32 bytes
    assert b"PUBLIC KEY" in (config / signing.PUBLIC_FILE).read_bytes()
    assert not [p for p in config.iterdir() if p.name.startswith(".")]  # no temp file left
    before = key_file.read_bytes()
    assert cli.main(["keygen"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"goodbench: error: {key_file} exists; goodbench never overwrites a signing key " \
                  "(results signed with it name it; move it away first to make a new one)"
    assert key_file.read_bytes() == before


def test_the_config_directory_and_a_key_others_may_read(tmp_path, monkeypatch):
    monkeypatch.delenv("GOODBENCH_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert signing.config_dir() == tmp_path / "xdg" / "goodbench"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/path")  # ignored, as XDG says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert signing.config_dir() == tmp_path / "home" / ".config" / "goodbench"
    path, _ = signing.keygen(tmp_path / "k")
    path.chmod(0o644)
    with pytest.raises(signing.GoodbenchError, match="may be read by others .*chmod 600"):
        signing.load_key(tmp_path / "k")
    path.chmod(0o600)
    path.write_text("not a key")
    with pytest.raises(signing.GoodbenchError, match="not an unencrypted PEM private key"):
        signing.load_key(tmp_path / "k")


# ---------------------------------------------------------------- signing and checking
def test_a_signed_file_verifies_from_its_bytes_and_reformatted(tmp_path):
    key, fp = _key(tmp_path, "owner")
    doc = _document()
    assert "run_id_nonce" not in doc["runs"][0]
    signed = signing.seal(doc, key)
    run = signed["runs"][0]
    assert signing.is_bound(run, signing.public_bytes(key)) and len(run["run_id_nonce"]) == 32
    assert signed["signature"]["fingerprint"] == fp and signing.signer(signed) == fp
    assert _codes(signed) == []
    path = _write(tmp_path / "signed.json", signed)
    assert validate_file(path) == [] and signing.signer(results.load(path)) == fp
    compact = tmp_path / "compact.json"  # other whitespace, another key order: the same document
    compact.write_text(json.dumps(dict(reversed(list(json.loads(path.read_text()).items())))))
    assert validate_file(compact) == [] and signing.signer(results.load(compact)) == fp


def test_the_signed_message_survives_awkward_values(tmp_path):
    """Floats written by Python and read back are the same floats: the canonical JSON of the
    parsed file is the one that was signed."""
    key, fp = _key(tmp_path, "owner")
    doc = _document()
    doc["settings"]["note values"] = [0.1, 1e-7, 1e16, 2.5e-300, -0.0, 123456789012345678, 1 / 3,
                                      "é ü – 中文", {"b": 1, "a": [True, None]}]
    signed = signing.sign(doc, key)
    raw = results.dumps(signed).encode()
    assert signing.signer(results.parse(raw)) == fp
    assert signing.message(results.parse(raw)) == signing.message(signed)


def test_a_tampered_signed_file_is_refused(tmp_path):
    key, _ = _key(tmp_path, "owner")
    signed = signing.seal(_document(), key)
    renamed = _renamed(copy.deepcopy(signed), "someone else's system")  # in the logs too
    assert _codes(renamed) == [("signature", "signature.value")]
    assert signing.signer(renamed) is None
    figure = copy.deepcopy(signed)
    figure["runs"][0]["metrics"]["throughput"]["samples_per_s"] *= 1.005  # within the 1% tolerance
    assert _codes(figure) == [("signature", "signature.value")]
    for path, change in [("algorithm", "rsa"), ("fingerprint", "SHA256:" + "A" * 43),
                         ("public_key", "not base64!"), ("value", "AAAA")]:
        bad = copy.deepcopy(signed)
        bad["signature"][path] = change
        assert [c for c, _ in _codes(bad)][:1] == ["signature"], path
    missing = copy.deepcopy(signed)
    del missing["signature"]["value"]
    assert _codes(missing) == [("signature", "signature")]


def test_a_run_re_signed_by_another_key_is_refused(tmp_path):
    owner, _ = _key(tmp_path, "owner")
    thief, thief_fp = _key(tmp_path, "thief")
    signed = signing.seal(_document(), owner)
    stolen = _renamed(copy.deepcopy(signed), "thief-lab")
    resigned = signing.sign(stolen, thief)  # a valid signature, over runs minted for the owner
    assert signing.signer(resigned) == thief_fp
    assert _codes(resigned) == [("run-key-binding", "runs[0].run_id")]
    unbound = copy.deepcopy(stolen)
    del unbound["runs"][0]["run_id_nonce"]
    assert _codes(signing.sign(unbound, thief)) == [("run-key-binding", "runs[0].run_id_nonce")]


def test_unsigned_files_stay_valid_and_are_labelled_unsigned(tmp_path):
    for path in [*CORPUS_VALID, *STORED]:
        assert validate_file(path) == [], path
        assert signing.signer(results.load(path)) is None
    doc = _document()
    assert _codes(doc) == [] and signing.signer(doc) is None
    folder = tmp_path / "results"
    submit(_write(tmp_path / "plain.json", doc), folder)
    [entry] = pipeline.table([(p.name, results.load(p)) for p in stored_files(folder)]).to_dict("records")
    assert pd.isna(entry["signer"]) and pd.isna(entry["copy_of"])
    build_site(folder, tmp_path / "site")
    page = (tmp_path / "site" / "runs" / f"{run_slug(stored_files(folder)[0].name, doc['runs'][0]['run_id'])}.html")
    assert '<span class="empty">unsigned</span>' in page.read_text()
    system = (tmp_path / "site" / "systems" / f"{safe_name('synthetic-lab')}.html").read_text()
    assert "signed by" in system and ">unsigned<" in system


def test_a_reproduction_signed_by_an_untrusted_key_verifies_and_names_its_signer(tmp_path):
    auditor, auditor_fp = _key(tmp_path, "auditor")
    folder = tmp_path / "results"
    doc = _document(scale="smoke")
    stored = submit(_write(tmp_path / "orig.json", doc), folder)
    rep = signing.seal(factories.reproduction_of(doc, stored.stem), auditor)
    assert _codes(rep) == [] and signing.signer(rep) == auditor_fp
    submit(_write(tmp_path / "rep.json", rep), folder)
    build_site(folder, tmp_path / "site")
    runs = json.loads((tmp_path / "site" / "runs.json").read_text())
    assert {r["signer"] for r in runs if r["reproduces"] == stored.stem} == {auditor_fp}
    [found] = leaderboard.reproductions(pd.DataFrame(runs)).values()  # what the original's page counts
    assert [r["signer"] for r in found] == [auditor_fp]
    page = (tmp_path / "site" / "runs" / f"{run_slug(stored.name, doc['runs'][0]['run_id'])}.html").read_text()
    assert "reproduced 1 time" not in page  # the auditor is no trusted reviewer of this site
    assert f"unverified claims: 1 reproduction on auditor-box (signed by {auditor_fp}; not counted" in page
    # once the site's reviewers.toml lists the auditor's key, the same file counts
    (folder / "reviewers.toml").write_text(f'[[reviewer]]\nname = "Audit team"\nfingerprint = "{auditor_fp}"\n')
    build_site(folder, tmp_path / "site")
    page = (tmp_path / "site" / "runs" / f"{run_slug(stored.name, doc['runs'][0]['run_id'])}.html").read_text()
    assert "reproduced 1 time on auditor-box (reviewed by Audit team)" in page and "unverified" not in page


@pytest.mark.parametrize("content", [b"[[reviewer]]\nname = 1\n", b"not toml [", b"\xff\xfe",
                                     b"[[reviewer]]\nname = \"x\"\nfingerprint = \"SHA256:short\"\n",
                                     # a fingerprint and an escaped newline passed "$" and silently trusted nobody
                                     b"[[reviewer]]\nname = \"x\"\nfingerprint = \"SHA256:" + b"A" * 43 + b"\\n\"\n"])
def test_a_reviewers_file_that_cannot_be_read_trusts_nobody_and_says_why(tmp_path, content):
    from suite.trust import reviewers

    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "reviewers.toml").write_bytes(content)
    found = reviewers.load(folder)
    assert found.names == {} and "no reviewer is trusted" in found.problem
    built = build_site(folder, tmp_path / "site")
    assert [name for name, _ in built.invalid] == ["reviewers.toml"]
    (folder / "reviewers.toml").unlink()
    (folder / "reviewers.toml").symlink_to(tmp_path / "elsewhere.toml")
    assert "not a regular file" in reviewers.load(folder).problem


# ---------------------------------------------------------------- one run, one owner
def test_one_runs_step_times_twice_in_one_file_are_refused():
    doc = _document(scale="smoke", workloads=("lm-char",), seeds=2)
    twice = copy.deepcopy(doc)
    first = doc["runs"][0]
    later = factories.log_span(doc)[1] + 1 - factories.log_span({"runs": [first]})[0]
    # seed 1's run trained again after the others, its step times to the last digit: one run twice
    twice["runs"][1] = factories.retimed_copy(first, later, {"seed": 2}, variant=None) | {"seed": 2}
    assert twice["runs"][1]["step_times_s"] == first["step_times_s"]
    twice["created_at"] = factories.stamp(dt.datetime.fromtimestamp(factories.log_span(twice)[1] + 2, dt.UTC))
    # its step times are seed 1's, and so is its curve, claimed for seed 2
    assert _codes(twice) == [("duplicate-steps", "runs[1].step_times_s"), ("seed-copy", "runs[1].curve")]
    assert _codes(doc) == []


def test_few_or_constant_step_times_identify_no_run():
    times = [round(0.1 + 0.001 * i, 7) for i in range(ownership.MIN_STEPS)]
    assert ownership.steps_key({"step_times_s": times}) is not None
    assert ownership.steps_key({"step_times_s": times[:-1]}) is None  # too few to tell runs apart
    assert ownership.steps_key({"step_times_s": [0.1] * 100}) is None  # a constant time says nothing
    assert ownership.steps_key({"step_times_s": [1] + times[1:]}) == \
        ownership.steps_key({"step_times_s": [1.0] + times[1:]})  # the numbers, not their spelling


def test_a_run_whose_step_times_are_stored_is_refused_unless_signed_over_an_unsigned_file(tmp_path):
    key, fp = _key(tmp_path, "other")
    folder = tmp_path / "results"
    doc = _document()
    first = submit(_write(tmp_path / "first.json", doc), folder)
    before = _tree(folder)
    copied = _renamed(copy.deepcopy(doc), "renamed")
    copied["runs"][0]["run_id"] = "c" * 32  # a new run id: the step times still say which run it is
    assert check_document(copied) == []
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "unsigned.json", copied), folder)
    assert [(p.code, p.field) for p in refused.value.problems] == [("duplicate-steps", "runs[0].step_times_s")]
    assert first.name in refused.value.problems[0].reason
    assert _tree(folder) == before
    # signed, it wins over the unsigned file stored first (docs/rules.md, "One run, one owner"):
    # a result nobody signed cannot be told from a copy of it; the unsigned file stays, a copy
    sealed = signing.seal(copied, key)
    stored = submit_noted(_write(tmp_path / "signed.json", sealed), folder)
    unsigned_id = json.loads(first.read_text())["runs"][0]["run_id"]  # sealing minted the run id anew
    assert unsigned_id != sealed["runs"][0]["run_id"]
    assert stored.notes == (f"run {sealed['runs'][0]['run_id']} is also in {first.name} (the same step times), "
                            f"there as run {unsigned_id}, which is not signed by its owner's key ({fp}): "
                            f"{first.name}'s run is now shown as a copy, not ranked",)
    assert first.read_bytes() == (tmp_path / "first.json").read_bytes()


def test_a_stolen_copy_submitted_first_does_not_block_its_owner(tmp_path, capsys):
    owner, owner_fp = _key(tmp_path, "owner")
    folder = tmp_path / "results"
    genuine = signing.seal(_document("owner-lab"), owner)
    stolen = _renamed(copy.deepcopy(genuine), "thief-lab")  # the system renamed, the signature stripped
    del stolen["signature"]
    assert check_document(stolen) == []  # a valid unsigned file
    thief_file = submit(_write(tmp_path / "stolen.json", stolen), folder)
    thief_bytes = thief_file.read_bytes()

    assert cli.main(["submit", str(_write(tmp_path / "genuine.json", genuine)), "--results-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    run_id = genuine["runs"][0]["run_id"]
    assert f"note: run {run_id} is also in {thief_file.name}, which is not signed by its owner's key " \
           f"({owner_fp}): {thief_file.name}'s run is now shown as a copy, not ranked" in out
    assert len(stored_files(folder)) == 2 and thief_file.read_bytes() == thief_bytes  # nothing changed
    owner_file = next(p for p in stored_files(folder) if p != thief_file)

    # the leaderboard: the copy is marked and never ranked, the owner's entry is
    docs = [(p.name, results.load(p)) for p in stored_files(folder)]
    table = pipeline.table(docs).set_index("file")
    assert table.loc[thief_file.name, "copy_of"] == owner_fp and pd.isna(table.loc[thief_file.name, "signer"])
    assert pd.isna(table.loc[owner_file.name, "copy_of"]) and table.loc[owner_file.name, "signer"] == owner_fp
    rankable = leaderboard.rankable(table)
    assert not rankable[thief_file.name] and rankable[owner_file.name]

    # the site: the copy's page says so and links the owner's run; the workload page ranks the owner
    build_site(folder, tmp_path / "site")
    site = tmp_path / "site"
    copy_page = (site / "runs" / f"{run_slug(thief_file.name, run_id)}.html").read_text()
    owner_href = f"{run_slug(owner_file.name, run_id)}.html"
    assert f"copy of a run signed by <code>{owner_fp}</code>, not ranked" in copy_page
    assert f'href="{owner_href}"' in copy_page
    owner_page = (site / "runs" / owner_href).read_text()
    assert f"signed by <code>{owner_fp}</code>" in owner_page and "copy of a run" not in owner_page
    workload = (site / "workloads" / f"{safe_name('gpt2-124m')}.html").read_text()
    ranked, rest = workload.split("Copies, not ranked", 1)
    assert "owner-lab" in ranked and "thief-lab" not in ranked and "thief-lab" in rest
    assert rest.startswith(" (full scale): ") and "<table" not in rest.split("</table>", 1)[1]  # the last table
    thief_system = (site / "systems" / f"{safe_name('thief-lab')}.html").read_text()
    assert f"copy of a run signed by {signing.short(owner_fp)}, not ranked" in thief_system
    owner_system = (site / "systems" / f"{system_slug('owner-lab', owner_fp)}.html").read_text()
    assert signing.short(owner_fp) in owner_system


def test_the_owners_file_stored_first_refuses_the_copy(tmp_path):
    owner, _ = _key(tmp_path, "owner")
    folder = tmp_path / "results"
    genuine = signing.seal(_document("owner-lab"), owner)
    first = submit(_write(tmp_path / "genuine.json", genuine), folder)
    stolen = _renamed(copy.deepcopy(genuine), "thief-lab")
    del stolen["signature"]
    with pytest.raises(Refused) as refused:
        submit(_write(tmp_path / "stolen.json", stolen), folder)
    assert [p.code for p in refused.value.problems] == ["duplicate-run"]
    assert first.name in refused.value.problems[0].reason
    resubmitted = signing.sign(_renamed(copy.deepcopy(genuine), "owner-lab-2"), owner)
    with pytest.raises(Refused) as again:  # the owner's own run, stored already: once is enough
        submit_noted(_write(tmp_path / "again.json", resubmitted), folder)
    assert [p.code for p in again.value.problems] == ["duplicate-run"]


def test_stored_files_the_store_cannot_read_claim_no_runs(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "broken.json").write_text("{not json")
    (folder / "odd.json").write_text(json.dumps({"runs": [{"run_id": "a" * 32}, {"run_id": ["a list"]}]}))
    doc = _document()
    doc["runs"][0]["run_id"] = "a" * 32  # the id of a run of a file that is not a results file
    assert submit(_write(tmp_path / "doc.json", doc), folder).is_file()


def test_binding_renames_runs_finished_before_the_key_and_their_reproduction_entries(tmp_path):
    key, _ = _key(tmp_path, "owner")
    public = signing.public_bytes(key)
    rep = factories.reproduction_of(_document(scale="smoke"), "3" * 64)
    old = rep["runs"][0]["run_id"]
    assert signing.bind_runs(rep, public) == 1 and signing.bind_runs(rep, public) == 0
    new = rep["runs"][0]["run_id"]
    assert new != old and rep["settings"]["reproduces"]["runs"][0]["run_id"] == new
    assert _codes(signing.sign(rep, key)) == []


# ---------------------------------------------------------------- goodbench run
def test_run_signs_its_file_and_says_so_unless_told_not_to(tmp_path, monkeypatch, capsys):
    """``run`` with a key (run_suite faked: the minting itself is test_reproduce.py's smoke run)."""
    from test_run_output import _document as fake_document

    key_file, fp = signing.keygen()
    factories.fake_training(monkeypatch, lambda plan, options, progress: fake_document())
    monkeypatch.setattr("suite.run.signals.stop_on_sigterm", lambda: None)
    monkeypatch.chdir(tmp_path)
    argv = ["run", "-w", "lm-char", "--scale", "smoke", "--device", "cpu"]
    assert cli.main([*argv, "-o", "signed.json"]) == 0
    assert f"signed by {fp} (key {key_file})" in capsys.readouterr().out
    doc = results.load(tmp_path / "signed.json")
    assert signing.signer(doc) == fp and check_document(doc) == []
    assert cli.main([*argv, "-o", "plain.json", "--no-sign"]) == 0
    assert "unsigned (--no-sign)" in capsys.readouterr().out
    assert "signature" not in results.load(tmp_path / "plain.json")
    key_file.unlink()
    assert cli.main([*argv, "-o", "keyless.json"]) == 0
    assert "unsigned: no key; `goodbench keygen` makes one" in capsys.readouterr().out

