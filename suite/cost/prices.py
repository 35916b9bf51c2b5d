"""The price table: on-demand list prices per accelerator-hour, each with its provider,
offering, source page and date (``prices.toml`` beside this module, or a user's file in the same
format), and the one price per class a cost is computed with.

A class's price is the median of its entries' prices per accelerator-hour, or the entry marked
``default = true``. A user's own prices replace it: ``--price-file FILE`` (the table's format)
in place of the shipped table, ``--price "CLASS=USD"`` for one class. Bad input — a price that is
negative, zero, NaN, infinite, huge or not a number, an unknown class or field, text with control
or bidirectional characters, a malformed date, a page read after today (in a user's file: the shipped
table is not held to this machine's clock, which may be behind the day its pages were read) — is
refused with one line naming it (:class:`suite.record.errors.GoodbenchError`), never a traceback.
"""
from __future__ import annotations

import datetime
import math
import re
import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path

from suite.cost import classes
from suite.cost.classes import PriceClass
from suite.record.errors import GoodbenchError
from suite.record.text import has_control_chars, printable, safe

TABLE = Path(__file__).with_name("prices.toml")
MAX_BYTES = 1_000_000
MAX_ENTRIES = 1_000
MAX_TEXT = 300
MAX_PRICE_USD = 1_000.0  # per accelerator-hour: ten times the dearest rack-scale part's list price
# Lower bounds, per accelerator-hour and per vCPU-hour: a tenth of the cheapest list price of the
# table's kind (a cloud's smallest GPU, e.g. a T4, lists at about $0.35 an hour; a vCPU with its
# memory at about $0.01-0.03). A price below is a slip of the decimal point, not a price.
MIN_PRICE_USD = 0.03
MIN_CORE_PRICE_USD = 0.001
MAX_ACCELERATORS = 72    # a price quoted for a whole NVL72 rack
MAX_KWH_PRICE_USD = 10.0  # per kWh: twenty times the dearest retail electricity
MIN_KWH_PRICE_USD = 0.01  # per kWh: a fifth of the cheapest industrial retail electricity
CLOCK_SKEW = datetime.timedelta(days=1)  # a page read "today" where the reader's day is ahead of this machine's
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+", re.ASCII)  # what --price takes: 2, 2.49, .5
KINDS = ("hyperscaler", "other cloud")  # an entry's provider: AWS, Azure, Google Cloud, Oracle Cloud; or any other
ELECTRICITY_FIELDS = ("price_usd_per_kwh", "offering", "source", "address", "date", "read")
FIELDS = {"class": str, "provider": str, "kind": str, "offering": str, "price_usd_per_hour": float,
          "accelerators": int, "source": str, "address": str, "date": str, "read": str, "default": bool,
          "undated": bool}
REQUIRED = ("class", "provider", "offering", "price_usd_per_hour", "source", "address", "date", "read")
USER = "user-supplied"


@dataclass(frozen=True)
class Entry:
    """One provider's price for one class, as the table states it."""

    cls: PriceClass
    provider: str
    offering: str
    price_usd_per_hour: float  # as quoted, for ``accelerators`` accelerators
    source: str
    address: str
    date: str
    read: str
    accelerators: int = 1
    default: bool = False
    kind: str | None = None  # "hyperscaler" or "other cloud" (:data:`KINDS`); None: not said
    undated: bool = False  # the page states no date: ``date`` is only the day it was read

    @property
    def per_accelerator_hour(self) -> float:
        """The quoted price over the accelerators (or cores) it covers."""
        return self.price_usd_per_hour / self.accelerators


@dataclass(frozen=True)
class Price:
    """The price one class's costs are computed with, and where it comes from."""

    cls: PriceClass
    usd_per_hour: float
    source: str   # "median of 2: Lambda, RunPod", a provider's name, or "user-supplied"
    date: str     # the entries' date, their first and last "2026-03-17..2026-05-22", or, for pages that
                  # state no date, "undated page, read 2026-11-28" (:func:`dates`)
    entries: tuple[Entry, ...]

    @property
    def kind(self) -> str | None:
        """The kind of provider the price is from: "hyperscaler", "other cloud", "hyperscaler and
        other cloud" where the class's entries mix them, None where no entry says."""
        kinds = [k for k in KINDS if any(e.kind == k for e in self.entries)]
        return " and ".join(kinds) or None

    def words(self) -> str:
        """The honest words under a cost: whose list price of when, not what was paid
        (:func:`list_price`)."""
        kind = f"{self.kind} prices" if self.kind else None
        return f"{list_price(self.date, self.source, kind)}, not what the submitter paid"


UNDATED = "undated page"  # how :func:`dates` names a page that states no date


