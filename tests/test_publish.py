"""The leaderboard's publishing script (suite/site/publish.py) on a scratch repository: a good pull
request is accepted, forged ones are refused with the store's reasons, and the comment renders
nothing a results file holds as Markdown."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from suite.record import results
from suite.site import publish
from suite.store import ledger as ledger_module
from suite.store.commitment_bounds import MAX_PER_PULL_REQUEST
from suite.store.files import submit, submit_noted
from suite.trust import commitment, signing
from tests.forging import CORPUS_VALID, REPO

BASE_FILE = next(p for p in CORPUS_VALID if p.name == "gpt2-smoke-2-ranks.json")
GOOD_FILE = next(p for p in CORPUS_VALID if p.name == "lm-char-smoke.json")
LATER_FILE = next(p for p in CORPUS_VALID if p.name == "lm-char-killed-resumed.json")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                         env={**os.environ, **GIT_ENV})
    return out.stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def add_by_hand(repo: Path, raw: bytes, ledger: bool = True) -> str:
    """Put ``raw`` in the store as submit would name it, without submit's checks; its path."""
    name = f"{hashlib.sha256(raw).hexdigest()}.json"
    (repo / "results" / name).write_bytes(raw)
    if ledger:
        with (repo / "results" / "ledger.jsonl").open("a") as fh:
            fh.write(json.dumps({"file": name, "stored_at": "2026-11-27T00:00:00Z"}) + "\n")
    return f"results/{name}"


@pytest.fixture
def scratch(tmp_path) -> tuple[Path, str]:
    """A repository whose main holds one stored results file; (its folder, main's commit)."""
    repo = tmp_path / "board"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("a leaderboard\n")
    submit(BASE_FILE, repo / "results")
    return repo, commit(repo, "the store")


def run(repo: Path, base: str, head: str, tmp_path: Path) -> tuple[int, str]:
    comment = tmp_path / "comment.md"
    status = publish.main(["pr", "--repo", str(repo), "--base", base, "--head", head, "--comment", str(comment)])
    return status, comment.read_text()


def test_a_pull_request_of_what_submit_stored_is_accepted_against_the_newest_main(scratch, tmp_path, capsys):
    repo, base = scratch
    git(repo, "checkout", "-q", "-b", "good")
    stored = submit(GOOD_FILE, repo / "results")
    head = commit(repo, "a result")
    git(repo, "checkout", "-q", "main")  # main moves on while the pull request waits
    submit(LATER_FILE, repo / "results")
    newer = commit(repo, "another result")
    status, text = run(repo, newer, head, tmp_path)
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert f"ACCEPTED  results/{stored.name}" in printed and "ACCEPTED  results/ledger.jsonl" in printed
    assert f"against the store at {newer[:12]} (2 results files)" in printed
    assert text.startswith("### goodbench results check\n\n**Accepted**")
    assert git(repo, "rev-parse", "HEAD") == newer and not git(repo, "status", "--porcelain")  # nothing checked out


def test_forged_pull_requests_are_refused_with_the_stores_reasons(scratch, tmp_path, capsys):
    repo, base = scratch
    stored = next((repo / "results").glob("*.json"))
    git(repo, "checkout", "-q", "-b", "forged")
    doc = json.loads(GOOD_FILE.read_text())
    doc["runs"][0]["metrics"]["throughput"]["samples_per_s"] *= 2  # a figure its records contradict
    tampered = add_by_hand(repo, json.dumps(doc).encode())
    copy = add_by_hand(repo, json.dumps(json.loads(stored.read_bytes()), indent=1).encode())  # the stored runs again
    misnamed = "results/" + "0" * 64 + ".json"
    (repo / misnamed).write_bytes(GOOD_FILE.read_bytes())
    unlisted = add_by_hand(repo, GOOD_FILE.read_bytes(), ledger=False)
    empty = add_by_hand(repo, b"")  # a problem of the whole file: no field to name
    stored.write_bytes(stored.read_bytes().replace(b'"runs"', b' "runs"', 1))  # a stored file edited
    (repo / "README.md").write_text("changed\n")
    head = commit(repo, "forged results")
    status, text = run(repo, base, head, tmp_path)
    printed = capsys.readouterr().out
    assert status == 1
    verdicts = {v.path: v for v in publish.review(repo, base, head).verdicts}
    assert not any(v.accepted for p, v in verdicts.items() if p != "results/ledger.jsonl")
    assert any("refused: " in line and "throughput" in line for line in verdicts[tampered].lines), verdicts[tampered]
    assert any("duplicate-run" in line for line in verdicts[copy].lines), verdicts[copy]
    assert verdicts[empty].lines[0].startswith("refused: ") and "(file)" not in verdicts[empty].lines[0], \
        verdicts[empty]  # no placeholder where there is no field
    assert "sha256" in verdicts[misnamed].lines[0] or "not listed" in verdicts[misnamed].lines[0]
    assert "not listed in results/ledger.jsonl" in verdicts[unlisted].lines[0]
    assert "changes a stored results file" in verdicts[f"results/{stored.name}"].lines[0]
    assert "outside results/" in verdicts["README.md"].lines[0]
    assert "**Refused**" in text and "REFUSED  README.md" in printed


