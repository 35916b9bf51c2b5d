"""The peak table's figures checked against each other and real device names checked against the
table (docs/measurement.md, "Adding a device"): a figure in the wrong unit (sparse, another
precision's) or match words that catch another GPU fail here, naming the entry and the rule."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from suite.figures import mfu

REPO = Path(__file__).resolve().parent.parent
ENTRIES = {peak.name: peak for peak in mfu.PEAKS}  # the entries' names (two spellings of one entry: one name)
EACH = pytest.mark.parametrize("peak", mfu.PEAKS, ids=[f"{p.name} [{' '.join(p.match)}]" for p in mfu.PEAKS])
"""Every entry of the table, each spelling of a name too: each one's figures are checked."""

ORDER = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")
"""Precisions from the slowest to the fastest dense rate: no entry runs a narrower type slower."""

ARCHITECTURE = {
    "H100 NVL": "Hopper", "H100 PCIe": "Hopper", "H100 SXM5": "Hopper", "H200 NVL": "Hopper",
    "H200 SXM": "Hopper", "GH200": "Hopper",
    "GB200": "Blackwell", "B200": "Blackwell", "GB300": "Blackwell", "B300": "Blackwell",
    "A100 PCIe": "Ampere GA100", "A100 SXM4": "Ampere GA100", "A30": "Ampere GA100",
    "A40": "Ampere GA10x", "A10": "Ampere GA10x", "RTX A6000": "Ampere GA10x", "RTX A5000": "Ampere GA10x",
    "RTX 3090": "Ampere GA10x",
    "L40S": "Ada", "L40": "Ada", "L4": "Ada", "RTX 4090": "Ada",
    "T4": "Turing", "V100S PCIe": "Volta", "V100 PCIe": "Volta", "V100 SXM3": "Volta", "V100 SXM2": "Volta",
    "MI300X": "CDNA3", "MI325X": "CDNA3", "MI350X": "CDNA4", "MI355X": "CDNA4",
    "MI250X": "CDNA2", "MI250": "CDNA2", "MI210": "CDNA2", "Radeon RX 7900 XTX": "RDNA3",
    "Gaudi 3": "Gaudi 3", "Gaudi 2": "Gaudi 2",
    "TPU v3": "TPU", "TPU v4": "TPU", "TPU v5e": "TPU", "TPU v5p": "TPU", "TPU v6e (Trillium)": "TPU",
    "Ascend 910": "Ascend",
}
"""Each entry's architecture: a new entry names its own here (the rules below follow from it)."""

FP8_PER_BF16 = {"Hopper": 2, "Blackwell": 2, "Ada": 2, "CDNA3": 2, "CDNA4": 2, "Gaudi 2": 2, "Gaudi 3": 1}
"""Dense fp8 over dense bf16 where the architecture fixes it (the same tensor cores, twice the
8-bit operands a cycle; Gaudi 3's MME runs both at one rate)."""

TF32_PER_BF16 = {"Hopper": 0.5, "Blackwell": 0.5, "Ada": 0.5, "Ampere GA100": 0.5, "Ampere GA10x": 0.5,
                 "CDNA3": 0.5}
"""Dense tf32 over dense bf16 where the architecture fixes it (half the operands a cycle)."""

TENSOR_PER_FP32 = {"Hopper": (16,), "Blackwell": (32,), "Ampere GA100": (16,), "Ampere GA10x": (2, 4),
                   "Ada": (2, 4), "Volta": (8,), "Turing": (8,), "CDNA2": (4,), "CDNA3": (8,), "CDNA4": (16,),
                   "RDNA3": (2,)}
"""Dense bf16 (fp16 where there is no bf16) over the entry's fp32 rate, per clock, as each
architecture's SM/CU does them: GeForce and some Ada/GA10x boards accumulate in fp32 at half the
tensor rate (2), the professional ones at full rate (4). A datasheet quotes the tensor rate at a
clock no higher than the fp32 boost clock: the ratio lies at most :data:`CLOCK_SHORTFALL` below."""

