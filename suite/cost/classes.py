"""The accelerator classes the price table prices, and which class an accelerator name is.

A name is matched by the peak table's own matcher (:func:`suite.figures.mfu.find_peak`): a class
names the peak-table entries it covers, and, where the clouds price two memory sizes of one part
apart (the A100's 40 and 80 GB), the size. A name the peak table cannot resolve (a MIG slice, a
look-alike letter, a name of two parts) is in no class, and so has no price.
"""
from __future__ import annotations

from dataclasses import dataclass

from suite.figures import mfu

LARGE_MEMORY_GIB = 60.0  # an A100 of 80 GB reports 74.5 GiB, one of 40 GB 37.3 GiB


@dataclass(frozen=True)
class PriceClass:
    """One class of the price table: its name, the peak-table entries it covers, the memory size
    it is limited to (GB as sold; None: any), the unit a price is per ("accelerator", or "vCPU" for
    the CPU: a cloud's vCPU is one hardware thread, and goodbench counts the cores a CPU run
    could use: :func:`suite.cost.hours.billed_cores`), and the largest number of units one quoted price may cover (``largest_quote``, the
    ``accelerators`` of a price table entry): the node or instance of 8 most accelerators are
    rented in, the NVL72 rack of the Grace-Blackwell parts."""

    name: str
    peaks: tuple[str, ...]
    memory_gb: int | None = None
    unit: str = "accelerator"
    largest_quote: int = 8
    quoted_in: str = "nodes or instances"


CLASSES: tuple[PriceClass, ...] = (
    PriceClass("NVIDIA H100 SXM", ("H100 SXM5",)),
    PriceClass("NVIDIA H200 SXM", ("H200 SXM",)),
    PriceClass("NVIDIA B200", ("B200",)),
    PriceClass("NVIDIA GB200", ("GB200",), largest_quote=72, quoted_in="superchips or NVL72 racks"),
    PriceClass("NVIDIA GB300", ("GB300",), largest_quote=72, quoted_in="superchips or NVL72 racks"),
    PriceClass("NVIDIA A100 SXM 80GB", ("A100 SXM4",), memory_gb=80),
    PriceClass("NVIDIA A100 PCIe 80GB", ("A100 PCIe",), memory_gb=80),
    PriceClass("NVIDIA A100 SXM 40GB", ("A100 SXM4",), memory_gb=40),
    PriceClass("NVIDIA A100 PCIe 40GB", ("A100 PCIe",), memory_gb=40),
    PriceClass("NVIDIA L40S", ("L40S",)),
    PriceClass("AMD Instinct MI300X", ("MI300X",)),
    PriceClass("AMD Instinct MI325X", ("MI325X",)),
    PriceClass("AMD Instinct MI355X", ("MI355X",)),
    PriceClass("Google TPU v5e", ("TPU v5e",)),
    PriceClass("Google TPU v5p", ("TPU v5p",)),
    PriceClass("Google TPU Trillium (v6e)", ("TPU v6e (Trillium)",)),
    PriceClass("Intel Gaudi 2", ("Gaudi 2",)),
    PriceClass("Intel Gaudi 3", ("Gaudi 3",)),
    PriceClass("CPU", (), unit="vCPU", largest_quote=512, quoted_in="instances"),
)
# classes of earlier tables, split since: a price file naming one is told which to name
SPLIT = {"nvidia a100 80gb": ("NVIDIA A100 SXM 80GB", "NVIDIA A100 PCIe 80GB"),
         "nvidia a100 40gb": ("NVIDIA A100 SXM 40GB", "NVIDIA A100 PCIe 40GB")}
BY_NAME = {c.name.lower(): c for c in CLASSES}


def named(text: str) -> PriceClass | None:
    """The class whose name ``text`` is (case folded), else None."""
    return BY_NAME.get(text.strip().lower())


def _memory_gb(words: list[str], memory_gib: float | None) -> int | None:
    """40 or 80 from a name's words ("80gb", or "80" then "gb"), else from the memory in GiB."""
    for size in (80, 40):
        if f"{size}gb" in words or any(a == str(size) and b == "gb" for a, b in zip(words, words[1:])):
            return size
    if memory_gib is None:
        return None
    return 80 if memory_gib >= LARGE_MEMORY_GIB else 40


def of_accelerator(name: str | None, memory_gib: float | None = None) -> PriceClass | None:
    """The class of an accelerator named as NVML, torch or an MLPerf system description names it
    ("NVIDIA A100-SXM4-80GB (400W)" → "NVIDIA A100 80GB"), or a class's own name; None where the
    peak table resolves no entry, or the entry is in no class, or the class's memory size is
    neither written nor given (``memory_gib``, the memory the system reports)."""
    if not name:
        return None
    own = named(name)
    if own is not None:
        return own
    peak = mfu.find_peak(name)
    if peak is None:
        return None
    size = _memory_gb(mfu.words(name) or [], memory_gib)
    for cls in CLASSES:
        if peak.name in cls.peaks and (cls.memory_gb is None or cls.memory_gb == size):
            return cls
    return None
