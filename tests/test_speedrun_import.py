"""``goodbench import speedrun``: the log formats of the NanoGPT speedrun's history, the README's
record tables, a record's runs and statistics, hostile trees, and byte-identical re-import. The
fixture trees are built here from a few real lines of each format."""
from __future__ import annotations

import json
import math
import os
import random
import statistics
from pathlib import Path

import pytest

from suite.cli import main
from suite.speedrun import importer, logs, readme, records, stats, tree

SOURCE = b"import os\nprint0(f'step:{step}/{n} val_loss:{v:.4f}')\n"
NVIDIA = b"""Running Python 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]
Running PyTorch 2.10.0+cu128 compiled for CUDA 12.8
Running Triton version 3.6.0
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:8D:00.0 Off |                    0 |
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:91:00.0 Off |                    0 |
"""


def nanogpt_log(final_loss: float, final_ms: int, gpus: int = 8, name: str = "NVIDIA H100 80GB HBM3",
                steps: int = 20, last: int | None = None, unit: str = "ms", mid: float = 3.9, more: int = 0) -> bytes:
    """A modded-nanogpt log: source, separator, versions, nvidia-smi rows, step lines (``more``
    validations after step 10's, a second apart)."""
    rows = b"".join(f"|   {i}  {name}          On  |   00000000:8D:00.0 Off |                    0 |\n".encode()
                    for i in range(gpus))
    head = NVIDIA.split(b"|===")[0] + rows
    last = steps if last is None else last

    def t(ms: int) -> str:
        return f"{ms}ms" if unit == "ms" else f"{ms / 1000:.3f}s"
    body = f"step:0/{steps} val_loss:10.8311 train_time:{t(0)} step_avg:0.03ms\n"
    body += f"step:1/{steps} train_time:{t(94)} step_avg:94.04ms\n"
    body += f"step:10/{steps} val_loss:{mid} train_time:{t(final_ms // 2)} step_avg:57.0ms\n"
    body += "".join(f"step:{10 + k}/{steps} val_loss:3.{80 - k} train_time:{t(final_ms // 2 + 1000 * k)} "
                    f"step_avg:57.0ms\n" for k in range(1, more + 1))
    body += f"step:{last}/{steps} train_time:{t(final_ms - 80)} step_avg:{(final_ms - 80) / last:.2f}ms\n"
    body += f"step:{last}/{steps} val_loss:{final_loss} train_time:{t(final_ms)} step_avg:{final_ms / last:.2f}ms\n"
    body += "peak memory allocated: 30220 MiB reserved: 38672 MiB\n"
    return SOURCE + logs.SEPARATOR + b"\n" + head + logs.SEPARATOR + b"\n" + body.encode()


LLMC = b"s:0 tel:10.968871\ns:0 trl:10.965596\ns:1 trl:10.814037\ns:9535 trl:3.340180\ns:9536 tel:3.275959\n"

README = """## World record history

| # | Record time | Description | Date | Log | Contributors |
| - | - | - | - | - | - |
1 | 45 minutes | [llm.c baseline](https://github.com/karpathy/llm.c/discussions/481) | 05/28/24 | [log](records/track_1_short/2024-10-13_llmc/main.log) | @karpathy, llm.c contributors
2 | 24.9 minutes | [Introduced the Muon optimizer](https://x.com/k/status/1) | 10/04/24 | none | @kellerjordan0, @jxbz
3 | 1.23 minutes | MLP down projection in FP8 | 07/17/26 | [log](records/track_1_short/2026-07-17_FP8/this_pr/a.txt),[PR](https://github.com/KellerJordan/modded-nanogpt/pull/342)  | @a, @b,
4 | 1.2 minutes | Gone | 07/18/26 | [log](records/track_1_short/renamed/x.txt) | @c
5 | 1.1 minutes | Outside | 07/19/26 | [log](records/track_1_short/../../../etc/passwd) | @d

## Speedrun track 2: GPT-2 Medium

| # | Record time | Description | Date | Log | Contributors |
| - | - | - | - | - | - |
1 | 5.8 hours | [llm.c baseline (350M parameters)](https://github.com/karpathy/llm.c/discussions/481) | 05/28/24 | [log](records/track_2_medium/2025-01-18/h200.txt) | @karpathy
2 | 23.45 minutes | Upgrade torch | - | - | -
"""


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "modded-nanogpt"
    t1 = root / "records" / "track_1_short"
    (t1 / "2024-10-13_llmc").mkdir(parents=True)
    (t1 / "2024-10-13_llmc" / "main.log").write_bytes(LLMC)
    pr, base = t1 / "2026-07-17_FP8" / "this_pr", t1 / "2026-07-17_FP8" / "baseline"
    pr.mkdir(parents=True)
    base.mkdir()
    for name, loss, ms in (("a.txt", 3.277, 79000), ("b.txt", 3.278, 79500), ("c.txt", 3.279, 80000)):
        (pr / name).write_bytes(nanogpt_log(loss, ms))
    (pr / "statistics.md").write_text("# not a log\n")
    for name, ms, mid in (("d.txt", 81000, 3.91), ("e.txt", 81500, 3.92)):  # not copies of a run: other losses
        (base / name).write_bytes(nanogpt_log(3.278, ms, mid=mid))
    t2 = root / "records" / "track_2_medium" / "2025-01-18"
    t2.mkdir(parents=True)
    (t2 / "h200.txt").write_bytes(nanogpt_log(2.91, 1500000, gpus=1, name="NVIDIA H200", unit="s"))
    (root / "README.md").write_text(README)
    return root


def test_current_log_format_gives_every_figure():
    run = logs.parse_log(nanogpt_log(3.2775, 79532))
    assert run["format"] == "modded-nanogpt"
    assert (run["planned_step"], run["final_step"], run["reached_planned_step"]) == (20, 20, True)
    assert run["validations"] == [[0, 10.8311, 0.0], [10, 3.9, 39.766], [20, 3.2775, 79.532]]
    assert (run["train_time_s"], run["step_avg_ms"], run["val_loss"]) == (79.532, 3976.6, 3.2775)
    assert (run["gpu"], run["gpus"]) == ("NVIDIA H100 80GB HBM3", 8)
    assert (run["torch"], run["cuda"], run["triton"], run["python"]) == ("2.10.0+cu128", "12.8", "3.6.0", "3.12.3")
    assert run["peak_memory_mib"] == 30220
    import hashlib
    assert run["source_sha256"] == hashlib.sha256(SOURCE).hexdigest()


def test_train_time_in_seconds_and_a_run_stopped_early():
    run = logs.parse_log(nanogpt_log(3.30, 79532, unit="s", last=15))
    assert run["train_time_s"] == 79.532 and run["validations"][-1] == [15, 3.30, 79.532]
    assert (run["final_step"], run["planned_step"], run["reached_planned_step"]) == (15, 20, False)


def test_a_source_line_that_looks_like_a_step_is_not_one():
    run = logs.parse_log(SOURCE)
    assert run["format"] == "none" and run["validations"] == [] and "no training line" in run["notes"][0]


def test_llmc_log_has_losses_and_no_time():
    run = logs.parse_log(LLMC)
    assert run["format"] == "llm.c"
    assert run["validations"] == [[0, 10.968871, None], [9536, 3.275959, None]]
    assert run["final_step"] == 9536 and run["train_time_s"] is None and run["gpus"] is None
    assert "hold no time" in run["notes"][0]


