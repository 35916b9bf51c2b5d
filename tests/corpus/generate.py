"""Regenerate the hostile corpus from the valid smoke-run file: ``python tests/corpus/generate.py``.

Each bad file is the valid file (``valid/lm-char-smoke.json``, a real ``goodbench run -w lm-char
--scale smoke --device cpu``) with one thing wrong, named for it; ``expected.json`` maps each file
name to the code the validator must refuse it with. ``valid/lm-char-smoke-as-h100-derived.json``
is the same run relabelled as an H100 run with consistent MFU and the records goodbench writes from
a CUDA device (rules v9, ``device-evidence``): not a measurement, only the base for the peak, MFU,
power and energy cases, and it must pass; ``cpu-relabelled-as-h100-evidence-kept.json`` is that
relabelling with the CPU's own records left as they were, which v9 refuses.
"""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

from suite.figures import mfu as mfu_meter
from suite.figures import throughput
from suite.record import mllog
from workloads import registry
from workloads.base import canonical_json

HERE = Path(__file__).resolve().parent
BASE = json.loads((HERE / "valid" / "lm-char-smoke.json").read_text())
H100 = "NVIDIA H100 80GB HBM3"
H100_CEILING_TFLOPS = (769.0, 786.0, 792.0, 798.0, 780.0)
"""Timed batches of an 8192³ bf16 product on one H100 SXM5, within the 769–798 TFLOP/s measured
there (docs/measurement.md's GPU figures): the relabelled run's ceiling is an H100's, not its CPU's (rules v7)."""


def dumps(doc) -> str:
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def base() -> dict:
    return copy.deepcopy(BASE)


def retime(doc: dict, factor: float, *, phases: bool = True) -> dict:
    """Scale every time of run 0 by ``factor`` and recompute its throughput consistently."""
    run = doc["runs"][0]
    run["step_times_s"] = [t * factor for t in run["step_times_s"]]
    _refresh_throughput(run)
    if phases:
        for key in run["phases_s"]:
            run["phases_s"][key] *= factor
        run["wall_s"] *= factor
        run["time_to_train_s"] *= factor
        for point in run["curve"]:
            point["time_s"] *= factor
        if run["metrics"]["tta_s"] is not None:
            run["metrics"]["tta_s"] *= factor
    return doc


def _refresh_throughput(run: dict, warmup: int | None = None) -> None:
    spec = registry.get("lm-char").spec(run["scale"])
    m = run["metrics"]
    m["throughput"], _ = throughput.summarize(
        run["step_times_s"], warmup_steps=spec.warmup_steps if warmup is None else warmup,
        samples_per_step=m["samples_per_step"], tokens_per_step=m["tokens_per_step"])
    if m["mfu"] is not None:
        m["mfu"] = mfu_meter.mfu(m["flops_per_step"], m["throughput"]["steps_per_s"], m["peak_flops"])


H100_EVIDENCE = {
    "software": {"torch": "2.13.0+cu124", "cuda": "12.4", "cudnn": "90100", "nccl": "2.21.5",
                 "driver": "550.54.15"},
    "accelerator": {"compute_capability": "9.0", "multiprocessors": 132, "nvlink_active_links": 18},
    "interconnect": {"summary_status": "unknown: NVML is not available (libnvidia-ml.so.1 not found)",
                     "gpus_status": "NVML is not available (libnvidia-ml.so.1 not found)"},
    "telemetry_status": "not measured: NVML is not available (libnvidia-ml.so.1 not found)",
    "energy_status": "not measured: NVML is not available (libnvidia-ml.so.1 not found)",
}
"""What goodbench writes from an H100 SXM5 where the CPU's run wrote its own records (suite/run/system.py,
suite/run/instruments.py): a CUDA torch build and runtime, the device's compute capability and SMs,
an interconnect queried, and a telemetry and energy status of a GPU whose NVML is not readable
(rules v9's ``device-evidence``)."""


