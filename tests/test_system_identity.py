"""A system is its name and signer: another key's file under a system's name is another system, shown
apart and marked, and a name that reads as another signer's system's name is marked too."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import factories
import numpy as np
import pandas as pd
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from suite.leaderboard import rows as leaderboard
from suite.leaderboard import systems
from suite.record import results
from suite.site.builder import build_site
from suite.site.names import safe_name, system_slug
from suite.store.files import submit_noted
from suite.trust import signing
from suite.trust.resemblance import skeleton

VICTIM_FP, IMPOSTER_FP = "SHA256:" + "V" * 43, "SHA256:" + "I" * 43


# ---------------------------------------------------------------- look-alike names
@pytest.mark.parametrize("alike", ["ACME Hl00 node", "ACME HI00 node", "ACME H1OO node", "ACME H100 n\u1ecdde",
                                   "acme h100 node", "ACME H100 no\u0323de", "ACME \uff28100 node",
                                   "ACME H1\u1040\u1040 node", "ACME H1\u0966\u0966 node", "ACME H1\u0e50\u0e50 node",
                                   "ACME H1\u07c0\u07c0 nocle", "ACME H100 nocIe", "ACME H100 noc1e",
                                   "ACME H100 noc|e"])
def test_names_drawn_alike_have_one_skeleton(alike):
    """A digit for a letter drawn like it (l/1/I, O/0), an accent a glance misses (Vietnamese "ọ",
    precomposed or combining), case and full-width letters, another script's zeros (Myanmar,
    Devanagari, Thai, NKo: trial 12) and "cl" for "d" read as the name they imitate."""
    assert skeleton(alike) == skeleton("ACME H100 node")


@pytest.mark.parametrize("one, other", [("H100 x8", "H100 x4"), ("ACME H100 node", "ACME H200 node"),
                                        ("ACME H100 node", "ACME A100 node"), ("lab 8x", "lab 16x"),
                                        ("ACME H100 node", "ACME H100 node x")])
def test_honest_names_differing_by_what_reads_differently_keep_their_skeletons(one, other):
    assert skeleton(one) != skeleton(other)


def test_5_and_8_read_as_s_and_b():
    assert skeleton("Lab 8ox 5") == skeleton("Lab Box S")


def test_a_fingerprint_written_with_a_hyphen_is_read_as_one():
    """Trial 12: "(SHA-256:…)" in a name imitated the signer a table shows beside another's name."""
    assert systems.reads_as("Lab 100 cluster (SHA-256:THV8iRDjo0/3\u2026)") == systems.reads_as("Lab 100 cluster")
    assert systems.reads_as("Lab 100 cluster (sha 256 x)") == systems.reads_as("Lab 100 cluster")
    assert systems.reads_as("Lab 100 cluster sha256x") != systems.reads_as("Lab 100 cluster")  # a word, not a fingerprint


@pytest.mark.parametrize("written", ["ACME H100 node (SHA2 56:LyydO9s8Jkti\u2026)", "ACME H100 node (SHA 25 6:LyydO9s8Jkti\u2026)",
                                     "ACME H100 node (SH4256:LyydO9s8Jkti\u2026)", "ACME H100 node (SHAZ56:LyydO9s8Jkti\u2026)",
                                     "ACME H100 node (KEY:LyydO9s8Jkti\u2026)", "ACME H100 node [SHA256: LyydO9s8Jkti\u2026]",
                                     "ACME H100 node (SHA25G:LyydO9s8Jkti\u2026)", "ACME H100 node SHA2 56"])
def test_a_fingerprint_spelt_otherwise_is_read_as_one(written):
    """Trial 13, 6 (/tmp/trial13/fingerprint_name.py): "SHA256" spelt with a space, a 4 for the A or
    a Z for the 2 was not stripped, and the name, showing another's fingerprint, was shown bare
    beside that signer's "ACME H100 node"; a signer's label under any prefix is read as one too."""
    assert systems.reads_as(written) == systems.reads_as("ACME H100 node")
    seen = systems.shown([("ACME H100 node", VICTIM_FP), (written, IMPOSTER_FP)])
    assert seen[(written, IMPOSTER_FP)] == systems.Shown(
        f"{written} ({signing.short(IMPOSTER_FP)})",
        f"name resembles \u201cACME H100 node ({signing.short(VICTIM_FP)})\u201d, another signer's system, stored first")


