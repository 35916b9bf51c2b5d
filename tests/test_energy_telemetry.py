"""Energy and telemetry against a stand-in NVML that returns scripted readings."""
from __future__ import annotations

import os
import types

import pytest
from waiting import until

from suite.meters import energy, nvml, telemetry


class NVMLError(Exception):
    pass


def fake_nvml(*, energy_mj=None, power_mw=None, reasons=0, processes=(), init_error=None,
              persistence=1, drop=()):
    """A stand-in pynvml: each reading comes from a scripted sequence (the last one repeats)."""
    def seq(values):
        values = list(values or [])
        state = {"i": 0}

        def read(handle, *args):
            if not values:
                raise NVMLError("Not Supported")
            value = values[min(state["i"], len(values) - 1)]
            state["i"] += 1
            return value
        return read

    def init():
        if init_error:
            raise NVMLError(init_error)

    mem = types.SimpleNamespace(total=80 * 2**30, used=2**30)
    module = types.SimpleNamespace(
        nvmlInit=init,
        nvmlDeviceGetHandleByIndex=lambda i: "h0",
        nvmlDeviceGetHandleByUUID=lambda u: "h0",
        nvmlDeviceGetName=lambda h: "NVIDIA H100 80GB HBM3",
        nvmlDeviceGetTotalEnergyConsumption=seq(energy_mj),
        nvmlDeviceGetPowerUsage=seq(power_mw),
        nvmlDeviceGetClockInfo=lambda h, which: 1980 if which == 1 else 2619,
        nvmlDeviceGetMaxClockInfo=lambda h, which: 1980,
        nvmlDeviceGetTemperature=lambda h, which: 55,
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: reasons,
        nvmlDeviceGetPersistenceMode=lambda h: persistence,
        nvmlDeviceGetEccMode=lambda h: (1, 1),
        nvmlDeviceGetMigMode=lambda h: (0, 0),
        nvmlDeviceGetComputeMode=lambda h: 0,
        nvmlDeviceGetPowerManagementLimit=lambda h: 700_000,
        nvmlDeviceGetPowerManagementDefaultLimit=lambda h: 700_000,
        nvmlDeviceGetMemoryInfo=lambda h: mem,
        nvmlDeviceGetComputeRunningProcesses=lambda h: [
            types.SimpleNamespace(pid=p, usedGpuMemory=2**30) for p in processes],
        NVML_CLOCK_SM=1, NVML_CLOCK_MEM=2, NVML_TEMPERATURE_GPU=0,
    )
    for name in drop:
        delattr(module, name)
    return module


@pytest.fixture
def use_nvml():
    def install(module):
        nvml.set_module(module)
    yield install
    nvml.set_module(None)


def test_counter_is_read_at_window_edges(use_nvml):
    use_nvml(fake_nvml(energy_mj=[1_000_000, 1_000_000, 1_250_000, 1_900_000]))
    gpu, status = nvml.open_gpu()
    meter = energy.gpu_meter(gpu, None)
    assert meter.method == "nvml_total_energy" and meter.status == "ok"
    start, edge, end = meter.read(), meter.read(), meter.read()
    assert (edge - start, end - edge) == (250.0, 650.0)  # joules


def test_counter_going_backwards_is_not_measured_not_a_number(use_nvml):
    """A driver reload mid-run: the meter says so and reads None from then on (the run's energy
    is "not measured"), instead of an error that would lose the run."""
    use_nvml(fake_nvml(energy_mj=[5_000, 5_000, 4_000, 9_000]))
    meter = energy.gpu_meter(nvml.open_gpu()[0], None)
    assert meter.read() == 5.0
    assert meter.read() is None and meter.read() is None  # 4 J, then 9 J: never a number again
    assert meter.status == "not measured: NVML's energy counter went backwards during the run (driver reloaded?)"