def as_h100(doc: dict, evidence: bool = True) -> dict:
    """The run relabelled as a bf16 run on an H100 SXM5 — system, device, precision and its math,
    ceiling, peak and MFU, the event log's header and (``evidence``) the records goodbench writes
    from the device — consistently, so that it passes: a forgery no rule can tell from a
    measurement (docs/rules.md), used only as the base of the cases below."""
    doc["system"]["accelerator"].update(type="cuda", name=H100, count=1)
    doc["system"]["name"] = f"{H100} x1"
    doc["settings"]["device"] = "cuda"
    doc["settings"]["matmul_ceiling"].pop("fp32")
    trials = [t * 1e12 for t in H100_CEILING_TFLOPS]
    doc["settings"]["matmul_ceiling"]["bf16"] = {
        "flops": max(trials), "trials_flops": trials, "n": 8192, "precision": "bf16",
        "method": "torch.mm 8192x8192 bf16, random data, 3 warm-up products, fastest of 5 timed batches"}
    run = doc["runs"][0]
    flags = {"autocast": "bfloat16", "matmul_tf32": False, "cudnn_tf32": False}
    run.update(device="cuda:0", precision="bf16", precision_flags=flags)
    m = run["metrics"]
    m["peak_flops"], source = mfu_meter.peak_flops(H100, "bf16")
    m["mfu"] = mfu_meter.mfu(m["flops_per_step"], m["throughput"]["steps_per_s"], m["peak_flops"])
    m["mfu_status"] = f"ok: against {source}"
    m["matmul_ceiling_flops"] = max(trials)
    m["share_of_ceiling"] = m["flops_per_step"] * m["throughput"]["steps_per_s"] / max(trials)
    _relog(run, {"submission_platform": doc["system"]["name"], "submission_org": doc["system"]["name"],
                 "goodbench_device": "cuda:0", "goodbench_accelerator": H100, "goodbench_accelerator_count": 1,
                 "goodbench_precision": "bf16", "goodbench_precision_flags": flags})
    if evidence:
        for section in ("software", "accelerator", "interconnect"):
            doc["system"][section].update(H100_EVIDENCE[section])
        run["telemetry"]["status"] = H100_EVIDENCE["telemetry_status"]
        m["energy_status"] = H100_EVIDENCE["energy_status"]
        _relog(run, {}, {"goodbench_energy_meter": {"status": H100_EVIDENCE["energy_status"]}})
    run["goodput"] = goodput_of(run)
    if "summary" in doc:
        from suite.figures import derive

        doc["summary"] = derive.summary(doc["runs"])
    return doc


def _relog(run: dict, values: dict, metadata: dict | None = None) -> None:
    """The run's log with the header events keyed in ``values`` given those values (and the events
    keyed in ``metadata`` those metadata fields)."""
    events = mllog.parse(run["event_log"])
    run["event_log"] = [mllog.format_event(mllog.Event(
        time_ms=e.time_ms, event_type=e.event_type, key=e.key, value=values.get(e.key, e.value),
        metadata={**e.metadata, **(metadata or {}).get(e.key, {})}, namespace=e.namespace)) for e in events]


def goodput_of(run: dict) -> dict:
    from suite.figures import derive

    return derive.goodput(run["event_log"], run["metrics"]["flops_per_step"], run["metrics"]["peak_flops"])


def with_energy(doc: dict, watts: float) -> dict:
    """Consistent NVML energy figures at a constant ``watts``, from the meter the log names."""
    run = doc["runs"][0]
    m = run["metrics"]
    m.update(energy_method="nvml_total_energy", energy_status="ok")
    _relog(run, {"goodbench_energy_meter": "nvml_total_energy"}, {"goodbench_energy_meter": {"status": "ok"}})
    m["energy_to_train_j"] = watts * run["time_to_train_s"]
    m["energy_to_target_j"] = watts * m["tta_s"]
    m["energy_window_j"] = watts * m["throughput"]["window"]["seconds"]
    steps = m["throughput"]["window"]["steps"]
    m["energy_per_sample_j"] = m["energy_window_j"] / (steps * m["samples_per_step"])
    m["energy_per_token_j"] = m["energy_window_j"] / (steps * m["tokens_per_step"])
    m["mean_power_w"] = m["energy_to_train_j"] / run["time_to_train_s"]
    return doc


def edited_spec_hash() -> str:
    pinned = registry.get("lm-char").pinned("smoke")
    pinned["spec"]["lr"] = pinned["spec"]["lr"] * 2  # one hyperparameter edited
    return hashlib.sha256(canonical_json(pinned).encode()).hexdigest()


def mutate(fn) -> str:
    doc = base()
    fn(doc)
    return dumps(doc)


def mutate_two_ranks(fn) -> str:
    """The valid 2-rank gpt2 smoke run (``valid/gpt2-smoke-2-ranks.json``) with ``fn`` applied."""
    doc = json.loads((HERE / "valid" / "gpt2-smoke-2-ranks.json").read_text())
    fn(doc)
    return dumps(doc)


def mutate_h100(fn) -> str:
    doc = as_h100(base())
    fn(doc)
    return dumps(doc)


