"""Model FLOPs utilisation (PaLM, appendix B): model FLOP/s over the device's dense peak, and
the device facts the validator bounds a run by (``goodbench peaks`` lists them): the peak table
and its name matcher, the GPU figures measured on an H100 (idle power, best matmul share, one
energy reading) and a CPU's physical bounds.

Peaks are dense (no 2:4 sparsity) tensor-core figures in TFLOP/s from the vendors' datasheets;
"fp32" means TF32 tensor-core math is not assumed: it is the non-tensor FP32 rate (on AMD's
Instinct parts, whose BLAS runs fp32 on the matrix cores, the FP32 matrix rate). Each entry names
the datasheet its figures come from; a figure a datasheet does not give is absent, never guessed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# ---------------------------------------------------------------- NVIDIA datacenter
H100_SXM = "NVIDIA H100 Tensor Core GPU datasheet (SXM5), dense figures = sparse / 2"
H100_PCIE = "NVIDIA H100 Tensor Core GPU datasheet (PCIe), dense figures = sparse / 2"
H100_NVL = "NVIDIA H100 NVL datasheet, per GPU, dense figures = sparse / 2"
H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM), dense figures = sparse / 2"
H200_NVL = "NVIDIA H200 Tensor Core GPU datasheet (H200 NVL), dense figures = sparse / 2"
GH200 = ("NVIDIA GH200 Grace Hopper Superchip datasheet, the GPU's figures, dense = sparse / 2; "
         "power: the module's configurable 450-1000 W, whose upper end bounds the GPU")
B200 = "NVIDIA HGX B200 datasheet, per GPU, dense figures = sparse / 2"
GB200 = ("NVIDIA GB200 NVL72 datasheet, per GPU (rack figures / 72), dense = sparse / 2; "
         "power: 1,200 W per Blackwell GPU of a GB200 superchip (2 GPUs + 1 Grace, 2,700 W)")
B300 = "NVIDIA HGX B300 datasheet, per GPU (/ 8), dense figures = sparse / 2; 1,100 W per GPU"
GB300 = "NVIDIA GB300 NVL72 datasheet, per GPU (rack figures / 72), dense = sparse / 2; 1,400 W per GPU"
A100 = "NVIDIA A100 Tensor Core GPU datasheet, dense figures"
A30 = "NVIDIA A30 Tensor Core GPU datasheet, dense figures = sparse / 2"
A40 = "NVIDIA A40 datasheet, dense figures = sparse / 2"
A10 = "NVIDIA A10 Tensor Core GPU datasheet, dense figures = sparse / 2"
L40S = "NVIDIA L40S datasheet, dense figures = sparse / 2"
L40 = "NVIDIA L40 datasheet, dense figures = sparse / 2"
L4 = "NVIDIA L4 Tensor Core GPU datasheet, dense figures = sparse / 2"
T4 = "NVIDIA T4 Tensor Core GPU datasheet (mixed-precision FP16/FP32 tensor, single precision)"
V100_SXM2 = "NVIDIA Tesla V100 GPU datasheet (SXM2: 125 tensor TFLOPS, 15.7 FP32, 300 W)"
V100_PCIE = "NVIDIA Tesla V100 GPU datasheet (PCIe: 112 tensor TFLOPS, 14 FP32, 250 W)"
V100S = "NVIDIA V100S Tensor Core GPU datasheet (PCIe: 130 tensor TFLOPS, 16.4 FP32, 250 W)"
V100_SXM3 = "NVIDIA DGX-2H datasheet: 2.1 tensor PFLOPS over 16 V100 SXM3 GPUs of 450 W each"
# ---------------------------------------------------------------- NVIDIA workstation and desktop
RTX_A6000 = "NVIDIA RTX A6000 datasheet, dense figures = sparse / 2"
RTX_A5000 = "NVIDIA RTX A5000 datasheet, dense figures = sparse / 2"
RTX4090 = "NVIDIA Ada Lovelace architecture whitepaper (RTX 4090, FP32 accumulate), dense"
RTX3090 = "NVIDIA Ampere GA102 GPU architecture whitepaper (RTX 3090, FP32 accumulate), dense"
# ---------------------------------------------------------------- AMD
MI300X = "AMD Instinct MI300X accelerator datasheet, dense figures (sparse / 2); FP32: matrix"
MI325X = "AMD Instinct MI325X accelerator datasheet, dense figures (sparse / 2); FP32: matrix"
MI350X = "AMD Instinct MI350X GPU datasheet, dense figures (sparse / 2); FP32: vector"
MI355X = "AMD Instinct MI355X GPU datasheet, dense figures (sparse / 2); FP32: vector"
MI250X = "AMD Instinct MI250X accelerator datasheet; FP32: matrix"
MI250 = "AMD Instinct MI250 accelerator datasheet; FP32: matrix"
MI210 = "AMD Instinct MI210 accelerator datasheet; FP32: matrix"
RX7900XTX = "AMD Radeon RX 7900 XTX product specifications (peak FP16 and FP32, 355 W board power)"
# ---------------------------------------------------------------- other accelerators of the MLPerf history
GAUDI2 = "Intel Gaudi 3 AI accelerator white paper, Gaudi 2 column (MME BF16 432, FP8 865 TFLOPS, 600 W)"
GAUDI3 = "Intel Gaudi 3 AI accelerator white paper (MME BF16 and FP8 1,835 TFLOPS, OAM 900 W)"
TPU_V3 = "Google Cloud TPU system architecture (v3: 123 bf16 TFLOPS per chip); no chip power published"
TPU_V4 = ("Google Cloud TPU v4 documentation (275 bf16 TFLOPS per chip); 192 W maximum per chip: "
          "Jouppi et al., TPU v4, ISCA 2023")
TPU_V5E = "Google Cloud TPU v5e documentation (197 bf16 TFLOPS per chip); no chip power published"
TPU_V5P = "Google Cloud TPU v5p documentation (459 bf16 TFLOPS per chip); no chip power published"
TPU_V6E = "Google Cloud TPU v6e (Trillium) documentation (918 bf16 TFLOPS per chip); no chip power published"
ASCEND910 = "Huawei Ascend 910 announcement, 2019 (256 FP16 TFLOPS, 310 W maximum)"


@dataclass(frozen=True)
class Peak:
    """Dense peaks in TFLOP/s by precision, board power in W (None where the vendor publishes
    none), the source of the figures and, where measured, the device's idle power."""

    match: tuple[str, ...]  # words that must all be in the device name (see :func:`words`)
    name: str
    tflops: dict[str, float]
    board_power_w: float | None
    source: str
    exclude: tuple[str, ...] = ()  # words that must not be in it (a cut-down model, another part of that name)
    idle_w: float | None = None  # measured idle power, with its measurement in IDLE_MEASURED
    best_share: dict[str, float] | None = None  # the largest share of the peak a dense GEMM reached, measured

    def most_flops(self, precision: str) -> float | None:
        """The most FLOP/s one such device can run at ``precision`` (rules v7): its measured best
        share of the dense peak with :data:`BEST_SHARE_SLACK` above it where it was measured,
        else the peak itself; None without a peak at that precision."""
        peak = self.tflops.get(precision)
        if peak is None:
            return None
        share = (self.best_share or {}).get(precision)
        return peak * 1e12 * (min(1.0, share * (1 + BEST_SHARE_SLACK)) if share is not None else 1.0)

    def most_flops_per_joule(self, precision: str) -> float | None:
        """The most model FLOPs one such device can do per joule at ``precision`` (rules v7,
        ``power-band``): its dense peak per watt of its board power, × :data:`WORK_PER_JOULE_SLACK`;
        None without a peak at that precision or a board power."""
        peak = self.tflops.get(precision)
        if peak is None or not self.board_power_w:
            return None
        return WORK_PER_JOULE_SLACK * peak * 1e12 / self.board_power_w

    @property
    def idle_floor_w(self) -> float | None:
        """The least mean power a training run can draw by rules v6: :data:`IDLE_FLOOR_SHARE` of
        the board power (None without one)."""
        return None if self.board_power_w is None else IDLE_FLOOR_SHARE * self.board_power_w

    @property
    def power_floor_w(self) -> float | None:
        """The least mean power of a run that trains (rules v7): the device's measured idle where
        it was measured, else :attr:`idle_floor_w` — a device at work draws at least its idle."""
        return self.idle_w if self.idle_w is not None else self.idle_floor_w


