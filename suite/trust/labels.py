"""The words the site uses to say how far a result can be trusted, in one place: each entry's
level (:data:`LEVEL_TEXT`), what a copy or a disputed run reads (:data:`COPY_TEXT`), what a
run page says of reproductions (:data:`REPRODUCTION_TEXT`) and what a reproduction of own code
proves (:data:`OWN_RERUN_TEXT`, :data:`CODE_READ_TEXT`). The leaderboard and the site show
them; the validator refuses a submitter's name that would read as one of them
(:func:`trust_words_in`, rule ``name-trust``), so that a system named "H100 x8 - reproduced by a
trusted reviewer" cannot label itself."""
from __future__ import annotations

import re
import unicodedata

from suite.record.limits import MAX_STRING_CHARS
from suite.record.text import has_control_chars, safe

LEVEL_TEXT = {
    "reproduced": "reproduced by a trusted reviewer",
    "differs": "a trusted reviewer's reproduction differs",
    "rerun": "re-run by a trusted reviewer",
    "signed": "signed, not reproduced",
    "unsigned": "unsigned, not reproduced",
}
"""An entry's trust level → what its row says (:mod:`suite.leaderboard.trust`)."""

COPY_TEXT = {
    "disputed": ("disputed: the same run as one signed by", " and stored first, not ranked"),
    "copy-unsigned": ("copy of an unsigned run stored first", ", not ranked"),
    "copy-signed": ("copy of a run signed by", ", not ranked"),
}
"""What a copy's or a disputed run's row says: (lead, tail), the kept run's signer between them."""

REPRODUCTION_TEXT = {"reproduced": "reproduced", "rerun": "re-run", "differs": "differs", "inconclusive": "inconclusive",
                     "unverified": "unverified claims", "not-counted": "not counted", "reviewers": "reviewed by"}
"""How a run page says what came of each reproduction (:mod:`suite.site.run_page`)."""

OWN_RERUN_TEXT = ("the submitter's code gave the same figures again; what it does between its step edges is its "
                  "own (the reviewer did not attest to reading it)")
"""What a trusted reviewer's re-run of own code without an attestation of reading it
(``rerun``) proves, beside its label: re-running the submitter's code reproduces whatever that
code does, sleeping and reporting stored losses included."""

CODE_READ_TEXT = "attested reading its code at commit"
"""How a row and a run page name an own-code reproduction's attestation ("<reviewer> attested
reading its code at commit 16b0df863cf5"): only with one does an own-code re-run read
``reproduced``. Like :data:`OWN_RERUN_TEXT`, never part of a label a name could spell alone:
both stand beside a label of :data:`LEVEL_TEXT`, whose words a name may not hold."""

TIMING_TEXT = ("two clocks", "one clock", "self-timed")
"""How an own-code row says it was timed (the site's ``TWO_CLOCKS`` and ``OWN_TIMING`` open so): a
name holding one of these phrases, its words run together or apart, reads as that label."""

CLAIM_WORDS = ("audited", "certified", "official", "endorsed", "validated", "vetted", "attested", "checked", "stamped",
               "approved", "notarized", "notarised", "repro", "reprod",
               # trial 16: the same claims in other words, or another tense
               "original", "originals", "legit", "legitimate", "bonafide", "reran", "rerunning", "rerunned")
"""Words no label of the site uses but that read as one (a system "audited by MLCommons")."""

CLAIM_STEMS = ("reproduc", "trust", "verif", "certif", "attest", "confirm", "genuin", "authentic", "notari", "endors")
"""The stems of claims whose every word reads as one ("reproducible", "trustworthy", "verifiably",
"confirmed", "genuine"; trial 16): a word beginning with one is refused, and words run together
into one of its family (:data:`STEM_ENDINGS`: "re-producible", "trust worthy")."""

STEM_ENDINGS = ("", "e", "ed", "es", "s", "er", "ers", "ing", "ible", "ibly", "ibility", "able", "ably", "ion",
                "ions", "tion", "tions", "ation", "ations", "ied", "ies", "y", "iable", "iably", "ication", "ly",
                "edly", "ity", "worthy", "ful", "ment", "ine", "ize", "ise", "ized", "ised")
"""How a stem of :data:`CLAIM_STEMS` ends in the words of its family, found run together from
words split apart (only a whole word is matched by its beginning: "con firmware" is no claim)."""

CLOCK_COUNTS = ("one", "two", "2", "i", "ii", "2x", "x2", "2nd", "single", "dual", "double", "second", "twin", "both",
                "three", "e", "triple", "multi", "multiple", "several", "many", "agree", "agreeing", "self",
                "bi", "twice", "cross", "paired")
