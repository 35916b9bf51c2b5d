"""The "NanoGPT speedrun (imported)" pages: the documents of ``goodbench import speedrun``.

- ``speedrun/track-N.html``: a track's record history (claimed and measured; log scale over a wide span) and its
  table (record, date, what changed, claimed, measured, runs, mean val loss, p, GPUs, verdict);
- ``speedrun/track-N/<record>.html``: one README row: its runs' validation-loss curves, each
  run's figures, versions and source hash, links to the logs and the PR;
- ``speedrun/records.csv`` / ``runs.csv`` (and ``.json``): a line per README row, per log;
  ``speedrun/costs.csv`` (and ``.json``): each row's GPU-hours and list-price cost
  (:mod:`suite.site.speedrun_costs`).

These records are another workload than goodbench's (FineWeb data, a model that changes with
every record): they never enter goodbench's rankings, and every page says so.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from suite.cost import prices
from suite.record.text import github_address
from suite.site import speedrun_charts, speedrun_costs
from suite.site.render import render
from suite.site.tables import downloads
from suite.speedrun import documents, plausible, records

FOLDER = "speedrun"
REPOSITORY = "https://github.com/KellerJordan/modded-nanogpt"
APART = ("The NanoGPT speedrun is its own workload (FineWeb data, a model that changes with every record): "
         "its records never enter goodbench's rankings, gpt2-124m's included.")
PROGRESS = "writing the imported NanoGPT speedrun pages"  # what the site build says as it starts them
RECORD_COLUMNS = ["track", "record", "date", "claimed_s", "measured_s", "runs", "mean_val_loss", "p_value",
                  "verdict", "accelerator", "accelerators", "flags"]
RUN_COLUMNS = ["track", "record", "log", "log_sha256", "final_step", "val_loss", "train_time_s", "step_avg_ms",
               "accelerator", "accelerators", "torch", "flags"]
# the JSON downloads add the estimates the CSVs leave out (their columns are fixed)
RECORD_ESTIMATES = ["tokens_per_s", "tokens_per_s_per_gpu", "mfu_estimate", "mfu_peak"]
RUN_ESTIMATES = ["tokens_per_step", "tokens_per_s_per_gpu", "flops_per_token", "mfu_estimate", "mfu_peak"]


NOT_SHOWN = "not shown (p ≥ 0.01)"  # the stored verdict of a t-test that does not meet the speedrun's rule
ABOVE_TARGET = "not met: mean above target"
VERDICT_WORDS = ('"not shown (p ≥ 0.01)": the mean is at or below the target, but the t-test cannot tell it '
                 'from chance at the speedrun\'s p < 0.01 (the runs spread too widely, or are too few); '
                 '"not met: mean above target": the mean itself is above the target, so no test could show it below; '
                 '"undecided: p < 0.01, but" and a flag: the test alone would meet the rule, but the record has '
                 'a flag (its first is named), so it is not taken as met.')


def verdict_words(rec: dict, target: float) -> str:
    """A record's verdict as the pages show it: the stored one, but where it says the test did not
    show the mean below the target while the mean is above it, that ("not met: mean above target",
    with its p), not the milder "not shown" (:data:`VERDICT_WORDS` defines both)."""
    stored, mean = rec.get("verdict") or "—", rec.get("mean_val_loss")
    if stored == NOT_SHOWN and mean is not None and mean > target:
        return f"{ABOVE_TARGET} (p ≥ 0.01)"
    return stored


def record_keys(records: list[dict]) -> list[str]:
    """Each README row's page name: its record number, with -2, -3 … for a number's later rows."""
    seen: Counter = Counter()
    keys = []
    for r in records:
        number = int(r["record"])
        seen[number] += 1
        keys.append(str(number) if seen[number] == 1 else f"{number}-{seen[number]}")
    return keys


def log_url(doc: dict, path: str) -> str:
    """A log's address on GitHub at the imported commit where it is upstream's (the default branch
    otherwise: a local commit is not on GitHub)."""
    return f"{REPOSITORY}/blob/{(doc.get('upstream') and doc.get('commit')) or 'master'}/{path}"


CHECKED_AT_IMPORT = ("When it imported the checkout, goodbench's importer checked that every file it read (README.md and "
                     "the logs) is that commit's, by its git blob id{upstream}. The stored document is the importer's "
                     "word (self-reported): the logs are not stored, so this site cannot re-check them, and an edit "
                     "of the document that keeps its figures consistent is not caught.")


def source_line(doc: dict) -> dict:
    """Where a track's document says it came from, as the pages say it: ``before`` (text), a link
    (``href``, the words ``linked``), ``after`` and a short ``note`` with its long form (``title``).
    A commit links to KellerJordan's tree only where the importer found it upstream's (pinned, or an
    ancestor of a pinned one); and every check is said to be the importer's, self-reported."""
    commit, upstream = doc.get("commit"), doc.get("upstream")
    if commit and upstream:
        ancestor = "" if commit == upstream else f", an ancestor of {upstream[:7]}"
        return {"before": "imported from ", "href": f"{REPOSITORY}/tree/{commit}", "linked": "KellerJordan/modded-nanogpt",
                "after": f" at {commit[:7]}{ancestor}", "note": "files checked against it by the importer when imported; "
                "self-reported", "title": CHECKED_AT_IMPORT.format(
                    upstream=f", and that the commit is {upstream[:7]} of KellerJordan/modded-nanogpt, pinned by this "
                             f"goodbench, or an ancestor of it in the checkout")}
    if commit:
        return {"before": f"imported at local commit {commit[:7]} (not known to be upstream's)", "href": None,
                "linked": "", "after": "", "note": "files checked against it by the importer when imported; "
                "self-reported", "title": CHECKED_AT_IMPORT.format(
                    upstream="; the commit is neither a commit of KellerJordan/modded-nanogpt this goodbench pins nor an "
                             "ancestor of one in the checkout, so nothing ties it to upstream")}
    return {"before": "imported from a copy of ", "href": REPOSITORY, "linked": "KellerJordan/modded-nanogpt",
            "after": ": local files, not verified (no git checkout whose HEAD holds every file read)", "note": None,
            "title": None}