IDLE_FLOOR_SHARE = 0.10
"""A bound from below on a device's power while it trains, as a share of its board power: a GPU
idles at 10–20% of its board power with its clocks down (an H100 SXM idled at 72 W of its 700 W
here, docs/measurement.md's GPU figures), and training keeps it far above idle. 10% stays under the measured idle."""

H100_IDLE_W = 72.0
"""An H100 SXM5 idle, measured (docs/measurement.md's GPU figures: NVML power of the H100 80GB HBM3 here, persistence
on, nothing running): no run that trains on one draws less on average."""

CEILING_FLOOR_SHARE = 0.25
"""The least share of the table's dense peak a measured matmul ceiling can be (rules v7): below it
the figure is not a measurement of that device. Measured: an H100 SXM5's 8192³ bf16 product
reached 769–798 TFLOP/s, 78–81% of its 989.4 (docs/measurement.md's GPU figures); a quarter leaves 3× for a
board that is power-capped, throttled or shared while the ceiling is measured."""

H100_BEST_SHARE = {"bf16": 798 / 989.4, "fp16": 798 / 989.4, "tf32": 427 / 494.7}
"""The largest share of an H100 SXM5's dense peak a matmul reached, measured (docs/measurement.md's GPU figures:
8192³ bf16 products at 769–798 TFLOP/s of 989.4, tf32 427 of 494.7, torch 2.11, CUDA 13.0).
fp16 is bf16's share, not measured itself: the same tensor cores run both at one dense peak.
fp8 has no measured share and is held to its peak alone."""

