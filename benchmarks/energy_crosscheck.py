"""Cross-check of the two GPU energy methods: NVML's energy counter vs sampled, integrated power.

On a CUDA GPU, runs a busy bf16 matmul loop for ``--seconds`` and measures the energy of that
window both ways with the suite's own meters: :class:`suite.meters.energy.NvmlCounter`
(``nvmlDeviceGetTotalEnergyConsumption`` read at the window's edges) and
:class:`suite.meters.energy.PowerIntegral` (power sampled by :class:`suite.meters.telemetry.Sampler`
at ``--hz`` and integrated with the trapezoid rule). The load runs ``--warmup`` seconds before
the window opens, so both edges fall in steady load. Prints both joule figures and their
relative difference, and writes them as JSON.

    python benchmarks/energy_crosscheck.py --out energy.json [--seconds 20] [--hz 10]

Exits 2 with "needs a CUDA GPU" where there is none, 1 when NVML cannot give both figures.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

import torch

from suite.meters import energy, nvml, telemetry


def busy(seconds: float, size: int, chunk: int = 20) -> tuple[int, float]:
    """bf16 ``size``² matmuls until ``seconds`` have passed (checked every ``chunk``, after a
    synchronize); returns (matmuls, elapsed seconds)."""
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(chunk):
            torch.mm(a, b)
        torch.cuda.synchronize()
        done += chunk
    return done, time.perf_counter() - start


def crosscheck(seconds: float, hz: float, warmup: float, size: int) -> dict:
    """Both energy figures of one busy matmul window on CUDA device 0, with what they came from."""
    props = torch.cuda.get_device_properties(0)
    uuid = str(getattr(props, "uuid", "") or "")
    gpu, why = nvml.open_gpu(index=0, uuid=uuid or None)
    context = {"device_name": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cuda": torch.version.cuda, "driver": nvml.driver_version(),
               "warmup_s": warmup, "matmul_size": size}
    if gpu is None:
        return {**context, **_empty(seconds, hz), "status": f"not measured: {why}"}
    context["instant_power_field"] = getattr(gpu.nvml, "NVML_FI_DEV_POWER_INSTANT", None) is not None
    busy(warmup, size)

    def load(s: float) -> dict:
        matmuls, elapsed = busy(s, size)
        torch.cuda.synchronize()
        return {"matmul_tflops": matmuls * 2 * size ** 3 / elapsed / 1e12}

    return {**context, **measure(gpu, load, seconds, hz)}


def _empty(seconds: float, hz: float) -> dict:
    return {"seconds": seconds, "sample_hz_asked": hz, "counter_j": None, "sampled_j": None,
            "relative_difference": None}


def measure(gpu: nvml.Gpu, load: Callable[[float], dict], seconds: float, hz: float) -> dict:
    """The energy of one window of ``load(seconds)`` (which returns figures of its own) by the
    NVML counter and by power sampled at ``hz`` and integrated, read at the same edges."""
    result = {**_empty(seconds, hz), "status": "ok"}
    if gpu.total_energy_j() is None or gpu.power_w() is None:
        missing = "no energy counter" if gpu.total_energy_j() is None else "no power reading"
        return {**result, "status": f"not measured: this GPU reports {missing} through NVML"}
    sampler = telemetry.Sampler(gpu, hz=hz)
    counter, integral = energy.NvmlCounter(gpu), energy.PowerIntegral(sampler)
    sampler.start()
    try:
        t0, c0, p0 = time.perf_counter(), counter.read(), integral.read()
        result.update(load(seconds))
        t1, c1, p1 = time.perf_counter(), counter.read(), integral.read()
    finally:
        sampler.stop()
    window = [s for s in sampler.samples if t0 <= s["t"] <= t1]
    counter_j = c1 - c0
    sampled_j = p1 - p0 if p0 is not None and p1 is not None else None
    result.update(
        window_s=t1 - t0, samples=len(window), sample_hz=len(window) / (t1 - t0),
        counter_j=counter_j, sampled_j=sampled_j,
        counter_mean_power_w=counter_j / (t1 - t0),
        sampled_mean_power_w=None if sampled_j is None else sampled_j / (t1 - t0),
        relative_difference=None if sampled_j is None or counter_j <= 0
        else (sampled_j - counter_j) / counter_j)
    if sampled_j is None:
        result["status"] = "not measured: fewer than two power samples in the window"
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--seconds", type=float, default=20.0, help="window length (default 20)")
    parser.add_argument("--hz", type=float, default=telemetry.SAMPLE_HZ,
                        help=f"power sampling rate, at least 10 (default {telemetry.SAMPLE_HZ:g})")
    parser.add_argument("--warmup", type=float, default=3.0, help="load before the window (s)")
    parser.add_argument("--size", type=int, default=8192, help="matmul size")
    args = parser.parse_args(argv)
    if args.hz < 10:
        parser.error("--hz must be at least 10")
    if not torch.cuda.is_available():
        print("energy_crosscheck needs a CUDA GPU: torch sees none "
              f"(torch {torch.__version__}); nothing measured", file=sys.stderr)
        return 2
    result = crosscheck(args.seconds, args.hz, args.warmup, args.size)
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(f"{result['device_name']}, {args.seconds:g} s of bf16 {args.size}² matmuls")
    if result["status"] != "ok":
        print(result["status"])
        return 1
    print(f"NVML energy counter        {result['counter_j']:10.1f} J "
          f"({result['counter_mean_power_w']:.1f} W mean)")
    print(f"power sampled at {result['sample_hz']:4.1f} Hz  {result['sampled_j']:10.1f} J "
          f"({result['sampled_mean_power_w']:.1f} W mean, {result['samples']} samples)")
    print(f"relative difference        {100 * result['relative_difference']:+.2f}% "
          "(sampled vs counter)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