RATIO_TOLERANCE = 0.05
"""How far a fixed ratio may be off: datasheets round to two or three figures (the B200's tf32,
"2.2" sparse PFLOP/s for 2.25, is 2.2% off half its bf16; the L40S's fp8 733 is 1.2% off 2 × 362);
a figure in the wrong unit is off by 2× or more."""

CLOCK_SHORTFALL = 0.85
"""The least share of the per-clock ratio a table entry's tensor/fp32 ratio reaches: the tensor
rate is quoted at a lower clock (the B200, 28.1 of 32; the H100 NVL, 13.9 of 16)."""

PER_WATT_DOWN, PER_WATT_UP = 2.0, 1.6
"""The band of dense bf16 TFLOP/s per watt of board power, derived from the table's other
entries: from half the least of them (the RTX 3090's 0.20 → 0.10; for the 3090 itself, the V100
SXM3's 0.29 → 0.15: room for a part older or more power-hungry than any of the table) to 1.6× the
most (the MI350X's 2.3 → 3.7; for the MI350X, the B200's 2.25 → 3.6): 1.6× is the largest step of
one generation in the table, H100 SXM5 (1.41) to B200 (2.25). The sparse FP8 headline of a 300 W card entered as its bf16 (1,457 TFLOP/s, 4.9 per W) is
outside it."""


def per_watt(peak: mfu.Peak) -> float | None:
    """Dense bf16 (else fp16) TFLOP/s per watt of board power; None without either."""
    tensor = peak.tflops.get("bf16", peak.tflops.get("fp16"))
    return None if tensor is None or not peak.board_power_w else tensor / peak.board_power_w


def test_every_entry_names_its_architecture():
    missing = sorted(set(ENTRIES) - set(ARCHITECTURE))
    assert missing == [], f"entries without an architecture in tests/test_peak_table.py ARCHITECTURE: {missing}"
    assert sorted(set(ARCHITECTURE) - set(ENTRIES)) == [], "ARCHITECTURE names entries the table does not have"


def test_entries_of_one_name_agree():
    """Two spellings of one device ("gaudi2", "gaudi 2") are one entry: the same figures, power,
    source and measurements; only their match and exclude words differ."""
    by_name: dict[str, list[mfu.Peak]] = {}
    for peak in mfu.PEAKS:
        by_name.setdefault(peak.name, []).append(peak)
    for name, peaks in by_name.items():
        kept = [{k: v for k, v in vars(p).items() if k not in ("match", "exclude")} for p in peaks]
        assert all(k == kept[0] for k in kept[1:]), f"{name}: its {len(peaks)} entries differ beyond their match words"
        assert len({(p.match, p.exclude) for p in peaks}) == len(peaks), f"{name}: one spelling entered twice"


@EACH
def test_precisions_are_ordered(peak):
    """fp32 ≤ tf32 ≤ bf16 = fp16 ≤ fp8 ≤ fp4, over the precisions the entry has."""
    name, t = peak.name, peak.tflops
    present = [p for p in ORDER if p in t]
    for slower, faster in zip(present, present[1:]):
        assert t[slower] <= t[faster], (f"{name}: {slower} {t[slower]:g} > {faster} {t[faster]:g} TFLOP/s "
                                        "(rule: fp32 <= tf32 <= bf16 = fp16 <= fp8 <= fp4; enter dense figures, sparse / 2)")
    if "bf16" in t and "fp16" in t:
        assert t["bf16"] == t["fp16"], f"{name}: bf16 {t['bf16']:g} != fp16 {t['fp16']:g} (one tensor rate for both)"