def run_flags(doc: dict) -> dict[str, list[str]]:
    """Each run's plausibility flags (:mod:`suite.speedrun.plausible`), derived from the document:
    its own figures', a copy of another run (of a record or a baseline), and a run without a time
    (or without a validation loss) where others of its record have one."""
    runs = {r["log"]: r for r in doc["runs"]}
    copied = records.copied_runs(doc["track"], [(rec["record"], [runs[p] for p in rec["run_logs"] if p in runs],
                                                 rec["runs_folder"]) for rec in doc["records"]], runs)
    found = {log: plausible.all_flags(run, copied) for log, run in runs.items()}
    for rec in doc["records"]:  # a run without a time where others of its record have one
        untimed = [p for p in rec["run_logs"] if p in runs and runs[p]["train_time_s"] is None]
        if 0 < len(untimed) < len(rec["run_logs"]):
            for p in (p for p in untimed if records.UNTIMED not in found[p]):
                found[p] = found[p] + [records.UNTIMED]
        lossless = [p for p in rec["run_logs"] if p in runs and runs[p]["val_loss"] is None]
        if 0 < len(lossless) < len(rec["run_logs"]):
            for p in (p for p in lossless if records.LOSSLESS not in found[p]):
                found[p] = found[p] + [records.LOSSLESS]
    return found