"""Words that count clocks, or say they agree, beside one of :data:`CLOCK_WORDS` ("2 clocks",
"two-clock", "dual clock", "Ⅱ clocks", "clocks x2", "double-clocked", "triple-clocked", "dual-timer",
"clocks agree", and since trial 16 "bi-clocked", "twice timed", "cross-timed"): with it they read
as :data:`TIMING_TEXT` (a ``1`` is read as ``i`` and a ``3`` as ``e``, as look-alikes)."""

CLOCK_WORDS = ("clock", "clocks", "clocked", "clocking", "clk", "clks", "timer", "timers")
"""The words for a clock that :data:`CLOCK_COUNTS` count."""

TIMED_WORDS = ("timed", "timing", "timings")
TIMED_COUNTS = ("two", "dual", "double", "twice", "bi", "cross", "twin", "triple", "three", "multi", "paired", "both")
"""Words that say how often a run was timed, and the counts that make them read as the two-clock
label ("dual-timed", "twice timed", "cross-timed"; trial 16): only words, as a number beside
"timed" counts something else ("fastest of 3 timed batches")."""

_SIGNS = frozenset("×±°·÷→≤≥≈")
"""The symbols outside ASCII a system's name may hold ("H100 ×8"); any other symbol is refused with
the letters that are not Latin, as letterlike symbols and operators draw letters ("r℮produc℮d")."""


# words of the phrases above that say nothing of trust by themselves
_FUNCTION_WORDS = frozenset({"a", "an", "and", "as", "by", "first", "not", "of", "on", "one", "re", "run", "same",
                             "the"})

_LOOK_ALIKES = str.maketrans({
    # Cyrillic, Greek and other letters drawn as a Latin one (after case folding), as Unicode's
    # confusables list (UTS #39) pairs them
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k", "ӏ": "l",
    "м": "m", "о": "o", "р": "p", "ԛ": "q", "г": "r", "ѕ": "s", "т": "t", "у": "y", "ԝ": "w", "х": "x",
    "ԁ": "d", "с": "c", "ɡ": "g", "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "γ": "y", "ı": "i", "ȷ": "j", "μ": "u", "ϳ": "j",
    "σ": "c",  # after NFKC and case folding: the lunate sigma "ϲ" is "σ"
    # digits written for letters
    "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
})


_PLAIN_LETTERS = {"đ": "d", "ð": "d", "ħ": "h", "ı": "i", "ł": "l", "ŀ": "l", "ø": "o", "ŧ": "t", "ĸ": "k",
                  "ŋ": "n", "æ": "ae", "œ": "oe", "þ": "th"}
"""The Latin letters of European names that Unicode does not decompose into a plain letter and
marks, with the plain letters they carry (and "ß", which case folding makes "ss")."""
_PLAIN = str.maketrans(_PLAIN_LETTERS)
_LATIN_UNDECOMPOSED = frozenset(_PLAIN_LETTERS) | {"ß"}


def unmarked(text: str) -> str:
    """``text`` compatibility-folded (NFKC: full-width and styled letters, "Ⅱ", become plain) and
    case-folded, its letters without their accents (a combining mark, or one Unicode composes:
    "reproduceḍ" is "reproduced"), its undecomposed Latin letters plain."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(c for c in folded if not unicodedata.combining(c)).translate(_PLAIN)


def _words(text: str) -> list[str]:
    """``text``'s words, :func:`unmarked`, look-alike letters and digits read as the Latin letter
    they are drawn as ("vv" as "w"), without a possessive ``'s``; anything but a letter or digit
    separates words, an apostrophe and an underscore too ("'reproduced'", "two_clocks", "re'produced":
    a label's words split apart are found run together by :func:`trust_words_in`)."""
    folded = unmarked(text).translate(_LOOK_ALIKES).replace("vv", "w")
    return [w for w in re.split(r"[\W_]+", re.sub(r"['\u2019]s\b", "", folded)) if w]


def _trust_words() -> frozenset[str]:
    """Every word of the site's trust phrases but the function words, each also without its
    negation (``unsigned`` → ``signed``, ``unverified`` → ``verified``), a noun also in its plural."""
    phrases = [*LEVEL_TEXT.values(), *(part for pair in COPY_TEXT.values() for part in pair), *REPRODUCTION_TEXT.values()]
    words = {w for phrase in phrases for w in _words(phrase)} - _FUNCTION_WORDS
    words |= {w[2:] for w in words if w.startswith("un") and len(w) > 4}
    words |= set(CLAIM_WORDS) | {"".join(_words(phrase)) for phrase in (*TIMING_TEXT, *REPRODUCTION_TEXT.values())}
    words |= {pair for count in CLOCK_COUNTS for clock in CLOCK_WORDS
              for pair in (count + clock, clock + count)}
    words |= {pair for count in TIMED_COUNTS for timed in TIMED_WORDS for pair in (count + timed, timed + count)}
    words |= {stem + ending for stem in CLAIM_STEMS for ending in STEM_ENDINGS}
    return frozenset(words | {w + "s" for w in words if not w.endswith(("s", "ed"))})


TRUST_WORDS = _trust_words()
"""The words a submitter's name may not hold: those the site's trust labels are made of, the
timing and reproduction phrases run together (``twoclocks``, ``rerun``: "re" and "run" alone say
nothing), :data:`CLAIM_WORDS`, and the family of each of :data:`CLAIM_STEMS`."""


def trust_words_in(name: str) -> list[str]:
    """The words of ``name`` that the site's trust labels use (empty: it reads as no label), each
    also found run together from neighbouring words ("RE-PRODUCED", "r e p r o d u c e d",
    "two clocks"), and its words beginning with a stem of a claim ("reproducible", "trustworthy")."""
    words = _words(name)[:MAX_STRING_CHARS]
    spans = ("".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1))
    return sorted({w for w in spans if w in TRUST_WORDS} | {w for w in words if w.startswith(CLAIM_STEMS)})