def test_non_utf8_log_is_read_with_a_note():
    run = logs.parse_log(nanogpt_log(3.27, 1000).replace(b"import os", b"import \xff\xfe"))
    assert run["val_loss"] == 3.27 and "not UTF-8" in run["notes"][0]


def test_readme_rows_claims_dates_and_links():
    t1, t2 = readme.record_tables(README)
    assert [r["record"] for r in t1] == [1, 2, 3, 4, 5] and len(t2) == 2
    assert (t1[0]["claimed_s"], t1[2]["claimed_s"], t2[0]["claimed_s"]) == (2700.0, 73.8, 20880.0)
    assert t1[2]["date"] == "2026-07-17" and t2[1]["date"] is None
    assert t1[2]["pr"] == "https://github.com/KellerJordan/modded-nanogpt/pull/342"
    assert t1[2]["log_link"] == "records/track_1_short/2026-07-17_FP8/this_pr/a.txt"
    assert t1[1]["log_link"] is None and t1[0]["description"] == "llm.c baseline"
    assert t1[2]["contributors"] == "@a, @b"


def test_one_sided_t_test_against_the_closed_form():
    # df = 2: P(T < t) = 1/2 + t / (2 sqrt(2 + t^2)); here t = -sqrt(12)
    p = stats.p_below_target([3.277, 3.278, 3.279], 3.28)
    assert p == pytest.approx(0.5 - 12 ** 0.5 / (2 * 14 ** 0.5), rel=1e-6)
    assert stats.verdict([3.277, 3.278, 3.279], 3.28, p) == "not shown (p ≥ 0.01)"
    assert stats.p_below_target([3.27], 3.28) is None
    assert stats.verdict([3.29], 3.28, None) == "1 run, above the target: no test"


def test_the_t_tests_are_scipy_stats_bit_for_bit():
    """p_below_target and speedup take the t distribution from scipy.special (what scipy.stats.t
    computes with; scipy.stats's import is 2 s): the same figures, to the bit."""
    from scipy import stats as scipy_stats

    rng = random.Random(5)
    for _ in range(300):
        losses = [round(rng.gauss(3.28, rng.uniform(0.0005, 0.01)), rng.choice([3, 4, 6])) for _ in range(rng.randint(2, 40))]
        expected = scipy_stats.ttest_1samp(losses, 3.28, alternative="less").pvalue if len(set(losses)) > 1 else None
        assert stats.p_below_target(losses, 3.28) == expected
        baseline, record = ([rng.gauss(80, 1) for _ in range(rng.randint(2, 8))] for _ in range(2))
        gain, diff = stats.speedup(baseline, record), statistics.fmean(baseline) - statistics.fmean(record)
        vb, vr = (statistics.variance(x) / len(x) for x in (baseline, record))
        dof = (vb + vr) ** 2 / ((vb ** 2) / (len(baseline) - 1) + (vr ** 2) / (len(record) - 1))
        half = float(scipy_stats.t.ppf(0.975, dof)) * math.sqrt(vb + vr)
        assert gain["ci95_s"] == [round(diff - half, 3), round(diff + half, 3)]


def test_speedup_interval_holds_the_difference():
    gain = stats.speedup([81.0, 81.5], [79.0, 79.5, 80.0])
    assert gain["speedup_s"] == 1.75 and gain["ci95_s"][0] < 1.75 < gain["ci95_s"][1]
    assert stats.speedup([81.0], [79.0, 80.0]) is None


def test_records_from_a_checkout(checkout: Path):
    docs = importer.build_documents(checkout, jobs=1)
    t1 = {r["record"]: r for r in docs[1]["records"]}
    fp8 = t1[3]
    assert (fp8["runs"], fp8["measured_s"], fp8["mean_val_loss"]) == (3, 79.5, 3.278)
    assert fp8["measured_over_claimed"] == round(79.5 / 73.8, 4)
    assert fp8["p_value"] == pytest.approx(0.03709, abs=1e-4) and fp8["verdict"] == "not shown (p ≥ 0.01)"
    assert fp8["flags"] == ["measured 7.7% slower than claimed (beyond 2%)"]
    assert (fp8["accelerator"], fp8["accelerators"]) == ("NVIDIA H100 80GB HBM3", 8)
    (gain,) = fp8["baselines"]
    assert gain["folder"].endswith("2026-07-17_FP8/baseline") and gain["runs"] == 2 and gain["speedup_s"] == 1.75
    assert "no time in the log (llm.c format)" in t1[1]["flags"] and t1[1]["mean_val_loss"] == 3.27596
    assert t1[2]["flags"] == ["no log"]
    assert t1[4]["flags"] == ["broken link: records/track_1_short/renamed/x.txt is not in the repository"]
    assert t1[5]["flags"][0].startswith("link leaves the track's records folder")
    t2 = docs[2]["records"]
    assert t2[0]["measured_s"] == 1500.0 and t2[0]["flags"] == [
        "fewer GPUs than the track's 8: 1", "another GPU than the track's H100: NVIDIA H200",
        "measured 92.8% faster than claimed (beyond 2%)"]
    assert t2[1]["flags"] == ["no log"]
    runs = {r["log"]: r for r in docs[1]["runs"]}
    assert runs["records/track_1_short/2026-07-17_FP8/this_pr/a.txt"]["record"] == 3
    assert runs["records/track_1_short/2026-07-17_FP8/baseline/d.txt"]["baseline_of"] == 3