@EACH
def test_ratios_the_architecture_fixes(peak):
    """fp8 and tf32 against bf16, and the tensor rate against fp32, as the architecture does them."""
    name, t, arch = peak.name, peak.tflops, ARCHITECTURE.get(peak.name)
    for precision, ratios in (("fp8", FP8_PER_BF16), ("tf32", TF32_PER_BF16)):
        if arch in ratios and precision in t and "bf16" in t:
            got, want = t[precision] / t["bf16"], ratios[arch]
            assert abs(got / want - 1) <= RATIO_TOLERANCE, (
                f"{name}: dense {precision} / bf16 = {got:.3g}, but {arch} fixes it at {want:g} "
                f"(±{RATIO_TOLERANCE:.0%}): a figure in the wrong unit (sparse, another precision's)?")
    tensor = t.get("bf16", t.get("fp16"))
    if arch in TENSOR_PER_FP32 and tensor and "fp32" in t:
        got = tensor / t["fp32"]
        fits = [r for r in TENSOR_PER_FP32[arch] if CLOCK_SHORTFALL * r <= got <= r * (1 + RATIO_TOLERANCE)]
        assert fits, (f"{name}: dense tensor / fp32 = {got:.3g}, but {arch} does "
                      f"{' or '.join(map(str, TENSOR_PER_FP32[arch]))} per clock (from {CLOCK_SHORTFALL:g}× that "
                      f"to +{RATIO_TOLERANCE:.0%}): a sparse tensor figure, or the fp32 of another part?")


@pytest.mark.parametrize("peak", [p for p in mfu.PEAKS if per_watt(p) is not None],
                         ids=[f"{p.name} [{' '.join(p.match)}]" for p in mfu.PEAKS if per_watt(p) is not None])
def test_dense_tensor_flops_per_watt_lies_in_the_tables_band(peak):
    name = peak.name
    others = [w for p in mfu.PEAKS if p.name != name and (w := per_watt(p)) is not None]
    low, high = min(others) / PER_WATT_DOWN, max(others) * PER_WATT_UP
    got = per_watt(peak)
    assert low <= got <= high, (f"{name}: {got:.2f} dense TFLOP/s per board watt, outside the table's band "
                                f"{low:.2f}-{high:.2f} (the other entries' least / {PER_WATT_DOWN:g} to most × "
                                f"{PER_WATT_UP:g}): a sparse figure, or the power of another board?")


@EACH
def test_every_figure_is_sourced(peak):
    """A source is one of the module's named constants, says which document it is, and says
    "dense" for an architecture that has a sparse rate to confuse it with."""
    name = peak.name
    constants = {v for k, v in vars(mfu).items() if k.isupper() and isinstance(v, str)}
    assert peak.source in constants, f"{name}: its source is not a named constant of suite/figures/mfu.py"
    kinds = ("datasheet", "whitepaper", "white paper", "documentation", "specifications", "announcement",
             "architecture")
    assert any(k in peak.source.lower() for k in kinds), f"{name}: its source names no document ({kinds})"
    sparse_capable = {"Hopper", "Blackwell", "Ada", "Ampere GA100", "Ampere GA10x", "CDNA3", "CDNA4"}
    if ARCHITECTURE.get(name) in sparse_capable:
        assert "dense" in peak.source, f"{name}: its source does not say the figures are dense ({peak.source!r})"
    assert set(peak.tflops) <= set(ORDER) and all(v > 0 for v in peak.tflops.values()), name


