"""Text rules shared by the validator and whatever shows document strings: which characters a
results file may not hold, and how untrusted text is made safe to print on one line.

A results file's strings are a submitter's text shown to others: a system name on the leaderboard,
a host name on a run page. Two strings that look the same must be the same string, and a string
must show everything it holds, in order, on its line. Refused, by class (``unicodedata.category``,
the Unicode version of the Python that reads the file):

- **controls** (Cc: C0, DEL, C1) and **lone surrogates** (Cs): not text; a newline or escape
  sequence rewrites a terminal line or a log (:data:`CONTROL_CHARS`, refused since rules v1);
- **format characters** (Cf): invisible by definition — bidirectional overrides, embeddings and
  isolates (they reorder what follows), the Arabic letter mark U+061C, zero-width spaces and
  joiners, the word joiner and invisible operators, the soft hyphen, the byte-order mark, the
  tag characters U+E0001 and U+E0020–E007F: ``"H100"`` and ``"H100"`` + a tag character look
  the same and are two systems;
- **private use** (Co): no meaning outside an agreement between two parties, drawn as whatever
  a font puts there (or nothing);
- **unassigned** code points (Cn, noncharacters included): no glyph yet, so invisible or a box;
  a character assigned after the reading Python's Unicode version is refused too, until it
  knows it;
- **line and paragraph separators** (Zl, Zp): a line break on one line, and **spaces other than
  the ASCII space** (Zs: no-break, em, thin, ideographic, …): ``"A B"`` written with a thin space
  is another name that looks the same;
- **invisible letters and marks** that the categories above do not catch: the Hangul fillers
  U+3164, U+115F, U+1160 and U+FFA0 (letters that draw nothing), the Braille blank U+2800,
  the combining grapheme joiner U+034F, the Khmer inherent vowels U+17B4–17B5, the Mongolian
  variation selectors U+180B–180D and U+180F, and the variation selectors U+FE00–FE0F and
  U+E0100–E01EF — each a Unicode default-ignorable code point or a blank glyph, which a name
  can carry unseen.

That is: every character ``str.isprintable`` refuses (C*, Z* but the ASCII space) and
:data:`INVISIBLE`. The classes added in rules v7 (all but :data:`CONTROL_CHARS`) are reported by
the validator as ``invisible-char`` (suite/validate/walk.py), so a file stored under older rules
keeps its status."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

# Control characters (C0, DEL, C1), lone surrogates, bidirectional overrides and isolates,
# zero-width characters and joiners, invisible operators, deprecated format characters and
# line/paragraph separators: none has a place in a results file (rules v2 added U+2060-206F).
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")

# Invisible characters of categories str.isprintable accepts (letters, marks, a symbol): the
# Hangul fillers, the Braille blank, the grapheme joiner, the Khmer inherent vowels and the
# variation selectors (Unicode's Default_Ignorable_Code_Point outside C*, and U+2800).
INVISIBLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
                       "\U000e0100-\U000e01ef]")


def refused(char: str) -> bool:
    """True for a character that no results file string may hold (the module docstring's classes)."""
    return not char.isprintable() or INVISIBLE.match(char) is not None


def has_control_chars(text: str) -> bool:
    """True when ``text`` holds a character that the validator refuses in any string or key."""
    return not text.isprintable() or INVISIBLE.search(text) is not None


def refused_string_at(value: Any, path: str = "") -> str | None:
    """The path (``/key/0/…``) of the first string, key or value, of a JSON value that holds a
    refused character (:func:`has_control_chars`), or None: a stored document read for the site
    (an MLPerf import, a speedrun track) holds none."""
    if not has_control_chars(" ".join(_strings(value))):  # a per-character test: the space changes nothing
        return None  # the common case, without building every string's path
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if has_control_chars(item):
                return where or "(document)"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if has_control_chars(str(key)):
                    return f"{where}/{printable(str(key))}"
                stack.append((f"{where}/{key}", sub))
        elif isinstance(item, list):
            stack.extend((f"{where}/{i}", sub) for i, sub in enumerate(item))
    return None


def _strings(value: Any) -> Iterable[str]:
    """Every string of a JSON value, keys included (as ``str``), in no particular order."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            yield from map(str, item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def printable(text: str) -> str:
    """``text`` with every refused character written as ``\\uXXXX`` (``\\UXXXXXXXX`` beyond the
    basic plane): one line, nothing reordered or hidden, and the same text back when it holds none."""
    if not has_control_chars(text):
        return text
    return "".join(_escaped(c) if refused(c) else c for c in text)


def printable_lines(text: str) -> str:
    """``text`` with its line breaks kept (``\\n`` only) and every other refused character written as
    ``\\uXXXX`` (:func:`printable`, line by line): goodbench's messages to a terminal, which may
    quote what a results file or a reviewed script wrote (a run id, a seed)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """"1 run", "2 runs"; ``plural`` where adding an s is wrong."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def cut(text: str, limit: int = 80) -> str:
    """``text`` as :func:`printable` writes it, bounded: its first ``limit`` characters as written
    (an escape whole, never cut; a combining mark one character), then "…" where more follows.
    Reads no further than it shows, however long ``text`` is."""
    out: list[str] = []
    used = 0
    for char in text:
        piece = _escaped(char) if refused(char) else char
        if used + len(piece) > limit:
            return "".join(out) + "…"
        out.append(piece)
        used += len(piece)
    return "".join(out)


_SEPARATOR = re.compile(r"[\W_]")  # what ends a word, as the trust labels' check reads words (suite/trust/labels.py)


def cut_words(text: str, limit: int) -> str:
    """``text`` as :func:`cut` bounds it, the cut made after a whole word where one ends in the second
    half of ``limit``, separators dropped before the "…": what is shown never spells a word the whole
    text does not hold ("reproducedly tuned" is never shown "reproduced…"). A word running past the
    second half is cut within itself, leaving more than ``limit // 2 - 2`` of its letters: longer than
    any word of the site's labels for a ``limit`` of 40 or more (tests/test_site_badges.py)."""
    whole, head = printable(text), cut(text, limit)
    if head == whole:
        return whole
    head = head[:-1]  # a prefix of ``whole``, its escapes whole
    end = next((i for i in range(len(head), limit // 2, -1) if _SEPARATOR.match(whole, i)), None)
    return (head if end is None else head[:end]).rstrip(" ,;:-(") + "…"


def safe(text: Any, limit: int = 60) -> str:
    """Text safe to print on one line in a problem: no refused character (each becomes ``?``),
    bounded length; a missing value (JSON's null, Python's None) reads "nothing", never "None"."""
    text = "nothing" if text is None else str(text)
    clean = "".join("?" if refused(c) else c for c in text[:limit + 1])
    return clean if len(clean) <= limit else clean[:limit] + "…"


GITHUB = "https://github.com/"  # the one site a page links a document's or a README's address to


def github_address(url: Any) -> str | None:
    """``url`` where it is an address on GitHub (``https://github.com/…``), else None: a README's
    link, or a stored document's (a speedrun record's PR, an MLPerf result's repository), is
    anyone's text, and a page links only there (a ``javascript:`` link would run on a click)."""
    return url if isinstance(url, str) and url.startswith(GITHUB) else None


def normal_name(text: str) -> str:
    """A name as the leaderboard shows it: Unicode NFC (so "Zürich" is one string however it was
    typed), no space at either end and one ASCII space between words — HTML shows "A  B" and
    "A B " as "A B", and two systems must not look the same."""
    return " ".join(word for word in unicodedata.normalize("NFC", text).split(" ") if word)


def field_path(parts: Iterable[str | int]) -> str:
    """The dotted path of a value (``runs[0].metrics.mfu``), each key made safe."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + safe(part))
    return out