def _second_run(doc: dict, **changes) -> None:
    run = copy.deepcopy(doc["runs"][0])
    run.update(changes)
    doc["runs"].append(run)


def _set(path: str, value):
    def apply(doc):
        *parents, last = path.split(".")
        node = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    return apply


def _chain(*fns):
    def apply(doc):
        for fn in fns:
            fn(doc)
    return apply


VALID = dumps(BASE)
CASES: dict[str, tuple[str | bytes, str]] = {
    # bytes and parsing
    "not-json-truncated.json": (VALID[: len(VALID) // 2], "not-json"),
    "empty-file.json": ("", "not-json"),
    "bom-prefixed.json": ("\ufeff" + VALID, "not-json"),
    "not-utf8-latin1-byte.json": (VALID.replace('"AMD EPYC"', '"AMD \xc9PYC"', 1).encode("latin-1"), "not-utf8"),
    "utf16-encoded.json": (VALID.encode("utf-16"), "not-utf8"),
    "duplicate-key-top-level.json": (VALID.replace('"schema_version": 1,', '"schema_version": 1, "schema_version": 1,', 1), "duplicate-key"),
    "duplicate-key-in-run.json": (VALID.replace('"seed": 1,', '"seed": 1, "seed": 2,', 1), "duplicate-key"),
    "nan-literal-in-mfu.json": (VALID.replace('"mfu": null', '"mfu": NaN', 1), "non-finite"),
    "infinity-literal-wall-time.json": (VALID.replace('"wall_s": ', '"wall_s": Infinity, "x": ', 1), "non-finite"),
    "overflowing-number-1e999.json": (mutate(_set("runs.0.wall_s", 1.0)).replace('"wall_s": 1.0', '"wall_s": 1e999', 1), "non-finite"),
    "huge-integer-literal.json": (VALID.replace('"seed": 1,', '"seed": ' + "9" * 5000 + ",", 1), "number-too-large"),
    "integer-beyond-2-63.json": (mutate(_set("runs.0.steps", 2 ** 70)), "number-too-large"),
    # generic walk
    "deep-nesting-in-host.json": (mutate(_set("system.host.x", json.loads("[" * 40 + "]" * 40))), "too-deep"),
    "nesting-10000-arrays.json": ("[" * 10000 + "]" * 10000, "too-deep"),
    "array-of-100001-items.json": (VALID.replace('"host": {', '"host": {"x": [' + "0," * 100_000 + '0],', 1),
                                   "too-many-items"),
    "over-long-system-name.json": (mutate(_set("system.name", "A" * 3000)), "too-long-string"),
    "over-long-key.json": (mutate(_set("system.host." + "k" * 200, 1)), "too-long-string"),
    "control-char-newline-in-system-name.json": (mutate(_set("system.name", "evil\nname")), "control-char"),
    "control-char-escape-in-key.json": (mutate(_set("system.host.\x1b[31mred", 1)), "control-char"),
    "bidi-override-in-system-name.json": (mutate(_set("system.name", "H100\u202e001H")), "control-char"),
    "zero-width-space-in-os.json": (mutate(_set("system.host.os", "Linux\u200b")), "control-char"),
    "lone-surrogate-escape.json": (VALID.replace('"AMD EPYC"', '"AMD \\ud800EPYC"', 1), "control-char"),
    # invisible characters refused since rules v7: two names that look the same are two systems
    "hangul-filler-in-system-name.json": (mutate(_set("system.name", "H100\u3164")), "invisible-char"),
    "tag-character-in-system-name.json": (mutate(_set("system.name", "H100\U000e0041")), "invisible-char"),
    "arabic-letter-mark-in-os.json": (mutate(_set("system.host.os", "Linux\u061c")), "invisible-char"),
    "private-use-character-in-system-name.json": (mutate(_set("system.name", "H100\ue000")), "invisible-char"),
    # schema
    "schema-version-2.json": (mutate(_set("schema_version", 2)), "schema-version"),
    "schema-top-level-array.json": ("[]\n", "schema"),
    "schema-missing-runs.json": (mutate(lambda d: d.pop("runs")), "schema"),
    "schema-seed-as-string.json": (mutate(_set("runs.0.seed", "1")), "schema"),
    "schema-path-traversal-run-id.json": (mutate(_set("runs.0.run_id", "../../../etc/passwd")), "schema"),
    "schema-path-traversal-workload-id.json": (mutate(_set("runs.0.workload.id", "../../x")), "schema"),
    "schema-division-unknown.json": (mutate(_set("settings.division", "semi-open")), "schema"),
    # workload identity and division
    "unknown-workload.json": (mutate(_set("runs.0.workload.id", "resnet-9000")), "unknown-workload"),
    "workload-version-2.json": (mutate(_set("runs.0.workload.version", 2)), "workload-version"),
    "workload-kind-throughput.json": (mutate(_set("runs.0.workload.kind", "throughput")), "workload-kind"),
    "edited-hyperparameter-spec-hash.json": (mutate(_set("runs.0.workload.spec_hash", edited_spec_hash())), "spec-hash"),
    "open-division-changes-undeclared.json": (mutate(_chain(_set("settings.division", "open"),
                                                            _set("runs.0.workload.spec_hash", edited_spec_hash()))), "division"),
    "closed-division-with-open-changes.json": (mutate(_set("settings.open_changes", ["lr doubled"])), "division"),
    "closed-division-fp8.json": (mutate(_set("runs.0.precision", "fp8")), "precision"),
    "scale-differs-from-settings.json": (mutate(_set("settings.scale", "full")), "scale-mismatch"),
    "cuda-run-on-cpu-system.json": (mutate(_set("runs.0.device", "cuda:0")), "device-mismatch"),
    "flops-per-step-edited.json": (mutate(_set("runs.0.metrics.flops_per_step", 1e15)), "pinned-value"),
    "warmup-window-shifted.json": (mutate(lambda d: _refresh_throughput(d["runs"][0], warmup=0)), "pinned-value"),
    # recomputed, not trusted
    "step-times-one-missing.json": (mutate(lambda d: d["runs"][0]["step_times_s"].pop()), "steps-mismatch"),
    "throughput-samples-inflated.json": (mutate(lambda d: d["runs"][0]["metrics"]["throughput"].update(
        samples_per_s=d["runs"][0]["metrics"]["throughput"]["samples_per_s"] * 2)), "throughput-mismatch"),
    "throughput-p99-edited.json": (mutate(lambda d: d["runs"][0]["metrics"]["throughput"]["step_time_s"].update(p99=0.01)),
                                   "throughput-mismatch"),
    "step-times-halved-phases-kept.json": (mutate(lambda d: retime(d, 0.5, phases=False)), "phases-mismatch"),
    "phases-sum-over-wall-time.json": (mutate(lambda d: d["runs"][0]["phases_s"].update(data_load=1000.0)), "phases-mismatch"),
    "tta-edited-faster.json": (mutate(lambda d: d["runs"][0]["metrics"].update(tta_s=d["runs"][0]["metrics"]["tta_s"] / 2)),
                               "tta-mismatch"),
    "tta-target-never-reached.json": (mutate(lambda d: [p.update(val_loss=3.0) for p in d["runs"][0]["curve"]]), "tta-not-reached"),
    "tta-missing-though-reached.json": (mutate(_set("runs.0.metrics.tta_s", None)), "tta-mismatch"),
    "mfu-inflated-h100.json": (mutate_h100(lambda d: d["runs"][0]["metrics"].update(mfu=d["runs"][0]["metrics"]["mfu"] * 3)),
                               "mfu-mismatch"),
    "mfu-above-one.json": (mutate_h100(_set("runs.0.metrics.mfu", 1.5)), "mfu-above-one"),
    "peak-flops-lowered-h100.json": (mutate_h100(lambda d: d["runs"][0]["metrics"].update(
        peak_flops=1e12, mfu=d["runs"][0]["metrics"]["flops_per_step"]
        * d["runs"][0]["metrics"]["throughput"]["steps_per_s"] / 1e12)), "peak-mismatch"),
    "energy-per-sample-wrong.json": (mutate_h100(lambda d: with_energy(d, 300.0)["runs"][0]["metrics"].update(
        energy_per_sample_j=1e-9)), "energy-mismatch"),
    "energy-given-but-not-measured.json": (mutate(_set("runs.0.metrics.energy_to_train_j", 500.0)), "energy-mismatch"),
    "energy-to-target-over-train.json": (mutate_h100(lambda d: with_energy(d, 300.0)["runs"][0]["metrics"].update(
        energy_to_target_j=d["runs"][0]["metrics"]["energy_to_train_j"] * 2)), "energy-mismatch"),
    # plausibility
    "power-3kw-on-h100.json": (mutate_h100(lambda d: with_energy(d, 3000.0)), "power-implausible"),
    "throughput-above-h100-peak.json": (mutate_h100(lambda d: retime(d, 1e-7)), "throughput-above-peak"),
    "curve-out-of-order.json": (mutate(lambda d: d["runs"][0]["curve"].reverse()), "curve-order"),
    "zero-step-time.json": (mutate(lambda d: d["runs"][0]["step_times_s"].__setitem__(5, 0)), "time-order"),
    "time-to-train-over-wall.json": (mutate(lambda d: d["runs"][0].update(time_to_train_s=d["runs"][0]["wall_s"] * 2)),
                                     "time-order"),
    "run-started-after-file-created.json": (mutate(_set("runs.0.started_at", "2026-12-31T00:00:00Z")), "time-order"),
    "created-in-the-future.json": (mutate(_set("created_at", "2099-01-01T00:00:00Z")), "future-timestamp"),
    "timestamp-month-13.json": (mutate(_set("created_at", "2026-13-01T00:00:00Z")), "timestamp"),
    "duplicate-seed.json": (mutate(lambda d: _second_run(d, run_id="f" * 32)), "duplicate-seed"),
    "duplicate-run-id.json": (mutate(lambda d: _second_run(d, seed=2)), "duplicate-run-id"),
    "seed-cherry-picked-7.json": (mutate(_set("runs.0.seed", 7)), "seed-set"),
    "communication-share-not-from-its-times.json": (mutate_two_ranks(
        _set("runs.0.distributed.communication.exposed_share", 0.01)), "distributed-communication"),
    "injected-kills-not-in-the-event-log.json": (mutate_two_ranks(_set("runs.0.faults", {
        "inject_failures": [20], "failure_rate_per_hour": None, "failure_seed": None, "kills": 1})),
        "goodput-mismatch"),
    # claims against their second record (rules v6)
    "event-log-deleted.json": (mutate(lambda d: [d["runs"][0].pop(k) for k in ("event_log", "goodput")]),
                               "event-log-missing"),
    "final-quality-edited.json": (mutate(_set("runs.0.metrics.final_quality.val_loss", 1.0)), "final-quality"),
    "system-renamed.json": (mutate(_set("system.name", "MLCommons Reference Lab (A100 x8)")), "log-system"),
    "cpu-claimed-as-h100-x8.json": (mutate(_chain(_set("system.accelerator.name", H100),
                                                  _set("system.accelerator.count", 8))), "accelerator-claim"),
    "seed-renumbered-in-the-open-division.json": (mutate(_chain(
        _set("settings.division", "open"), _set("settings.open_changes", ["seeds"]), _set("runs.0.seed", 2))),
        "log-seed"),
    "precision-bf16-on-a-cpu.json": (mutate(_set("runs.0.precision", "bf16")), "precision-flags"),
    "energy-invented-on-a-cpu.json": (mutate(lambda d: with_energy(d, 40.0)["runs"][0]["metrics"].update(
        energy_method="rapl")), "log-energy"),
    "h100-at-20-watts.json": (mutate_h100(lambda d: with_energy(d, 20.0)), "power-below-idle"),
    "cpu-peak-for-95-percent-mfu.json": (mutate(lambda d: d["runs"][0]["metrics"].update(
        peak_flops=d["runs"][0]["metrics"]["flops_per_step"] * d["runs"][0]["metrics"]["throughput"]["steps_per_s"]
        / 0.95, mfu=0.95, mfu_status="ok: against H100 SXM5 fp32 dense peak")), "peak-source"),
    "cpu-relabelled-as-h100-evidence-kept.json": (dumps(as_h100(base(), evidence=False)), "device-evidence"),
    "session-missing.json": (mutate(lambda d: d["settings"].pop("session")), "log-session"),
    "ceiling-dropped.json": (mutate(lambda d: d["settings"].pop("matmul_ceiling")), "ceiling-missing"),
    "full-scale-tta-one-seed.json": (mutate(_chain(
        _set("settings.scale", "full"), _set("runs.0.scale", "full"),
        _set("runs.0.workload.spec_hash", registry.get("lm-char").spec_hash("full")))), "seed-count"),
}


def main() -> None:
    expected = {}
    for old in HERE.glob("*.json"):
        if old.name != "expected.json":
            old.unlink()
    for name, (content, code) in CASES.items():
        data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
        (HERE / name).write_bytes(data)
        expected[name] = code
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    (HERE / "valid" / "lm-char-smoke-as-h100-derived.json").write_text(dumps(as_h100(base())))
    print(f"{len(CASES)} bad files and expected.json written to {HERE}")


if __name__ == "__main__":
    main()