BEST_SHARE_SLACK = 0.05
"""How far above a class's measured best share a measured ceiling may be (rules v7): another
board of the class, another driver or library, clocks a little higher. Above it, the figure is not
a measurement of that device: 0.847 of an H100 SXM5's bf16 peak, where 0.807 was measured."""

H100_READING_FLOPS_PER_J = 0.401 * 989.4e12 / 654.0
"""The one energy reading of a training run on a GPU of the table (docs/measurement.md's GPU figures): GPT-2 124M,
``torch.compile``, bf16, on one H100 SXM5 at 40.1% MFU, 654 W mean: 0.607 model TFLOP per joule,
0.43 of the H100's dense peak per watt of its 700 W board power."""

MFU_HEADROOM = H100_BEST_SHARE["bf16"] / 0.401
"""How much more model work the reading's device could do at the same power (rules v8): the
reading's run reached 40.1% MFU, and the H100's best dense matmul 80.7% of its peak
(docs/measurement.md's GPU figures; :data:`H100_BEST_SHARE`) at the same board power and above: no model runs faster than the
class's measured matmul, so at most 2.01× the reading's FLOPs per joule from the work alone."""

CLOCK_HEADROOM = 1.5
"""How much more work per joule a lower power cap or clock gives (rules v8), a stated margin, not
a measurement: dynamic power is C·V²·f and throughput f, while the static power stays (the H100
idles at 72 W of its 654 W here). At half the clock and 0.7 of the voltage (near the lowest a
part's voltage-frequency curve goes) the dynamic part of the reading, 582 W, falls to 143 W and the
whole to 215 W for half the work: 1.52× the FLOPs per joule at the same share of the peak; the
H100's lowest power limit, 200 W, is about there. 1.5 rounds that; anything beyond it is a
device class more efficient than its board power says, for which the table would need a reading."""