def test_a_bracket_with_a_short_value_after_a_colon_is_part_of_the_name():
    """A review: at four characters after the colon, "DGX (gpu:H100x8)" and "DGX (gpu:A100x8)" read as
    one name, and two signers' different systems would be said to resemble each other."""
    from suite.trust.system_names import reads_as

    assert reads_as("DGX (gpu:H100x8)") != reads_as("DGX (gpu:A100x8)")
    assert reads_as("Node 3 (rack:B12a)") != reads_as("Node 3 (rack:C07b)")


def test_the_systems_of_the_stored_and_test_files_still_read_apart():
    """The names of results/, tests/fixtures and tests/corpus/valid, brackets and all ("Intel(R)
    Xeon(R) Processor x1", "MLCommons Reference Lab (A100 x8)"), keep reading as themselves."""
    repo = Path(__file__).resolve().parent.parent
    names = {json.loads(p.read_text())["system"]["name"] for folder in ("results", "tests/fixtures", "tests/corpus/valid")
             for p in (repo / folder).glob("*.json")}
    assert len(names) >= 4 and len({systems.reads_as(n) for n in names}) == len(names)
    assert all(systems.reads_as(n) == skeleton(n) for n in names)  # nothing of them read as a fingerprint


def test_punctuation_drawn_alike_reads_as_one():
    assert skeleton("ACME H100 node\u2010x") == skeleton("ACME H100 node-x")  # U+2010 HYPHEN


# ---------------------------------------------------------------- how each system is shown
def test_two_signers_of_one_name_are_two_systems_each_shown_with_its_signer():
    seen = systems.shown([("ACME H100 node", VICTIM_FP), ("ACME H100 node", IMPOSTER_FP), ("other lab", VICTIM_FP)])
    victim, imposter = seen[("ACME H100 node", VICTIM_FP)], seen[("ACME H100 node", IMPOSTER_FP)]
    assert victim.label == f"ACME H100 node ({signing.short(VICTIM_FP)})" and victim.note is None
    assert imposter.label == f"ACME H100 node ({signing.short(IMPOSTER_FP)})"
    assert imposter.note == (f"name shared with another signer's system \u201cACME H100 node "
                             f"({signing.short(VICTIM_FP)})\u201d, stored first")
    assert seen[("other lab", VICTIM_FP)] == systems.Shown("other lab", None)  # a name of one signer: as it is


def test_a_names_unsigned_files_are_a_system_apart_from_its_signed_one():
    seen = systems.shown([("lab", None), ("lab", VICTIM_FP)])
    assert seen[("lab", None)] == systems.Shown("lab (unsigned)", None)
    assert seen[("lab", VICTIM_FP)].note == "name shared with a system of unsigned files \u201clab (unsigned)\u201d, stored first"


@pytest.mark.parametrize("alike", ["ACME Hl00 node", "ACME H100 n\u1ecdde",
                                   f"ACME H100 node ({signing.short(VICTIM_FP)})"])
def test_a_name_reading_as_another_signers_is_marked(alike):
    """A look-alike of a name stored first by another key, or the name written with that key's
    fingerprint beside it as the site shows it, is shown with its own signer and says whose name it resembles."""
    seen = systems.shown([("ACME H100 node", VICTIM_FP), (alike, IMPOSTER_FP)])
    assert seen[("ACME H100 node", VICTIM_FP)].label == f"ACME H100 node ({signing.short(VICTIM_FP)})"
    assert seen[(alike, IMPOSTER_FP)] == systems.Shown(
        f"{alike} ({signing.short(IMPOSTER_FP)})",
        f"name resembles \u201cACME H100 node ({signing.short(VICTIM_FP)})\u201d, another signer's system, stored first")


def test_honest_names_and_one_signers_own_look_alikes_are_shown_as_they_are():
    names = [("ACME H100 x8", VICTIM_FP), ("ACME H100 x4", IMPOSTER_FP), ("ACME Hl00 x8", VICTIM_FP)]
    assert {who: s.label for who, s in systems.shown(names).items()} == {who: who[0] for who in names}


# ---------------------------------------------------------------- best per system
def _entry(file: str, signer: str | None, samples_per_s: float) -> dict:
    return {**dict.fromkeys(leaderboard.ENTRY_COLUMNS), "file": file, "system": "ACME H100 node", "kind": "throughput",
            "workload": "gpt2-124m", "scale": "full", "division": "closed", "samples_per_s": samples_per_s,
            "signer": signer}


