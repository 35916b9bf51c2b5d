"""Submitting: content-addressed landing, duplicates refused, concurrency, byte-identical refusals."""
from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import factories
import numpy as np
import pytest

from suite import cli
from suite.record import results
from suite.site import builder as site_builder
from suite.store import ledger
from suite.store.files import Refused, safe_filename, stored_files, submit

CORPUS = Path(__file__).resolve().parent / "corpus"
VALID = CORPUS / "valid" / "lm-char-smoke.json"


def _variant(tmp_path: Path, i: int) -> Path:
    """Another valid file of another run (its own run id and step times): a distinct valid
    submission."""
    doc = factories.synthetic_document(f"synthetic-variant-{i}", rng=np.random.default_rng(100 + i),
                                       accelerator=5, scale="smoke", workloads=("lm-char",))
    path = tmp_path / f"variant-{i}.json"
    results.write(path, doc)
    return path


def _tree(root: Path) -> dict[str, str] | None:
    """Every entry under ``root`` (dot files too) with the sha256 of its bytes."""
    if not root.exists():
        return None
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


def test_a_valid_file_lands_under_its_content_hash(tmp_path):
    results = tmp_path / "results"
    dest = submit(VALID, results)
    assert dest == results / f"{hashlib.sha256(VALID.read_bytes()).hexdigest()}.json"
    assert dest.read_bytes() == VALID.read_bytes()
    assert stored_files(results) == [dest]
    tree = _tree(results)  # no lock or temp file left: the file, and the ledger listing it
    assert tree.pop(dest.name) == hashlib.sha256(VALID.read_bytes()).hexdigest() and list(tree) == [ledger.NAME]
    assert ledger.order(results) == [dest.name]


