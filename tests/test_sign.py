"""``goodbench sign FILE``: a valid file written unsigned, signed with the user's key into a new
file, as ``goodbench run`` signs the file it writes; the input never changed, nothing
overwritten, and what is not the user's to sign refused in one line (docs/submitting.md, "Sign a
file written unsigned")."""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import factories
import numpy as np
import pytest

from suite.cli import main
from suite.commands import sign as sign_command
from suite.leaderboard import pipeline
from suite.record import results
from suite.store.files import Refused, stored_files, submit, submit_noted
from suite.trust import signing
from suite.validate import check_document, validate_file

FIXTURES = Path(__file__).parent / "fixtures"
OWN = FIXTURES / "own-2-ranks-killed.json"          # unsigned, own code with its second clock
SIGNED = FIXTURES / "own-stored-losses.json"         # signed by a key of its own
REPRODUCTION = FIXTURES / "own-stored-losses-rerun.json"  # a reproduction, signed by its reviewer


def _document(seed: int = 7) -> dict:
    """A valid unsigned full-scale gpt2-124m result on an H100, one run."""
    return factories.synthetic_document("synthetic-lab", rng=np.random.default_rng(seed), accelerator=0,
                                        scale="full", workloads=("gpt2-124m",))


def _write(path: Path, doc: dict) -> Path:
    results.write(path, doc)
    return path


def _keygen(capsys) -> str:
    """A key in this test's config directory (conftest's); its fingerprint."""
    assert main(["keygen"]) == 0
    capsys.readouterr()
    key = signing.load_key()
    assert key is not None
    return signing.fingerprint(signing.public_bytes(key))


def _refused(capsys, argv: list[str]) -> str:
    """The one line of a refused ``goodbench sign``: exit 1, nothing on stdout, no traceback."""
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("goodbench: error: "), captured.err
    return lines[0]


def _without_runs_ids(doc: dict) -> dict:
    """``doc`` without what signing adds or changes: the signature, the runs' ids and nonces, and the
    second clock's names for them."""
    doc = copy.deepcopy(doc)
    doc.pop("signature", None)
    for run in doc["runs"]:
        run.pop("run_id"), run.pop("run_id_nonce", None)
    for entry in (doc.get("second_clock") or {}).get("runs", []):
        entry.pop("run_id")
    return doc


def test_an_unsigned_file_is_signed_into_a_new_file_beside_it(tmp_path, capsys):
    fp = _keygen(capsys)
    plain = _write(tmp_path / "plain.json", _document())
    before = plain.read_bytes()
    assert main(["sign", str(plain)]) == 0
    out = capsys.readouterr().out.splitlines()
    signed_path = tmp_path / "plain.signed.json"
    assert plain.read_bytes() == before  # the input is never changed
    assert validate_file(signed_path) == []
    signed, unsigned = results.load(signed_path), results.load(plain)
    assert signing.signer(signed) == fp
    key = signing.load_key()
    assert key is not None and all(signing.is_bound(run, signing.public_bytes(key)) for run in signed["runs"])
    assert _without_runs_ids(signed) == _without_runs_ids(unsigned)  # nothing else changed
    assert signed["created_at"] == unsigned["created_at"]  # no date made up: a signature records none
    assert out[0] == f"{signed_path}: {plain} signed by {fp} (key {signing.key_path()}); {plain} is unchanged"
    assert out[1] == "run ids: 1 of 1 minted anew for the key (a signed file's run ids are its key's)"
    assert out[2] == "validated: ok"
    assert out[3].startswith("note: signed now, after its run (a signature records no time)")
    assert "One run, one owner" in out[3] and len(out) == 4


def test_own_code_is_signed_with_its_second_clock_naming_the_new_ids(tmp_path, capsys):
    _keygen(capsys)
    out = tmp_path / "mine.json"
    assert main(["sign", str(OWN), "--out", str(out)]) == 0  # --out: argparse's abbreviation of --output
    capsys.readouterr()
    signed = results.load(out)
    assert validate_file(out) == [] and signing.signer(signed) is not None
    ids = {run["run_id"] for run in signed["runs"]}
    assert {entry["run_id"] for entry in signed["second_clock"]["runs"]} == ids
    assert not ids & {run["run_id"] for run in results.load(OWN)["runs"]}