def test_a_ledger_rewritten_or_naming_another_file_is_refused(scratch, tmp_path):
    repo, base = scratch
    git(repo, "checkout", "-q", "-b", "reorder")
    ledger = repo / "results" / "ledger.jsonl"
    ledger.write_text(ledger.read_text().replace("Z", "Z ", 1))
    head = commit(repo, "the ledger rewritten")
    verdicts = {v.path: v for v in publish.review(repo, base, head).verdicts}
    assert "only ever gains lines" in verdicts["results/ledger.jsonl"].lines[0]
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "claims")
    with ledger.open("a") as fh:
        fh.write(json.dumps({"file": "f" * 64 + ".json", "stored_at": "2026-11-27T00:00:00Z"}) + "\n")
    head = commit(repo, "a line for a file it does not add")
    assert not publish.review(repo, base, head).accepted


def _restamp_last_line(repo: Path, stamp: object) -> None:
    """The ledger's last line with its ``stored_at`` set to ``stamp`` (removed when ``...``)."""
    path = repo / "results" / "ledger.jsonl"
    *kept, last = path.read_text().splitlines()
    entry = json.loads(last)
    entry.pop("stored_at")
    if stamp is not ...:
        entry["stored_at"] = stamp
    path.write_text("\n".join([*kept, json.dumps(entry)]) + "\n")


def test_a_stored_line_stamped_after_the_checks_clock_or_unstamped_is_refused(scratch, signer):
    """Trial VI, F2: a results pull request whose ledger line said ``stored_at`` 2099-01-01 was
    accepted, and since a commitment may not be older than the ledger's last line, every later
    commitment was refused until 2099 (so were lines with no stamp, or a number). A stored line's
    stamp is one ``submit`` writes, not after the check's clock by over 60 s; a future stamp merged
    before this check is no floor for later commitments."""
    repo, base = scratch
    future = ledger_module.stamp_of(dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5))
    for n, (stamp, why) in enumerate([("2099-01-01T00:00:00Z", "after this check's clock"),
                                      (future, "after this check's clock"),
                                      (..., "holds no stamp"), (4102444800, "holds no stamp"),
                                      ("2026-12-02 18:00:00", "holds no stamp")]):
        git(repo, "checkout", "-q", "-b", f"stamped-{n}", base)
        stored = submit(GOOD_FILE, repo / "results")
        _restamp_last_line(repo, stamp)
        verdicts = {v.path: v for v in publish.review(repo, base, commit(repo, f"stamped {stamp}")).verdicts}
        assert not verdicts["results/ledger.jsonl"].accepted, stamp
        assert why in verdicts["results/ledger.jsonl"].lines[0] and stored.name in verdicts["results/ledger.jsonl"].lines[0]
        assert verdicts[f"results/{stored.name}"].lines[0].startswith("not judged")
    # the same line stamped now, or a little in the past, is accepted
    git(repo, "checkout", "-q", "-b", "stamped-now", base)
    submit(GOOD_FILE, repo / "results")
    _restamp_last_line(repo, ledger_module.stamp_of(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)))
    assert publish.review(repo, base, commit(repo, "stamped now")).accepted
    # a 2099 line already on main (merged before the bound) does not refuse a commitment made now
    git(repo, "checkout", "-q", "-b", "main-2099", base)
    submit(LATER_FILE, repo / "results")
    _restamp_last_line(repo, "2099-01-01T00:00:00Z")
    base2 = commit(repo, "a line of 2099 merged")
    git(repo, "checkout", "-q", "-b", "commit-after-2099")
    submit_noted(signer[2], repo / "results", commit=True, key=signer[0])
    review = publish.review(repo, base2, commit(repo, "a commitment made now"))
    assert review.accepted, publish.report(review)