def dates(entries: tuple[Entry, ...] | list[Entry]) -> str:
    """When a class's prices are of: its dated entries' date, or their first and last
    ("2026-03-17..2026-05-22"); an entry from a page that states no date says so and the day it was
    read ("undated page, read 2026-11-28"; "undated pages" where the entries come from more than
    one page), never passing that day off as the price's date."""
    dated = sorted({e.date for e in entries if not e.undated})
    undated = [e for e in entries if e.undated]
    parts = [dated[0] if len(dated) == 1 else f"{dated[0]}..{dated[-1]}"] if dated else []
    if undated:
        pages = len({e.address for e in undated})
        parts.append(f"{UNDATED}{'s' if pages > 1 else ''}, read {' and '.join(sorted({e.read for e in undated}))}")
    return "; ".join(parts)


def list_price(date: str, source: str, kind: str | None = None) -> str:
    """"list price of 2026-03-17 from Lambda (other cloud prices)": a price's date
    (:func:`dates`), its source and the kind of its providers as a cost's words say them; a page
    that states no date is said as one, never as the page's own price or of the day it was read:
    "list price from Google Cloud (hyperscaler prices; a page that states no date, read 2026-11-28)"."""
    dated, found, undated = date.partition(UNDATED)
    if not found:
        return f"list price of {date} from {source}" + (f" ({kind})" if kind else "")
    plural, _, reads = undated.partition("read ")
    page = ("pages that state no date" if plural.startswith("s") else "a page that states no date") + f", read {reads}"
    dated = dated.rstrip("; ")
    when = f"dated {dated}, and from {page}" if dated else page
    return f"list price from {source} ({f'{kind}; ' if kind else ''}{when})"


@dataclass(frozen=True)
class Electricity:
    """The electricity price an energy cost is computed with (USD per kWh), and its source."""

    usd_per_kwh: float
    offering: str
    source: str
    address: str
    date: str
    read: str

    def words(self) -> str:
        """What an energy cost at this price is."""
        return f"{self.offering} of {self.date} from {self.source}, not what the submitter paid"


@dataclass
class Table:
    """The entries of a price table, its electricity price and the user's prices given on the
    command line."""

    entries: list[Entry]
    origin: str
    overrides: dict[str, float] | None = None
    electricity: Electricity | None = None

    def price(self, cls: PriceClass | None) -> Price | None:
        """The price of a class (None: no class, or no entry and no price given)."""
        if cls is None:
            return None
        if self.overrides and cls.name in self.overrides:
            return Price(cls, self.overrides[cls.name], f"{USER} --price", today().isoformat(), ())
        mine = tuple(e for e in self.entries if e.cls is cls)
        if not mine:
            return None
        chosen = [e for e in mine if e.default]
        if chosen:
            e = chosen[0]
            return Price(cls, e.per_accelerator_hour, f"{e.provider} ({e.source})", dates([e]), mine)
        value = statistics.median(e.per_accelerator_hour for e in mine)
        providers = ", ".join(dict.fromkeys(e.provider for e in mine))
        source = providers if len(mine) == 1 else f"the median of {len(mine)} prices: {providers}"
        return Price(cls, value, source, dates(mine), mine)

    def price_of(self, accelerator: str | None, memory_gib: float | None = None) -> Price | None:
        """The price of the class an accelerator name is in (:func:`suite.cost.classes.of_accelerator`)."""
        return self.price(classes.of_accelerator(accelerator, memory_gib))


def today() -> datetime.date:
    """This machine's day (a function, so that a test can set it)."""
    return datetime.date.today()


def _refuse(where: str, what: str) -> GoodbenchError:
    return GoodbenchError(f"{where}: {what}")


def _text(where: str, key: str, value) -> str:
    if not isinstance(value, str):
        raise _refuse(where, f"{key} must be text, not {type(value).__name__}")
    if has_control_chars(value) or not value.isprintable():
        raise _refuse(where, f"{key} '{printable(value)[:80]}' holds a control, bidirectional or invisible "
                             "character")
    if not value.strip() or len(value) > MAX_TEXT:
        raise _refuse(where, f"{key} must be 1 to {MAX_TEXT} characters")
    return value.strip()


