"""The price table (suite/cost/prices.py, prices.toml) and ``goodbench prices``: every entry
sourced and dated, a class's price the median of its entries (or the one marked default), the
user's own prices, accelerator names matched by the peak table's matcher, and a hostile price
file or --price refused in one line, exit 1, no traceback."""
from __future__ import annotations

import datetime
import re
import statistics
import tomllib
from pathlib import Path

import pytest

from suite.cli import main
from suite.cost import classes, prices
from suite.record.errors import GoodbenchError

REPO = Path(__file__).resolve().parent.parent

ENTRY = """[[entry]]
class = "NVIDIA H100 SXM"
provider = "Example Cloud"
offering = "H100 SXM, on-demand, per GPU"
price_usd_per_hour = 2.5
source = "Example pricing page"
address = "https://example.com/pricing"
date = "2026-11-01"
read = "2026-11-28"
"""


def test_the_shipped_table_has_every_class_the_issue_names_and_every_entry_is_sourced_and_dated():
    table = prices.load()
    named = {c.name for c in classes.CLASSES}
    for wanted in ("NVIDIA H100 SXM", "NVIDIA H200 SXM", "NVIDIA B200", "NVIDIA GB200", "NVIDIA A100 SXM 40GB",
                   "NVIDIA A100 SXM 80GB", "NVIDIA A100 PCIe 80GB", "AMD Instinct MI300X", "AMD Instinct MI325X", "AMD Instinct MI355X",
                   "Google TPU v5e", "Google TPU v5p", "Google TPU Trillium (v6e)", "Intel Gaudi 2",
                   "Intel Gaudi 3", "NVIDIA L40S", "CPU"):
        assert wanted in named
    assert len(table.entries) >= 15
    for e in table.entries:
        assert e.address.startswith("https://") and e.source and e.provider and e.offering
        assert e.date <= e.read[:len(e.date)] and e.read <= datetime.date.today().isoformat()
        assert not e.undated or e.date == e.read  # an undated page's date is only the day it was read
    assert next(c for c in classes.CLASSES if c.name == "CPU").unit == "vCPU"
    assert all(e.kind in prices.KINDS for e in table.entries)  # every shipped entry says its provider's kind


def test_a_class_price_is_the_median_of_its_entries_per_accelerator_and_no_entry_is_no_price():
    table = prices.load()
    raw = tomllib.loads(prices.TABLE.read_text(encoding="utf-8"))["entry"]
    for cls in classes.CLASSES:
        quoted = [e["price_usd_per_hour"] / e.get("accelerators", 1) for e in raw if e["class"] == cls.name]
        price = table.price(cls)
        if not quoted:
            assert price is None
            continue
        assert price.usd_per_hour == pytest.approx(statistics.median(quoted))
        assert len(price.entries) == len(quoted)
        assert "not what the submitter paid" in price.words()
        assert all(f"read {e.read}" in price.words() for e in price.entries if e.undated)  # each read day said
        assert all(e.undated for e in price.entries) or price.date.partition(";")[0] in price.words()  # the dates
    for e, quoted in zip(table.entries, raw):  # a price quoted for a node, Superchip or rack is per accelerator
        assert e.price_usd_per_hour == quoted["price_usd_per_hour"]
        assert e.per_accelerator_hour == quoted["price_usd_per_hour"] / quoted.get("accelerators", 1)


def test_an_entry_marked_default_is_the_class_price(tmp_path):
    second = ENTRY.replace("2.5", "4.0").replace("Example Cloud", "Other Cloud") + "default = true\n"
    table = prices.parse((ENTRY + "\n" + second).encode(), "mine.toml")
    price = table.price_of("NVIDIA H100 80GB HBM3")
    assert price.usd_per_hour == 4.0 and price.source.startswith("Other Cloud")