def test_hostile_tree_one_line_each_never_a_crash(checkout: Path, tmp_path: Path, monkeypatch):
    pr = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr"
    outside = tmp_path / "secret.txt"
    outside.write_bytes(nanogpt_log(1.0, 1))
    (pr / "link.txt").symlink_to(outside)
    (pr / "huge.txt").write_bytes(nanogpt_log(3.27, 1000) + b"x" * 4096)
    (checkout / "records" / "track_1_short" / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(pr / "fifo.log")
    monkeypatch.setattr(tree, "MAX_LOG_BYTES", 4096)
    lines: list[str] = []
    docs = importer.build_documents(checkout, jobs=1, on_problem=lines.append)
    assert len([x for x in lines if "link.txt" in x]) == 1 and "symbolic link" in lines[[
        i for i, x in enumerate(lines) if "link.txt" in x][0]]
    assert any("huge.txt" in x and "limit" in x for x in lines)
    assert any("dirlink" in x and "symbolic link" in x for x in lines)
    assert any("fifo.log" in x for x in lines)
    rec = {r["record"]: r for r in docs[1]["records"]}[3]
    assert rec["runs"] == 3 and "missing files: 3 in the linked folder not read" in rec["flags"]
    assert all("secret" not in json.dumps(d) for d in docs.values())


def test_reimport_is_byte_identical_and_the_command_prints_rows(checkout: Path, tmp_path: Path, capsys):
    out = tmp_path / "results"
    assert main(["import", "speedrun", str(checkout), "--results-dir", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in (out / "speedrun").iterdir()}
    assert sorted(first) == ["track_1.json", "track_2.json"]
    assert main(["import", "speedrun", str(checkout), "--results-dir", str(out)]) == 0
    assert {p.name: p.read_bytes() for p in (out / "speedrun").iterdir()} == first
    printed = capsys.readouterr().out
    assert "unchanged" in printed and "7 README rows, 7 logs" in printed
    assert json.loads(first["track_1.json"])["records"][2]["record"] == 3


def test_runs_folder_of_a_folder_link():
    assert records.runs_folder("records/t/x", {"records/t/x"}) == "records/t/x"
    assert records.runs_folder("records/t/x/a.txt", {"records/t/x"}) == "records/t/x"


SHIPPED = Path(__file__).resolve().parent.parent / "results"


def test_shipped_history_reads_back_with_record_89_as_its_logs_say():
    """The shipped documents (results/speedrun/, imported from modded-nanogpt at f411b3d) read
    back through the site's loader; record 89 of track 1 is what its 13 logs give."""
    from suite.speedrun import documents

    docs, bad = documents.load_all(SHIPPED)
    if not docs and not bad:
        pytest.skip("no imported documents under results/speedrun")
    assert bad == [] and [d["track"] for d in docs] == [1, 2]
    r89 = [r for r in docs[0]["records"] if r["record"] == 89][0]
    assert (r89["runs"], r89["measured_s"], r89["mean_val_loss"], r89["p_value"]) == (13, 79.685, 3.27837, 0.0006691)
    assert r89["verdict"] == "met (p < 0.01)" and r89["claimed_s"] == 73.8
    assert importer.dumps(docs[0]).encode() == (SHIPPED / "speedrun" / "track_1.json").read_bytes()


def test_documents_loader_refuses_links_and_other_formats(tmp_path: Path, checkout: Path):
    from suite.speedrun import documents

    importer.write_documents(importer.build_documents(checkout, jobs=1), tmp_path)
    folder = tmp_path / "speedrun"
    (folder / "track_9.json").symlink_to(folder / "track_1.json")
    (folder / "track_8.json").write_text('{"format": 99}')
    docs, bad = documents.load_all(tmp_path)
    assert [d["track"] for d in docs] == [1, 2]
    reasons = dict(bad)
    assert "symbolic link" in reasons["track_9.json"] and f"format {documents.FORMAT}" in reasons["track_8.json"]


@pytest.mark.skipif(not os.environ.get("GOODBENCH_SPEEDRUN_CHECKOUT"),
                    reason="no modded-nanogpt checkout: set GOODBENCH_SPEEDRUN_CHECKOUT to one at f411b3d")
def test_reimport_of_the_real_checkout_gives_the_shipped_bytes(tmp_path: Path):
    docs = importer.build_documents(Path(os.environ["GOODBENCH_SPEEDRUN_CHECKOUT"]))
    for (path, _), track in zip(importer.write_documents(docs, tmp_path), (1, 2)):
        assert path.read_bytes() == (SHIPPED / "speedrun" / f"track_{track}.json").read_bytes()


def _git(root: Path, *args: str) -> str:
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_the_commit_is_recorded_only_for_files_verified_against_a_git_checkout(checkout: Path):
    """Trial 14 (F15): a text .git/HEAD named f411b3d over a forged tree, and the pages said
    "imported from KellerJordan/modded-nanogpt at f411b3d". The commit is now recorded only where
    git's HEAD holds every file read with the same blob id; otherwise ``commit: null``."""
    sha = "f411b3d346aa52d3504324ca93c230fd84c6c07f"
    (checkout / ".git").mkdir()
    (checkout / ".git" / "HEAD").write_text(sha + "\n")  # a text file, no repository
    said: list[str] = []
    assert importer.build_documents(checkout, jobs=1, on_problem=said.append)[1]["commit"] is None
    assert any("not verified" in line for line in said)
    import shutil

    shutil.rmtree(checkout / ".git")
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "history")
    head = _git(checkout, "rev-parse", "HEAD")
    said.clear()
    docs = importer.build_documents(checkout, jobs=1, on_problem=said.append)
    assert (docs[1]["commit"], docs[1]["upstream"]) == (head, None)  # a local commit: not upstream's (review 14 #2)
    assert any("not known to be upstream's" in line for line in said)
    log = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr" / "a.txt"
    log.write_bytes(nanogpt_log(3.277, 60000))  # edited after the commit
    said.clear()
    assert importer.build_documents(checkout, jobs=1, on_problem=said.append)[1]["commit"] is None
    assert any("1 file(s) read are not those of commit" in line and "a.txt" in line for line in said)
    _git(checkout, "checkout", "-q", "--", ".")
    (checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr" / "forged.txt").write_bytes(
        nanogpt_log(3.277, 60000))  # a file the commit does not hold
    assert importer.build_documents(checkout, jobs=1)[1]["commit"] is None
    (checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr" / "forged.txt").unlink()
    log.unlink()  # a file of the commit the checkout lacks: named, the rest still verified
    docs = importer.build_documents(checkout, jobs=1)
    assert docs[1]["commit"] == head and any("a.txt: in commit" in line and "absent from the checkout" in line
                                             for line in docs[1]["problems"])


def test_a_claimed_time_with_a_thousands_separator_is_read_whole():
    """Review 14 (#10): "1,234.5 seconds" was read as 234.5 s (the tail after the comma)."""
    assert readme.claimed_seconds("1,234.5 seconds") == 1234.5
    assert readme.claimed_seconds("12,345 s") == 12345.0
    assert readme.claimed_seconds("1,2345 seconds") is None and readme.claimed_seconds("1,23 minutes") is None
    assert readme.claimed_seconds("3.28 minutes") == 196.8


def test_a_commit_is_upstreams_only_where_it_is_pinned_or_an_ancestor_of_a_pinned_one(checkout: Path, monkeypatch):
    """Review 14 (#2): a ``git init`` of forged logs gave a commit, and the page said "imported from
    KellerJordan/modded-nanogpt at X". A commit is upstream's now only where it is one of
    :data:`tree.PINNED` or, in the checkout, an ancestor of one (``git merge-base --is-ancestor``)."""
    assert "f411b3d346aa52d3504324ca93c230fd84c6c07f" in tree.PINNED
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "first")
    first = _git(checkout, "rev-parse", "HEAD")
    assert importer.build_documents(checkout, jobs=1)[1]["upstream"] is None
    monkeypatch.setattr(tree, "PINNED", (first,))
    doc = importer.build_documents(checkout, jobs=1)[1]
    assert (doc["commit"], doc["upstream"]) == (first, first)
    (checkout / "NOTES").write_text("later\n")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "second")
    second = _git(checkout, "rev-parse", "HEAD")
    assert importer.build_documents(checkout, jobs=1)[1]["upstream"] is None  # a descendant is not upstream's
    monkeypatch.setattr(tree, "PINNED", ("0" * 40, second))
    _git(checkout, "checkout", "-q", first)
    doc = importer.build_documents(checkout, jobs=1)[1]
    assert (doc["commit"], doc["upstream"]) == (first, second)  # an ancestor of a pinned commit


def _promisor_checkout(root: Path, marker: Path) -> None:
    """Review 14 (#1): a checkout made a partial clone whose promisor remote is a command, with
    a tree object deleted: a git that lists the commit fetches it, which runs the command."""
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "x")
    tree_id = _git(root, "rev-parse", "HEAD:records")
    (root / ".git" / "objects" / tree_id[:2] / tree_id[2:]).unlink()
    for key, value in (("extensions.partialClone", "origin"), ("remote.origin.promisor", "true"),
                       ("remote.origin.url", f"ext::sh -c touch% {marker}"), ("protocol.ext.allow", "always"),
                       ("core.repositoryformatversion", "1")):
        _git(root, "config", key, value)