def test_the_signed_file_is_stored_and_shown_as_signed(tmp_path, capsys):
    fp = _keygen(capsys)
    folder = tmp_path / "results"
    plain = _write(tmp_path / "plain.json", _document())
    first = submit(plain, folder)  # shown unsigned first: signing later wins over it, as any signed copy does
    assert main(["sign", str(plain)]) == 0
    capsys.readouterr()
    stored = submit_noted(tmp_path / "plain.signed.json", folder)
    assert f"which is not signed by its owner's key ({fp}): {first.name}'s run is now shown as a copy" in stored.notes[0]
    docs = [(p.name, results.load(p)) for p in stored_files(folder)]
    table = pipeline.table(docs).set_index("file")
    assert table.loc[stored.path.name, "signer"] == fp
    assert table.loc[first.name, "copy_of"] == fp  # the unsigned record is now shown as the signed one's copy


def test_a_signed_copy_stored_first_keeps_the_runs_of_a_file_signed_later(tmp_path, capsys, monkeypatch):
    """A signature records no time: of two signed records of one run, the first stored stays."""
    plain = _write(tmp_path / "plain.json", _document())
    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(tmp_path / "copier"))
    _keygen(capsys)
    assert main(["sign", str(plain), "-o", str(tmp_path / "copy.json")]) == 0
    folder = tmp_path / "results"
    copied = submit(tmp_path / "copy.json", folder)
    monkeypatch.setenv("GOODBENCH_CONFIG_DIR", str(tmp_path / "owner"))
    _keygen(capsys)
    assert main(["sign", str(plain)]) == 0
    out = capsys.readouterr().out
    assert "a signed record of its runs stored before it stays first (this one is then shown as disputed)" in out
    stored = submit_noted(tmp_path / "plain.signed.json", folder)
    assert copied.name in stored.notes[0] and "disputed" in stored.notes[0]


def test_a_signed_file_is_refused_naming_its_signer(tmp_path, capsys):
    fp = _keygen(capsys)
    theirs = signing.signer(results.load(SIGNED))
    assert theirs is not None and theirs != fp
    line = _refused(capsys, ["sign", str(SIGNED), "-o", str(tmp_path / "again.json")])
    assert line == (f"goodbench: error: {SIGNED} is signed already, by {signing.short(theirs)} (another key): "
                    "a signed file is not signed again")
    plain = _write(tmp_path / "plain.json", _document())
    assert main(["sign", str(plain)]) == 0
    capsys.readouterr()
    line = _refused(capsys, ["sign", str(tmp_path / "plain.signed.json")])
    assert f"by {signing.short(fp)} (your key)" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.json", "plain.signed.json"]


def test_a_reproduction_is_refused(tmp_path, capsys):
    """Its signature is the word of the reviewer who ran it again: a file in hand cannot give it."""
    _keygen(capsys)
    doc = json.loads(REPRODUCTION.read_text())
    del doc["signature"]
    assert check_document(doc) == []  # valid unsigned
    path = _write(tmp_path / "rerun.json", doc)
    line = _refused(capsys, ["sign", str(path)])
    assert "is a reproduction" in line and "goodbench reproduce again with your key" in line
    assert [p.name for p in tmp_path.iterdir()] == ["rerun.json"]


def test_a_file_whose_signature_was_taken_off_is_refused_as_a_mistake_naming_its_run(tmp_path, capsys):
    """Run ids minted for another key refuse the file, naming the run by its id (cut, printable), and
    say the refusal is a guard, not a protection; ids minted for the user's key are theirs."""
    fp = _keygen(capsys)
    doc = json.loads(SIGNED.read_text())
    del doc["signature"]
    stripped = _write(tmp_path / "stripped.json", doc)
    line = _refused(capsys, ["sign", str(stripped)])
    run_id = doc["runs"][0]["run_id"]
    assert f"the id of run {run_id} was minted for another signing key (its run_id_nonce)" in line
    assert "A guard, not a protection" in line and "One run, one owner" in line
    assert "only that key signs it" not in line
    # the schema holds a run id to 32 hex digits; were another id to reach the refusal, it is cut and cleaned
    hostile = copy.deepcopy(doc)
    hostile["runs"][0]["run_id"] = "\x1b[2J\n" + "f" * 60
    said = sign_command._refusal(hostile, "hostile.json", signing.public_bytes(signing.load_key()))
    assert said is not None and "\x1b" not in said and "\n" not in said and f"run ?[2J?{'f' * 35}… was" in said
    key = signing.load_key()
    assert key is not None
    mine = signing.seal(_document(), key)
    del mine["signature"]
    assert main(["sign", str(_write(tmp_path / "mine.json", mine))]) == 0
    out = capsys.readouterr().out
    assert "run ids: all 1 minted for the key already" in out
    assert signing.signer(results.load(tmp_path / "mine.signed.json")) == fp