@pytest.mark.parametrize("name, memory, expected", [
    ("NVIDIA H100 80GB HBM3", None, "NVIDIA H100 SXM"),
    ("NVIDIA A100-SXM4-80GB (400W)", None, "NVIDIA A100 SXM 80GB"),
    ("NVIDIA A100-PCIe-40GB (250W)", None, "NVIDIA A100 PCIe 40GB"),
    ("NVIDIA A100 - PCIe - 80 GB", None, "NVIDIA A100 PCIe 80GB"),
    ("NVIDIA A100", 37.253, "NVIDIA A100 SXM 40GB"),  # no form factor: SXM, as the peak table takes it
    ("NVIDIA A100", None, None),                        # size neither written nor reported
    ("NVIDIA A100-PCIE-80GB (300W)", 37.253, "NVIDIA A100 PCIe 80GB"),  # the name wins over a stray size
    ("NVIDIA H100 PCIe", None, None),                   # a part the table has no class for
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", None, None),  # a MIG slice
    ("NVIDIA \u041d100", None, None),                   # a Cyrillic look-alike letter
    ("TPU v5e", None, "Google TPU v5e"), ("AMD Instinct MI300X", None, "AMD Instinct MI300X"),
    ("Intel Gaudi 2", None, "Intel Gaudi 2"), ("NVIDIA GB200", None, "NVIDIA GB200"),
    ("google tpu trillium (v6e)", None, "Google TPU Trillium (v6e)"),  # a class's own name
])
def test_accelerator_names_match_classes_through_the_peak_tables_matcher(name, memory, expected):
    found = classes.of_accelerator(name, memory)
    assert (found.name if found else None) == expected


def test_the_users_price_replaces_the_class_price_and_names_itself():
    table = prices.override(prices.load(), ["NVIDIA H100=2.49", "MI355X=3"])
    assert table.price_of("NVIDIA H100 80GB HBM3").usd_per_hour == 2.49
    mi355 = table.price_of("AMD Instinct MI355X")
    assert mi355.usd_per_hour == 3.0 and "user-supplied" in mi355.source
    assert table.price_of("TPU v5e").usd_per_hour == prices.load().price_of("TPU v5e").usd_per_hour


def test_goodbench_prices_prints_every_class_entry_source_and_date(capsys):
    assert main(["prices"]) == 0
    out = capsys.readouterr().out
    for cls in classes.CLASSES:
        assert cls.name in out
    for e in prices.load().entries:
        assert e.address in out and e.date in out
    assert "no price" in out and "not what any submitter paid" in out
    assert "AWS (hyperscaler)" in out and "vCPU-hour" in out  # walkthrough 4 M2: the kind and the CPU's unit
    assert main(["prices", "NVIDIA H100 80GB HBM3", "--price", "NVIDIA H100=2.49"]) == 0
    assert "$2.49 per accelerator-hour" in capsys.readouterr().out
    assert main(["prices", "Graphcore Bow IPU"]) == 0
    assert "no price" in capsys.readouterr().out