def test_a_crafted_promisor_checkout_runs_nothing_through_either_importer(checkout: Path, tmp_path: Path):
    """Review 14 (#1, #7): the speedrun importer's git ran a command named in a crafted checkout's
    configuration. Both importers now ask git through :mod:`suite.record.gitcheck` only: no
    transport, no lazy fetch, and a partial clone refused before any object is read."""
    from suite.mlperf import published
    from suite.record import gitcheck

    marker = tmp_path / "pwned"
    _promisor_checkout(checkout, marker)
    said: list[str] = []
    doc = importer.build_documents(checkout, jobs=1, on_problem=said.append)[1]
    assert doc["commit"] is None and any("partial clone" in line for line in said)
    published.listing.cache_clear()
    commit = _git(checkout, "rev-parse", "HEAD")
    assert published.listing(checkout, commit) == gitcheck.PARTIAL_CLONE
    assert not gitcheck.is_ancestor(checkout / ".git", "0" * 40, commit)
    env = gitcheck.environment()  # and git itself, asked despite that, may not fetch
    assert (env["GIT_ALLOW_PROTOCOL"], env["GIT_NO_LAZY_FETCH"], env["GIT_CONFIG_GLOBAL"]) == ("none", "1", os.devnull)
    assert not any("safe.directory" in option for option in gitcheck.OPTIONS)
    import subprocess

    subprocess.run(["git", f"--git-dir={checkout / '.git'}", *gitcheck.OPTIONS, "ls-tree", "-r", commit],
                   env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert not marker.exists()


def test_a_forged_object_under_a_commits_tree_id_is_caught_by_either_importer(checkout: Path):
    """git does not check what its object store holds: a checkout with a forged tree object under
    a published commit's tree id made ``git ls-tree`` list forged blob ids, so forged logs "were"
    that commit's. Every commit and tree object read is now hashed against its id first."""
    import zlib

    from suite.mlperf import published
    from suite.record import gitcheck

    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "published")
    commit = _git(checkout, "rev-parse", "HEAD")
    honest = gitcheck.ls_tree(checkout / ".git", commit)
    folder = "records/track_1_short/2026-07-17_FP8/this_pr"
    log = checkout / folder / "a.txt"
    log.write_bytes(nanogpt_log(3.277, 40000))  # the forged log, and a tree listing it under the honest tree's id
    forged_blob = _git(checkout, "hash-object", "-w", str(log.relative_to(checkout)))
    tree_id = _git(checkout, "rev-parse", f"HEAD:{folder}")
    entries = sorted((p.name, gitcheck.blob_id(p.read_bytes()) if p.name != "a.txt" else forged_blob)
                     for p in (checkout / folder).iterdir())
    body = b"".join(b"100644 %s\0%s" % (name.encode(), bytes.fromhex(blob)) for name, blob in entries)
    loose = checkout / ".git" / "objects" / tree_id[:2] / tree_id[2:]
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"tree %d\0" % len(body) + body))
    assert _git(checkout, "ls-tree", "-r", "HEAD", "--", f"{folder}/a.txt").split()[2] == forged_blob  # git believes it
    said: list[str] = []
    assert importer.build_documents(checkout, jobs=1, on_problem=said.append)[1]["commit"] is None
    assert any("a forged object" in line for line in said)
    published.listing.cache_clear()
    assert published.listing(checkout, commit) == (f"git cannot list MLCommons' published commit {commit[:12]} in "
                                                   "the checkout")
    assert honest[f"{folder}/a.txt"] != forged_blob
    for malformed in (b"100644 a", b"100644 a\0" + bytes(5), b"abc"):  # a local commit's own tree may be anything
        with pytest.raises(gitcheck.GitRefused):
            gitcheck._tree_entries(malformed)


def test_tokens_per_step_from_the_two_plain_forms_and_not_otherwise():
    from suite.speedrun import throughput

    src_2024 = ("    batch_size : int = 8*64 # batch size, in sequences, across all devices\n"
                "    sequence_length : int = 1024 # sequence length, in tokens\n")
    assert throughput.tokens_per_step(src_2024, 8) == (524288, "batch_size 8*64 sequences × sequence_length 1024")
    src_2025 = "    seq_len = 48*1024 # FlexAttention sequence length\ntrain_batch_size = world_size * args.seq_len\n"
    assert throughput.tokens_per_step(src_2025, 8)[0] == 8 * 48 * 1024
    assert throughput.tokens_per_step("TRAINING_STAGES = [Stage(batch_size=...)]\n", 8) == (None, "not in the log")
    assert throughput.rates(524288, 5100, 910.546, 8) == (2936555.4, 367069.4)
    assert throughput.rates(None, 5100, 910.546, 8) == (None, None)


def test_a_log_that_opens_with_the_separator_has_its_source_between_the_first_two():
    import hashlib

    run = logs.parse_log(logs.SEPARATOR + b"\n" + nanogpt_log(3.27, 1000))
    assert run["source_sha256"] == hashlib.sha256(SOURCE).hexdigest() and run["torch"] == "2.10.0+cu128"


def test_a_checkout_without_a_readable_readme_is_one_error_line(tmp_path: Path, capsys):
    (tmp_path / "records").mkdir()
    assert main(["import", "speedrun", str(tmp_path), "--results-dir", str(tmp_path / "r")]) != 0
    assert "README.md" in capsys.readouterr().err
    (tmp_path / "README.md").symlink_to("/etc/hostname")
    assert main(["import", "speedrun", str(tmp_path), "--results-dir", str(tmp_path / "r")]) != 0
    assert "symbolic link" in capsys.readouterr().err
    assert not (tmp_path / "r" / "speedrun").exists()


def test_a_non_utf8_readme_still_gives_its_rows(checkout: Path):
    (checkout / "README.md").write_bytes(README.replace("MLP down", "MLP \xe9 down").encode("latin-1"))
    docs = importer.build_documents(checkout, jobs=1)
    assert len(docs[1]["records"]) == 5 and "\ufffd" in docs[1]["records"][2]["description"]
    assert docs[1]["problems"] == ["README.md: not UTF-8: read with replacement characters"]


GPT2_2024 = """class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        self.c_q = CastedLinear(self.n_embd, self.n_embd, bias=False)
        self.c_k = CastedLinear(self.n_embd, self.n_embd, bias=False)
        self.c_v = CastedLinear(self.n_embd, self.n_embd, bias=False)
        # output projection
        self.c_proj = CastedLinear(self.n_embd, self.n_embd, bias=False)
    def forward(self, x):
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
class MLP(nn.Module):
    def __init__(self, config):
        self.c_fc    = CastedLinear(config.n_embd, 4 * config.n_embd, bias=False)
        self.c_proj  = CastedLinear(4 * config.n_embd, config.n_embd, bias=False)
    sequence_length : int = 1024 # sequence length, in tokens
num_vocab = 50304
model = GPT(GPTConfig(vocab_size=num_vocab, n_layer=12, n_head=6, n_embd=768))
"""


def test_flops_per_token_are_counted_from_2024s_model_shape_and_from_no_other():
    """6·(12·L·d² + d·V) + 12·L·d·T for the plain GPT-2 block with dense causal attention over the
    sequence (records 4–11 of track 1); a FlexAttention window, another block or an unread shape:
    not in the log."""
    from suite.speedrun import flops

    counted, how = flops.per_token(GPT2_2024)
    assert counted == 6 * (12 * 12 * 768 ** 2 + 768 * 50304) + 12 * 12 * 768 * 1024 == 854_654_976
    assert "L=12, d=768, V=50304, T=1024" in how and "estimate" in how
    fused = GPT2_2024.replace("self.c_q = CastedLinear(self.n_embd, self.n_embd, bias=False)",
                              "self.c_attn = nn.Linear(self.n_embd, 3 * self.n_embd, bias=False)")
    assert flops.per_token(fused.replace("num_vocab, n_layer", "50257, n_layer"))[0] == 854_438_400
    for other in (GPT2_2024 + "from torch.nn.attention.flex_attention import flex_attention\n",
                  GPT2_2024.replace("4 * config.n_embd", "3 * config.n_embd"),
                  GPT2_2024.replace("num_vocab = 50304", ""),
                  GPT2_2024.replace("is_causal=True", "block_mask=mask"),
                  "model = GPT(vocab_size=50304, num_layers=12, model_dim=768)\n", ""):
        assert flops.per_token(other) == (None, "not in the log")


