"""Whether two names read as one at a glance: each name's :func:`skeleton`, after Unicode's
confusables (UTS #39) for the letters and digits a Latin name may hold.

The validator already makes two names that look the same one string (rule ``name-form``: NFC,
one space between words; rule ``invisible-char``) and keeps every letter Latin (rule
``name-trust``). What is left are Latin letters and digits drawn alike ("ACME Hl00 node" for
"ACME H100 node"), accents a glance misses ("ACME H100 nọde") and punctuation drawn alike (a
U+2010 hyphen for "-"). Names that differ by what reads differently ("H100 x8" and "H100 x4")
keep different skeletons.
"""
from __future__ import annotations

import re
import unicodedata

from suite.trust.labels import unmarked

_DRAWN_ALIKE = str.maketrans({"1": "l", "i": "l", "|": "l", "!": "l", "0": "o", "5": "s", "8": "b"})
"""Characters drawn as another, after case folding ("I" is "i"), as Unicode's confusables pair them:
the digit one, a capital I and a small l; the digit zero and the letter o; and, drawn alike in
many fonts though Unicode does not pair them, 5 and S, 8 and B (trial 12: "Lab 8ox" for "Lab Box")."""

_PAIRS_ALIKE = (("rn", "m"), ("vv", "w"), ("cl", "d"))
"""Two letters drawn as one ("rn" for "m", "cl" for "d")."""


def _ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of another script made the ASCII digit of its value:
    the Myanmar "၀" (U+1040), the Devanagari "०", the Thai "๐" are drawn as a zero (trial 12:
    "Lab 1၀၀ cluster" for "Lab 100 cluster"); NFKC leaves them as they are."""
    return "".join(str(unicodedata.decimal(c)) if not c.isascii() and unicodedata.decimal(c, None) is not None
                   else c for c in text)


def skeleton(name: str) -> str:
    """``name`` as it reads at a glance: compatibility- and case-folded, without accents
    (:func:`suite.trust.labels.unmarked`: "nọde" is "node"), letter pairs drawn as one letter made
    that letter ("rn" is "m"), digits of other scripts ASCII ("၀" is "0"), characters drawn alike
    made one ("1", "I" and "l" are "l", "0" is "o"), and each run of spaces and punctuation one space ("node‐x" with U+2010 is "node x", as
    is "node-x"). Two names of one skeleton read as one name."""
    folded = _ascii_digits(unmarked(name)).translate(_DRAWN_ALIKE)  # first: "c1uster" is "cluster", then "duster"
    for pair, letter in _PAIRS_ALIKE:
        folded = folded.replace(pair, letter)
    return " ".join(w for w in re.split(r"[\W_]+", folded) if w)
