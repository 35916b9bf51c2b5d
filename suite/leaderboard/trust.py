"""How far a leaderboard entry can be trusted: reproduced by a trusted reviewer, re-run by one
(own code), signed, or unsigned.

A stored reproduction (``goodbench reproduce``) of one of the entry's runs counts only when a
reviewer of ``results/reviewers.toml`` signed it (:mod:`suite.trust.reviewers`) and nothing in the stored
original contradicts it (:func:`suite.leaderboard.rows.contradicted`: a re-run of another scale, or
one claiming a tolerance beyond the rules', counts for nothing). It marks only the run it
reproduced: the row says how many of its runs were reproduced ("reproduced by a trusted
reviewer: 1 of 5 runs").

Own code is the submitter's: re-running it reproduces whatever it does, and no record shows that
the work between its step edges was training (a script that sleeps, reports stored losses and
loads stored weights at each evaluation reproduces bit for bit). So a trusted reviewer's
reproduction of own code reads ``rerun`` ("re-run by a trusted reviewer", :data:`OWN_RERUN_TEXT`)
unless the reviewer attested reading the code at the original's recorded commit
(``settings.reproduces.code_read``, ``goodbench reproduce --attest-code-read``); only then does it
read ``reproduced``, naming the commit and the reviewer. A reference workload's reproduction ran
goodbench's own code, and reads ``reproduced`` as before. Without one, what the file says
of its machine and settings is the submitter's word: the entry reads "not reproduced", and its run
page marks each field self-reported or checked (:mod:`suite.validate.provenance`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from suite.leaderboard import rows as leaderboard
from suite.leaderboard.reproduction_words import UNDER_LOAD_NOTE, reads_faster
from suite.trust.labels import CODE_READ_TEXT, LEVEL_TEXT, OWN_RERUN_TEXT
from suite.trust.reviewers import Reviewers
from suite.trust.signing import short

# The kinds of one reproduction, in the order the run page lists them. RERUN: own code re-run by a
# trusted reviewer with the same figures, its code not attested read (:func:`attested`).
REPRODUCED, RERUN, DIFFERS, INCONCLUSIVE, UNVERIFIED, NOT_COUNTED = range(6)

# An entry's level, most trusted first (the column ``trust`` of the tables and their downloads).
LEVELS = ("reproduced", "rerun", "differs", "signed", "unsigned")
TEXT = LEVEL_TEXT  # what each level reads (suite/trust/labels.py: no submitter's name may read so)


def kind(reproduction: dict, original: dict, trusted: Reviewers) -> tuple[int, str | None]:
    """(kind, why) of one reproduction of the run whose figures are ``original``
    (:func:`suite.leaderboard.rows.original_figures`): NOT_COUNTED with why when the original
    contradicts it, UNVERIFIED when no trusted reviewer signed it, else its verdict's kind — for
    own code, a reproduced verdict is RERUN unless its reviewer attested reading the code
    (:func:`attested`)."""
    why = leaderboard.contradicted(reproduction, original)
    if why:
        return NOT_COUNTED, why
    if not trusted.trusts(reproduction.get("signer")):
        return UNVERIFIED, None
    verdict = str(reproduction["verdict"])
    if verdict == "reproduced":
        return (RERUN if is_own(original) and not attested(reproduction, original) else REPRODUCED), None
    return (INCONCLUSIVE if verdict.startswith("inconclusive") else DIFFERS), None


def is_own(original: dict) -> bool:
    """Whether the original run is own code (its division ``own``): a re-run of it ran the submitter's code."""
    return original.get("division") == "own"


def attested(reproduction: dict, original: dict) -> bool:
    """Whether the reproduction's reviewer attested reading the own code at the commit the original
    recorded (``settings.reproduces.code_read``; an attestation of another commit attests nothing of it)."""
    commit = reproduction.get("code_read")
    return isinstance(commit, str) and commit == original.get("code_commit")


def level(kinds: list[int], signer) -> str:
    """An entry's level from the kinds of its runs' reproductions: "differs" when a counted one
    differs, "reproduced" when one reproduced it and none differs, "rerun" when own code was only
    re-run (:data:`RERUN`), else "signed" or "unsigned"."""
    if DIFFERS in kinds:
        return "differs"
    if REPRODUCED in kinds:
        return "reproduced"
    if RERUN in kinds:
        return "rerun"
    return "signed" if isinstance(signer, str) else "unsigned"