def check_price(where: str, value, minimum: float = MIN_PRICE_USD, maximum: float = MAX_PRICE_USD,
                per: str = "accelerator-hour", said: str | None = None) -> float:
    """A price per hour in USD: a finite number from ``minimum`` to ``maximum`` (per ``per``).
    ``said``: how the refusal names the value, where it is not the price as given (a quoted
    price over the units it covers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(where, f"price {safe(value, 40)!r} is not a number")
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise _refuse(where, f"price {value} is not a finite number")
    said = said or f"price {value:g}"
    if value <= 0:
        raise _refuse(where, f"{said} must be above 0")
    if value > maximum:
        raise _refuse(where, f"{said} is over {maximum:g} USD per {per}")
    if value < minimum:
        raise _refuse(where, f"{said} is below {minimum:g} USD per {per}, the least a list price of "
                             "this kind is (a slip of the decimal point?)")
    return value


def minimum(cls: PriceClass) -> float:
    """The least price per unit-hour a class's price may be (:data:`MIN_PRICE_USD`, or
    :data:`MIN_CORE_PRICE_USD` for the CPU's vCPU)."""
    return MIN_CORE_PRICE_USD if cls.unit != "accelerator" else MIN_PRICE_USD


def _date(where: str, key: str, value) -> str:
    """A day YYYY-MM-DD from 2000 on; for ``date``, also a month YYYY-MM (a page that states its
    price "as of June 2026")."""
    text = _text(where, key, value)
    month = key == "date" and re.fullmatch(r"[0-9]{4}-[0-9]{2}", text, re.ASCII) is not None
    form = "YYYY-MM-DD (or YYYY-MM)" if key == "date" else "YYYY-MM-DD"
    try:
        day = datetime.date.fromisoformat(text + "-01" if month else text)
    except ValueError:
        raise _refuse(where, f"{key} {text!r} is not a date {form}") from None
    if len(text) != (7 if month else 10) or day.year < 2000:
        raise _refuse(where, f"{key} {text!r} is not a date {form} from 2000 on")
    return text


def _address(where: str, value) -> str:
    address = _text(where, "address", value)
    if not address.startswith(("https://", "http://")) or " " in address:
        raise _refuse(where, f"address {address!r} is not an http(s) address")
    return address


def _fields(where: str, raw, allowed, required, what: str) -> dict:
    """``raw`` as a table holding only ``allowed`` fields and every ``required`` one; refused
    naming the first field that is not so (``what`` says what the table is)."""
    if not isinstance(raw, dict):
        raise _refuse(where, f"{what} must be a table of fields")
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise _refuse(where, f"unknown field {safe(unknown[0], 40)!r} (fields: {', '.join(allowed)})")
    missing = [k for k in required if k not in raw]
    if missing:
        raise _refuse(where, f"missing field {missing[0]!r}")
    return raw


def _electricity(where: str, raw, shipped: bool = False) -> Electricity:
    raw = _fields(where, raw, ELECTRICITY_FIELDS, ELECTRICITY_FIELDS, "[electricity]")
    value = check_price(where, raw["price_usd_per_kwh"], MIN_KWH_PRICE_USD, MAX_KWH_PRICE_USD, "kWh")
    date, read = _date(where, "date", raw["date"]), _date(where, "read", raw["read"])
    _dated_before_read(where, date, read, shipped)
    return Electricity(value, _text(where, "offering", raw["offering"]), _text(where, "source", raw["source"]),
                       _address(where, raw["address"]), date, read)


def _dated_before_read(where: str, date: str, read: str, shipped: bool = False) -> None:
    """``date`` no later than ``read``, and in a user's file (not ``shipped``) ``read`` no later
    than today (a day's skew allowed). The shipped table is not held to the clock: on a machine
    whose clock is behind the day its pages were read, its user could not fix it."""
    day = today()
    if not shipped and datetime.date.fromisoformat(read) > day + CLOCK_SKEW:
        raise _refuse(where, f"read {read} is after today ({day.isoformat()}): a page cannot have been read "
                             "in the future")
    if date > read[:len(date)]:
        raise _refuse(where, f"date {date} is after read {read}: a page cannot state a price after the day it "
                             "was read")