HOSTILE = {
    "negative": ENTRY.replace("2.5", "-2.5"),
    "zero": ENTRY.replace("2.5", "0.0"),
    "nan": ENTRY.replace("2.5", "nan"),
    "infinite": ENTRY.replace("2.5", "inf"),
    "huge": ENTRY.replace("2.5", "1e300"),
    "text price": ENTRY.replace("2.5", '"2.5"'),
    "boolean price": ENTRY.replace("2.5", "true"),
    "unknown class": ENTRY.replace("NVIDIA H100 SXM", "NVIDIA H900"),
    "unknown field": ENTRY + 'discount = 0.5\n',
    "missing field": ENTRY.replace('source = "Example pricing page"\n', ""),
    "bidi text": ENTRY.replace("Example Cloud", "Example \u202eduolC"),
    "control character": ENTRY.replace("Example Cloud", "Example\\u0007Cloud"),
    "zero-width space": ENTRY.replace("Example Cloud", "Example\u200bCloud"),
    "bad date": ENTRY.replace("2026-11-01", "yesterday"),
    "not an address": ENTRY.replace("https://example.com/pricing", "javascript:alert(1)"),
    "no accelerators": ENTRY + "accelerators = 0\n",
    "two defaults": ENTRY + "default = true\n\n" + ENTRY + "default = true\n",
    "not toml": "class = \n",
    "unknown top-level key": "currency = \"EUR\"\n" + ENTRY,
    "negative electricity": '[electricity]\nprice_usd_per_kwh = -0.1\noffering = "o"\nsource = "s"\n'
                            'address = "https://e.com"\ndate = "2026-01-01"\nread = "2026-11-28"\n',
    "huge electricity": '[electricity]\nprice_usd_per_kwh = 50.0\noffering = "o"\nsource = "s"\n'
                        'address = "https://e.com"\ndate = "2026-01-01"\nread = "2026-11-28"\n',
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_price_file_is_refused_in_one_line(case, tmp_path, capsys):
    path = tmp_path / "prices.toml"
    path.write_text(HOSTILE[case], encoding="utf-8")
    assert main(["prices", "--price-file", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("goodbench: error: ") and "Traceback" not in captured.err
    assert "\u202e" not in captured.err and "\u200b" not in captured.err and "\x07" not in captured.err


@pytest.mark.parametrize("data", [b"\xff\xfe not utf-8", b"#" * (prices.MAX_BYTES + 10)], ids=["binary", "too large"])
def test_a_price_file_that_is_not_a_small_text_is_refused(data, tmp_path):
    path = tmp_path / "prices.toml"
    path.write_bytes(data)
    with pytest.raises(GoodbenchError):
        prices.load(path)


@pytest.mark.parametrize("given", ["NVIDIA H100", "=2", "NVIDIA H100=-1", "NVIDIA H100=abc", "NVIDIA H100=1e999",
                                   "NVIDIA H100=nan", "Unknown GPU=2", "NVIDIA H100=5000",
                                   "NVIDIA \u202eH100=2"])
def test_a_bad_price_argument_is_refused_in_one_line(given, capsys):
    assert main(["prices", "--price", given]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("goodbench: error: --price")
    assert "\u202e" not in err


@pytest.mark.parametrize("make", ["fifo", "deep"])
def test_a_price_file_that_is_a_fifo_or_nested_too_deep_is_refused_in_one_line(make, tmp_path, capsys):
    """A FIFO nobody writes to was opened and waited on for ever; tomllib recursing into 20,000
    nested arrays raised RecursionError with a traceback."""
    import os

    path = tmp_path / "prices.toml"
    os.mkfifo(path) if make == "fifo" else path.write_text("a = " + "[" * 20000 + "]" * 20000 + "\n")
    assert main(["prices", "--price-file", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("not a regular file" if make == "fifo" else "nested too deep") in err


def test_a_price_file_given_through_a_link_is_read(tmp_path):
    """The user's own file: a link (a dotfile, a managed configuration) is followed to it."""
    import os

    (tmp_path / "prices.toml").write_bytes(prices.TABLE.read_bytes())
    os.symlink(tmp_path / "prices.toml", tmp_path / "link.toml")
    assert prices.load(tmp_path / "link.toml").entries == prices.load(tmp_path / "prices.toml").entries


def test_a_missing_price_file_is_one_line(tmp_path, capsys):
    assert main(["prices", "--price-file", str(tmp_path / "none.toml")]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_the_shipped_table_has_a_sourced_dated_electricity_price():
    power = prices.load().electricity
    assert power is not None and 0 < power.usd_per_kwh < 1 and power.address.startswith("https://")
    assert power.date <= power.read[:len(power.date)] and power.read <= datetime.date.today().isoformat()
    assert "not what the submitter paid" in power.words()


@pytest.mark.parametrize("given", ["NVIDIA H100=1_000", "NVIDIA H100=\u0662", "NVIDIA H100=2=3", "NVIDIA H100=1e-300",
                                   "NVIDIA H100=0.0000001", "NVIDIA H100=1e1", "NVIDIA H100=inf", "NVIDIA H100= 2 2",
                                   "CPU=0.0001"])
def test_a_price_argument_is_an_ascii_decimal_above_a_stated_least_price(given, capsys):
    """Trial 14 F11: Python's float() took "1_000", Unicode digits and exponents; "=2=3" priced at 3;
    $1e-300 an hour was a price."""
    assert main(["prices", "--price", given]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("goodbench: error: --price")


def test_the_least_prices_are_stated_and_a_plain_decimal_is_taken():
    table = prices.override(prices.load(), ["NVIDIA H100=0.03", "CPU=.001", "NVIDIA B200=12"])
    assert table.overrides == {"NVIDIA H100 SXM": 0.03, "CPU": 0.001, "NVIDIA B200": 12.0}
    with pytest.raises(GoodbenchError, match="below 0.03 USD per accelerator-hour"):
        prices.override(prices.load(), ["NVIDIA H100=0.029"])


@pytest.mark.parametrize("case,why", [
    ("date after read", "is after read"), ("per-GPU class for a rack", "sold by the accelerator or in nodes"),
    ("below the least price", "below 0.03"), ("unknown kind", "kind 'neocloud' is not one of"),
    ("a merged class of old", "split by form factor"), ("a month after read", "is after read"),
    ("electricity after read", "is after read"), ("electricity near zero", "below 0.01 USD per kWh")])
def test_a_price_file_entry_a_person_would_not_mean_is_refused(case, why, tmp_path):
    power = ('[electricity]\nprice_usd_per_kwh = 0.09\noffering = "o"\nsource = "s"\naddress = "https://e.com"\n'
             'date = "2026-01-01"\nread = "2026-11-28"\n')
    text = {"date after read": ENTRY.replace("2026-11-01", "2099-01-01"),
            "per-GPU class for a rack": ENTRY + "accelerators = 72\n",
            "below the least price": ENTRY.replace("2.5", "0.2") + "accelerators = 8\n",
            "unknown kind": ENTRY + 'kind = "neocloud"\n',
            "a merged class of old": ENTRY.replace("NVIDIA H100 SXM", "NVIDIA A100 80GB"),
            "a month after read": ENTRY.replace("2026-11-01", "2026-12"),
            "electricity after read": power.replace("2026-01-01", "2027-01-01"),
            "electricity near zero": power.replace("0.09", "0.0001")}[case]
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GoodbenchError, match=why):
        prices.load(path)


CPU_ENTRY = ENTRY.replace("NVIDIA H100 SXM", "CPU").replace("H100 SXM, on-demand, per GPU", "1 vCPU, 2 GB, per hour")


def test_a_price_file_entry_is_held_per_unit_to_its_class_least_price(tmp_path):
    """Review 14 #6: a 1-vCPU CPU entry at $0.02 was refused as "below 0.03 USD per
    accelerator-hour" (the quoted total against the accelerator's floor), though --price CPU=0.02
    was taken. An entry is held per unit (the price over the units it quotes) to its class's
    least price, in its class's unit."""
    path = tmp_path / "prices.toml"
    path.write_text(CPU_ENTRY.replace("2.5", "0.02"), encoding="utf-8")
    price = prices.load(path).price(classes.named("CPU"))
    assert price.usd_per_hour == pytest.approx(0.02)  # as --price CPU=0.02 is
    assert prices.override(prices.load(), ["CPU=0.02"]).overrides == {"CPU": 0.02}
    path.write_text(CPU_ENTRY.replace("2.5", "0.16") + "accelerators = 8\n", encoding="utf-8")
    assert prices.load(path).price(classes.named("CPU")).usd_per_hour == pytest.approx(0.02)
    path.write_text(CPU_ENTRY.replace("2.5", "0.0005"), encoding="utf-8")
    with pytest.raises(GoodbenchError) as refused:
        prices.load(path)
    assert "price 0.0005 is below 0.001 USD per vCPU-hour" in str(refused.value)
    assert "accelerator" not in str(refused.value)
    path.write_text(CPU_ENTRY.replace("2.5", "0.004") + "accelerators = 8\n", encoding="utf-8")
    with pytest.raises(GoodbenchError, match=re.escape("price 0.004 for 8 vCPUs (0.0005 per vCPU-hour) is below "
                                                       "0.001 USD per vCPU-hour")):
        prices.load(path)
    path.write_text(ENTRY.replace("2.5", "0.2") + "accelerators = 8\n", encoding="utf-8")  # 0.025 a GPU-hour
    with pytest.raises(GoodbenchError, match=re.escape("price 0.2 for 8 accelerators (0.025 per accelerator-hour) "
                                                       "is below 0.03 USD per accelerator-hour")):
        prices.load(path)
    path.write_text(ENTRY.replace("2.5", "8000.0") + "accelerators = 8\n", encoding="utf-8")  # 1,000 a GPU-hour
    assert prices.load(path).entries[0].per_accelerator_hour == 1000.0
    path.write_text(ENTRY.replace("2.5", "8000.8") + "accelerators = 8\n", encoding="utf-8")
    with pytest.raises(GoodbenchError, match=re.escape("(1000.1 per accelerator-hour) is over 1000 USD per "
                                                       "accelerator-hour")):
        prices.load(path)


def test_a_rack_priced_class_takes_a_rack_and_a_stated_month_is_a_date(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text(ENTRY.replace("NVIDIA H100 SXM", "NVIDIA GB200").replace("2.5", "300.0").replace(
        "2026-11-01", "2026-06") + "accelerators = 72\nkind = \"other cloud\"\n", encoding="utf-8")
    table = prices.load(path)
    price = table.price(classes.named("NVIDIA GB200"))
    assert price.usd_per_hour == pytest.approx(300 / 72) and price.date == "2026-06"
    assert price.kind == "other cloud" and "(other cloud prices)" in price.words()


def test_the_shipped_table_keeps_sxm_and_pcie_apart_and_says_each_class_provider_kind():
    """Walkthrough 4 M2: an A100 80GB price was the median of an SXM and a PCIe card; an A100 40GB
    hyperscaler price sat above a cheaper other-cloud 80GB one with nothing saying why."""
    table = prices.load()
    assert classes.of_accelerator("NVIDIA A100-PCIe-80GB").name == "NVIDIA A100 PCIe 80GB"
    assert classes.of_accelerator("NVIDIA A100-SXM4-80GB (400W)").name == "NVIDIA A100 SXM 80GB"
    assert classes.of_accelerator("NVIDIA A100-PCIE-40GB (250W)").name == "NVIDIA A100 PCIe 40GB"
    for name, cls in (("NVIDIA A100-PCIe-80GB", "NVIDIA A100 PCIe 80GB"), ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM 80GB")):
        price = table.price_of(name)  # priced from its own form factor's entries only, at their median
        own = [e for e in table.entries if e.cls.name == cls]
        assert own and price.entries == tuple(own)
        assert price.usd_per_hour == pytest.approx(statistics.median(e.per_accelerator_hour for e in own))
    assert table.price_of("NVIDIA A100-PCIE-40GB") is None  # priced by no entry, not by the SXM's
    for name in ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB"):  # each says the kinds of provider it is from
        price = table.price_of(name)
        assert all(e.kind in price.kind for e in price.entries) and f"({price.kind} prices)" in price.words()
    assert "hyperscaler" in table.price_of("NVIDIA A100-SXM4-40GB").kind  # AWS's p4d
    for cls in classes.CLASSES:
        assert len({p.split()[-1] for p in cls.peaks if "PCIe" in p or "SXM" in p}) <= 1, cls.name
    by_month = [e for e in table.entries if len(e.date) == 7]  # a page's "as of June 2026": its month, not a day
    for e in by_month:  # kept as its month, within its class's range of dates
        span = table.price(e.cls).date.split("; ")[0].split("..")
        assert span[0] <= e.date <= span[-1] and len(e.read) == 10


def _dated(text: str, read: datetime.date, date: str = "2026-11-01") -> str:
    return text.replace('read = "2026-11-28"', f'read = "{read.isoformat()}"').replace("2026-11-01", date)


def test_a_page_read_after_today_is_refused_in_one_line(tmp_path, capsys):
    """Review G #7: a price file dated 2099 was taken and shown. A read day later than today (a
    day's clock skew allowed) is refused, which holds every date, never after its read, too."""
    today = datetime.date.today()
    path = tmp_path / "prices.toml"
    path.write_text(_dated(ENTRY, today + datetime.timedelta(days=2), today.isoformat()), encoding="utf-8")
    assert main(["prices", "--price-file", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "is after today" in err and "Traceback" not in err
    power = ('[electricity]\nprice_usd_per_kwh = 0.09\noffering = "o"\nsource = "s"\naddress = "https://e.com"\n'
             'date = "2026-01"\nread = "2026-11-28"\n')
    path.write_text(_dated(power, today + datetime.timedelta(days=30)), encoding="utf-8")
    with pytest.raises(GoodbenchError, match=r"\[electricity\]: read .* is after today"):
        prices.load(path)
    path.write_text(_dated(ENTRY, today, today.isoformat()), encoding="utf-8")  # read today: taken
    assert prices.load(path).entries[0].read == today.isoformat()


def test_the_shipped_table_loads_on_a_clock_behind_its_read_days_and_a_users_file_does_not(tmp_path, monkeypatch,
                                                                                             capsys):
    """Review H #5: on a machine whose clock is behind the shipped table's read days, ``site`` and
    ``compare`` failed on a file the user cannot fix. Only a user's price file is held to the clock."""
    shipped = prices.load()
    behind = datetime.date.fromisoformat(min(e.read for e in shipped.entries)) - datetime.timedelta(days=30)
    monkeypatch.setattr(prices, "today", lambda: behind)
    assert len(prices.load().entries) == len(shipped.entries)  # the shipped table: taken as it is
    assert main(["prices"]) == 0
    stored = sorted((REPO / "results").glob("*.json"))[0]  # a stored goodbench result
    assert main(["compare", str(stored), str(stored), "--format", "json"]) == 0
    capsys.readouterr()
    read = max(e.read for e in shipped.entries)  # a user's file with a read day the shipped table has
    path = tmp_path / "mine.toml"
    path.write_text(ENTRY.replace('read = "2026-11-28"', f'read = "{read}"'), encoding="utf-8")
    assert main(["prices", "--price-file", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"read {read} is after today ({behind.isoformat()})" in err and len(err.strip().splitlines()) == 1


def test_an_undated_page_says_so_and_never_passes_its_read_day_off_as_the_prices_date(tmp_path):
    """Review G #4: a price from a page that states no date read "list price of 2026-11-28", the
    day it was read. ``undated = true`` says so, and its words say "a page that states no date,
    read …" after its source (review H #7: "list price of an undated page" read as the page's own)."""
    read = "2026-11-28"
    undated = ENTRY.replace("2026-11-01", read) + "undated = true\n"
    table = prices.parse(undated.encode(), "mine.toml")
    price = table.price(classes.named("NVIDIA H100 SXM"))
    assert price.date == f"undated page, read {read}"
    assert price.words() == (f"list price from Example Cloud (a page that states no date, read {read}), "
                             "not what the submitter paid")
    dated = ENTRY.replace("Example Cloud", "Other Cloud")
    mixed = prices.parse((undated + "\n" + dated).encode(), "mine.toml").price(classes.named("NVIDIA H100 SXM"))
    assert mixed.date == f"2026-11-01; undated page, read {read}"
    assert (f"list price from the median of 2 prices: Example Cloud, Other Cloud (dated 2026-11-01, and from a page "
            f"that states no date, read {read})") in mixed.words()
    with pytest.raises(GoodbenchError, match="undated = true says the page states no date"):
        prices.parse((ENTRY + "undated = true\n").encode(), "mine.toml")  # a stated date is not undated
    with pytest.raises(GoodbenchError, match="undated must be true or false"):
        prices.parse((ENTRY.replace("2026-11-01", read) + 'undated = "yes"\n').encode(), "mine.toml")


def test_undated_pages_are_counted_by_their_addresses_not_their_entries():
    """Review H #7: two entries from one undated page read "undated pages"."""
    read = "2026-11-28"
    one = ENTRY.replace("2026-11-01", read) + 'kind = "other cloud"\nundated = true\n'
    same = one + "\n" + one.replace("Example Cloud", "Other Cloud")
    price = prices.parse(same.encode(), "mine.toml").price(classes.named("NVIDIA H100 SXM"))
    assert price.date == f"undated page, read {read}"
    assert f"(other cloud prices; a page that states no date, read {read})" in price.words()
    two = same.replace("https://example.com/pricing", "https://example.org/pricing", 1)
    price = prices.parse(two.encode(), "mine.toml").price(classes.named("NVIDIA H100 SXM"))
    assert price.date == f"undated pages, read {read}"
    assert f"(other cloud prices; pages that state no date, read {read})" in price.words()


def test_the_shipped_undated_entries_read_as_undated_everywhere(capsys):
    table = prices.load()
    undated = [e for e in table.entries if e.undated]
    assert undated  # pages that state no date (the Hugging Face pricing page, the Trillium announcement)
    for e in undated:
        price = table.price(e.cls)
        assert f"read {e.read}" in price.date and f"states no date, read {e.read}" in price.words()
        assert "list price of" not in price.words()  # neither of the day it was read nor "of an undated page"
    assert main(["prices"]) == 0
    out = capsys.readouterr().out
    assert "undated page, read" in out
    # review H #7: its closing words hold of an undated page's price too, not only "of their dates"
    assert "list prices of their dates" not in out and "an undated page's of a day unknown" in out