WORK_PER_JOULE_SLACK = (H100_READING_FLOPS_PER_J / (989.4e12 / 700.0)) * MFU_HEADROOM * CLOCK_HEADROOM
"""How far a device's model FLOPs per joule may exceed its dense peak per watt of board power
(rules v8, ``power-band``; 2.0, chosen, under rules v7): the measured share of it the one honest
reading reached (0.429, :data:`H100_READING_FLOPS_PER_J`) × :data:`MFU_HEADROOM` (2.01) ×
:data:`CLOCK_HEADROOM` (1.5) = 1.30, the same share carried to every device class of the table.
On an H100 SXM5 that is 1.83 model TFLOP per joule, 3.02× the reading (its slack); put as a power,
an H100 at MFU 0.25 draws at least 0.25 × 989.4 TFLOP/s ÷ 1.83 TFLOP/J = 135 W (under rules v7:
88 W), at MFU 0.40 216 W."""

GPU_STEP_FLOOR_S = 1e-5
"""The least time of one training step on a GPU (rules v7): a step is a forward, a backward and
an optimizer update, tens of kernels, each launched by the host at a few microseconds apiece (or,
captured, one CUDA graph launch of a few microseconds more than its kernels' run), and a step of
several ranks adds a collective. 10 µs is under any of those: the audit's forged 8-GPU dlrm-small
stepped every 3.5 µs. No honest GPU step was measured here (the CPU's are milliseconds)."""

CPU_CEILING_FLOOR_FLOPS = 1e9
"""The least matmul ceiling of any CPU (rules v7): the x86-64 baseline (SSE2) issues 4 fp32
multiplies and 4 adds per cycle per core, 8 GFLOP/s at 1 GHz, and ARMv8 NEON 4 fused
multiply-adds, the same; 1 GFLOP/s is an eighth of one core at 1 GHz. Measured: 6.8–51.6 GFLOP/s
per timed batch of a 2048³ fp32 product on 2 shared server cores (tests' honest files)."""

CPU_CORE_MOST_FLOP_PER_CYCLE = {"fp32": 64, "tf32": 2048, "bf16": 2048, "fp16": 2048, "fp8": 4096}
"""The most model FLOPs one CPU core does per cycle at each precision (rules v9, ``cpu-too-fast``):
fp32, two 512-bit fused multiply-add units (16 lanes × 2 FLOPs × 2: Intel's AVX-512 server cores,
AMD Zen 5); bf16 and fp16, Intel's AMX tile unit (1,024 multiply-adds per cycle), which tf32 is
given too (a CPU has no faster path for it); fp8, AMX's int8 rate (2,048 multiply-adds). No core
sold does more of any."""

CPU_MOST_CLOCK_HZ = 6.2e9
"""The highest clock any x86 core is rated to reach (Intel Core i9-14900KS, 6.2 GHz boost); server
cores with AVX-512 or AMX run slower, so a core at this clock and :data:`CPU_CORE_MOST_FLOP_PER_CYCLE`
is beyond any core that exists (measured: the 2 shared AMD EPYC cores of the tests' honest files
reached 52.8 GFLOP/s per core at fp32, 0.133 of the 397 GFLOP/s this allows)."""

CPU_SOCKET_MOST_CORES = 288
"""The most cores of one CPU package sold (Intel Xeon 6 6900E, 288 efficiency cores; AMD EPYC 9965
has 192): a recorded core count above it, × sockets, counts as this."""

CPU_PACKAGE_FLOOR_W = 1.0
"""The least mean RAPL package power of a CPU that trains (rules v7): the package domain counts
the cores and the uncore (caches, memory controller), and a core training at full clock draws a
good share of the package's power. The smallest x86 parts with RAPL are specified at 6 W
(Intel Processor N100, 4 cores), a watt or more per busy core; 1 W per package is below any
package with one core at work. No RAPL counter is readable on the machines measured here."""

CPU_PACKAGE_CEILING_W = 500.0
"""The most mean RAPL power of one CPU package (rules v7): the highest TDP of server CPUs sold,
500 W (AMD EPYC 9965, Intel Xeon 6980P product pages), which a package sustains over a run
(PL1); the validator allows :data:`suite.validate.tolerance.POWER_MARGIN` above it, × sockets."""