def _entry(where: str, raw, shipped: bool = False) -> Entry:
    raw = _fields(where, raw, FIELDS, REQUIRED, "an entry")
    name = _text(where, "class", raw["class"])
    cls = classes.named(name)
    if cls is None:
        split = classes.SPLIT.get(name.lower())
        raise _refuse(where, f"unknown class {name!r} " + (
            f"(split by form factor: {' or '.join(split)})" if split else "(goodbench prices lists the classes)"))
    address = _address(where, raw["address"])
    count = raw.get("accelerators", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_ACCELERATORS:
        raise _refuse(where, f"accelerators must be a whole number from 1 to {MAX_ACCELERATORS}")
    if count > cls.largest_quote:
        raise _refuse(where, f"accelerators {count}: {cls.name} is sold by the {cls.unit} or in {cls.quoted_in} "
                             f"of at most {cls.largest_quote}, so no price of it covers {count}")
    default, undated = raw.get("default", False), raw.get("undated", False)
    if not isinstance(default, bool) or not isinstance(undated, bool):
        raise _refuse(where, f"{'default' if not isinstance(default, bool) else 'undated'} must be true or false")
    kind = raw.get("kind")
    if kind is not None and kind not in KINDS:
        raise _refuse(where, f"kind {safe(kind, 40)!r} is not one of: {', '.join(KINDS)}")
    # a number above 0 as quoted; its bounds are the class's, per unit (a 1-vCPU CPU entry at $0.02
    # is a vCPU's price, held to the vCPU's floor, not the accelerator's)
    quoted = check_price(where, raw["price_usd_per_hour"], minimum=0.0, maximum=math.inf)
    said = f"price {quoted:g}" + (f" for {count} {cls.unit}s ({quoted / count:g} per {cls.unit}-hour)" if count > 1 else "")
    check_price(where, quoted / count, minimum(cls), per=f"{cls.unit}-hour", said=said)
    date, read = _date(where, "date", raw["date"]), _date(where, "read", raw["read"])
    _dated_before_read(where, date, read, shipped)
    if undated and date != read:
        raise _refuse(where, f"undated = true says the page states no date, so date must be the day it was read "
                             f"({read}), not {date}")
    return Entry(cls=cls, provider=_text(where, "provider", raw["provider"]),
                 offering=_text(where, "offering", raw["offering"]),
                 price_usd_per_hour=quoted, source=_text(where, "source", raw["source"]), address=address,
                 date=date, read=read, accelerators=count, default=default, kind=kind, undated=undated)


def parse(data: bytes, origin: str, shipped: bool = False) -> Table:
    """A table from the bytes of a price file (``origin``: its name in messages; ``shipped``: the
    table shipped beside this module, whose read days are not held to this machine's clock)."""
    where = printable(origin)
    if len(data) > MAX_BYTES:
        raise _refuse(where, f"over {MAX_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(where, "not UTF-8 text") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _refuse(where, f"not a price table (TOML): {printable(str(exc))}") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise _refuse(where, "not a price table (TOML): nested too deep") from None
    extra = sorted(set(doc) - {"entry", "electricity"})
    if extra:
        raise _refuse(where, f"unknown key {safe(extra[0], 40)!r}: a price table holds [[entry]] tables and "
                             "one [electricity] table only")
    raw = doc.get("entry", [])
    if not isinstance(raw, list) or len(raw) > MAX_ENTRIES:
        raise _refuse(where, f"[[entry]] must be a list of at most {MAX_ENTRIES:,} tables")
    entries = [_entry(f"{where}: entry {i + 1}", e, shipped) for i, e in enumerate(raw)]
    for cls in classes.CLASSES:
        if sum(e.default for e in entries if e.cls is cls) > 1:
            raise _refuse(where, f"{cls.name}: more than one entry says default = true")
    electricity = _electricity(f"{where}: [electricity]", doc["electricity"], shipped) if "electricity" in doc else None
    return Table(entries, origin, electricity=electricity)


def load(path: str | Path | None = None) -> Table:
    """The shipped table (``path`` None) or a user's price file."""
    if path is None:
        return parse(TABLE.read_bytes(), "suite/cost/prices.toml", shipped=True)
    from suite.record.reading import read_bounded

    data, problems = read_bounded(Path(path).resolve(), MAX_BYTES)  # the user's: a link followed, to a regular file
    if data is None and problems[0].code != "not-json":  # an empty file is an empty table
        raise _refuse(printable(str(path)), problems[0].reason)
    return parse(data or b"", str(path))


def override(table: Table, given: list[str]) -> Table:
    """``table`` with the user's ``--price "CLASS=USD"`` prices: CLASS is a class's name or an
    accelerator name in one ("NVIDIA H100" → "NVIDIA H100 SXM")."""
    prices = dict(table.overrides or {})
    for item in given:
        where = f"--price {printable(item)[:80]!r}"
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or "=" in value:
            raise _refuse(where, "must be CLASS=USD with one '=', e.g. \"NVIDIA H100=2.49\"")
        name = _text(where, "class", name)
        cls = classes.of_accelerator(name)
        if cls is None:
            raise _refuse(where, f"unknown class {name!r} (goodbench prices lists the classes)")
        if not _DECIMAL.fullmatch(value.strip()):  # float() also takes "1_000", "1e3", "٢", "inf"
            raise _refuse(where, f"price {safe(value, 40)!r} is not a decimal number in ASCII digits (e.g. 2.49)")
        prices[cls.name] = check_price(where, float(value.strip()), minimum(cls), per=f"{cls.unit}-hour")
    return Table(table.entries, table.origin, prices, table.electricity)


def from_arguments(price_file: str | None, given: list[str] | None) -> Table:
    """The table a command prices with: the user's file or the shipped one, then ``--price``."""
    table = load(price_file)
    return override(table, given) if given else table