def test_a_submit_killed_before_its_file_then_made_again_is_accepted(scratch, tmp_path, monkeypatch):
    """Trial VI, F3: a submit killed between its ledger line and its file leaves the line; made
    again, it lists the file a second time, and the check refused the pull request ("names it
    twice") though the store counts such a file where it is last listed. Accepted now, counted at
    its last line; a line whose file the pull request never adds is refused with how to mend it."""
    repo, base = scratch
    git(repo, "checkout", "-q", "-b", "killed-then-again")

    def killed(*_args, **_kwargs):
        raise KeyboardInterrupt  # stands for the kill: after the line, before the link

    with monkeypatch.context() as patch:
        patch.setattr("suite.store.files.os.link", killed)
        with pytest.raises(KeyboardInterrupt):
            submit(GOOD_FILE, repo / "results")
    name = f"{hashlib.sha256(GOOD_FILE.read_bytes()).hexdigest()}.json"
    assert [n for n, _ in ledger_module.lines(repo / "results")][-1] == name
    assert not (repo / "results" / name).exists()
    stored = submit(GOOD_FILE, repo / "results")  # made again
    assert [n for n, _ in ledger_module.lines(repo / "results")][-2:] == [name, name] == [stored.name] * 2
    review = publish.review(repo, base, commit(repo, "a result, its submit made twice"))
    assert review.accepted, publish.report(review)
    assert "1 a file listed again" in publish.report(review)
    # killed and never made again: the line names a file the pull request does not add
    git(repo, "checkout", "-q", "-b", "killed-only", base)
    with monkeypatch.context() as patch:
        patch.setattr("suite.store.files.os.link", killed)
        with pytest.raises(KeyboardInterrupt):
            submit(GOOD_FILE, repo / "results")
    verdicts = {v.path: v for v in publish.review(repo, base, commit(repo, "a killed submit's line")).verdicts}
    assert not verdicts["results/ledger.jsonl"].accepted
    assert "killed before it stored the file" in verdicts["results/ledger.jsonl"].lines[0]


@pytest.fixture
def signer(tmp_path):
    """A signing key, its fingerprint, and the corpus's two smoke files signed by it."""
    path, fp = signing.keygen(tmp_path / "key")
    key = signing.load_key(path.parent)
    files = []
    for source in (GOOD_FILE, LATER_FILE):
        files.append(tmp_path / f"signed-{source.name}")
        results.write(files[-1], signing.seal(json.loads(source.read_text()), key))
    return key, fp, files[0], files[1]


def commitments(repo: Path, key, count: int, when: dt.datetime | None = None) -> list[str]:
    """``count`` commitments signed by ``key`` to files nobody has (random sha256s), stamped
    ``when`` (default now), appended to the repository's ledger; their names."""
    names = [f"{os.urandom(32).hex()}.json" for _ in range(count)]
    for name in names:
        ledger_module.record(repo / "results", name, when, ledger_module.COMMITTED,
                             signed=lambda n, s: commitment.sign(n, s, key))
    return names


def test_a_commitment_is_published_alone_before_its_file(scratch, signer, tmp_path, capsys):
    """goodbench submit --commit's ledger line, in a pull request of its own, is accepted; the
    file follows in a second one. A commitment to a file the same pull request shows is refused."""
    repo, base = scratch
    key, _, good, later = signer  # the signed versions of the module's files
    git(repo, "checkout", "-q", "-b", "promise")
    promised = submit_noted(good, repo / "results", commit=True, key=key).path
    head = commit(repo, "a commitment")
    review = publish.review(repo, base, head)
    assert review.accepted, publish.report(review)
    assert review.verdicts[0].lines == ["commits to 1 file(s) not shown yet, each by the sha256 of its bytes"]
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "promise")
    git(repo, "checkout", "-q", "-b", "reveal")
    submit(good, repo / "results")
    reveal = commit(repo, "the result")
    assert publish.review(repo, head, reveal).accepted
    assert (repo / "results" / promised.name).exists()
    # committed to and shown at once: a copier could commit to it too
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "both")
    submit_noted(later, repo / "results", commit=True, key=key)
    submit(later, repo / "results")
    verdicts = {v.path: v for v in publish.review(repo, head, commit(repo, "both at once")).verdicts}
    assert not verdicts["results/ledger.jsonl"].accepted
    assert "in a pull request of its own" in verdicts["results/ledger.jsonl"].lines[0]
    shown = next(v for p, v in verdicts.items() if p != "results/ledger.jsonl")  # the file: not "not listed"
    assert shown.lines == ["not judged: the change to results/ledger.jsonl that lists it was refused "
                           "(its verdict says why)"]
    # a commitment to a file the store holds already (stored before the ledger listed it) would
    # move it behind later files: refused
    git(repo, "checkout", "-q", "main")
    unlisted = add_by_hand(repo, json.dumps(json.loads(later.read_text()), indent=2).encode(), ledger=False)
    base2 = commit(repo, "a file stored before the ledger listed it")
    git(repo, "checkout", "-q", "-b", "late-promise")
    with (repo / "results" / "ledger.jsonl").open("a") as fh:
        fh.write(json.dumps({"file": Path(unlisted).name, "committed_at": "2026-11-27T00:00:00Z"}) + "\n")
    verdicts = {v.path: v for v in publish.review(repo, base2, commit(repo, "a late commitment")).verdicts}
    assert not verdicts["results/ledger.jsonl"].accepted
    assert "the store holds or lists already" in verdicts["results/ledger.jsonl"].lines[0]