def trust_words_said(text: str) -> str | None:
    """``text`` and the words of the site's trust labels it holds, said for a refusal (None: none)."""
    found = trust_words_in(text)
    return f"\u201c{safe(text)}\u201d holds {', '.join(map(repr, found))}, a word of the site's trust labels" if found else None


def foreign_letters(name: str, greek: bool = False) -> list[str]:
    """The letters of ``name`` that are not Latin (empty: it is written in Latin letters, accents
    allowed): letters of other scripts, Latin small capitals and phonetic letters, and symbols but
    a few signs (:data:`_SIGNS`), which the look-alike table cannot all list (Armenian "օ",
    Cyrillic "ѵ", "ʀᴇᴘʀᴏᴅᴜᴄᴇᴅ" spell a label's words as well as Latin letters do)."""
    found = set()
    for char in unicodedata.normalize("NFKC", name):
        if greek and "\u0370" <= char <= "\u03ff":  # a description's "μP", "β2": read through the look-alikes
            continue
        if unicodedata.category(char) in ("So", "Sm") and not char.isascii() and char not in _SIGNS:
            found.add(char)  # a letterlike symbol ("℮") or an operator drawn as a letter ("∘")
        if not char.isalpha() or char.isascii() or char.lower() in _LATIN_UNDECOMPOSED:
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
        if not base.isascii():
            found.add(char)
    return sorted(found)


def label_refusal(name: str, description: bool = False) -> str | None:
    """Why the text ``name`` would read as one of the site's labels, in the validator's terms (rule
    ``name-trust``; None: it would not): a word of the labels, or a letter outside the Latin
    alphabet that could draw one. A ``description`` (what own code trains) may hold Greek letters
    ("μP", "β2"): they are read through the look-alike table, not refused."""
    said = trust_words_said(name)
    if said is not None:
        return f"{said}: a name may not read as a label the site gives"
    foreign = foreign_letters(name, greek=description)
    if foreign:
        return (f"\u201c{safe(name)}\u201d holds {', '.join(map(repr, foreign[:5]))}, not a Latin letter: the names the site "
                "shows are written in Latin letters (accents allowed), so that no look-alike letter can spell one "
                "of its trust labels")
    return None


def name_refusal(name: object, description: bool = False) -> str | None:
    """Why ``name`` cannot be a name the site shows, in the validator's terms (None: it can): not
    text, too long, a character no results file may hold (rules ``control-char``,
    ``invisible-char``: bidirectional overrides, zero-width and other invisible characters), or a
    word of the site's trust labels or a letter that is not Latin (rule ``name-trust``,
    :func:`label_refusal`)."""
    if not isinstance(name, str):
        return f"a name is text, not {type(name).__name__}"
    if len(name) > MAX_STRING_CHARS:
        return f"{len(name)} characters, more than the {MAX_STRING_CHARS} a results file's string may hold"
    if has_control_chars(name):
        return (f"{safe(name)} holds a control, bidirectional or invisible character (shown as ?), which no "
                "results file may hold")
    return label_refusal(name, description)


WITHHELD = "(withheld)"
"""What a busy process's name is recorded as where it reads as one of the site's trust labels
("trustd", "verifier"): rule ``name-trust`` refuses such text in a file (the run page shows the
names), and another program's name on an honest machine must not get its run refused."""


def names_withheld(load: dict | None) -> dict | None:
    """A host-load reading (:mod:`suite.meters.host_load`: ``busy[]`` of ``{"name", ...}``) with each
    name that reads as a trust label (:func:`label_refusal`) recorded as :data:`WITHHELD`."""
    if not isinstance(load, dict) or not isinstance(load.get("busy"), list):
        return load
    busy = [{**b, "name": WITHHELD} if isinstance(b, dict) and isinstance(b.get("name"), str)
            and label_refusal(b["name"]) is not None else b for b in load["busy"]]
    return {**load, "busy": busy}