def test_samples_from_two_threads_are_appended_in_time_order(use_nvml):
    """A window edge's reading (the run's thread) and the sampling thread, both sampling at once:
    each sample's time is taken under the lock, so the list stays in time order."""
    import threading
    import time

    use_nvml(fake_nvml(power_mw=[100_000]))
    gpu = nvml.open_gpu()[0]
    slow_power = gpu.power_w

    def power_w():
        time.sleep(0.002)  # a reading takes time: the other thread's clock would run past it
        return slow_power()

    gpu.power_w = power_w
    sampler = telemetry.Sampler(gpu, hz=1000)
    threads = [threading.Thread(target=lambda: [sampler.sample() for _ in range(40)]) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = [s["t"] for s in sampler.samples]
    assert len(times) == 120 and times == sorted(times)


def test_missing_counter_falls_back_to_integrated_power(use_nvml):
    use_nvml(fake_nvml(power_mw=[400_000], drop=("nvmlDeviceGetTotalEnergyConsumption",)))
    gpu, _ = nvml.open_gpu()
    ticks = iter(float(t) for t in range(100))
    sampler = telemetry.Sampler(gpu, clock=lambda: next(ticks))
    meter = energy.gpu_meter(gpu, sampler)
    assert meter.method == "nvml_power_sampling"
    first = meter.read()          # one sample at t=0: nothing to integrate yet
    assert first is None
    for _ in range(3):
        sampler.sample()          # t = 1, 2, 3
    assert meter.read() == pytest.approx(400.0 * 4)  # samples t=0..4 at 400 W


def test_unsupported_everything_is_not_measured(use_nvml):
    use_nvml(fake_nvml(drop=("nvmlDeviceGetTotalEnergyConsumption",)))
    meter = energy.gpu_meter(nvml.open_gpu()[0], None)
    assert meter.read() is None and meter.status.startswith("not measured:")


def test_nvml_missing_or_failing_to_init(use_nvml, monkeypatch):
    use_nvml(fake_nvml(init_error="Driver Not Loaded"))
    gpu, why = nvml.open_gpu()
    assert gpu is None and "Driver Not Loaded" in why
    nvml.set_module(None)
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # import fails
    gpu, why = nvml.open_gpu()
    assert gpu is None and "not installed" in why


def test_settings_and_warnings(use_nvml):
    use_nvml(fake_nvml(power_mw=[300_000], persistence=0, processes=(os.getpid(), 4242),
                       reasons=0x20))
    gpu, _ = nvml.open_gpu()
    settings = gpu.settings()
    assert settings["ecc_enabled"] is True and settings["power_limit_w"] == 700.0
    ticks = iter(float(t) for t in range(100))
    sampler = telemetry.Sampler(gpu, clock=lambda: next(ticks))
    for _ in range(10):
        sampler.sample()
    summary = sampler.summary(0, 9)
    assert summary["mean_power_w"] == 300.0 and summary["slowdown_share"]["sw_thermal_slowdown"] == 1.0
    warnings = telemetry.warnings_for(settings, summary)
    assert "another process used the GPU at the start (1 process(es))" in warnings
    assert "persistence mode is off" in warnings
    assert "sw thermal slowdown 100% of the window" in warnings


def test_sampler_thread_samples_at_its_rate(use_nvml):
    use_nvml(fake_nvml(power_mw=[100_000]))
    sampler = telemetry.Sampler(nvml.open_gpu()[0], hz=50).start()
    until(lambda: len(sampler.samples) >= 8, 60)  # a loaded machine may starve the thread: wait for samples
    sampler.stop()
    times = [s["t"] for s in sampler.samples]
    assert len(times) >= 8
    # never faster than its rate (a late wake-up may make it slower, never a busy loop)
    assert (times[-1] - times[0]) / (len(times) - 1) >= 0.8 / 50  # stop() adds one last sample
    trace = sampler.power_trace(sampler.samples[0]["t"], points=5)
    assert len(trace) == 5 and all(w == 100.0 for _, w in trace)


def _rapl(tmp_path, microjoules: int, range_uj: int = 1_000_000):
    """A RAPL package domain under ``tmp_path`` reading ``microjoules``, and a meter of it."""
    domain = tmp_path / "intel-rapl:0"
    domain.mkdir()
    (domain / "max_energy_range_uj").write_text(f"{range_uj}\n")
    _set(domain, microjoules)
    return domain, energy.rapl_meter(tmp_path)


def _set(domain, microjoules: int) -> None:
    """The counter reads ``microjoules``: replaced whole, so that a poll never reads it half written."""
    (domain / "energy_uj.new").write_text(f"{microjoules}\n")
    os.replace(domain / "energy_uj.new", domain / "energy_uj")


def test_rapl_unwraps_its_counter(tmp_path):
    domain, meter = _rapl(tmp_path, 900000)
    assert meter.method == "rapl" and meter.read() == 0.0
    _set(domain, 100000)  # wrapped: +200000 µJ
    assert meter.read() == pytest.approx(0.2)


def test_rapl_polled_between_its_readings_sees_every_wrap(tmp_path, monkeypatch):
    """Two wraps between the window's edges: the edges alone tell 0.2 J of the 1.2 J used (a
    package's counter spans about 262 kJ, under 9 minutes at 500 W); the poll sees both."""
    domain, meter = _rapl(tmp_path, 900000)
    monkeypatch.setattr(meter, "poll_s", 0.01)
    assert meter.read() == 0.0
    meter.start()
    try:
        for value in (500000, 100000):  # +600000 µJ each, over the range's end
            _set(domain, value)
            assert until(lambda v=value: meter._last[0] == v, 10, 0.005), "the poll never read the counter"
        assert meter.read() == pytest.approx(1.2)
    finally:
        meter.stop()
    assert meter.status == "ok"


@pytest.mark.parametrize("range_uj, poll_s", [(262_143_328_850, 60.0), (65_532_610_987, 32.766305),
                                               (1_000_000, energy.MIN_POLL_S)])
def test_rapl_is_polled_before_a_package_at_1_kw_could_wrap_its_counter_twice(tmp_path, range_uj, poll_s):
    """The two ranges RAPL's package counters have (2^32 of a 61 µJ or 15.3 µJ energy unit): the
    smaller, read every 60 s, wraps twice between two polls above 1.09 kW; it is read every 32.8 s.
    A range of 0 is no counter."""
    _, meter = _rapl(tmp_path, 5, range_uj)
    assert meter.method == "rapl" and meter.poll_s == pytest.approx(poll_s)
    assert meter.poll_s * energy.MOST_PACKAGE_W <= range_uj / 1e6 / 2 or poll_s == energy.MIN_POLL_S


def test_a_rapl_counter_of_no_range_is_not_measured(tmp_path):
    _, meter = _rapl(tmp_path, 5, 0)
    assert meter.read() is None and meter.status == "not measured: RAPL counters not readable " \
        "(a counter's max_energy_range_uj is 0)"


def test_rapl_that_stops_answering_during_the_run_is_not_measured(tmp_path, monkeypatch):
    domain, meter = _rapl(tmp_path, 5)
    monkeypatch.setattr(meter, "poll_s", 0.01)
    meter.start()
    (domain / "energy_uj").unlink()
    assert until(lambda: meter.status != "ok", 10, 0.005)
    meter.stop()
    assert meter.status.startswith("not measured: RAPL's counters stopped answering during the run")
    assert meter.read() is None


def test_no_rapl_is_not_measured(tmp_path):
    meter = energy.rapl_meter(tmp_path)
    assert meter.read() is None and "no RAPL" in meter.status


def test_a_mig_slice_is_found_by_its_mig_uuid(use_nvml):
    module = fake_nvml(energy_mj=[1_000])
    asked = []

    def by_uuid(uuid):
        asked.append(uuid)
        if not uuid.startswith("MIG-"):
            raise NVMLError("Not Found")
        return "mig0"

    module.nvmlDeviceGetHandleByUUID = by_uuid
    use_nvml(module)
    gpu, status = nvml.open_gpu(uuid="4f1e0c2a")  # torch prints UUIDs without the prefix
    assert status == "ok" and gpu.handle == "mig0" and asked == ["GPU-4f1e0c2a", "MIG-4f1e0c2a"]