def test_a_commitment_stamped_outside_its_pull_requests_time_is_refused(scratch, signer):
    """Finding 9: a commitment stamped 2001-01-01 was accepted. Its stamp, which its key signs,
    lies between what the pull request was made on (the commit it branched from, the ledger's last
    line) and the check's clock, 60 s either way."""
    repo, base = scratch
    key = signer[0]
    made = dt.datetime.fromtimestamp(int(git(repo, "log", "-1", "--format=%ct", base)), dt.UTC)
    for n, (when, accepted, why) in enumerate([
        (dt.datetime(2001, 1, 1, tzinfo=dt.UTC), False, "before the commit it branched from"),
        (made - dt.timedelta(seconds=120), False, "before the commit it branched from"),
        (made - dt.timedelta(seconds=30), True, ""),
        (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1), False, "after this check's clock"),
        (None, True, ""),
    ]):
        git(repo, "checkout", "-q", "-b", f"stamp-{n}", base)
        commitments(repo, key, 1, when)
        review = publish.review(repo, base, commit(repo, f"a commitment stamped {when}"))
        assert review.accepted is accepted, publish.report(review)
        assert why in review.verdicts[0].lines[0]
    # nor before the ledger's last line, nor before the pull request's own earlier commitment
    git(repo, "checkout", "-q", "-b", "later-line", base)
    now = dt.datetime.now(dt.UTC)
    ledger_module.record(repo / "results", "e" * 64 + ".json", now - dt.timedelta(hours=1))  # main's last line
    git(repo, "add", "-A")  # committed (the commit it branches from) two hours ago: the line is later
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "a line stamped an hour on"], check=True,
                   env={**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": (now - dt.timedelta(hours=2)).isoformat()})
    base2 = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "before-last-line")
    commitments(repo, key, 1, now - dt.timedelta(minutes=90))
    [verdict] = publish.review(repo, base2, commit(repo, "stamped before it")).verdicts
    assert not verdict.accepted and "before the ledger's last line" in verdict.lines[0]
    git(repo, "checkout", "-q", "-b", "going-back", base)
    commitments(repo, key, 1, dt.datetime.now(dt.UTC) + dt.timedelta(seconds=50))
    commitments(repo, key, 1, made - dt.timedelta(seconds=30))
    [verdict] = publish.review(repo, base, commit(repo, "two, the second earlier")).verdicts
    assert not verdict.accepted and "before the commitment before it" in verdict.lines[0]


def test_commitments_beyond_the_caps_are_refused(scratch, signer, tmp_path):
    """Finding 9: 20,001 random hashes in one pull request were accepted (7 s of checking). A pull
    request adds at most 10 commitments, refused before any signature is checked; a key holds at
    most 20 waiting for their files, those in the store included; another key is counted apart."""
    repo, base = scratch
    key = signer[0]
    git(repo, "checkout", "-q", "-b", "flood")
    with (repo / "results" / "ledger.jsonl").open("a") as fh:
        for _ in range(20_001):
            fh.write(json.dumps({"file": f"{os.urandom(32).hex()}.json",
                                 "committed_at": "2001-01-01T00:00:00Z"}) + "\n")
    head = commit(repo, "twenty thousand commitments")
    started = time.monotonic()
    [verdict] = publish.review(repo, base, head).verdicts
    assert not verdict.accepted and "adds 20001 commitments; a pull request adds at most 10" in verdict.lines[0]
    assert time.monotonic() - started < 30
    for count, accepted in ((MAX_PER_PULL_REQUEST + 1, False), (MAX_PER_PULL_REQUEST, True)):
        git(repo, "checkout", "-q", "-b", f"signed-{count}", base)
        commitments(repo, key, count)
        [verdict] = publish.review(repo, base, commit(repo, f"{count} commitments")).verdicts
        assert verdict.accepted is accepted, verdict.lines
    # main holds 15 of the key's commitments waiting for their files
    git(repo, "checkout", "-q", "main")
    commitments(repo, key, 15)
    base2 = commit(repo, "fifteen commitments merged")
    git(repo, "checkout", "-q", "-b", "six-more")
    commitments(repo, key, 6)
    [verdict] = publish.review(repo, base2, commit(repo, "six more")).verdicts
    assert not verdict.accepted and f"{signer[1]} would have 21 commitments waiting" in verdict.lines[0]
    other, _ = signing.load_key(signing.keygen(tmp_path / "other")[0].parent), None
    git(repo, "checkout", "-q", "-b", "another-key", base2)
    commitments(repo, other, 6)
    assert publish.review(repo, base2, commit(repo, "six of another key")).accepted
    git(repo, "checkout", "-q", "-b", "five-more", base2)
    commitments(repo, key, 5)
    assert publish.review(repo, base2, commit(repo, "five more")).accepted