def test_mfu_is_an_estimate_over_the_dense_bf16_peak_of_the_logs_gpu():
    from suite.speedrun import flops

    share, peak = flops.estimate(854_654_976.0, 463003.1, "NVIDIA H100 80GB HBM3")
    assert share == round(854_654_976.0 * 463003.1 / 989.4e12, 4) == 0.3999
    assert peak == "H100 SXM5 dense bf16 989.4 TFLOP/s"
    assert flops.estimate(None, 463003.1, "NVIDIA H100 80GB HBM3") == (None, None)
    assert flops.estimate(854_654_976.0, None, "NVIDIA H100 80GB HBM3") == (None, "no tokens/s in the log")
    assert flops.estimate(854_654_976.0, 463003.1, None) == (None, "no peak known for an unnamed GPU")


def test_a_log_of_2024s_form_gets_its_mfu_and_its_record_the_mean():
    src = GPT2_2024 + "    batch_size : int = 8*64 # batch size, in sequences, across all devices\n"
    data = src.encode() + nanogpt_log(3.27, 10_000)[len(SOURCE):]
    run = logs.parse_log(data)
    assert run["tokens_per_step"] == 524288 and run["flops_per_token"] == 854_654_976.0
    tokens_per_gpu = round(524288 * 20 / 10.0 / 8, 1)
    assert run["mfu_estimate"] == round(854_654_976.0 * tokens_per_gpu / 989.4e12, 4)
    assert run["mfu_peak"] == "H100 SXM5 dense bf16 989.4 TFLOP/s"
    plain = logs.parse_log(nanogpt_log(3.27, 10_000))
    assert (plain["flops_per_token"], plain["flops_per_token_from"], plain["mfu_estimate"]) == (None, "not in the log", None)


def test_the_optimization_track_is_named_as_not_imported_and_changes_no_document(checkout: Path):
    before = importer.build_documents(checkout, jobs=1)
    (checkout / "records" / "track_3_optimization" / "results").mkdir(parents=True)
    (checkout / "records" / "track_3_optimization" / "results" / "a.txt").write_bytes(nanogpt_log(3.27, 1000))
    said: list[str] = []
    after = importer.build_documents(checkout, jobs=1, on_problem=said.append)
    assert [line for line in said if "track_3" in line] == [
        "records/track_3_optimization: the optimization track is not imported: its README ranks runs by steps to "
        "3.28 at a fixed architecture, batch size and data with no time limit, a claim in steps that neither "
        "speed track's table, chart nor downloads hold"]
    assert [importer.dumps(d) for d in after.values()] == [importer.dumps(d) for d in before.values()]


def _bytewise(data: bytes | str) -> float:
    """A linear baseline: one regex step per byte of ``data``, timed on this thread's CPU clock
    (the best of three)."""
    import re
    import time

    pattern = re.compile(rb"[\s\S]" if isinstance(data, bytes) else r"[\s\S]")
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        sum(1 for _ in pattern.finditer(data))  # type: ignore[arg-type]
        best = min(best, time.thread_time() - started)
    return best