def tables(docs: list[dict], estimates: bool = False,
           flags: list[dict[str, list[str]]] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(records, runs) of every track with the downloads' columns; ``estimates``: with the JSON's
    throughput and MFU columns after them; ``flags``: each document's :func:`run_flags`, where the
    caller has them."""
    flags = [run_flags(d) for d in docs] if flags is None else flags
    rec_columns = RECORD_COLUMNS + (RECORD_ESTIMATES if estimates else [])
    run_columns = RUN_COLUMNS + (RUN_ESTIMATES if estimates else [])
    recs = [{**{c: r.get(c) for c in rec_columns}, "flags": "; ".join(r["flags"])}
            for d in docs for r in d["records"]]
    flagged = {(d["track"], log): f for d, mine in zip(docs, flags) for log, f in mine.items()}
    runs = [{"track": d["track"], "record": r.get("record"), "log": r["log"], "log_sha256": r["log_sha256"],
             "final_step": r["final_step"], "val_loss": r["val_loss"], "train_time_s": r["train_time_s"],
             "step_avg_ms": r["step_avg_ms"], "accelerator": r["gpu"], "accelerators": r["gpus"], "torch": r["torch"],
             "flags": "; ".join(flagged[(d["track"], r["log"])]),
             **{c: r.get(c) for c in RUN_ESTIMATES if estimates}}
            for d in docs for r in d["runs"]]
    return (pd.DataFrame(recs, columns=rec_columns).astype({"record": "Int64", "runs": "Int64", "accelerators": "Int64"}),
            pd.DataFrame(runs, columns=run_columns).astype({"record": "Int64", "final_step": "Int64",
                                                            "accelerators": "Int64"}))


def _track_page(out: Path, doc: dict, built: dict, costs: list[dict], flags: dict[str, list[str]]) -> None:
    keys = record_keys(doc["records"])  # from the record numbers, ints checked on load (documents.check)
    runs = {r["log"]: r for r in doc["runs"]}
    track = int(doc["track"])
    for rec, key in zip(doc["records"], keys):
        mine = [runs[p] for p in rec["run_logs"] if p in runs]
        render("speedrun_record.html", out / FOLDER / f"track-{track}" / f"{key}.html", root="../../",
               title=f"speedrun track {track}, record {rec['record']}", doc=doc, rec=rec, runs=mine, apart=APART,
               run_flags=flags,
               chart=speedrun_charts.curves(mine, doc["target_val_loss"], f"record {rec['record']}: validation loss"),
               log_url=lambda p: log_url(doc, p), github_address=github_address, source=source_line(doc),
               verdict=verdict_words(rec, doc["target_val_loss"]), verdict_words=VERDICT_WORDS, **built)
    render("speedrun_track.html", out / FOLDER / f"track-{track}.html", root="../",
           title=f"NanoGPT speedrun, track {track}", doc=doc, rows=list(zip(doc["records"], keys, costs)), apart=APART,
           cost_title=speedrun_costs.TITLE, verdicts=[verdict_words(r, doc["target_val_loss"]) for r in doc["records"]],
           verdict_words=VERDICT_WORDS, source=source_line(doc),
           chart=speedrun_charts.history(doc["records"], f"track {track}: record history"), **built)


def write(out: Path, results_dir: str | Path, built: dict, table: prices.Table | None = None,
          progress: Callable[[str], None] | None = None) -> list[dict]:
    """Write the speedrun pages and downloads when ``<results_dir>/speedrun/`` holds documents,
    each record's cost at ``table``'s prices (None: the shipped table), saying so to ``progress``
    (nothing said where there are none); returns the index page's lines (links relative to the
    site's root), empty when none."""
    docs, bad = documents.load_all(results_dir)
    if not docs and not bad:
        return []
    if progress is not None:
        progress(PROGRESS)
    (out / FOLDER).mkdir(parents=True, exist_ok=True)
    table = table if table is not None else prices.load()
    every = []
    flags = [run_flags(doc) for doc in docs]  # each document's once: its pages and both downloads
    for doc, mine in zip(docs, flags):
        costs = [speedrun_costs.priced({**r, "track": doc["track"]}, table, codes)
                 for r, codes in zip(doc["records"], documents.flag_codes(doc), strict=True)]
        _track_page(out, doc, built, costs, mine)
        every += costs
    records, runs = tables(docs, flags=flags)
    downloads(records, out / FOLDER / "records")
    downloads(runs, out / FOLDER / "runs")
    for frame, name in zip(tables(docs, estimates=True, flags=flags), ("records", "runs")):  # the JSON with the estimates
        frame.to_json(out / FOLDER / f"{name}.json", orient="records", indent=1, double_precision=15)
    downloads(speedrun_costs.frame(every), out / FOLDER / "costs")
    lines = [{"href": f"{FOLDER}/track-{d['track']}.html", "title": f"NanoGPT speedrun: {d['name']}",
              "detail": f"{len(d['records']):,} README rows, {len(d['runs']):,} logs, target val loss "
                        f"{d['target_val_loss']}, claimed and measured side by side"} for d in docs]
    lines += [{"href": f"{FOLDER}/records.csv", "title": f"{name} (not read)", "detail": why} for name, why in bad]
    return lines