def test_an_unsigned_or_forged_commitment_is_refused(scratch, signer, tmp_path):
    """A commitment line without its key and signature (rules v7's form), or whose signature is
    another key's, or whose stamp was changed after signing, is refused."""
    repo, base = scratch
    key = signer[0]
    other = signing.load_key(signing.keygen(tmp_path / "other")[0].parent)
    name, stamp = "d" * 64 + ".json", ledger_module.stamp_of()
    signed = {"file": name, "committed_at": stamp, **commitment.sign(name, stamp, key)}
    for n, (entry, why) in enumerate([
        ({"file": name, "committed_at": stamp}, "is not signed"),
        ({**signed, "signature": commitment.sign(name, stamp, other)["signature"]}, "does not verify"),
        ({**signed, "committed_at": ledger_module.stamp_of(dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5))},
         "does not verify"),
    ]):
        git(repo, "checkout", "-q", "-b", f"forged-{n}", base)
        with (repo / "results" / "ledger.jsonl").open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
        [verdict] = publish.review(repo, base, commit(repo, "a forged commitment")).verdicts
        assert not verdict.accepted and why in verdict.lines[0], verdict.lines


def test_the_comment_renders_no_markdown_from_a_results_file(scratch, tmp_path):
    repo, base = scratch
    git(repo, "checkout", "-q", "-b", "hostile")
    hostile = "results/@maintainers ```<img src=x onerror=alert(1)>\n[x](e.org).json"
    (repo / hostile).write_text("{}")
    head = commit(repo, "a hostile name")
    status, text = run(repo, base, head, tmp_path)
    assert status == 1
    block = text.split("```text\n", 1)[1].rsplit("```", 1)
    assert len(text.split("```")) == 3, "one code block, never closed early"
    assert "\n[x]" not in block[0] and "@maintainers '''<img" in block[0]


def test_the_workflow_runs_the_script_on_the_base_code_only():
    """The workflow (pull_request_target: it may comment) never checks out or runs the pull
    request's code: it fetches the pull request's commit as data for ``suite.site.publish pr``."""
    text = (REPO / ".github" / "workflows" / "leaderboard.yml").read_text()
    assert "pull_request_target" in text and "python -m suite.site.publish pr" in text
    assert "python -m suite.site.publish site" in text and "actions/deploy-pages" in text
    checkouts = text.count("actions/checkout@")
    assert checkouts == 2 and "ref: ${{ github.event.pull_request.head" not in text


def test_an_accepted_file_says_which_of_its_entries_will_not_be_ranked(scratch, tmp_path, capsys):
    """The verdict says what `goodbench submit` says: smoke scale, under load, no known peak."""
    repo, base = scratch
    git(repo, "checkout", "-q", "-b", "smoke")
    stored = submit(GOOD_FILE, repo / "results")
    status, text = run(repo, base, commit(repo, "a smoke result"), tmp_path)
    printed = capsys.readouterr().out
    block = printed.split(f"ACCEPTED  results/{stored.name}\n", 1)[1].split("ACCEPTED  results/ledger.jsonl")[0]
    assert status == 0 and "    not ranked: lm-char (smoke): smoke scale" in block, printed
    assert "    not ranked: lm-char (smoke): smoke scale" in text