def test_a_file_with_its_signature_and_nonces_taken_off_is_signed_as_the_refusal_says(tmp_path, capsys):
    """The guard reads the run_id_nonce only: without it too, another key's file is signed, its ids
    minted anew (what keeps the run its owner's is the store's copy detection, not this command)."""
    fp = _keygen(capsys)
    doc = json.loads(SIGNED.read_text())
    del doc["signature"]
    for run in doc["runs"]:
        del run["run_id_nonce"]
    assert check_document(doc) == []
    assert main(["sign", str(_write(tmp_path / "bare.json", doc))]) == 0
    capsys.readouterr()
    assert signing.signer(results.load(tmp_path / "bare.signed.json")) == fp


def test_an_output_that_exists_is_never_overwritten(tmp_path, capsys):
    _keygen(capsys)
    plain = _write(tmp_path / "plain.json", _document())
    taken = tmp_path / "plain.signed.json"
    taken.write_text("mine")
    line = _refused(capsys, ["sign", str(plain)])
    assert line == f"goodbench: error: {taken} exists; goodbench sign never overwrites a file (give another -o)"
    assert taken.read_text() == "mine"
    (tmp_path / "elsewhere").symlink_to(tmp_path / "absent.json")  # a dangling link is taken too
    _refused(capsys, ["sign", str(plain), "-o", str(tmp_path / "elsewhere")])
    _refused(capsys, ["sign", str(plain), "-o", str(plain)])  # nor the input itself
    assert not (tmp_path / "absent.json").exists()


def _hostile(tmp_path: Path) -> list[tuple[str, Path]]:
    cases = {"not JSON": b"{\"runs\": [", "nested too deep": b"[" * 5000 + b"]" * 5000,
             "not UTF-8": b"{\"a\": \"\xff\"}", "a list": b"[1, 2]"}
    made = []
    for name, raw in cases.items():
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        path.write_bytes(raw)
        made.append((name, path))
    tampered = json.loads(SIGNED.read_text())
    tampered["system"]["name"] = "someone else"
    made.append(("a signed file changed", _write(tmp_path / "tampered.json", tampered)))
    escape = _document()
    escape["system"]["name"] = "lab\x1b[2J"
    made.append(("an escape sequence", _write(tmp_path / "escape.json", escape)))
    os.symlink(OWN, tmp_path / "link.json")
    made.append(("a symbolic link", tmp_path / "link.json"))
    made.append(("absent", tmp_path / "absent.json"))
    return made


def test_an_invalid_or_hostile_file_gets_one_line_and_nothing_is_written(tmp_path, capsys):
    _keygen(capsys)
    for name, path in _hostile(tmp_path):
        before = sorted(p.name for p in tmp_path.iterdir())
        line = _refused(capsys, ["sign", str(path)])
        assert line.startswith("goodbench: error: not signed: ") and "\x1b" not in line, (name, line)
        assert sorted(p.name for p in tmp_path.iterdir()) == before, name


def test_without_a_key_it_says_how_to_make_one(tmp_path, capsys):
    plain = _write(tmp_path / "plain.json", _document())
    line = _refused(capsys, ["sign", str(plain)])
    assert line == (f"goodbench: error: no signing key at {signing.key_path()}: `goodbench keygen` makes one, "
                    f"then `goodbench sign {plain}`")
    assert [p.name for p in tmp_path.iterdir()] == ["plain.json"]