def test_best_per_system_keeps_each_signers_best_and_one_for_a_names_unsigned_files():
    frame = pd.DataFrame([_entry("v1.json", VICTIM_FP, 100.0), _entry("v2.json", VICTIM_FP, 120.0),
                          _entry("i.json", IMPOSTER_FP, 900.0), _entry("u1.json", None, 50.0),
                          _entry("u2.json", None, 60.0)], columns=leaderboard.ENTRY_COLUMNS)
    best = leaderboard.best_per_system(frame)
    assert sorted(best["file"]) == ["i.json", "u2.json", "v2.json"]


# ---------------------------------------------------------------- the site
def _sealed(name: str, key: Ed25519PrivateKey, seed: int, mfu: float, days_ago: float) -> dict:
    doc = factories.synthetic_document(name, rng=np.random.default_rng(seed), accelerator=0, scale="full",
                                       workloads=("lm-char",), full_length=True, mfu_level=mfu, days_ago=days_ago)
    return signing.seal(doc, key)


@pytest.fixture(scope="module")
def imposter_site(tmp_path_factory) -> dict:
    """A victim's signed file, then an imposter's faster one under the same name signed by another
    key, then a third key's file under a look-alike name ("Hl00": a small L for the digit one)."""
    tmp = tmp_path_factory.mktemp("imposter")
    folder = tmp / "results"
    keys = [Ed25519PrivateKey.generate() for _ in range(3)]
    docs = {"victim": _sealed("ACME H100 node", keys[0], 1, 0.25, 1.0),
            "imposter": _sealed("ACME H100 node", keys[1], 2, 0.45, 0.5),
            "lookalike": _sealed("ACME Hl00 node", keys[2], 3, 0.40, 0.4)}
    stored, notes = {}, {}
    for who, doc in docs.items():
        results.write(tmp / f"{who}.json", doc)
        answer = submit_noted(tmp / f"{who}.json", folder)
        stored[who], notes[who] = answer.path.name, answer.notes
    build_site(folder, tmp / "site")
    fps = {who: signing.signer(doc) for who, doc in docs.items()}
    return {"site": tmp / "site", "files": stored, "fps": fps, "docs": docs, "notes": notes}


def _page(site: Path, name: str, fp: str) -> str:
    return html.unescape((site / "systems" / f"{system_slug(name, fp)}.html").read_text())


def test_the_victims_system_page_holds_its_entries_only_and_the_imposters_is_marked(imposter_site):
    site, files, fps = imposter_site["site"], imposter_site["files"], imposter_site["fps"]
    victim, imposter = _page(site, "ACME H100 node", fps["victim"]), _page(site, "ACME H100 node", fps["imposter"])
    assert files["victim"] not in imposter and files["imposter"] not in victim
    assert files["victim"].removesuffix(".json") in json.dumps(
        json.loads((site / "systems" / f"{system_slug('ACME H100 node', fps['victim'])}.json").read_text()))
    assert f"<h1>ACME H100 node ({signing.short(fps['victim'])})</h1>" in victim and "stored first" not in victim
    assert f"<h1>ACME H100 node ({signing.short(fps['imposter'])})</h1>" in imposter
    assert (f"name shared with another signer's system \u201cACME H100 node ({signing.short(fps['victim'])})\u201d, "
            "stored first") in imposter
    assert not (site / "systems" / f"{safe_name('ACME H100 node')}.html").exists()  # no page of the name alone