@pytest.mark.slow  # 1 MiB hostile inputs, each beside a byte-by-byte pass: 8 s (the fast loop stays under 3 minutes)
def test_hostile_logs_and_readme_cells_cost_linear_time():
    """Trial 14 (F16): ``^\\s*`` under MULTILINE, an unbounded ``.*``/``\\S+?`` between repeatable
    parts and the README's link pattern made a 64 KiB log cost 3–15 s and a 64 KiB README cell
    47–215 s (quadratic: a 1 MiB log about half an hour). Each hostile 1 MiB input now costs at
    most a few times a one-step-per-byte pass over the same bytes, timed in this test."""
    import time

    n = 2 ** 20
    model = GPT2_2024.encode().replace(b"y = F.scaled_dot_product_attention", b"y = F.x")
    tail = logs.SEPARATOR + b"\nstep:1/1 val_loss:3 train_time:5ms step_avg:5ms\n"
    hostile = {
        "blank lines after the batch text": b"# batch size, in sequences, across all\n" + b"\n" * n + tail,
        "sdpa( repeated on one line": model + b"scaled_dot_product_attention(" * (n // 29) + b"\n" + tail,
        "a val_loss line without a time": b"x\n" + tail + b"step:1/1 val_loss:" + b"a" * n + b"\n",
        "step_avg: repeated": b"x\n" + logs.SEPARATOR + b"\nstep:1/1 train_time:5ms " + b"step_avg:" * (n // 9) + b"\n",
        "newlines only": b"\n" * n,
    }
    head = "| # | Record time | Description | Date | Log | Contributors |\n| - | - | - | - | - | - |\n"
    cells = {"[ without ]": head + "1 | 1 seconds | " + "[" * n + " | 01/01/25 | x | y\n",
             "digits without a unit": head + "1 | " + "1" * n + " | d | 01/01/25 | x | y\n",
             "a link's text without its end": head + "1 | 1 s | d | 01/01/25 | " + "[log](" * (n // 6) + " | y\n"}
    for name, data in [*hostile.items(), *cells.items()]:
        baseline = _bytewise(data)
        started = time.thread_time()  # CPU time: a busy machine's waits for a core are not the parser's
        logs.parse_log(data) if isinstance(data, bytes) else readme.record_tables(data)
        spent = time.thread_time() - started
        assert spent < 10 * baseline, f"{name}: {spent:.3f} s against {baseline:.3f} s for one step per byte"


@pytest.mark.parametrize("line", [
    b"step:1000/1000 val_loss:3.27 train_time:1.2.3ms step_avg:100ms",
    b"step:1000/1000 val_loss:3.27 train_time:.ms step_avg:100ms",
    b"step:1000/1000 val_loss:3.27 train_time:" + b"9" * 400 + b"ms step_avg:100ms",
    b"step:" + b"9" * 5000 + b"/1000 val_loss:3.27 train_time:50000ms step_avg:50ms",
    b"step:99999999999999999999999/99999999999999999999999 val_loss:3.27 train_time:50000ms step_avg:100ms"])
def test_a_number_that_is_not_one_is_one_line_for_its_log_and_the_import_goes_on(checkout: Path, tmp_path: Path,
                                                                                  line: bytes):
    """Trial 14 (F2–F4): a malformed, non-finite or huge number in one log raised a traceback and
    imported nothing, or wrote ``Infinity`` (the site then dropped the track), or a step above
    2^63 that crashed the site. The log is now one line, not read; the rest is imported and the
    documents written are those the site reads back."""
    from suite.speedrun import documents

    bad = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr" / "bad.txt"
    bad.write_bytes(nanogpt_log(3.27, 1000).rsplit(b"step:", 1)[0] + line + b"\n")
    said: list[str] = []
    docs = importer.build_documents(checkout, jobs=1, on_problem=said.append)
    assert [x for x in said if "bad.txt" in x] == [x for x in said if "bad.txt" in x and "not read" in x] != []
    assert {r["record"]: r for r in docs[1]["records"]}[3]["runs"] == 3
    importer.write_documents(docs, tmp_path)
    loaded, refused = documents.load_all(tmp_path)
    assert refused == [] and [d["track"] for d in loaded] == [1, 2]


def test_a_batch_product_beyond_any_run_is_not_read_and_no_crash():
    src = "    batch_size : int = " + "*".join(["999999999"] * 8) + " # batch size, in sequences, across all devices\n" \
          "    sequence_length : int = 1024 # sequence length, in tokens\n"
    from suite.speedrun import throughput

    assert throughput.tokens_per_step(src, 8) == (None, "not in the log")
    run = logs.parse_log(src.encode() + nanogpt_log(3.27, 1000)[len(SOURCE):])
    assert run["tokens_per_s"] is None and run["train_time_s"] == 1.0


def test_the_importer_never_writes_a_document_its_reader_refuses(checkout: Path, tmp_path: Path):
    docs = importer.build_documents(checkout, jobs=1)
    docs[1]["runs"][0]["train_time_s"] = float("inf")
    with pytest.raises(ValueError):
        importer.write_documents(docs, tmp_path)
    docs = importer.build_documents(checkout, jobs=1)
    docs[1]["records"][0]["record"] = "../../x"
    with pytest.raises(ValueError, match="would not be read back"):
        importer.write_documents(docs, tmp_path)
    assert not (tmp_path / "speedrun").exists()


@pytest.mark.parametrize("link", ["records", "records/track_1_short"])
def test_a_linked_records_or_track_folder_is_refused_and_nothing_written(checkout: Path, tmp_path: Path,
                                                                          link: str, capsys):
    """Trial 14 (F5): a symbolic link at records/ or records/track_1_short was followed (a file
    outside the checkout was published). It is not followed: the import refuses, nothing written."""
    outside = tmp_path / "outside"
    (checkout / link).rename(outside)
    (checkout / link).symlink_to(outside, target_is_directory=True)
    results = tmp_path / "results"
    assert main(["import", "speedrun", str(checkout), "--results-dir", str(results)]) != 0
    err = capsys.readouterr().err
    assert "symbolic link: not followed" in err and "nothing imported" in err and len(err.strip().splitlines()) == 1
    assert not results.exists()
    with pytest.raises(tree.Unreadable, match="symbolic link"):
        tree.read_log(checkout, "records/track_1_short/2026-07-17_FP8/this_pr/a.txt")


@pytest.mark.parametrize("broken", ["no tables", "no track 2 folder"])
def test_a_folder_that_is_no_checkout_is_refused_and_nothing_written(checkout: Path, tmp_path: Path, broken: str,
                                                                      capsys):
    """Trial 14 (F10): a folder without the README's record tables overwrote the shipped tracks
    with empty documents, exit 0. Without the tables or a track's folder: exit 1, nothing written."""
    import shutil

    results = tmp_path / "results"
    assert main(["import", "speedrun", str(checkout), "--results-dir", str(results)]) == 0
    before = {p.name: p.read_bytes() for p in (results / "speedrun").iterdir()}
    if broken == "no tables":
        (checkout / "README.md").write_text("# nothing\n")
    else:
        shutil.rmtree(checkout / "records" / "track_2_medium")
    capsys.readouterr()
    assert main(["import", "speedrun", str(checkout), "--results-dir", str(results)]) != 0
    assert "nothing imported" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (results / "speedrun").iterdir()} == before


def test_cells_split_on_every_pipe_but_an_escaped_one_as_github_does():
    """Trial 14 (F14): cells were split on " | " only; record 45 of the real README
    (``…init| 11/18/25 | [log](…)``) read as "no log". Any ``|`` splits now, with or without spaces.
    Review 14 (#9): a pipe inside a link, or after an unclosed ``[``, splits too, as GitHub's table
    parser splits a row before it reads any link: an honest row is never dropped for a bracket."""
    assert readme.cells("| # | Record time |") == ["#", "Record time"]
    assert readme.cells("45 | 2.248 minutes | init| 11/18/25 |[log](records/a.txt)|@c") == [
        "45", "2.248 minutes", "init", "11/18/25", "[log](records/a.txt)", "@c"]
    assert readme.cells(r"1 | a \| b | [x\|y](records/a.txt) | d") == ["1", "a | b", "[x|y](records/a.txt)", "d"]
    assert readme.cells("1 | a | [x|y](records/a.txt) | d") == ["1", "a", "[x", "y](records/a.txt)", "d"]
    assert readme.cells("| 5 | 3.28 minutes | foo [bar | 10/10/24 | [log](x) | me |") == [
        "5", "3.28 minutes", "foo [bar", "10/10/24", "[log](x)", "me"]
    unclosed = README.replace("| Gone |", "| Gone [see |")
    problems: list[str] = []
    t1, _ = readme.record_tables(unclosed, problems)
    assert [r["record"] for r in t1] == [1, 2, 3, 4, 5] and problems == []
    assert t1[3]["date"] == "2026-07-18" and t1[3]["log_link"] == "records/track_1_short/renamed/x.txt"
    text = README.replace("MLP down projection in FP8 | 07/17/26 |", "MLP down projection in FP8| 07/17/26|")
    problems: list[str] = []
    t1, _ = readme.record_tables(text + "", problems)
    assert t1[2]["date"] == "2026-07-17" and t1[2]["log_link"].endswith("this_pr/a.txt") and problems == []
    short = README.replace("4 | 1.2 minutes | Gone | 07/18/26 | [log](records/track_1_short/renamed/x.txt) | @c",
                           "4 | 1.2 minutes | Gone")
    t1, _ = readme.record_tables(short, problems)
    assert [r["record"] for r in t1] == [1, 2, 3, 5]
    assert problems == ["README.md: line 8 (record 4 of table 1): 3 cells where the header has 6: not read"]


def test_shipped_record_45_has_its_ten_logs():
    from suite.speedrun import documents

    docs, _ = documents.load_all(SHIPPED)
    if not docs:
        pytest.skip("no imported documents under results/speedrun")
    r45 = [r for r in docs[0]["records"] if r["record"] == 45][0]
    assert (r45["runs"], r45["date"], r45["flags"], r45["contributors"]) == (10, "2025-11-18", [], "@classiclarryd")
    assert r45["measured_s"] == 134.942 and r45["pr"].endswith("/pull/159")


def test_a_run_whose_figures_cannot_all_be_true_is_flagged():
    """Trial 14 (F6): train_time edited on the last line only, train_time:1ms with step_avg
    99999 ms, train_time:0ms, an MFU of 28,305%: none was flagged. Each is now, by the thresholds
    docs/speedrun.md states (measured on the history: its honest product gap is at most 0.0089%)."""
    from suite.speedrun import plausible

    honest = logs.parse_log(nanogpt_log(3.277, 79000))
    assert plausible.run_flags(honest) == []
    backwards = dict(honest, validations=[[0, 10.8, 0.0], [10, 3.9, 39.5], [20, 3.277, 30.0]], train_time_s=30.0)
    assert plausible.run_flags(backwards)[0].startswith("train_time goes backwards across its validations")
    product = dict(honest, train_time_s=0.001 * 79000 * 0.7)
    assert "final_step × step_avg" in plausible.run_flags(product)[0]
    assert "beyond 0.05%" in plausible.run_flags(product)[0]
    zero = dict(honest, train_time_s=0.0, validations=[[20, 3.277, 0.0]])
    assert plausible.run_flags(zero) == ["a train_time of 0 s for 20 steps (under 1 s)"]
    assert "above 100%" in plausible.run_flags(dict(honest, mfu_estimate=283.05))[0]
    assert plausible.run_flags(dict(honest, tokens_per_s_per_gpu=495692.8)) == []  # the history's fastest
    assert "would need more than the H100 SXM5's peak" in plausible.run_flags(dict(honest, tokens_per_s_per_gpu=2.5e6))[0]
    assert plausible.claim_flag(79.685, 73.8) == "measured 8.0% slower than claimed (beyond 2%)"
    assert plausible.claim_flag(75.0, 73.8) is None


def _forged(checkout: Path, folder: str, edit) -> None:
    """A new record 6 whose logs are record 3's, each edited by ``edit``; its README row."""
    source = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr"
    forged = checkout / "records" / "track_1_short" / folder
    forged.mkdir()
    for log in sorted(source.glob("*.txt")):
        (forged / log.name).write_bytes(edit(log.read_bytes()))
    text = (checkout / "README.md").read_text()
    row = f"6 | 0.93 minutes | Forged | 08/02/26 | [log](records/track_1_short/{folder}/a.txt) | @nobody\n"
    (checkout / "README.md").write_text(text.replace("\n\n## Speedrun track 2", "\n" + row + "\n## Speedrun track 2"))


def test_forged_logs_never_become_a_records_time(checkout: Path):
    """Trial 14 (F6): record 89's logs copied with the last line's train_time at 70% became the
    fastest, cheapest record, "met", no flag. Both signals now flag each run (a copy of another
    record's validation losses; train_time going backwards, and against steps × step_avg) and
    the record gets no measured time, no p: it says why."""
    import re

    def seventy(data: bytes) -> bytes:
        *head, last = data.rstrip(b"\n").split(b"\n")
        last = re.sub(rb"train_time:(\d+)ms", lambda m: b"train_time:%dms" % (int(m.group(1)) * 7 // 10), last)
        return b"\n".join([*head, last]) + b"\n"
    _forged(checkout, "2026-08-02_Forged", seventy)
    docs = importer.build_documents(checkout, jobs=1)
    rec = {r["record"]: r for r in docs[1]["records"]}[6]
    assert (rec["runs"], rec["measured_s"], rec["p_value"], rec["verdict"]) == (0, None, None, "no plausible run: no test")
    assert rec["flags"][0].startswith("3 of 3 run(s) flagged implausible, counted only where it makes no figure better")
    assert "record 3's run" in rec["flags"][0] and "a copy" in rec["flags"][0]
    assert {r["record"]: r for r in docs[1]["records"]}[3]["runs"] == 3  # the original keeps its runs


def test_a_near_zero_time_is_no_measured_time(checkout: Path):
    _forged(checkout, "2026-08-03_Zero", lambda data: data.replace(b"val_loss:3.2", b"val_loss:3.1")
            .replace(b"train_time:79", b"train_time:0").replace(b"train_time:80", b"train_time:0"))
    docs = importer.build_documents(checkout, jobs=1)
    rec = {r["record"]: r for r in docs[1]["records"]}[6]
    assert rec["measured_s"] is None and rec["runs"] == 3 and "implausible" in rec["flags"][0]
    assert rec["verdict"].startswith("undecided: p < 0.01, but 3 of 3 run(s) flagged implausible")  # its losses count, never "met"


def test_the_real_history_raises_only_the_flags_it_should():
    """The shipped history's plausibility flags, each explained in docs/speedrun.md: one copy
    (record 9's folder holds record 8's log, byte for byte), no run with a backwards, mismatched,
    near-zero time, steps under half the track's fastest or an MFU above 100%; measured more than
    2% off the claim: track 1's records 68-73, 80, 83, 84, 87, 88 (a 1-GPU log) and 89, track 2's 17."""
    from suite.site import speedrun_pages
    from suite.speedrun import documents

    docs, bad = documents.load_all(SHIPPED)
    if not docs:
        pytest.skip("no imported documents under results/speedrun")
    assert bad == []
    flagged = {(d["track"], log): f for d in docs for log, f in speedrun_pages.run_flags(d).items() if f}
    assert list(flagged) == [(1, "records/track_1_short/2024-11-06_ShortcutsTweaks/d6b50d71-f419-4d26-bb39-a60d55ae7a04.txt")]
    assert flagged[next(iter(flagged))] == [
        "its validation losses are those of record 8's run "
        "records/track_1_short/2024-11-03_UntieEmbed/d6b50d71-f419-4d26-bb39-a60d55ae7a04.txt: a copy"]
    off = {(d["track"], r["record"]) for d in docs for r in d["records"] if any("than claimed" in f for f in r["flags"])}
    assert off == {(1, 68), (1, 69), (1, 70), (1, 71), (1, 72), (1, 73), (1, 80), (1, 83), (1, 84), (1, 87), (1, 88),
                   (1, 89), (2, 17)}
    left = {(d["track"], r["record"]) for d in docs for r in d["records"] if any("implausible" in f for f in r["flags"])}
    assert left == {(1, 9)}


def test_a_baselines_runs_on_another_gpu_count_are_left_out_of_the_speedup(checkout: Path):
    """Record 88 of the real history links 1-GPU runs, beside an 8-GPU baseline folder: the pair
    gave a "speed-up" of −516 s with an interval ±0.5 s wide. A baseline's runs count on as many
    GPUs as the record's only; ``other_gpus`` says how many were left out."""
    base = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "baseline"
    for name, ms in (("d.txt", 600000), ("e.txt", 601000)):
        (base / name).write_bytes(nanogpt_log(3.278, ms, gpus=1, mid=3.9 + ms / 1e7))
    (gain,) = {r["record"]: r for r in importer.build_documents(checkout, jobs=1)[1]["records"]}[3]["baselines"]
    assert (gain["runs"], gain["other_gpus"]) == (2, 2) and "speedup_s" not in gain
    (base / "d.txt").write_bytes(nanogpt_log(3.278, 81000, mid=3.91))
    (base / "f.txt").write_bytes(nanogpt_log(3.278, 81200, mid=3.93))
    (gain,) = {r["record"]: r for r in importer.build_documents(checkout, jobs=1)[1]["records"]}[3]["baselines"]
    assert (gain["runs"], gain["other_gpus"], gain["baseline_runs"]) == (3, 1, 2)
    assert gain["baseline_mean_s"] == 81.1


def test_each_run_is_judged_plausible_once_and_the_speedup_keeps_its_times(checkout: Path, monkeypatch):
    """A record's times beside its baselines are the ones its figures counted: each run's flags
    are derived once per import, not again for the speed-up."""
    from collections import Counter

    from suite.speedrun import plausible

    calls: Counter = Counter()
    real = plausible.all_flags

    def counting(run: dict, copied: dict[str, str]) -> list[str]:
        calls[run["log"]] += 1
        return real(run, copied)

    monkeypatch.setattr(plausible, "all_flags", counting)
    docs = importer.build_documents(checkout, jobs=1)
    fp8 = {r["record"]: r for r in docs[1]["records"]}[3]
    assert len(fp8["run_logs"]) == 3 and set(calls.values()) == {1}
    (gain,) = fp8["baselines"]
    assert gain["runs"] == 2 and gain["speedup_s"] == 1.75


def test_a_checkouts_configuration_is_read_once_until_it_changes(checkout: Path, tmp_path: Path, monkeypatch):
    """git's configuration of a checkout is read once per state of its files (partial clone or
    not), however many git commands follow; an edit is read again, and refused where it makes a
    partial clone; a configuration that includes another file is read every time."""
    from suite.record import gitcheck

    reads: list[str] = []
    real = gitcheck._run

    def counting(gitdir: Path, *args: str, given: bytes | None = None):
        if args[:1] == ("config",):
            reads.append(str(gitdir))
        return real(gitdir, *args, given=given)

    monkeypatch.setattr(gitcheck, "_run", counting)
    monkeypatch.setattr(gitcheck, "RACY_S", 0.0)  # files written just now are cached too (tests/test_gitcheck_cache.py)
    gitcheck.forget()
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "x")
    gitdir = checkout / ".git"
    commit = gitcheck.head(gitdir)
    assert gitcheck.ls_tree(gitdir, commit) and gitcheck.is_ancestor(gitdir, commit, commit)
    gitcheck.objects(gitdir, [commit], "commit")
    assert len(reads) == 1
    gitcheck.forget()
    gitcheck.head(gitdir)
    assert len(reads) == 2
    _git(checkout, "config", "remote.origin.promisor", "true")  # no forget(): the file changed
    for _ in range(2):
        with pytest.raises(gitcheck.GitRefused, match="partial clone"):
            gitcheck.head(gitdir)
    assert len(reads) == 3
    _git(checkout, "config", "--unset", "remote.origin.promisor")
    included = tmp_path / "included.cfg"
    included.write_text("[core]\n\tbare = false\n")
    _git(checkout, "config", "include.path", str(included))
    gitcheck.head(gitdir)
    gitcheck.head(gitdir)
    assert len(reads) == 5
    included.write_text("[remote \"origin\"]\n\tpromisor = true\n")  # the checkout's own files unchanged
    with pytest.raises(gitcheck.GitRefused, match="partial clone"):
        gitcheck.head(gitdir)


def _site_page(docs: dict[int, dict], tmp_path: Path, page: str) -> str:
    from suite.site import speedrun_pages

    importer.write_documents(docs, tmp_path / "results")
    speedrun_pages.write(tmp_path / "site", tmp_path / "results", {"built_at": "2026-11-28T00:00:00Z", "n_results": 0,
                                                                  "n_runs": 0})
    return (tmp_path / "site" / "speedrun" / page).read_text()


def test_f1_a_baseline_not_read_flags_its_record_as_its_own_runs_would(checkout: Path, tmp_path: Path):
    """Finding F1: record 82's baseline-s1410 deleted from a checkout of an upstream ancestor took
    its speed-up of −1.086 s away, the record still "met" and unflagged: the "missing files" flag
    read only the runs folder, and a baseline beside it is not in it. A baseline whose logs are
    absent or not read flags its record now, naming it, and its page says so."""
    from suite.speedrun import documents

    pr = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr"
    for name, loss in (("a.txt", 3.270), ("b.txt", 3.271), ("c.txt", 3.272)):
        (pr / name).write_bytes(nanogpt_log(loss, 79000 + int(1000 * (loss - 3.27))))
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "history")
    honest = {r["record"]: r for r in importer.build_documents(checkout, jobs=1)[1]["records"]}[3]
    assert honest["verdict"] == "met (p < 0.01)" and honest["baselines"][0]["runs"] == 2
    baseline = "records/track_1_short/2026-07-17_FP8/baseline"
    for log in (checkout / baseline).iterdir():
        log.unlink()
    docs = importer.build_documents(checkout, jobs=1)
    rec = {r["record"]: r for r in docs[1]["records"]}[3]
    assert docs[1]["commit"] == _git(checkout, "rev-parse", "HEAD") and rec["baselines"] == []
    flag = f"missing files: 2 of baseline {baseline} not read"
    assert flag in rec["flags"] and rec["verdict"] == f"undecided: p < 0.01, but {flag}"
    stored = json.loads(importer.dumps(docs[1]))
    assert documents.check(stored, "track_1.json") is None
    stored["records"][2]["flags"].remove(flag)
    stored["records"][2]["verdict"] = "met (p < 0.01)"
    assert documents.check(stored, "track_1.json") == (
        f"record 3's flags leave out its problems' \"{flag}\": import the checkout again")
    page = _site_page(docs, tmp_path, "track-1/3.html")
    assert flag in page and "undecided" in page
    # the same for a baseline log among the runs (baseline*) that is not read: a link, not followed
    (pr / "baseline_1.txt").symlink_to(pr / "a.txt")
    rec = {r["record"]: r for r in importer.build_documents(checkout, jobs=1)[1]["records"]}[3]
    assert f"missing files: 1 of baseline {baseline[:-len('baseline')]}this_pr/baseline* not read" in rec["flags"]


def test_f5_control_bidi_and_invisible_characters_never_reach_a_document_or_a_page(checkout: Path, tmp_path: Path):
    """Finding F5: a README description holding U+202E passed the document check and was shown raw,
    "Faster attention (verified by goodbench)" in a browser. README cells, log texts and problem
    lines hold such a character as \\uXXXX (as an MLPerf import does), a file named with one is
    not read, and a stored document holding one raw is refused, as results files are."""
    from suite.speedrun import documents

    text = (checkout / "README.md").read_text()
    (checkout / "README.md").write_text(text.replace("MLP down projection in FP8",
                                                     "Faster attention \u202e)hcnebdoog yb deifirev(\u200b")
                                        .replace("@a, @b,", "@a\u2066, @b\x1b[31m,"))
    pr = checkout / "records" / "track_1_short" / "2026-07-17_FP8" / "this_pr"
    (pr / "d\u202etxt.txt").write_bytes(nanogpt_log(3.2, 1000))
    (pr / "c.txt").write_bytes(nanogpt_log(3.279, 80000, name="NVIDIA H100\x1b[2J 80GB HBM3"))
    lines: list[str] = []
    docs = importer.build_documents(checkout, jobs=1, on_problem=lines.append)
    rec = {r["record"]: r for r in docs[1]["records"]}[3]
    assert rec["description"] == "Faster attention \\u202e)hcnebdoog yb deifirev(\\u200b"
    assert rec["contributors"] == "@a\\u2066, @b\\u001b[31m"
    assert rec["runs"] == 3 and "missing files: 1 in the linked folder not read" in rec["flags"]
    assert any("this_pr/d\\u202etxt.txt: a control, bidi or invisible character in its name" in x for x in lines)
    gpus = {r["gpu"] for r in docs[1]["runs"] if r["log"].endswith("this_pr/c.txt")}
    assert gpus == {"NVIDIA H100\\u001b[2J 80GB HBM3"}
    for doc in docs.values():
        assert not any(not c.isprintable() and c not in "\n" for c in importer.dumps(doc))
    page = _site_page(docs, tmp_path, "track-1/3.html")
    track = (tmp_path / "site" / "speedrun" / "track-1.html").read_text()
    assert "\u202e" not in page + track and "\\u202e)hcnebdoog" in page and "\\u202e)hcnebdoog" in track
    stored = json.loads(importer.dumps(docs[1]))
    stored["records"][2]["description"] = "Faster attention \u202e)hcnebdoog yb deifirev("  # edited by hand
    assert documents.check(stored, "track_1.json") == (
        "/records/2/description: a control, bidi or invisible character in a string (the importer writes them "
        "as \\uXXXX): import the checkout again")
