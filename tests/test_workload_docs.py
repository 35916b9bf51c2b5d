"""docs/workloads.md and the README against the registry: every registered workload has its
section, and no count of workloads is written that the registry does not have."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from workloads import registry

REPO = Path(__file__).resolve().parent.parent
NUMBERS = {w: n for n, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"])}
COUNT = re.compile(r"\b(" + "|".join(NUMBERS) + r"|\d+)((?:\s+[\w-]+){0,2})\s+workloads\b", re.I)
# a count is of the whole set where a word says so ("six pinned workloads", "5 reference training
# workloads") or the words before it do ("the suite has seven workloads", "all five workloads");
# "the two workloads that use a GPU" counts a part, and is no statement of the total
TOTAL_WORDS = {"pinned", "reference", "registered", "built-in", "shipped", "standard"}
TOTAL_BEFORE = re.compile(r"(?:\b(?:suite|goodbench)(?:'s)?\b[^.;:]{0,30}?\b(?:has|ships|holds|contains|offers|"
                          r"with|of|runs)|\b(?:suite|goodbench)'s|\ball(?:\s+of)?(?:\s+its|\s+the)?)\s*$", re.I)


def _text(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("workload_id", list(registry.WORKLOADS))
def test_every_registered_workload_has_its_section(workload_id):
    assert re.search(rf"^## {re.escape(workload_id)}$", _text("docs/workloads.md"), flags=re.M), \
        f"docs/workloads.md has no '## {workload_id}' section (docs/workloads.md, 'Adding a workload')"


def counts(text: str) -> list[tuple[int, str]]:
    """Each count of all the suite's workloads the text states ("five pinned training workloads",
    "the suite has 6 workloads"), with its words; a count of some of them is none."""
    found = []
    for match in COUNT.finditer(text):
        qualifiers = {w.lower() for w in match.group(2).split()}
        if not qualifiers & TOTAL_WORDS and not TOTAL_BEFORE.search(text[max(0, match.start() - 80):match.start()]):
            continue
        word = match.group(1).lower()
        found.append((int(word) if word.isdigit() else NUMBERS[word], " ".join(match.group(0).split())))
    return found


def test_counts_are_read_as_words_and_digits():
    assert counts("Five pinned training\nworkloads, and 3 reference workloads; every workload") == [
        (5, "Five pinned training workloads"), (3, "3 reference workloads")]
    assert counts("The suite has seven workloads. It runs all 4 workloads, and goodbench's 2 workloads") == [
        (7, "seven workloads"), (4, "4 workloads"), (2, "2 workloads")]


def test_a_count_of_some_workloads_is_no_statement_of_the_total():
    assert counts("the two workloads that use a GPU; 3 workloads share a dataset. Of the suite, two "
                  "workloads are vision") == []


@pytest.mark.parametrize("name", ["docs/workloads.md", "README.md"])
def test_no_count_of_workloads_but_the_registrys(name):
    wrong = [words for n, words in counts(_text(name)) if n != len(registry.WORKLOADS)]
    assert not wrong, f"{name} says {wrong}; the registry has {len(registry.WORKLOADS)} (or say no count)"