# ---------------------------------------------------------------- real names, the entry each is
REAL_NAMES = {
    # NVIDIA, as NVML and torch.cuda.get_device_name report them
    "NVIDIA A100-SXM4-40GB": "A100 SXM4", "NVIDIA A100-SXM4-80GB": "A100 SXM4",
    "NVIDIA A100-PCIE-40GB": "A100 PCIe", "NVIDIA A100 80GB PCIe": "A100 PCIe",
    "NVIDIA A800-SXM4-80GB": None, "NVIDIA A800 80GB PCIe": None,
    "NVIDIA H100 80GB HBM3": "H100 SXM5", "NVIDIA H100 PCIe": "H100 PCIe", "NVIDIA H100 NVL": "H100 NVL",
    "NVIDIA H200": "H200 SXM", "NVIDIA H200 NVL": "H200 NVL", "NVIDIA GH200 480GB": "GH200",
    "NVIDIA H20": None, "NVIDIA H800": None, "NVIDIA H800 PCIe": None,
    "NVIDIA B200": "B200", "NVIDIA GB200": "GB200",
    "NVIDIA L4": "L4", "NVIDIA L40": "L40", "NVIDIA L40S": "L40S", "NVIDIA L20": None,
    "NVIDIA A10": "A10", "NVIDIA A10G": None, "NVIDIA A30": "A30", "NVIDIA A40": "A40", "NVIDIA A2": None,
    "NVIDIA A16": None,
    "Tesla T4": "T4", "Tesla V100-SXM2-16GB": "V100 SXM2", "Tesla V100-SXM2-32GB": "V100 SXM2",
    "Tesla V100-PCIE-16GB": "V100 PCIe", "Tesla V100S-PCIE-32GB": "V100S PCIe", "Tesla P100-PCIE-16GB": None,
    "NVIDIA GeForce RTX 4090": "RTX 4090", "NVIDIA GeForce RTX 4090 D": None,
    "NVIDIA GeForce RTX 4090 Laptop GPU": None, "NVIDIA GeForce RTX 4080": None,
    "NVIDIA GeForce RTX 3090": "RTX 3090", "NVIDIA GeForce RTX 3090 Ti": None, "NVIDIA GeForce RTX 5090": None,
    "NVIDIA RTX A6000": "RTX A6000", "NVIDIA RTX A5000": "RTX A5000", "NVIDIA RTX A5000 Laptop GPU": None,
    "NVIDIA RTX A4000": None,
    "NVIDIA RTX 6000 Ada Generation": None, "NVIDIA RTX 5000 Ada Generation": None, "Quadro RTX 6000": None,
    "Quadro RTX 8000": None, "NVIDIA TITAN RTX": None,
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": None,
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": None,
    "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition": None,
    "NVIDIA H100 80GB HBM3 MIG 1g.10gb": None,
    # AMD, as torch (ROCm) reports them
    "AMD Instinct MI300X": "MI300X", "AMD Instinct MI300X VF": "MI300X", "AMD Instinct MI325X": "MI325X",
    "AMD Instinct MI300A": None, "AMD Instinct MI250X": "MI250X", "AMD Instinct MI250": "MI250",
    "AMD Instinct MI250X/MI250": None, "AMD Instinct MI210": "MI210", "AMD Instinct MI100": None,
    "AMD Radeon RX 7900 XTX": "Radeon RX 7900 XTX", "AMD Radeon RX 7900 XT": None, "AMD Radeon PRO W7900": None,
    # others
    "Intel(R) Gaudi(R) 2 AI Accelerator": "Gaudi 2", "Intel(R) Gaudi(R) 3 AI Accelerator": "Gaudi 3",
    "Intel(R) Data Center GPU Max 1550": None,
}
"""Device names the table must place: each to its own entry, or to none (a neighbour the table
does not hold must not borrow an entry's figures). A new entry adds its device's names here."""


@pytest.mark.parametrize("name", sorted(REAL_NAMES))
def test_real_device_names_resolve_to_their_own_entry_or_none(name):
    got, want = mfu.find_peak(name), REAL_NAMES[name]
    named = ", ".join(p.name for p in mfu.candidates(name)) or "no entry"
    assert (got.name if got else None) == want, (
        f"{name!r} resolves to {got.name if got else 'no entry'!r} (candidates: {named}), expected "
        f"{want or 'no entry'!r}: an entry's match words catch another device, or miss their own "
        "(add exclude words, or more specific match words)")


def test_every_entry_is_reached_by_a_real_name():
    """Each entry is the one a real device name resolves to: here or in the MLPerf history."""
    mlperf = {str(json.loads(p.read_bytes())["system"]["accelerator"])
              for p in (REPO / "results" / "mlperf").glob("*.json")}
    reached = {peak.name for n in [*REAL_NAMES, *mlperf] if (peak := mfu.find_peak(n))}
    assert sorted(set(ENTRIES) - reached) == [], "entries no device name of REAL_NAMES reaches: add its names"