def with_trust(entries: pd.DataFrame, runs: pd.DataFrame, results_dir: Path | None, trusted: Reviewers
               ) -> pd.DataFrame:
    """``entries`` with the column ``trust`` (one of :data:`LEVELS`), ``reviewed_by`` (the
    trusted reviewers whose reproduction counted, or None), ``reproduced_runs`` ("1 of 5 runs":
    how many of the entry's runs, at its scale, a counted reproduction reproduced; None for none),
    ``rerun_runs`` (the same for own code's runs only re-run, :data:`RERUN`) and ``code_read``
    ("16b0df863cf5 (<reviewer>)": the commit of own code a reviewer of a counted reproduction
    attested reading; None for none), ``differs_how`` and ``differs_badge`` (what the counted
    reproductions that differ found, which way and what: "throughput 3.66× the recorded (faster);
    curve bit-identical", and a badge's "3.66× faster"; :mod:`suite.leaderboard.reproduction_words`),
    ``inconclusive_runs`` ("1 of 1 run": runs whose only counted reproductions were inconclusive),
    ``inconclusive_how`` and ``inconclusive_loaded`` (True where one of those re-runs was measured
    under load). A reproduction names its original by
    the sha256 of its bytes, which is its name in the store; a file whose bytes do not give its
    name gets none (and none without a store: ``results_dir`` None)."""
    found = leaderboard.reproductions(runs) if not runs.empty and results_dir is not None else {}
    matches = {sha for sha in {sha for sha, _ in found}
               if results_dir is not None and _named_by_its_bytes(results_dir / f"{sha}.json", sha)}
    levels: list[str] = []
    reviewers: list[str | None] = []
    counts: list[str | None] = []
    reruns: list[str | None] = []
    reads: list[str | None] = []
    differs_how: list[str | None] = []
    differs_badge: list[str | None] = []
    inconclusive_runs: list[str | None] = []
    inconclusive_how: list[str | None] = []
    inconclusive_loaded: list[bool] = []
    for entry in entries.to_dict(orient="records"):
        sha = str(entry["file"]).removesuffix(".json")
        kinds: list[int] = []
        names: set[str] = set()
        read: set[str] = set()
        mine = runs[(runs["file"] == entry["file"]) & (runs["workload"] == entry["workload"])
                    & (runs["scale"] == entry["scale"])] if not runs.empty else runs
        reproduced = rerun = inconclusive = 0
        found_how: dict[int, list[dict]] = {DIFFERS: [], INCONCLUSIVE: []}
        if sha in matches:
            for run in mine.to_dict(orient="records"):
                run_kinds: list[int] = []
                for reproduction in found.get((sha, run["run_id"]), []):
                    k, _ = kind(reproduction, run, trusted)
                    run_kinds.append(k)
                    if k in (REPRODUCED, RERUN, DIFFERS, INCONCLUSIVE):
                        names.add(trusted.names[str(reproduction["signer"])])
                    if k in found_how:
                        found_how[k].append(reproduction)
                    if k == REPRODUCED and is_own(run):
                        read.add(f"{short_commit(reproduction['code_read'])} "
                                 f"({trusted.names[str(reproduction['signer'])]})")
                kinds += run_kinds
                reproduced += REPRODUCED in run_kinds  # a run counts once, however often it was reproduced
                rerun += RERUN in run_kinds and REPRODUCED not in run_kinds
                inconclusive += bool(run_kinds) and all(k in (INCONCLUSIVE, UNVERIFIED, NOT_COUNTED) for k in run_kinds) \
                    and INCONCLUSIVE in run_kinds
        levels.append(level(kinds, entry["signer"]))
        reviewers.append(", ".join(sorted(names)) or None)
        counts.append(_of_runs(reproduced, len(mine)))
        reruns.append(_of_runs(rerun, len(mine)))
        reads.append("; ".join(sorted(read)) or None)
        differs_how.append(hows(found_how[DIFFERS]))
        differs_badge.append(next((r["badge"] for r in found_how[DIFFERS] if isinstance(r.get("badge"), str)), None))
        inconclusive_runs.append(_of_runs(inconclusive, len(mine)))
        inconclusive_how.append(hows(found_how[INCONCLUSIVE]) if inconclusive else None)
        inconclusive_loaded.append(bool(inconclusive) and any(isinstance(r.get("under_load"), str)
                                                              for r in found_how[INCONCLUSIVE]))
    return entries.assign(trust=levels, reviewed_by=reviewers, reproduced_runs=counts, rerun_runs=reruns,
                          code_read=reads, differs_how=differs_how, differs_badge=differs_badge,
                          inconclusive_runs=inconclusive_runs, inconclusive_how=inconclusive_how,
                          inconclusive_loaded=inconclusive_loaded)