def test_compare_data_keeps_the_victims_best_entry_the_victims(imposter_site):
    """Grouped by name alone, the imposter's faster file became the victim's system's best entry."""
    site, files, fps = imposter_site["site"], imposter_site["files"], imposter_site["fps"]
    best = pd.read_json(site / "compare.json", orient="records")
    by_file = {f: (shown, signer) for f, shown, signer in zip(best["file"], best["system_shown"], best["signer"])}
    assert by_file[files["victim"]] == (f"ACME H100 node ({signing.short(fps['victim'])})", fps["victim"])
    assert by_file[files["imposter"]] == (f"ACME H100 node ({signing.short(fps['imposter'])})", fps["imposter"])
    page = (site / "compare.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="compare-data">(.*?)</script>', page, re.S)[1])
    victim, imposter = (f"ACME H100 node ({signing.short(fps[w])})" for w in ("victim", "imposter"))
    assert {victim, imposter} <= set(data["systems"])
    [key] = data["values"][victim]
    assert data["values"][victim][key]["score_s"] == pytest.approx(best.set_index("file").loc[files["victim"], "score_s"])


def test_the_index_leader_and_systems_name_each_signer(imposter_site):
    site, fps = imposter_site["site"], imposter_site["fps"]
    index = html.unescape((site / "index.html").read_text())
    leader = index.split('data-label="leader per division">')[1].split("</td>")[0]
    # the imposter's file is the faster: it leads as itself, with its signer and whose name it shares
    assert f'href="systems/{system_slug("ACME H100 node", fps["imposter"])}.html"' in leader
    assert f"ACME H100 node ({signing.short(fps['imposter'])})</a>" in leader and "name shared with" in leader
    listed = index.split('class="systems">')[1].split("</ul>")[0]
    assert listed.index(signing.short(fps["victim"])) < listed.index(signing.short(fps["imposter"]))  # first stored first
    assert f"ACME Hl00 node ({signing.short(fps['lookalike'])})" in listed
    assert "name resembles \u201cACME H100 node" in listed


def test_a_look_alike_names_page_says_whose_name_it_resembles(imposter_site):
    site, fps = imposter_site["site"], imposter_site["fps"]
    page = _page(site, "ACME Hl00 node", fps["lookalike"])
    assert (f"name resembles \u201cACME H100 node ({signing.short(fps['victim'])})\u201d, another signer's system, "
            "stored first") in page


def test_a_run_page_links_its_signers_system(imposter_site):
    site, files, fps, docs = (imposter_site[k] for k in ("site", "files", "fps", "docs"))
    from suite.site.names import run_slug

    run_id = docs["imposter"]["runs"][0]["run_id"]
    page = (site / "runs" / f"{run_slug(files['imposter'], run_id)}.html").read_text()
    assert f'href="../systems/{system_slug("ACME H100 node", fps["imposter"])}.html"' in page


def test_submit_says_whose_name_a_new_system_shares_or_resembles(imposter_site):
    fps, notes = imposter_site["fps"], imposter_site["notes"]
    victim, imposter = (f"ACME H100 node ({signing.short(fps[w])})" for w in ("victim", "imposter"))
    assert notes["victim"] == ()
    assert notes["imposter"] == (
        f"system \u201cACME H100 node\u201d: name shared with another signer's system \u201c{victim}\u201d, stored "
        f"first; the leaderboard shows this file's system as \u201c{imposter}\u201d, a system apart (a system is "
        "its name and signer)",)
    [note] = notes["lookalike"]
    assert note.startswith(f"system \u201cACME Hl00 node\u201d: name resembles \u201c{victim}\u201d, another "
                           "signer's system, stored first")


def test_two_signers_unnamed_runs_on_one_device_are_not_said_to_share_a_name(tmp_path):
    """An unnamed system takes its device's name ("AMD EPYC x1": `<accelerator> x<count>`), a page
    everyone's unnamed runs on it share: each signer's is shown with its signer, and neither is said
    to take the other's name (a reviewer's reproduction on the same CPU was)."""
    assert systems.device_named("NVIDIA H100 80GB HBM3 x8", "NVIDIA H100 80GB HBM3", 8)
    assert not systems.device_named("ACME H100 node", "NVIDIA H100 80GB HBM3", 8)
    first, later = (("NVIDIA H100 80GB HBM3 x1", fp) for fp in (VICTIM_FP, IMPOSTER_FP))
    seen = systems.shown([first, later], frozenset({first, later}))
    assert seen[later] == systems.Shown(f"NVIDIA H100 80GB HBM3 x1 ({signing.short(IMPOSTER_FP)})", None)
    docs = []
    for seed, days in ((4, 1.0), (5, 0.5)):
        def made(name: str, seed: int = seed, days: float = days) -> dict:
            return factories.synthetic_document(name, rng=np.random.default_rng(seed), accelerator=0, scale="full",
                                                workloads=("lm-char",), full_length=True, mfu_level=0.3,
                                                days_ago=days)
        acc = made("x")["system"]["accelerator"]
        docs.append(signing.seal(made(f"{acc['name']} x{acc['count']}"), Ed25519PrivateKey.generate()))
    notes = []
    for k, doc in enumerate(docs):
        results.write(tmp_path / f"{k}.json", doc)
        notes.append(submit_noted(tmp_path / f"{k}.json", tmp_path / "results").notes)
    assert notes == [(), ()]