def test_base_code_runs_the_check_with_the_bases_own_code(scratch, tmp_path, capfd):
    """`--base-code` runs `pr` from a temporary worktree of --base (here a stand-in publish that
    says where it runs and with what), on the same commits; the worktree is gone after."""
    repo, _ = scratch
    (repo / "suite" / "site").mkdir(parents=True)
    (repo / "suite" / "__init__.py").write_text("")
    (repo / "suite" / "site" / "__init__.py").write_text("")
    (repo / "suite" / "site" / "publish.py").write_text(
        "import os, sys\nprint('base code', os.getcwd(), ' '.join(sys.argv[1:]))\nsys.exit(3)\n")
    base = commit(repo, "the base's code")
    git(repo, "checkout", "-q", "-b", "pr")
    submit(GOOD_FILE, repo / "results")
    head = commit(repo, "a result")
    status = publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--base-code"])
    out, err = capfd.readouterr()
    assert status == 3, out + err
    line = next(x for x in out.splitlines() if x.startswith("base code "))
    where, argv = line.removeprefix("base code ").split(" ", 1)
    assert Path(where).name == "base" and where.startswith(tempfile.gettempdir())
    assert argv == f"pr --repo {repo.resolve()} --base {base} --head {head}"
    assert f"judging with the code of {base[:12]}" in err
    assert not Path(where).exists() and len(git(repo, "worktree", "list").splitlines()) == 1


def _stand_in_base(repo: Path, body: str) -> str:
    """Commit a stand-in ``suite/site/publish.py`` on main (``body``: its code); main's commit."""
    (repo / "suite" / "site").mkdir(parents=True, exist_ok=True)
    (repo / "suite" / "__init__.py").write_text("")
    (repo / "suite" / "site" / "__init__.py").write_text("")
    (repo / "suite" / "site" / "publish.py").write_text(body)
    return commit(repo, "the base's code")


def _no_worktree_left(repo: Path, err: str = "") -> bool:
    """Only the main worktree is registered, and the worktree ``err`` says it made is gone."""
    made = [line.rsplit(" at ", 1)[1].rstrip(")") for line in err.splitlines() if line.startswith("judging with")]
    registered = list((repo / ".git" / "worktrees").glob("*")) if (repo / ".git" / "worktrees").exists() else []
    return len(git(repo, "worktree", "list").splitlines()) == 1 and not registered \
        and not any(Path(p).exists() for p in made)


def test_base_code_refuses_a_base_that_no_trusted_ref_holds(scratch, capfd):
    """--base-code runs --base's code: a pull request's commit there (``--base pr``, FETCH_HEAD) is
    refused in one line before any worktree is made, unless --trusted-ref names it."""
    repo, _ = scratch
    _stand_in_base(repo, "import sys\nprint('base code ran')\nsys.exit(3)\n")
    (repo / "README.md").write_text("main moves on\n")
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "suite" / "site" / "publish.py").write_text("print('the pull request ran')\n")
    head = commit(repo, "a pull request's own code")
    status = publish.main(["pr", "--repo", str(repo), "--base", "pr", "--head", "pr", "--base-code"])
    out, err = capfd.readouterr()
    assert status == 2 and "ran" not in out, out
    assert err == (f"publish: --base-code runs --base's code: pr ({head[:12]}) is not refs/heads/main nor an ancestor "
                   "of it (a pull request's code is never run)\n")
    assert _no_worktree_left(repo)
    status = publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "pr", "--base-code",
                           "--trusted-ref", "nothing-here"])
    assert status == 2 and "nothing-here" in capfd.readouterr().err
    # an ancestor of main is trusted; a ref named by --trusted-ref replaces the defaults
    assert publish.main(["pr", "--repo", str(repo), "--base", "main~1", "--head", "pr", "--base-code"]) == 3
    assert "base code ran" in capfd.readouterr().out
    assert publish.main(["pr", "--repo", str(repo), "--base", "pr", "--head", "pr", "--base-code",
                         "--trusted-ref", "pr"]) == 0
    assert "the pull request ran" in capfd.readouterr().out


def test_a_tag_named_like_a_trusted_branch_does_not_stand_in_for_it(scratch, capfd):
    """A tag ``main`` (or ``origin/main``) on a pull request's commit, fetched from a fork, resolves
    before the branch of that short name: the default trusted refs are full names, so the pull
    request's commit is still refused; a --trusted-ref that a tag and a branch answer to with
    different commits is refused; a full ref is taken as named."""
    repo, _ = scratch
    _stand_in_base(repo, "print('base code ran')\n")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "suite" / "site" / "publish.py").write_text("print('the pull request ran')\n")
    head = commit(repo, "a pull request's own code")
    git(repo, "tag", "main")
    git(repo, "tag", "origin/main")
    git(repo, "checkout", "-q", "main")
    status = publish.main(["pr", "--repo", str(repo), "--base", head, "--head", "pr", "--base-code"])
    out, err = capfd.readouterr()
    assert status == 2 and "ran" not in out, out
    assert "is not refs/heads/main nor an ancestor" in err, err
    status = publish.main(["pr", "--repo", str(repo), "--base", head, "--head", "pr", "--base-code",
                           "--trusted-ref", "main"])
    out, err = capfd.readouterr()
    assert status == 2 and "ran" not in out, out
    assert "--trusted-ref main is ambiguous: refs/tags/main, refs/heads/main" in err, err
    status = publish.main(["pr", "--repo", str(repo), "--base", head, "--head", "pr", "--base-code",
                           "--trusted-ref", "refs/heads/main"])
    assert status == 2 and "ran" not in capfd.readouterr().out
    assert publish.main(["pr", "--repo", str(repo), "--base", "refs/heads/main", "--head", "pr", "--base-code",
                         "--trusted-ref", "refs/heads/main"]) == 0
    assert "base code ran" in capfd.readouterr().out
    assert _no_worktree_left(repo)