def hows(found: list[dict]) -> str | None:
    """What reproductions found (their ``how``), each once, " · " between them (None: none said)."""
    return " · ".join(dict.fromkeys(str(r["how"]) for r in found if isinstance(r.get("how"), str))) or None


def _of_runs(n: int, total: int) -> str | None:
    return f"{n} of {total} run{'s' if total != 1 else ''}" if n else None


def short_commit(commit: str) -> str:
    """A git commit as the site names it: its first 12 hex digits."""
    return commit[:12]


def _named_by_its_bytes(path: Path, sha: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha
    except OSError:
        return False


UNSIGNED_WHY = ("no key signed the file and no trusted reviewer has trained its runs again, so nothing but the "
                "submitter's word stands behind its machine and settings (its run pages say which fields a "
                "rule checked against a second record)")
"""What an unsigned row's note adds to its badge ("unsigned, not reproduced: …", :func:`row_text`)."""


def row_text(row: dict) -> str | None:
    """What a table row says under its system (a system page's, under its signer) of its trust:
    its level, who reproduced it and, for own code, what their reproduction proves: the commit a
    reviewer attested reading, or :data:`OWN_RERUN_TEXT` for a re-run alone. The row shows it as a
    badge of a few words (:mod:`suite.site.columns`), this whole sentence its tooltip and its note."""
    level_ = row.get("trust")
    if not isinstance(level_, str) or level_ not in TEXT:
        return None
    names = row.get("reviewed_by")
    if level_ == "signed" and isinstance(row.get("signer"), str):  # whose key: the table shows it too
        return f"signed by {short(row['signer'])}, not reproduced"
    counted = row.get("reproduced_runs") if level_ == "reproduced" else row.get("rerun_runs")
    scope = f": {counted}" if level_ in ("reproduced", "rerun") and isinstance(counted, str) else ""
    who = f" ({names})" if isinstance(names, str) and level_ in ("reproduced", "rerun", "differs") else ""
    text = TEXT[level_] + scope + who + (f": {UNSIGNED_WHY}" if level_ == "unsigned" else "")
    read = row.get("code_read")
    if level_ == "reproduced" and isinstance(read, str):
        text += f"; {CODE_READ_TEXT} {read}"
    if level_ == "differs" and isinstance(row.get("differs_how"), str):  # which way, and what differed
        text += f": {row['differs_how']}"
        if isinstance(row.get("under_load"), str) and reads_faster(row["differs_how"]):
            text += f"; {UNDER_LOAD_NOTE}"  # a faster re-run, which the load explains
    if level_ == "rerun":
        text += f": {OWN_RERUN_TEXT}"
    elif isinstance(row.get("rerun_runs"), str):  # some of its runs re-run alone, beside others
        text += f"; {TEXT['rerun']}: {row['rerun_runs']}, {OWN_RERUN_TEXT}"
    return text


INCONCLUSIVE_WHY = ("its throughput could not be judged against the tolerance (its 95% interval reached across the "
                    "edge, or there was none): this says nothing against the figures (a short run with noisy steps can leave the "
                    "recorded interval wider than the band, so that no re-run can decide: docs/own-code.md)")
"""What an inconclusive reproduction's note says of it (:func:`inconclusive_text`)."""


def inconclusive_text(row: dict) -> str | None:
    """What a row says of its runs whose only counted reproductions were inconclusive
    (``inconclusive_runs``), who reproduced them and what they found; None for none."""
    counted = row.get("inconclusive_runs")
    if not isinstance(counted, str):
        return None
    names = row.get("reviewed_by")
    who = f" ({names})" if isinstance(names, str) else ""
    how = row.get("inconclusive_how")
    return (f"a trusted reviewer's reproduction was inconclusive: {counted}{who}"
            + (f": {how}" if isinstance(how, str) else "") + f"; {INCONCLUSIVE_WHY}")