def test_a_stored_file_is_never_signed_into_the_store(tmp_path, capsys, monkeypatch):
    """Trial 13, 5 (/tmp/trial13/sign_into_store.sh): `goodbench sign results/<sha>.json` wrote
    <sha>.signed.json into the store itself, past submit and the ledger; the site read it first and
    showed the stored original as its copy. An output in a store is refused, in one line naming -o."""
    _keygen(capsys)
    folder = tmp_path / "store2"
    stored = submit(_write(tmp_path / "plain.json", _document()), folder)
    before = sorted(p.name for p in folder.iterdir())
    default = stored.with_suffix(sign_command.SUFFIX)
    line = _refused(capsys, ["sign", str(stored)])
    assert line == (f"goodbench: error: not signed: {default} is in a results store (it holds ledger.jsonl), where "
                    "only goodbench submit writes: give -o a path outside it, then goodbench submit the signed file")
    _refused(capsys, ["sign", str(stored), "-o", str(folder / "mine.json")])  # nor named there
    assert sorted(p.name for p in folder.iterdir()) == before
    assert main(["sign", str(stored), "-o", str(tmp_path / "signed.json")]) == 0  # outside: signed
    capsys.readouterr()
    monkeypatch.chdir(tmp_path)  # the default store of the working folder, before its first submit
    (tmp_path / "results").mkdir()
    _write(tmp_path / "results" / "plain.json", _document())
    line = _refused(capsys, ["sign", "results/plain.json"])
    assert "is in a results store (the default --results-dir of goodbench submit (results/))" in line
    assert not (tmp_path / "results" / "plain.signed.json").exists()


def test_a_file_in_a_store_not_named_by_its_sha256_is_not_shown_and_claims_no_runs(tmp_path, capsys):
    """The signed copy that `goodbench sign` once wrote into a store (or anything put there by hand
    under another name) is listed under "Files not shown", not read as stored first; the stored
    original is not shown as its copy, and submitting the signed file stores it, not refused as
    a copy of its own misnamed bytes."""
    fp = _keygen(capsys)
    folder = tmp_path / "store2"
    original = submit(_write(tmp_path / "plain.json", _document()), folder)
    assert main(["sign", str(original), "-o", str(tmp_path / "signed.json")]) == 0
    planted = original.with_suffix(sign_command.SUFFIX)
    planted.write_bytes((tmp_path / "signed.json").read_bytes())  # where sign's default put it
    board = pipeline.read(folder)
    assert board.invalid == [(planted.name, f"{planted.name}: not stored by goodbench submit: its name is not the "
                                            "sha256 of its bytes (move it out of the store, then goodbench submit it)")]
    assert set(board.entries["file"]) == {original.name} and board.entries["copy_of"].isna().all()
    stored = submit_noted(tmp_path / "signed.json", folder)
    assert f"which is not signed by its owner's key ({fp}): {original.name}'s run is now shown as a copy" in stored.notes[0]


def test_a_stored_file_whose_line_endings_a_checkout_rewrote_is_still_stored(tmp_path):
    """A review found that a store checked out with CRLF line endings (git's autocrlf) hid every
    file, none of its runs claimed, so a copy of one was stored unremarked: a name the ledger lists
    is the file submit stored, whatever its bytes now."""
    folder = tmp_path / "store"
    original = submit(_write(tmp_path / "plain.json", _document()), folder)
    original.write_bytes(original.read_bytes().replace(b"\n", b"\r\n"))
    board = pipeline.read(folder)
    assert board.invalid == [] and set(board.entries["file"]) == {original.name}
    again = tmp_path / "again.json"
    again.write_text(json.dumps(_document(), indent=3))  # the same runs, other bytes
    with pytest.raises(Refused, match=f"is already stored in {original.name}"):  # its runs still claimed
        submit_noted(again, folder)


def test_a_stored_file_edited_in_place_is_not_shown_and_says_why(tmp_path):
    """Trial VI, F4: a stored file's system name edited in place, its name kept, was shown edited
    and unmarked (the tolerance above let any listed name through). Its name is the sha256 of the
    bytes submit stored: beyond a rewrite of its line endings, the file is listed under "Files not
    shown", saying so."""
    folder = tmp_path / "store"
    original = submit(_write(tmp_path / "plain.json", _document()), folder)
    doc = json.loads(original.read_text())
    doc["system"]["name"] = "edited in place"
    original.write_text(json.dumps(doc, indent=2).replace("\n", "\r\n"))  # line endings too: no cover
    board = pipeline.read(folder)
    [(name, why)] = board.invalid
    assert name == original.name and "changed since goodbench submit stored it" in why
    assert board.entries.empty