def test_base_code_runs_the_base_without_tokens_or_keys(scratch, monkeypatch, capfd):
    """The base's code starts with what Python needs (PATH, HOME, PYTHON*: PYTHONPATH the worktree)
    and none of the maintainer's credentials."""
    repo, _ = scratch
    _stand_in_base(repo, "import os\nprint('env', ' '.join(sorted(os.environ)))\n"
                         "print('pythonpath', os.environ['PYTHONPATH'])\n")
    for name in ("GITHUB_TOKEN", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "GPG_KEY", "PYTHON_API_TOKEN", "NPM_TOKEN"):
        monkeypatch.setenv(name, "secret")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    assert publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "main", "--base-code"]) == 0
    out = capfd.readouterr().out
    names = set(next(x for x in out.splitlines() if x.startswith("env ")).split()[1:])
    assert {"PATH", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "LC_ALL"} <= names
    assert not names & {"GITHUB_TOKEN", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "GPG_KEY", "PYTHON_API_TOKEN",
                        "NPM_TOKEN"}, names
    assert next(x for x in out.splitlines() if x.startswith("pythonpath ")).endswith("/base")
    assert publish.child_environment(Path("/t"), Path("/e"), {"HOME": "/h", "MY_PASSWORD": "x",
                                                              "PYTHONPATH": "/else"}) == {
        "HOME": "/e", "PYTHONPATH": "/t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def test_base_code_runs_with_an_empty_home_and_no_global_git_config(scratch, monkeypatch, tmp_path, capfd):
    """The user's HOME (~/.git-credentials, ~/.ssh, ~/.config/gh) is out of the child's reach: its
    HOME is an empty temporary folder, removed after, and git reads no global or system config."""
    repo, _ = scratch
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".git-credentials").write_text("https://user:secret@example.com\n")
    (home / ".gitconfig").write_text("[credential]\n\thelper = store\n")
    monkeypatch.setenv("HOME", str(home))
    _stand_in_base(repo, "import os, subprocess\nh = os.path.expanduser('~')\n"
                         "print('home', h, sorted(os.listdir(h)))\n"
                         "print('helper', subprocess.run(['git', 'config', 'credential.helper'], "
                         "capture_output=True, text=True).stdout.strip() or 'none')\n")
    assert publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "main", "--base-code"]) == 0
    out = capfd.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("home "))
    assert line.endswith(" []") and str(home) not in line, line
    assert not Path(line.split()[1]).exists()  # removed after
    assert "helper none" in out, out


def test_base_code_removes_its_worktree_on_sigterm_and_says_so(scratch, capfd):
    """A SIGTERM while the base's code runs stops the check as Ctrl-C would: the child is ended,
    the worktree removed (on disk and in .git/worktrees), exit 143 with one line; and the previous
    SIGTERM handler is back."""
    import signal

    repo, _ = scratch
    _stand_in_base(repo, "import os, signal, time\nos.kill(os.getppid(), signal.SIGTERM)\ntime.sleep(60)\n")
    before = signal.getsignal(signal.SIGTERM)
    started = time.monotonic()
    status = publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "main", "--base-code"])
    err = capfd.readouterr().err
    assert status == 143 and time.monotonic() - started < 30
    assert "publish: stopped by SIGTERM" in err and "judging with" in err
    assert signal.getsignal(signal.SIGTERM) is before
    assert _no_worktree_left(repo, err)


