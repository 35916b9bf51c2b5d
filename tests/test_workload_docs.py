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


def _text(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("workload_id", list(registry.WORKLOADS))
def test_every_registered_workload_has_its_section(workload_id):
    assert re.search(rf"^## {re.escape(workload_id)}$", _text("docs/workloads.md"), flags=re.M), \
        f"docs/workloads.md has no '## {workload_id}' section (docs/workloads.md, 'Adding a workload')"


def counts(text: str) -> list[tuple[int, str]]:
    """Each count of workloads the text states ("five pinned training workloads"), with its words."""
    found = []
    for match in COUNT.finditer(text):
        word = match.group(1).lower()
        found.append((int(word) if word.isdigit() else NUMBERS[word], " ".join(match.group(0).split())))
    return found


def test_counts_are_read_as_words_and_digits():
    assert counts("Five pinned training\nworkloads, and 3 workloads; every workload") == [
        (5, "Five pinned training workloads"), (3, "3 workloads")]


@pytest.mark.parametrize("name", ["docs/workloads.md", "README.md"])
def test_no_count_of_workloads_but_the_registrys(name):
    wrong = [words for n, words in counts(_text(name)) if n != len(registry.WORKLOADS)]
    assert not wrong, f"{name} says {wrong}; the registry has {len(registry.WORKLOADS)} (or say no count)"
