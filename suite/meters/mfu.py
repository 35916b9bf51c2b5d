"""Model FLOPs utilisation (PaLM, appendix B): model FLOP/s over the device's dense peak.

Peaks are dense (no 2:4 sparsity) tensor-core figures in TFLOP/s from the vendors' datasheets;
"fp32" means TF32 tensor-core math is not assumed: it is the non-tensor FP32 rate.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

H100_SXM = "NVIDIA H100 Tensor Core GPU datasheet (SXM5), dense figures = sparse / 2"
H100_PCIE = "NVIDIA H100 Tensor Core GPU datasheet (PCIe), dense figures = sparse / 2"
H100_NVL = "NVIDIA H100 NVL datasheet, per GPU, dense figures = sparse / 2"
H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM), dense figures = sparse / 2"
H200_NVL = "NVIDIA H200 Tensor Core GPU datasheet (H200 NVL), dense figures = sparse / 2"
B200 = "NVIDIA HGX B200 datasheet, per GPU, dense figures = sparse / 2"
A100 = "NVIDIA A100 Tensor Core GPU datasheet, dense figures"
L40S = "NVIDIA L40S datasheet, dense figures = sparse / 2"
L4 = "NVIDIA L4 Tensor Core GPU datasheet, dense figures = sparse / 2"
A10 = "NVIDIA A10 Tensor Core GPU datasheet, dense figures = sparse / 2"
RTX4090 = "NVIDIA Ada Lovelace architecture whitepaper (RTX 4090, FP32 accumulate), dense"


@dataclass(frozen=True)
class Peak:
    """Dense peaks in TFLOP/s by precision, board power in W, and the source of the figures."""

    match: tuple[str, ...]  # words that must all be in the device name (split at space, -, _)
    name: str
    tflops: dict[str, float]
    board_power_w: float
    source: str
    exclude: tuple[str, ...] = ()  # words that must not be in it (a cut-down model of that name)

    @property
    def idle_floor_w(self) -> float:
        """The least mean power a training run can draw: :data:`IDLE_FLOOR_SHARE` of the board power."""
        return IDLE_FLOOR_SHARE * self.board_power_w


IDLE_FLOOR_SHARE = 0.10
"""A bound from below on a device's power while it trains, as a share of its board power: a GPU
idles at 10–20% of its board power with its clocks down (an H100 SXM idled at 72 W of its 700 W
here, FIELD-NOTES §5), and training keeps it far above idle. 10% stays under the measured idle."""


# Order matters: the first entry whose words all appear in the device name wins.
PEAKS: tuple[Peak, ...] = (
    Peak(("h100", "nvl"), "H100 NVL", {"bf16": 835, "fp16": 835, "tf32": 418, "fp8": 1671, "fp32": 60}, 400, H100_NVL),
    Peak(("h100", "pcie"), "H100 PCIe", {"bf16": 756, "fp16": 756, "tf32": 378, "fp8": 1513, "fp32": 51.2}, 350, H100_PCIE),
    Peak(("h100",), "H100 SXM5", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp8": 1978.9, "fp32": 66.9}, 700, H100_SXM),
    Peak(("h200", "nvl"), "H200 NVL", {"bf16": 835, "fp16": 835, "tf32": 418, "fp8": 1671, "fp32": 60}, 600, H200_NVL),
    Peak(("h200",), "H200 SXM", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp8": 1978.9, "fp32": 66.9}, 700, H200),
    Peak(("b200",), "B200", {"bf16": 2250, "fp16": 2250, "tf32": 1100, "fp8": 4500, "fp32": 80}, 1000, B200),
    Peak(("a100", "pcie"), "A100 PCIe", {"bf16": 312, "fp16": 312, "tf32": 156, "fp32": 19.5}, 300, A100),
    Peak(("a100",), "A100 SXM4", {"bf16": 312, "fp16": 312, "tf32": 156, "fp32": 19.5}, 400, A100),
    Peak(("l40s",), "L40S", {"bf16": 362, "fp16": 362, "tf32": 183, "fp8": 733, "fp32": 91.6}, 350, L40S),
    Peak(("l4",), "L4", {"bf16": 121, "fp16": 121, "tf32": 60, "fp8": 242, "fp32": 30.3}, 72, L4),
    Peak(("a10",), "A10", {"bf16": 125, "fp16": 125, "tf32": 62.5, "fp32": 31.2}, 150, A10),
    Peak(("4090",), "RTX 4090", {"bf16": 165, "fp16": 165, "tf32": 82.6, "fp8": 330, "fp32": 82.6}, 450, RTX4090,
         exclude=("d",)),  # the RTX 4090 D has fewer SMs
)


def _words(device_name: str) -> set[str]:
    return set(re.split(r"[\s\-_]+", device_name.lower().strip()))


def is_mig(device_name: str) -> bool:
    """True for the name of a MIG slice ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"): it has a fraction
    of the GPU's SMs, so no full-GPU figure of the table applies to it."""
    return "mig" in _words(device_name)


def find_peak(device_name: str) -> Peak | None:
    """The peak-table entry for an accelerator name as NVML/torch report it, or None (also for
    a MIG slice, see :func:`is_mig`)."""
    words = _words(device_name)
    if "mig" in words:
        return None
    return next((peak for peak in PEAKS if set(peak.match) <= words and not words & set(peak.exclude)),
                None)


def no_peak_reason(device_name: str, mig: bool = False) -> str:
    """Why the table has no peak for ``device_name`` (``mig``: a MIG slice), ending in what to do."""
    if mig or is_mig(device_name):
        return (f"no peak FLOP/s known for {device_name!r}: a MIG slice has a fraction of the "
                "GPU's SMs, so the full GPU's datasheet peak does not apply (pass --peak-tflops)")
    return f"no peak FLOP/s known for {device_name!r} (pass --peak-tflops)"


def peak_flops(device_name: str, precision: str, override_tflops: float | None = None,
               mig: bool = False) -> tuple[float | None, str]:
    """Peak FLOP/s for a device and precision, and where it came from (or why there is none).
    ``mig``: NVML found the device to be a MIG slice (by its handle or UUID) whatever its name."""
    if override_tflops is not None:
        return override_tflops * 1e12, f"user-supplied --peak-tflops {override_tflops:g}"
    peak = None if mig else find_peak(device_name)
    if peak is None:
        return None, no_peak_reason(device_name, mig)
    if precision not in peak.tflops:
        return None, f"no {precision} peak for {peak.name}"
    return peak.tflops[precision] * 1e12, f"{peak.name} {precision} dense peak ({peak.source})"


def mfu(flops_per_step: float, steps_per_s: float, peak: float | None) -> float | None:
    """Model FLOPs utilisation, or None without a peak."""
    if peak is None or peak <= 0:
        return None
    return flops_per_step * steps_per_s / peak