def test_submit_says_why_a_stored_file_will_not_be_ranked(tmp_path, capsys):
    """A smoke file on a CPU is stored, and submit says, per entry, why it will not be ranked;
    a full-scale H100 file's throughput entries rank, and submit says nothing more of them."""
    assert cli.main(["submit", str(VALID), "--results-dir", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("stored ")
    assert out[1] == ("not ranked: lm-char (smoke): smoke scale: only full-scale results are ranked; "
                      "no known peak for its device (goodbench peaks): its MFU cannot be bounded")
    doc = factories.synthetic_document("lab-h100", rng=np.random.default_rng(3), accelerator=0)
    full = [r for r in doc["runs"] if r["scale"] == "full" and r["workload"]["kind"] == "throughput"]
    assert full, "the synthetic H100 document has full-scale throughput runs"
    from suite.leaderboard import rows as leaderboard

    frame = leaderboard.rows("h100.json", doc)
    ranked = [r for r in frame if r["scale"] == "full" and r["kind"] == "throughput"]
    assert ranked and all(leaderboard.unranked_reasons(r) == [] for r in ranked)
    import pandas as pd  # the words agree with the leaderboard's own test, entry by entry

    frame += leaderboard.rows(VALID.name, json.loads(VALID.read_text()))
    table = pd.DataFrame(frame, columns=leaderboard.ENTRY_COLUMNS)
    said = [all(w.startswith(("ranked", "also flagged")) for w in leaderboard.unranked_reasons(r)) for r in frame]
    assert said == list(leaderboard.rankable(table)) and not all(said)


REFUSALS = {
    "invalid": lambda tmp: CORPUS / "tta-edited-faster.json",
    "not-json": lambda tmp: CORPUS / "not-json-truncated.json",
    "hostile": lambda tmp: CORPUS / "lone-surrogate-escape.json",
    "same-bytes": lambda tmp: VALID,
    "same-run-id-changed": lambda tmp: _changed_same_run_id(tmp),
    "too-large": lambda tmp: _too_large(tmp),
    "missing": lambda tmp: tmp / "absent.json",
}


def _changed_same_run_id(tmp: Path) -> Path:
    doc = json.loads(VALID.read_text())
    doc["system"]["name"] = "renamed system"
    for run in doc["runs"]:  # renamed in the event logs too: a copy edited to tell one story
        run["event_log"] = factories.relogged(run["event_log"], values={"submission_platform": "renamed system"})
    path = tmp / "changed.json"
    path.write_text(json.dumps(doc))
    return path


def _too_large(tmp: Path) -> Path:
    path = tmp / "large.json"
    with open(path, "wb") as fh:
        fh.truncate(6 * 1024 * 1024)
    return path


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_a_refused_submission_leaves_the_store_byte_identical(tmp_path, kind, capsys):
    results = tmp_path / "results"
    submit(VALID, results)
    submit(_variant(tmp_path, 7), results)
    before = _tree(results)
    bad = REFUSALS[kind](tmp_path)
    assert cli.main(["submit", str(bad), "--results-dir", str(results)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("refused: ") and line.endswith("]") for line in lines)
    assert _tree(results) == before


def test_a_second_submission_of_a_file_says_where_it_is_with_no_field_placeholder(tmp_path, capsys):
    """A new user's second `submit` of one file read "refused: FILE: (file): already submitted as …"."""
    results = tmp_path / "results"
    assert cli.main(["submit", str(VALID), "--results-dir", str(results)]) == 0
    [stored] = results.glob("*.json")
    capsys.readouterr()
    assert cli.main(["submit", str(VALID), "--results-dir", str(results)]) == 1
    assert capsys.readouterr().out.splitlines() == [f"refused: {VALID}: already submitted as {stored.name} [duplicate]"]


def test_a_store_that_cannot_be_written_is_named_as_given(tmp_path, capsys):
    """`submit --results-dir /sys/nu-results` said only the path and "Operation not permitted"."""
    (tmp_path / "file").write_text("x")
    store = tmp_path / "file" / "results"  # under a file: no folder can be made there
    assert cli.main(["submit", str(VALID), "--results-dir", str(store)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"goodbench: error: cannot write to --results-dir {store} (Not a directory)"]
    from suite.commands.common import writing

    with pytest.raises(FileNotFoundError), writing("--results-dir", store):  # a path elsewhere: left as it is
        (tmp_path / "elsewhere.json").read_bytes()


def test_refusal_codes_for_duplicates(tmp_path):
    results = tmp_path / "results"
    submit(VALID, results)
    with pytest.raises(Refused) as same:
        submit(VALID, results)
    assert [p.code for p in same.value.problems] == ["duplicate"]
    with pytest.raises(Refused) as changed:
        submit(_changed_same_run_id(tmp_path), results)
    assert [p.code for p in changed.value.problems] == ["duplicate-run"]


def test_an_invalid_file_does_not_even_create_the_results_dir(tmp_path):
    results = tmp_path / "results"
    with pytest.raises(Refused):
        submit(CORPUS / "schema-missing-runs.json", results)
    assert not results.exists()


def test_a_symbolic_link_is_refused_and_nothing_stored(tmp_path, capsys):
    link = tmp_path / "link.json"
    link.symlink_to(VALID)
    results = tmp_path / "results"
    with pytest.raises(Refused) as refused:
        submit(link, results)
    assert [(p.code, p.reason) for p in refused.value.problems] == [
        ("unreadable", "a symbolic link: give the file itself")]
    assert cli.main(["submit", str(link), "--results-dir", str(results)]) == 1
    assert "a symbolic link: give the file itself [unreadable]" in capsys.readouterr().out
    assert not results.exists()


@pytest.mark.parametrize("planted", ["dangling", "to-a-file", "folder"])
def test_a_link_or_folder_at_the_files_name_is_refused_and_the_ledger_untouched(tmp_path, planted):
    """Trial 11: a dangling symbolic link at the name a submission takes let the ledger list a
    file that was never stored, and the refusal said "already submitted"."""
    results = tmp_path / "results"
    results.mkdir()
    dest = results / f"{hashlib.sha256(VALID.read_bytes()).hexdigest()}.json"
    if planted == "folder":
        dest.mkdir()
    else:
        dest.symlink_to(VALID if planted == "to-a-file" else tmp_path / "nothing")
    with pytest.raises(Refused) as refused:
        submit(VALID, results)
    [(code, reason)] = [(p.code, p.reason) for p in refused.value.problems]
    assert code == "duplicate" and reason.startswith("the store holds a symbolic link or something other than a file")
    assert not (results / "ledger.jsonl").exists() and os.path.lexists(dest)


def _submit_in_child(args: tuple[str, str, object]) -> int:
    path, results, barrier = args
    barrier.wait()
    return cli.main(["submit", path, "--results-dir", results])


def _race(paths: list[Path], results: Path) -> list[int]:
    """Run ``goodbench submit`` for each path in its own process, released together."""
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(paths))
    procs, codes = [], ctx.Queue()
    for path in paths:
        proc = ctx.Process(target=lambda p=path: codes.put(_submit_in_child((str(p), str(results), barrier))))
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    return sorted(codes.get(timeout=5) for _ in procs)


def test_eight_concurrent_submissions_of_distinct_files_all_land(tmp_path):
    results = tmp_path / "results"
    paths = [_variant(tmp_path, i) for i in range(8)]
    assert _race(paths, results) == [0] * 8
    stored = stored_files(results)
    assert {p.read_bytes() for p in stored} == {p.read_bytes() for p in paths}
    assert _tree(results).keys() == {p.name for p in stored} | {ledger.NAME}  # no temp file left behind
    assert sorted(ledger.order(results)) == sorted(p.name for p in stored)  # each listed once


def test_eight_concurrent_submissions_of_the_same_file_land_once(tmp_path):
    results = tmp_path / "results"
    assert _race([VALID] * 8, results) == [0] + [1] * 7
    assert [p.read_bytes() for p in stored_files(results)] == [VALID.read_bytes()]


# A writer stopped inside write_atomic: the payload is in its temp file, the fsync of a temp file
# pauses it there (until it is killed) after saying "paused" on stdout (the store's ledger, listed
# first, is fsynced as usual).
PAUSED_WRITER = """
import os, signal, sys
from pathlib import Path

fsync = os.fsync

def pause(fd):
    if not os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
        return fsync(fd)
    print("paused", flush=True)
    signal.pause()

os.fsync = pause
if sys.argv[1] == "submit":
    from suite.store.files import submit
    submit(sys.argv[2], sys.argv[3])
else:
    from suite.record.results import write_atomic
    write_atomic(Path(sys.argv[3]) / "report.json", b"x" * 20_000_000)
"""


def _paused_writer(*args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", PAUSED_WRITER, *args], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "paused\n"
    return proc


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL


def test_a_submit_removes_the_temp_files_of_killed_writers_and_nothing_else(tmp_path):
    results = tmp_path / "results"
    first = submit(_variant(tmp_path, 0), results)
    keep = {".notes.txt": b"mine", ".draft.tmp": b"mine", ".x.json.0123456789ab.tmp.bak": b"mine"}
    for name, data in keep.items():
        (results / name).write_bytes(data)
    (results / ".dir.json.0123456789ab.tmp").mkdir()  # the temp name, but a folder: not a temp file
    (tmp_path / "target").write_bytes(b"elsewhere")
    (results / ".link.json.0123456789ab.tmp").symlink_to(tmp_path / "target")  # a link: never followed
    before = _tree(results)

    killed = _paused_writer("submit", str(_variant(tmp_path, 1)), str(results))  # a submit, SIGKILLed
    temps = [name for name in os.listdir(results) if name not in before]
    assert len(temps) == 1 and temps[0].startswith(".") and temps[0].endswith(".tmp")
    _kill(killed)
    live = _paused_writer("write", "", str(results))  # a live writer into the same folder
    (live_temp,) = [name for name in os.listdir(results) if name not in before and name not in temps]
    assert (results / temps[0]).is_file() and stored_files(results) == [first]  # readers never see temps
    built = site_builder.build_site(results, tmp_path / "site")
    assert built.n_results == 1 and built.invalid == []
    try:
        landed = submit(_variant(tmp_path, 2), results)
        assert not (results / temps[0]).exists()  # the killed writer's: removed
        assert (results / live_temp).stat().st_size == 20_000_000  # the live writer's: kept
        now = _tree(results)
        assert now.pop(ledger.NAME) != before[ledger.NAME]  # the ledger: appended to
        assert now == {**{k: v for k, v in before.items() if k != ledger.NAME}, landed.name: now[landed.name],
                       live_temp: now[live_temp]}
    finally:
        _kill(live)
    landed_again = submit(_variant(tmp_path, 3), results)
    assert not (results / live_temp).exists()  # killed now: removed by the next submit
    assert set(_tree(results)) == set(before) | {landed.name, landed_again.name}
    assert {p.name for p in stored_files(results)} == {n for n in _tree(results) if not n.startswith(".")} - {ledger.NAME}
    for name, data in keep.items():
        assert (results / name).read_bytes() == data
    assert (results / ".link.json.0123456789ab.tmp").is_symlink() and (tmp_path / "target").read_bytes() == b"elsewhere"


@pytest.mark.parametrize("text, expected", [
    ("../../etc/passwd", "etc-passwd"),
    ("NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"),
    ("..", "unnamed"),
    ("", "unnamed"),
    ("a/b\\c\x00d", "a-b-c-d"),
    (".hidden", "hidden"),
    ("x" * 500, "x" * 64),
])
def test_safe_filename(text, expected):
    assert safe_filename(text) == expected


def test_a_file_counts_from_the_earlier_of_its_first_commitment_and_its_last_stored_line(tmp_path):
    x, y = "a" * 64 + ".json", "b" * 64 + ".json"
    lines = [{"file": x, "stored_at": "t"}, {"file": y, "stored_at": "t"}, {"file": x, "committed_at": "t"},
             {"file": x, "stored_at": "t"}]
    (tmp_path / ledger.NAME).write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert ledger.order(tmp_path) == [y, x]  # x: its commitment (line 3) before its last stored line (4)
    (tmp_path / ledger.NAME).write_text("".join(json.dumps(line) + "\n" for line in (
        {"file": x, "committed_at": "t"}, {"file": y, "stored_at": "t"}, {"file": x, "stored_at": "t"})))
    assert ledger.order(tmp_path) == [x, y]


def test_submit_names_own_code_by_its_name_and_the_workload_it_is_held_to(monkeypatch, tmp_path):
    from suite.leaderboard import rank_notes
    from suite.leaderboard import rows as leaderboard

    row = {"workload": "lm-char", "scale": "smoke", "implementation": "my-char-gpt"}
    monkeypatch.setattr(leaderboard, "read_stored", lambda path: (object(), None))
    monkeypatch.setattr(leaderboard, "entry_rows", lambda read: [row, {**row, "implementation": None}])
    monkeypatch.setattr(leaderboard, "unranked_reasons", lambda r: ["smoke scale: only full-scale results are ranked"])
    assert rank_notes.rank_lines(tmp_path / "x.json") == [
        "not ranked: my-char-gpt (own code, held to lm-char's target, smoke): smoke scale: only full-scale results are ranked",
        "not ranked: lm-char (smoke): smoke scale: only full-scale results are ranked"]


def test_submit_reads_and_validates_the_file_once_for_its_rank_lines_too(monkeypatch, tmp_path, capsys):
    """The rank lines after "stored ..." read the stored file back and validated it again (the
    leaderboard's reading of it, :func:`suite.leaderboard.rows.read_stored`); submit now hands them
    the document it has just read and held to every rule, and the lines are those of the file read
    back."""
    from suite import validate
    from suite.leaderboard import rank_notes
    from suite.leaderboard import rows as leaderboard
    from suite.store import files, naming

    counts = {"read": 0, "checked": 0}

    def counted(what, original):
        def call(*args, **kwargs):
            counts[what] += 1
            return original(*args, **kwargs)
        return call

    monkeypatch.setattr(files, "read_bounded", counted("read", files.read_bounded))
    monkeypatch.setattr(naming, "load_parsed", counted("read", naming.load_parsed))
    monkeypatch.setattr(files, "check_document", counted("checked", files.check_document))
    monkeypatch.setattr(validate, "check_document", counted("checked", validate.check_document))
    results_dir = tmp_path / "results"
    assert cli.main(["submit", str(VALID), "--results-dir", str(results_dir)]) == 0
    assert counts == {"read": 1, "checked": 1}
    printed = capsys.readouterr().out.splitlines()
    stored = next(results_dir.glob("*.json"))
    lines = rank_notes.rank_lines(stored)  # the file read back, as the pull-request check may
    assert counts == {"read": 2, "checked": 2} and lines and printed[-len(lines):] == lines
    assert leaderboard.read_stored(stored)[0].waived == ()  # a file held to every rule has nothing waived


def _planted(kind: str) -> bytes:
    """A file no validator passes, placed in a store by hand (trial 13, 4: /tmp/trial13/store_crash.sh)."""
    if kind == "nested too deep":
        return b"[" * 100_000 + b"]" * 100_000
    doc = json.loads(VALID.read_text())
    doc["runs"][0]["step_times_s"][0] = 10 ** 400  # a float overflows: OverflowError in ownership.steps_key
    return json.dumps(doc).encode()


@pytest.mark.parametrize("kind", ["nested too deep", "a 400-digit step time"])
def test_a_stored_file_no_validator_passes_is_not_read_and_submit_stores_a_valid_file(tmp_path, kind, capsys):
    """One hostile file in the store made every later submit end in a traceback (RecursionError,
    OverflowError). It is read bounded now, as the site reads it, and a file that cannot be read
    claims no runs (the site lists it under "Files not shown"): the valid file is stored, no note."""
    from suite.leaderboard import rows as leaderboard

    store = tmp_path / "results"
    store.mkdir()
    (store / "planted.json").write_bytes(_planted(kind))
    assert cli.main(["submit", str(VALID), "--results-dir", str(store)]) == 0
    out = capsys.readouterr().out.splitlines()
    dest = store / f"{hashlib.sha256(VALID.read_bytes()).hexdigest()}.json"
    assert out[0] == f"stored {VALID} as {dest}" and not any(line.startswith("note:") for line in out)
    assert dest.read_bytes() == VALID.read_bytes() and ledger.order(store) == [dest.name]
    assert (store / "planted.json").read_bytes() == _planted(kind)  # left as it was
    shown, problem = leaderboard.read_stored(store / "planted.json")
    assert shown is None and problem  # the site leaves it out, saying why


def test_a_stored_copy_with_a_null_signature_refuses_its_runs_in_one_line(tmp_path, capsys):
    """A readable stored copy whose "signature" is null raised TypeError when submit checked the
    signatures of the files near the new one (signing.public_key_of); it is an unsigned copy."""
    store = tmp_path / "results"
    store.mkdir()
    doc = json.loads(VALID.read_text())
    doc["signature"] = None
    (store / "planted.json").write_text(json.dumps(doc))
    assert cli.main(["submit", str(VALID), "--results-dir", str(store)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out and all(line.startswith("refused: ") and "planted.json" in line for line in out)
    assert stored_files(store) == [store / "planted.json"]


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_folder_flush_failing_after_the_link_keeps_the_file_stored_and_listed(tmp_path, monkeypatch, capsys):
    """The file is linked into place and listed when the folder's flush fails (EIO): it stays
    stored, submit succeeds and says the flush failed (results.synced_dir), never "nothing stored"."""
    store = tmp_path / "results"
    submit(VALID, store)
    variant = _variant(tmp_path, 3)
    dest = store / f"{hashlib.sha256(variant.read_bytes()).hexdigest()}.json"

    def flush_fails(directory):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with monkeypatch.context() as patched:
        patched.setattr(results, "fsync_dir", flush_fails)
        assert cli.main(["submit", str(variant), "--results-dir", str(store)]) == 0
    assert dest.read_bytes() == variant.read_bytes() and dest.name in [name for name, _ in ledger.lines(store)]
    assert "is written, but its folder could not be flushed to disk" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["bytes", "link"])
def test_a_full_disk_stores_nothing_and_leaves_no_ledger_line(tmp_path, monkeypatch, capsys, where):
    """Trial 14b F1: a file the disk refused left a ledger line naming it (each retry another), and
    the error named no path. The disk refuses the file's bytes (or its name): neither file nor line
    stays, the error says so, and the same submit stores the file once the disk has room."""
    store = tmp_path / "results"
    submit(VALID, store)
    before = _tree(store)
    variant = _variant(tmp_path, 3)
    dest = store / f"{hashlib.sha256(variant.read_bytes()).hexdigest()}.json"
    with monkeypatch.context() as patched:
        if where == "bytes":
            patched.setattr(results, "write_synced", _disk_full)
        else:
            patched.setattr(os, "link", _disk_full)
        for _ in range(2):  # a retry on the full disk adds nothing either
            assert cli.main(["submit", str(variant), "--results-dir", str(store)]) == 1
            assert capsys.readouterr().err.strip() == \
                f"goodbench: error: cannot store {dest}: No space left on device; nothing was stored"
    assert _tree(store) == before
    assert cli.main(["submit", str(variant), "--results-dir", str(store)]) == 0
    assert [name for name, _ in ledger.lines(store)] == [next(iter(before.keys() - {ledger.NAME})), dest.name]
