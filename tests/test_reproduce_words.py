"""What ``goodbench reproduce`` says around its verdicts (suite/commands/reproduce.py,
suite/run/reproduce/reporting.py): the print-only first step of own code exits 3 (nothing
reproduced), the recorded command's folder and its ``<tmp>`` placeholder are explained, an
original measured under load is
named beside the verdicts with the direction it leads one to expect, and the footer on an
attestation speaks of "re-run" only when a run reproduced (a new user's walkthrough, H1, M6, L1,
L2, L5)."""
from __future__ import annotations

import json
from pathlib import Path

from suite.run.reproduce import own
from suite.run.reproduce.reporting import attestation_line, load_notes
from workloads.own import implementation_name

FIXTURES = Path(__file__).parent / "fixtures"
ORIGINAL = FIXTURES / "own-stored-losses.json"  # measured under load: other processes used 1.18 of 2 cores
RERUN = FIXTURES / "own-stored-losses-rerun.json"


def test_printing_the_recorded_command_runs_nothing_and_exits_3(tmp_path, monkeypatch, capsys):
    """Nothing was reproduced: not 0, which `goodbench reproduce FILE && …` reads as a reproduction,
    nor 1, a run that differs; the last line and the help say so."""
    from suite.cli import main
    from suite.commands import reproduce

    monkeypatch.setattr(own, "code_at_hand", lambda settings, where: True)  # the checkout's own checks: elsewhere
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: None)
    monkeypatch.chdir(tmp_path)
    assert reproduce.NOTHING_RUN == 3
    assert main(["reproduce", str(ORIGINAL), "-o", "r.json", "--no-sign"]) == reproduce.NOTHING_RUN
    err = capsys.readouterr().err
    assert "its recorded command, run from its work tree's root:\n    python cheat.py --out '<tmp>/cheat-own.json'" \
        in err
    assert ("(<tmp>: a temporary folder's path, shortened for privacy when the file was written; the re-run writes "
            "its file where goodbench says, not there)") in err
    assert "nothing was run: read the command above" in err and not (tmp_path / "r.json").exists()
    commit = json.loads(ORIGINAL.read_text())["settings"]["implementation"]["code"]["git_commit"]
    assert f"holds runs of own code at git commit {commit} (the commit to check out here)" in err  # submitting.md
    assert err.rstrip().splitlines()[-1].endswith("(exit status 3: nothing reproduced)")
    assert "(no --run-recorded-command): 3, nothing reproduced" in " ".join(
        (Path(__file__).parent / "fixtures" / "help" / "reproduce.txt").read_text().split())


def test_an_original_measured_under_load_is_named_with_the_faster_re_run_it_leads_one_to_expect():
    original, rerun = json.loads(ORIGINAL.read_text()), json.loads(RERUN.read_text())
    [note] = load_notes(original["runs"], [], implementation_name(original))
    assert note.startswith("note: the original was measured under load (1 of 1 runs measured under load "
                           "(self-reported); first own: plain-loop-char-gpt (held to lm-char) seed 1: other processes used "
                           "1.18 of 2 cores at its start")
    assert note.endswith("so a faster re-run (a ratio above 1) is expected, and a throughput that differs that way "
                         "may say more of that load than of the file")
    quiet = [dict(r, host_load=None) for r in rerun["runs"]]
    assert load_notes(quiet, []) == []


def test_own_code_s_runs_are_named_as_run_own_and_show_name_them():
    """A new user read `run 0: lm-char smoke seed 1` as goodbench having trained lm-char, where
    run-own and show said `own: plain-loop-char-gpt (held to lm-char)` of the same run."""
    from suite.figures import report
    from suite.run.reproduce.inputs import Original
    from suite.run.reproduce.reporting import report_lines
    from suite.run.reproduce.training import Reproduction

    original, rerun = json.loads(ORIGINAL.read_text()), json.loads(RERUN.read_text())
    name = implementation_name(original)
    [c] = own._compare(Original(str(ORIGINAL), "0" * 64, original), [0], rerun, 0.2)
    shown = report.workload_label(original["runs"][0], name)
    assert shown == "own: plain-loop-char-gpt (held to lm-char)"
    assert report_lines(Reproduction(rerun, [c]))[0].startswith(f"run 0: {shown} smoke seed 1 → ")
    assert c.target.label() == f"{shown} seed 1"  # the lines said while measuring on, too


def test_the_footer_speaks_of_re_run_only_when_a_run_reproduced():
    assert attestation_line(None, 0, "--attest-code-read") is None  # 0 of 1 reproduced: nothing of what it reads
    assert attestation_line(None, 1, "--attest-code-read").startswith(
        "no reading of its code attested (--attest-code-read): a trusted reviewer's reproduction of own code reads "
        "\"re-run\"")
    assert attestation_line({"commit": "65f78db5c8251234"}, 0, "--attest-code-read") == \
        "you attested reading its code at commit 65f78db5c825"


def test_a_re_run_of_own_code_waits_for_quiet_and_warns_of_load_before_it_starts(tmp_path, monkeypatch, capsys):
    """A walkthrough's re-run started with 1.88 of 2 cores busy and no word of it: own code returned
    before the warning `run` and `run-own` give, and reproduce had no --wait-quiet."""
    from suite.cli import main
    from suite.commands import reproduce
    from suite.meters import host_load
    from suite.record.errors import GoodbenchError
    from suite.run import quiet

    monkeypatch.setattr(own, "code_at_hand", lambda settings, where: True)
    monkeypatch.setattr(own, "runnable_command", lambda settings, where: None)
    monkeypatch.setattr(reproduce, "_refuse_the_checkout_on_the_import_path", lambda checkout: None)
    monkeypatch.setattr(host_load, "snapshot", lambda **kw: {"cores": 2, "other_cores": 1.88, "busy": [{"name": "mypy"}]})
    waited: list[tuple[float, str]] = []
    monkeypatch.setattr(quiet, "wait", lambda limit, then, **kw: waited.append((limit, then)))

    def started(*args, **kwargs):
        raise GoodbenchError("the re-run would start here")

    monkeypatch.setattr(own, "reproduce", started)
    monkeypatch.chdir(tmp_path)
    argv = ["reproduce", str(ORIGINAL), "-o", "r.json", "--no-sign", "--run-recorded-command", "--wait-quiet", "30"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert waited == [(30.0, "re-running anyway")]
    warning = "warning: other processes used 1.88 of 2 cores now (mypy): " + reproduce.UNDER_LOAD
    assert warning in err and err.index(warning) < err.index("the re-run would start here")
    assert "--wait-quiet SECONDS" in " ".join((FIXTURES / "help" / "reproduce.txt").read_text().split())
    # its last line counts the inconclusive runs, as a reference reproduction's does
    from types import SimpleNamespace

    from suite.run.reproduce import reporting

    monkeypatch.setattr(reporting, "report_lines", lambda found: [])
    monkeypatch.setattr(reporting, "rerun_load_notes", lambda c: [])
    monkeypatch.setattr(own, "reproduce", lambda *a, **k: SimpleNamespace(
        comparisons=[SimpleNamespace(verdict="inconclusive: the re-run was measured under load")], doc={"runs": []},
        reproduced=False))
    assert main(argv) == 1
    assert "0 of 1 runs reproduced, 1 inconclusive" in capsys.readouterr().out