def test_base_code_leaves_no_partial_comment_when_stopped_while_writing_it(scratch, tmp_path, capfd):
    """A SIGTERM to publish ends its child with SIGKILL: a comment the child was writing (to
    ``<comment>.partial``, renamed when whole) is removed, never left half-written."""
    repo, _ = scratch
    _stand_in_base(repo, "import os, signal, sys, time\n"
                         "path = sys.argv[sys.argv.index('--comment') + 1]\n"
                         "open(path + '.partial', 'w').write('### goodbench results check\\n\\n**Acc')\n"
                         "os.kill(os.getppid(), signal.SIGTERM)\ntime.sleep(60)\n")
    comment = tmp_path / "comment.md"
    status = publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "main", "--base-code",
                           "--comment", str(comment)])
    assert status == 143, capfd.readouterr().err
    assert not comment.exists() and not Path(f"{comment}.partial").exists()
    publish.write_comment(comment, "whole\n")
    assert comment.read_text() == "whole\n" and not Path(f"{comment}.partial").exists()


def test_base_code_child_killed_by_a_signal_exits_128_plus_n(scratch, capfd):
    repo, base = scratch
    base = _stand_in_base(repo, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert publish.main(["pr", "--repo", str(repo), "--base", "main", "--head", "main", "--base-code"]) == 137
    err = capfd.readouterr().err
    assert f"publish: the check run with {base[:12]}'s code was ended by SIGKILL (exit 137)" in err
    assert _no_worktree_left(repo, err)


@pytest.mark.parametrize("fail", ["interrupt in add", "remove fails"])
def test_the_detached_worktree_is_removed_in_every_path(scratch, monkeypatch, fail):
    """Ctrl-C during ``git worktree add`` (the worktree made in part), or a ``worktree remove``
    that fails: the folder is deleted and ``git worktree prune`` drops its registration."""
    repo, _ = scratch
    g = publish.Git(repo)
    real = publish.Git._run

    def run(self, *args):
        if args[:2] == ("worktree", "add"):
            out = real(self, *args)
            if fail == "interrupt in add":
                raise KeyboardInterrupt
            return out
        if args[:2] == ("worktree", "remove"):
            raise publish.GoodbenchError("git worktree remove: failed")
        return real(self, *args)

    monkeypatch.setattr(publish.Git, "_run", run)
    made = []
    with pytest.raises(KeyboardInterrupt), g.detached_worktree("main") as tree:
        made.append(tree)
        assert (tree / "results").is_dir()
        raise KeyboardInterrupt
    assert made == [] if fail == "interrupt in add" else not made[0].exists()
    assert _no_worktree_left(repo)


OWN_ORIGINAL = Path(__file__).parent / "fixtures" / "own-stored-losses.json"
OWN_RERUN = Path(__file__).parent / "fixtures" / "own-stored-losses-rerun.json"


@pytest.mark.parametrize("trusted", [False, True])
def test_a_reproduction_says_what_it_reproduces_and_whether_the_bases_reviewers_count_its_signer(
        tmp_path, capsys, trusted):
    """Walkthrough 5, L14: the check ACCEPTed a reproduction without a word of what it reproduced or
    that main's reviewers.toml did not list its signer: the site then showed it as an unverified claim."""
    repo = tmp_path / "board"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    original = submit(OWN_ORIGINAL, repo / "results")
    fp = signing.signer(json.loads(OWN_RERUN.read_text()))
    listed = fp if trusted else "SHA256:" + "B" * 43
    (repo / "results" / "reviewers.toml").write_text(f'[[reviewer]]\nname = "Audit team"\nfingerprint = "{listed}"\n')
    base = commit(repo, "the store and its reviewers")
    git(repo, "checkout", "-q", "-b", "rerun")
    submit(OWN_RERUN, repo / "results")
    head = commit(repo, "a reproduction")
    status, _ = run(repo, base, head, tmp_path)
    out = capsys.readouterr().out
    assert status == 0
    [accepted] = [line for line in out.splitlines() if line.startswith("ACCEPTED  results/")
                  and "ledger" not in line]
    assert accepted.endswith("(a reproduction by a trusted reviewer (Audit team): counted)" if trusted
                             else "(a reproduction by an untrusted key: an unverified claim, not counted)")
    assert f"    a reproduction of results/{original.name} (held by the base's store)" in out
    entry = json.loads(OWN_RERUN.read_text())["settings"]["reproduces"]["runs"][0]
    assert f"    run {entry['run_id']} reproduces run {entry['original_run_id']}: {entry['verdict']}" in out
    said = (f"signed by {fp}, a trusted reviewer's key in the base's results/reviewers.toml (Audit team)" if trusted
            else f"signed by {fp}, a key not in the base's results/reviewers.toml: the site lists it as an "
                 "unverified claim")
    assert said in out


def test_a_file_that_reproduces_nothing_gets_no_reproduction_words(tmp_path):
    doc = results.load(GOOD_FILE)
    assert publish.reproduction_said(doc, publish.Reviewers(), tmp_path, []) == (None, [])