# A name resolves to the one entry whose words it holds (a more specific entry refining a more
# general one: "h100", "nvl" over "h100"); a name holding two entries' words resolves to none.
PEAKS: tuple[Peak, ...] = (
    Peak(("h100", "nvl"), "H100 NVL", {"bf16": 835, "fp16": 835, "tf32": 418, "fp8": 1671, "fp32": 60}, 400, H100_NVL),
    Peak(("h100", "pcie"), "H100 PCIe", {"bf16": 756, "fp16": 756, "tf32": 378, "fp8": 1513, "fp32": 51.2}, 350, H100_PCIE,
         exclude=("nvl",)),  # the H100 NVL is a PCIe card too ("H100 NVL Tensor Core GPU (PCIe)")
    Peak(("h100",), "H100 SXM5", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp8": 1978.9, "fp32": 66.9}, 700, H100_SXM,
         idle_w=H100_IDLE_W, best_share=H100_BEST_SHARE),
    Peak(("h200", "nvl"), "H200 NVL", {"bf16": 835, "fp16": 835, "tf32": 418, "fp8": 1671, "fp32": 60}, 600, H200_NVL),
    Peak(("h200",), "H200 SXM", {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp8": 1978.9, "fp32": 66.9}, 700, H200),
    Peak(("gh200",), "GH200", {"bf16": 989.5, "fp16": 989.5, "tf32": 494.5, "fp8": 1979, "fp32": 67}, 1000, GH200),
    Peak(("gb200",), "GB200", {"bf16": 2500, "fp16": 2500, "tf32": 1250, "fp8": 5000, "fp32": 80}, 1200, GB200),
    Peak(("b200",), "B200", {"bf16": 2250, "fp16": 2250, "tf32": 1100, "fp8": 4500, "fp32": 80}, 1000, B200),
    Peak(("gb300",), "GB300", {"bf16": 2500, "fp16": 2500, "tf32": 1250, "fp8": 5000, "fp32": 83.3}, 1400, GB300),
    Peak(("b300",), "B300", {"bf16": 2250, "fp16": 2250, "tf32": 1125, "fp8": 4500, "fp32": 75}, 1100, B300),
    Peak(("a100", "pcie"), "A100 PCIe", {"bf16": 312, "fp16": 312, "tf32": 156, "fp32": 19.5}, 300, A100),
    Peak(("a100",), "A100 SXM4", {"bf16": 312, "fp16": 312, "tf32": 156, "fp32": 19.5}, 400, A100),
    Peak(("a30",), "A30", {"bf16": 165, "fp16": 165, "tf32": 82, "fp32": 10.3}, 165, A30),
    Peak(("a40",), "A40", {"bf16": 149.7, "fp16": 149.7, "tf32": 74.8, "fp32": 37.4}, 300, A40),
    Peak(("l40s",), "L40S", {"bf16": 362, "fp16": 362, "tf32": 183, "fp8": 733, "fp32": 91.6}, 350, L40S),
    Peak(("l40",), "L40", {"bf16": 181, "fp16": 181, "tf32": 90.5, "fp8": 362, "fp32": 90.5}, 300, L40),
    Peak(("l4",), "L4", {"bf16": 121, "fp16": 121, "tf32": 60, "fp8": 242, "fp32": 30.3}, 72, L4),
    Peak(("a10",), "A10", {"bf16": 125, "fp16": 125, "tf32": 62.5, "fp32": 31.2}, 150, A10),
    Peak(("t4",), "T4", {"fp16": 65, "fp32": 8.1}, 70, T4),
    Peak(("v100s",), "V100S PCIe", {"fp16": 130, "fp32": 16.4}, 250, V100S),
    Peak(("v100", "pcie"), "V100 PCIe", {"fp16": 112, "fp32": 14}, 250, V100_PCIE),
    Peak(("v100", "sxm3"), "V100 SXM3", {"fp16": 131.25}, 450, V100_SXM3),
    Peak(("v100",), "V100 SXM2", {"fp16": 125, "fp32": 15.7}, 300, V100_SXM2),
    Peak(("rtx", "a6000"), "RTX A6000", {"bf16": 154.8, "fp16": 154.8, "tf32": 77.4, "fp32": 38.7}, 300, RTX_A6000),
    Peak(("rtx", "a5000"), "RTX A5000", {"bf16": 111.1, "fp16": 111.1, "tf32": 55.6, "fp32": 27.8}, 230, RTX_A5000,
         exclude=("laptop", "mobile")),  # the RTX A5000 Laptop GPU is another chip (GA104)
    Peak(("4090",), "RTX 4090", {"bf16": 165, "fp16": 165, "tf32": 82.6, "fp8": 330, "fp32": 82.6}, 450, RTX4090,
         exclude=("d", "laptop", "mobile")),  # the RTX 4090 D has fewer SMs; the laptop part is another chip
    Peak(("3090",), "RTX 3090", {"bf16": 71, "fp16": 71, "tf32": 35.6, "fp32": 35.6}, 350, RTX3090,
         exclude=("ti", "laptop", "mobile")),
    Peak(("mi300x",), "MI300X", {"bf16": 1307.4, "fp16": 1307.4, "tf32": 653.7, "fp8": 2614.9, "fp32": 163.4}, 750,
         MI300X),
    Peak(("mi325x",), "MI325X", {"bf16": 1307.4, "fp16": 1307.4, "tf32": 653.7, "fp8": 2614.9, "fp32": 163.4}, 1000,
         MI325X),
    Peak(("mi350x",), "MI350X", {"bf16": 2300, "fp16": 2300, "fp8": 4600, "fp32": 144.2}, 1000, MI350X),
    Peak(("mi355x",), "MI355X", {"bf16": 2500, "fp16": 2500, "fp8": 5000, "fp32": 157.3}, 1400, MI355X),
    Peak(("mi250x",), "MI250X", {"bf16": 383, "fp16": 383, "fp32": 95.7}, 560, MI250X),
    Peak(("mi250",), "MI250", {"bf16": 362.1, "fp16": 362.1, "fp32": 90.5}, 560, MI250),
    Peak(("mi210",), "MI210", {"bf16": 181, "fp16": 181, "fp32": 45.3}, 300, MI210),
    Peak(("7900", "xtx"), "Radeon RX 7900 XTX", {"bf16": 122.8, "fp16": 122.8, "fp32": 61.4}, 355, RX7900XTX),
    Peak(("gaudi3",), "Gaudi 3", {"bf16": 1835, "fp8": 1835}, 900, GAUDI3),
    Peak(("gaudi", "3"), "Gaudi 3", {"bf16": 1835, "fp8": 1835}, 900, GAUDI3),
    Peak(("gaudi2",), "Gaudi 2", {"bf16": 432, "fp8": 865}, 600, GAUDI2),
    Peak(("gaudi", "2"), "Gaudi 2", {"bf16": 432, "fp8": 865}, 600, GAUDI2),
    Peak(("tpu", "v3"), "TPU v3", {"bf16": 123}, None, TPU_V3),
    Peak(("tpu", "v4"), "TPU v4", {"bf16": 275}, 192, TPU_V4),
    Peak(("tpu", "v5e"), "TPU v5e", {"bf16": 197}, None, TPU_V5E),
    Peak(("tpu", "v5p"), "TPU v5p", {"bf16": 459}, None, TPU_V5P),
    Peak(("tpu", "trillium"), "TPU v6e (Trillium)", {"bf16": 918}, None, TPU_V6E),
    Peak(("tpu", "v6e"), "TPU v6e (Trillium)", {"bf16": 918}, None, TPU_V6E),
    Peak(("ascend910",), "Ascend 910", {"fp16": 256}, 310, ASCEND910),
    Peak(("ascend", "910"), "Ascend 910", {"fp16": 256}, 310, ASCEND910),
)

NOT_IN_TABLE: dict[str, str] = {
    "NVIDIA A10G": "a cloud part without a datasheet of its own (AWS G5); not the A10's figures",
    "NVIDIA RTX Pro 6000 SE PCIe 96GB": "no dense figure per precision found in its datasheet",
    "Habana Gaudi": "Habana publishes no peak FLOP/s for the first Gaudi (HL-205)",
    "Habana Gaudi HL-205": "Habana publishes no peak FLOP/s for the first Gaudi (HL-205)",
    "Graphcore IPU GC200": "Graphcore's figures are per IPU-M2000 machine, not per precision and IPU",
    "Graphcore Bow IPU": "Graphcore's figures are per Bow-2000 machine, not per precision and IPU",
    "TPU": "a name without its generation",
    "N/A": "no accelerator named (CPU systems: their peak depends on the part, clocks and cores)",
}
"""Accelerator names of the imported MLPerf Training history that resolve to no entry, each with
the reason (tests/test_gpu_readiness.py holds every name of the history to the table or here)."""


def words(device_name: str) -> list[str] | None:
    """The words a device name is matched by: its lower-case runs of ASCII letters and digits
    ("NVIDIA A100-SXM4-80GB (400W)" → nvidia, a100, sxm4, 80gb, 400w). None for a name with any
    character outside printable ASCII: a look-alike letter (Cyrillic "Н", a fullwidth "Ｈ") must
    neither pass for the letter it imitates nor split a word into one that matches."""
    if not device_name.isascii() or not device_name.isprintable():
        return None
    return re.findall(r"[a-z0-9]+", device_name.lower())


def is_mig(device_name: str) -> bool:
    """True for the name of a MIG slice ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"): it has a fraction
    of the GPU's SMs, so no full-GPU figure of the table applies to it."""
    return "mig" in (words(device_name) or re.findall(r"[a-z0-9]+", device_name.lower()))


def candidates(device_name: str) -> list[Peak]:
    """The entries a device name could be (rules v8): every entry whose words are all in the name
    (none of its excluded words), less those a more specific candidate refines ("H100" when "H100
    NVL" matches too), one per entry name; [] for a MIG slice or a name that is not plain ASCII."""
    found = words(device_name)
    if found is None or "mig" in found:
        return []
    names = set(found)
    matching = [peak for peak in PEAKS if set(peak.match) <= names and not names & set(peak.exclude)]
    specific = [peak for peak in matching if not any(set(peak.match) < set(other.match) for other in matching)]
    distinct: dict[str, Peak] = {}
    for peak in specific:  # an entry matched by two spellings ("gaudi2", "gaudi 2") once
        distinct.setdefault(peak.name, peak)
    return list(distinct.values())


def find_peak(device_name: str) -> Peak | None:
    """The peak-table entry for an accelerator name as NVML/torch report it, or None: for a MIG
    slice (:func:`is_mig`), a name that is not plain ASCII (:func:`words`), and a name that names
    two entries ("NVIDIA A100-SXM4-80GB GB200": an A100 or a GB200?), which is unknown rather than
    either's, least of all the more generous one (:func:`candidates`)."""
    found = candidates(device_name)
    return found[0] if len(found) == 1 else None


def known_peak(device_name: str, precision: str, mig: bool = False) -> Peak | None:
    """The entry whose figures bound a run of ``precision`` on ``device_name``: a dense peak at
    that precision and a board power; None where the table cannot bound it (no known peak)."""
    entry = None if mig else find_peak(device_name)
    if entry is None or precision not in entry.tflops or entry.board_power_w is None:
        return None
    return entry


def no_peak_reason(device_name: str, mig: bool = False) -> str:
    """Why the table has no peak for ``device_name`` (``mig``: a MIG slice), ending in what to do."""
    if mig or is_mig(device_name):
        return (f"no peak FLOP/s known for {device_name!r}: a MIG slice has a fraction of the "
                "GPU's SMs, so the full GPU's datasheet peak does not apply (pass --peak-tflops, or Benchmark(peak_tflops=…))")
    named = candidates(device_name)
    if len(named) > 1:
        return (f"no peak FLOP/s known for {device_name!r}: it names {len(named)} entries of the table "
                f"({', '.join(p.name for p in named)}), so which device ran is not known (pass --peak-tflops, or Benchmark(peak_tflops=…))")
    return f"no peak FLOP/s known for {device_name!r} (pass --peak-tflops, or Benchmark(peak_tflops=…))"


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
